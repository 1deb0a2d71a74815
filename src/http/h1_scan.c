/* h1_scan.c - the strict HTTP/1 head scanner shared by the server (h1.c)
 * and the upstream client (client_h1.c); see h1_scan.h for why both
 * refuse what a lenient parser would let through. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "http/h1_scan.h"
#include "http/headers.h"

int mgw_h1_buf_append(char **buf, size_t *len, size_t *cap, const void *p,
                      size_t n)
{
	if (*len + n + 1 > *cap) {
		size_t ncap = *cap ? *cap : 64;
		while (ncap < *len + n + 1)
			ncap *= 2;
		char *nb = realloc(*buf, ncap);
		if (!nb)
			return MGW_ENOMEM;
		*buf = nb;
		*cap = ncap;
	}
	memcpy(*buf + *len, p, n);
	*len += n;
	(*buf)[*len] = '\0';
	return 0;
}

void mgw_h1_scan_reset(struct mgw_h1_scan *s, size_t cap, int lead_crlf)
{
	s->cap = cap;
	s->bytes = 0;
	s->in_head = 1;
	s->cr = 0;
	s->lf = 1;
	s->any = 0;
	s->lead_crlf = lead_crlf != 0;
}

/* Bytes the scan must look at one by one: line ends and the control
 * bytes a head may not hold (HTAB aside). */
static const unsigned char scan_special[256] = {
	[0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1, [0x05] = 1,
	[0x06] = 1, [0x07] = 1, [0x08] = 1, [0x0a] = 1, [0x0b] = 1, [0x0c] = 1,
	[0x0d] = 1, [0x0e] = 1, [0x0f] = 1, [0x10] = 1, [0x11] = 1, [0x12] = 1,
	[0x13] = 1, [0x14] = 1, [0x15] = 1, [0x16] = 1, [0x17] = 1, [0x18] = 1,
	[0x19] = 1, [0x1a] = 1, [0x1b] = 1, [0x1c] = 1, [0x1d] = 1, [0x1e] = 1,
	[0x1f] = 1, [0x7f] = 1,
};

/* The LF of a CRLF: the end of the head after an empty line, else the
 * start of a new line.  Returns 1 at the end, 0 to go on, or MGW_EPROTO. */
static int scan_crlf(struct mgw_h1_scan *s)
{
	s->cr = 0;
	if (s->lf && s->any) {
		s->in_head = 0;
		return 1;
	}
	if (!s->any && !s->lead_crlf)
		return MGW_EPROTO; /* empty line before the start line */
	s->lf = 1;
	return 0;
}

/* One byte that is special or starts a line.  Returns 1 at the end of the
 * head, 0 to go on, or MGW_EPROTO. */
static int scan_byte(struct mgw_h1_scan *s, unsigned char ch)
{
	if (s->cr)
		return ch == '\n' ? scan_crlf(s) : MGW_EPROTO; /* bare CR */
	if (ch == '\r') {
		s->cr = 1;
		return 0;
	}
	if (ch == '\n')
		return MGW_EPROTO; /* bare LF */
	if (s->lf) {
		if (ch == ' ' || ch == '\t')
			return MGW_EPROTO; /* obs-fold (or a start line beginning blank) */
		s->lf = 0;
		s->any = 1;
	}
	return scan_special[ch] ? MGW_EPROTO : 0;
}

/* 1 when p[0..3) is a line's CRLF and the first byte of a next line
 * that is neither empty nor folded: the scan goes on inside a line. */
static int plain_line_end(const unsigned char *p)
{
	return p[0] == '\r' && p[1] == '\n' && !scan_special[p[2]] &&
	       p[2] != ' ' && p[2] != '\t';
}

/* Inside a line, runs of ordinary bytes are skipped by blocks
 * (mgw_ctl_free_words), then by table; a CRLF followed by the start of
 * an ordinary line is stepped over at once; the other line starts, line
 * ends and control bytes go through scan_byte. */
int mgw_h1_scan_feed(struct mgw_h1_scan *s, const unsigned char *p,
                     size_t len, size_t *feed)
{
	size_t i = 0;

	while (i < len) {
		int st;

		if (!s->cr && !s->lf) {
			size_t j = i;

			for (;;) {
				j += mgw_ctl_free_words(p + j, len - j);
				while (j < len && !scan_special[p[j]])
					j++;
				if (len - j < 3 || !plain_line_end(p + j))
					break;
				j += 3;
			}
			s->bytes += j - i;
			if (s->bytes > s->cap)
				return MGW_ELIMIT;
			i = j;
			if (i == len)
				break;
		}
		if (++s->bytes > s->cap)
			return MGW_ELIMIT;
		st = scan_byte(s, p[i]);
		i++;
		if (st == 1) {
			*feed = i;
			return 0;
		}
		if (st)
			return st;
	}
	*feed = len;
	return 0;
}
