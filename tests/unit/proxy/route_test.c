/* route_test.c - unit tests for src/proxy/route.c: compiling routes from a
 * configuration and picking the first route that matches a request by
 * path (exact, prefix, any), Mcp-Method and decoded Mcp-Name. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conf/config.h"
#include "http/headers.h"
#include "proxy/route.h"
#include "proxy/upstream.h"

struct fx {
	struct mgw_config *cfg;
	struct mgw_upstreams *ups;
	struct mgw_routes *rt;
	struct mgw_headers h;
};

static char err[512];

static void build(struct fx *f, const char *doc)
{
	memset(f, 0, sizeof(*f));
	mgw_headers_init(&f->h);
	f->cfg = mgw_config_load_string("t.yaml", doc, strlen(doc), err,
	                                sizeof(err));
	if (!f->cfg)
		fail_msg("config: %s", err);
	f->ups = mgw_upstreams_new(&f->cfg->serve, err, sizeof(err));
	if (!f->ups)
		fail_msg("upstreams: %s", err);
	f->rt = mgw_routes_new(&f->cfg->serve, f->ups, err, sizeof(err));
	if (!f->rt)
		fail_msg("routes: %s", err);
}

static void destroy(struct fx *f)
{
	mgw_headers_deinit(&f->h);
	mgw_routes_free(f->rt);
	mgw_upstreams_free(f->ups);
	mgw_config_free(f->cfg);
}

/* Index of the matching route, -1 for none. */
static int match(struct fx *f, const char *path, int use_headers)
{
	const struct mgw_route *r = mgw_routes_match(f->rt, path, &f->h,
	                                             use_headers);
	return r ? (int)r->index : -1;
}

static const char groups[] =
	"upstreams:\n"
	"  - name: a\n"
	"    health: {enabled: false}\n"
	"    servers: [{url: 'http://127.0.0.1:9001'}]\n"
	"  - name: b\n"
	"    health: {enabled: false}\n"
	"    servers: [{url: 'http://127.0.0.1:9002'}]\n"
	"  - name: c\n"
	"    health: {enabled: false}\n"
	"    servers: [{url: 'http://127.0.0.1:9003'}]\n";

static void test_paths(void **state)
{
	struct fx f;
	char doc[2048];

	(void)state;
	snprintf(doc, sizeof(doc),
	         "%sroutes:\n"
	         "  - {match: {path: /mcp}, upstream: a}\n"
	         "  - {match: {path: '/tenant/*'}, upstream: b}\n"
	         "  - {match: {path: '*'}, upstream: c}\n",
	         groups);
	build(&f, doc);
	assert_int_equal(f.rt->n, 3);
	assert_int_equal(match(&f, "/mcp", 1), 0);
	/* exact means exact: no trailing slash, no longer path */
	assert_int_equal(match(&f, "/mcp/", 1), 2);
	assert_int_equal(match(&f, "/mcpx", 1), 2);
	assert_int_equal(match(&f, "/MCP", 1), 2);
	/* prefix: "/tenant/" and anything below it, not "/tenant" itself */
	assert_int_equal(match(&f, "/tenant/", 1), 1);
	assert_int_equal(match(&f, "/tenant/x/mcp", 1), 1);
	assert_int_equal(match(&f, "/tenant", 1), 2);
	assert_int_equal(match(&f, "/", 0), 2);
	/* groups are resolved by name */
	assert_string_equal(f.rt->v[1].group->name, "b");
	destroy(&f);
}

static void test_first_match_wins(void **state)
{
	struct fx f;
	char doc[2048];

	(void)state;
	snprintf(doc, sizeof(doc),
	         "%sroutes:\n"
	         "  - {match: {path: '/mcp*'}, upstream: a}\n"
	         "  - {match: {path: /mcp}, upstream: b}\n",
	         groups);
	build(&f, doc);
	/* the second route can never win for /mcp: the first takes it */
	assert_int_equal(match(&f, "/mcp", 1), 0);
	/* nothing matches outside both: NULL, not a default */
	assert_int_equal(match(&f, "/other", 1), -1);
	destroy(&f);
}

static void test_mcp_method(void **state)
{
	struct fx f;
	char doc[2048];

	(void)state;
	snprintf(doc, sizeof(doc),
	         "%sroutes:\n"
	         "  - {match: {path: /mcp, mcp_method: tools/call}, upstream: a}\n"
	         "  - {match: {mcp_method: resources/read}, upstream: b}\n"
	         "  - {upstream: c}\n",
	         groups);
	build(&f, doc);
	assert_int_equal(match(&f, "/mcp", 1), 2); /* no header: fall through */
	mgw_headers_adds(&f.h, "Mcp-Method", "tools/call");
	assert_int_equal(match(&f, "/mcp", 1), 0);
	/* both conditions of a route must hold */
	assert_int_equal(match(&f, "/elsewhere", 1), 2);
	/* untrusted headers: the header routes do not match at all */
	assert_int_equal(match(&f, "/mcp", 0), 2);
	/* values are case-sensitive; surrounding blanks do not count */
	mgw_headers_set(&f.h, "mcp-method", "Tools/Call");
	assert_int_equal(match(&f, "/mcp", 1), 2);
	mgw_headers_set(&f.h, "mcp-method", " tools/call\t");
	assert_int_equal(match(&f, "/mcp", 1), 0);
	/* a prefix of the value is not the value */
	mgw_headers_set(&f.h, "mcp-method", "tools/cal");
	assert_int_equal(match(&f, "/mcp", 1), 2);
	mgw_headers_set(&f.h, "mcp-method", "resources/read");
	assert_int_equal(match(&f, "/any/path", 1), 1);
	/* sent twice: ambiguous, so no header condition holds */
	mgw_headers_adds(&f.h, "MCP-METHOD", "resources/read");
	assert_int_equal(match(&f, "/any/path", 1), 2);
	destroy(&f);
}

