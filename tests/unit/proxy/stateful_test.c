/* stateful_test.c - the stateful handler through the pipeline, on one
 * event loop: two in-process `mcpgw backend` replicas (legacy era), the
 * gateway in stateful mode with the memory store, a raw HTTP/1 client.
 *   - initialize: the client gets a session id the gateway minted, not
 *     the replica's, and one session is stored;
 *   - a call of the session reaches its pinned replica;
 *   - the pinned replica gone (its server freed): the next call is
 *     re-pinned to the other one (initialize replayed), answered 200, and
 *     counted as a re-pin with reason "refused";
 *   - DELETE ends the session; the id is then unknown (404, -32011);
 *   - GET on the MCP endpoint without a session: 400, -32014. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "auth/principal.h"
#include "session/session.h"

#include "backend/backend.h"
#include "backend/strmap.h"
#include "conf/config.h"
#include "http/headers.h"
#include "http/server.h"
#include "proxy/errors.h"
#include "proxy/pipeline.h"
#include "proxy/repin-t.h"
#include "proxy/route.h"
#include "proxy/stateful.h"
#include "proxy/upstream.h"
#include "../http/testsrv.h"

static char err[512];

struct replica {
	struct mgw_config *cfg;
	struct mgw_backend be;
	char addr[80];
};

struct fx {
	struct event_base *base;
	struct replica r[2];
	struct ts gw;                  /* the gateway's listener */
	struct mgw_config *cfg;
	struct mgw_upstreams *ups;
	struct mgw_routes *routes;
	struct mgw_sf_shared *sh;
	struct mgw_pipeline *pl;
	char sid[256];
};

static void replica_start(struct fx *f, int i)
{
	static const char doc[] = "backend:\n  era: legacy\n";
	struct replica *r = &f->r[i];
	char id[8];

	r->cfg = mgw_config_load_string("b.yaml", doc, strlen(doc), err,
	                                sizeof(err));
	if (!r->cfg)
		fail_msg("backend config: %s", err);
	memset(&r->be, 0, sizeof(r->be));
	r->be.base = f->base;
	r->be.conf = r->cfg->backend;
	snprintf(id, sizeof(id), "r%d", i + 1);
	r->be.conf.id = strdup(id);
	assert_int_equal(mgw_be_sessions_init(&r->be), 0);
	r->be.http = mgw_http_server_new(f->base, &r->cfg->limits,
	                                 mgw_be_on_request, &r->be);
	assert_non_null(r->be.http);
	assert_int_equal(mgw_http_server_listen(r->be.http, "127.0.0.1:0", NULL,
	                                        r->addr, sizeof(r->addr)), 0);
}

/* The replica dies: its listener and connections go. */
static void replica_stop(struct replica *r)
{
	if (!r->be.http)
		return;
	mgw_http_server_free(r->be.http);
	r->be.http = NULL;
	mgw_be_sessions_deinit(&r->be);
	free(r->be.conf.id);
	mgw_config_free(r->cfg);
}

static void start(struct fx *f)
{
	char doc[1024];

	memset(f, 0, sizeof(*f));
	f->base = event_base_new();
	assert_non_null(f->base);
	replica_start(f, 0);
	replica_start(f, 1);
	snprintf(doc, sizeof(doc),
	         "mode: stateful\n"
	         "upstreams:\n"
	         "  - name: g\n"
	         "    health: {enabled: false}\n"
	         "    servers: [{url: 'http://%s'}, {url: 'http://%s'}]\n"
	         "routes:\n"
	         "  - {upstream: g}\n", f->r[0].addr, f->r[1].addr);
	f->cfg = mgw_config_load_string("t.yaml", doc, strlen(doc), err,
	                                sizeof(err));
	if (!f->cfg)
		fail_msg("config: %s", err);
	f->ups = mgw_upstreams_new(&f->cfg->serve, err, sizeof(err));
	assert_non_null(f->ups);
	f->routes = mgw_routes_new(&f->cfg->serve, f->ups, err, sizeof(err));
	assert_non_null(f->routes);
	f->sh = mgw_sf_shared_new(&f->cfg->serve, f->routes, NULL, err,
	                          sizeof(err));
	if (!f->sh)
		fail_msg("sessions: %s", err);
	f->pl = mgw_pipeline_new(f->base, &f->cfg->serve, f->routes, f->ups, 1, 1,
	                         err, sizeof(err));
	assert_non_null(f->pl);
	assert_int_equal(mgw_pipeline_enable_stateful(f->pl, f->sh, err,
	                                              sizeof(err)), 0);
	f->gw.base = f->base;
	mgw_http_limits_default(&f->gw.lim);
	f->gw.srv = mgw_http_server_new(f->base, &f->gw.lim,
	                                mgw_pipeline_on_request, f->pl);
	assert_non_null(f->gw.srv);
	assert_int_equal(mgw_http_server_listen(f->gw.srv, "127.0.0.1:0", NULL,
	                                        f->gw.addr, sizeof(f->gw.addr)), 0);
}

