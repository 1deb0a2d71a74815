/* jsonw.h - a bounded writer of one flat JSON object into a caller's
 * buffer, for log lines: no allocation, and whatever the values hold the
 * result is one line of valid JSON that fits the buffer.
 *
 * Strings are escaped ('"', '\\', every control byte and DEL; U+2028 and
 * U+2029 as \u escapes), valid UTF-8 is copied as is and every byte that
 * is not part of a valid UTF-8 sequence (overlong forms, surrogates, code
 * points above U+10FFFF, a cut sequence) becomes U+FFFD.  A string longer
 * than its bound, or one that does not fit what is left of the buffer, is
 * cut on a character boundary; a member that does not fit at all is left
 * out.  Either way mgw_jsonw_cut() tells.  Keys are the caller's literals
 * and are written unescaped. */
#ifndef MGW_UTIL_JSONW_H
#define MGW_UTIL_JSONW_H

#include <stddef.h>
#include <stdint.h>

struct mgw_jsonw {
	char *buf;
	size_t cap;   /* size of buf */
	size_t len;   /* bytes written (without the NUL) */
	int members;  /* members written so far */
	int cut;      /* a value was cut or a member left out */
};

/* Starts an object ("{") in buf of cap bytes (at least 3: "{}" and the
 * NUL). */
void mgw_jsonw_init(struct mgw_jsonw *w, char *buf, size_t cap);

/* "key": the first bytes of s (len bytes; at most max of them), escaped.
 * s NULL writes null. */
void mgw_jsonw_str(struct mgw_jsonw *w, const char *key, const char *s,
                   size_t len, size_t max);
/* The same for a NUL-terminated s (NULL writes null). */
void mgw_jsonw_cstr(struct mgw_jsonw *w, const char *key, const char *s,
                    size_t max);
void mgw_jsonw_int(struct mgw_jsonw *w, const char *key, long long v);
void mgw_jsonw_uint(struct mgw_jsonw *w, const char *key, unsigned long long v);
/* A number with decimals digits after the point (0..9), rounded; NaN,
 * the infinities (which JSON cannot express) and magnitudes of 1e9 or
 * more write null. */
void mgw_jsonw_fixed(struct mgw_jsonw *w, const char *key, double v,
                     int decimals);
void mgw_jsonw_bool(struct mgw_jsonw *w, const char *key, int v);

/* 1 when a value was cut or a member left out. */
int mgw_jsonw_cut(const struct mgw_jsonw *w);

/* Closes the object ("}", NUL-terminated); returns its length. */
size_t mgw_jsonw_end(struct mgw_jsonw *w);

#endif
