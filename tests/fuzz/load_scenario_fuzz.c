/* load_scenario_fuzz.c - libFuzzer target for `mcpgw load` scenario files
 * (src/load/scenario.c on the cfgschema engine) and the --arg syntax.
 * First byte odd: the rest, up to the first newline, is one --arg; even:
 * the rest is a scenario file.  Any input must parse or fail without
 * crashing, leaking or tripping a sanitizer; a failure is one line naming
 * the file (and a 1-based LINE:COLUMN when it has one); a success holds
 * what the engine relies on: every call has a name, a tool and an object
 * of arguments and a positive weight, a counter flow has its create tool
 * and handle argument, every target is a URL that parses, a phase's
 * concurrency is at least 1, and an open phase has a rate.  The final
 * check (mgw_load_conf_check) must not crash either way.
 *
 * Build (from the source tree, $B a configured build dir, see README.md):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -std=c11 -D_GNU_SOURCE \
 *     -Isrc -I$B $(pkg-config --cflags jansson) \
 *     tests/fuzz/load_scenario_fuzz.c src/load/scenario.c \
 *     src/core/cfgschema.c src/core/cfgtree.c src/http/headers.c \
 *     src/util/parse.c src/util/url.c \
 *     -o load_scenario_fuzz $(pkg-config --libs yaml-0.1 jansson) -lm */
#include "autoconf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "load/scenario.h"
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
	if (p[1] < '1' || p[1] > '9')
		return; /* "fuzz.yaml: message" */
	if (strtoul(p + 1, &end, 10) < 1 || *end != ':' ||
	    strtoul(end + 1, &end, 10) < 1 || *end != ':')
		abort();
}

static void check_plan(const struct mgw_load_conf *c)
{
	char err[512];

	for (size_t i = 0; i < c->n_calls; i++) {
		const struct mgw_load_call *k = &c->calls[i];

		if (!k->name || !k->tool || !json_is_object(k->arguments) ||
		    !(k->weight > 0))
			abort();
		if (k->flow == MGW_LOAD_FLOW_COUNTER &&
		    (!k->create_tool || !k->handle_arg))
			abort();
	}
	for (size_t i = 0; i < c->transport.n_targets; i++) {
		struct mgw_url u;

		if (mgw_url_parse(c->transport.targets[i], &u, NULL, 0) != 0)
			abort();
	}
	for (size_t i = 0; i < c->n_phases; i++) {
		const struct mgw_load_phase *p = &c->phases[i];

		if (!p->name || p->concurrency < 1)
			abort();
		if (p->mode == MGW_LOAD_OPEN && !(p->rate > 0))
			abort();
	}
	err[0] = '\0';
	if (mgw_load_conf_check(c, err, sizeof(err)) != 0 && !err[0])
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mgw_load_conf *c;
	char err[512];

	if (size == 0)
		return 0;
	if (data[0] & 1) {
		size_t n = 0;
		char *arg;
		json_t *obj = json_object();

		while (n + 1 < size && data[1 + n] != '\n' && data[1 + n] != 0)
			n++;
		arg = malloc(n + 1);
		if (!arg || !obj)
			abort();
		memcpy(arg, data + 1, n);
		arg[n] = '\0';
		err[0] = '\0';
		if (mgw_load_parse_arg(obj, arg, err, sizeof(err)) == 0) {
			if (json_object_size(obj) != 1)
				abort();
		} else if (!err[0]) {
			abort();
		}
		json_decref(obj);
		free(arg);
		return 0;
	}
	c = mgw_load_conf_new();
	if (!c)
		abort();
	err[0] = '\0';
	if (mgw_load_scenario_parse(c, "fuzz.yaml", (const char *)data + 1,
	                            size - 1, err, sizeof(err)) != 0)
		check_error(err);
	else
		check_plan(c);
	mgw_load_conf_free(c);
	return 0;
}
