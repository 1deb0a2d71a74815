/* conf_sessions_test.c - unit tests for the stateful-mode sections,
 * loaded through the whole schema (src/conf/config.c): "sessions:"
 * (src/session/conf_sessions.c: defaults, every key, the sealed store's
 * smaller initialize limit and its cap, lost-session statuses, redis.tls
 * only with a rediss:// URL) and the
 * routes' replay / session_store keys (src/proxy/conf_routes.c), with
 * their exact FILE:LINE:COLUMN messages; and the shipped
 * conf/serve-stateful.yaml. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "conf/config.h"
#include "core/errors.h"

static char err[1024];

#define UP1 "upstreams:\n  - name: a\n    servers:\n      - url: http://127.0.0.1:9001\n"

static struct mgw_config *load(const char *text)
{
	err[0] = '\0';
	return mgw_config_load_string("t.yaml", text, strlen(text), err,
	                              sizeof(err));
}

static struct mgw_config *load_ok(const char *text)
{
	struct mgw_config *c = load(text);

	if (!c)
		fail_msg("unexpected error: %s", err);
	return c;
}

static void expect_error(const char *text, const char *msg)
{
	struct mgw_config *c = load(text);

	if (c) {
		mgw_config_free(c);
		fail_msg("accepted: %s", text);
	}
	if (strcmp(err, msg) != 0)
		fail_msg("for:\n%s\nexpected: %s\n     got: %s", text, msg, err);
}

static void assert_sessions_default(const struct mgw_sessions_conf *s)
{
	assert_int_equal(s->store, MGW_SESSION_STORE_MEMORY);
	assert_true(s->idle_timeout == 1800.0);
	assert_true(s->max_lifetime == 86400.0);
	assert_int_equal(s->max_sessions, 100000);
	assert_int_equal(s->max_memory, 256u << 20);
	assert_int_equal(s->max_initialize_bytes, 64 * 1024);
	assert_null(s->key_file);
	assert_int_equal(s->bind_principal, 0);
	assert_int_equal(s->max_repin_attempts, 2);
	assert_string_equal(s->redis.url, "redis://127.0.0.1:6379");
	assert_int_equal(s->redis.cache_size, 10000);
	assert_true(s->redis.cache_ttl == 30.0);
	assert_true(s->redis.timeout == 1.0);
	assert_string_equal(s->redis.key_prefix, "mcpgw:session:");
	assert_int_equal(s->redis.writeback_rate, 2000);
	assert_string_equal(s->lost_session.statuses, "404,400");
	assert_int_equal(s->lost_session.n_status, 2);
	assert_int_equal(s->lost_session.status[0], 404);
	assert_int_equal(s->lost_session.status[1], 400);
	assert_string_equal(s->lost_session.body_contains, "session");
	assert_int_equal(s->sealed.tombstones, MGW_TOMBSTONES_LOCAL);
	assert_int_equal(s->sealed.on_redis_error, MGW_TOMBSTONE_SERVE);
}

/* sessions.sealed: where a DELETE's tombstone lives, and what Redis
 * being away means. */
static void test_sealed_tombstones(void **state)
{
	struct mgw_config *c;

	(void)state;
	c = load_ok(UP1 "sessions:\n  store: sealed\n  sealed:\n"
	            "    tombstones: redis\n    on_redis_error: refuse\n");
	assert_int_equal(c->serve.sessions.sealed.tombstones, MGW_TOMBSTONES_REDIS);
	assert_int_equal(c->serve.sessions.sealed.on_redis_error,
	                 MGW_TOMBSTONE_REFUSE);
	mgw_config_free(c);
	c = load_ok(UP1 "sessions:\n  sealed: {}\n");
	assert_sessions_default(&c->serve.sessions);
	mgw_config_free(c);
	expect_error(UP1 "sessions:\n  sealed:\n    tombstones: memcached\n",
	             "t.yaml:7:17: sessions.sealed.tombstones: 'memcached' is "
	             "not one of: local, redis");
	expect_error(UP1 "sessions:\n  sealed:\n    on_redis_error: retry\n",
	             "t.yaml:7:21: sessions.sealed.on_redis_error: 'retry' is "
	             "not one of: serve, refuse");
}

