/* h2_scan-t.h - state of the HTTP/2 inbound frame scanner (h2_scan.c),
 * embedded by value in the server's connection struct. */
#ifndef MGW_HTTP_H2_SCAN_T_H
#define MGW_HTTP_H2_SCAN_T_H

#include <stddef.h>
#include <stdint.h>

/* Frames that cost the server work but carry no request ("calm" frames:
 * SETTINGS and PING without ACK, RST_STREAM, PRIORITY, empty DATA without
 * END_STREAM, empty CONTINUATION without END_HEADERS) take a token from a
 * per-connection bucket of this many, refilled at this rate per second.
 * An empty bucket is a flood: GOAWAY(ENHANCE_YOUR_CALM). */
#define MGW_H2_CALM_BURST 400
#define MGW_H2_CALM_RATE 40

/* The 9-byte frame header. */
#define MGW_H2_FRAME_HD 9

struct mgw_h2_scan {
	size_t preface_left;   /* client preface bytes not yet passed on */
	size_t payload_left;   /* payload bytes of the current frame not
	                        * yet passed on */
	uint64_t calm_milli;   /* bucket content, in thousandths of a token */
	uint64_t calm_ms;      /* when it was last refilled */
	unsigned acked : 1;    /* the client acknowledged our SETTINGS */
	unsigned flooded : 1;  /* a flood was found: every later frame is one */
};

/* What to do with a frame whose header was scanned. */
enum mgw_h2_scan_verdict {
	MGW_H2S_PASS = 0,  /* hand header and payload to nghttp2 */
	MGW_H2S_DROP,      /* skip the 9 header bytes (no payload) */
	MGW_H2S_FLOOD,     /* the client floods: end the connection */
};

#endif
