/* ratelimit_test.c - unit tests for the token bucket (src/util/
 * tbucket.c), the rate-limit table (src/proxy/ratelimit.c: buckets by
 * limit and key, eviction, counters) and the per-client connection table
 * (src/http/connlim.c), all on a given clock.  The answers (429,
 * Retry-After, the JSON-RPC error) are covered by
 * tests/integration/serve_ratelimit.sh. */
#include "autoconf.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "http/connlim.h"
#include "proxy/ratelimit.h"
#include "util/tbucket.h"

#define S 1000000000ULL /* one second in ns */

/* A new bucket is full: burst events pass at once, the next waits
 * 1/rate seconds. */
static void test_burst(void **state)
{
	struct mgw_tbucket b;
	double wait = -1;

	(void)state;
	mgw_tbucket_init(&b, 5, 100 * S);
	for (int i = 0; i < 5; i++)
		assert_true(mgw_tbucket_take(&b, 2, 5, 100 * S, &wait));
	assert_false(mgw_tbucket_take(&b, 2, 5, 100 * S, &wait));
	assert_true(wait > 0.49 && wait < 0.51);
	/* refused takes take nothing: still half a second to go */
	assert_false(mgw_tbucket_take(&b, 2, 5, 100 * S, &wait));
	assert_true(wait > 0.49 && wait < 0.51);
}

/* Tokens come back at rate per second, never past burst; a clock that
 * goes back adds none. */
static void test_refill(void **state)
{
	struct mgw_tbucket b;
	double wait;

	(void)state;
	mgw_tbucket_init(&b, 3, 10 * S);
	for (int i = 0; i < 3; i++)
		assert_true(mgw_tbucket_take(&b, 4, 3, 10 * S, NULL));
	assert_false(mgw_tbucket_take(&b, 4, 3, 10 * S, &wait));
	/* 0.25 s: one token */
	assert_true(mgw_tbucket_take(&b, 4, 3, 10 * S + S / 4, NULL));
	assert_false(mgw_tbucket_take(&b, 4, 3, 10 * S + S / 4, NULL));
	/* backwards: nothing */
	assert_false(mgw_tbucket_take(&b, 4, 3, 10 * S, NULL));
	/* an hour later: full (3), not 14400 */
	assert_false(mgw_tbucket_full(&b, 4, 3, 10 * S + S / 2));
	assert_true(mgw_tbucket_full(&b, 4, 3, 3610 * S));
	for (int i = 0; i < 3; i++)
		assert_true(mgw_tbucket_take(&b, 4, 3, 3610 * S, NULL));
	assert_false(mgw_tbucket_take(&b, 4, 3, 3610 * S, NULL));
	/* a fractional rate: one token per 10 s */
	mgw_tbucket_init(&b, 1, 0);
	assert_true(mgw_tbucket_take(&b, 0.1, 1, 0, NULL));
	assert_false(mgw_tbucket_take(&b, 0.1, 1, 9 * S, &wait));
	assert_true(wait > 0.99 && wait < 1.01);
	assert_true(mgw_tbucket_take(&b, 0.1, 1, 10 * S, NULL));
}

/* Retry-After: whole seconds rounded up, at least 1. */
static void test_retry_after(void **state)
{
	(void)state;
	assert_int_equal(mgw_tbucket_retry_after(0), 1);
	assert_int_equal(mgw_tbucket_retry_after(-3), 1);
	assert_int_equal(mgw_tbucket_retry_after(0.001), 1);
	assert_int_equal(mgw_tbucket_retry_after(0.999), 1);
	assert_int_equal(mgw_tbucket_retry_after(1.0), 1);
	assert_int_equal(mgw_tbucket_retry_after(1.0000001), 2);
	assert_int_equal(mgw_tbucket_retry_after(9.5), 10);
	assert_int_equal(mgw_tbucket_retry_after(1e12), 86400);
}

/* Buckets are per (limit id, key): another key or another limit has
 * its own. */
