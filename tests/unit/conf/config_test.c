/* config_test.c - unit tests for src/conf/config.c: the mcpgw schema
 * assembled from the modules' sections, with its common keys and
 * "backend:" (src/backend/conf_backend.c): typed values from YAML and
 * JSON, defaults, every error class with its exact FILE:LINE:COLUMN and
 * key path, the input limits, file loading, the shipped examples in
 * conf/, and the enumeration parsers used by flags. */
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
#include "http/server.h"

static char err[1024];

static struct mgw_config *load(const char *text)
{
	err[0] = '\0';
	return mgw_config_load_string("test.yaml", text, strlen(text), err,
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

	if (c)
		fail_msg("accepted: %s", text);
	assert_string_equal(err, msg);
}

static void assert_limits_default(const struct mgw_http_limits *l)
{
	struct mgw_http_limits d;

	memset(&d, 0, sizeof(d));
	mgw_http_limits_default(&d);
	assert_int_equal(l->max_header_bytes, d.max_header_bytes);
	assert_int_equal(l->max_headers, d.max_headers);
	assert_int_equal(l->max_uri, d.max_uri);
	assert_int_equal(l->max_body, d.max_body);
	assert_int_equal(l->max_streams, d.max_streams);
	assert_int_equal(l->max_connections, d.max_connections);
	assert_int_equal(l->write_high_watermark, d.write_high_watermark);
	assert_true(l->header_timeout == d.header_timeout);
	assert_true(l->body_timeout == d.body_timeout);
	assert_true(l->idle_timeout == d.idle_timeout);
	assert_true(l->write_timeout == d.write_timeout);
}

static void assert_backend_default(const struct mgw_backend_conf *b)
{
	assert_int_equal(b->era, MGW_ERA_DUAL);
	assert_int_equal(b->state, MGW_STATE_MEMORY);
	assert_string_equal(b->redis_url, "redis://127.0.0.1:6379");
	assert_null(b->key_file);
	assert_int_equal(b->sse, MGW_SSE_NEVER);
	assert_int_equal(b->delay_ms, 0);
	assert_null(b->id);
	assert_int_equal(b->lost_session_status, 404);
	assert_true(b->session_idle_timeout == 1800.0);
	assert_int_equal(b->max_sessions, 100000);
	assert_true(b->keepalive_interval == 15.0);
	assert_true(b->handle_ttl == 3600.0);
	assert_string_equal(b->path, "/mcp");
}

static void assert_all_default(const struct mgw_config *c)
{
	assert_int_equal(c->log_level, MGW_LOG_INFO);
	assert_int_equal(c->log_access, 0);
	assert_int_equal(c->log_access_format, MGW_ACCESS_TEXT);
	assert_null(c->log_access_file);
	assert_int_equal(c->n_listeners, 0);
	assert_null(c->listeners);
	assert_limits_default(&c->limits);
	assert_true(c->shutdown_timeout == 10.0);
	assert_int_equal(c->has_backend, 0);
	assert_backend_default(&c->backend);
	/* the serve part is covered by tests/unit/proxy/conf_serve_test.c */
	assert_int_equal(c->has_serve, 0);
	assert_int_equal(c->serve.n_upstreams, 0);
}

static void test_defaults(void **state)
{
	struct mgw_config *c = mgw_config_defaults();

	(void)state;
	assert_non_null(c);
	assert_string_equal(c->source, "<defaults>");
	assert_all_default(c);
	mgw_config_free(c);
	mgw_config_free(NULL);
}

static void test_empty_documents(void **state)
{
	static const char *const docs[] = {"", "# nothing here\n", "{}", "---\n",
	                                   "~\n"};
	(void)state;
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		struct mgw_config *c = load_ok(docs[i]);

		assert_string_equal(c->source, "test.yaml");
		assert_all_default(c);
		mgw_config_free(c);
	}
}

