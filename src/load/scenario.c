/* scenario.c - the plan of a `mcpgw load` run: defaults, scenario files
 * and final validation (contract in scenario.h).
 *
 * Scenario files go through the same cfgschema engine as mcpgw's own
 * configuration, with their own section tables below.  Two kinds of value
 * have no schema type: the target list (a list of strings) and each call's
 * `arguments` and `answers` (free JSON).  They are detached from the document tree before
 * the schema is applied and converted here, with the same FILE:LINE:COL
 * error style. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/cfgschema.h"
#include "core/cfgtree.h"
#include "core/errors.h"
#include "http/headers.h"
#include "load/scenario.h"
#include "util/parse.h"
#include "util/url.h"

#define NFIELDS(a) (sizeof(a) / sizeof((a)[0]))

/* ---- enumerations ---- */

static const struct mgw_cfg_enum transports[] = {
	{"http", MGW_LOAD_HTTP}, {"stdio", MGW_LOAD_STDIO}, {NULL, 0},
};
static const struct mgw_cfg_enum conns[] = {
	{"reuse", MGW_LOAD_CONN_REUSE}, {"new", MGW_LOAD_CONN_NEW}, {NULL, 0},
};
static const struct mgw_cfg_enum dialects[] = {
	{"legacy", MGW_LOAD_LEGACY}, {"modern", MGW_LOAD_MODERN},
	{"auto", MGW_LOAD_AUTO}, {NULL, 0},
};
static const struct mgw_cfg_enum flows[] = {
	{"call", MGW_LOAD_FLOW_CALL}, {"counter", MGW_LOAD_FLOW_COUNTER},
	{"mrtr", MGW_LOAD_FLOW_MRTR}, {"task", MGW_LOAD_FLOW_TASK},
	{NULL, 0},
};
static const struct mgw_cfg_enum thinks[] = {
	{"none", MGW_THINK_NONE}, {"fixed", MGW_THINK_FIXED},
	{"uniform", MGW_THINK_UNIFORM}, {"agent", MGW_THINK_AGENT}, {NULL, 0},
};

const char *mgw_load_dialect_name(int d) { return mgw_cfg_enum_name(dialects, d); }
const char *mgw_load_conn_name(int c) { return mgw_cfg_enum_name(conns, c); }
const char *mgw_load_think_name(int k) { return mgw_cfg_enum_name(thinks, k); }

int mgw_load_parse_dialect(const char *s, int *out)
{
	return mgw_cfg_enum_lookup(dialects, s, out);
}

int mgw_load_parse_conn(const char *s, int *out)
{
	return mgw_cfg_enum_lookup(conns, s, out);
}

/* The agent-shaped pause mix: a model reading a tool result takes a
 * fraction of a second; now and then it deliberates for seconds. */
#define AGENT_MIN 0.05
#define AGENT_MAX 0.5
#define AGENT_LONG_MIN 2.0
#define AGENT_LONG_MAX 10.0
#define AGENT_LONG_SHARE 0.1

static void think_agent_defaults(struct mgw_load_think *t)
{
	*t = (struct mgw_load_think){
		.kind = MGW_THINK_AGENT, .min = AGENT_MIN, .max = AGENT_MAX,
		.long_min = AGENT_LONG_MIN, .long_max = AGENT_LONG_MAX,
		.long_share = AGENT_LONG_SHARE,
	};
}

int mgw_load_parse_think(const char *s, struct mgw_load_think *out)
{
	const char *dash;
	double a, b;

	if (strcmp(s, "none") == 0) {
		*out = (struct mgw_load_think){.kind = MGW_THINK_NONE};
		return 0;
	}
	if (strcmp(s, "agent") == 0) {
		think_agent_defaults(out);
		return 0;
	}
	dash = strchr(s, '-');
	if (!dash) {
		/* at most 3600 s, as a scenario's think keys */
		if (mgw_parse_duration(s, &a) != 0 || a > 3600)
			return MGW_EINVAL;
		*out = (struct mgw_load_think){.kind = a > 0 ? MGW_THINK_FIXED
		                                             : MGW_THINK_NONE,
		                               .min = a, .max = a};
		return 0;
	}
	{
		char lo[64];
		size_t n = (size_t)(dash - s);

		if (n == 0 || n >= sizeof(lo))
			return MGW_EINVAL;
		memcpy(lo, s, n);
		lo[n] = '\0';
		if (mgw_parse_duration(lo, &a) != 0 ||
		    mgw_parse_duration(dash + 1, &b) != 0 || b < a || b > 3600)
			return MGW_EINVAL;
	}
	*out = (struct mgw_load_think){.kind = MGW_THINK_UNIFORM, .min = a,
	                               .max = b};
	return 0;
}

/* ---- string checks ---- */

static int check_header_name(const char *s, char *why, size_t whylen)
{
	if (mgw_header_name_valid(s, strlen(s)))
		return 0;
	snprintf(why, whylen, "'%.60s' is not a valid header name", s);
	return -1;
}

static int check_header_value(const char *s, char *why, size_t whylen)
{
	if (mgw_header_value_valid(s, strlen(s)))
		return 0;
	snprintf(why, whylen, "must not contain control characters");
	return -1;
}

static int check_nonempty(const char *s, char *why, size_t whylen)
{
	if (*s)
		return 0;
	snprintf(why, whylen, "must not be empty");
	return -1;
}

/* ---- section checks ---- */

