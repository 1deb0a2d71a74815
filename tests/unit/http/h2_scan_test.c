/* h2_scan_test.c - the HTTP/2 frame scan in front of nghttp2
 * (src/http/h2_scan.c): preface and payloads pass through, only the first
 * well-formed SETTINGS ACK is withheld, and the flood bucket empties after
 * MGW_H2_CALM_BURST costly frames and refills with time (driven by the
 * clock the test passes, so nothing here depends on timing). */
#include "autoconf.h"

#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "http/h2_scan.h"

static void hd(uint8_t *h, uint32_t len, uint8_t type, uint8_t flags,
               uint32_t sid)
{
	h[0] = (uint8_t)(len >> 16);
	h[1] = (uint8_t)(len >> 8);
	h[2] = (uint8_t)len;
	h[3] = type;
	h[4] = flags;
	h[5] = (uint8_t)(sid >> 24);
	h[6] = (uint8_t)(sid >> 16);
	h[7] = (uint8_t)(sid >> 8);
	h[8] = (uint8_t)sid;
}

static void test_passes_payloads(void **state)
{
	struct mgw_h2_scan s;
	uint8_t h[9];

	(void)state;
	mgw_h2_scan_init(&s, 24, 0);
	assert_int_equal(mgw_h2_scan_pending(&s), 24);
	mgw_h2_scan_passed(&s, 20);
	assert_int_equal(mgw_h2_scan_pending(&s), 4);
	mgw_h2_scan_passed(&s, 4);
	assert_int_equal(mgw_h2_scan_pending(&s), 0);
	hd(h, 70000, 0x0, 0x1, 1); /* DATA with END_STREAM */
	assert_int_equal(mgw_h2_scan_frame(&s, h, 0), MGW_H2S_PASS);
	assert_int_equal(mgw_h2_scan_pending(&s), 70000);
	mgw_h2_scan_passed(&s, 69999);
	mgw_h2_scan_passed(&s, 1);
	assert_int_equal(mgw_h2_scan_pending(&s), 0);
	/* HEADERS, WINDOW_UPDATE, GOAWAY, unknown types: no token, pass */
	for (int i = 0; i < 3 * MGW_H2_CALM_BURST; i++) {
		hd(h, 4, 0x8, 0, 0);
		assert_int_equal(mgw_h2_scan_frame(&s, h, 0), MGW_H2S_PASS);
		mgw_h2_scan_passed(&s, 4);
		hd(h, 0, 0x1, 0x5, 1);
		assert_int_equal(mgw_h2_scan_frame(&s, h, 0), MGW_H2S_PASS);
	}
}

/* The first empty SETTINGS ACK on stream 0 is dropped; a second one, or a
 * malformed one, goes to nghttp2 (which judges it). */
static void test_first_ack_dropped(void **state)
{
	struct mgw_h2_scan s;
	uint8_t h[9];

	(void)state;
	mgw_h2_scan_init(&s, 0, 0);
	hd(h, 6, 0x4, 0x1, 0);      /* ACK with a payload: FRAME_SIZE_ERROR */
	assert_int_equal(mgw_h2_scan_frame(&s, h, 0), MGW_H2S_PASS);
	mgw_h2_scan_passed(&s, 6);
	hd(h, 0, 0x4, 0x1, 3);      /* on a stream: PROTOCOL_ERROR */
	assert_int_equal(mgw_h2_scan_frame(&s, h, 0), MGW_H2S_PASS);
	hd(h, 0, 0x4, 0x1, 0);
	assert_int_equal(mgw_h2_scan_frame(&s, h, 0), MGW_H2S_DROP);
	assert_int_equal(mgw_h2_scan_pending(&s), 0);
	assert_int_equal(mgw_h2_scan_frame(&s, h, 0), MGW_H2S_PASS);
}

/* Each costly kind empties the bucket after MGW_H2_CALM_BURST frames; the
 * same kinds with ACK / END_STREAM / END_HEADERS or a payload cost none. */