static const char full_yaml[] =
	"log:\n"
	"  level: debug\n"
	"listeners:\n"
	"  - address: 127.0.0.1:0\n"
	"  - address: \"[::1]:8443\"\n"
	"    tls:\n"
	"      cert: /tmp/cert.pem\n"
	"      key: /tmp/key.pem\n"
	"limits:\n"
	"  max_header_bytes: 32KiB\n"
	"  max_headers: 50\n"
	"  max_uri_bytes: 2048\n"
	"  max_body_bytes: 1MiB\n"
	"  max_concurrent_streams: 64\n"
	"  max_connections: 500\n"
	"  write_watermark: 128KiB\n"
	"timeouts:\n"
	"  header: 250ms\n"
	"  body: 2\n"
	"  idle: 1.5\n"
	"  write: 3s\n"
	"  shutdown: 1m\n"
	"backend:\n"
	"  era: modern\n"
	"  state: redis\n"
	"  redis: redis://10.0.0.1:6380/2\n"
	"  sse: always\n"
	"  delay_ms: 25\n"
	"  id: replica-7\n"
	"  lost_session_status: 400\n"
	"  session_idle_timeout: 90s\n"
	"  max_sessions: 12\n"
	"  sse_keepalive: 500ms\n"
	"  handle_ttl: 2h\n"
	"  path: /v1/mcp\n";

static const char full_json[] =
	"{\n"
	"\t\"log\": {\"level\": \"debug\"},\n"
	"\t\"listeners\": [\n"
	"\t\t{\"address\": \"127.0.0.1:0\"},\n"
	"\t\t{\"address\": \"[::1]:8443\",\n"
	"\t\t \"tls\": {\"cert\": \"/tmp/cert.pem\", \"key\": \"/tmp/key.pem\"}}\n"
	"\t],\n"
	"\t\"limits\": {\"max_header_bytes\": \"32KiB\", \"max_headers\": 50,\n"
	"\t\t\"max_uri_bytes\": 2048, \"max_body_bytes\": \"1MiB\",\n"
	"\t\t\"max_concurrent_streams\": 64, \"max_connections\": 500,\n"
	"\t\t\"write_watermark\": \"128KiB\"},\n"
	"\t\"timeouts\": {\"header\": \"250ms\", \"body\": 2, \"idle\": 1.5,\n"
	"\t\t\"write\": \"3s\", \"shutdown\": \"1m\"},\n"
	"\t\"backend\": {\"era\": \"modern\", \"state\": \"redis\",\n"
	"\t\t\"redis\": \"redis://10.0.0.1:6380/2\", \"sse\": \"always\",\n"
	"\t\t\"delay_ms\": 25, \"id\": \"replica-7\",\n"
	"\t\t\"lost_session_status\": 400, \"session_idle_timeout\": \"90s\",\n"
	"\t\t\"max_sessions\": 12, \"sse_keepalive\": \"500ms\",\n"
	"\t\t\"handle_ttl\": \"2h\", \"path\": \"/v1/mcp\"}\n"
	"}\n";

