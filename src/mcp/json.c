/* json.c - strict RFC 8259 reader into jansson values (see json.h). */
#include "autoconf.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "mcp/json.h"
#include "mcp/json_plain.h"

#define DEFAULT_MAX_DEPTH 64

struct rd {
	const unsigned char *s, *p, *end;
	size_t depth, max_depth;
	size_t values;          /* values built so far */
	unsigned flags;         /* MGW_JSON_WIDE_NUMBERS */
	struct mgw_json_error *err;
};

static json_t *fail(struct rd *r, enum mgw_json_err code, const char *text)
{
	if (r->err->code == MGW_JSON_OK) {
		r->err->code = code;
		r->err->position = (size_t)(r->p - r->s);
		snprintf(r->err->text, sizeof(r->err->text), "%s at byte %zu", text,
		         r->err->position);
	}
	return NULL;
}

static void skip_ws_run(struct rd *r)
{
	while (r->p < r->end &&
	       (*r->p == ' ' || *r->p == '\n' || *r->p == '\r' || *r->p == '\t'))
		r->p++;
}

/* Inline: most documents have no whitespace between tokens, and every
 * JSON whitespace byte is at most ' ' (one compare for the rest). */
static inline void skip_ws(struct rd *r)
{
	if (r->p < r->end && *r->p <= ' ')
		skip_ws_run(r);
}

/* Length of the valid UTF-8 sequence at p (1..4), or 0.  No overlong
 * forms, no surrogates, nothing past U+10FFFF (RFC 3629). */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned char c = p[0];
	size_t n, avail = (size_t)(end - p);
	unsigned char lo = 0x80, hi = 0xBF;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4;
	else
		return 0;
	if (avail < n)
		return 0;
	if (c == 0xE0)
		lo = 0xA0;
	else if (c == 0xED)
		hi = 0x9F;
	else if (c == 0xF0)
		lo = 0x90;
	else if (c == 0xF4)
		hi = 0x8F;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xBF)
			return 0;
	return n;
}

