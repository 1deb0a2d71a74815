/* h2_scan.c - HTTP/2 inbound frame scanner; see h2_scan.h for why. */
#include "autoconf.h"

#include "http/h2_scan.h"

/* Frame types and flags (RFC 9113 §6). */
#define T_DATA 0x0
#define T_PRIORITY 0x2
#define T_RST_STREAM 0x3
#define T_SETTINGS 0x4
#define T_PING 0x6
#define T_CONTINUATION 0x9
#define F_ACK 0x1
#define F_END_STREAM 0x1
#define F_END_HEADERS 0x4

#define CALM_FULL ((uint64_t)MGW_H2_CALM_BURST * 1000)

void mgw_h2_scan_init(struct mgw_h2_scan *s, size_t preface_len,
                      uint64_t now_ms)
{
	s->preface_left = preface_len;
	s->payload_left = 0;
	s->calm_milli = CALM_FULL;
	s->calm_ms = now_ms;
	s->acked = 0;
	s->flooded = 0;
}

size_t mgw_h2_scan_pending(const struct mgw_h2_scan *s)
{
	return s->preface_left ? s->preface_left : s->payload_left;
}

void mgw_h2_scan_passed(struct mgw_h2_scan *s, size_t n)
{
	if (s->preface_left)
		s->preface_left -= n < s->preface_left ? n : s->preface_left;
	else
		s->payload_left -= n < s->payload_left ? n : s->payload_left;
}

/* Takes one token; 0 once the bucket is empty. */
static int calm_take(struct mgw_h2_scan *s, uint64_t now_ms)
{
	if (now_ms > s->calm_ms) {
		uint64_t add = (now_ms - s->calm_ms) * MGW_H2_CALM_RATE;
		s->calm_milli = add >= CALM_FULL - s->calm_milli ? CALM_FULL
		                                                 : s->calm_milli + add;
		s->calm_ms = now_ms;
	}
	if (s->calm_milli < 1000)
		return 0;
	s->calm_milli -= 1000;
	return 1;
}

enum mgw_h2_scan_verdict mgw_h2_scan_frame(struct mgw_h2_scan *s,
                                           const uint8_t *hd, uint64_t now_ms)
{
	uint32_t len = (uint32_t)hd[0] << 16 | (uint32_t)hd[1] << 8 | hd[2];
	uint8_t type = hd[3], flags = hd[4];
	uint32_t sid = ((uint32_t)(hd[5] & 0x7f) << 24) | (uint32_t)hd[6] << 16 |
	               (uint32_t)hd[7] << 8 | hd[8];
	int calm = 0;

	if (s->flooded)
		return MGW_H2S_FLOOD;
	switch (type) {
	case T_SETTINGS:
		if (flags & F_ACK) {
			/* the one well-formed ACK of our one SETTINGS; anything
			 * else is nghttp2's to judge */
			if (!s->acked && len == 0 && sid == 0) {
				s->acked = 1;
				return MGW_H2S_DROP;
			}
		} else {
			calm = 1;
		}
		break;
	case T_PING:
		calm = !(flags & F_ACK);
		break;
	case T_RST_STREAM:
	case T_PRIORITY:
		calm = 1;
		break;
	case T_DATA:
		calm = len == 0 && !(flags & F_END_STREAM);
		break;
	case T_CONTINUATION:
		calm = len == 0 && !(flags & F_END_HEADERS);
		break;
	default:
		break;
	}
	if (calm && !calm_take(s, now_ms)) {
		s->flooded = 1;
		return MGW_H2S_FLOOD;
	}
	s->payload_left = len;
	return MGW_H2S_PASS;
}

int mgw_h2_scan_flooded(const struct mgw_h2_scan *s)
{
	return s->flooded;
}
