/* principal.h - the principal of a request (principal-t.h). */
#ifndef MGW_AUTH_PRINCIPAL_H
#define MGW_AUTH_PRINCIPAL_H

#include "auth/principal-t.h"

/* A principal with copies of sub (required) and client_id (or NULL) and
 * no scopes; NULL when out of memory. */
struct mgw_principal *mgw_principal_new(enum mgw_principal_kind kind,
                                        const char *sub,
                                        const char *client_id);
/* Appends a copy of scope (n bytes); 0 or MGW_ENOMEM. */
int mgw_principal_add_scope(struct mgw_principal *p, const char *scope,
                            size_t n);
/* 1 if p holds scope (exact, case-sensitive: RFC 6749 section 3.3). */
int mgw_principal_has_scope(const struct mgw_principal *p,
                            const char *scope);
/* The claim name of p's JWT payload as a string (a string claim, or a
 * number or boolean written as JSON), into buf; NULL when absent or not a
 * scalar, or for a static token.  "sub", "client_id" and "scope" are
 * claims too. */
const char *mgw_principal_claim(const struct mgw_principal *p,
                                const char *name, char *buf, size_t len);
/* Another reference to p (same thread). */
struct mgw_principal *mgw_principal_ref(struct mgw_principal *p);
/* Drops a reference; the last one frees.  NULL allowed. */
void mgw_principal_free(struct mgw_principal *p);

#endif
