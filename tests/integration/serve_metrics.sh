#!/usr/bin/env bash
# serve_metrics.sh - GET /metrics, the gateway's Prometheus metrics, with
# real processes: `mcpgw serve` in front of `mcpgw backend` replicas,
# `promtool check metrics` on what it answers and a real `prometheus`
# server scraping it on loopback.
#   A. stateless, 2 workers, two listeners, metrics on the second only
#      (admin.metrics_listener), tool names counted with a cap of 2:
#      the first listener forwards /metrics like any path; the second
#      answers it (text format 0.0.4, HEAD, 405 with Allow for POST);
#      promtool finds no error or lint problem; tools/call counted
#      exactly (route, upstream, method, era, status class; tool names,
#      the third as "other"); an open subscriptions/listen stream shows in
#      mcpgw_sse_streams_open; a killed replica turns
#      mcpgw_upstream_server_up to 0 with a health transition to down.
#   B. auto mode, legacy sessions: created, active, re-pinned when the
#      pinned replica is killed, store operations and their latency;
#      promtool clean; a prometheus server scrapes the gateway every
#      second and its HTTP API returns the build info, the target up, and
#      the tools/call counter the gateway itself shows.
#   C. past limits.max_connections a connection is refused and counted;
#      on a TLS listener a plain-HTTP client and one that leaves
#      mid-handshake count as TLS handshake failures, successful
#      handshakes do not; admin.metrics: off: /metrics is forwarded (the
#      replica's 404);
#      configuration errors: a metrics_path of another gateway page, a
#      metrics_listener that is no listener.
. "$(dirname "$0")/lib.sh"
require_tools curl jq node promtool prometheus
require_mcpgw
watchdog 150

# metric TEXTFILE NAME LABEL-ERE: the sum of the samples of NAME whose
# label set matches LABEL-ERE (0 when none does).
metric() {
	awk -v n="$2" -v re="$3" '
		{ name = $1; sub(/\{.*/, "", name) }
		name == n { l = $1; if (index(l, "{")) { sub(/^[^{]*\{/, "", l); sub(/\}$/, "", l) } else l = ""
		            if (l ~ re) s += $NF }
		END { printf "%.17g\n", s + 0 }' "$1"
}

# scrape ADDR NAME: GET /metrics of ADDR into $T_DIR/NAME.prom; sets CODE.
scrape() {
	req GET "http://$1/metrics"
	cp "$BODYF" "$T_DIR/$2.prom"
	cp "$HDR" "$T_DIR/$2.hdr"
}

# promtool_clean FILE WHAT: promtool check metrics prints nothing, exits 0.
promtool_clean() {
	local out st
	out=$(promtool check metrics <"$1" 2>&1)
	st=$?
	if [ $st -eq 0 ] && [ -z "$out" ]; then
		ok "$2: promtool check metrics: no error, no lint problem"
	else
		fail "$2: promtool check metrics (exit $st): $(printf '%s' "$out" | head -n 10)"
	fi
}

# ===== A. stateless ===========================================================
start_backend --era dual --id a1
A1=$B_ADDR A1P=$B_PID
start_backend --era dual --id a2
A2=$B_ADDR A2P=$B_PID
cat >"$T_DIR/a.yaml" <<YAML
listeners:
  - address: 127.0.0.1:0
  - address: 127.0.0.2:0
workers: 2
upstreams:
  - name: pool
    servers:
      - url: http://$A1
      - url: http://$A2
    health:
      interval: 200ms
      timeout: 150ms
      rise: 1
      fall: 1
mcp:
  metrics_tool_names: true
  metrics_tool_names_max: 2
admin:
  metrics_listener: 127.0.0.2:0
YAML
start_serve -c "$T_DIR/a.yaml"
GW_A=$G_ADDR
ADM_A=$(sed -n 2p "$G_OUT" | sed 's/^listening on //; s/[[:space:]].*//')
case $ADM_A in 127.0.0.2:*) ;; *) die "no second listener line: '$ADM_A'" ;; esac

req GET "http://$GW_A/metrics"
assert_code "A: /metrics on the first listener goes upstream (the replica's 404)" 404
assert_nomatch "A: ... and is not the gateway's page" 'mcpgw_build_info' "$BODY"