static void test_flood_kinds(void **state)
{
	static const struct { uint32_t len; uint8_t type, flags; } costly[] = {
		{ 8, 0x6, 0 },    /* PING */
		{ 0, 0x4, 0 },    /* SETTINGS */
		{ 6, 0x4, 0 },
		{ 4, 0x3, 0 },    /* RST_STREAM */
		{ 5, 0x2, 0 },    /* PRIORITY */
		{ 0, 0x0, 0 },    /* empty DATA */
		{ 0, 0x0, 0x8 },  /* empty DATA, PADDED flag only */
		{ 0, 0x9, 0 },    /* empty CONTINUATION */
	}, free_[] = {
		{ 8, 0x6, 0x1 },  /* PING ACK */
		{ 0, 0x0, 0x1 },  /* empty DATA with END_STREAM */
		{ 1, 0x0, 0 },    /* DATA with a byte */
		{ 0, 0x9, 0x4 },  /* empty CONTINUATION with END_HEADERS */
	};
	struct mgw_h2_scan s;
	uint8_t h[9];

	(void)state;
	for (size_t k = 0; k < sizeof(costly) / sizeof(costly[0]); k++) {
		mgw_h2_scan_init(&s, 0, 1000);
		hd(h, costly[k].len, costly[k].type, costly[k].flags, 1);
		for (int i = 0; i < MGW_H2_CALM_BURST; i++) {
			assert_int_equal(mgw_h2_scan_frame(&s, h, 1000), MGW_H2S_PASS);
			mgw_h2_scan_passed(&s, costly[k].len);
		}
		assert_int_equal(mgw_h2_scan_frame(&s, h, 1000), MGW_H2S_FLOOD);
	}
	for (size_t k = 0; k < sizeof(free_) / sizeof(free_[0]); k++) {
		mgw_h2_scan_init(&s, 0, 1000);
		hd(h, free_[k].len, free_[k].type, free_[k].flags, 1);
		for (int i = 0; i < 3 * MGW_H2_CALM_BURST; i++) {
			assert_int_equal(mgw_h2_scan_frame(&s, h, 1000), MGW_H2S_PASS);
			mgw_h2_scan_passed(&s, free_[k].len);
		}
	}
}

/* Takes n tokens with PING frames at now; each must pass. */
static void take(struct mgw_h2_scan *s, int n, uint64_t now)
{
	uint8_t h[9];

	hd(h, 8, 0x6, 0, 0);
	for (int i = 0; i < n; i++) {
		assert_int_equal(mgw_h2_scan_frame(s, h, now), MGW_H2S_PASS);
		mgw_h2_scan_passed(s, 8);
	}
}

/* MGW_H2_CALM_RATE tokens come back per second, never above the burst;
 * once a flood was found, it stays found. */
static void test_refill(void **state)
{
	struct mgw_h2_scan s;
	uint8_t h[9];
	uint64_t now = 5000;

	(void)state;
	hd(h, 8, 0x6, 0, 0);
	mgw_h2_scan_init(&s, 0, now);
	take(&s, MGW_H2_CALM_BURST, now);
	now += 1000; /* one second: MGW_H2_CALM_RATE more */
	take(&s, MGW_H2_CALM_RATE, now);
	now += 1000 / MGW_H2_CALM_RATE / 2; /* half a token */
	assert_int_equal(mgw_h2_scan_frame(&s, h, now), MGW_H2S_FLOOD);
	assert_int_equal(mgw_h2_scan_flooded(&s), 1);
	/* sticky: even a full bucket later, and for any frame */
	assert_int_equal(mgw_h2_scan_frame(&s, h, now + 1000000), MGW_H2S_FLOOD);
	hd(h, 0, 0x1, 0x5, 1);
	assert_int_equal(mgw_h2_scan_frame(&s, h, now + 1000000), MGW_H2S_FLOOD);

	/* a long pause refills to the burst, not beyond */
	hd(h, 8, 0x6, 0, 0);
	mgw_h2_scan_init(&s, 0, now);
	take(&s, MGW_H2_CALM_BURST, now);
	now += 1000000;
	take(&s, MGW_H2_CALM_BURST, now);
	assert_int_equal(mgw_h2_scan_frame(&s, h, now), MGW_H2S_FLOOD);

	/* a clock that goes back takes nothing and gives nothing */
	mgw_h2_scan_init(&s, 0, now);
	take(&s, MGW_H2_CALM_BURST, now);
	assert_int_equal(mgw_h2_scan_frame(&s, h, now - 500), MGW_H2S_FLOOD);
	assert_int_equal(mgw_h2_scan_flooded(&s), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_passes_payloads),
		cmocka_unit_test(test_first_ack_dropped),
		cmocka_unit_test(test_flood_kinds),
		cmocka_unit_test(test_refill),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