static void test_defaults(void **state)
{
	struct mgw_config *c;

	(void)state;
	c = mgw_config_defaults();
	assert_sessions_default(&c->serve.sessions);
	mgw_config_free(c);
	/* An empty section and a file without it mean the same. */
	c = load_ok(UP1 "sessions:\n");
	assert_sessions_default(&c->serve.sessions);
	assert_int_equal(c->serve.routes[0].replay, MGW_REPLAY_SAFE);
	assert_int_equal(c->serve.routes[0].session_store,
	                 MGW_SESSION_STORE_DEFAULT);
	mgw_config_free(c);
	c = load_ok(UP1 "sessions:\n  lost_session: {}\n  redis: {}\n");
	assert_sessions_default(&c->serve.sessions);
	mgw_config_free(c);
}

static void test_every_key(void **state)
{
	struct mgw_config *c;
	const struct mgw_sessions_conf *s;
	char text[2048], keys[] = "/tmp/conf_sessions_test.XXXXXX";
	int fd = mkstemp(keys);
	static const char line[] =
		"k1 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n";

	(void)state;
	/* key files are read as key files at load: a real one */
	assert_true(fd >= 0);
	assert_int_equal(write(fd, line, sizeof(line) - 1), (ssize_t)(sizeof(line) - 1));
	close(fd);
	snprintf(text, sizeof(text), UP1
	         "mode: stateful\n"
	         "sessions:\n"
	         "  store: redis\n"
	         "  idle_timeout: 10m\n"
	         "  max_lifetime: 2h\n"
	         "  max_sessions: 5000\n"
	         "  max_memory: 32MiB\n"
	         "  max_initialize_bytes: 16KiB\n"
	         "  key_file: %s\n"
	         "  bind_principal: true\n"
	         "  max_repin_attempts: 3\n"
	         "  redis:\n"
	         "    url: redis://10.0.0.1:6380/2\n"
	         "    cache_size: 50\n"
	         "    cache_ttl: 5s\n"
	         "    timeout: 250ms\n"
	         "    key_prefix: \"gw1:s:\"\n"
	         "    writeback_rate: 50\n"
	         "    sentinels: [\"10.0.0.2:26379\", \"[::1]:26380\"]\n"
	         "    master_name: mymaster\n"
	         "  lost_session:\n"
	         "    statuses: 404, 400 ,410\n"
	         "    body_contains: not found\n"
	         "routes:\n"
	         "  - upstream: a\n"
	         "    replay: always\n"
	         "    session_store: sealed\n"
	         "  - upstream: a\n"
	         "    session_store: default\n",
	         keys);
	c = load_ok(text);
	unlink(keys);
	s = &c->serve.sessions;
	assert_int_equal(c->serve.mode, MGW_MODE_STATEFUL);
	assert_int_equal(s->store, MGW_SESSION_STORE_REDIS);
	assert_true(s->idle_timeout == 600.0);
	assert_true(s->max_lifetime == 7200.0);
	assert_int_equal(s->max_sessions, 5000);
	assert_int_equal(s->max_memory, 32u << 20);
	assert_int_equal(s->max_initialize_bytes, 16384);
	assert_string_equal(s->key_file, keys);
	assert_int_equal(s->bind_principal, 1);
	assert_int_equal(s->max_repin_attempts, 3);
	assert_string_equal(s->redis.url, "redis://10.0.0.1:6380/2");
	assert_int_equal(s->redis.cache_size, 50);
	assert_true(s->redis.cache_ttl == 5.0);
	assert_true(s->redis.timeout == 0.25);
	assert_string_equal(s->redis.key_prefix, "gw1:s:");
	assert_int_equal(s->redis.writeback_rate, 50);
	assert_int_equal(s->redis.n_sentinels, 2);
	assert_string_equal(s->redis.sentinels[1], "[::1]:26380");
	assert_string_equal(s->redis.master_name, "mymaster");
	assert_int_equal(s->lost_session.n_status, 3);
	assert_int_equal(s->lost_session.status[2], 410);
	assert_string_equal(s->lost_session.body_contains, "not found");
	assert_int_equal(c->serve.routes[0].replay, MGW_REPLAY_ALWAYS);
	assert_int_equal(c->serve.routes[0].session_store,
	                 MGW_SESSION_STORE_SEALED);
	assert_int_equal(c->serve.routes[1].replay, MGW_REPLAY_SAFE);
	assert_int_equal(c->serve.routes[1].session_store,
	                 MGW_SESSION_STORE_DEFAULT);
	mgw_config_free(c);

	/* Any body counts when body_contains is empty. */
	c = load_ok(UP1 "sessions:\n  lost_session:\n    body_contains: \"\"\n");
	assert_string_equal(c->serve.sessions.lost_session.body_contains, "");
	mgw_config_free(c);
}