N=5
for i in $(seq 1 $N); do
	modern "$G_URL" "$i" tools/call '{"name":"whoami","arguments":{}}'
	[ "$CODE" = 200 ] || fail "A: whoami #$i: HTTP $CODE"
done
modern "$G_URL" 20 tools/call '{"name":"echo","arguments":{"text":"x"}}'
modern "$G_URL" 21 tools/call '{"name":"add","arguments":{"a":1,"b":2}}'
modern "$G_URL" 22 tools/list '{}'
post "$G_URL" '{"jsonrpc":"2.0","id":23,"method":"vendor/custom","params":{}}' \
	-H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: vendor/custom'

scrape "$ADM_A" a1
assert_code "A: /metrics on the admin listener" 200
assert_match "A: Content-Type is the 0.0.4 text format" '^text/plain; version=0\.0\.4; charset=utf-8$' \
	"$(HDR=$T_DIR/a1.hdr hdr content-type)"
promtool_clean "$T_DIR/a1.prom" "A"
P=$T_DIR/a1.prom
assert_eq "A: mcpgw_build_info is 1" 1 "$(metric "$P" mcpgw_build_info 'version="')"
alloc=$("$MCPGW" version | sed -n 's/^  allocator: //p')
assert_match "A: mcpgw version names the allocator" '^(mimalloc-[0-9.]+|glibc|AddressSanitizer)$' "$alloc"
assert_eq "A: mcpgw_build_info names the same allocator" 1 \
	"$(metric "$P" mcpgw_build_info "allocator=\"$alloc\"")"
assert_eq "A: tools/call 2xx modern on route 0 / pool, as many as sent" $((N + 2)) \
	"$(metric "$P" mcpgw_requests_total 'route="0",upstream="pool",mcp_method="tools/call",era="modern",status_class="2xx"')"
assert_eq "A: tools/list counted once" 1 "$(metric "$P" mcpgw_requests_total 'mcp_method="tools/list"')"
assert_eq "A: an unknown method counts as other" 1 "$(metric "$P" mcpgw_requests_total 'mcp_method="other"')"
assert_nomatch "A: the unknown method's name is no label" 'vendor/custom' "$(cat "$P")"
assert_eq "A: tool whoami counted by name" $N "$(metric "$P" mcpgw_tool_calls_total 'tool="whoami"')"
assert_eq "A: the second name has its own series" 1 "$(metric "$P" mcpgw_tool_calls_total 'tool="echo"')"
assert_eq "A: past the cap of 2 the name counts as other" 1 "$(metric "$P" mcpgw_tool_calls_total 'tool="other"')"
assert_nomatch "A: ... and is not a label" 'tool="add"' "$(cat "$P")"
assert_eq "A: duration histogram count = requests" $((N + 2)) \
	"$(metric "$P" mcpgw_request_duration_seconds_count 'mcp_method="tools/call"')"
assert_eq "A: ... +Inf bucket = count" $((N + 2)) \
	"$(metric "$P" mcpgw_request_duration_seconds_bucket 'mcp_method="tools/call",le="\+Inf"')"
assert_eq "A: both replicas up" 2 "$(metric "$P" mcpgw_upstream_server_up 'upstream="pool"')"
assert_cmp "A: connections accepted on the main listener" "$(metric "$P" mcpgw_connections_accepted_total "listener=\"$GW_A\"")" '>=' $((N + 5))
assert_cmp "A: ... and on the admin listener" "$(metric "$P" mcpgw_connections_accepted_total "listener=\"$ADM_A\"")" '>=' 1
assert_eq "A: no reload yet" 0 "$(metric "$P" mcpgw_reloads_total 'result="success"')"
assert_eq "A: two workers" 2 "$(metric "$P" mcpgw_workers '')"

out=$(curl -sS --max-time 5 -I -o "$T_DIR/head.hdr" -w '%{http_code} %{size_download}' "http://$ADM_A/metrics")
assert_eq "A: HEAD /metrics: 200 without a body" "200 0" "$out"
assert_cmp "A: ... with the length of the page" "$(HDR=$T_DIR/head.hdr hdr content-length)" '>' 1000
req POST "http://$ADM_A/metrics" --data x
assert_code "A: POST /metrics" 405
assert_eq "A: ... Allow names GET and HEAD" "GET, HEAD" "$(hdr allow)"

