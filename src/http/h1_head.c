/* h1_head.c - the lines, request line and field lines of a scanned HTTP/1
 * head (see h1_head.h). */
#include "autoconf.h"

#include <string.h>

#include "core/errors.h"
#include "http/h1_head.h"
#include "http/headers.h"


static int is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

/* "HTTP/" DIGIT "." DIGIT, the name case-sensitive (RFC 9112 §2.3). */
static int parse_version(const char *v, size_t n, int *major, int *minor)
{
	if (n != 8 || memcmp(v, "HTTP/", 5) != 0 || !is_digit(v[5]) ||
	    v[6] != '.' || !is_digit(v[7]))
		return MGW_EPROTO;
	*major = v[5] - '0';
	*minor = v[7] - '0';
	return 0;
}

int mgw_h1_request_line(struct mgw_h1_lines *it, struct mgw_h1_reqline *rl)
{
	const char *line, *end, *sp1, *sp2;
	size_t len;

	do {
		if (!mgw_h1_next_line(it, &line, &len))
			return MGW_EPROTO;
	} while (len == 0);
	end = line + len;
	sp1 = memchr(line, ' ', len);
	if (!sp1 || !mgw_header_name_valid(line, (size_t)(sp1 - line)))
		return MGW_EPROTO;
	sp2 = memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1));
	if (!sp2 || sp2 == sp1 + 1 ||
	    memchr(sp1 + 1, '\t', (size_t)(sp2 - sp1 - 1)))
		return MGW_EPROTO;
	rl->method = line;
	rl->method_len = (size_t)(sp1 - line);
	rl->target = sp1 + 1;
	rl->target_len = (size_t)(sp2 - sp1 - 1);
	return parse_version(sp2 + 1, (size_t)(end - sp2 - 1), &rl->major,
	                     &rl->minor);
}

int mgw_h1_status_line(struct mgw_h1_lines *it, int *major, int *minor,
                       int *status)
{
	const char *line;
	size_t len;

	if (!mgw_h1_next_line(it, &line, &len) || len < 12 || line[8] != ' ' ||
	    parse_version(line, 8, major, minor) != 0 || !is_digit(line[9]) ||
	    !is_digit(line[10]) || !is_digit(line[11]) ||
	    (len > 12 && line[12] != ' '))
		return MGW_EPROTO;
	*status = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
	return 0;
}

static int is_blank(char ch)
{
	return ch == ' ' || ch == '\t';
}

int mgw_h1_split_field(const char *line, size_t len, const char **name,
                       size_t *nlen, const char **value, size_t *vlen)
{
	const char *colon = line, *v, *end = line + len;

	/* the name and the colon found in one pass */
	while (colon < end && mgw_tchar[(unsigned char)*colon])
		colon++;
	if (colon == line || colon == end || *colon != ':')
		return MGW_EPROTO;
	v = colon + 1;
	while (v < end && is_blank(*v))
		v++;
	while (end > v && is_blank(end[-1]))
		end--;
	*name = line;
	*nlen = (size_t)(colon - line);
	*value = v;
	*vlen = (size_t)(end - v);
	return 0;
}

int mgw_h1_take_fields(struct mgw_h1_lines *it, struct mgw_headers *h,
                       struct mgw_h1_fields *lim)
{
	int was_empty = h->n == 0;
	size_t n = (size_t)(it->end - it->p);
	char *copy = mgw_headers_space(h, n);
	struct mgw_h1_lines mine;
	const char *line, *name, *value;
	size_t len, nlen, vlen;

	if (!copy)
		return MGW_ENOMEM;
	memcpy(copy, it->p, n);
	mgw_h1_lines_init(&mine, copy, n);
	it->p = it->end;
	while (mgw_h1_next_line(&mine, &line, &len) && len) {
		if (mgw_h1_split_field(line, len, &name, &nlen, &value, &vlen))
			return MGW_EPROTO;
		lim->bytes += nlen + vlen;
		if (lim->bytes > lim->max_bytes)
			return MGW_ELIMIT;
		if (h->n + 1 > lim->max_fields) {
			lim->too_many = 1;
			return MGW_ELIMIT;
		}
		/* the colon and the byte after the value (a blank or the CR)
		 * become the NULs: the copy is ours */
		copy[name + nlen - copy] = '\0';
		copy[value + vlen - copy] = '\0';
		if (mgw_headers_add_ref(h, copy + (name - copy), nlen,
		                        copy + (value - copy), vlen) != 0)
			return MGW_ENOMEM;
	}
	h->checked = was_empty;
	return 0;
}

int mgw_h1_content_length(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}