static void test_sealed_initialize_limit(void **state)
{
	struct mgw_config *c;

	(void)state;
	/* The token rides in a header: 8 KiB unless said otherwise. */
	c = load_ok(UP1 "sessions:\n  store: sealed\n");
	assert_int_equal(c->serve.sessions.max_initialize_bytes, 8192);
	mgw_config_free(c);
	c = load_ok(UP1 "sessions:\n  store: sealed\n"
	            "  max_initialize_bytes: 2KiB\n");
	assert_int_equal(c->serve.sessions.max_initialize_bytes, 2048);
	mgw_config_free(c);
	c = load_ok(UP1 "sessions:\n  store: sealed\n"
	            "  max_initialize_bytes: 16KiB\n");
	assert_int_equal(c->serve.sessions.max_initialize_bytes, 16384);
	mgw_config_free(c);
	expect_error(UP1 "sessions:\n  store: sealed\n"
	             "  max_initialize_bytes: 17KiB\n",
	             "t.yaml:7:25: sessions.max_initialize_bytes: at most "
	             "16384 bytes with the sealed store (the token carries the "
	             "initialize body in a request header)");
}

static void test_errors(void **state)
{
	(void)state;
	expect_error(UP1 "sessions:\n  store: disk\n",
	             "t.yaml:6:10: sessions.store: 'disk' is not one of: "
	             "memory, sealed, redis");
	expect_error(UP1 "sessions:\n  lost_session:\n    statuses: 200\n",
	             "t.yaml:7:15: sessions.lost_session.statuses: must list 1 "
	             "to 8 different HTTP statuses 400..599, comma separated "
	             "(\"404,400\")");
	expect_error(UP1 "sessions:\n  lost_session:\n    statuses: 404,404\n",
	             "t.yaml:7:15: sessions.lost_session.statuses: must list 1 "
	             "to 8 different HTTP statuses 400..599, comma separated "
	             "(\"404,400\")");
	expect_error(UP1 "sessions:\n  lost_session:\n    statuses: 404x\n",
	             "t.yaml:7:15: sessions.lost_session.statuses: must list 1 "
	             "to 8 different HTTP statuses 400..599, comma separated "
	             "(\"404,400\")");
	expect_error(UP1 "sessions:\n  lost_session:\n    statuses: \"\"\n",
	             "t.yaml:7:15: sessions.lost_session.statuses: must list 1 "
	             "to 8 different HTTP statuses 400..599, comma separated "
	             "(\"404,400\")");
	expect_error(UP1 "sessions:\n  key_file: /nonexistent/keys\n",
	             "t.yaml:6:13: sessions.key_file: cannot read "
	             "'/nonexistent/keys': No such file or directory");
	expect_error(UP1 "sessions:\n  max_repin_attempts: 11\n",
	             "t.yaml:6:23: sessions.max_repin_attempts: out of range: "
	             "must be between 0 and 10");
	expect_error(UP1 "sessions:\n  redis:\n    url: http://x\n",
	             "t.yaml:7:10: sessions.redis.url: redis URL must be "
	             "redis://HOST[:PORT][/DB], rediss://HOST[:PORT][/DB] or "
	             "unix:PATH: http://x");
	/* redis.tls: a client certificate needs its key (the check builds
	 * the TLS context a rediss:// connection would) */
	expect_error(UP1 "sessions:\n  redis:\n    tls:\n      cert_file: "
	             "/etc/hostname\n",
	             "t.yaml:8:7: sessions.redis.tls: a client certificate needs "
	             "both cert_file and key_file");
	/* tls: with a URL that is not rediss:// would be unused: refused,
	 * the URL shown without its password */
	expect_error(UP1 "sessions:\n  redis:\n    tls: {verify: false}\n",
	             "t.yaml:7:10: sessions.redis.tls: url "
	             "'redis://127.0.0.1:6379' is plain redis://, so tls: would "
	             "not be used; use a rediss:// URL for TLS (or remove tls:)");
	expect_error(UP1 "sessions:\n  redis:\n    url: redis://u:pw@h:1\n"
	             "    tls: {verify: false}\n",
	             "t.yaml:8:10: sessions.redis.tls: url 'redis://h:1' is "
	             "plain redis://, so tls: would not be used; use a rediss:// "
	             "URL for TLS (or remove tls:)");
	expect_error(UP1 "sessions:\n  redis:\n    url: unix:/r.sock\n"
	             "    tls: {verify: false}\n",
	             "t.yaml:8:10: sessions.redis.tls: url 'unix:/r.sock' is a "
	             "Unix socket, so tls: would not be used; use a rediss:// "
	             "URL for TLS (or remove tls:)");
	/* the connection's own parser: what serve would refuse at start */
	expect_error(UP1 "sessions:\n  redis:\n    url: redis://h:99999\n",
	             "t.yaml:7:10: sessions.redis.url: redis URL has a bad host "
	             "or port: redis://h:99999");
	expect_error(UP1 "sessions:\n  redis:\n    key_prefix: \"a b\"\n",
	             "t.yaml:7:17: sessions.redis.key_prefix: must be visible "
	             "ASCII without spaces");
	expect_error(UP1 "sessions:\n  redis:\n    writeback_rate: 0\n",
	             "t.yaml:7:21: sessions.redis.writeback_rate: out of range: "
	             "must be between 1 and 1000000");
	expect_error(UP1 "sessions:\n  redis:\n    sentinels: [\"127.0.0.1:1\"]\n",
	             "t.yaml:7:16: sessions.redis.sentinels: needs master_name");
	expect_error(UP1 "sessions:\n  redis:\n    master_name: m\n",
	             "t.yaml:7:18: sessions.redis.master_name: needs sentinels");
	expect_error(UP1 "sessions:\n  redis:\n    master_name: m\n"
	             "    sentinels: [\"host:26379\"]\n",
	             "t.yaml:8:17: sessions.redis.sentinels[0]: 'host:26379' "
	             "must be IP:PORT (a numeric address)");
	expect_error(UP1 "sessions:\n  stores: memory\n",
	             "t.yaml:6:3: sessions.stores: unknown key");
	expect_error(UP1 "routes:\n  - upstream: a\n    replay: never\n",
	             "t.yaml:7:13: routes[0].replay: 'never' is not one of: "
	             "safe, always");
}