static int check_think(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                       void *obj)
{
	struct mgw_load_think *t = obj;

	/* The agent mix comes with its own defaults; keys given win. */
	if (t->kind == MGW_THINK_AGENT) {
		struct mgw_load_think d;

		think_agent_defaults(&d);
		if (!mgw_cfg_scope_value(sc, "min"))
			t->min = d.min;
		if (!mgw_cfg_scope_value(sc, "max"))
			t->max = d.max;
		if (!mgw_cfg_scope_value(sc, "long_min"))
			t->long_min = d.long_min;
		if (!mgw_cfg_scope_value(sc, "long_max"))
			t->long_max = d.long_max;
		if (!mgw_cfg_scope_value(sc, "long_share"))
			t->long_share = d.long_share;
	}
	if (t->kind == MGW_THINK_FIXED && !mgw_cfg_scope_value(sc, "max"))
		t->max = t->min;
	if (t->max < t->min)
		return mgw_cfg_fail(c, mgw_cfg_scope_value(sc, "max")
		                       ? mgw_cfg_scope_value(sc, "max") : sc->map,
		                    "max", "must not be below min (%gs)", t->min);
	if (t->long_max < t->long_min)
		return mgw_cfg_fail(c, mgw_cfg_scope_value(sc, "long_max")
		                       ? mgw_cfg_scope_value(sc, "long_max")
		                       : sc->map,
		                    "long_max", "must not be below long_min (%gs)",
		                    t->long_min);
	return 0;
}

static int check_header(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                        void *obj)
{
	const struct mgw_load_header *h = obj;

	if (!h->value == !h->env)
		return mgw_cfg_fail(c, sc->map, NULL,
		                    "give exactly one of value or env");
	return 0;
}

static int dupstr(struct mgw_cfg_ctx *c, const struct mgw_cfg_node *at,
                  char **dst, const char *s)
{
	if (*dst)
		return 0;
	*dst = strdup(s);
	if (*dst)
		return 0;
	mgw_cfg_fail(c, at, NULL, "out of memory");
	return MGW_ENOMEM;
}

static int check_call(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                      void *obj)
{
	struct mgw_load_call *k = obj;
	const struct mgw_cfg_node *w = mgw_cfg_scope_value(sc, "weight");
	int rc = 0;

	if (!(k->weight > 0))
		return mgw_cfg_fail(c, w ? w : sc->map, "weight",
		                    "must be greater than 0");
	if (k->flow == MGW_LOAD_FLOW_COUNTER) {
		rc = dupstr(c, sc->map, &k->tool, "counter_increment");
		if (!rc)
			rc = dupstr(c, sc->map, &k->create_tool, "counter_create");
		if (!rc)
			rc = dupstr(c, sc->map, &k->handle_arg, "handle");
		if (!rc)
			rc = dupstr(c, sc->map, &k->name, "counter");
		return rc;
	}
	if (k->flow == MGW_LOAD_FLOW_TASK) {
		rc = dupstr(c, sc->map, &k->tool, "slow_job");
		return rc ? rc : dupstr(c, sc->map, &k->name, "task");
	}
	if (!k->tool)
		return mgw_cfg_fail(c, sc->map, "tool", "missing required key");
	return dupstr(c, sc->map, &k->name, k->tool);
}

static int check_phase(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                       void *obj)
{
	struct mgw_load_phase *p = obj;

	p->has_rate = mgw_cfg_scope_value(sc, "rate") != NULL;
	p->has_concurrency = mgw_cfg_scope_value(sc, "concurrency") != NULL;
	if (p->has_rate) {
		p->mode = MGW_LOAD_OPEN;
		if (!p->has_concurrency)
			p->concurrency = 64;
	}
	(void)c; /* a phase without duration or requests may get them from
	          * the command line; mgw_load_conf_check decides */
	return 0;
}

static int check_gates(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                       void *obj)
{
	struct mgw_load_gates *g = obj;

	(void)c;
	g->has_max_p95_ms = mgw_cfg_scope_value(sc, "max_p95_ms") != NULL;
	g->has_max_p99_ms = mgw_cfg_scope_value(sc, "max_p99_ms") != NULL;
	g->has_max_error_rate = mgw_cfg_scope_value(sc, "max_error_rate") != NULL;
	g->has_min_rps = mgw_cfg_scope_value(sc, "min_rps") != NULL;
	g->has_max_session_losses =
		mgw_cfg_scope_value(sc, "max_session_losses") != NULL;
	g->has_max_handle_losses =
		mgw_cfg_scope_value(sc, "max_handle_losses") != NULL;
	g->has_max_state_losses =
		mgw_cfg_scope_value(sc, "max_state_losses") != NULL;
	return 0;
}

/* ---- tables ---- */

static const struct mgw_cfg_field transport_fields[] = {
	{.key = "type", .type = MGW_CFG_ENUM,
	 MGW_CFG_AT(struct mgw_load_transport_conf, type), .def = "http",
	 .enums = transports},
	{.key = "connection", .type = MGW_CFG_ENUM,
	 MGW_CFG_AT(struct mgw_load_transport_conf, connection), .def = "reuse",
	 .enums = conns},
	{.key = "reconnect_after", .type = MGW_CFG_INT,
	 MGW_CFG_AT(struct mgw_load_transport_conf, reconnect_after), .def = "0",
	 .min = 0, .max = 1000000000},
	{.key = "http2", .type = MGW_CFG_BOOL,
	 MGW_CFG_AT(struct mgw_load_transport_conf, http2), .def = "false"},
	{.key = "ca_file", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_load_transport_conf, ca_file),
	 .check = check_nonempty},
	{.key = "command", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_load_transport_conf, command),
	 .check = check_nonempty},
};
static const struct mgw_cfg_section transport_section = {
	.size = sizeof(struct mgw_load_transport_conf),
	.fields = transport_fields, .nfields = NFIELDS(transport_fields),
};

