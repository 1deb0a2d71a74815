/* config_fuzz.c - libFuzzer target for the configuration loader
 * (src/core/cfgtree.c, cfgschema.c, config.c, and the mcpgw schema of
 * src/conf/config.c with the modules' conf_*.c): any byte string must load
 * or fail without crashing, leaking or tripping a sanitizer; a failure must
 * be one line that names the file and a 1-based LINE:COLUMN (or the file
 * alone), and a success must hold the invariants the rest of mcpgw relies
 * on (every listener has an address, TLS has both files or neither; a
 * gateway section has groups with servers whose URLs parse and fit the
 * group's protocol, unique names, routes naming existing groups, and
 * max_ejection >= base_ejection).
 *
 * Build (from the source tree, $B a configured build dir, see README.md):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -std=c11 -D_GNU_SOURCE \
 *     -Isrc -I$B $(pkg-config --cflags libevent libnghttp2 openssl) \
 *     tests/fuzz/config_fuzz.c src/conf/config.c src/core/config.c \
 *     src/core/cfgschema.c src/core/cfgtree.c src/core/cfgcheck.c \
 *     src/core/log.c src/backend/conf_backend.c src/proxy/conf_*.c \
 *     src/session/conf_sessions.c \
 *     $(find src/util src/http src/net -name '*.c') \
 *     -o config_fuzz $(pkg-config --libs yaml-0.1 libevent \
 *     libevent_openssl libnghttp2 openssl) -lhttp_parser -lm
 *   ./config_fuzz -max_len=4096 CORPUS_COPY_OF_corpus/config
 * (src/http is needed for mgw_http_limits_default and the header-name
 * checks.) */
#include "autoconf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "util/url.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_error(const char *err)
{
	const char *p = err + strlen("fuzz.yaml");
	char *end;

	if (strncmp(err, "fuzz.yaml", strlen("fuzz.yaml")) != 0 ||
	    strchr(err, '\n'))
		abort();
	if (p[0] != ':')
		abort();
	if (p[1] == ' ') /* "fuzz.yaml: message" */
		return;
	if (strtoul(p + 1, &end, 10) < 1 || *end != ':' ||
	    strtoul(end + 1, &end, 10) < 1 || *end != ':')
		abort();
}

static void check_config(const struct mgw_config *c)
{
	if (c->n_listeners && !c->listeners)
		abort();
	for (size_t i = 0; i < c->n_listeners; i++) {
		const struct mgw_listener_conf *l = &c->listeners[i];

		if (!l->address || !*l->address)
			abort();
		if (!l->tls_cert != !l->tls_key)
			abort();
	}
	if (!c->backend.path || c->backend.path[0] != '/' ||
	    !c->backend.redis_url)
		abort();
	if (c->backend.lost_session_status != 404 &&
	    c->backend.lost_session_status != 400)
		abort();
}

static int has_group(const struct mgw_serve_conf *s, const char *name)
{
	for (size_t i = 0; i < s->n_upstreams; i++)
		if (strcmp(s->upstreams[i].name, name) == 0)
			return 1;
	return 0;
}

static void check_serve(const struct mgw_config *c)
{
	const struct mgw_serve_conf *s = &c->serve;

	if (!c->has_serve) {
		if (s->n_upstreams || s->n_routes)
			abort();
		return;
	}
	if (s->n_upstreams == 0 || s->n_routes == 0)
		abort();
	for (size_t i = 0; i < s->n_upstreams; i++) {
		const struct mgw_upstream_conf *u = &s->upstreams[i];

		if (!u->name || u->n_servers == 0 || !u->health.method ||
		    !u->health.body)
			abort();
		if (u->balancer == MGW_BAL_HASH && !u->hash_header)
			abort();
		if (u->outlier.max_ejection < u->outlier.base_ejection)
			abort();
		for (size_t j = 0; j < u->n_servers; j++) {
			struct mgw_url url;

			if (mgw_url_parse(u->servers[j].url, &url, NULL, 0) != 0 ||
			    u->servers[j].weight < 1 || u->servers[j].weight > 1000)
				abort();
			if ((url.tls && u->protocol == MGW_UP_H2C) ||
			    (!url.tls && u->protocol == MGW_UP_ALPN))
				abort();
		}
		for (size_t j = 0; j < i; j++)
			if (strcmp(s->upstreams[j].name, u->name) == 0)
				abort();
	}
	for (size_t i = 0; i < s->n_routes; i++)
		if (!s->routes[i].upstream || !has_group(s, s->routes[i].upstream))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	struct mgw_config *c;

	err[0] = '\0';
	c = mgw_config_load_string("fuzz.yaml", (const char *)data, size, err,
	                           sizeof(err));
	if (!c) {
		check_error(err);
		return 0;
	}
	check_config(c);
	check_serve(c);
	mgw_config_free(c);
	return 0;
}
