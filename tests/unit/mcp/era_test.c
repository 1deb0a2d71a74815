/* era_test.c - unit tests for src/mcp/era.c: version lists and the era
 * detection table (spec 2026-07-28 versioning, backward compatibility). */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "http/headers.h"
#include "mcp/era.h"

static void test_lists(void **state)
{
	(void)state;
	assert_true(mgw_mcp_version_in("2026-07-28", mgw_mcp_modern_versions));
	assert_false(mgw_mcp_version_in("2025-11-25", mgw_mcp_modern_versions));
	assert_true(mgw_mcp_version_in("2025-11-25", mgw_mcp_legacy_versions));
	assert_true(mgw_mcp_version_in("2025-06-18", mgw_mcp_legacy_versions));
	assert_true(mgw_mcp_version_in("2025-03-26", mgw_mcp_legacy_versions));
	assert_false(mgw_mcp_version_in("2024-11-05", mgw_mcp_legacy_versions));
	assert_false(mgw_mcp_version_in(NULL, mgw_mcp_legacy_versions));
	assert_false(mgw_mcp_version_in("2025-11-25", NULL));
	/* newest first */
	assert_string_equal(mgw_mcp_legacy_versions[0], MGW_MCP_LEGACY_LATEST);
	assert_string_equal(mgw_mcp_modern_versions[0], MGW_MCP_MODERN_VERSION);
}

struct row {
	const char *method;      /* NULL: no body (GET/DELETE) */
	const char *meta_pv;     /* _meta protocolVersion in the body */
	const char *hdr_pv;      /* MCP-Protocol-Version header */
	const char *session;     /* Mcp-Session-Id header */
	enum mgw_era want;
};

static const struct row rows[] = {
	/* initialize opens a legacy session whatever else is present */
	{ "initialize", NULL, NULL, NULL, MGW_ERA_IS_LEGACY },
	{ "initialize", "2026-07-28", "2026-07-28", NULL, MGW_ERA_IS_LEGACY },
	/* modern: per-request _meta or the modern header */
	{ "tools/list", "2026-07-28", "2026-07-28", NULL, MGW_ERA_IS_MODERN },
	{ "tools/list", "2026-07-28", NULL, NULL, MGW_ERA_IS_MODERN },
	{ "tools/list", NULL, "2026-07-28", NULL, MGW_ERA_IS_MODERN },
	{ "tools/list", NULL, " 2026-07-28 ", NULL, MGW_ERA_IS_MODERN },
	/* a stray session header is ignored by modern servers */
	{ "tools/call", "2026-07-28", "2026-07-28", "abc", MGW_ERA_IS_MODERN },
	/* header says legacy but _meta says modern: modern (then -32020) */
	{ "tools/call", "2026-07-28", "2025-11-25", NULL, MGW_ERA_IS_MODERN },
	/* unknown version in _meta: modern, to be answered -32022 */
	{ "tools/list", "1900-01-01", "1900-01-01", NULL, MGW_ERA_IS_MODERN },
	{ "tools/list", "2027-01-01", NULL, NULL, MGW_ERA_IS_MODERN },
	/* legacy: session or legacy header */
	{ "tools/list", NULL, "2025-11-25", "abc", MGW_ERA_IS_LEGACY },
	{ "tools/list", NULL, NULL, "abc", MGW_ERA_IS_LEGACY },
	{ "tools/list", NULL, "2025-06-18", NULL, MGW_ERA_IS_LEGACY },
	{ "ping", NULL, "2025-03-26", NULL, MGW_ERA_IS_LEGACY },
	/* legacy header beats a legacy-named _meta version */
	{ "tools/list", "2025-11-25", "2025-11-25", NULL, MGW_ERA_IS_LEGACY },
	/* _meta naming a legacy version, no other cue: per-request metadata */
	{ "tools/list", "2025-11-25", NULL, NULL, MGW_ERA_IS_MODERN },
	/* nothing to go on */
	{ "tools/list", NULL, NULL, NULL, MGW_ERA_UNKNOWN },
	{ "tools/list", NULL, "1900-01-01", NULL, MGW_ERA_UNKNOWN },
	/* GET / DELETE without a body */
	{ NULL, NULL, NULL, "abc", MGW_ERA_IS_LEGACY },
	{ NULL, NULL, "2026-07-28", NULL, MGW_ERA_IS_MODERN },
	{ NULL, NULL, "2025-11-25", NULL, MGW_ERA_IS_LEGACY },
	{ NULL, NULL, NULL, NULL, MGW_ERA_UNKNOWN },
};

static void test_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct mgw_jrpc_msg m;
		struct mgw_headers h;
		char body[512];
		enum mgw_era got;

		mgw_headers_init(&h);
		if (r->hdr_pv)
			assert_int_equal(mgw_headers_adds(&h, "mcp-protocol-version",
			                                  r->hdr_pv), 0);
		if (r->session)
			assert_int_equal(mgw_headers_adds(&h, "Mcp-Session-Id",
			                                  r->session), 0);
		if (r->method) {
			if (r->meta_pv)
				snprintf(body, sizeof(body),
				         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\","
				         "\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"%s\"}}}",
				         r->method, r->meta_pv);
			else
				snprintf(body, sizeof(body),
				         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\"}",
				         r->method);
			assert_int_equal(mgw_jrpc_classify(body, strlen(body), 0, &m), 0);
			assert_int_equal(m.kind, MGW_JRPC_REQUEST);
			got = mgw_mcp_detect_era(&h, &m);
			mgw_jrpc_msg_deinit(&m);
		} else {
			got = mgw_mcp_detect_era(&h, NULL);
		}
		if (got != r->want)
			fail_msg("row %zu (%s, meta %s, hdr %s, session %s): got %d want %d",
			         i, r->method ? r->method : "-",
			         r->meta_pv ? r->meta_pv : "-",
			         r->hdr_pv ? r->hdr_pv : "-",
			         r->session ? r->session : "-", got, r->want);
		mgw_headers_deinit(&h);
	}
}

static void test_null_headers(void **state)
{
	(void)state;
	assert_int_equal(mgw_mcp_detect_era(NULL, NULL), MGW_ERA_UNKNOWN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_null_headers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
