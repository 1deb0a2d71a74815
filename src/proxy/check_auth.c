/* check_auth.c - the gateway as an OAuth 2.1 resource server (auth:).
 * On a route with auth, a request must carry "Authorization: Bearer
 * TOKEN" where TOKEN is one of auth.static_tokens or a JWT that verifies
 * against the keyring (auth/keyring.h) for auth.issuer and the audience;
 * its scopes must hold the route's required scopes.  Answers (before
 * any upstream is contacted; RFC 6750 section 3, RFC 9728 section 5.1):
 *   no bearer credentials      401  WWW-Authenticate: Bearer
 *                                   resource_metadata="...", scope="..."
 *   a malformed Authorization  400  ... error="invalid_request"
 *   a token that is not valid  401  ... error="invalid_token"
 *   scopes missing             403  ... error="insufficient_scope"
 * each with the JSON-RPC error -32017 (401, 400) or -32018 (403).  A JWT
 * whose kid the keys lack (or any JWT before the first fetch) waits for
 * a JWKS fetch when one can start (MGW_CHECK_PENDING), then is checked
 * again once.  On success t->principal is who sent it.  OPTIONS (CORS
 * preflight, which carries no credentials) is not checked. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "auth/bearer.h"
#include "auth/conf_auth.h"
#include "auth/jwt.h"
#include "auth/keyring.h"
#include "auth/principal.h"
#include "core/errors.h"
#include "http/headers.h"
#include "http/server.h"
#include "proxy/auth_wait.h"
#include "proxy/checks.h"
#include "proxy/errors.h"
#include "proxy/handler.h"
#include "proxy/metrics.h"
#include "proxy/pipeline.h"
#include "proxy/pipeline-t.h"
#include "proxy/txn.h"
#include "util/time.h"

/* Most requests one worker keeps waiting for a JWKS fetch. */
#define MAX_WAITING 4096

enum outcome {
	OUT_OK,
	OUT_MISSING,       /* no bearer credentials: 401, no error code */
	OUT_MALFORMED,     /* 400 invalid_request */
	OUT_INVALID,       /* 401 invalid_token */
	OUT_SCOPE,         /* 403 insufficient_scope */
	OUT_WAIT,          /* unknown kid: a fetch may bring it */
};

/* A static token's principal, or NULL (not one of them). */
static struct mgw_principal *static_token(const struct mgw_auth_conf *a,
                                          const char *tok, size_t n,
                                          int *oom)
{
	unsigned char d[MGW_TOKEN_DIGEST_LEN], want[MGW_TOKEN_DIGEST_LEN];
	const struct mgw_static_token_conf *hit = NULL;
	struct mgw_principal *p;

	if (a->n_static_tokens == 0)
		return NULL;
	mgw_token_digest(tok, n, d);
	/* every entry is compared, so the time says nothing of which */
	for (size_t i = 0; i < a->n_static_tokens; i++)
		if (mgw_token_digest_parse(a->static_tokens[i].digest, want) == 0 &&
		    mgw_token_digest_equal(d, want) && !hit)
			hit = &a->static_tokens[i];
	if (!hit)
		return NULL;
	p = mgw_principal_new(MGW_PRINCIPAL_STATIC, hit->name, NULL);
	for (size_t i = 0; p && i < hit->n_scopes; i++)
		if (mgw_principal_add_scope(p, hit->scopes[i],
		                            strlen(hit->scopes[i])) != 0) {
			mgw_principal_free(p);
			p = NULL;
		}
	*oom = !p;
	return p;
}

/* The scopes t's route requires. */
static char *const *route_scopes(const struct mgw_txn *t, size_t *n)
{
	const struct mgw_route_conf *rc = t->route->conf;

	if (rc->n_required_scopes) {
		*n = rc->n_required_scopes;
		return rc->required_scopes;
	}
	*n = t->pl->conf->auth.n_required_scopes;
	return t->pl->conf->auth.required_scopes;
}