static const struct mgw_cfg_field think_fields[] = {
	{.key = "mode", .type = MGW_CFG_ENUM,
	 MGW_CFG_AT(struct mgw_load_think, kind), .def = "none", .enums = thinks},
	{.key = "min", .type = MGW_CFG_DURATION,
	 MGW_CFG_AT(struct mgw_load_think, min), .def = "0", .dmax = 3600},
	{.key = "max", .type = MGW_CFG_DURATION,
	 MGW_CFG_AT(struct mgw_load_think, max), .def = "0", .dmax = 3600},
	{.key = "long_min", .type = MGW_CFG_DURATION,
	 MGW_CFG_AT(struct mgw_load_think, long_min), .def = "0", .dmax = 3600},
	{.key = "long_max", .type = MGW_CFG_DURATION,
	 MGW_CFG_AT(struct mgw_load_think, long_max), .def = "0", .dmax = 3600},
	{.key = "long_share", .type = MGW_CFG_NUMBER,
	 MGW_CFG_AT(struct mgw_load_think, long_share), .def = "0", .dmax = 1},
};
static const struct mgw_cfg_section think_section = {
	.size = sizeof(struct mgw_load_think),
	.fields = think_fields, .nfields = NFIELDS(think_fields),
	.check = check_think,
};

static const struct mgw_cfg_field header_fields[] = {
	{.key = "name", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_load_header, name), .flags = MGW_CFG_REQUIRED,
	 .check = check_header_name},
	{.key = "value", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_load_header, value), .check = check_header_value},
	{.key = "env", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_load_header, env), .check = check_nonempty},
};
static const struct mgw_cfg_section header_section = {
	.size = sizeof(struct mgw_load_header),
	.fields = header_fields, .nfields = NFIELDS(header_fields),
	.check = check_header,
};

static const struct mgw_cfg_field auth_fields[] = {
	{.key = "headers", .type = MGW_CFG_LIST,
	 MGW_CFG_AT(struct mgw_load_auth_conf, headers),
	 .aux = offsetof(struct mgw_load_auth_conf, n_headers),
	 .sub = &header_section},
	{.key = "command", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_load_auth_conf, command), .check = check_nonempty},
};
static const struct mgw_cfg_section auth_section = {
	.size = sizeof(struct mgw_load_auth_conf),
	.fields = auth_fields, .nfields = NFIELDS(auth_fields),
};

/* `arguments` and `answers` are detached before the schema runs (see
 * take_key). */
static const struct mgw_cfg_field call_fields[] = {
	{.key = "name", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_load_call, name), .check = check_nonempty},
	{.key = "tool", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_load_call, tool), .check = check_nonempty},
	{.key = "flow", .type = MGW_CFG_ENUM,
	 MGW_CFG_AT(struct mgw_load_call, flow), .def = "call", .enums = flows},
	{.key = "weight", .type = MGW_CFG_NUMBER,
	 MGW_CFG_AT(struct mgw_load_call, weight), .def = "1", .dmax = 1e6},
	{.key = "create_tool", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_load_call, create_tool), .check = check_nonempty},
	{.key = "handle_arg", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_load_call, handle_arg), .check = check_nonempty},
	{.key = "max_rounds", .type = MGW_CFG_INT,
	 MGW_CFG_AT(struct mgw_load_call, max_rounds), .def = "20", .min = 1,
	 .max = 1000},
	{.key = "fork_every", .type = MGW_CFG_INT,
	 MGW_CFG_AT(struct mgw_load_call, fork_every), .def = "0", .min = 0,
	 .max = 1000000},
	{.key = "fork_round", .type = MGW_CFG_INT,
	 MGW_CFG_AT(struct mgw_load_call, fork_round), .def = "0", .min = 0,
	 .max = 1000},
};
static const struct mgw_cfg_section call_section = {
	.size = sizeof(struct mgw_load_call),
	.fields = call_fields, .nfields = NFIELDS(call_fields),
	.check = check_call,
};

static const struct mgw_cfg_field phase_fields[] = {
	{.key = "name", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_load_phase, name), .check = check_nonempty},
	{.key = "warmup", .type = MGW_CFG_BOOL,
	 MGW_CFG_AT(struct mgw_load_phase, warmup), .def = "false"},
	{.key = "concurrency", .type = MGW_CFG_INT,
	 MGW_CFG_AT(struct mgw_load_phase, concurrency), .def = "1", .min = 1,
	 .max = 100000},
	{.key = "rate", .type = MGW_CFG_NUMBER,
	 MGW_CFG_AT(struct mgw_load_phase, rate), .dmin = 0.001, .dmax = 10000000},
	{.key = "backlog", .type = MGW_CFG_INT,
	 MGW_CFG_AT(struct mgw_load_phase, backlog), .def = "0", .min = 0,
	 .max = 10000000},
	{.key = "duration", .type = MGW_CFG_DURATION,
	 MGW_CFG_AT(struct mgw_load_phase, duration), .def = "0",
	 .dmax = 30 * 86400.0},
	{.key = "requests", .type = MGW_CFG_INT,
	 MGW_CFG_AT(struct mgw_load_phase, requests), .def = "0", .min = 0,
	 .max = 1000000000000LL},
};
static const struct mgw_cfg_section phase_section = {
	.size = sizeof(struct mgw_load_phase),
	.fields = phase_fields, .nfields = NFIELDS(phase_fields),
	.check = check_phase,
};

