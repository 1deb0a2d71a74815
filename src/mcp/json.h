/* json.h - a strict RFC 8259 reader that builds jansson values, for the
 * bodies the gateway classifies on every request.
 *
 * Why not json_loadb: jansson's lexer reads through a character stream
 * one call per byte; on a 200-byte tools/call it spends about 40,000
 * instructions, a third of everything the gateway does for a proxied
 * request (bench/gateway-callgrind.sh).  This reader scans the buffer in
 * place and hands strings without escapes to jansson as they are.
 *
 * It accepts exactly what json_loadb(JSON_REJECT_DUPLICATES |
 * JSON_ALLOW_NUL | JSON_DECODE_ANY) accepts and builds the same values
 * (tests/fuzz/json_fuzz.c checks both claims against jansson itself):
 * any value at the top, whitespace around it and nothing else; strings of
 * valid UTF-8 (no overlong forms, surrogates or code points past
 * U+10FFFF) with the RFC's escapes, surrogate pairs joined and lone
 * surrogates refused; \u0000 inside values but not inside object keys;
 * integers that fit a json_int_t as integers (larger ones refused, as
 * jansson refuses them), other numbers as doubles (overflow refused);
 * a member name twice in one object refused.
 *
 * With MGW_JSON_WIDE_NUMBERS (the classifier's reading of request
 * bodies: RFC 8259 puts no bound on a number's size or precision) those
 * two range refusals go: an integer beyond json_int_t and a number
 * beyond a double's range (1e400) are kept as their exact text, in a
 * jansson string of the bytes 00 FF followed by the text.  No string of
 * the document can look like that (the reader builds only valid UTF-8,
 * where FF never occurs), mgw_json_wide_number tells them apart, and a
 * C-string view of one stops at the NUL.  Underflow (1E-400) reads as
 * the nearest double, as jansson reads it.  Such a value must not be
 * dumped back as JSON (jansson refuses the FF byte): the JSON-RPC
 * builders (jsonrpc.h) write an id of this kind as its text.
 *
 * One exception bounds memory: a document may hold at most
 * MGW_JSON_MAX_VALUES values (scalars, arrays and objects, at any depth).
 * A value costs jansson far more than its text (an empty array "[]," is
 * three bytes and about 110 bytes of heap), so without a cap a 4 MiB body
 * of empty arrays would build ~150 MiB.  At the cap the worst case is
 * about 30 MiB per document. */
#ifndef MGW_MCP_JSON_H
#define MGW_MCP_JSON_H

#include <stddef.h>
#include <string.h>

#include <jansson.h>

enum mgw_json_err {
	MGW_JSON_OK = 0,
	MGW_JSON_SYNTAX,     /* not JSON */
	MGW_JSON_DUPLICATE,  /* a member name twice in one object */
	MGW_JSON_DEPTH,      /* nested deeper than max_depth */
	MGW_JSON_LIMIT,      /* more than MGW_JSON_MAX_VALUES values */
	MGW_JSON_RANGE,      /* a number beyond json_int_t / a double (strict) */
	MGW_JSON_NOMEM,
};

#define MGW_JSON_MAX_VALUES 262144

struct mgw_json_error {
	enum mgw_json_err code;
	size_t position;     /* byte offset where it was found */
	char text[96];
};

/* Parses len bytes of buf.  Arrays and objects may nest max_depth deep
 * (0: 64).  Returns a new reference, or NULL with *err filled. */
json_t *mgw_json_parse(const void *buf, size_t len, size_t max_depth,
                       struct mgw_json_error *err);

/* Flags of mgw_json_parse_flags. */
#define MGW_JSON_WIDE_NUMBERS 0x1u

/* mgw_json_parse with flags (0: the same). */
json_t *mgw_json_parse_flags(const void *buf, size_t len, size_t max_depth,
                             unsigned flags, struct mgw_json_error *err);