/* Copies s into a quoted-string's content: '"' and '\\' left out. */
static void qcopy(char *out, size_t len, const char *s)
{
	size_t j = 0;

	for (; *s && j + 1 < len; s++)
		if (*s != '"' && *s != '\\' && (unsigned char)*s >= 0x20)
			out[j++] = *s;
	out[j] = '\0';
}

/* The challenge (RFC 6750 section 3, RFC 9728 section 5.1) and the
 * JSON-RPC error; frees t. */
static void refuse(struct mgw_txn *t, enum outcome o, const char *why)
{
	static const char *const err_code[] = {
		[OUT_MALFORMED] = "invalid_request",
		[OUT_INVALID] = "invalid_token",
		[OUT_SCOPE] = "insufficient_scope",
	};
	const struct mgw_auth_wait *aw = t->pl->auth;
	char chal[1024], desc[200], scope[512] = "";
	size_t ns, off = 0;
	char *const *sc = route_scopes(t, &ns);
	struct mgw_headers h;
	struct mgw_proxy_reply r;
	int status = o == OUT_SCOPE ? 403 : o == OUT_MALFORMED ? 400 : 401;
	enum mgw_proxy_error e = o == OUT_SCOPE ? MGW_PERR_FORBIDDEN
	                                        : MGW_PERR_UNAUTHORIZED;
	json_t *data;
	int n;

	for (size_t i = 0; i < ns && off < sizeof(scope); i++) {
		n = snprintf(scope + off, sizeof(scope) - off, "%s%s",
		             i ? " " : "", sc[i]);
		if (n < 0)
			break;
		off += (size_t)n;
	}
	qcopy(desc, sizeof(desc), why ? why : "");
	n = snprintf(chal, sizeof(chal), "Bearer resource_metadata=\"%s\"",
	             mgw_auth_wait_metadata_url(aw));
	if (n > 0 && (size_t)n < sizeof(chal) && o != OUT_MISSING)
		n += snprintf(chal + n, sizeof(chal) - (size_t)n,
		              ", error=\"%s\"", err_code[o]);
	if (n > 0 && (size_t)n < sizeof(chal) && ns &&
	    (o == OUT_MISSING || o == OUT_SCOPE))
		n += snprintf(chal + n, sizeof(chal) - (size_t)n,
		              ", scope=\"%s\"", scope);
	if (n > 0 && (size_t)n < sizeof(chal) && *desc && o != OUT_MISSING)
		snprintf(chal + n, sizeof(chal) - (size_t)n,
		         ", error_description=\"%s\"", desc);
	mgw_metrics_auth(t->pl->mx, o == OUT_MISSING ? MGW_MX_AUTH_MISSING
	                 : o == OUT_SCOPE ? MGW_MX_AUTH_SCOPE
	                                  : MGW_MX_AUTH_INVALID);
	data = json_pack("{s:s,s:s}", "reason",
	                 o == OUT_MISSING ? "missing_token" : err_code[o],
	                 "resource_metadata", mgw_auth_wait_metadata_url(aw));
	t->note = o == OUT_MISSING ? "no bearer token"
	          : o == OUT_SCOPE ? "insufficient scope" : "invalid token";
	mgw_headers_init(&h);
	if (mgw_headers_adds(&h, "WWW-Authenticate", chal) != 0 ||
	    mgw_proxy_reply_build(&r, status, mgw_proxy_error_info(e)->code,
	                          why && o != OUT_MISSING ? why
	                          : mgw_proxy_error_info(e)->message,
	                          data, t->as_json,
	                          mgw_proxy_reply_id(t->have_msg ? &t->msg
	                                                         : NULL)) != 0) {
		mgw_headers_deinit(&h);
		mgw_txn_fail(t, MGW_PERR_INTERNAL, NULL);
		return;
	}
	mgw_txn_reply(t, &r, &h);
	mgw_headers_deinit(&h);
}

/* Checks t's credentials once (again after a fetch: last != 0, when an
 * unknown kid is final).  On OUT_OK t->principal is set. */