static void assert_full(const struct mgw_config *c)
{
	const struct mgw_backend_conf *b = &c->backend;

	assert_int_equal(c->log_level, MGW_LOG_DEBUG);
	assert_int_equal(c->n_listeners, 2);
	assert_string_equal(c->listeners[0].address, "127.0.0.1:0");
	assert_null(c->listeners[0].tls_cert);
	assert_null(c->listeners[0].tls_key);
	assert_string_equal(c->listeners[1].address, "[::1]:8443");
	assert_string_equal(c->listeners[1].tls_cert, "/tmp/cert.pem");
	assert_string_equal(c->listeners[1].tls_key, "/tmp/key.pem");
	assert_int_equal(c->limits.max_header_bytes, 32 * 1024);
	assert_int_equal(c->limits.max_headers, 50);
	assert_int_equal(c->limits.max_uri, 2048);
	assert_int_equal(c->limits.max_body, 1024 * 1024);
	assert_int_equal(c->limits.max_streams, 64);
	assert_int_equal(c->limits.max_connections, 500);
	assert_int_equal(c->limits.write_high_watermark, 128 * 1024);
	assert_true(c->limits.header_timeout == 0.25);
	assert_true(c->limits.body_timeout == 2.0);
	assert_true(c->limits.idle_timeout == 1.5);
	assert_true(c->limits.write_timeout == 3.0);
	assert_true(c->shutdown_timeout == 60.0);
	assert_int_equal(c->has_backend, 1);
	assert_int_equal(b->era, MGW_ERA_MODERN);
	assert_int_equal(b->state, MGW_STATE_REDIS);
	assert_string_equal(b->redis_url, "redis://10.0.0.1:6380/2");
	assert_int_equal(b->sse, MGW_SSE_ALWAYS);
	assert_int_equal(b->delay_ms, 25);
	assert_string_equal(b->id, "replica-7");
	assert_int_equal(b->lost_session_status, 400);
	assert_true(b->session_idle_timeout == 90.0);
	assert_int_equal(b->max_sessions, 12);
	assert_true(b->keepalive_interval == 0.5);
	assert_true(b->handle_ttl == 7200.0);
	assert_string_equal(b->path, "/v1/mcp");
}

static void test_full_yaml(void **state)
{
	struct mgw_config *c = load_ok(full_yaml);

	(void)state;
	assert_full(c);
	mgw_config_free(c);
}

static void test_full_json(void **state)
{
	struct mgw_config *c;

	(void)state;
	err[0] = '\0';
	c = mgw_config_load_string("test.json", full_json, strlen(full_json), err,
	                           sizeof(err));
	if (!c)
		fail_msg("unexpected error: %s", err);
	assert_full(c);
	mgw_config_free(c);
}

/* A present but empty backend section still says "configure a backend". */
static void test_backend_presence(void **state)
{
	static const char *const docs[] = {"backend:\n", "backend: {}\n",
	                                   "{\"backend\": null}"};
	(void)state;
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		struct mgw_config *c = load_ok(docs[i]);

		assert_int_equal(c->has_backend, 1);
		assert_backend_default(&c->backend);
		mgw_config_free(c);
	}
}

/* Partial sections keep the defaults of the keys they do not name. */
static void test_partial_sections(void **state)
{
	struct mgw_config *c = load_ok("limits:\n  max_headers: 7\n"
	                               "timeouts: {idle: 5s}\n");
	struct mgw_http_limits d;

	(void)state;
	mgw_http_limits_default(&d);
	assert_int_equal(c->limits.max_headers, 7);
	assert_int_equal(c->limits.max_body, d.max_body);
	assert_true(c->limits.idle_timeout == 5.0);
	assert_true(c->limits.header_timeout == d.header_timeout);
	assert_true(c->shutdown_timeout == 10.0);
	mgw_config_free(c);
}

struct bad {
	const char *doc;
	const char *msg;
};

static void run_bad(const struct bad *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		expect_error(b[i].doc, b[i].msg);
}

static void test_syntax_and_structure_errors(void **state)
{
	static const struct bad bad[] = {
		{"a: [1, 2\n", "test.yaml:2:1: YAML syntax error: did not find "
		 "expected ',' or ']' (while parsing a flow sequence)"},
		{"log:\n  level: info\n    x: 1\n", "test.yaml:3:6: YAML syntax "
		 "error: mapping values are not allowed in this context"},
		/* libyaml places the end of input after a last line break it
		 * assumes, so an unterminated last line reports line + 1 */
		{"{\"log\": {\"level\": \"info\"}", "test.yaml:2:1: YAML syntax "
		 "error: did not find expected ',' or '}' (while parsing a flow "
		 "mapping)"},
		{"- a\n- b\n", "test.yaml:1:1: expected a mapping, got a list"},
		{"hello\n", "test.yaml:1:1: expected a mapping, got 'hello'"},
		/* a value quoted in a message cannot break it over lines */
		{"x\n\ny\n", "test.yaml:1:1: expected a mapping, got 'x?y'"},
		{"log: {}\n---\nlog: {}\n",
		 "test.yaml:2:1: only one document is allowed"},
		{"backend: &b {era: dual}\n",
		 "test.yaml:1:10: anchors are not allowed"},
		{"backend: *b\n", "test.yaml:1:10: aliases are not allowed"},
		{"backend: !!map {era: dual}\n",
		 "test.yaml:1:10: tags are not allowed"},
		{"listeners: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]"
		 "]]]]]]]]]]]]]]]]]]]]]]]\n",
		 "test.yaml:1:43: nesting deeper than 32 levels"},
	};
	(void)state;
	run_bad(bad, sizeof(bad) / sizeof(bad[0]));
}

