/* h1_scan-t.h - state of the strict HTTP/1 head scanner and of the header
 * field being assembled (h1_scan.c), embedded by value in the server's and
 * the client's connection structs. */
#ifndef MGW_HTTP_H1_SCAN_T_H
#define MGW_HTTP_H1_SCAN_T_H

#include <stddef.h>

/* Raw-byte scan of one message head (start line and field lines). */
struct mgw_h1_scan {
	size_t cap;              /* most bytes one head may take */
	size_t bytes;            /* bytes of this head so far */
	unsigned in_head : 1;    /* the head has not ended yet */
	unsigned cr : 1;         /* previous byte was CR */
	unsigned lf : 1;         /* at the start of a line */
	unsigned any : 1;        /* the start line has begun */
	unsigned lead_crlf : 1;  /* empty lines before the start line are
	                          * skipped (requests), not refused */
};

#endif