static const struct mgw_cfg_field gate_fields[] = {
	{.key = "max_p95_ms", .type = MGW_CFG_NUMBER,
	 MGW_CFG_AT(struct mgw_load_gates, max_p95_ms), .dmax = 1e9},
	{.key = "max_p99_ms", .type = MGW_CFG_NUMBER,
	 MGW_CFG_AT(struct mgw_load_gates, max_p99_ms), .dmax = 1e9},
	{.key = "max_error_rate", .type = MGW_CFG_NUMBER,
	 MGW_CFG_AT(struct mgw_load_gates, max_error_rate), .dmax = 1},
	{.key = "min_rps", .type = MGW_CFG_NUMBER,
	 MGW_CFG_AT(struct mgw_load_gates, min_rps), .dmax = 1e9},
	{.key = "max_session_losses", .type = MGW_CFG_INT,
	 MGW_CFG_AT(struct mgw_load_gates, max_session_losses), .min = 0,
	 .max = 1000000000000LL},
	{.key = "max_handle_losses", .type = MGW_CFG_INT,
	 MGW_CFG_AT(struct mgw_load_gates, max_handle_losses), .min = 0,
	 .max = 1000000000000LL},
	{.key = "max_state_losses", .type = MGW_CFG_INT,
	 MGW_CFG_AT(struct mgw_load_gates, max_state_losses), .min = 0,
	 .max = 1000000000000LL},
};
static const struct mgw_cfg_section gate_section = {
	.size = sizeof(struct mgw_load_gates),
	.fields = gate_fields, .nfields = NFIELDS(gate_fields),
	.check = check_gates,
};

static const struct mgw_cfg_field output_fields[] = {
	{.key = "json", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_load_output_conf, json), .check = check_nonempty},
	{.key = "csv", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_load_output_conf, csv), .check = check_nonempty},
	{.key = "clock_file", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_load_output_conf, clock_file),
	 .check = check_nonempty},
	{.key = "progress_file", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_load_output_conf, progress_file),
	 .check = check_nonempty},
};
static const struct mgw_cfg_section output_section = {
	.size = sizeof(struct mgw_load_output_conf),
	.fields = output_fields, .nfields = NFIELDS(output_fields),
};

/* `targets` is detached before the schema runs (see take_key). */
static const struct mgw_cfg_field root_fields[] = {
	{.key = "name", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_load_conf, name), .check = check_nonempty},
	{.key = "transport", .type = MGW_CFG_SECTION,
	 .off = offsetof(struct mgw_load_conf, transport),
	 .sub = &transport_section},
	{.key = "dialect", .type = MGW_CFG_ENUM,
	 MGW_CFG_AT(struct mgw_load_conf, dialect), .def = "auto",
	 .enums = dialects},
	{.key = "protocol_version", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_load_conf, protocol_version),
	 .check = check_header_value},
	{.key = "client_name", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_load_conf, client_name), .check = check_nonempty},
	{.key = "list_tools", .type = MGW_CFG_BOOL,
	 MGW_CFG_AT(struct mgw_load_conf, list_tools), .def = "false"},
	{.key = "lost_session_match", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_load_conf, lost_session_match)},
	{.key = "timeout", .type = MGW_CFG_DURATION,
	 MGW_CFG_AT(struct mgw_load_conf, timeout), .def = "10s", .dmax = 3600},
	{.key = "think", .type = MGW_CFG_SECTION,
	 .off = offsetof(struct mgw_load_conf, think), .sub = &think_section},
	{.key = "spread_users", .type = MGW_CFG_BOOL,
	 MGW_CFG_AT(struct mgw_load_conf, spread_users), .def = "false"},
	{.key = "users", .type = MGW_CFG_INT,
	 MGW_CFG_AT(struct mgw_load_conf, users), .def = "0", .min = 0,
	 .max = 1000000},
	{.key = "delete_sessions", .type = MGW_CFG_INT,
	 MGW_CFG_AT(struct mgw_load_conf, delete_sessions), .def = "0",
	 .min = 0, .max = 1000000000},
	{.key = "seed", .type = MGW_CFG_INT,
	 MGW_CFG_AT(struct mgw_load_conf, seed), .def = "0", .min = 0,
	 .max = 0x7fffffffffffffffLL},
	{.key = "auth", .type = MGW_CFG_SECTION,
	 .off = offsetof(struct mgw_load_conf, auth), .sub = &auth_section},
	{.key = "calls", .type = MGW_CFG_LIST,
	 MGW_CFG_AT(struct mgw_load_conf, calls),
	 .aux = offsetof(struct mgw_load_conf, n_calls), .sub = &call_section},
	{.key = "phases", .type = MGW_CFG_LIST,
	 MGW_CFG_AT(struct mgw_load_conf, phases),
	 .aux = offsetof(struct mgw_load_conf, n_phases), .sub = &phase_section},
	{.key = "gates", .type = MGW_CFG_SECTION,
	 .off = offsetof(struct mgw_load_conf, gates), .sub = &gate_section},
	{.key = "output", .type = MGW_CFG_SECTION,
	 .off = offsetof(struct mgw_load_conf, output), .sub = &output_section},
};
static const struct mgw_cfg_section root_section = {
	.size = sizeof(struct mgw_load_conf),
	.fields = root_fields, .nfields = NFIELDS(root_fields),
};

/* ---- plan lifecycle ---- */

struct mgw_load_conf *mgw_load_conf_new(void)
{
	struct mgw_load_conf *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	mgw_cfg_defaults(&root_section, c);
	return c;
}

void mgw_load_conf_clear_calls(struct mgw_load_conf *c)
{
	for (size_t i = 0; i < c->n_calls; i++) {
		json_decref(c->calls[i].arguments);
		json_decref(c->calls[i].answers);
		mgw_cfg_release(&call_section, &c->calls[i]);
	}
	free(c->calls);
	c->calls = NULL;
	c->n_calls = 0;
}

void mgw_load_conf_clear_phases(struct mgw_load_conf *c)
{
	for (size_t i = 0; i < c->n_phases; i++)
		mgw_cfg_release(&phase_section, &c->phases[i]);
	free(c->phases);
	c->phases = NULL;
	c->n_phases = 0;
}