# an SSE stream open through the gateway
LISTEN=$(modern_body 30 subscriptions/listen '{"notifications":{"toolsListChanged":true}}')
stream_open listen 20 POST "$G_URL" -H 'Content-Type: application/json' \
	-H 'Accept: application/json, text/event-stream' \
	-H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: subscriptions/listen' \
	--data-binary "$LISTEN"
LPID=$S_PID
wait_match "$T_DIR/listen.body" 'notifications/subscriptions/acknowledged' 10 ||
	fail "A: listen stream not acknowledged"
scrape "$ADM_A" a2
assert_eq "A: one SSE stream open" 1 "$(metric "$T_DIR/a2.prom" mcpgw_sse_streams_open '')"
kill_wait "$LPID" TERM 5
sse_closed() { scrape "$ADM_A" a3; [ "$(metric "$T_DIR/a3.prom" mcpgw_sse_streams_open '')" = 0 ]; }
poll_until 10 sse_closed && ok "A: the stream closed: none open" ||
	fail "A: mcpgw_sse_streams_open stays $(metric "$T_DIR/a3.prom" mcpgw_sse_streams_open '')"
assert_cmp "A: SSE streams begun" "$(metric "$T_DIR/a3.prom" mcpgw_sse_streams_total '')" '>=' 1

# a killed replica shows up 0
kill_wait "$A2P" KILL 5 || fail "A: replica a2 did not die"
a2_down() { scrape "$ADM_A" a4; [ "$(metric "$T_DIR/a4.prom" mcpgw_upstream_server_up "server=\"http://$A2\"")" = 0 ]; }
poll_until 10 a2_down && ok "A: killed replica: mcpgw_upstream_server_up 0" ||
	fail "A: killed replica still up in the metrics"
P=$T_DIR/a4.prom
assert_eq "A: ... the other stays 1" 1 "$(metric "$P" mcpgw_upstream_server_up "server=\"http://$A1\"")"
assert_eq "A: ... its state is down" 1 "$(metric "$P" mcpgw_upstream_server_state "server=\"http://$A2\",state=\"down\"")"
assert_cmp "A: ... a health transition to down" "$(metric "$P" mcpgw_upstream_health_transitions_total "server=\"http://$A2\",to=\"down\"")" '>=' 1
promtool_clean "$P" "A (one replica down)"
sf_stop_serve "$G_PID"

# ===== B. auto mode, legacy sessions, a re-pin; prometheus ========================
start_backend --era legacy --id b1
B1=$B_ADDR
declare -A BPID=([b1]=$B_PID)
start_backend --era legacy --id b2
B2=$B_ADDR
BPID[b2]=$B_PID
SF_WORKERS=2 sf_config "$T_DIR/b.yaml" auto "$B1" "$B2"
start_serve -c "$T_DIR/b.yaml"
GW_B=$G_ADDR
sf_init "$G_URL" || die "B: no session"
lwho "$G_URL"
PIN=$WHO
[ -n "$PIN" ] || die "B: whoami failed: HTTP $CODE"
kill_wait "${BPID[$PIN]}" KILL 5 || fail "B: $PIN did not die"
lwho "$G_URL"
assert_code "B: the session's next request after the kill" 200
assert_ne "B: ... on the other replica" "$PIN" "$WHO"
lwho "$G_URL"
scrape "$GW_B" b1
P=$T_DIR/b1.prom
promtool_clean "$P" "B"
assert_eq "B: one session created" 1 "$(metric "$P" mcpgw_sessions_created_total '')"
assert_eq "B: ... active in the memory store" 1 "$(metric "$P" mcpgw_sessions_active 'store="memory"')"
assert_cmp "B: re-pins (any reason)" "$(metric "$P" mcpgw_session_repins_total '')" '>=' 1
assert_cmp "B: replays sent" "$(metric "$P" mcpgw_session_replays_total '')" '>=' 1
assert_eq "B: no session unrecoverable" 0 "$(metric "$P" mcpgw_sessions_unrecoverable_total '')"
assert_eq "B: the store created one record" 1 "$(metric "$P" mcpgw_session_store_operations_total 'store="memory",op="create",result="ok"')"
assert_cmp "B: store lookups" "$(metric "$P" mcpgw_session_store_operations_total 'op="lookup",result="ok"')" '>=' 3
assert_eq "B: lookup latency histogram counts them all" \
	"$(metric "$P" mcpgw_session_store_operations_total 'op="lookup"')" \
	"$(metric "$P" mcpgw_session_store_operation_duration_seconds_count 'op="lookup"')"