static void stop(struct fx *f)
{
	mgw_http_server_free(f->gw.srv);
	assert_int_equal(f->pl->live, 0);
	mgw_pipeline_free(f->pl);
	mgw_sf_shared_free(f->sh);
	mgw_routes_free(f->routes);
	mgw_upstreams_free(f->ups);
	mgw_config_free(f->cfg);
	replica_stop(&f->r[0]);
	replica_stop(&f->r[1]);
	event_base_free(f->base);
}

/* One request (method, body may be NULL, with the session when sid)
 * on a fresh connection. */
static void ask(struct fx *f, const char *method, const char *body,
                const char *sid, struct resp *r)
{
	char req[2048], sh[300] = "";
	struct tc c;

	if (sid)
		snprintf(sh, sizeof(sh), "Mcp-Session-Id: %s\r\n", sid);
	snprintf(req, sizeof(req),
	         "%s /mcp HTTP/1.1\r\nHost: gw.test\r\n"
	         "Content-Type: application/json\r\n"
	         "Accept: application/json, text/event-stream\r\n"
	         "MCP-Protocol-Version: 2025-11-25\r\n%s"
	         "Content-Length: %zu\r\n\r\n%s",
	         method, sh, body ? strlen(body) : 0, body ? body : "");
	tc_open(&f->gw, &c);
	assert_int_equal(tc_sends(&c, req), 0);
	assert_int_equal(tc_response(&c, r), 0);
	tc_close(&c);
	ts_pump(&f->gw, 20);
}

static const char init_body[] =
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
	"{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
	"\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
static const char whoami[] =
	"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
	"{\"name\":\"whoami\",\"arguments\":{}}}";

/* The replica index the answer names (whoami), or -1. */
static int who(const struct resp *r)
{
	if (strstr(r->body, "\"id\":\"r1\""))
		return 0;
	if (strstr(r->body, "\"id\":\"r2\""))
		return 1;
	return -1;
}

static void open_session(struct fx *f)
{
	struct resp r;
	const char *sid;

	ask(f, "POST", init_body, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, "protocolVersion"));
	sid = resp_header(&r, "mcp-session-id");
	assert_non_null(sid);
	snprintf(f->sid, sizeof(f->sid), "%s", sid);
	resp_free(&r);
	assert_int_equal(atomic_load(&f->sh->core->cnt.created), 1);
}

/* bind_principal's digest: the verified principal when there is one
 * (a refreshed token of the same iss/sub keeps the binding), else the
 * Authorization value as before. */
