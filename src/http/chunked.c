/* chunked.c - strict decoder for the HTTP/1.1 chunked transfer coding.
 *
 * Grammar accepted (RFC 9112 §7.1, minus the leniencies that let two
 * parsers disagree on where a body ends):
 *
 *   body    = *( size [ ext ] CRLF data CRLF ) zero [ ext ] CRLF
 *             *( name ":" value CRLF ) CRLF
 *   size    = 1*15HEXDIG (a value of zero ends the chunks)
 *   ext     = *( SP / HTAB ) ";" *( any byte but a control, HTAB aside )
 *   name    = 1*tchar;  value = *( any byte but a control, HTAB aside )
 *
 * Every line end is exactly CR LF: a bare LF, a bare CR or any other pair
 * of bytes after chunk data is an error, never skipped.  Sizes are plain
 * hex digits (no sign, no "0x", no leading blank), at most 15 of them so
 * the value cannot overflow.  Extensions are not interpreted but bounded
 * and free of control bytes (HTAB aside), so a CR or LF inside one cannot
 * hide a line end.  Trailer lines need a token name and a colon, must not
 * start with a blank (obs-fold) and carry no control bytes; their total
 * size is limited, and they are dropped: nothing in mcpgw forwards
 * trailers. */
#include "autoconf.h"

#include "core/errors.h"
#include "http/chunked.h"

static int hexval(unsigned char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* RFC 9110 tchar: the bytes a field name is made of. */
static int is_tchar(unsigned char ch)
{
	if ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') ||
	    (ch >= 'A' && ch <= 'Z'))
		return 1;
	switch (ch) {
	case '!': case '#': case '$': case '%': case '&': case '\'': case '*':
	case '+': case '-': case '.': case '^': case '_': case '`': case '|':
	case '~':
		return 1;
	default:
		return 0;
	}
}

/* Control bytes other than HTAB, which no line may carry. */
static int is_ctl(unsigned char ch)
{
	return (ch < 0x20 && ch != '\t') || ch == 0x7f;
}

void mgw_chunked_init(struct mgw_chunked *ck, size_t max_trailer)
{
	ck->state = MGW_CK_SIZE;
	ck->left = 0;
	ck->digits = 0;
	ck->line = 0;
	ck->trailer_bytes = 0;
	ck->max_trailer = max_trailer;
	ck->err = 0;
	ck->msg = NULL;
}

static int ck_fail(struct mgw_chunked *ck, int err, const char *msg)
{
	ck->state = MGW_CK_FAILED;
	ck->err = err;
	ck->msg = msg;
	return err;
}

