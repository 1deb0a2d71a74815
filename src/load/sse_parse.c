/* sse_parse.c - incremental Server-Sent Events parser (see sse_parse.h).
 *
 * Bytes accumulate into the current line until an end of line; each line
 * is then interpreted as a field.  A CR ends a line at once, and a LF
 * right after it is swallowed, so CRLF split across two feeds is still one
 * line end.  The joined data of an event keeps a trailing LF per line
 * while it is built; the last one is dropped at dispatch. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "load/sse_parse.h"

void mgw_sse_init(struct mgw_sse_parser *p, size_t max_line, size_t max_event)
{
	memset(p, 0, sizeof(*p));
	p->max_line = max_line ? max_line : MGW_SSE_MAX_LINE;
	p->max_event = max_event ? max_event : MGW_SSE_MAX_EVENT;
}

void mgw_sse_deinit(struct mgw_sse_parser *p)
{
	free(p->line);
	free(p->data);
	free(p->type);
	free(p->id);
	memset(p, 0, sizeof(*p));
}

/* Makes room for need bytes plus a NUL in *buf, growing geometrically
 * but never past limit + 1. */
static int reserve(char **buf, size_t *cap, size_t need, size_t limit)
{
	size_t ncap;
	char *nb;

	if (need + 1 <= *cap)
		return 0;
	ncap = *cap ? *cap : 128;
	while (ncap < need + 1)
		ncap *= 2;
	if (ncap > limit + 1)
		ncap = limit + 1;
	nb = realloc(*buf, ncap);
	if (!nb)
		return MGW_ENOMEM;
	*buf = nb;
	*cap = ncap;
	return 0;
}

static int set_str(char **buf, size_t *len, size_t *cap, const char *v,
                   size_t n, size_t limit)
{
	int rc = reserve(buf, cap, n, limit);

	if (rc)
		return rc;
	memcpy(*buf, v, n);
	(*buf)[n] = '\0';
	*len = n;
	return 0;
}

static void reset_event(struct mgw_sse_parser *p)
{
	p->data_len = 0;
	p->has_data = 0;
	p->type_len = 0;
}

static int dispatch(struct mgw_sse_parser *p, mgw_sse_event_cb on_event,
                    void *arg)
{
	struct mgw_sse_event ev;
	int rc;

	if (!p->has_data) {
		/* The spec drops an event without data (and its type). */
		reset_event(p);
		return 0;
	}
	if (p->data_len > 0)
		p->data_len--; /* the LF after the last data line */
	if (!p->data && reserve(&p->data, &p->data_cap, 0, p->max_event + 1))
		return MGW_ENOMEM;
	p->data[p->data_len] = '\0';
	ev.data = p->data;
	ev.data_len = p->data_len;
	ev.type = p->type_len ? p->type : "message";
	ev.id = p->id_len ? p->id : "";
	p->events++;
	rc = on_event ? on_event(arg, &ev) : 0;
	reset_event(p);
	return rc;
}

/* Interprets one complete line (without its end of line). */
static int process_line(struct mgw_sse_parser *p, const char *l, size_t n,
                        mgw_sse_event_cb on_event, void *arg)
{
	const char *colon, *v;
	size_t flen, vlen;
	int rc;

	if (n == 0)
		return dispatch(p, on_event, arg);
	if (l[0] == ':') {
		p->comments++;
		return 0;
	}
	colon = memchr(l, ':', n);
	if (colon) {
		flen = (size_t)(colon - l);
		v = colon + 1;
		vlen = n - flen - 1;
		if (vlen > 0 && v[0] == ' ') {
			v++;
			vlen--;
		}
	} else {
		flen = n;
		v = l + n;
		vlen = 0;
	}
	if (flen == 4 && memcmp(l, "data", 4) == 0) {
		/* +1 for the LF joining this line to the next; the limit
		 * counts it too so a long run of empty data lines is bounded. */
		if (p->data_len + vlen + 1 > p->max_event + 1)
			return MGW_ELIMIT;
		rc = reserve(&p->data, &p->data_cap, p->data_len + vlen + 1,
		             p->max_event + 1);
		if (rc)
			return rc;
		memcpy(p->data + p->data_len, v, vlen);
		p->data_len += vlen;
		p->data[p->data_len++] = '\n';
		p->has_data = 1;
	} else if (flen == 5 && memcmp(l, "event", 5) == 0) {
		return set_str(&p->type, &p->type_len, &p->type_cap, v, vlen,
		               p->max_line);
	} else if (flen == 2 && memcmp(l, "id", 2) == 0) {
		if (memchr(v, '\0', vlen))
			return 0;
		return set_str(&p->id, &p->id_len, &p->id_cap, v, vlen,
		               p->max_line);
	}
	/* "retry" and unknown fields carry nothing this client uses. */
	return 0;
}

/* Appends bytes to the current line, bounded by max_line. */
static int line_append(struct mgw_sse_parser *p, const char *s, size_t n)
{
	int rc;

	if (n == 0)
		return 0;
	if (p->line_len + n > p->max_line)
		return MGW_ELIMIT;
	rc = reserve(&p->line, &p->line_cap, p->line_len + n, p->max_line);
	if (rc)
		return rc;
	memcpy(p->line + p->line_len, s, n);
	p->line_len += n;
	return 0;
}

static const unsigned char bom[3] = {0xEF, 0xBB, 0xBF};

int mgw_sse_feed(struct mgw_sse_parser *p, const void *buf, size_t len,
                 mgw_sse_event_cb on_event, void *arg)
{
	const char *s = buf, *end = s + len;
	int rc = 0;

	if (p->err)
		return p->err;
	/* A BOM may itself arrive split; bytes that turn out not to be one
	 * are replayed into the line. */
	while (p->bom < 3 && s < end) {
		if ((unsigned char)*s != bom[p->bom]) {
			unsigned matched = p->bom;

			p->bom = 4;
			if (matched) {
				rc = line_append(p, (const char *)bom, matched);
				if (rc)
					goto fail;
			}
			break;
		}
		p->bom++;
		s++;
	}
	if (p->bom == 3 && s < end)
		p->bom = 4;
	while (s < end) {
		const char *eol;
		size_t n;

		if (p->cr) {
			p->cr = 0;
			if (*s == '\n') {
				s++;
				continue;
			}
		}
		eol = s;
		while (eol < end && *eol != '\n' && *eol != '\r')
			eol++;
		n = (size_t)(eol - s);
		if (eol == end) {
			rc = line_append(p, s, n);
			if (rc)
				goto fail;
			break;
		}
		if (*eol == '\r')
			p->cr = 1;
		if (p->line_len == 0) {
			/* Whole line in this buffer: no copy. */
			if (n > p->max_line) {
				rc = MGW_ELIMIT;
				goto fail;
			}
			rc = process_line(p, s, n, on_event, arg);
		} else {
			size_t total;

			rc = line_append(p, s, n);
			if (rc)
				goto fail;
			total = p->line_len;
			p->line_len = 0; /* reset before the callback may stop us */
			rc = process_line(p, p->line, total, on_event, arg);
		}
		if (rc < 0)
			goto fail;
		s = eol + 1;
		if (rc > 0)
			return rc;
	}
	return 0;
fail:
	p->err = rc;
	return rc;
}

int mgw_sse_finish(struct mgw_sse_parser *p)
{
	int partial = p->line_len > 0 || p->has_data || p->type_len > 0;

	p->line_len = 0;
	reset_event(p);
	return partial;
}
