/* tools_probe.c - a group's tools/list asked for by the gateway itself
 * (tools_probe.h). */
#include "autoconf.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "core/errors.h"
#include "core/log.h"
#include "http/client.h"
#include "http/headers.h"
#include "mcp/era.h"
#include "proxy/conf_serve-t.h"
#include "proxy/relay.h"
#include "proxy/replay.h"
#include "proxy/tools_probe.h"
#include "proxy/upstream.h"
#include "util/time.h"

static const char probe_body[] =
	"{\"jsonrpc\":\"2.0\",\"id\":\"mcpgw-tools\",\"method\":\"tools/list\","
	"\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\""
	MGW_MCP_MODERN_VERSION "\",\"io.modelcontextprotocol/clientCapabilities\":{},"
	"\"io.modelcontextprotocol/clientInfo\":{\"name\":\"mcpgw-tools-probe\","
	"\"version\":\"" PACKAGE_VERSION "\"}}}}";

struct mgw_tools_probe {
	struct mgw_upstream_group *g;
	struct mgw_client_origin **origins; /* one per server */
	struct event *tick;
	struct mgw_client_req *req;
	struct mgw_headers hdrs;
	struct evbuffer *body;
	int status, sse, too_big;
	size_t next;                    /* the server to ask next */
	size_t sent, learned;
};

/* auto: the group has learned from a tools/list of clients' traffic
 * (every list it learned, less the probe's own) */
static int taught_by_traffic(const struct mgw_tools_probe *p)
{
	const struct mgw_replay_group *rg = p->g->replay;

	return rg && atomic_load(&rg->learned) > p->learned;
}

static int is_auto(const struct mgw_tools_probe *p)
{
	return p->g->conf->tools_probe == MGW_TOOLS_PROBE_AUTO;
}

/* auto: seconds until a probe is due (0: now).  Nothing is asked until
 * traffic taught the group; then only when what was learned last (by
 * traffic or by the probe) is half its lifetime old: clients that keep
 * listing their tools keep it fresh themselves. */
static double auto_wait(struct mgw_tools_probe *p)
{
	uint64_t now = mgw_now_ms(), at, half;

	half = p->g->replay->tools.ttl_ms / 2;
	if (!taught_by_traffic(p)) {
		/* often enough that a probe is never late by more than a
		 * quarter of the tools' lifetime */
		double check = (double)half / 2000.0;

		return check < MGW_TOOLS_PROBE_AUTO_CHECK_S
		               ? check
		               : MGW_TOOLS_PROBE_AUTO_CHECK_S;
	}
	at = mgw_replay_tools_learned_ms(&p->g->replay->tools);
	if (at && now < at + half)
		return (double)(at + half - now) / 1000.0 + 0.001;
	return 0;
}

static void schedule(struct mgw_tools_probe *p, double seconds)
{
	struct timeval tv = mgw_tv(seconds);

	evtimer_add(p->tick, &tv);
}

static void on_head(struct mgw_client_req *r, int status,
                    const struct mgw_headers *h, void *arg)
{
	struct mgw_tools_probe *p = arg;

	(void)r;
	p->status = status;
	p->sse = mgw_relay_is_event_stream(mgw_headers_get(h, "content-type"));
}

static void on_data(struct mgw_client_req *r, const unsigned char *d,
                    size_t n, void *arg)
{
	struct mgw_tools_probe *p = arg;

	(void)r;
	if (p->too_big ||
	    evbuffer_get_length(p->body) + n > MGW_TOOLS_PROBE_BODY_MAX) {
		p->too_big = 1;
		return;
	}
	if (evbuffer_add(p->body, d, n) != 0)
		p->too_big = 1;
}

static void on_end(struct mgw_client_req *r, void *arg)
{
	struct mgw_tools_probe *p = arg;
	struct mgw_replay_group *rg = p->g->replay;
	size_t n = evbuffer_get_length(p->body);
	int rc = MGW_EINVAL;

	(void)r;
	p->req = NULL;
	if (rg && !p->too_big && n && p->status >= 200 && p->status <= 299)
		rc = mgw_replay_tools_learn_body(&rg->tools,
		                                 evbuffer_pullup(p->body, -1), n,
		                                 p->sse, p->g->ups->conf->max_json_depth,
		                                 0, mgw_now_ms());
	if (rc == 0) {
		p->learned++;
		atomic_fetch_add(&rg->learned, 1);
		mgw_debug(NULL, "upstream '%s': tools/list probe: %zu tools "
		          "replay-safe", p->g->name,
		          mgw_replay_tools_count(&rg->tools, mgw_now_ms()));
		schedule(p, MGW_TOOLS_PROBE_INTERVAL_S);
		return;
	}
	mgw_debug(NULL, "upstream '%s': tools/list probe answered %d%s: nothing "
	          "learned", p->g->name, p->status, p->too_big ? " (too large)" : "");
	/* auto asks only to refresh: a server that does not answer a
	 * modern tools/list (a legacy one) is not asked every 10 s */
	schedule(p, is_auto(p) ? MGW_TOOLS_PROBE_INTERVAL_S
	                       : MGW_TOOLS_PROBE_RETRY_S);
}