static int hex4(const unsigned char *p, const unsigned char *end, unsigned *out)
{
	unsigned v = 0;

	if (end - p < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		unsigned char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static size_t put_utf8(unsigned char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (unsigned char)(0xC0 | cp >> 6);
		o[1] = (unsigned char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (unsigned char)(0xE0 | cp >> 12);
		o[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
		o[2] = (unsigned char)(0x80 | (cp & 0x3F));
		return 3;
	}
	o[0] = (unsigned char)(0xF0 | cp >> 18);
	o[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
	o[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
	o[3] = (unsigned char)(0x80 | (cp & 0x3F));
	return 4;
}

/* Decodes the escapes of the string body [a, b) (already checked by
 * scan_string) into *out (malloc'd), *len its length. */
static int unescape(struct rd *r, const unsigned char *a, const unsigned char *b,
                    char **out, size_t *len)
{
	/* every escape is at least as long as what it decodes to */
	unsigned char *o = malloc((size_t)(b - a) + 1), *w = o;

	if (!o) {
		fail(r, MGW_JSON_NOMEM, "no memory");
		return -1;
	}
	while (a < b) {
		unsigned cp, lo;

		if (*a != '\\') {
			*w++ = *a++;
			continue;
		}
		a++;
		switch (*a++) {
		case '"': *w++ = '"'; break;
		case '\\': *w++ = '\\'; break;
		case '/': *w++ = '/'; break;
		case 'b': *w++ = '\b'; break;
		case 'f': *w++ = '\f'; break;
		case 'n': *w++ = '\n'; break;
		case 'r': *w++ = '\r'; break;
		case 't': *w++ = '\t'; break;
		default: /* 'u', checked by scan_string */
			hex4(a, b, &cp);
			a += 4;
			if (cp >= 0xD800 && cp <= 0xDBFF) {
				hex4(a + 2, b, &lo);
				a += 6;
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			}
			w += put_utf8(w, cp);
			break;
		}
	}
	*out = (char *)o;
	*len = (size_t)(w - o);
	return 0;
}

/* A number no jansson value holds (see json.h): a string of the bytes
 * 00 FF and the number's text. */
static json_t *wide_number(struct rd *r, const unsigned char *a, size_t n)
{
	char *t = malloc(n + 2);
	json_t *v;

	if (!t)
		return fail(r, MGW_JSON_NOMEM, "no memory");
	t[0] = '\0';
	t[1] = '\xFF';
	memcpy(t + 2, a, n);
	v = json_stringn_nocheck(t, n + 2);
	free(t);
	return v ? v : fail(r, MGW_JSON_NOMEM, "no memory");
}

/* scan_string past its plain first run p (the body starts at r->p + 1). */
static int scan_string_rest(struct rd *r, const unsigned char *p,
                            const unsigned char **a, const unsigned char **b,
                            int *esc, int *nul)
{
	*a = r->p + 1;
	*esc = *nul = 0;
	for (;;) {
		unsigned char c;

		p = mgw_json_plain_run(p, r->end);
		if (p >= r->end) {
			r->p = p;
			fail(r, MGW_JSON_SYNTAX, "unterminated string");
			return -1;
		}
		c = *p;
		if (c == '"')
			break;
		if (c < 0x20) {
			r->p = p;
			fail(r, MGW_JSON_SYNTAX, "control character in string");
			return -1;
		}
		if (c == '\\') {
			unsigned cp, lo;

			*esc = 1;
			if (p + 1 >= r->end)
				goto bad_escape;
			switch (p[1]) {
			case '"': case '\\': case '/': case 'b': case 'f':
			case 'n': case 'r': case 't':
				p += 2;
				continue;
			case 'u':
				break;
			default:
				goto bad_escape;
			}
			if (hex4(p + 2, r->end, &cp) != 0)
				goto bad_escape;
			p += 6;
			if (cp >= 0xDC00 && cp <= 0xDFFF)
				goto bad_escape; /* a low surrogate first */
			if (cp >= 0xD800 && cp <= 0xDBFF) {
				if (r->end - p < 6 || p[0] != '\\' || p[1] != 'u' ||
				    hex4(p + 2, r->end, &lo) != 0 ||
				    lo < 0xDC00 || lo > 0xDFFF)
					goto bad_escape;
				p += 6;
			}
			if (cp == 0)
				*nul = 1;
			continue;
		}
		{
			size_t n = utf8_len(p, r->end);

			if (n == 0) {
				r->p = p;
				fail(r, MGW_JSON_SYNTAX, "invalid UTF-8 in string");
				return -1;
			}
			p += n;
		}
	}
	*b = p;
	r->p = p + 1;
	return 0;
bad_escape:
	r->p = p;
	fail(r, MGW_JSON_SYNTAX, "invalid escape in string");
	return -1;
}

/* Scans the string starting at the opening quote: checks it (UTF-8,
 * control bytes, escapes, surrogate pairs) and leaves r->p after the
 * closing quote.  [*a, *b) is its body; *esc whether it has escapes;
 * *nul whether an escape decodes to U+0000.  Runs of plain ASCII are
 * skipped by plain_run, the rest looked at one character at a time; a
 * string that is one plain run (most names and values) ends here. */
static inline int scan_string(struct rd *r, const unsigned char **a,
                              const unsigned char **b, int *esc, int *nul)
{
	const unsigned char *p = mgw_json_plain_run(r->p + 1, r->end);

	if (p < r->end && *p == '"') {
		*a = r->p + 1;
		*b = p;
		*esc = *nul = 0;
		r->p = p + 1;
		return 0;
	}
	return scan_string_rest(r, p, a, b, esc, nul);
}

static json_t *string_value(struct rd *r)
{
	const unsigned char *a, *b;
	int esc, nul;
	char *s;
	size_t n;
	json_t *v;

	if (scan_string(r, &a, &b, &esc, &nul) != 0)
		return NULL;
	if (!esc)
		v = json_stringn_nocheck((const char *)a, (size_t)(b - a));
	else {
		if (unescape(r, a, b, &s, &n) != 0)
			return NULL;
		v = json_stringn_nocheck(s, n);
		free(s);
	}
	return v ? v : fail(r, MGW_JSON_NOMEM, "no memory");
}

static json_t *number(struct rd *r)
{
	const unsigned char *p = r->p, *start = p;
	char buf[64], *num, *endp;
	json_t *j;
	int is_real = 0;
	size_t n;

	if (p < r->end && *p == '-')
		p++;
	if (p >= r->end || *p < '0' || *p > '9')
		return fail(r, MGW_JSON_SYNTAX, "invalid number");
	if (*p == '0') {
		p++;
		if (p < r->end && *p >= '0' && *p <= '9')
			return fail(r, MGW_JSON_SYNTAX, "invalid number");
	} else {
		while (p < r->end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < r->end && *p == '.') {
		is_real = 1;
		p++;
		if (p >= r->end || *p < '0' || *p > '9')
			return fail(r, MGW_JSON_SYNTAX, "invalid number");
		while (p < r->end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < r->end && (*p == 'e' || *p == 'E')) {
		is_real = 1;
		p++;
		if (p < r->end && (*p == '+' || *p == '-'))
			p++;
		if (p >= r->end || *p < '0' || *p > '9')
			return fail(r, MGW_JSON_SYNTAX, "invalid number");
		while (p < r->end && *p >= '0' && *p <= '9')
			p++;
	}
	n = (size_t)(p - start);
	/* strtoll / strtod want a terminated copy; numbers are short */
	num = n < sizeof(buf) ? buf : malloc(n + 1);
	if (!num)
		return fail(r, MGW_JSON_NOMEM, "no memory");
	memcpy(num, start, n);
	num[n] = '\0';
	errno = 0;
	if (!is_real) {
		long long v = strtoll(num, &endp, 10);

		if (errno == ERANGE) {
			if (r->flags & MGW_JSON_WIDE_NUMBERS) {
				j = wide_number(r, start, n);
				goto out;
			}
			j = fail(r, MGW_JSON_RANGE, "integer out of range");
			goto out;
		}
		j = json_integer((json_int_t)v);
	} else {
		double d = strtod(num, &endp);

		if (errno == ERANGE && (d == HUGE_VAL || d == -HUGE_VAL)) {
			if (r->flags & MGW_JSON_WIDE_NUMBERS) {
				j = wide_number(r, start, n);
				goto out;
			}
			j = fail(r, MGW_JSON_RANGE, "real number overflow");
			goto out;
		}
		j = json_real(d);
	}
	if (!j)
		fail(r, MGW_JSON_NOMEM, "no memory");
out:
	if (num != buf)
		free(num);
	r->p = p;
	return j;
}

static json_t *value(struct rd *r);

/* After an object's member: 1 at ',' (the whitespace before the next
 * name skipped), 0 at '}', -1 at anything else (r->p there).  The parse
 * and the skim read members alike. */
static int object_next(struct rd *r)
{
	skip_ws(r);
	if (r->p < r->end && *r->p == ',') {
		r->p++;
		skip_ws(r);
		return 1;
	}
	if (r->p < r->end && *r->p == '}') {
		r->p++;
		return 0;
	}
	return -1;
}

static json_t *object(struct rd *r)
{
	json_t *o = json_object(), *v;

	if (!o)
		return fail(r, MGW_JSON_NOMEM, "no memory");
	r->p++;
	skip_ws(r);
	if (r->p < r->end && *r->p == '}') {
		r->p++;
		return o;
	}
	for (;;) {
		const unsigned char *a, *b;
		char *key = NULL;
		size_t klen;
		int esc, nul, rc;

		if (r->p >= r->end || *r->p != '"') {
			fail(r, MGW_JSON_SYNTAX, "expected a member name");
			goto bad;
		}
		if (scan_string(r, &a, &b, &esc, &nul) != 0)
			goto bad;
		if (nul) {
			fail(r, MGW_JSON_SYNTAX, "NUL in a member name");
			goto bad;
		}
		if (esc) {
			if (unescape(r, a, b, &key, &klen) != 0)
				goto bad;
		} else {
			klen = (size_t)(b - a);
		}
		/* right after the name, as jansson does, so that the first
		 * error found is the same one */
		if (json_object_getn(o, key ? key : (const char *)a, klen)) {
			free(key);
			fail(r, MGW_JSON_DUPLICATE, "duplicate member name");
			goto bad;
		}
		skip_ws(r);
		if (r->p >= r->end || *r->p != ':') {
			free(key);
			fail(r, MGW_JSON_SYNTAX, "expected ':'");
			goto bad;
		}
		r->p++;
		v = value(r);
		if (!v) {
			free(key);
			goto bad;
		}
		rc = json_object_setn_new_nocheck(o, key ? key : (const char *)a,
		                                  klen, v);
		free(key);
		if (rc != 0) {
			fail(r, MGW_JSON_NOMEM, "no memory");
			goto bad;
		}
		switch (object_next(r)) {
		case 1:
			continue;
		case 0:
			return o;
		}
		fail(r, MGW_JSON_SYNTAX, "expected ',' or '}'");
		goto bad;
	}
bad:
	json_decref(o);
	return NULL;
}

static json_t *array(struct rd *r)
{
	json_t *a = json_array(), *v;

	if (!a)
		return fail(r, MGW_JSON_NOMEM, "no memory");
	r->p++;
	skip_ws(r);
	if (r->p < r->end && *r->p == ']') {
		r->p++;
		return a;
	}
	for (;;) {
		v = value(r);
		if (!v || json_array_append_new(a, v) != 0) {
			if (v)
				fail(r, MGW_JSON_NOMEM, "no memory");
			json_decref(a);
			return NULL;
		}
		skip_ws(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			continue;
		}
		if (r->p < r->end && *r->p == ']') {
			r->p++;
			return a;
		}
		json_decref(a);
		return fail(r, MGW_JSON_SYNTAX, "expected ',' or ']'");
	}
}

static json_t *literal(struct rd *r, const char *word, size_t n, json_t *v)
{
	if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
		return fail(r, MGW_JSON_SYNTAX, "invalid token");
	r->p += n;
	return v;
}

static json_t *value(struct rd *r)
{
	json_t *v;

	skip_ws(r);
	if (r->p >= r->end)
		return fail(r, MGW_JSON_SYNTAX, "unexpected end of input");
	if (++r->values > MGW_JSON_MAX_VALUES)
		return fail(r, MGW_JSON_LIMIT, "too many values");
	switch (*r->p) {
	case '{':
	case '[':
		if (++r->depth > r->max_depth)
			return fail(r, MGW_JSON_DEPTH, "nested too deep");
		v = *r->p == '{' ? object(r) : array(r);
		r->depth--;
		return v;
	case '"':
		return string_value(r);
	case 't':
		return literal(r, "true", 4, json_true());
	case 'f':
		return literal(r, "false", 5, json_false());
	case 'n':
		return literal(r, "null", 4, json_null());
	default:
		if (*r->p == '-' || (*r->p >= '0' && *r->p <= '9'))
			return number(r);
		return fail(r, MGW_JSON_SYNTAX, "invalid token");
	}
}

json_t *mgw_json_parse(const void *buf, size_t len, size_t max_depth,
                       struct mgw_json_error *err)
{
	return mgw_json_parse_flags(buf, len, max_depth, 0, err);
}

int mgw_json_wide_number(json_t *v, const char **text, size_t *len)
{
	const char *s;

	if (!json_is_string(v) || json_string_length(v) < 3)
		return 0;
	s = json_string_value(v);
	if (s[0] != '\0' || (unsigned char)s[1] != 0xFF)
		return 0;
	if (text)
		*text = s + 2;
	if (len)
		*len = json_string_length(v) - 2;
	return 1;
}

json_t *mgw_json_parse_flags(const void *buf, size_t len, size_t max_depth,
                             unsigned flags, struct mgw_json_error *err)
{
	struct rd r;
	json_t *v;

	memset(err, 0, sizeof(*err));
	r.s = r.p = buf;
	r.end = r.s + len;
	r.depth = 0;
	r.values = 0;
	r.flags = flags;
	r.max_depth = max_depth ? max_depth : DEFAULT_MAX_DEPTH;
	r.err = err;
	v = value(&r);
	if (!v)
		return NULL;
	skip_ws(&r);
	if (r.p != r.end) {
		json_decref(v);
		return fail(&r, MGW_JSON_SYNTAX, "end of input expected");
	}
	return v;
}

/* ---- the skim (json.h): the same reading, nothing built ----------------- */

struct sk {
	struct rd r;
	struct mgw_json_error e;
	const char *const *path;
	size_t npath;
	size_t plen[MGW_JSON_SKIM_LEVELS]; /* strlen of path[i] */
	struct mgw_json_skim *out;
	unsigned nkeys;             /* names of the objects open now */
	const unsigned char *key[MGW_JSON_SKIM_KEYS];
	size_t klen[MGW_JSON_SKIM_KEYS];
};

static int sk_value(struct sk *k, int lv, struct mgw_json_member *m);

/* The number at r->p, by the grammar alone: under MGW_JSON_WIDE_NUMBERS
 * every number the grammar allows is read (json.h). */
static int sk_number(struct sk *k, struct mgw_json_member *m)
{
	const unsigned char *p = k->r.p, *end = k->r.end;

	m->integer = 1;
	if (p < end && *p == '-')
		p++;
	if (p >= end || *p < '0' || *p > '9')
		return -1;
	if (*p == '0') {
		p++;
		if (p < end && *p >= '0' && *p <= '9')
			return -1;
	} else {
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < end && *p == '.') {
		m->integer = 0;
		p++;
		if (p >= end || *p < '0' || *p > '9')
			return -1;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		m->integer = 0;
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end || *p < '0' || *p > '9')
			return -1;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	k->r.p = p;
	return 0;
}

static int sk_path_member(const struct sk *k, int lv, const unsigned char *a,
                          size_t n)
{
	const char *want;

	if (lv < 0 || (size_t)lv >= k->npath || lv + 1 >= MGW_JSON_SKIM_LEVELS)
		return -1;
	want = k->path[lv];
	return k->plen[lv] == n && memcmp(want, a, n) == 0 ? lv + 1 : -1;
}

/* An object; lv >= 0 when it is the path's object of that level, whose
 * members are recorded. */
static int sk_object(struct sk *k, int lv)
{
	struct rd *r = &k->r;
	unsigned base = k->nkeys;
	int rc = -1;

	if (lv >= 0)
		k->out->found[lv] = 1;
	r->p++;
	skip_ws(r);
	if (r->p < r->end && *r->p == '}') {
		r->p++;
		return 0;
	}
	for (;;) {
		struct mgw_json_member m = {0};
		int esc, nul;

		if (r->p >= r->end || *r->p != '"' ||
		    scan_string(r, &m.key, &m.val, &esc, &nul) != 0 || esc)
			goto out; /* an escaped name: the parse compares it */
		m.klen = (size_t)(m.val - m.key);
		for (unsigned i = base; i < k->nkeys; i++)
			if (k->klen[i] == m.klen &&
			    memcmp(k->key[i], m.key, m.klen) == 0)
				goto out; /* a duplicate */
		if (k->nkeys == MGW_JSON_SKIM_KEYS)
			goto out;
		k->key[k->nkeys] = m.key;
		k->klen[k->nkeys++] = m.klen;
		skip_ws(r);
		if (r->p >= r->end || *r->p != ':')
			goto out;
		r->p++;
		if (sk_value(k, sk_path_member(k, lv, m.key, m.klen), &m) != 0)
			goto out;
		if (lv >= 0) {
			if (k->out->n[lv] < MGW_JSON_SKIM_MEMBERS)
				k->out->level[lv][k->out->n[lv]++] = m;
			else
				k->out->overflow = 1;
		}
		switch (object_next(r)) {
		case 1:
			continue;
		case 0:
			rc = 0;
			break;
		}
		goto out;
	}
out:
	k->nkeys = base;
	return rc;
}

static int sk_array(struct sk *k)
{
	struct rd *r = &k->r;

	r->p++;
	skip_ws(r);
	if (r->p < r->end && *r->p == ']') {
		r->p++;
		return 0;
	}
	for (;;) {
		struct mgw_json_member m;

		if (sk_value(k, -1, &m) != 0)
			return -1;
		skip_ws(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			continue;
		}
		if (r->p < r->end && *r->p == ']') {
			r->p++;
			return 0;
		}
		return -1;
	}
}

static int sk_literal(struct sk *k, const char *word, size_t n)
{
	if ((size_t)(k->r.end - k->r.p) < n || memcmp(k->r.p, word, n) != 0)
		return -1;
	k->r.p += n;
	return 0;
}

/* A value; lv >= 0 when, should it be an object, it is the path's
 * object of that level.  Fills m's value, type and flags. */
static int sk_value(struct sk *k, int lv, struct mgw_json_member *m)
{
	struct rd *r = &k->r;
	const unsigned char *a, *b;
	int rc, nul, esc;

	skip_ws(r);
	if (r->p >= r->end || ++r->values > MGW_JSON_MAX_VALUES)
		return -1;
	m->val = r->p;
	m->esc = 0;
	m->integer = 0;
	switch (*r->p) {
	case '{':
	case '[':
		if (++r->depth > r->max_depth)
			return -1;
		m->type = *r->p == '{' ? 'o' : 'a';
		rc = *r->p == '{' ? sk_object(k, lv) : sk_array(k);
		r->depth--;
		break;
	case '"':
		m->type = 's';
		rc = scan_string(r, &a, &b, &esc, &nul);
		m->esc = (unsigned char)esc;
		break;
	case 't':
		m->type = 'l';
		rc = sk_literal(k, "true", 4);
		break;
	case 'f':
		m->type = 'l';
		rc = sk_literal(k, "false", 5);
		break;
	case 'n':
		m->type = 'l';
		rc = sk_literal(k, "null", 4);
		break;
	default:
		m->type = 'n';
		rc = sk_number(k, m);
		break;
	}
	m->vlen = (size_t)(r->p - m->val);
	return rc;
}

int mgw_json_skim(const void *buf, size_t len, size_t max_depth,
                  const char *const *path, size_t npath,
                  struct mgw_json_skim *out)
{
	struct sk k;
	struct mgw_json_member top;

	out->top = 0;
	memset(out->n, 0, sizeof(out->n));
	memset(out->found, 0, sizeof(out->found));
	out->overflow = 0;
	k.r.s = k.r.p = buf;
	k.r.end = k.r.s + len;
	k.r.depth = 0;
	k.r.values = 0;
	k.r.flags = MGW_JSON_WIDE_NUMBERS;
	k.r.max_depth = max_depth ? max_depth : DEFAULT_MAX_DEPTH;
	memset(&k.e, 0, sizeof(k.e));
	k.r.err = &k.e;
	k.path = path;
	k.npath = npath;
	for (size_t i = 0; i < npath && i < MGW_JSON_SKIM_LEVELS; i++)
		k.plen[i] = strlen(path[i]);
	k.out = out;
	k.nkeys = 0;
	if (sk_value(&k, 0, &top) != 0)
		return -1;
	out->top = top.type;
	skip_ws(&k.r);
	return k.r.p == k.r.end && !out->overflow ? 0 : -1;
}