assert_eq "B: tools/call legacy 2xx" 3 "$(metric "$P" mcpgw_requests_total 'mcp_method="tools/call",era="legacy",status_class="2xx"')"
assert_eq "B: initialize counted" 1 "$(metric "$P" mcpgw_requests_total 'mcp_method="initialize",era="legacy",status_class="2xx"')"
CALLS=$(metric "$P" mcpgw_requests_total 'mcp_method="tools/call"')
b_down() { scrape "$GW_B" b2; [ "$(metric "$T_DIR/b2.prom" mcpgw_upstream_server_state 'state="down"')" = 1 ]; }
poll_until 10 b_down && ok "B: the killed replica shows down" ||
	fail "B: no server down in the metrics"

# a real prometheus scrapes the gateway
PROM=""
for try in 1 2 3; do
	port=$(free_port) || continue
	mkdir -p "$T_DIR/tsdb$try"
	cat >"$T_DIR/prom.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: mcpgw
    scrape_interval: 1s
    metrics_path: /metrics
    static_configs:
      - targets: ['$GW_B']
YAML
	prometheus --config.file="$T_DIR/prom.yml" --storage.tsdb.path="$T_DIR/tsdb$try" \
		--web.listen-address="127.0.0.1:$port" --log.level=warn \
		>"$T_DIR/prom$try.out" 2>"$T_DIR/prom$try.log" &
	PPID_=$!
	track_pid "$PPID_"
	i=0
	while [ $i -lt 100 ]; do
		if [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/-/ready")" = 200 ]; then
			PROM=127.0.0.1:$port
			break
		fi
		kill -0 "$PPID_" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	[ -n "$PROM" ] && break
	kill_wait "$PPID_" KILL 5
done
[ -n "$PROM" ] || die "prometheus did not start: $(tail -n 5 "$T_DIR"/prom*.log)"
log "prometheus (pid $PPID_) on $PROM"

pq() { # QUERY -> the value of the first result, empty when none
	curl -sS --max-time 5 -G "http://$PROM/api/v1/query" --data-urlencode "query=$1" 2>/dev/null |
		jq -r '.data.result[0].value[1] // empty' 2>/dev/null
}
has_build_info() { [ "$(pq 'mcpgw_build_info')" = 1 ]; }
poll_until 30 has_build_info && ok "B: prometheus has mcpgw_build_info" ||
	fail "B: prometheus never returned mcpgw_build_info"
target_up() {
	curl -sS --max-time 5 "http://$PROM/api/v1/targets" 2>/dev/null |
		jq -e --arg t "$GW_B" '.data.activeTargets[] | select(.labels.instance == $t and .health == "up")' >/dev/null 2>&1
}
poll_until 15 target_up && ok "B: prometheus shows the gateway target up" ||
	fail "B: the target is not up: $(curl -sS --max-time 5 "http://$PROM/api/v1/targets" | head -c 400)"
assert_eq "B: prometheus's tools/call counter = the gateway's" "$CALLS" \
	"$(pq 'sum(mcpgw_requests_total{mcp_method="tools/call"})')"
assert_eq "B: prometheus's created sessions" 1 "$(pq 'mcpgw_sessions_created_total')"
assert_eq "B: prometheus: up is 1" 1 "$(pq 'up{job="mcpgw"}')"
kill_wait "$PPID_" TERM 10 || { kill -KILL "$PPID_" 2>/dev/null; fail "B: prometheus did not stop on SIGTERM"; }
sf_stop_serve "$G_PID"

# ===== C. access rules, TLS handshake failures, configuration errors ================
gen_cert
start_backend --era modern --id c0
cat >"$T_DIR/t.yaml" <<YAML
listeners:
  - address: 127.0.0.1:0
    tls:
      cert: $CERT
      key: $KEY
upstreams:
  - name: pool
    servers:
      - url: http://$B_ADDR
