/* health_test.c - unit tests for src/proxy/health.c: the rise/fall state
 * machine on its own, then the checker on a real event loop against a
 * small HTTP server on 127.0.0.1:0 — the default probe (a modern
 * server/discover POST with its SEP-2243 headers) keeps a live server up,
 * a closed server goes down after `fall` failed probes and comes back
 * after `rise` good ones, a dead server is out after the first probe,
 * unexpected statuses and silent servers fail, configured method, path
 * and headers are used, and TCP probes work. */
#include "autoconf.h"

#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <cmocka.h>
#include <event2/event.h>

#include "../http/testsrv.h" /* ts_make_cert */
#include "conf/config.h"
#include "core/log.h"
#include "http/headers.h"
#include "http/server.h"
#include "net/tls.h"
#include "proxy/health.h"
#include "proxy/upstream.h"

/* ---- the state machine ---- */

static enum mgw_health_change feed(struct mgw_health_sm *sm, int ok)
{
	return mgw_health_sm_feed(sm, ok, 2, 3);
}

static void test_sm_first_probe_decides(void **state)
{
	struct mgw_health_sm sm;

	(void)state;
	mgw_health_sm_init(&sm);
	assert_int_equal(sm.up, 1);
	assert_int_equal(feed(&sm, 0), MGW_HEALTH_WENT_DOWN);
	assert_int_equal(sm.up, 0);
	mgw_health_sm_init(&sm);
	assert_int_equal(feed(&sm, 1), MGW_HEALTH_SAME);
	assert_int_equal(sm.up, 1);
	/* from then on a single failure is not enough */
	assert_int_equal(feed(&sm, 0), MGW_HEALTH_SAME);
	assert_int_equal(sm.up, 1);
}

static void test_sm_fall_and_rise(void **state)
{
	struct mgw_health_sm sm;

	(void)state;
	mgw_health_sm_init(&sm);
	feed(&sm, 1);
	assert_int_equal(feed(&sm, 0), MGW_HEALTH_SAME);
	assert_int_equal(feed(&sm, 0), MGW_HEALTH_SAME);
	assert_int_equal(feed(&sm, 0), MGW_HEALTH_WENT_DOWN);
	assert_int_equal(feed(&sm, 0), MGW_HEALTH_SAME);
	assert_int_equal(feed(&sm, 1), MGW_HEALTH_SAME);
	assert_int_equal(sm.up, 0);
	assert_int_equal(feed(&sm, 1), MGW_HEALTH_WENT_UP);
	assert_int_equal(feed(&sm, 1), MGW_HEALTH_SAME);
	assert_int_equal(sm.up, 1);
}

/* Runs must be consecutive: alternating results never flip a state. */
static void test_sm_runs_must_be_consecutive(void **state)
{
	struct mgw_health_sm sm;

	(void)state;
	mgw_health_sm_init(&sm);
	feed(&sm, 1);
	for (int i = 0; i < 50; i++) {
		assert_int_equal(feed(&sm, 0), MGW_HEALTH_SAME);
		assert_int_equal(feed(&sm, 0), MGW_HEALTH_SAME);
		assert_int_equal(feed(&sm, 1), MGW_HEALTH_SAME);
	}
	assert_int_equal(sm.up, 1);
	feed(&sm, 0);
	feed(&sm, 0);
	feed(&sm, 0);
	assert_int_equal(sm.up, 0);
	for (int i = 0; i < 50; i++) {
		assert_int_equal(feed(&sm, 1), MGW_HEALTH_SAME);
		assert_int_equal(feed(&sm, 0), MGW_HEALTH_SAME);
	}
	assert_int_equal(sm.up, 0);
}

static void test_sm_rise_fall_one(void **state)
{
	struct mgw_health_sm sm;

	(void)state;
	mgw_health_sm_init(&sm);
	mgw_health_sm_feed(&sm, 1, 1, 1);
	for (int i = 0; i < 10; i++) {
		assert_int_equal(mgw_health_sm_feed(&sm, 0, 1, 1),
		                 MGW_HEALTH_WENT_DOWN);
		assert_int_equal(mgw_health_sm_feed(&sm, 1, 1, 1),
		                 MGW_HEALTH_WENT_UP);
	}
}

/* ---- the checker against a real server ---- */

struct srv {
	struct event_base *base;
	struct mgw_http_server *http;
	char addr[64];
	int status_mcp;               /* answer to /mcp */
	int hold;                     /* keep requests unanswered */
	struct mgw_http_exchange *held;
	int requests;
	int version;                  /* of the last request: 11 or 20 */
	uint64_t conn_ids[8];         /* connection of each request */
	char method[16];
	char path[256];
	char body[1024];
	struct mgw_headers hdrs;      /* of the last request */
};

