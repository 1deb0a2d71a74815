/* chunked-t.h - state of the HTTP/1.1 chunked transfer-coding decoder
 * (chunked.c), embedded by value in the server's and the client's
 * connection structs so decoding needs no allocation. */
#ifndef MGW_HTTP_CHUNKED_T_H
#define MGW_HTTP_CHUNKED_T_H

#include <stddef.h>
#include <stdint.h>

/* Longest chunk-size accepted, in hex digits: 15 digits stay below 2^60,
 * so the size can never overflow, and no real body needs more. */
#define MGW_CHUNKED_MAX_DIGITS 15
/* Longest chunk extension accepted (bytes after the size, per line). */
#define MGW_CHUNKED_MAX_EXT 4096

/* Decoder states; see chunked.c for the grammar each one reads. */
enum mgw_chunked_state {
	MGW_CK_SIZE = 0,     /* hex digits of the chunk size */
	MGW_CK_SIZE_WS,      /* blanks after the size (BWS before ';') */
	MGW_CK_EXT,          /* chunk extension, up to CR */
	MGW_CK_SIZE_LF,      /* LF ending the size line */
	MGW_CK_DATA,         /* chunk data */
	MGW_CK_DATA_CR,      /* CR after chunk data */
	MGW_CK_DATA_LF,      /* LF after chunk data */
	MGW_CK_TRAILER,      /* start of a trailer line, or the final CRLF */
	MGW_CK_TRAILER_NAME, /* field name of a trailer line, up to ':' */
	MGW_CK_TRAILER_VALUE,/* rest of a trailer line, up to CR */
	MGW_CK_TRAILER_LF,   /* LF ending a trailer line */
	MGW_CK_END_LF,       /* LF of the final empty line */
	MGW_CK_DONE,         /* body complete; later bytes are not ours */
	MGW_CK_FAILED,       /* a framing error was reported */
};

struct mgw_chunked {
	enum mgw_chunked_state state;
	uint64_t left;           /* data bytes left in the current chunk */
	unsigned digits;         /* hex digits read of the current size */
	size_t line;             /* bytes of the current extension */
	size_t trailer_bytes;    /* trailer section bytes so far */
	size_t max_trailer;      /* limit for trailer_bytes */
	int err;                 /* MGW_EPROTO / MGW_ELIMIT once FAILED */
	const char *msg;         /* static text of that error, or NULL */
};

#endif
