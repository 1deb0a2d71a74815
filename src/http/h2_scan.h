/* h2_scan.h - a light scan of the HTTP/2 frames a client sends, in front
 * of nghttp2 (server side), for what nghttp2 cannot be told to do:
 *
 * - refuse streams over our SETTINGS_MAX_CONCURRENT_STREAMS one by one.
 *   nghttp2 answers a stream over the limit with RST_STREAM
 *   (REFUSED_STREAM) only while our SETTINGS are unacknowledged; once the
 *   client's ACK arrived it ends the whole connection (PROTOCOL_ERROR).
 *   So the client's first SETTINGS ACK is not handed to nghttp2: its
 *   session keeps our limit as "pending" and refuses per stream for good.
 *   (All we announce is that limit and MAX_HEADER_LIST_SIZE, which
 *   nghttp2 does not enforce on received headers; h2.c does.)
 * - bound floods of frames each costing work or an answer (see
 *   MGW_H2_CALM_BURST), with GOAWAY(ENHANCE_YOUR_CALM).
 *
 * The scanner sees frame headers only; payloads pass through. */
#ifndef MGW_HTTP_H2_SCAN_H
#define MGW_HTTP_H2_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "http/h2_scan-t.h"

/* Starts a scan at the client connection preface (preface_len bytes,
 * passed through unchecked) at time now_ms. */
void mgw_h2_scan_init(struct mgw_h2_scan *s, size_t preface_len,
                      uint64_t now_ms);

/* Bytes to pass through before the next frame header is due: what is left
 * of the preface or of the current frame's payload.  0 means the next
 * MGW_H2_FRAME_HD bytes are a frame header for mgw_h2_scan_frame. */
size_t mgw_h2_scan_pending(const struct mgw_h2_scan *s);

/* Records that n bytes of mgw_h2_scan_pending() were passed through. */
void mgw_h2_scan_passed(struct mgw_h2_scan *s, size_t n);

/* Judges the frame whose 9-byte header is hd, at time now_ms.  On PASS,
 * its payload is pending next.  FLOOD is final: every later call says so
 * too, and mgw_h2_scan_flooded() becomes 1. */
enum mgw_h2_scan_verdict mgw_h2_scan_frame(struct mgw_h2_scan *s,
                                           const uint8_t *hd, uint64_t now_ms);

/* 1 once a flood was found. */
int mgw_h2_scan_flooded(const struct mgw_h2_scan *s);

#endif