void mgw_load_conf_clear_targets(struct mgw_load_conf *c)
{
	for (size_t i = 0; i < c->transport.n_targets; i++)
		free(c->transport.targets[i]);
	free(c->transport.targets);
	c->transport.targets = NULL;
	c->transport.n_targets = 0;
}

void mgw_load_conf_clear_auth_headers(struct mgw_load_conf *c)
{
	for (size_t i = 0; i < c->auth.n_headers; i++) {
		free(c->auth.headers[i].name);
		free(c->auth.headers[i].value);
		free(c->auth.headers[i].env);
	}
	free(c->auth.headers);
	c->auth.headers = NULL;
	c->auth.n_headers = 0;
}

void mgw_load_conf_free(struct mgw_load_conf *c)
{
	if (!c)
		return;
	mgw_load_conf_clear_calls(c);
	mgw_load_conf_clear_phases(c);
	mgw_load_conf_clear_targets(c);
	mgw_cfg_release(&root_section, c);
	free(c->source);
	free(c);
}

int mgw_load_conf_add_target(struct mgw_load_conf *c, const char *url)
{
	char **v = realloc(c->transport.targets,
	                   (c->transport.n_targets + 1) * sizeof(*v));
	char *s;

	if (!v)
		return MGW_ENOMEM;
	c->transport.targets = v;
	s = strdup(url);
	if (!s)
		return MGW_ENOMEM;
	v[c->transport.n_targets++] = s;
	return 0;
}

struct mgw_load_phase *mgw_load_conf_add_phase(struct mgw_load_conf *c,
                                               const char *name)
{
	struct mgw_load_phase *v = realloc(c->phases,
	                                   (c->n_phases + 1) * sizeof(*v));
	struct mgw_load_phase *p;

	if (!v)
		return NULL;
	c->phases = v;
	p = &v[c->n_phases];
	memset(p, 0, sizeof(*p));
	mgw_cfg_defaults(&phase_section, p);
	p->name = strdup(name);
	if (!p->name)
		return NULL;
	c->n_phases++;
	return p;
}

struct mgw_load_call *mgw_load_conf_add_call(struct mgw_load_conf *c,
                                             const char *tool)
{
	struct mgw_load_call *v = realloc(c->calls, (c->n_calls + 1) * sizeof(*v));
	struct mgw_load_call *k;
	int counter = strcmp(tool, "counter") == 0;
	int task = strcmp(tool, "task") == 0;

	if (!v)
		return NULL;
	c->calls = v;
	k = &v[c->n_calls];
	memset(k, 0, sizeof(*k));
	mgw_cfg_defaults(&call_section, k);
	k->arguments = json_object();
	if (counter) {
		k->flow = MGW_LOAD_FLOW_COUNTER;
		k->name = strdup("counter");
		k->tool = strdup("counter_increment");
		k->create_tool = strdup("counter_create");
		k->handle_arg = strdup("handle");
	} else if (task) {
		k->flow = MGW_LOAD_FLOW_TASK;
		k->name = strdup("task");
		k->tool = strdup("slow_job");
	} else {
		k->name = strdup(tool);
		k->tool = strdup(tool);
	}
	c->n_calls++; /* counted first so that a failure below is freed */
	if (!k->arguments || !k->name || !k->tool ||
	    (counter && (!k->create_tool || !k->handle_arg)))
		return NULL;
	return k;
}

/* ---- JSON from document nodes ---- */

/* A JSON number as JSON spells it: -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)? */
static int json_number_text(const char *s, size_t len)
{
	size_t i = 0;

	if (i < len && s[i] == '-')
		i++;
	if (i < len && s[i] == '0')
		i++;
	else if (i < len && s[i] >= '1' && s[i] <= '9')
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
	else
		return 0;
	if (i < len && s[i] == '.') {
		size_t d = ++i;
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == d)
			return 0;
	}
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		size_t d;
		i++;
		if (i < len && (s[i] == '+' || s[i] == '-'))
			i++;
		d = i;
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == d)
			return 0;
	}
	return i == len;
}

json_t *mgw_load_json_scalar(const char *text, size_t len, int plain)
{
	if (plain && strlen(text) == len) {
		if (len == 0 || strcmp(text, "null") == 0 || strcmp(text, "~") == 0)
			return json_null();
		if (strcmp(text, "true") == 0)
			return json_true();
		if (strcmp(text, "false") == 0)
			return json_false();
		if (json_number_text(text, len)) {
			/* jansson picks integer or real the way JSON does;
			 * an integer too large for json_int_t stays text */
			json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
			if (v)
				return v;
		}
	}
	return json_stringn(text, len);
}

static int node_to_json(struct mgw_cfg_ctx *c, const struct mgw_cfg_node *n,
                        json_t **out)
{
	json_t *v = NULL;

	switch (n->kind) {
	case MGW_CFG_SCALAR:
		v = mgw_load_json_scalar(n->text, n->len, n->plain);
		if (!v) /* libyaml checks UTF-8; this is the backstop */
			return mgw_cfg_fail(c, n, NULL, "not valid UTF-8");
		break;
	case MGW_CFG_SEQ:
		v = json_array();
		for (size_t i = 0; v && i < n->n; i++) {
			json_t *item;
			int rc = node_to_json(c, n->kids[i], &item);

			if (rc != 0) {
				json_decref(v);
				return rc;
			}
			json_array_append_new(v, item);
		}
		break;
	case MGW_CFG_MAP:
		v = json_object();
		for (size_t i = 0; v && i + 1 < n->n; i += 2) {
			const struct mgw_cfg_node *k = n->kids[i];
			json_t *item;
			int rc;

			if (strlen(k->text) != k->len || json_object_get(v, k->text)) {
				json_decref(v);
				return mgw_cfg_fail(c, k, NULL,
				                    strlen(k->text) != k->len
				                    ? "a key must not contain a NUL byte"
				                    : "duplicate key '%.60s'", k->text);
			}
			rc = node_to_json(c, n->kids[i + 1], &item);
			if (rc != 0) {
				json_decref(v);
				return rc;
			}
			if (json_object_set_new(v, k->text, item) != 0) {
				json_decref(v);
				return mgw_cfg_fail(c, k, NULL,
				                    "a key must be valid UTF-8");
			}
		}
		break;
	}
	if (!v) {
		mgw_cfg_fail(c, n, NULL, "out of memory");
		return MGW_ENOMEM;
	}
	*out = v;
	return 0;
}

