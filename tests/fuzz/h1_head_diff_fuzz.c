/* h1_head_diff_fuzz.c - libFuzzer target: the server's request-head reader
 * (src/http/h1_head.c, after the raw scan of h1_scan.c) against
 * http-parser, which read request heads before it, with the checks the
 * server ran on http-parser's fields (a token name; the value's trailing
 * blanks trimmed).
 *
 * The input is one client byte stream; its first head, as the raw scan
 * delimits it, is read by both.  Properties:
 *  - whatever http-parser and those checks accepted, the new reader
 *    accepts too (never stricter than the server was), except a request
 *    line that is not as RFC 9112 §3 writes it: parts separated by more
 *    than one SP or by HTAB, or a version other than HTTP/D.D, which
 *    Debian's lax http-parser build tolerates;
 *  - where both accept, they agree exactly: method, target, version, and
 *    every field's name and value, in order.
 * The reader may accept more (a method token http-parser does not know,
 * a lower-case one): the server then answers it like any method it does
 * not serve, instead of 400. */
#include "autoconf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <http_parser.h>

#include "http/h1_head.h"
#include "http/h1_scan.h"
#include "http/headers.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAXF = 64, MAXB = 8192 };

/* One reading of a head: pieces copied into buf, spans into it. */
struct reading {
	char buf[MAXB];
	size_t used;
	size_t method_off, method_len, target_off, target_len;
	int major, minor;
	size_t nf;
	size_t name_off[MAXF], name_len[MAXF], value_off[MAXF], value_len[MAXF];
	int ok;
};

static size_t put(struct reading *r, const char *p, size_t n)
{
	size_t off = r->used;

	if (n > MAXB - r->used)
		abort(); /* the head is bounded below */
	memcpy(r->buf + off, p, n);
	r->used += n;
	return off;
}

/* ---- the new reader ---- */

static void read_new(const char *p, size_t n, struct reading *r)
{
	struct mgw_h1_lines it;
	struct mgw_h1_reqline rl;
	const char *line, *name, *value;
	size_t len, nlen, vlen;

	memset(r, 0, sizeof(*r));
	mgw_h1_lines_init(&it, p, n);
	if (mgw_h1_request_line(&it, &rl))
		return;
	r->method_off = put(r, rl.method, rl.method_len);
	r->method_len = rl.method_len;
	r->target_off = put(r, rl.target, rl.target_len);
	r->target_len = rl.target_len;
	r->major = rl.major;
	r->minor = rl.minor;
	while (mgw_h1_next_line(&it, &line, &len) && len) {
		if (r->nf == MAXF ||
		    mgw_h1_split_field(line, len, &name, &nlen, &value, &vlen))
			return;
		r->name_off[r->nf] = put(r, name, nlen);
		r->name_len[r->nf] = nlen;
		r->value_off[r->nf] = put(r, value, vlen);
		r->value_len[r->nf] = vlen;
		r->nf++;
	}
	r->ok = 1;
}

/* ---- http-parser, as the server used it ---- */

struct hp_state {
	struct reading *r;
	int in_value, done, bad;
};

static int hp_url(http_parser *p, const char *at, size_t n)
{
	struct hp_state *s = p->data;

	if (!s->r->target_len)
		s->r->target_off = s->r->used;
	put(s->r, at, n);
	s->r->target_len += n;
	return 0;
}

/* Pieces of one name (value) arrive in order and are contiguous in buf
 * as long as nothing else is put between them. */
static int hp_field(http_parser *p, const char *at, size_t n)
{
	struct hp_state *s = p->data;
	struct reading *r = s->r;

	if (s->in_value || r->nf == 0) {
		if (r->nf == MAXF) {
			s->bad = 1;
			return -1;
		}
		r->nf++;
		r->name_off[r->nf - 1] = r->used;
		s->in_value = 0;
	}
	put(r, at, n);
	r->name_len[r->nf - 1] += n;
	return 0;
}

static int hp_value(http_parser *p, const char *at, size_t n)
{
	struct hp_state *s = p->data;
	struct reading *r = s->r;

	if (!s->in_value) {
		r->value_off[r->nf - 1] = r->used;
		s->in_value = 1;
	}
	put(r, at, n);
	r->value_len[r->nf - 1] += n;
	return 0;
}

