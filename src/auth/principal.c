/* principal.c - the principal of a request (principal.h). */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/principal.h"
#include "core/errors.h"

struct mgw_principal *mgw_principal_new(enum mgw_principal_kind kind,
                                        const char *sub,
                                        const char *client_id)
{
	struct mgw_principal *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->refs = 1;
	p->kind = kind;
	p->sub = strdup(sub ? sub : "");
	p->client_id = client_id ? strdup(client_id) : NULL;
	if (!p->sub || (client_id && !p->client_id)) {
		mgw_principal_free(p);
		return NULL;
	}
	return p;
}

int mgw_principal_add_scope(struct mgw_principal *p, const char *scope,
                            size_t n)
{
	char **v = realloc(p->scopes, (p->n_scopes + 1) * sizeof(*v));
	char *s;

	if (!v)
		return MGW_ENOMEM;
	p->scopes = v;
	s = malloc(n + 1);
	if (!s)
		return MGW_ENOMEM;
	memcpy(s, scope, n);
	s[n] = '\0';
	p->scopes[p->n_scopes++] = s;
	return 0;
}

int mgw_principal_has_scope(const struct mgw_principal *p, const char *scope)
{
	for (size_t i = 0; p && i < p->n_scopes; i++)
		if (strcmp(p->scopes[i], scope) == 0)
			return 1;
	return 0;
}

const char *mgw_principal_claim(const struct mgw_principal *p,
                                const char *name, char *buf, size_t len)
{
	json_t *v = p && p->claims ? json_object_get(p->claims, name) : NULL;

	if (!v || len == 0)
		return NULL;
	if (json_is_string(v)) {
		snprintf(buf, len, "%s", json_string_value(v));
	} else if (json_is_integer(v)) {
		snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	} else if (json_is_real(v)) {
		snprintf(buf, len, "%.17g", json_real_value(v));
	} else if (json_is_boolean(v)) {
		snprintf(buf, len, "%s", json_is_true(v) ? "true" : "false");
	} else {
		return NULL;
	}
	return buf;
}

struct mgw_principal *mgw_principal_ref(struct mgw_principal *p)
{
	p->refs++;
	return p;
}

void mgw_principal_free(struct mgw_principal *p)
{
	if (!p || --p->refs > 0)
		return;
	free(p->sub);
	free(p->client_id);
	for (size_t i = 0; i < p->n_scopes; i++)
		free(p->scopes[i]);
	free(p->scopes);
	json_decref(p->claims);
	free(p);
}
