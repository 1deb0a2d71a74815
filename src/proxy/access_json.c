/* access_json.c - the JSON access line (access_json.h): one bounded
 * object built on the stack (util/jsonw.h), written with one write(2). */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "auth/principal-t.h"
#include "core/log.h"
#include "http/server.h"
#include "mcp/sep2243.h"
#include "proxy/access_json.h"
#include "proxy/txn.h"
#include "util/jsonw.h"
#include "util/time.h"

/* Large enough for every member at its bound but a path of control bytes
 * (six bytes each), which is then cut: the path comes last. */
#define LINE_BYTES 8192

static int lower_hex(const char *s, size_t n, int *all_zero)
{
	*all_zero = 1;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return 0;
		if (c != '0')
			*all_zero = 0;
	}
	return 1;
}

int mgw_access_trace_id(const char *v, char out[33])
{
	size_t n = v ? strlen(v) : 0;
	int z;

	/* version "-" trace-id "-" parent-id "-" flags */
	if (n < 55 || v[2] != '-' || v[35] != '-' || v[52] != '-')
		return -1;
	if (!lower_hex(v, 2, &z) || strncmp(v, "ff", 2) == 0)
		return -1;
	/* version 00 is exactly this long; later ones may append "-..." */
	if (n > 55 && (strncmp(v, "00", 2) == 0 || v[55] != '-'))
		return -1;
	if (!lower_hex(v + 36, 16, &z) || z || !lower_hex(v + 53, 2, &z))
		return -1;
	if (!lower_hex(v + 3, 32, &z) || z)
		return -1;
	memcpy(out, v + 3, 32);
	out[32] = '\0';
	return 0;
}

static const char *era_name(enum mgw_era e)
{
	switch (e) {
	case MGW_ERA_IS_MODERN: return "modern";
	case MGW_ERA_IS_LEGACY: return "legacy";
	default: return "unknown";
	}
}

void mgw_access_json(const struct mgw_txn *t, int status)
{
	const struct mgw_http_exchange *x = t->x;
	char line[LINE_BYTES], ts[32], sess[64], tname[64], trace[33];
	const char *session, *tp, *hname = NULL;
	char *decoded = NULL;
	size_t body_len, name_len = 0;
	struct mgw_jsonw w;
	int v = mgw_http_version(x);

	mgw_log_timestamp(ts);
	mgw_http_req_body(x, &body_len);
	session = t->session ? t->session : mgw_http_req_header(x, "mcp-session-id");
	tp = mgw_http_req_header(x, "traceparent");
	if (t->have_msg && t->msg.task_id) {
		/* a task id may be a bearer handle (SEP-2663): shown as a
		 * session id is, its start and length */
		hname = mgw_log_redact("mcp-session-id", t->msg.task_id, tname,
		                       sizeof(tname));
		name_len = strlen(hname);
	} else if (t->have_msg && t->msg.name) {
		hname = t->msg.name;
		name_len = strlen(hname);
	} else if ((hname = mgw_http_req_header(x, "mcp-name")) != NULL) {
		/* the header as sent, or its base64 sentinel decoded */
		decoded = mgw_sep2243_decode(hname, strlen(hname), &name_len);
		if (decoded)
			hname = decoded;
		else
			name_len = strlen(hname);
	}

	mgw_jsonw_init(&w, line, sizeof(line));
	mgw_jsonw_cstr(&w, "time", ts, sizeof(ts));
	mgw_jsonw_cstr(&w, "client", mgw_http_peer_ip(x), 64);
	mgw_jsonw_int(&w, "client_port", mgw_http_peer_port(x));
	mgw_jsonw_cstr(&w, "listener", mgw_http_local(x), 64);
	mgw_jsonw_cstr(&w, "proto", v >= 20 ? "h2" : "http/1.1", 16);
	mgw_jsonw_bool(&w, "tls", mgw_http_is_tls(x));
	mgw_jsonw_uint(&w, "conn", mgw_http_conn_id(x));
	mgw_jsonw_int(&w, "stream", mgw_http_stream_id(x));
	mgw_jsonw_int(&w, "status", status);
	mgw_jsonw_uint(&w, "bytes_in", body_len);
	mgw_jsonw_uint(&w, "bytes_out", t->rl.bytes);
	mgw_jsonw_fixed(&w, "duration_ms",
	                (double)(mgw_now_ns() - t->t0_ns) / 1e6, 3);
	mgw_jsonw_cstr(&w, "upstream", t->last ? t->last->name : NULL, 256);
	mgw_jsonw_uint(&w, "attempts", t->attempts);
	mgw_jsonw_uint(&w, "retries", t->retries);
	mgw_jsonw_cstr(&w, "era", era_name(t->era), 16);
	mgw_jsonw_cstr(&w, "session",
	               session ? mgw_log_redact("mcp-session-id", session, sess,
	                                        sizeof(sess))
	                       : NULL, sizeof(sess));
	mgw_jsonw_cstr(&w, "repin", t->repin, 32);
	mgw_jsonw_cstr(&w, "principal", t->principal ? t->principal->sub : NULL,
	               256);
	mgw_jsonw_cstr(&w, "client_id",
	               t->principal ? t->principal->client_id : NULL, 256);
	mgw_jsonw_cstr(&w, "trace_id",
	               tp && mgw_access_trace_id(tp, trace) == 0 ? trace : NULL,
	               sizeof(trace));
	mgw_jsonw_cstr(&w, "note", t->note, 128);
	mgw_jsonw_cstr(&w, "steps", t->why[0] ? t->why : NULL, sizeof(t->why));
	mgw_jsonw_cstr(&w, "method", mgw_http_method(x), 32);
	mgw_jsonw_cstr(&w, "mcp_method", mgw_txn_mcp_method(t),
	               MGW_ACCESS_NAME_MAX);
	mgw_jsonw_str(&w, "mcp_name", hname, name_len, MGW_ACCESS_NAME_MAX);
	mgw_jsonw_cstr(&w, "path", mgw_http_path(x), MGW_ACCESS_PATH_MAX);
	if (mgw_jsonw_cut(&w))
		mgw_jsonw_bool(&w, "cut", 1);
	free(decoded);
	mgw_log_access_line(line, mgw_jsonw_end(&w));
}