YAML
start_serve -c "$T_DIR/t.yaml"
# plain HTTP, then a client that hangs up mid-handshake: two failures
curl -sS --max-time 5 -o /dev/null "http://$G_ADDR/mcpgw/stats" 2>/dev/null
timeout 5 bash -c "exec 3<>/dev/tcp/${G_ADDR%:*}/${G_ADDR##*:}; printf '\\x16\\x03\\x01\\x00' >&3; exec 3>&-" 2>/dev/null
tls_failed() {
	curl -sS --max-time 5 --cacert "$CERT" -o "$T_DIR/t.prom" "https://localhost:${G_ADDR##*:}/metrics" 2>/dev/null &&
		[ "$(metric "$T_DIR/t.prom" mcpgw_tls_handshake_failures_total "listener=\"$G_ADDR\"")" = 2 ]
}
poll_until 10 tls_failed && ok "C: two failed TLS handshakes counted" ||
	fail "C: mcpgw_tls_handshake_failures_total is '$(metric "$T_DIR/t.prom" mcpgw_tls_handshake_failures_total '')', expected 2"
assert_cmp "C: ... and the good ones are connections" \
	"$(metric "$T_DIR/t.prom" mcpgw_connections_accepted_total "listener=\"$G_ADDR\"")" '>=' 3
promtool_clean "$T_DIR/t.prom" "C (TLS)"
sf_stop_serve "$G_PID"

# ===== C. access rules and configuration errors ====================================
# connections refused at limits.max_connections
cat >"$T_DIR/r.yaml" <<YAML
listeners:
  - address: 127.0.0.1:0
workers: 1
limits:
  max_connections: 1
upstreams:
  - name: pool
    servers:
      - url: http://$B_ADDR
YAML
start_serve -c "$T_DIR/r.yaml"
exec 3<>"/dev/tcp/${G_ADDR%:*}/${G_ADDR##*:}" || die "C: cannot connect"
sleep 0.3
curl -sS --max-time 5 -o /dev/null "http://$G_ADDR/mcpgw/readyz" 2>/dev/null &&
	fail "C: a second connection was served past max_connections 1"
exec 3>&-
# (polled: the held connection's close may reach the gateway after the
# next scrape's connect, which is then refused too, or sees 2 open)
refused() {
	scrape "$G_ADDR" r
	[ "$CODE" = 200 ] && [ "$(metric "$T_DIR/r.prom" mcpgw_connections_refused_total '')" -ge 1 ] 2>/dev/null &&
		[ "$(metric "$T_DIR/r.prom" mcpgw_connections_open '')" = 1 ]
}
poll_until 10 refused && ok "C: the refused connection is counted, one open (the scrape's)" ||
	fail "C: refused '$(metric "$T_DIR/r.prom" mcpgw_connections_refused_total '')', open '$(metric "$T_DIR/r.prom" mcpgw_connections_open '')'"
sf_stop_serve "$G_PID"

start_backend --era modern --id c1
cat >"$T_DIR/c.yaml" <<YAML
listeners:
  - address: 127.0.0.1:0
upstreams:
  - name: pool
    servers:
      - url: http://$B_ADDR
admin:
  metrics: off
YAML
start_serve -c "$T_DIR/c.yaml"
req GET "http://$G_ADDR/metrics"
assert_code "C: admin.metrics: off: /metrics is forwarded (the replica's 404)" 404
assert_nomatch "C: ... not the gateway's page" 'mcpgw_' "$BODY"
req GET "http://$G_ADDR/mcpgw/stats"
assert_code "C: /mcpgw/stats still served" 200
sf_stop_serve "$G_PID"

printf 'upstreams:\n  - name: p\n    servers:\n      - url: http://127.0.0.1:1\nadmin:\n  metrics_path: /mcpgw/stats\n' >"$T_DIR/bad1.yaml"
out=$("$MCPGW" check-config -c "$T_DIR/bad1.yaml" 2>&1)
assert_eq "C: a metrics_path of another page: exit 2" 2 "$?"
assert_match "C: ... the message names the key" 'admin\.metrics_path' "$out"
printf 'listeners:\n  - address: 127.0.0.1:0\nupstreams:\n  - name: p\n    servers:\n      - url: http://127.0.0.1:1\nadmin:\n  metrics_listener: 127.0.0.9:9\n' >"$T_DIR/bad2.yaml"
out=$(timeout 10 "$MCPGW" serve -c "$T_DIR/bad2.yaml" 2>&1 </dev/null)
assert_eq "C: a metrics_listener that is no listener: exit 2" 2 "$?"
assert_match "C: ... the message says so" 'metrics_listener.*not one of the listeners' "$out"

finish
