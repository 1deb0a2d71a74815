/* checks.h - the request checks of the pipeline (pipeline.h).
 *
 * A check looks at a classified transaction and either lets it pass or
 * answers it (and so ends it).  Checks run in the order of the table in
 * checks.c, each in its phase (before or after the route is chosen), for
 * the handlers it names.  To add one: write check_NAME.c with a
 * `const struct mgw_check mgw_check_NAME`, declare it below, put it in the
 * table in checks.c at the place in the order it needs, add the file to
 * src/proxy/local.am, and test it in tests/unit/proxy/ or an integration
 * script. */
#ifndef MGW_PROXY_CHECKS_H
#define MGW_PROXY_CHECKS_H

#include <jansson.h>

#include "http/headers-t.h"
#include "mcp/jsonrpc.h"
#include "proxy/txn-t.h"

enum mgw_check_phase {
	MGW_PHASE_REQUEST = 0,  /* before the route: t->route is NULL */
	MGW_PHASE_ROUTED,       /* after it */
};

enum mgw_check_verdict {
	MGW_CHECK_PASS = 0,
	MGW_CHECK_ANSWERED,     /* t was answered and freed */
	MGW_CHECK_PENDING,      /* the check keeps t waiting (a key fetch, a
	                         * shared counter): it set t->pending_cancel
	                         * and later either calls
	                         * mgw_pipeline_resume(t) or answers t */
};

struct mgw_check {
	const char *name;
	enum mgw_check_phase phase;
	unsigned handlers;      /* MGW_H_* it applies to */
	enum mgw_check_verdict (*run)(struct mgw_txn *t);
};

extern const struct mgw_check mgw_check_singleton; /* check_singleton.c */
extern const struct mgw_check mgw_check_origin;    /* check_origin.c */
extern const struct mgw_check mgw_check_prm;       /* check_prm.c */
extern const struct mgw_check mgw_check_health;    /* check_health.c */
extern const struct mgw_check mgw_check_admin;     /* check_admin.c */
extern const struct mgw_check mgw_check_metrics;   /* check_metrics.c */
extern const struct mgw_check mgw_check_unreadable; /* check_body.c */
extern const struct mgw_check mgw_check_endpoint;  /* check_endpoint.c */
extern const struct mgw_check mgw_check_auth;      /* check_auth.c */
extern const struct mgw_check mgw_check_sep2243;   /* check_sep2243.c */
extern const struct mgw_check mgw_check_ratelimit; /* check_ratelimit.c */
extern const struct mgw_check mgw_check_policy;    /* check_policy.c */
extern const struct mgw_check mgw_check_affinity;  /* check_affinity.c */
extern const struct mgw_check mgw_check_mrtr;      /* check_mrtr.c */

/* The name (as spelled in answers) of the first header of h the gateway
 * reads that h holds more than once, or NULL (check_singleton.c). */
const char *mgw_check_repeated_header(const struct mgw_headers *h);

/* 1 if origin (an Origin value) is allowed by the n entries of allowed
 * (origins, or "self": the request's authority); 0 for "null" and for a
 * malformed value (check_origin.c). */
int mgw_origin_allowed(const char *origin, const char *authority,
                       char *const *allowed, size_t n);
/* Configuration check of one security.allowed_origins entry. */
int mgw_origin_entry_check(const char *s, char *why, size_t whylen);

/* 1 if a Content-Encoding field of h names a coding other than
 * "identity" (any case, in any element of the list): a body the gateway
 * cannot read as sent (check_sep2243.c). */
int mgw_body_content_coded(const struct mgw_headers *h);

/* What SEP-2243 validation does with the body of a modern POST on a
 * validating route (check_sep2243.c). */
enum mgw_confirm {
	MGW_CONFIRM_NONE = 0,  /* no MCP header, no JSON body: not MCP, pass */
	MGW_CONFIRM_CODED,     /* a content-coded body: 415 */
	MGW_CONFIRM_INVALID,   /* not a JSON-RPC message: 400 -32700/-32600 */
	MGW_CONFIRM_VALIDATE,  /* headers against the body (-32020, -32022) */
};

/* The decision for request headers h and classified body m, where
 * route_on_headers says the route matched on Mcp-Method / Mcp-Name.  A
 * request leaning on its MCP headers (that route, or an Mcp-Method or
 * Mcp-Name field) is judged whatever its Content-Type; one that does not
 * is judged when its body is JSON (it parsed, or its type says so). */
enum mgw_confirm mgw_confirm_need(const struct mgw_headers *h,
                                  const struct mgw_jrpc_msg *m,
                                  int route_on_headers);

/* Runs the checks of phase that apply to t's handler, in order, from the
 * table's entry t->check_next on (the pipeline sets it to 0 before each
 * phase).  MGW_CHECK_ANSWERED when one answered t (it is gone),
 * MGW_CHECK_PENDING when one keeps it (t->check_next is then the entry
 * after it). */
enum mgw_check_verdict mgw_checks_run(struct mgw_txn *t,
                                      enum mgw_check_phase phase);

/* The checks in order (for tests and docs); *n gets their number. */
const struct mgw_check *const *mgw_checks_table(size_t *n);

/* 1 if t's body is JSON: it parsed, or its Content-Type says so (a body
 * the reader refused: a syntax error, a duplicate member, nesting past
 * the limit, a number out of range). */
int mgw_check_json_body(const struct mgw_txn *t);

/* Answers a JSON body that is not valid JSON-RPC (400 with the parse or
 * invalid-request code and the id when one was read).  Returns
 * MGW_CHECK_ANSWERED. */
enum mgw_check_verdict mgw_check_reject_body(struct mgw_txn *t);

/* A request refused on its headers or body, counted as such
 * (rejected_headers): status with a JSON-RPC error (code, msg, data taken
 * over; the request's id when it had one; a JSON body when as_json), the
 * access line's note.  Returns MGW_CHECK_ANSWERED. */
enum mgw_check_verdict mgw_check_reject(struct mgw_txn *t, int status,
                                        int code, const char *msg,
                                        json_t *data, int as_json,
                                        const char *note);

/* 1 when a GET or DELETE is aimed at the MCP endpoint, which stateless
 * mode answers 405 itself: the path is "/mcp", or the request carries an
 * MCP transport header (Mcp-Session-Id, MCP-Protocol-Version,
 * Last-Event-ID), or it is a GET accepting text/event-stream (the legacy
 * standalone stream).  Other GETs (OAuth metadata under /.well-known/,
 * health pages) are forwarded. */
int mgw_proxy_is_mcp_endpoint(const char *method, const char *path,
                              const struct mgw_headers *h);

#endif