static void test_table_keys(void **state)
{
	struct mgw_rl_table *t = mgw_rl_table_new(1000, 42);
	double wait = 0;

	(void)state;
	assert_non_null(t);
	for (int i = 0; i < 2; i++)
		assert_true(mgw_rl_take(t, 1, "c:a", 3, 1, 2, 5 * S, NULL));
	assert_false(mgw_rl_take(t, 1, "c:a", 3, 1, 2, 5 * S, &wait));
	assert_int_equal(mgw_tbucket_retry_after(wait), 1);
	assert_true(mgw_rl_take(t, 1, "c:b", 3, 1, 2, 5 * S, NULL));
	assert_true(mgw_rl_take(t, 2, "c:a", 3, 1, 2, 5 * S, NULL));
	/* a prefix is another key */
	assert_true(mgw_rl_take(t, 1, "c:", 2, 1, 2, 5 * S, NULL));
	assert_int_equal(mgw_rl_table_size(t), 4);
	/* refill after a second */
	assert_true(mgw_rl_take(t, 1, "c:a", 3, 1, 2, 6 * S, NULL));
	assert_false(mgw_rl_take(t, 1, "c:a", 3, 1, 2, 6 * S, NULL));
	assert_int_equal(mgw_rl_table_evictions(t), 0);
	mgw_rl_table_free(t);
}

/* Keys over the stored length stay apart by their hash. */
static void test_table_long_keys(void **state)
{
	struct mgw_rl_table *t = mgw_rl_table_new(1000, 7);
	char a[600], b[600];

	(void)state;
	memset(a, 'x', sizeof(a));
	memcpy(b, a, sizeof(b));
	b[sizeof(b) - 1] = 'y';
	assert_true(mgw_rl_take(t, 1, a, sizeof(a), 1, 1, 0, NULL));
	assert_false(mgw_rl_take(t, 1, a, sizeof(a), 1, 1, 0, NULL));
	assert_true(mgw_rl_take(t, 1, b, sizeof(b), 1, 1, 0, NULL));
	assert_int_equal(mgw_rl_table_size(t), 2);
	mgw_rl_table_free(t);
}

/* Bounded: more keys than max_keys evict the least recently used; an
 * evicted key starts again full, a recently used one keeps its count. */
static void test_table_eviction(void **state)
{
	/* 32 stripes: max_keys 32 is one bucket per stripe */
	struct mgw_rl_table *t = mgw_rl_table_new(32, 1);
	char k[32];

	(void)state;
	assert_true(mgw_rl_take(t, 9, "hot", 3, 1, 1, 0, NULL));
	for (int i = 0; i < 2000; i++) {
		int n = snprintf(k, sizeof(k), "k%d", i);

		assert_true(mgw_rl_take(t, 9, k, (size_t)n, 1, 1, 0, NULL));
	}
	assert_true(mgw_rl_table_size(t) <= 32);
	assert_true(mgw_rl_table_evictions(t) >= 2000 - 32);
	/* "hot" was forgotten: it passes again (a full bucket) */
	assert_true(mgw_rl_take(t, 9, "hot", 3, 1, 1, 0, NULL));
	assert_false(mgw_rl_take(t, 9, "hot", 3, 1, 1, 0, NULL));
	mgw_rl_table_free(t);
}

/* Counters by route (capped) and kind. */
static void test_counters(void **state)
{
	struct mgw_rl_table *t = mgw_rl_table_new(100, 1);

	(void)state;
	mgw_rl_count_limited(t, 0, MGW_RL_KEY_CLIENT);
	mgw_rl_count_limited(t, 0, MGW_RL_KEY_CLIENT);
	mgw_rl_count_limited(t, 3, MGW_RL_KEY_TOOL);
	mgw_rl_count_limited(t, 1000, MGW_RL_KEY_METHOD);
	mgw_rl_count_fallback(t);
	assert_int_equal(mgw_rl_limited(t, 0, MGW_RL_KEY_CLIENT), 2);
	assert_int_equal(mgw_rl_limited(t, 0, MGW_RL_KEY_TOOL), 0);
	assert_int_equal(mgw_rl_limited(t, 3, MGW_RL_KEY_TOOL), 1);
	assert_int_equal(mgw_rl_limited(t, MGW_RL_COUNTED_ROUTES,
	                                MGW_RL_KEY_METHOD), 1);
	assert_int_equal(mgw_rl_fallbacks(t), 1);
	assert_string_equal(mgw_rl_key_name(MGW_RL_KEY_PRINCIPAL), "principal");
	mgw_rl_table_free(t);
}

/* A limit's id changes with its rate, burst, key and the route's match,
 * not with what the limit does not depend on. */
static void test_limit_id(void **state)
{
	struct mgw_route_conf a = {0}, b;
	char up[] = "mcp", m[] = "tools/call";

	(void)state;
	a.upstream = up;
	a.match_mcp_method = m;
	a.has_rate_limit = 1;
	a.rate_limit.rate = 10;
	a.rate_limit.burst = 20;
	b = a;
	b.retries = 5;
	assert_true(mgw_rl_limit_id(&a) == mgw_rl_limit_id(&b));
	b.rate_limit.rate = 11;
	assert_true(mgw_rl_limit_id(&a) != mgw_rl_limit_id(&b));
	b = a;
	b.rate_limit.key = MGW_RL_KEY_TOOL;
	assert_true(mgw_rl_limit_id(&a) != mgw_rl_limit_id(&b));
	b = a;
	b.match_mcp_method = NULL;
	assert_true(mgw_rl_limit_id(&a) != mgw_rl_limit_id(&b));
}