/* tls: goes with a rediss:// URL (the refusals are in test_errors). */
static void test_redis_tls_url(void **state)
{
	struct mgw_config *c;

	(void)state;
	c = load(UP1 "sessions:\n  redis:\n    url: rediss://u:pw@h:1\n"
	         "    tls: {verify: false, server_name: redis.internal}\n");
	if (!c)
		fail_msg("%s", err);
	assert_int_equal(c->serve.sessions.redis.tls.verify, 0);
	assert_string_equal(c->serve.sessions.redis.tls.server_name,
	                    "redis.internal");
	mgw_config_free(c);
}

/* The shipped example loads and says what it documents. */
static void test_example(void **state)
{
	const char *d = getenv("TOP_SRCDIR");
	char path[1024];
	struct mgw_config *c;

	(void)state;
	snprintf(path, sizeof(path), "%s/conf/serve-stateful.yaml",
	         d ? d : MGW_TEST_SRCDIR);
	c = mgw_config_load(path, err, sizeof(err));
	if (!c)
		fail_msg("%s", err);
	assert_int_equal(c->serve.mode, MGW_MODE_STATEFUL);
	assert_int_equal(c->serve.sessions.store, MGW_SESSION_STORE_MEMORY);
	assert_true(c->serve.sessions.idle_timeout == 1800.0);
	assert_int_equal(c->serve.sessions.lost_session.n_status, 2);
	assert_int_equal(c->serve.routes[0].replay, MGW_REPLAY_SAFE);
	mgw_config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_every_key),
		cmocka_unit_test(test_sealed_initialize_limit),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_sealed_tombstones),
		cmocka_unit_test(test_redis_tls_url),
		cmocka_unit_test(test_example),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