static void test_unknown_keys(void **state)
{
	static const struct bad bad[] = {
		{"lgo:\n  level: info\n", "test.yaml:1:1: lgo: unknown key"},
		{"log:\n  levle: info\n", "test.yaml:2:3: log.levle: unknown key"},
		{"listeners:\n  - address: :80\n    tls: {cert: c, key: k, ca: x}\n",
		 "test.yaml:3:28: listeners[0].tls.ca: unknown key"},
		{"{\"backend\": {\"bogus\": 1}}",
		 "test.yaml:1:14: backend.bogus: unknown key"},
		{"backend:\n  era: dual\n  bogus_key: 1\n",
		 "test.yaml:3:3: backend.bogus_key: unknown key"},
	};
	(void)state;
	run_bad(bad, sizeof(bad) / sizeof(bad[0]));
}

static void test_wrong_types(void **state)
{
	static const struct bad bad[] = {
		{"log: 5", "test.yaml:1:6: log: expected a mapping, got '5'"},
		{"listeners: {}",
		 "test.yaml:1:12: listeners: expected a list, got a mapping"},
		{"listeners:\n  - 5",
		 "test.yaml:2:5: listeners[0]: expected a mapping, got '5'"},
		{"listeners:\n  - address: [a]", "test.yaml:2:14: "
		 "listeners[0].address: expected a string, got a list"},
		{"listeners:\n  - address:", "test.yaml:2:13: "
		 "listeners[0].address: expected a string, got null"},
		{"limits:\n  max_headers: ten", "test.yaml:2:16: "
		 "limits.max_headers: expected an integer, got 'ten'"},
		{"limits:\n  max_headers: \"10\"", "test.yaml:2:16: "
		 "limits.max_headers: expected an integer, got a quoted string"},
		{"limits:\n  max_body_bytes: lots", "test.yaml:2:19: "
		 "limits.max_body_bytes: expected a size (4096, 64KiB, 4MiB, "
		 "1GiB), got 'lots'"},
		{"timeouts: {idle: 100d}", "test.yaml:1:18: timeouts.idle: "
		 "expected a duration (250ms, 10s, 2m, 1h or seconds), got '100d'"},
		{"backend:\n  delay_ms: soon", "test.yaml:2:13: backend.delay_ms: "
		 "expected an integer, got 'soon'"},
		{"backend:\n  delay_ms: 1.5", "test.yaml:2:13: backend.delay_ms: "
		 "expected an integer, got '1.5'"},
	};
	(void)state;
	run_bad(bad, sizeof(bad) / sizeof(bad[0]));
}