static void test_principal_digest(void **state)
{
	unsigned char d1[MGW_SESSION_DIGEST_LEN], d2[MGW_SESSION_DIGEST_LEN],
		want[MGW_SESSION_DIGEST_LEN];
	struct mgw_principal *a, *b, *c, *s1;

	(void)state;
	/* no principal: SHA-256 of the Authorization value (NULL = "") */
	mgw_sf_principal_digest(NULL, "Bearer t1", d1);
	mgw_session_principal_digest("Bearer t1", 9, want);
	assert_memory_equal(d1, want, sizeof(d1));
	mgw_sf_principal_digest(NULL, NULL, d1);
	mgw_session_principal_digest(NULL, 0, want);
	assert_memory_equal(d1, want, sizeof(d1));

	/* a JWT: "jwt" NUL iss NUL sub, whatever the token */
	a = mgw_principal_new(MGW_PRINCIPAL_JWT, "alice", "app1");
	b = mgw_principal_new(MGW_PRINCIPAL_JWT, "alice", "app2");
	assert_non_null(a);
	assert_non_null(b);
	a->claims = json_pack("{s:s,s:s,s:i}", "iss", "https://issuer.example",
	                      "sub", "alice", "exp", 100);
	b->claims = json_pack("{s:s,s:s,s:i}", "iss", "https://issuer.example",
	                      "sub", "alice", "exp", 200);
	mgw_sf_principal_digest(a, "Bearer token-one", d1);
	mgw_sf_principal_digest(b, "Bearer token-two", d2);
	assert_memory_equal(d1, d2, sizeof(d1));
	mgw_session_principal_digest("jwt\0https://issuer.example\0alice", 32, want);
	assert_memory_equal(d1, want, sizeof(d1));
	/* ... and not the Authorization digest */
	mgw_session_principal_digest("Bearer token-one", 16, want);
	assert_memory_not_equal(d1, want, sizeof(d1));

	/* another subject, or the same subject of another issuer, differs */
	c = mgw_principal_new(MGW_PRINCIPAL_JWT, "bob", NULL);
	c->claims = json_pack("{s:s}", "iss", "https://issuer.example");
	mgw_sf_principal_digest(c, "Bearer token-one", d2);
	assert_memory_not_equal(d1, d2, sizeof(d1));
	json_object_set_new(b->claims, "iss", json_string("https://other.example"));
	mgw_sf_principal_digest(b, NULL, d2);
	assert_memory_not_equal(d1, d2, sizeof(d1));
	/* the separator keeps (iss, sub) pairs apart: iss "x" sub "ab" is
	 * not iss "xa" sub "b"; no iss hashes as "" */
	json_object_set_new(b->claims, "iss", json_string(""));
	mgw_sf_principal_digest(b, NULL, d1);
	json_object_del(b->claims, "iss");
	mgw_sf_principal_digest(b, NULL, d2);
	assert_memory_equal(d1, d2, sizeof(d1));
	mgw_session_principal_digest("jwt\0\0alice", 10, want);
	assert_memory_equal(d1, want, sizeof(d1));

	/* a static token: "static" NUL name; never equal to a JWT's */
	s1 = mgw_principal_new(MGW_PRINCIPAL_STATIC, "ci-runner", NULL);
	assert_non_null(s1);
	mgw_sf_principal_digest(s1, "Bearer whatever", d1);
	mgw_session_principal_digest("static\0ci-runner", 16, want);
	assert_memory_equal(d1, want, sizeof(d1));
	c->sub[0] = 'c'; /* "cob" */
	mgw_sf_principal_digest(c, NULL, d2);
	assert_memory_not_equal(d1, d2, sizeof(d1));

	mgw_principal_free(a);
	mgw_principal_free(b);
	mgw_principal_free(c);
	mgw_principal_free(s1);
}

static void test_session_lifecycle(void **state)
{
	struct fx f;
	struct resp r;
	int home;

	(void)state;
	start(&f);
	open_session(&f);
	/* the replica's own id never reaches the client */
	for (int i = 0; i < 2; i++)
		assert_null(mgw_strmap_get(f.r[i].be.sessions, f.sid));
	ask(&f, "POST", whoami, f.sid, &r);
	assert_int_equal(r.status, 200);
	home = who(&r);
	assert_true(home >= 0);
	resp_free(&r);
	/* the pin holds */
	ask(&f, "POST", whoami, f.sid, &r);
	assert_int_equal(who(&r), home);
	resp_free(&r);
	ask(&f, "DELETE", NULL, f.sid, &r);
	assert_int_equal(r.status, 200);
	resp_free(&r);
	assert_int_equal(atomic_load(&f.sh->core->cnt.deleted), 1);
	ask(&f, "POST", whoami, f.sid, &r);
	assert_int_equal(r.status, 404);
	assert_non_null(strstr(r.body, "-32011"));
	assert_non_null(strstr(r.body, "\"id\":2"));
	resp_free(&r);
	stop(&f);
}

static void test_repin_when_replica_dies(void **state)
{
	struct fx f;
	struct resp r;
	int home;

	(void)state;
	start(&f);
	open_session(&f);
	ask(&f, "POST", whoami, f.sid, &r);
	home = who(&r);
	assert_true(home >= 0);
	resp_free(&r);
	replica_stop(&f.r[home]);
	ask(&f, "POST", whoami, f.sid, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(who(&r), 1 - home);
	resp_free(&r);
	assert_int_equal(atomic_load(&f.sh->core->cnt.repin.repinned), 1);
	assert_int_equal(atomic_load(&f.sh->core->cnt.repin.started[MGW_REPIN_REFUSED]), 1);
	/* the client's id is unchanged and keeps working */
	ask(&f, "POST", whoami, f.sid, &r);
	assert_int_equal(who(&r), 1 - home);
	resp_free(&r);
	stop(&f);
}

static void test_get_without_session(void **state)
{
	struct fx f;
	struct resp r;

	(void)state;
	start(&f);
	ask(&f, "GET", NULL, NULL, &r);
	assert_int_equal(r.status, 400);
	assert_non_null(strstr(r.body, "-32014"));
	resp_free(&r);
	assert_int_equal(atomic_load(&f.sh->core->cnt.missing_session), 1);
	stop(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_principal_digest),
		cmocka_unit_test(test_session_lifecycle),
		cmocka_unit_test(test_repin_when_replica_dies),
		cmocka_unit_test(test_get_without_session),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