static void sa4(struct sockaddr_in *s, const char *ip)
{
	memset(s, 0, sizeof(*s));
	s->sin_family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, ip, &s->sin_addr), 1);
}

/* Open connections per address: the one past the limit is refused, a
 * closed one makes room, another address is not affected; an
 * IPv4-mapped IPv6 address counts as its IPv4 one. */
static void test_connlim_concurrent(void **state)
{
	struct mgw_http_connlim *cl = mgw_http_connlim_new(2, 0, 5);
	struct mgw_connlim_ticket tk[4];
	struct sockaddr_in a, b;
	struct sockaddr_in6 m;

	(void)state;
	sa4(&a, "10.0.0.1");
	sa4(&b, "10.0.0.2");
	memset(&m, 0, sizeof(m));
	m.sin6_family = AF_INET6;
	assert_int_equal(inet_pton(AF_INET6, "::ffff:10.0.0.1", &m.sin6_addr), 1);
	assert_int_equal(mgw_http_connlim_enter(cl, (struct sockaddr *)&a, 0,
	                                        &tk[0]), MGW_CONNLIM_OK);
	assert_int_equal(mgw_http_connlim_enter(cl, (struct sockaddr *)&m, 0,
	                                        &tk[1]), MGW_CONNLIM_OK);
	assert_int_equal(mgw_http_connlim_enter(cl, (struct sockaddr *)&a, 0,
	                                        &tk[2]), MGW_CONNLIM_CONCURRENT);
	assert_int_equal(tk[2].len, 0);
	assert_int_equal(mgw_http_connlim_enter(cl, (struct sockaddr *)&b, 0,
	                                        &tk[3]), MGW_CONNLIM_OK);
	assert_int_equal(mgw_http_connlim_open(cl, (struct sockaddr *)&a), 2);
	mgw_http_connlim_leave(cl, &tk[0]);
	mgw_http_connlim_leave(cl, &tk[0]); /* twice: nothing more */
	assert_int_equal(mgw_http_connlim_open(cl, (struct sockaddr *)&a), 1);
	assert_int_equal(mgw_http_connlim_enter(cl, (struct sockaddr *)&a, 0,
	                                        &tk[0]), MGW_CONNLIM_OK);
	for (int i = 0; i < 4; i++)
		mgw_http_connlim_leave(cl, &tk[i]);
	assert_int_equal(mgw_http_connlim_open(cl, (struct sockaddr *)&a), 0);
	mgw_http_connlim_free(cl);
}

/* New connections per second per address: per_second at once, then
 * one per 1/per_second seconds. */
static void test_connlim_rate(void **state)
{
	struct mgw_http_connlim *cl = mgw_http_connlim_new(0, 3, 5);
	struct mgw_connlim_ticket tk;
	struct sockaddr_in a, b;

	(void)state;
	sa4(&a, "192.0.2.7");
	sa4(&b, "192.0.2.8");
	for (int i = 0; i < 3; i++) {
		assert_int_equal(mgw_http_connlim_enter(cl, (struct sockaddr *)&a,
		                                        S, &tk), MGW_CONNLIM_OK);
		mgw_http_connlim_leave(cl, &tk);
	}
	/* closing does not give the token back */
	assert_int_equal(mgw_http_connlim_enter(cl, (struct sockaddr *)&a, S,
	                                        &tk), MGW_CONNLIM_RATE);
	assert_int_equal(mgw_http_connlim_enter(cl, (struct sockaddr *)&b, S,
	                                        &tk), MGW_CONNLIM_OK);
	mgw_http_connlim_leave(cl, &tk);
	assert_int_equal(mgw_http_connlim_enter(cl, (struct sockaddr *)&a,
	                                        S + S / 3 + 1000, &tk),
	                 MGW_CONNLIM_OK);
	mgw_http_connlim_leave(cl, &tk);
	mgw_http_connlim_free(cl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_burst),
		cmocka_unit_test(test_refill),
		cmocka_unit_test(test_retry_after),
		cmocka_unit_test(test_table_keys),
		cmocka_unit_test(test_table_long_keys),
		cmocka_unit_test(test_table_eviction),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_limit_id),
		cmocka_unit_test(test_connlim_concurrent),
		cmocka_unit_test(test_connlim_rate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