static void test_out_of_range(void **state)
{
	static const struct bad bad[] = {
		{"limits:\n  max_headers: 0", "test.yaml:2:16: limits.max_headers: "
		 "out of range: must be between 1 and 10000"},
		{"limits: {max_headers: 99999999999999999999999}", "test.yaml:1:23: "
		 "limits.max_headers: out of range: must be between 1 and 10000"},
		{"limits:\n  max_body_bytes: 2GiB", "test.yaml:2:19: "
		 "limits.max_body_bytes: out of range: must be between 1 byte and "
		 "1GiB"},
		{"limits: {write_watermark: 100}", "test.yaml:1:27: "
		 "limits.write_watermark: out of range: must be between 1KiB and "
		 "1GiB"},
		{"timeouts:\n  idle: 0", "test.yaml:2:9: timeouts.idle: out of "
		 "range: must be between 1ms and 24h"},
		{"timeouts:\n  shutdown: 2h", "test.yaml:2:13: timeouts.shutdown: "
		 "out of range: must be between 0ms and 1h"},
		{"backend:\n  delay_ms: -1", "test.yaml:2:13: backend.delay_ms: "
		 "out of range: must be between 0 and 600000"},
		{"backend:\n  session_idle_timeout: 200h", "test.yaml:2:25: "
		 "backend.session_idle_timeout: out of range: must be between "
		 "10ms and 168h"},
		{"backend:\n  max_sessions: 0", "test.yaml:2:17: "
		 "backend.max_sessions: out of range: must be between 1 and "
		 "100000000"},
	};
	(void)state;
	run_bad(bad, sizeof(bad) / sizeof(bad[0]));
}

static void test_bad_enums(void **state)
{
	static const struct bad bad[] = {
		{"backend:\n  era: future", "test.yaml:2:8: backend.era: 'future' "
		 "is not one of: legacy, modern, dual"},
		{"backend:\n  state: disk", "test.yaml:2:10: backend.state: 'disk' "
		 "is not one of: memory, hmac, redis"},
		{"backend:\n  sse: sometimes", "test.yaml:2:8: backend.sse: "
		 "'sometimes' is not one of: never, always"},
		{"# comment line\nbackend:\n  lost_session_status: 500",
		 "test.yaml:3:24: backend.lost_session_status: '500' is not one "
		 "of: 404, 400"},
		{"log: {level: verbose}", "test.yaml:1:14: log.level: 'verbose' is "
		 "not one of: error, warn, info, debug"},
		{"backend: {era: [dual]}", "test.yaml:1:16: backend.era: expected "
		 "one of: legacy, modern, dual"},
	};
	(void)state;
	run_bad(bad, sizeof(bad) / sizeof(bad[0]));
}

static void test_duplicate_keys(void **state)
{
	static const struct bad bad[] = {
		{"log:\n  level: info\n  level: debug", "test.yaml:3:3: log.level: "
		 "duplicate key (first given at line 2)"},
		{"{\"log\": {\"level\": \"info\", \"level\": \"warn\"}}",
		 "test.yaml:1:27: log.level: duplicate key (first given at line 1)"},
		{"backend: {}\nbackend: {}", "test.yaml:2:1: backend: duplicate key "
		 "(first given at line 1)"},
		{"listeners:\n  - address: :80\n    address: :81\n",
		 "test.yaml:3:5: listeners[0].address: duplicate key (first given "
		 "at line 2)"},
	};
	(void)state;
	run_bad(bad, sizeof(bad) / sizeof(bad[0]));
}

static void test_missing_required(void **state)
{
	static const struct bad bad[] = {
		{"listeners:\n  - tls: {cert: a, key: b}", "test.yaml:2:5: "
		 "listeners[0].address: missing required key"},
		{"listeners:\n  - address: :80\n  - address: :81\n    tls:\n"
		 "      key: k.pem\n", "test.yaml:5:7: listeners[1].tls.cert: "
		 "missing required key"},
		{"listeners:\n  - address: :80\n    tls:\n      cert: c.pem\n",
		 "test.yaml:4:7: listeners[0].tls.key: missing required key"},
		{"listeners:\n  - address: :80\n    tls:\n", "test.yaml:3:9: "
		 "listeners[0].tls.cert: missing required key"},
		{"listeners: [{}]", "test.yaml:1:13: listeners[0].address: "
		 "missing required key"},
	};
	(void)state;
	run_bad(bad, sizeof(bad) / sizeof(bad[0]));
}