static void on_request(struct mgw_http_exchange *x, void *arg)
{
	struct srv *s = arg;
	const struct mgw_headers *h = mgw_http_req_headers(x);
	size_t blen;
	const unsigned char *b = mgw_http_req_body(x, &blen);
	static const char ok[] = "{\"jsonrpc\":\"2.0\",\"id\":\"mcpgw-health\","
	                         "\"result\":{}}";

	if (s->requests < 8)
		s->conn_ids[s->requests] = mgw_http_conn_id(x);
	s->requests++;
	s->version = mgw_http_version(x);
	snprintf(s->method, sizeof(s->method), "%s", mgw_http_method(x));
	snprintf(s->path, sizeof(s->path), "%s", mgw_http_target(x));
	snprintf(s->body, sizeof(s->body), "%.*s", (int)blen, (const char *)b);
	mgw_headers_deinit(&s->hdrs);
	for (size_t i = 0; i < h->n; i++)
		mgw_headers_adds(&s->hdrs, h->v[i].name, h->v[i].value);
	if (s->hold) {
		s->held = x; /* never answered; aborted when the server goes */
		return;
	}
	if (strcmp(mgw_http_path(x), "/healthz") == 0)
		mgw_http_respond(x, 204, NULL, NULL, NULL, 0);
	else if (strcmp(mgw_http_path(x), "/mcp") == 0)
		mgw_http_respond(x, s->status_mcp, NULL, "application/json", ok,
		                 sizeof(ok) - 1);
	else
		mgw_http_respond(x, 404, NULL, NULL, NULL, 0);
}

/* Starts the server on addr ("127.0.0.1:0" for a fresh port), plain or
 * with TLS. */
static void srv_start_tls(struct srv *s, const char *addr, SSL_CTX *tls)
{
	struct mgw_http_limits lim;

	mgw_http_limits_default(&lim);
	s->http = mgw_http_server_new(s->base, &lim, on_request, s);
	assert_non_null(s->http);
	assert_int_equal(mgw_http_server_listen(s->http, addr, tls, s->addr,
	                                        sizeof(s->addr)), 0);
}

static void srv_start(struct srv *s, const char *addr)
{
	srv_start_tls(s, addr, NULL);
}

static void srv_stop(struct srv *s)
{
	mgw_http_server_free(s->http);
	s->http = NULL;
	s->held = NULL;
}

/* A port on 127.0.0.1 that nobody listens on (bound, then released). */
static void closed_addr(char *buf, size_t len)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	snprintf(buf, len, "127.0.0.1:%u", (unsigned)ntohs(sa.sin_port));
	close(fd);
}

struct fx {
	struct srv srv;
	struct mgw_config *cfg;
	struct mgw_upstreams *ups;
	struct mgw_health *h;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->srv.base = event_base_new();
	assert_non_null(f->srv.base);
	f->srv.status_mcp = 200;
	mgw_headers_init(&f->srv.hdrs);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	mgw_health_free(f->h);
	mgw_upstreams_free(f->ups);
	mgw_config_free(f->cfg);
	if (f->srv.http)
		srv_stop(&f->srv);
	mgw_headers_deinit(&f->srv.hdrs);
	event_base_free(f->srv.base);
	free(f);
	return 0;
}

static void start_checker(struct fx *f, const char *doc)
{
	char err[512];

	f->cfg = mgw_config_load_string("t.yaml", doc, strlen(doc), err,
	                                sizeof(err));
	if (!f->cfg)
		fail_msg("config: %s", err);
	f->ups = mgw_upstreams_new(&f->cfg->serve, err, sizeof(err));
	if (!f->ups)
		fail_msg("upstreams: %s", err);
	f->h = mgw_health_new(f->srv.base, f->ups, err, sizeof(err));
	if (!f->h)
		fail_msg("health: %s", err);
	assert_int_equal(mgw_health_start(f->h), 0);
}

