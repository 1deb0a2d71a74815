/* scenario.h - the plan of a `mcpgw load` run (types in load-t.h): its
 * defaults, scenario files (YAML or JSON, read through the cfgschema
 * engine with its own table, errors as FILE:LINE:COL: KEY: message), the
 * final validation after command-line overrides, and the JSON scalar rules
 * shared by files and --arg. */
#ifndef MGW_LOAD_SCENARIO_H
#define MGW_LOAD_SCENARIO_H

#include <stddef.h>

#include <jansson.h>

#include "load/load-t.h"

/* A plan holding the defaults: HTTP transport, connection reuse, dialect
 * auto, timeout 10s, no think time, no calls, no phases, no gates.
 * NULL on no memory. */
struct mgw_load_conf *mgw_load_conf_new(void);

/* Frees the plan and everything it owns (strings, lists, argument
 * objects).  NULL allowed. */
void mgw_load_conf_free(struct mgw_load_conf *c);

/* Reads the scenario file path into c (which holds defaults; keys the file
 * sets replace them).  Returns 0, or MGW_EINVAL / MGW_ELIMIT / MGW_ENOMEM
 * with "FILE:LINE:COL: KEY: message" (or "FILE: message") in err; c may
 * then hold part of the file and must still be freed. */
int mgw_load_scenario_load(struct mgw_load_conf *c, const char *path,
                           char *err, size_t errlen);

/* Same for a scenario already in memory; name is used in messages. */
int mgw_load_scenario_parse(struct mgw_load_conf *c, const char *name,
                            const char *text, size_t len, char *err,
                            size_t errlen);

/* Final checks once the command line was applied: an HTTP run has targets
 * (valid http/https URLs) and a stdio run a command, at least one call and
 * one phase, every phase bounded (a duration or a request count) and
 * open-loop phases have a rate.  Returns 0 or MGW_EINVAL with a message. */
int mgw_load_conf_check(const struct mgw_load_conf *c, char *err,
                        size_t errlen);

/* Appends a phase with defaults (closed loop, concurrency 1) named name.
 * Returns it, or NULL on no memory. */
struct mgw_load_phase *mgw_load_conf_add_phase(struct mgw_load_conf *c,
                                               const char *name);

/* Appends a call of tool (the "counter" tool name selects the counter
 * handle flow) with weight 1 and an empty argument object.  Returns it,
 * or NULL on no memory. */
struct mgw_load_call *mgw_load_conf_add_call(struct mgw_load_conf *c,
                                             const char *tool);

/* Removes every call / phase / target. */
void mgw_load_conf_clear_calls(struct mgw_load_conf *c);
void mgw_load_conf_clear_phases(struct mgw_load_conf *c);
void mgw_load_conf_clear_targets(struct mgw_load_conf *c);
void mgw_load_conf_clear_auth_headers(struct mgw_load_conf *c);

/* Appends a copy of url to the targets.  Returns 0 or MGW_ENOMEM. */
int mgw_load_conf_add_target(struct mgw_load_conf *c, const char *url);

/* A scalar as JSON: text written without quotes (plain) that looks like
 * null, true/false or a JSON number becomes that; anything else, and
 * every quoted scalar, is a string.  NULL on no memory, or when a string
 * would not be valid UTF-8 (JSON strings must be). */
json_t *mgw_load_json_scalar(const char *text, size_t len, int plain);

/* Parses one --arg: "KEY=VALUE" (VALUE as a plain scalar, see above) or
 * "KEY:=JSON" (any JSON value), and sets it in obj.  Returns 0 or
 * MGW_EINVAL with a message in err. */
int mgw_load_parse_arg(json_t *obj, const char *arg, char *err, size_t errlen);

/* Spelling of the enum values, for messages and the report. */
const char *mgw_load_dialect_name(int dialect);
const char *mgw_load_conn_name(int conn);
const char *mgw_load_think_name(int kind);

/* Parses "legacy" / "modern" / "auto" and "reuse" / "new".  Return 0 or
 * MGW_EINVAL. */
int mgw_load_parse_dialect(const char *s, int *out);
int mgw_load_parse_conn(const char *s, int *out);

/* Parses a --think value: "none", a duration ("200ms": fixed), "MIN-MAX"
 * (two durations: uniform), or "agent" (agent-shaped defaults: 90 % of
 * pauses 50 ms..500 ms, 10 % 2 s..10 s).  Returns 0 or MGW_EINVAL. */
int mgw_load_parse_think(const char *s, struct mgw_load_think *out);

/* What `mcpgw check-config --scenario FILE` does: reads path the way
 * `mcpgw load --scenario` does (the command line may still add targets, so
 * only the file itself is checked) and prints "PATH: ok (load scenario)"
 * on stdout unless quiet.  Returns 0, MGW_ENOMEM, or MGW_EINVAL with the
 * message in err (see mgw_check_file_fn in core/config_cmd.h). */
int mgw_load_scenario_check(const char *path, int quiet, char *err,
                            size_t errlen);

#endif