/* ---- detaching what the schema cannot describe ---- */

struct detached {
	struct mgw_cfg_node *key, *val;
};

/* Removes key from mapping map, handing its key and value nodes to d (the
 * caller frees them with detached_free).  Nothing happens when map is not
 * a mapping or has no such key; a second occurrence is an error, as the
 * schema would have said. */
static int take_key(struct mgw_cfg_ctx *c, struct mgw_cfg_node *map,
                    const char *key, struct detached *d)
{
	d->key = d->val = NULL;
	if (!map || map->kind != MGW_CFG_MAP)
		return 0;
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		if (strcmp(map->kids[i]->text, key) != 0)
			continue;
		if (d->key)
			return mgw_cfg_fail(c, map->kids[i], key,
			                    "duplicate key (first given at line %u)",
			                    d->key->line);
		d->key = map->kids[i];
		d->val = map->kids[i + 1];
		memmove(&map->kids[i], &map->kids[i + 2],
		        (map->n - i - 2) * sizeof(*map->kids));
		map->n -= 2;
		i -= 2;
	}
	return 0;
}

static void detached_free(struct detached *d)
{
	mgw_cfg_tree_free(d->key);
	mgw_cfg_tree_free(d->val);
	d->key = d->val = NULL;
}

static int check_url_text(struct mgw_cfg_ctx *c, const struct mgw_cfg_node *n,
                          const char *key)
{
	char why[128];
	struct mgw_url u;

	if (n->kind != MGW_CFG_SCALAR || mgw_cfg_node_is_null(n) ||
	    strlen(n->text) != n->len)
		return mgw_cfg_fail(c, n, key, "expected a URL string");
	if (mgw_url_parse(n->text, &u, why, sizeof(why)) != 0)
		return mgw_cfg_fail(c, n, key, "'%.80s' is not a valid URL: %s",
		                    n->text, why);
	return 0;
}

static int apply_targets(struct mgw_cfg_ctx *c, struct mgw_load_conf *conf,
                         const struct mgw_cfg_node *v)
{
	char key[48];
	int rc;

	mgw_load_conf_clear_targets(conf);
	if (v->kind == MGW_CFG_SCALAR) {
		rc = check_url_text(c, v, "targets");
		if (rc == 0 && mgw_load_conf_add_target(conf, v->text) != 0)
			return mgw_cfg_fail(c, v, NULL, "out of memory");
		return rc;
	}
	if (v->kind != MGW_CFG_SEQ || v->n == 0)
		return mgw_cfg_fail(c, v, "targets",
		                    "expected a URL or a non-empty list of URLs");
	for (size_t i = 0; i < v->n; i++) {
		snprintf(key, sizeof(key), "targets[%zu]", i);
		rc = check_url_text(c, v->kids[i], key);
		if (rc != 0)
			return rc;
		if (mgw_load_conf_add_target(conf, v->kids[i]->text) != 0)
			return mgw_cfg_fail(c, v, NULL, "out of memory");
	}
	return 0;
}

/* An elicitation answer: an object with a string "action", or the
 * shorthand "accept" / "decline" / "cancel" for {"action": VALUE} (accept
 * with empty content). */
static int answer_value(struct mgw_cfg_ctx *c, const struct mgw_cfg_node *at,
                        const char *name, json_t **v)
{
	const char *a;

	if (json_is_string(*v)) {
		a = json_string_value(*v);
		if (strcmp(a, "accept") != 0 && strcmp(a, "decline") != 0 &&
		    strcmp(a, "cancel") != 0)
			return mgw_cfg_fail(c, at, NULL, "answer '%s': expected an "
			                    "object or accept, decline or cancel", name);
		json_decref(*v);
		*v = strcmp(a, "accept") == 0
		     ? json_pack("{s:s, s:{}}", "action", "accept", "content")
		     : json_pack("{s:s}", "action", a);
		return *v ? 0 : mgw_cfg_fail(c, at, NULL, "out of memory");
	}
	if (!json_is_object(*v) ||
	    !json_is_string(json_object_get(*v, "action")))
		return mgw_cfg_fail(c, at, NULL, "answer '%s': expected an object "
		                    "with a string action, or accept, decline or "
		                    "cancel", name);
	return 0;
}