static int hp_headers_complete(http_parser *p)
{
	struct hp_state *s = p->data;

	s->done = 1;
	http_parser_pause(p, 1);
	return 1;
}

static const http_parser_settings hp_settings = {
	.on_url = hp_url,
	.on_header_field = hp_field,
	.on_header_value = hp_value,
	.on_headers_complete = hp_headers_complete,
};

static void read_old(const char *p, size_t n, struct reading *r)
{
	http_parser hp;
	struct hp_state s = { .r = r };
	const char *m;

	memset(r, 0, sizeof(*r));
	http_parser_init(&hp, HTTP_REQUEST);
	hp.data = &s;
	http_parser_execute(&hp, &hp_settings, p, n);
	if (!s.done || s.bad)
		return;
	m = http_method_str((enum http_method)hp.method);
	r->method_off = put(r, m, strlen(m));
	r->method_len = strlen(m);
	r->major = hp.http_major;
	r->minor = hp.http_minor;
	/* the server's checks on each field once assembled */
	for (size_t i = 0; i < r->nf; i++) {
		const char *v = r->buf + r->value_off[i];

		while (r->value_len[i] &&
		       (v[r->value_len[i] - 1] == ' ' || v[r->value_len[i] - 1] == '\t'))
			r->value_len[i]--;
		if (!mgw_header_name_valid(r->buf + r->name_off[i], r->name_len[i]) ||
		    !mgw_header_value_valid(v, r->value_len[i]))
			return;
	}
	r->ok = 1;
}

/* ---- comparison ---- */

static int span_eq(const struct reading *a, size_t ao, size_t al,
                   const struct reading *b, size_t bo, size_t bl)
{
	return al == bl && memcmp(a->buf + ao, b->buf + bo, al) == 0;
}

/* The request line as RFC 9112 §3 writes it: exactly one SP between the
 * three parts and a version of exactly "HTTP/" DIGIT "." DIGIT (Debian's
 * http-parser, built without HTTP_PARSER_STRICT, takes "HT\xaa\xaf/1.0"
 * and "HTTPo1.1" for versions). */
static int rfc_request_line(const char *p, size_t n)
{
	const char *end = p + n, *line = p, *q, *sp2 = NULL;
	size_t sp = 0;

	while (line + 1 < end && line[0] == '\r' && line[1] == '\n')
		line += 2;
	for (q = line; q + 1 < end && !(q[0] == '\r' && q[1] == '\n'); q++) {
		if (*q == '\t')
			return 0;
		if (*q == ' ') {
			if (q[1] == ' ')
				return 0;
			if (++sp == 2)
				sp2 = q;
		}
	}
	return sp == 2 && q - sp2 - 1 == 8 && memcmp(sp2 + 1, "HTTP/", 5) == 0 &&
	       sp2[6] >= '0' && sp2[6] <= '9' && sp2[7] == '.' &&
	       sp2[8] >= '0' && sp2[8] <= '9';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct reading a, b;
	struct mgw_h1_scan sc;
	size_t feed = 0;

	if (size > MAXB / 3)
		return 0;
	mgw_h1_scan_reset(&sc, size, 1);
	if (mgw_h1_scan_feed(&sc, data, size, &feed) || sc.in_head)
		return 0; /* the raw scan refused it, or it is not one whole head */
	read_new((const char *)data, feed, &a);
	read_old((const char *)data, feed, &b);
	if (!b.ok)
		return 0;
	if (!a.ok) {
		if (rfc_request_line((const char *)data, feed))
			abort(); /* stricter than the server was */
		return 0;
	}
	if (!span_eq(&a, a.method_off, a.method_len, &b, b.method_off, b.method_len) ||
	    !span_eq(&a, a.target_off, a.target_len, &b, b.target_off, b.target_len) ||
	    a.major != b.major || a.minor != b.minor || a.nf != b.nf)
		abort();
	for (size_t i = 0; i < a.nf; i++)
		if (!span_eq(&a, a.name_off[i], a.name_len[i], &b, b.name_off[i], b.name_len[i]) ||
		    !span_eq(&a, a.value_off[i], a.value_len[i], &b, b.value_off[i], b.value_len[i]))
			abort();
	return 0;
}