static void on_error(struct mgw_client_req *r, const struct mgw_client_error *e,
                     void *arg)
{
	struct mgw_tools_probe *p = arg;

	(void)r;
	p->req = NULL;
	mgw_debug(NULL, "upstream '%s': tools/list probe: %s", p->g->name,
	          e->msg ? e->msg : mgw_strerror(e->code));
	schedule(p, MGW_TOOLS_PROBE_RETRY_S);
}

/* The next available server of the group, in turn (NULL: none now). */
static size_t pick(struct mgw_tools_probe *p, uint64_t now)
{
	for (size_t k = 0; k < p->g->n_servers; k++) {
		size_t i = (p->next + k) % p->g->n_servers;

		if (mgw_upstream_available(&p->g->servers[i], now)) {
			p->next = i + 1;
			return i;
		}
	}
	return p->g->n_servers;
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_tools_probe *p = arg;
	struct mgw_client_timeouts tmo = {
		.connect = 2, .first_byte = 10, .idle = 10, .total = 15,
	};
	struct mgw_client_reqspec spec;
	char target[1024];
	size_t i;

	(void)fd;
	(void)what;
	if (p->req)
		return;
	if (is_auto(p)) {
		double wait = auto_wait(p);

		if (wait > 0) {
			schedule(p, wait);
			return;
		}
	}
	i = pick(p, mgw_now_ms());
	if (i == p->g->n_servers) {
		schedule(p, MGW_TOOLS_PROBE_RETRY_S);
		return;
	}
	snprintf(target, sizeof(target), "%s/mcp", p->g->servers[i].path_prefix);
	evbuffer_drain(p->body, evbuffer_get_length(p->body));
	p->status = 0;
	p->sse = 0;
	p->too_big = 0;
	memset(&spec, 0, sizeof(spec));
	spec.method = "POST";
	spec.target = target;
	spec.headers = &p->hdrs;
	spec.body = probe_body;
	spec.body_len = sizeof(probe_body) - 1;
	spec.tmo = &tmo;
	spec.on_head = on_head;
	spec.on_data = on_data;
	spec.on_end = on_end;
	spec.on_error = on_error;
	spec.arg = p;
	if (mgw_client_request(p->origins[i], &spec, &p->req) != 0) {
		p->req = NULL;
		schedule(p, MGW_TOOLS_PROBE_RETRY_S);
		return;
	}
	p->sent++;
}

struct mgw_tools_probe *mgw_tools_probe_new(struct event_base *base,
                                            struct mgw_client *client,
                                            struct mgw_upstream_group *g,
                                            char *err, size_t errlen)
{
	struct mgw_tools_probe *p = calloc(1, sizeof(*p));
	int rc = 0;

	if (!p)
		goto nomem;
	p->g = g;
	mgw_headers_init(&p->hdrs);
	p->tick = evtimer_new(base, on_tick, p);
	p->body = evbuffer_new();
	p->origins = calloc(g->n_servers, sizeof(*p->origins));
	if (!p->tick || !p->body || !p->origins)
		goto nomem;
	rc |= mgw_headers_adds(&p->hdrs, "Content-Type", "application/json");
	rc |= mgw_headers_adds(&p->hdrs, "Accept",
	                       "application/json, text/event-stream");
	rc |= mgw_headers_adds(&p->hdrs, "MCP-Protocol-Version",
	                       MGW_MCP_MODERN_VERSION);
	rc |= mgw_headers_adds(&p->hdrs, "Mcp-Method", "tools/list");
	if (rc != 0)
		goto nomem;
	for (size_t i = 0; i < g->n_servers; i++) {
		struct mgw_client_origin_cfg oc;

		mgw_upstream_origin_cfg(&g->servers[i], &oc);
		rc = mgw_client_origin_new(client, &oc, &p->origins[i]);
		if (rc != 0) {
			snprintf(err, errlen, "upstream %s: tools probe: %s",
			         g->servers[i].name, mgw_strerror(rc));
			mgw_tools_probe_free(p);
			return NULL;
		}
	}
	return p;
nomem:
	snprintf(err, errlen, "out of memory");
	mgw_tools_probe_free(p);
	return NULL;
}

void mgw_tools_probe_start(struct mgw_tools_probe *p)
{
	schedule(p, 0);
}

void mgw_tools_probe_counts(const struct mgw_tools_probe *p, size_t *sent,
                            size_t *learned)
{
	*sent = p->sent;
	*learned = p->learned;
}

void mgw_tools_probe_free(struct mgw_tools_probe *p)
{
	if (!p)
		return;
	if (p->req)
		mgw_client_cancel(p->req);
	if (p->tick)
		event_free(p->tick);
	if (p->body)
		evbuffer_free(p->body);
	for (size_t i = 0; p->origins && i < p->g->n_servers; i++)
		mgw_client_origin_free(p->origins[i]);
	free(p->origins);
	mgw_headers_deinit(&p->hdrs);
	free(p);
}