/* answers: a mapping of input request names to answers. */
static int check_answers(struct mgw_cfg_ctx *c, const struct mgw_cfg_node *at,
                         json_t *obj)
{
	const char *name;
	json_t *v;
	void *it;
	int rc;

	for (it = json_object_iter(obj); it; it = json_object_iter_next(obj, it)) {
		name = json_object_iter_key(it);
		v = json_incref(json_object_iter_value(it));
		rc = answer_value(c, at, name, &v);
		if (rc == 0 && json_object_iter_set_new(obj, it, v) != 0)
			rc = mgw_cfg_fail(c, at, NULL, "out of memory");
		else if (rc != 0)
			json_decref(v);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* A free JSON mapping of call idx (arguments or answers) into *dst. */
static int apply_json(struct mgw_cfg_ctx *c, json_t **dst, const char *key,
                      size_t idx, const struct mgw_cfg_node *v)
{
	json_t *obj = NULL;
	int rc = 0;

	/* errors inside the value name this path */
	c->plen = (size_t)snprintf(c->path, sizeof(c->path),
	                           "calls[%zu].%s", idx, key);
	if (mgw_cfg_node_is_null(v))
		goto out;
	if (v->kind != MGW_CFG_MAP) {
		rc = mgw_cfg_fail(c, v, NULL, "expected a mapping");
		goto out;
	}
	rc = node_to_json(c, v, &obj);
	if (rc == 0 && strcmp(key, "answers") == 0)
		rc = check_answers(c, v, obj);
	if (rc != 0) {
		json_decref(obj);
		goto out;
	}
	json_decref(*dst);
	*dst = obj;
out:
	c->plen = 0;
	c->path[0] = '\0';
	return rc;
}

/* Every call gets an (empty) argument object, whether the file had
 * arguments or not, so agents never see NULL. */
static int ensure_arguments(struct mgw_load_conf *conf)
{
	for (size_t i = 0; i < conf->n_calls; i++)
		if (!conf->calls[i].arguments &&
		    !(conf->calls[i].arguments = json_object()))
			return MGW_ENOMEM;
	return 0;
}

/* Unnamed phases are called after their position. */
static int name_phases(struct mgw_load_conf *conf)
{
	for (size_t i = 0; i < conf->n_phases; i++) {
		char name[32];

		if (conf->phases[i].name)
			continue;
		snprintf(name, sizeof(name), conf->phases[i].warmup ? "warmup%zu"
		                                                    : "phase%zu",
		         i + 1);
		conf->phases[i].name = strdup(name);
		if (!conf->phases[i].name)
			return MGW_ENOMEM;
	}
	return 0;
}

int mgw_load_scenario_parse(struct mgw_load_conf *conf, const char *name,
                            const char *text, size_t len, char *err,
                            size_t errlen)
{
	struct mgw_cfg_ctx ctx = {.name = name, .err = err, .errlen = errlen};
	struct mgw_cfg_node *root = NULL, *calls = NULL;
	struct detached targets = {0}, *args = NULL, *answers = NULL;
	size_t n_args = 0;
	int rc;

	rc = mgw_cfg_tree_parse(name, text, len, &root, err, errlen);
	if (rc != 0)
		goto out;
	free(conf->source);
	conf->source = strdup(name);
	if (!conf->source) {
		snprintf(err, errlen, "%s: out of memory", name);
		rc = MGW_ENOMEM;
		goto out;
	}
	if (!root)
		goto out; /* an empty file changes nothing */
	if (root->kind != MGW_CFG_MAP) {
		rc = mgw_cfg_fail(&ctx, root, NULL, "expected a mapping");
		goto out;
	}
	rc = take_key(&ctx, root, "targets", &targets);
	for (size_t i = 0; rc == 0 && i + 1 < root->n; i += 2)
		if (strcmp(root->kids[i]->text, "calls") == 0)
			calls = root->kids[i + 1];
	if (rc == 0 && calls && calls->kind == MGW_CFG_SEQ && calls->n) {
		args = calloc(calls->n, sizeof(*args));
		answers = calloc(calls->n, sizeof(*answers));
		if (!args || !answers) {
			snprintf(err, errlen, "%s: out of memory", name);
			rc = MGW_ENOMEM;
			goto out;
		}
		n_args = calls->n;
		for (size_t i = 0; rc == 0 && i < calls->n; i++) {
			char key[48];

			snprintf(key, sizeof(key), "calls[%zu]", i);
			ctx.plen = (size_t)snprintf(ctx.path, sizeof(ctx.path),
			                            "%s", key);
			rc = take_key(&ctx, calls->kids[i], "arguments", &args[i]);
			if (rc == 0)
				rc = take_key(&ctx, calls->kids[i], "answers", &answers[i]);
			ctx.plen = 0;
			ctx.path[0] = '\0';
		}
	}
	if (rc != 0)
		goto out;
	rc = mgw_cfg_apply(&ctx, &root_section, conf, root);
	if (rc != 0)
		goto out;
	ctx.plen = 0;
	ctx.path[0] = '\0';
	if (targets.val && (rc = apply_targets(&ctx, conf, targets.val)) != 0)
		goto out;
	for (size_t i = 0; i < n_args && i < conf->n_calls; i++) {
		if (args[i].val &&
		    (rc = apply_json(&ctx, &conf->calls[i].arguments, "arguments", i,
		                     args[i].val)) != 0)
			goto out;
		if (answers[i].val &&
		    (rc = apply_json(&ctx, &conf->calls[i].answers, "answers", i,
		                     answers[i].val)) != 0)
			goto out;
	}
	if (ensure_arguments(conf) != 0 || name_phases(conf) != 0) {
		snprintf(err, errlen, "%s: out of memory", name);
		rc = MGW_ENOMEM;
	}
out:
	detached_free(&targets);
	for (size_t i = 0; i < n_args; i++) {
		detached_free(&args[i]);
		detached_free(&answers[i]);
	}
	free(args);
	free(answers);
	mgw_cfg_tree_free(root);
	return rc;
}

/* Reads at most MGW_CFG_MAX_BYTES + 1 bytes, so that the tree parser's
 * size limit also catches a file that grows while it is read.  Runs
 * before the event loop exists, so a blocking read is fine. */
static char *read_file(const char *path, size_t *len, char *err, size_t errlen)
{
	size_t cap = MGW_CFG_MAX_BYTES + 1, used = 0;
	struct stat st;
	char *buf = NULL;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		goto fail;
	}
	if ((unsigned long long)st.st_size > MGW_CFG_MAX_BYTES) {
		snprintf(err, errlen, "%s: file too large (%lld bytes, the limit "
		         "is %zu)", path, (long long)st.st_size, MGW_CFG_MAX_BYTES);
		goto fail;
	}
	buf = malloc(cap);
	if (!buf) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto fail;
	}
	while (used < cap && (r = read(fd, buf + used, cap - used)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, errlen, "%s: read failed: %s", path,
			         strerror(errno));
			goto fail;
		}
		used += (size_t)r;
	}
	close(fd);
	*len = used;
	return buf;