static enum outcome judge(struct mgw_txn *t, int last, char *why,
                          size_t whylen)
{
	const struct mgw_auth_conf *a = &t->pl->conf->auth;
	const char *v = mgw_http_req_header(t->x, "authorization");
	const char *tok = NULL;
	size_t n = 0, ns;
	char *const *sc;
	struct mgw_principal *p;
	struct mgw_jwt_policy pol = {0};
	struct mgw_jwks *keys;
	enum mgw_jwt_result jr;
	int oom = 0;

	*why = '\0';
	if (!v)
		return OUT_MISSING;
	switch (mgw_bearer_parse(v, &tok, &n)) {
	case MGW_BEARER_OK:
		break;
	case MGW_BEARER_NONE:
		return OUT_MISSING;     /* no bearer credentials */
	default:
		snprintf(why, whylen, "malformed Bearer credentials");
		return OUT_MALFORMED;
	}
	if (n > a->max_token_bytes) {
		snprintf(why, whylen, "token longer than auth.max_token_bytes");
		return OUT_INVALID;
	}
	p = static_token(a, tok, n, &oom);
	if (oom)
		return OUT_INVALID;
	if (!p) {
		keys = mgw_auth_wait_keys(t->pl->auth);
		if (!keys && !a->jwks_url) {
			snprintf(why, whylen, "unknown token");
			return OUT_INVALID;
		}
		pol.issuer = a->issuer;
		pol.audience = mgw_auth_audience(a);
		pol.skew = (int64_t)a->clock_skew;
		pol.max_token_bytes = a->max_token_bytes;
		jr = keys ? mgw_jwt_verify(tok, n, keys, &pol, mgw_wall_s(), &p,
		                           why, whylen)
		          : MGW_JWT_UNKNOWN_KID;
		if (jr == MGW_JWT_UNKNOWN_KID && !last)
			return OUT_WAIT;
		if (jr == MGW_JWT_UNKNOWN_KID && !*why)
			snprintf(why, whylen, "no key for the token (the JWKS "
			         "could not be fetched)");
		if (jr != MGW_JWT_OK)
			return OUT_INVALID;
	}
	sc = route_scopes(t, &ns);
	for (size_t i = 0; i < ns; i++)
		if (!mgw_principal_has_scope(p, sc[i])) {
			snprintf(why, whylen, "the token lacks scope '%s'", sc[i]);
			mgw_principal_free(p);
			return OUT_SCOPE;
		}
	mgw_principal_free(t->principal);
	t->principal = p;
	return OUT_OK;
}

/* After a fetch (or at once): answers t or lets it go on. */
static enum mgw_check_verdict decide(struct mgw_txn *t, int last)
{
	char why[160];
	enum outcome o = judge(t, last, why, sizeof(why));

	if (o == OUT_OK) {
		mgw_metrics_auth(t->pl->mx, MGW_MX_AUTH_OK);
		return MGW_CHECK_PASS;
	}
	if (o == OUT_WAIT) {
		if (mgw_auth_wait_size(t->pl->auth) < MAX_WAITING &&
		    mgw_keyring_ask(mgw_auth_wait_keyring(t->pl->auth)) &&
		    mgw_auth_wait_add(t->pl->auth, t) == 0)
			return MGW_CHECK_PENDING;
		return decide(t, 1);
	}
	refuse(t, o, why);
	return MGW_CHECK_ANSWERED;
}

/* A fetch ended: t (taken off the waiting list) is judged for good. */
void mgw_check_auth_resume(struct mgw_txn *t)
{
	if (decide(t, 1) == MGW_CHECK_PASS)
		mgw_pipeline_resume(t);
}

static enum mgw_check_verdict run(struct mgw_txn *t)
{
	if (!t->pl->conf->auth.enabled || !t->pl->auth || !t->route->conf->auth)
		return MGW_CHECK_PASS;
	if (strcmp(mgw_http_method(t->x), "OPTIONS") == 0)
		return MGW_CHECK_PASS;
	return decide(t, 0);
}

const struct mgw_check mgw_check_auth = {
	"auth", MGW_PHASE_ROUTED, MGW_H_ALL, run,
};
