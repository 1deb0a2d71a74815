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

#endif
