/* check_prm.c - OAuth 2.0 Protected Resource Metadata (RFC 9728) served
 * by the gateway itself when auth: is configured: GET (or HEAD)
 * /.well-known/oauth-protected-resource and its path-suffixed form for
 * auth.resource (https://mcp.example/mcp ->
 * /.well-known/oauth-protected-resource/mcp) answer
 *   {"resource": auth.resource, "authorization_servers": [...],
 *    "scopes_supported": [...], "bearer_methods_supported": ["header"]}
 * so the metadata names the gateway's public URL, never an upstream's.
 * Readable cross-origin (browser-based MCP clients fetch it), never
 * forwarded, and no token is needed to read it. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "http/headers.h"
#include "http/server.h"
#include "proxy/auth_wait.h"
#include "proxy/checks.h"
#include "proxy/errors.h"
#include "proxy/handler.h"
#include "proxy/pipeline-t.h"
#include "proxy/txn.h"

#define WELL_KNOWN "/.well-known/oauth-protected-resource"

static json_t *strings(char *const *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

/* The metadata document (malloc'd JSON) or NULL. */
static char *document(const struct mgw_auth_conf *a)
{
	json_t *o = json_object();
	char *s;

	if (!o)
		return NULL;
	json_object_set_new(o, "resource", json_string(a->resource));
	if (a->n_authorization_servers)
		json_object_set_new(o, "authorization_servers",
		                    strings(a->authorization_servers,
		                            a->n_authorization_servers));
	if (a->n_scopes_supported)
		json_object_set_new(o, "scopes_supported",
		                    strings(a->scopes_supported,
		                            a->n_scopes_supported));
	else if (a->n_required_scopes)
		json_object_set_new(o, "scopes_supported",
		                    strings(a->required_scopes,
		                            a->n_required_scopes));
	json_object_set_new(o, "bearer_methods_supported",
	                    json_pack("[s]", "header"));
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s;
}

/* The request's path without its query. */
static int is_metadata_path(const char *path, const char *mine)
{
	size_t n = strcspn(path, "?");

	return (n == strlen(WELL_KNOWN) && strncmp(path, WELL_KNOWN, n) == 0) ||
	       (n == strlen(mine) && strncmp(path, mine, n) == 0);
}

static enum mgw_check_verdict run(struct mgw_txn *t)
{
	const char *m = mgw_http_method(t->x);
	struct mgw_headers h;
	char *doc;

	if (!t->pl->auth || (strcmp(m, "GET") != 0 && strcmp(m, "HEAD") != 0) ||
	    !is_metadata_path(mgw_http_path(t->x),
	                      mgw_auth_wait_metadata_path(t->pl->auth)))
		return MGW_CHECK_PASS;
	doc = document(&t->pl->conf->auth);
	mgw_headers_init(&h);
	if (!doc || mgw_headers_adds(&h, "Content-Type", "application/json") ||
	    mgw_headers_adds(&h, "Cache-Control", "max-age=300") ||
	    mgw_headers_adds(&h, "Access-Control-Allow-Origin", "*")) {
		free(doc);
		mgw_headers_deinit(&h);
		mgw_txn_fail(t, MGW_PERR_INTERNAL, NULL);
		return MGW_CHECK_ANSWERED;
	}
	t->note = "protected resource metadata";
	mgw_txn_respond(t, 200, &h, doc, strlen(doc));
	mgw_headers_deinit(&h);
	free(doc);
	return MGW_CHECK_ANSWERED;
}

const struct mgw_check mgw_check_prm = {
	"protected-resource-metadata", MGW_PHASE_REQUEST,
	MGW_H_ALL, run,
};