/* 1 when v is a number read under MGW_JSON_WIDE_NUMBERS that no jansson
 * number holds; *text, *len (either may be NULL) its exact text. */
int mgw_json_wide_number(json_t *v, const char **text, size_t *len);

/* Writes v compactly: the bytes json_dumps(v, JSON_COMPACT |
 * JSON_ENCODE_ANY) writes (members in their order, no spaces, the same
 * escapes), at a fraction of its cost (json_dump.c), except that a wide
 * number is written as its text where jansson would fail.  Returns a
 * malloc'd NUL-terminated text, its length in *len (may be NULL); NULL
 * when out of memory, nested deeper than 2048, or a string is not valid
 * UTF-8 (as jansson). */
char *mgw_json_dump(const json_t *v, size_t *len);

/* ---- the skim: checking a document without building it ---------------
 *
 * mgw_json_skim reads a document as mgw_json_parse_flags(...,
 * MGW_JSON_WIDE_NUMBERS) does and builds nothing: it says whether that
 * parse would succeed, and records the members of a few objects along
 * one path (the top-level object, its member path[0] when that is an
 * object, that one's member path[1], ...).  It keeps to what it can
 * decide cheaply and answers "unsure" otherwise: any error (the parse
 * then finds it, with its message), a member name with an escape, more
 * than MGW_JSON_SKIM_KEYS member names open at once (the duplicate check
 * compares names; the parse's hash table takes over).  So a skim that
 * succeeds means the document is valid and the parse would build it;
 * tests/fuzz/jsonrpc_fuzz.c checks that claim against the parse. */
#define MGW_JSON_SKIM_KEYS 256     /* member names open at once */
#define MGW_JSON_SKIM_MEMBERS 16   /* members recorded per object of the path */
#define MGW_JSON_SKIM_LEVELS 3     /* the top-level object and two below */

/* One member: its name (raw, no escapes) and its value's bytes. */
struct mgw_json_member {
	const unsigned char *key, *val;
	size_t klen, vlen;
	char type;        /* 'o' object, 'a' array, 's' string, 'n' number,
	                   * 'l' true/false/null */
	unsigned char esc; /* a string with escapes (its raw bytes are not its
	                    * value) */
	unsigned char integer; /* a number without fraction or exponent */
};

struct mgw_json_skim {
	char top;                 /* the type of the top-level value */
	/* level[0]: the top-level object's members (when it is one);
	 * level[i]: the members of level[i-1]'s member path[i-1], when that
	 * is an object (n[i] = 0 and found[i] = 0 otherwise) */
	struct mgw_json_member level[MGW_JSON_SKIM_LEVELS][MGW_JSON_SKIM_MEMBERS];
	unsigned n[MGW_JSON_SKIM_LEVELS];
	unsigned char found[MGW_JSON_SKIM_LEVELS];
	unsigned char overflow;   /* an object of the path had more members
	                           * than MGW_JSON_SKIM_MEMBERS (not recorded) */
};

/* Skims len bytes of buf (see above); path has npath (< MGW_JSON_SKIM_LEVELS)
 * member names.  Returns 0 when the document is valid and every object of
 * the path was recorded whole, -1 when unsure. */
int mgw_json_skim(const void *buf, size_t len, size_t max_depth,
                  const char *const *path, size_t npath,
                  struct mgw_json_skim *out);

/* The member named key among level[lv]'s, or NULL.  Inline, so that a
 * literal key's length is known at compile time. */
static inline const struct mgw_json_member *
mgw_json_skim_get(const struct mgw_json_skim *s, unsigned lv, const char *key)
{
	size_t n = strlen(key);

	if (lv >= MGW_JSON_SKIM_LEVELS)
		return NULL;
	for (unsigned i = 0; i < s->n[lv]; i++)
		if (s->level[lv][i].klen == n &&
		    memcmp(s->level[lv][i].key, key, n) == 0)
			return &s->level[lv][i];
	return NULL;
}

#endif