fail:
	close(fd);
	free(buf);
	return NULL;
}

int mgw_load_scenario_load(struct mgw_load_conf *c, const char *path,
                           char *err, size_t errlen)
{
	size_t len = 0;
	char *text = read_file(path, &len, err, errlen);
	int rc;

	if (!text)
		return MGW_EINVAL;
	rc = mgw_load_scenario_parse(c, path, text, len, err, errlen);
	free(text);
	return rc;
}

/* ---- --arg ---- */

int mgw_load_parse_arg(json_t *obj, const char *arg, char *err, size_t errlen)
{
	const char *eq = strchr(arg, '=');
	size_t klen;
	char key[256];
	json_t *v;
	int raw;

	if (!eq || eq == arg) {
		snprintf(err, errlen, "--arg '%.60s': expected KEY=VALUE or "
		         "KEY:=JSON", arg);
		return MGW_EINVAL;
	}
	raw = eq > arg && eq[-1] == ':';
	klen = (size_t)(eq - arg) - (raw ? 1 : 0);
	if (klen == 0 || klen >= sizeof(key)) {
		snprintf(err, errlen, "--arg '%.60s': bad key", arg);
		return MGW_EINVAL;
	}
	memcpy(key, arg, klen);
	key[klen] = '\0';
	if (raw) {
		json_error_t je;

		v = json_loads(eq + 1, JSON_DECODE_ANY, &je);
		if (!v) {
			snprintf(err, errlen, "--arg %.60s: not JSON: %s", key,
			         je.text);
			return MGW_EINVAL;
		}
	} else {
		v = mgw_load_json_scalar(eq + 1, strlen(eq + 1), 1);
		if (!v) {
			/* jansson refuses strings that are not UTF-8 */
			snprintf(err, errlen, "--arg %.60s: the value is not "
			         "valid UTF-8", key);
			return MGW_EINVAL;
		}
	}
	if (json_object_set_new(obj, key, v) != 0) {
		snprintf(err, errlen, "--arg: the key is not valid UTF-8");
		return MGW_EINVAL;
	}
	return 0;
}

/* ---- final validation ---- */

int mgw_load_conf_check(const struct mgw_load_conf *c, char *err,
                        size_t errlen)
{
	const struct mgw_load_transport_conf *t = &c->transport;

	if (t->type == MGW_LOAD_STDIO) {
		if (!t->command) {
			snprintf(err, errlen, "the stdio transport needs a command "
			         "(--stdio CMD or transport.command)");
			return MGW_EINVAL;
		}
		if (t->n_targets) {
			snprintf(err, errlen, "targets cannot be used with the "
			         "stdio transport");
			return MGW_EINVAL;
		}
		if (t->http2 || t->connection == MGW_LOAD_CONN_NEW) {
			snprintf(err, errlen, "--http2 and --connection new apply "
			         "to HTTP targets, not to stdio");
			return MGW_EINVAL;
		}
	} else if (t->n_targets == 0) {
		snprintf(err, errlen, "no target: give --target URL (or "
		         "--stdio CMD), or targets: in the scenario");
		return MGW_EINVAL;
	}
	for (size_t i = 0; i < t->n_targets; i++) {
		char why[128];
		struct mgw_url u;

		if (mgw_url_parse(t->targets[i], &u, why, sizeof(why)) != 0) {
			snprintf(err, errlen, "target '%.100s' is not a valid URL: "
			         "%s", t->targets[i], why);
			return MGW_EINVAL;
		}
	}
	if (c->n_calls == 0) {
		snprintf(err, errlen, "no calls: give --tool NAME, or calls: in "
		         "the scenario");
		return MGW_EINVAL;
	}
	if (c->n_phases == 0) {
		snprintf(err, errlen, "no phases");
		return MGW_EINVAL;
	}
	for (size_t i = 0; i < c->n_phases; i++) {
		const struct mgw_load_phase *p = &c->phases[i];

		if (p->duration <= 0 && p->requests <= 0) {
			snprintf(err, errlen, "phase %s: give a duration or a "
			         "number of requests", p->name);
			return MGW_EINVAL;
		}
		if (p->mode == MGW_LOAD_OPEN && !(p->rate > 0)) {
			snprintf(err, errlen, "phase %s: an open-loop phase needs "
			         "a rate", p->name);
			return MGW_EINVAL;
		}
		if (p->concurrency < 1) {
			snprintf(err, errlen, "phase %s: concurrency must be at "
			         "least 1", p->name);
			return MGW_EINVAL;
		}
	}
	for (size_t i = 0; i < c->n_calls; i++) {
		if (!json_is_object(c->calls[i].arguments)) {
			snprintf(err, errlen, "call %s: arguments must be an "
			         "object", c->calls[i].name);
			return MGW_EINVAL;
		}
		if (c->calls[i].flow == MGW_LOAD_FLOW_MRTR &&
		    json_object_size(c->calls[i].answers) == 0) {
			snprintf(err, errlen, "call %s: an mrtr call needs answers "
			         "(input request name, or \"*\", to the response)",
			         c->calls[i].name);
			return MGW_EINVAL;
		}
		if (c->calls[i].flow != MGW_LOAD_FLOW_MRTR &&
		    (c->calls[i].fork_every || c->calls[i].fork_round)) {
			snprintf(err, errlen, "call %s: fork_every and fork_round "
			         "belong to an mrtr call", c->calls[i].name);
			return MGW_EINVAL;
		}
	}
	return 0;
}
