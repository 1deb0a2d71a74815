/* health-t.h - types of the active health checker (see health.h). */
#ifndef MGW_PROXY_HEALTH_T_H
#define MGW_PROXY_HEALTH_T_H

#include <stdint.h>

struct mgw_health;

/* Rise/fall hysteresis of one server, kept apart from any I/O so that it
 * can be tested without sockets or clocks.  Only the health checker's
 * thread touches it. */
struct mgw_health_sm {
	int up;            /* current verdict */
	int decided;       /* 0 until the first probe: that one decides alone */
	uint32_t ok_run;   /* consecutive successes while down */
	uint32_t fail_run; /* consecutive failures while up */
};

enum mgw_health_change {
	MGW_HEALTH_SAME = 0,
	MGW_HEALTH_WENT_UP,
	MGW_HEALTH_WENT_DOWN,
};

/* What one HTTP probe's answer says (mgw_health_classify). */
enum mgw_probe_answer {
	MGW_PROBE_PASS = 0,     /* the expected status */
	MGW_PROBE_LEGACY,       /* 400, 404 or 405 with a JSON-RPC error
	                         * body: an MCP server that wants a session
	                         * first (a legacy-era server asked a modern
	                         * request) */
	MGW_PROBE_NOT_FOUND,    /* 404 without a JSON-RPC body: no MCP
	                         * server at that path */
	MGW_PROBE_OTHER,        /* any other status */
};

/* Counters of one checker (only grow). */
struct mgw_health_stats {
	uint64_t probes;        /* probes started */
	uint64_t ok;            /* probes that passed */
	uint64_t failed;        /* probes that failed (any reason) */
	uint64_t went_down;     /* up -> down transitions */
	uint64_t went_up;       /* down -> up transitions */
};

#endif