int mgw_chunked_feed(struct mgw_chunked *ck, const void *data, size_t len,
                     size_t *used, mgw_chunked_data_cb on_data, void *arg)
{
	const unsigned char *p = data;
	size_t i = 0;

	*used = 0;
	if (ck->state == MGW_CK_FAILED)
		return ck->err;
	while (i < len && ck->state != MGW_CK_DONE) {
		unsigned char ch = p[i];
		int h;

		switch (ck->state) {
		case MGW_CK_SIZE:
			h = hexval(ch);
			if (h >= 0) {
				if (++ck->digits > MGW_CHUNKED_MAX_DIGITS)
					goto too_big;
				ck->left = ck->left * 16 + (uint64_t)h;
				break;
			}
			if (ck->digits == 0)
				goto bad_size; /* blank, sign, "x", CR... first */
			if (ch == ' ' || ch == '\t') {
				ck->state = MGW_CK_SIZE_WS;
				ck->line = 1;
			} else if (ch == ';') {
				ck->state = MGW_CK_EXT;
				ck->line = 1;
			} else if (ch == '\r') {
				ck->state = MGW_CK_SIZE_LF;
			} else {
				goto bad_size;
			}
			break;
		case MGW_CK_SIZE_WS:
			/* blanks are only allowed before an extension */
			if (ch == ';')
				ck->state = MGW_CK_EXT;
			else if (ch != ' ' && ch != '\t')
				goto bad_size;
			if (++ck->line > MGW_CHUNKED_MAX_EXT)
				goto bad_ext;
			break;
		case MGW_CK_EXT:
			if (ch == '\r') {
				ck->state = MGW_CK_SIZE_LF;
				break;
			}
			if (is_ctl(ch))
				goto bad_ext;
			if (++ck->line > MGW_CHUNKED_MAX_EXT)
				goto bad_ext;
			break;
		case MGW_CK_SIZE_LF:
			if (ch != '\n')
				goto bad_size;
			ck->digits = 0;
			ck->line = 0;
			ck->state = ck->left ? MGW_CK_DATA : MGW_CK_TRAILER;
			break;
		case MGW_CK_DATA: {
			size_t n = len - i;
			int rc;

			if (n > ck->left)
				n = (size_t)ck->left;
			ck->left -= n;
			if (!ck->left)
				ck->state = MGW_CK_DATA_CR;
			/* the state is final before the consumer runs: it may
			 * stop us, and the next call resumes right here */
			rc = on_data(arg, p + i, n);
			i += n;
			if (rc != 0) {
				*used = i;
				return rc < 0 ? rc : 0;
			}
			continue; /* i already advanced */
		}
		case MGW_CK_DATA_CR:
			if (ch != '\r')
				goto bad_data;
			ck->state = MGW_CK_DATA_LF;
			break;
		case MGW_CK_DATA_LF:
			if (ch != '\n')
				goto bad_data;
			ck->state = MGW_CK_SIZE;
			break;
		case MGW_CK_TRAILER:
			if (ch == '\r') {
				ck->state = MGW_CK_END_LF;
				break;
			}
			if (ch == ' ' || ch == '\t')
				goto obs_fold;
			if (!is_tchar(ch))
				goto bad_trailer;
			ck->state = MGW_CK_TRAILER_NAME;
			if (++ck->trailer_bytes > ck->max_trailer)
				goto big_trailer;
			break;
		case MGW_CK_TRAILER_NAME:
			if (ch == ':')
				ck->state = MGW_CK_TRAILER_VALUE;
			else if (!is_tchar(ch))
				goto bad_trailer;
			if (++ck->trailer_bytes > ck->max_trailer)
				goto big_trailer;
			break;
		case MGW_CK_TRAILER_VALUE:
			if (ch == '\r') {
				ck->state = MGW_CK_TRAILER_LF;
				break;
			}
			if (is_ctl(ch))
				goto bad_trailer;
			if (++ck->trailer_bytes > ck->max_trailer)
				goto big_trailer;
			break;
		case MGW_CK_TRAILER_LF:
			if (ch != '\n')
				goto bad_trailer;
			ck->state = MGW_CK_TRAILER;
			break;
		case MGW_CK_END_LF:
			if (ch != '\n')
				goto bad_trailer;
			ck->state = MGW_CK_DONE;
			break;
		case MGW_CK_DONE:
		case MGW_CK_FAILED:
			goto bad_state;
		}
		i++;
	}
	*used = i;
	return 0;
too_big:
	*used = i;
	return ck_fail(ck, MGW_EPROTO, "chunk size has too many hex digits");
bad_size:
	*used = i;
	return ck_fail(ck, MGW_EPROTO, "invalid chunk size line");
bad_ext:
	*used = i;
	return ck_fail(ck, MGW_EPROTO,
	               "invalid chunk extension (control byte or too long)");
bad_data:
	*used = i;
	return ck_fail(ck, MGW_EPROTO, "chunk data not followed by CRLF");
obs_fold:
	*used = i;
	return ck_fail(ck, MGW_EPROTO, "obs-fold in chunked trailer section");
bad_trailer:
	*used = i;
	return ck_fail(ck, MGW_EPROTO, "invalid chunked trailer section");
big_trailer:
	*used = i;
	return ck_fail(ck, MGW_ELIMIT, "chunked trailer section too large");
bad_state:
	*used = i;
	return ck_fail(ck, MGW_EPROTO, "chunked decoder in a final state");
}

int mgw_chunked_done(const struct mgw_chunked *ck)
{
	return ck->state == MGW_CK_DONE;
}

const char *mgw_chunked_error(const struct mgw_chunked *ck)
{
	return ck->msg;
}

uint64_t mgw_chunked_declared(const struct mgw_chunked *ck)
{
	switch (ck->state) {
	case MGW_CK_SIZE:    /* digits so far: the size only grows */
	case MGW_CK_SIZE_WS:
	case MGW_CK_EXT:
	case MGW_CK_SIZE_LF:
	case MGW_CK_DATA:
		return ck->left;
	default:
		return 0;
	}
}
