/* sse_parse-t.h - state of the incremental Server-Sent Events parser
 * (sse_parse.c) the load client reads MCP response streams with. */
#ifndef MGW_LOAD_SSE_PARSE_T_H
#define MGW_LOAD_SSE_PARSE_T_H

#include <stddef.h>
#include <stdint.h>

/* One dispatched event.  Pointers are valid during the callback only;
 * data is NUL-terminated (data_len excludes it) and may contain NULs. */
struct mgw_sse_event {
	const char *type;     /* "event:" field, "message" when absent */
	const char *data;     /* data lines joined with LF, no final LF */
	size_t data_len;
	const char *id;       /* last event id so far ("" when none was set;
	                       * like a browser's, it survives across events) */
};

/* Called for every complete event.  Return 0 to continue; any other value
 * stops mgw_sse_feed, which returns it (use > 0 for "done"). */
typedef int (*mgw_sse_event_cb)(void *arg, const struct mgw_sse_event *ev);

struct mgw_sse_parser {
	size_t max_line;      /* longest line accepted (bytes, without EOL) */
	size_t max_event;     /* longest joined data of one event */
	char *line;           /* current line */
	size_t line_len, line_cap;
	char *data;           /* data of the event being built */
	size_t data_len, data_cap;
	int has_data;         /* a data field was seen (even an empty one) */
	char *type;           /* event type of the event being built */
	size_t type_len, type_cap;
	char *id;             /* last event id */
	size_t id_len, id_cap;
	unsigned bom;         /* bytes of a leading UTF-8 BOM matched (0..3),
	                       * 4 once the start of the stream is past */
	unsigned cr : 1;      /* last byte was CR: a following LF is part of
	                       * the same line end */
	int err;              /* sticky MGW_E* once failed */
	uint64_t events;      /* dispatched events */
	uint64_t comments;    /* comment lines (keep-alives) */
};

#endif