static void test_mcp_name_decoded(void **state)
{
	struct fx f;
	char doc[2048];

	(void)state;
	snprintf(doc, sizeof(doc),
	         "%sroutes:\n"
	         "  - {match: {mcp_method: tools/call, mcp_name: \"Hello, \\u4e16\\u754c\"}, upstream: a}\n"
	         "  - {match: {mcp_name: admin}, upstream: b}\n"
	         "  - {upstream: c}\n",
	         groups);
	build(&f, doc);
	assert_true(f.rt->need_name);
	mgw_headers_adds(&f.h, "Mcp-Method", "tools/call");
	/* the spec's example: "Hello, 世界" travels as a base64 sentinel */
	mgw_headers_adds(&f.h, "Mcp-Name", "=?base64?SGVsbG8sIOS4lueVjA==?=");
	assert_int_equal(match(&f, "/mcp", 1), 0);
	assert_int_equal(match(&f, "/mcp", 0), 2);
	/* a plain value is compared as it is */
	mgw_headers_set(&f.h, "mcp-name", "admin");
	assert_int_equal(match(&f, "/mcp", 1), 1);
	/* the sentinel form of a plain name decodes to the same name */
	mgw_headers_set(&f.h, "mcp-name", "=?base64?YWRtaW4=?=");
	assert_int_equal(match(&f, "/mcp", 1), 1);
	/* malformed sentinel (padding missing): fails every name condition */
	mgw_headers_set(&f.h, "mcp-name", "=?base64?YWRtaW4?=");
	assert_int_equal(match(&f, "/mcp", 1), 2);
	/* markers are case-sensitive: a literal value, not "admin" */
	mgw_headers_set(&f.h, "mcp-name", "=?BASE64?YWRtaW4=?=");
	assert_int_equal(match(&f, "/mcp", 1), 2);
	/* twice: no match */
	mgw_headers_set(&f.h, "mcp-name", "admin");
	mgw_headers_adds(&f.h, "Mcp-Name", "admin");
	assert_int_equal(match(&f, "/mcp", 1), 2);
	destroy(&f);
}

static void test_timeouts_and_defaults(void **state)
{
	struct fx f;
	char doc[2048];
	const struct mgw_route *r;

	(void)state;
	snprintf(doc, sizeof(doc),
	         "%sroutes:\n"
	         "  - upstream: b\n"
	         "    retries: 4\n"
	         "    timeouts: {connect: 250ms, first_byte: 3s, idle: 7s, total: 1m}\n",
	         groups);
	build(&f, doc);
	r = mgw_routes_match(f.rt, "/x", NULL, 1);
	assert_non_null(r);
	assert_string_equal(r->group->name, "b");
	assert_true(r->tmo.connect > 0.249 && r->tmo.connect < 0.251);
	assert_true(r->tmo.first_byte == 3.0);
	assert_true(r->tmo.idle == 7.0);
	assert_true(r->tmo.total == 60.0);
	assert_int_equal(r->conf->retries, 4);
	destroy(&f);

	/* without routes: one route taking everything to the first group */
	build(&f, groups);
	assert_int_equal(f.rt->n, 1);
	r = mgw_routes_match(f.rt, "/anything", NULL, 0);
	assert_non_null(r);
	assert_string_equal(r->group->name, "a");
	assert_true(r->conf->validate_headers);
	destroy(&f);
}

static void test_compile_errors(void **state)
{
	struct fx f;
	struct mgw_routes *rt;
	char *saved;

	(void)state;
	build(&f, groups);
	/* a snapshot is validated by the loader; exercise the compiler's own
	 * checks by editing a copy the way a careless caller could */
	saved = f.cfg->serve.routes[0].upstream;
	f.cfg->serve.routes[0].upstream = "nope";
	rt = mgw_routes_new(&f.cfg->serve, f.ups, err, sizeof(err));
	assert_null(rt);
	assert_non_null(strstr(err, "routes[0]"));
	assert_non_null(strstr(err, "nope"));
	f.cfg->serve.routes[0].upstream = saved;

	saved = f.cfg->serve.routes[0].match_path;
	f.cfg->serve.routes[0].match_path = "mcp";
	rt = mgw_routes_new(&f.cfg->serve, f.ups, err, sizeof(err));
	assert_null(rt);
	assert_non_null(strstr(err, "must start with '/'"));
	f.cfg->serve.routes[0].match_path = saved;

	/* an empty table matches nothing */
	{
		struct mgw_serve_conf empty = f.cfg->serve;
		empty.n_routes = 0;
		rt = mgw_routes_new(&empty, f.ups, err, sizeof(err));
		assert_non_null(rt);
		assert_null(mgw_routes_match(rt, "/mcp", NULL, 1));
		mgw_routes_free(rt);
	}
	mgw_routes_free(NULL);
	destroy(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_first_match_wins),
		cmocka_unit_test(test_mcp_method),
		cmocka_unit_test(test_mcp_name_decoded),
		cmocka_unit_test(test_timeouts_and_defaults),
		cmocka_unit_test(test_compile_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