static void test_value_checks(void **state)
{
	static const struct bad bad[] = {
		{"listeners:\n  - address: nope", "test.yaml:2:14: "
		 "listeners[0].address: 'nope' is not HOST:PORT, [IPV6]:PORT or "
		 ":PORT"},
		{"listeners:\n  - address: 8080", "test.yaml:2:14: "
		 "listeners[0].address: '8080' is not HOST:PORT, [IPV6]:PORT or "
		 ":PORT"},
		{"listeners:\n  - address: :80\n    tls: {cert: '', key: k}",
		 "test.yaml:3:17: listeners[0].tls.cert: must not be empty"},
		{"listeners:\n  - address: 127.0.0.1:80\n"
		 "  - address: \"127.0.0.1:80\"", "test.yaml:3:14: "
		 "listeners[1].address: same address as listeners[0]"},
		{"backend:\n  redis: http://x", "test.yaml:2:10: backend.redis: "
		 "redis URL must be redis://HOST[:PORT][/DB], "
		 "rediss://HOST[:PORT][/DB] or unix:PATH: http://x"},
		{"backend:\n  redis: \"redis://:pw@h:99999\"", "test.yaml:2:10: "
		 "backend.redis: redis URL has a bad host or port: "
		 "redis://***@h:99999"},
		{"backend:\n  path: mcp", "test.yaml:2:9: backend.path: must start "
		 "with '/' (at most 1024 bytes)"},
		{"backend:\n  path: /mcp?x=1", "test.yaml:2:9: backend.path: must "
		 "be visible ASCII without '?', '#' or spaces"},
		{"backend: {id: \"a b\"}", "test.yaml:1:15: backend.id: must be "
		 "visible ASCII without spaces"},
		{"backend: {id: \"\"}", "test.yaml:1:15: backend.id: must be 1 to "
		 "128 characters long"},
		{"backend:\n  state: hmac\n  key_file: /nonexistent/mcpgw.keys",
		 "test.yaml:3:13: backend.key_file: cannot read "
		 "'/nonexistent/mcpgw.keys': No such file or directory"},
		{"backend:\n  key_file: /", "test.yaml:2:13: backend.key_file: '/' "
		 "is not a regular file"},
	};
	(void)state;
	run_bad(bad, sizeof(bad) / sizeof(bad[0]));
}

/* Port 0 means "a fresh port each", so the same address may repeat. */
static void test_port_zero_may_repeat(void **state)
{
	struct mgw_config *c = load_ok("listeners: [{address: \"[::1]:0\"}, "
	                               "{address: \"[::1]:0\"}]");

	(void)state;
	assert_int_equal(c->n_listeners, 2);
	mgw_config_free(c);
}

static char *temp_file(const char *content, size_t len)
{
	char *path = strdup("/tmp/mgw-config-test-XXXXXX");
	int fd;

	assert_non_null(path);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, len), (ssize_t)len);
	close(fd);
	return path;
}

static void test_key_file_readable(void **state)
{
	char *key = temp_file("k1 00112233445566778899aabbccddeeff"
	                      "00112233445566778899aabbccddeeff\n", 68);
	char doc[256];
	struct mgw_config *c;

	(void)state;
	snprintf(doc, sizeof(doc), "backend:\n  state: hmac\n  key_file: %s\n",
	         key);
	c = load_ok(doc);
	assert_int_equal(c->backend.state, MGW_STATE_HMAC);
	assert_string_equal(c->backend.key_file, key);
	mgw_config_free(c);
	unlink(key);
	free(key);
}

/* log.access_format and log.access_file: taken, and a file that cannot
 * be created is refused with the key named. */