static void pump(struct event_base *base, int ms)
{
	struct timeval tv = {.tv_sec = 0, .tv_usec = ms * 1000};

	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

/* Runs the loop until the counter at offset off of the checker's stats
 * reaches n, for at most about 8 s.  Returns the stats. */
static struct mgw_health_stats wait_stat(struct fx *f, size_t off, uint64_t n)
{
	struct mgw_health_stats st;

	for (int i = 0; i < 800; i++) {
		uint64_t v;

		mgw_health_stats(f->h, &st);
		memcpy(&v, (const char *)&st + off, sizeof(v));
		if (v >= n)
			return st;
		pump(f->srv.base, 10);
	}
	fail_msg("health counter did not reach %llu", (unsigned long long)n);
	return st;
}

#define WAIT(f, field, n) \
	wait_stat(f, offsetof(struct mgw_health_stats, field), n)

static struct mgw_upstream_server *server(struct fx *f, size_t g, size_t i)
{
	return &f->ups->groups[g].servers[i];
}

static void test_http_probe_down_and_up(void **state)
{
	struct fx *f = *state;
	struct mgw_health_stats st;
	char doc[1024], addr[64];
	uint64_t ok_before;

	srv_start(&f->srv, "127.0.0.1:0");
	snprintf(addr, sizeof(addr), "%s", f->srv.addr);
	snprintf(doc, sizeof(doc),
	         "upstreams:\n"
	         "  - name: g\n"
	         "    servers:\n"
	         "      - url: http://%s\n"
	         "    health:\n"
	         "      interval: 50ms\n"
	         "      timeout: 1s\n"
	         "      rise: 2\n"
	         "      fall: 2\n"
	         "      headers:\n"
	         "        - name: X-Probe\n"
	         "          value: mcpgw\n", addr);
	start_checker(f, doc);
	assert_int_equal(mgw_health_count(f->h), 1);
	WAIT(f, ok, 2);
	assert_int_equal(atomic_load(&server(f, 0, 0)->health_up), 1);

	/* what the default probe looks like on the wire */
	assert_string_equal(f->srv.method, "POST");
	assert_string_equal(f->srv.path, "/mcp");
	assert_string_equal(f->srv.body, mgw_config_default_probe_body);
	assert_string_equal(mgw_headers_get(&f->srv.hdrs, "MCP-Protocol-Version"),
	                    "2026-07-28");
	assert_string_equal(mgw_headers_get(&f->srv.hdrs, "Mcp-Method"),
	                    "server/discover");
	assert_null(mgw_headers_get(&f->srv.hdrs, "Mcp-Name"));
	assert_string_equal(mgw_headers_get(&f->srv.hdrs, "Content-Type"),
	                    "application/json");
	assert_string_equal(mgw_headers_get(&f->srv.hdrs, "Accept"),
	                    "application/json, text/event-stream");
	assert_string_equal(mgw_headers_get(&f->srv.hdrs, "X-Probe"), "mcpgw");

	/* the server goes away: down after `fall` failed probes */
	srv_stop(&f->srv);
	st = WAIT(f, went_down, 1);
	assert_true(st.failed >= 2);
	assert_int_equal(atomic_load(&server(f, 0, 0)->health_up), 0);
	assert_int_equal(mgw_upstream_state(server(f, 0, 0), 0),
	                 MGW_UPSTREAM_S_DOWN);

	/* back on the same address: up after `rise` good probes */
	mgw_health_stats(f->h, &st);
	ok_before = st.ok;
	srv_start(&f->srv, addr);
	st = WAIT(f, went_up, 1);
	assert_true(st.ok >= ok_before + 2);
	assert_int_equal(atomic_load(&server(f, 0, 0)->health_up), 1);
	assert_int_equal(st.went_down, 1);
}

/* Every probe opens its own connection (a pooled one could outlive the
 * listener behind it), over HTTP/1.1 and HTTP/2 alike. */
static void check_fresh_connections(struct fx *f, const char *protocol,
                                    int version)
{
	char doc[1024];

	srv_start(&f->srv, "127.0.0.1:0");
	snprintf(doc, sizeof(doc),
	         "upstreams:\n"
	         "  - name: g\n"
	         "    protocol: %s\n"
	         "    servers:\n"
	         "      - url: http://%s\n"
	         "    health:\n"
	         "      interval: 50ms\n", protocol, f->srv.addr);
	start_checker(f, doc);
	WAIT(f, ok, 3);
	assert_int_equal(f->srv.version, version);
	assert_true(f->srv.requests >= 3);
	for (int i = 1; i < 3; i++)
		assert_true(f->srv.conn_ids[i] != f->srv.conn_ids[i - 1]);
	assert_int_equal(atomic_load(&server(f, 0, 0)->health_up), 1);
}

static void test_fresh_connection_h1(void **state)
{
	check_fresh_connections(*state, "http1", 11);
}

static void test_fresh_connection_h2c(void **state)
{
	check_fresh_connections(*state, "h2c", 20);
}

/* https servers are probed over TLS with the group's context: verified
 * against tls.ca_file (and the name), over ALPN or HTTP/1.1.  A server
 * whose certificate does not verify is down. */
static void test_https_probe(void **state)
{
	struct fx *f = *state;
	char dir[] = "/tmp/mgw-health-XXXXXX", cert[256], key[256], doc[2048];
	char e[256], cmd[300];
	SSL_CTX *tls;
	struct mgw_health_stats st;

	assert_non_null(mkdtemp(dir));
	ts_make_cert(dir, cert, sizeof(cert), key, sizeof(key));
	tls = mgw_tls_server_ctx(cert, key, e, sizeof(e));
	assert_non_null(tls);
	srv_start_tls(&f->srv, "127.0.0.1:0", tls);
	SSL_CTX_free(tls); /* the listener holds its own reference */
	snprintf(doc, sizeof(doc),
	         "upstreams:\n"
	         "  - name: alpn\n"
	         "    protocol: alpn\n"
	         "    tls:\n"
	         "      ca_file: %s\n"
	         "    servers:\n"
	         "      - url: https://%s\n"
	         "    health:\n"
	         "      interval: 1h\n"
	         "  - name: h1tls\n"
	         "    tls:\n"
	         "      ca_file: %s\n"
	         "      sni: localhost\n"
	         "    servers:\n"
	         "      - url: https://%s\n"
	         "    health:\n"
	         "      interval: 1h\n"
	         "  - name: untrusted\n"
	         "    servers:\n"
	         "      - url: https://%s\n"
	         "    health:\n"
	         "      interval: 1h\n",
	         cert, f->srv.addr, cert, f->srv.addr, f->srv.addr);
	start_checker(f, doc);
	WAIT(f, probes, 3);
	st = WAIT(f, went_down, 1);
	WAIT(f, ok, 2);
	mgw_health_stats(f->h, &st);
	assert_int_equal(st.failed, 1);
	assert_int_equal(atomic_load(&server(f, 0, 0)->health_up), 1);
	assert_int_equal(atomic_load(&server(f, 1, 0)->health_up), 1);
	/* the system store does not know the self-signed certificate */
	assert_int_equal(atomic_load(&server(f, 2, 0)->health_up), 0);
	assert_int_equal(f->srv.requests, 2);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_dead_at_start(void **state)
{
	struct fx *f = *state;
	struct mgw_health_stats st;
	char doc[1024], dead[64];

	srv_start(&f->srv, "127.0.0.1:0");
	closed_addr(dead, sizeof(dead));
	snprintf(doc, sizeof(doc),
	         "upstreams:\n"
	         "  - name: g\n"
	         "    servers:\n"
	         "      - url: http://%s\n"
	         "      - url: http://%s\n"
	         "    health:\n"
	         "      interval: 1h\n"
	         "      fall: 5\n", f->srv.addr, dead);
	start_checker(f, doc);
	/* one probe each (the interval is an hour): the first decides */
	st = WAIT(f, went_down, 1);
	WAIT(f, ok, 1);
	mgw_health_stats(f->h, &st);
	assert_int_equal(st.probes, 2);
	assert_int_equal(atomic_load(&server(f, 0, 0)->health_up), 1);
	assert_int_equal(atomic_load(&server(f, 0, 1)->health_up), 0);
}

static void test_unexpected_status(void **state)
{
	struct fx *f = *state;
	char doc[1024];

	f->srv.status_mcp = 503;
	srv_start(&f->srv, "127.0.0.1:0");
	snprintf(doc, sizeof(doc),
	         "upstreams:\n"
	         "  - name: g\n"
	         "    servers:\n"
	         "      - url: http://%s\n"
	         "    health:\n"
	         "      interval: 1h\n", f->srv.addr);
	start_checker(f, doc);
	WAIT(f, went_down, 1);
	assert_int_equal(f->srv.requests, 1);
	assert_int_equal(atomic_load(&server(f, 0, 0)->health_up), 0);
}

static void test_get_path_and_status(void **state)
{
	struct fx *f = *state;
	char doc[1024];

	srv_start(&f->srv, "127.0.0.1:0");
	snprintf(doc, sizeof(doc),
	         "upstreams:\n"
	         "  - name: g\n"
	         "    servers:\n"
	         "      - url: http://%s/prefix\n"
	         "    health:\n"
	         "      interval: 50ms\n"
	         "      method: GET\n"
	         "      path: /healthz\n"
	         "      expect_status: 204\n", f->srv.addr);
	start_checker(f, doc);
	WAIT(f, ok, 2);
	assert_string_equal(f->srv.method, "GET");
	assert_string_equal(f->srv.path, "/healthz");
	assert_string_equal(f->srv.body, "");
	assert_null(mgw_headers_get(&f->srv.hdrs, "Content-Type"));
	assert_null(mgw_headers_get(&f->srv.hdrs, "Mcp-Method"));
	assert_int_equal(atomic_load(&server(f, 0, 0)->health_up), 1);
}

/* The probe path defaults to the URL's prefix followed by /mcp; a body
 * set by the user is mirrored into headers the same way. */
static void test_prefix_and_custom_body(void **state)
{
	struct fx *f = *state;
	char doc[2048];

	srv_start(&f->srv, "127.0.0.1:0");
	snprintf(doc, sizeof(doc),
	         "upstreams:\n"
	         "  - name: g\n"
	         "    servers:\n"
	         "      - url: http://%s/t1/\n"
	         "    health:\n"
	         "      interval: 1h\n"
	         "      expect_status: 404\n"
	         "      body: '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	         "\"params\":{\"name\":\"caf\\u00e9\",\"_meta\":{"
	         "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}'\n",
	         f->srv.addr);
	start_checker(f, doc);
	WAIT(f, ok, 1);
	assert_string_equal(f->srv.path, "/t1/mcp");
	assert_string_equal(mgw_headers_get(&f->srv.hdrs, "Mcp-Method"),
	                    "tools/call");
	/* not plain ASCII: sent with the SEP-2243 base64 sentinel */
	assert_string_equal(mgw_headers_get(&f->srv.hdrs, "Mcp-Name"),
	                    "=?base64?Y2Fmw6k=?=");
}

static void test_silent_server_times_out(void **state)
{
	struct fx *f = *state;
	char doc[1024];

	f->srv.hold = 1;
	srv_start(&f->srv, "127.0.0.1:0");
	snprintf(doc, sizeof(doc),
	         "upstreams:\n"
	         "  - name: g\n"
	         "    servers:\n"
	         "      - url: http://%s\n"
	         "    health:\n"
	         "      interval: 1h\n"
	         "      timeout: 100ms\n", f->srv.addr);
	start_checker(f, doc);
	WAIT(f, went_down, 1);
	assert_int_equal(f->srv.requests, 1);
}

static void test_tcp_probe(void **state)
{
	struct fx *f = *state;
	struct mgw_health_stats st;
	char doc[1024], dead[64];

	srv_start(&f->srv, "127.0.0.1:0");
	closed_addr(dead, sizeof(dead));
	snprintf(doc, sizeof(doc),
	         "upstreams:\n"
	         "  - name: g\n"
	         "    servers:\n"
	         "      - url: http://%s\n"
	         "      - url: http://%s\n"
	         "    health:\n"
	         "      type: tcp\n"
	         "      interval: 50ms\n"
	         "      fall: 1\n", f->srv.addr, dead);
	start_checker(f, doc);
	WAIT(f, ok, 3);
	st = WAIT(f, went_down, 1);
	assert_int_equal(f->srv.requests, 0); /* connect only, no HTTP */
	assert_int_equal(atomic_load(&server(f, 0, 0)->health_up), 1);
	assert_int_equal(atomic_load(&server(f, 0, 1)->health_up), 0);
	assert_int_equal(st.went_up, 0);
	/* the live one goes down too once its listener closes */
	srv_stop(&f->srv);
	WAIT(f, went_down, 2);
	assert_int_equal(atomic_load(&server(f, 0, 0)->health_up), 0);
}

static void test_disabled_checks(void **state)
{
	struct fx *f = *state;
	struct mgw_health_stats st;

	start_checker(f, "upstreams:\n"
	                 "  - name: g\n"
	                 "    servers:\n"
	                 "      - url: http://127.0.0.1:1\n"
	                 "    health:\n"
	                 "      enabled: false\n");
	assert_int_equal(mgw_health_count(f->h), 0);
	pump(f->srv.base, 50);
	mgw_health_stats(f->h, &st);
	assert_int_equal(st.probes, 0);
	assert_int_equal(atomic_load(&server(f, 0, 0)->health_up), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sm_first_probe_decides),
		cmocka_unit_test(test_sm_fall_and_rise),
		cmocka_unit_test(test_sm_runs_must_be_consecutive),
		cmocka_unit_test(test_sm_rise_fall_one),
		cmocka_unit_test_setup_teardown(test_http_probe_down_and_up, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_fresh_connection_h1, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_fresh_connection_h2c, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_https_probe, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dead_at_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unexpected_status, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_get_path_and_status, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_prefix_and_custom_body, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_silent_server_times_out, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_tcp_probe, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disabled_checks, setup,
		                                teardown),
	};

	mgw_log_set_level(MGW_LOG_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