static void test_access_log_keys(void **state)
{
	char dir[] = "/tmp/mcpgw-conf-test.XXXXXX", doc[256];
	struct mgw_config *c;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(doc, sizeof(doc), "log:\n  access: true\n  access_format: json\n"
	         "  access_file: %s/a.log\n", dir);
	c = load_ok(doc);
	assert_int_equal(c->log_access, 1);
	assert_int_equal(c->log_access_format, MGW_ACCESS_JSON);
	assert_non_null(strstr(c->log_access_file, "/a.log"));
	mgw_config_free(c);
	snprintf(doc, sizeof(doc), "log:\n  access_file: %s/missing/a.log\n", dir);
	assert_null(load(doc));
	assert_non_null(strstr(err, "test.yaml:2:16: log.access_file: cannot create"));
	snprintf(doc, sizeof(doc), "log:\n  access_file: %s\n", dir);
	assert_null(load(doc));
	assert_non_null(strstr(err, "is a directory"));
	assert_null(load("log: {access_format: xml}"));
	assert_non_null(strstr(err, "log.access_format: 'xml' is not one of: "
	                            "text, json"));
	assert_int_equal(rmdir(dir), 0); /* nothing was created in it */
}

static void test_input_too_large(void **state)
{
	size_t n = (1u << 20) + 1;
	char *big = malloc(n + 1), *path;
	char want[512];

	(void)state;
	assert_non_null(big);
	memset(big, '#', n);
	big[n] = '\0';
	expect_error(big, "test.yaml:1:1: file too large (1048577 bytes, the "
	             "limit is 1048576)");
	path = temp_file(big, n);
	assert_null(mgw_config_load(path, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s: file too large (1048577 bytes, the "
	         "limit is 1048576)", path);
	assert_string_equal(err, want);
	unlink(path);
	free(path);
	free(big);
}

static void test_load_file(void **state)
{
	char *path = temp_file(full_yaml, strlen(full_yaml));
	struct mgw_config *c;

	(void)state;
	err[0] = '\0';
	c = mgw_config_load(path, err, sizeof(err));
	if (!c)
		fail_msg("unexpected error: %s", err);
	assert_string_equal(c->source, path);
	assert_full(c);
	mgw_config_free(c);
	unlink(path);
	free(path);
}

static void test_load_file_errors(void **state)
{
	static const char bad_doc[] = "backend:\n  era: dual\n  era: legacy\n";
	char *path = temp_file(bad_doc, strlen(bad_doc));
	char want[512];

	(void)state;
	assert_null(mgw_config_load(path, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s:3:3: backend.era: duplicate key "
	         "(first given at line 2)", path);
	assert_string_equal(err, want);
	unlink(path);
	assert_null(mgw_config_load(path, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s: cannot open: No such file or "
	         "directory", path);
	assert_string_equal(err, want);
	free(path);
	assert_null(mgw_config_load("/tmp", err, sizeof(err)));
	assert_string_equal(err, "/tmp: not a regular file");
	/* a too small buffer truncates the message but never overflows */
	assert_null(mgw_config_load("/tmp", err, 5));
	assert_string_equal(err, "/tmp");
	assert_null(mgw_config_load("/tmp", NULL, 0));
}

static const char *srcdir(void)
{
	const char *d = getenv("TOP_SRCDIR");

	return d && *d ? d : MGW_TEST_SRCDIR;
}

static struct mgw_config *load_example(const char *name)
{
	char path[4096];
	struct mgw_config *c;

	snprintf(path, sizeof(path), "%s/conf/%s", srcdir(), name);
	err[0] = '\0';
	c = mgw_config_load(path, err, sizeof(err));
	if (!c)
		fail_msg("%s", err);
	return c;
}

/* The documented example claims every value it shows is the default:
 * hold it to that, so the comments cannot drift from the code. */
static void test_example_backend(void **state)
{
	struct mgw_config *c = load_example("backend.yaml");

	(void)state;
	assert_int_equal(c->log_level, MGW_LOG_INFO);
	assert_int_equal(c->n_listeners, 1);
	assert_string_equal(c->listeners[0].address, "127.0.0.1:8080");
	assert_null(c->listeners[0].tls_cert);
	assert_limits_default(&c->limits);
	assert_true(c->shutdown_timeout == 10.0);
	assert_int_equal(c->has_backend, 1);
	assert_backend_default(&c->backend);
	mgw_config_free(c);
}

static void test_example_backend_tls(void **state)
{
	struct mgw_config *c = load_example("backend-tls.yaml");

	(void)state;
	assert_int_equal(c->n_listeners, 3);
	assert_string_equal(c->listeners[0].address, "[::1]:8443");
	assert_non_null(c->listeners[0].tls_cert);
	assert_non_null(c->listeners[0].tls_key);
	assert_non_null(c->listeners[1].tls_cert);
	assert_null(c->listeners[2].tls_cert);
	assert_int_equal(c->has_backend, 1);
	assert_int_equal(c->backend.sse, MGW_SSE_ALWAYS);
	mgw_config_free(c);
}

static void test_flag_parsers(void **state)
{
	enum mgw_era_conf era = MGW_ERA_DUAL;
	enum mgw_state_conf st = MGW_STATE_MEMORY;
	enum mgw_sse_conf sse = MGW_SSE_NEVER;

	(void)state;
	assert_int_equal(mgw_config_parse_era("legacy", &era), 0);
	assert_int_equal(era, MGW_ERA_LEGACY);
	assert_int_equal(mgw_config_parse_era("modern", &era), 0);
	assert_int_equal(era, MGW_ERA_MODERN);
	assert_int_equal(mgw_config_parse_era("dual", &era), 0);
	assert_int_equal(era, MGW_ERA_DUAL);
	assert_int_equal(mgw_config_parse_era("Dual", &era), MGW_EINVAL);
	assert_int_equal(mgw_config_parse_era("", &era), MGW_EINVAL);
	assert_int_equal(mgw_config_parse_era(NULL, &era), MGW_EINVAL);
	assert_int_equal(era, MGW_ERA_DUAL); /* untouched on failure */
	assert_int_equal(mgw_config_parse_state("hmac", &st), 0);
	assert_int_equal(st, MGW_STATE_HMAC);
	assert_int_equal(mgw_config_parse_state("redis", &st), 0);
	assert_int_equal(st, MGW_STATE_REDIS);
	assert_int_equal(mgw_config_parse_state("memory", &st), 0);
	assert_int_equal(st, MGW_STATE_MEMORY);
	assert_int_equal(mgw_config_parse_state("sql", &st), MGW_EINVAL);
	assert_int_equal(mgw_config_parse_sse("always", &sse), 0);
	assert_int_equal(sse, MGW_SSE_ALWAYS);
	assert_int_equal(mgw_config_parse_sse("never", &sse), 0);
	assert_int_equal(sse, MGW_SSE_NEVER);
	assert_int_equal(mgw_config_parse_sse("yes", &sse), MGW_EINVAL);
	assert_string_equal(mgw_config_era_name(MGW_ERA_MODERN), "modern");
	assert_string_equal(mgw_config_state_name(MGW_STATE_REDIS), "redis");
	assert_string_equal(mgw_config_sse_name(MGW_SSE_ALWAYS), "always");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_empty_documents),
		cmocka_unit_test(test_full_yaml),
		cmocka_unit_test(test_full_json),
		cmocka_unit_test(test_backend_presence),
		cmocka_unit_test(test_partial_sections),
		cmocka_unit_test(test_syntax_and_structure_errors),
		cmocka_unit_test(test_unknown_keys),
		cmocka_unit_test(test_wrong_types),
		cmocka_unit_test(test_out_of_range),
		cmocka_unit_test(test_bad_enums),
		cmocka_unit_test(test_duplicate_keys),
		cmocka_unit_test(test_missing_required),
		cmocka_unit_test(test_value_checks),
		cmocka_unit_test(test_port_zero_may_repeat),
		cmocka_unit_test(test_key_file_readable),
		cmocka_unit_test(test_access_log_keys),
		cmocka_unit_test(test_input_too_large),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_load_file_errors),
		cmocka_unit_test(test_example_backend),
		cmocka_unit_test(test_example_backend_tls),
		cmocka_unit_test(test_flag_parsers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
