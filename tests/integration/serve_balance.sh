#!/bin/bash
# serve_balance.sh - "mcpgw serve" in stateless mode spreads modern
# requests over three "mcpgw backend --era modern" replicas as each
# balancer promises, seen through the whoami tool: round_robin alternates
# exactly (per worker: one connection, or workers: 1) and honours weights;
# least_request (two choices) avoids a replica busy with a long call;
# random reaches every replica; hash on a header pins each key to one
# replica and spreads keys.  Lifecycle: SIGHUP without -c is refused, a SIGTERM
# right after "listening on" is a graceful stop, a call in flight at
# SIGTERM completes before exit 0, a port in use is exit 1, more than 16
# listeners and a shutdown timeout above 1 h are usage errors.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node
require_mcpgw
watchdog 90

declare -A ADDR PID
for r in r1 r2 r3; do
	start_backend --era modern --id "$r" --record 100
	ADDR[$r]=$B_ADDR
	PID[$r]=$B_PID
done

# conf FILE BALANCER [EXTRA_GROUP_YAML [W1 W2 W3 [TOP_YAML]]]: a serve
# configuration with one group over the three replicas.
conf() {
	local f=$1 bal=$2 extra=${3:-} w1=${4:-1} w2=${5:-1} w3=${6:-1} top=${7:-}
	cat >"$f" <<EOF
listeners:
  - address: 127.0.0.1:0
$top
upstreams:
  - name: pool
    balancer: $bal
$extra
    servers:
      - url: http://${ADDR[r1]}
        weight: $w1
      - url: http://${ADDR[r2]}
        weight: $w2
      - url: http://${ADDR[r3]}
        weight: $w3
    health:
      interval: 1s
EOF
}

# whos N [curl options...]: N sequential whoami calls through the gateway,
# each on its own connection; sets WHOS (space-separated ids, "ERR:CODE"
# for a failed call).
whos() {
	local n=$1 i=0
	shift
	WHOS=""
	while [ $i -lt "$n" ]; do
		who "$G_URL" "$@"
		if [ "$CODE" = 200 ] && [ -n "$WHO" ]; then
			WHOS="$WHOS $WHO"
		else
			WHOS="$WHOS ERR:$CODE"
		fi
		i=$((i + 1))
	done
	WHOS=${WHOS# }
}

count_of() { # ID LIST
	printf '%s\n' $2 | grep -cx -- "$1"
}

# is_rotation LIST PERIOD: 0 when LIST repeats its first PERIOD distinct
# entries in the same order.
is_rotation() {
	local list=($1) p=$2 i
	[ "$(printf '%s\n' "${list[@]:0:$p}" | sort -u | wc -l)" -eq "$p" ] || return 1
	for ((i = p; i < ${#list[@]}; i++)); do
		[ "${list[$i]}" = "${list[$((i - p))]}" ] || return 1
	done
	return 0
}

# --- round robin, quick form, one keep-alive connection -------------------------------
start_serve --upstream "http://${ADDR[r1]}" --upstream "http://${ADDR[r2]}" --upstream "http://${ADDR[r3]}"
BODYW=$(modern_body 1 tools/call '{"name":"whoami","arguments":{}}')
CURL_ARGS=()
for i in 1 2 3 4 5 6 7 8 9; do
	[ $i -gt 1 ] && CURL_ARGS+=(--next)
	CURL_ARGS+=(-sS --max-time 10 -H 'Content-Type: application/json'
		-H 'Accept: application/json, text/event-stream'
		-H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: whoami'
		--data-binary "$BODYW" -w '\n' "$G_URL")
done
ONECONN=$(curl "${CURL_ARGS[@]}" 2>"$T_DIR/oneconn.err" | jq -r 'select(.result) | .result.content[0].text' | tr '\n' ' ')
ONECONN=${ONECONN% }
log "round robin over one connection: $ONECONN"
assert_eq "round robin (one connection): nine answers" 9 "$(printf '%s\n' $ONECONN | grep -c .)"
if is_rotation "$ONECONN" 3; then
	ok "round robin (one connection): exact rotation over the three replicas"
else
	fail "round robin (one connection): expected an exact rotation r?,r?,r? repeated, got: $ONECONN"
fi
stop_serve

# --- round robin, workers: 1, a new connection per request --------------------------------
conf "$T_DIR/rr.yaml" round_robin "" 1 1 1 "workers: 1"
start_serve -c "$T_DIR/rr.yaml"
whos 9
log "round robin, workers 1: $WHOS"
if is_rotation "$WHOS" 3; then
	ok "round robin (workers 1): exact rotation across connections"
else
	fail "round robin (workers 1): expected an exact rotation, got: $WHOS"
fi
# HTTP/2 clients take part in the same rotation.
whos 6 --http2-prior-knowledge
if is_rotation "$WHOS" 3; then
	ok "round robin (workers 1, h2 clients): exact rotation"
else
	fail "round robin (workers 1, h2 clients): expected an exact rotation, got: $WHOS"
fi
stop_serve

# --- weighted round robin: weights 1, 2, 3 ------------------------------------------------------
conf "$T_DIR/wrr.yaml" round_robin "" 1 2 3 "workers: 1"
start_serve -c "$T_DIR/wrr.yaml"
whos 12
log "weighted round robin 1:2:3: $WHOS"
assert_eq "weighted round robin: counts over two cycles are 2, 4, 6" "2 4 6" \
	"$(count_of r1 "$WHOS") $(count_of r2 "$WHOS") $(count_of r3 "$WHOS")"
FIRST6=$(printf '%s\n' $WHOS | head -n 6 | tr '\n' ' ')
assert_eq "weighted round robin: each cycle of six is proportional" "1 2 3" \
	"$(count_of r1 "$FIRST6") $(count_of r2 "$FIRST6") $(count_of r3 "$FIRST6")"
assert_nomatch "weighted round robin: interleaved (smooth), never r3 three times in a row" \
	'r3 r3 r3' "$WHOS"
stop_serve

# --- least request: a replica busy with a long call is avoided ---------------------------------
conf "$T_DIR/lr.yaml" least_request
start_serve -c "$T_DIR/lr.yaml"
for r in r1 r2 r3; do rec_clear "${ADDR[$r]}"; done
# a long call held open by curl (killed at the end: the gateway then
# cancels it upstream)
stream_open sleeper 60 POST "$G_URL" -H 'Content-Type: application/json' \
	-H 'Accept: application/json, text/event-stream' -H "MCP-Protocol-Version: $MODERN_VERSION" \
	-H 'Mcp-Method: tools/call' -H 'Mcp-Name: sleep' \
	--data-binary "$(modern_body 50 tools/call '{"name":"sleep","arguments":{"ms":60000}}')"
SLEEPER=$S_PID
# which replica holds the sleep (seen in its record)
busy_replica() {
	BUSY=""
	for r in r1 r2 r3; do
		if [ "$(rec_calls "${ADDR[$r]}" | jq -s 'map(select([.headers[] | select(.[0] | ascii_downcase == "mcp-name") | .[1]][0] == "sleep")) | length')" -gt 0 ]; then
			BUSY=$r
			return 0
		fi
	done
	return 1
}
inflight() { curl -sS --max-time 5 "http://${ADDR[$1]}/stats" | jq -r .inflight; }
poll_until 10 busy_replica || die "least_request: the sleep call reached no replica"
log "least_request: the sleep runs on $BUSY"
whos 20
log "least_request with $BUSY busy: $WHOS"
# inflight counts the /stats request itself
assert_eq "least_request: the long call was still in flight on $BUSY after the 20 calls" 2 "$(inflight "$BUSY")"
assert_eq "least_request: nothing sent to the busy replica $BUSY" 0 "$(count_of "$BUSY" "$WHOS")"
assert_eq "least_request: no call failed" 0 "$(printf '%s\n' $WHOS | grep -c '^ERR:')"
SPREAD=$(printf '%s\n' $WHOS | sort -u | grep -c .)
assert_eq "least_request: both idle replicas served" 2 "$SPREAD"
kill -TERM "$SLEEPER" 2>/dev/null
wait_pid "$SLEEPER" 5
idle_again() { [ "$(inflight "$BUSY")" = 1 ]; }
poll_until 10 idle_again || fail "least_request: the abandoned call was not cancelled on $BUSY"
stop_serve

# --- random ------------------------------------------------------------------------------------------
conf "$T_DIR/random.yaml" random
start_serve -c "$T_DIR/random.yaml"
whos 60
assert_eq "random: no call failed" 0 "$(printf '%s\n' $WHOS | grep -c '^ERR:')"
assert_eq "random: every replica served (60 calls)" "r1 r2 r3" "$(printf '%s\n' $WHOS | sort -u | tr '\n' ' ' | sed 's/ $//')"
log "random: r1 $(count_of r1 "$WHOS"), r2 $(count_of r2 "$WHOS"), r3 $(count_of r3 "$WHOS")"
stop_serve

# --- consistent hash on a header -------------------------------------------------------------------
conf "$T_DIR/hash.yaml" hash "    hash_header: X-Tenant"
start_serve -c "$T_DIR/hash.yaml"
PINNED=1
USED=""
for k in alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima; do
	whos 3 -H "X-Tenant: tenant-$k"
	if [ "$(printf '%s\n' $WHOS | sort -u | grep -c .)" != 1 ] || printf '%s' "$WHOS" | grep -q ERR; then
		PINNED=0
		fail "hash: key tenant-$k went to: $WHOS"
	fi
	USED="$USED ${WHOS%% *}"
done
[ $PINNED = 1 ] && ok "hash: each of 12 keys stays on one replica"
NUSED=$(printf '%s\n' $USED | sort -u | grep -c .)
if [ "$NUSED" -ge 2 ]; then
	ok "hash: keys spread over $NUSED replicas"
else
	fail "hash: 12 keys all landed on one replica: $USED"
fi
# the same key through HTTP/2 lands where it did over HTTP/1.1
whos 1 -H "X-Tenant: tenant-alpha"
A1=$WHO
whos 2 -H "X-Tenant: tenant-alpha" --http2-prior-knowledge
assert_eq "hash: the key's replica does not depend on the client protocol" "$A1 $A1" "$WHOS"
whos 3
assert_eq "hash: requests without the header are still served" 0 "$(printf '%s\n' $WHOS | grep -c '^ERR:')"

# --- admin.stats -----------------------------------------------------------------------
# loopback (the default) answers this loopback client; off makes the path
# an ordinary one, proxied to a replica like any other.
start_serve --upstream "http://${ADDR[r1]}"
STATS_CODE=$(curl -sS --max-time 5 -o "$T_DIR/stats.json" -w '%{http_code}' "http://$G_ADDR/mcpgw/stats")
assert_eq "admin.stats loopback (default): a loopback client reads the counters" 200 "$STATS_CODE"
assert_eq "admin.stats loopback: the counters are the gateway's" true \
	"$(jq 'has("upstreams")' "$T_DIR/stats.json" 2>/dev/null)"
stop_serve
rec_clear "${ADDR[r1]}"
conf "$T_DIR/nostats.yaml" round_robin "" 1 1 1 "admin:
  stats: off"
start_serve -c "$T_DIR/nostats.yaml"
STATS_CODE=$(curl -sS --max-time 5 -o "$T_DIR/stats.json" -w '%{http_code}' "http://$G_ADDR/mcpgw/stats")
assert_eq "admin.stats off: no gateway counters" false \
	"$(jq 'has("upstreams")' "$T_DIR/stats.json" 2>/dev/null || echo false)"
assert_eq "admin.stats off: the request went to a replica" 1 \
	"$({ rec "${ADDR[r1]}"; rec "${ADDR[r2]}"; rec "${ADDR[r3]}"; } | jq -s '[.[].requests[]? | select(.target == "/mcpgw/stats")] | length')"
stop_serve

# --- lifecycle -----------------------------------------------------------------------
# SIGHUP without a -c file: nothing to reload, the refusal is logged and
# the gateway keeps serving (serve_reload.sh tests the reload itself).
# A SIGTERM sent the moment "listening on" was printed is a graceful
# stop with status 0, never the default action.
start_serve --upstream "http://${ADDR[r1]}"
kill -HUP "$G_PID"
whos 1
assert_eq "SIGHUP: the gateway still serves" "r1" "$(echo $WHOS)"
log_has() { grep -q "$2" "$1" 2>/dev/null; }
poll_until 5 log_has "$G_ERR" "reload refused.*without a configuration file" && ok "SIGHUP: the refused reload is logged" ||
	fail "SIGHUP: no log line in $(tail -n 3 "$G_ERR")"
stop_serve
for i in 1 2 3; do
	start_serve --upstream "http://${ADDR[r1]}"
	stop_serve
done
# A call in flight at SIGTERM runs to its end (within the deadline), then
# the gateway exits 0.
start_serve --upstream "http://${ADDR[r1]}" --shutdown-timeout 10s
bg_post slow "$G_URL" "$(modern_body 60 tools/call '{"name":"sleep","arguments":{"ms":1500}}')" \
	-H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: sleep'
SLOW=$BG_PID
wait_inflight "http://${ADDR[r1]}" 1 || fail "shutdown: the slow call never reached r1"
kill_wait "$G_PID" TERM 10 && assert_eq "shutdown with a call in flight: exit 0" 0 "$STOP_STATUS" ||
	fail "shutdown with a call in flight: still running 10 s after SIGTERM"
wait_pid "$SLOW" 5
bg_result slow
assert_code "shutdown: the call in flight completed" 200
fg_result
# a listener that cannot bind: exit 1, named, nothing half started
"$MCPGW" serve --listen "${ADDR[r2]}" --upstream "http://${ADDR[r1]}" \
	>"$T_DIR/busy.out" 2>"$T_DIR/busy.err"
assert_eq "a port in use: exit 1" 1 "$?"
assert_match "a port in use: named" "cannot listen on ${ADDR[r2]}" "$(cat "$T_DIR/busy.err")"
# more listeners than one gateway serves: refused, not silently dropped
{
	echo 'listeners:'
	for i in $(seq 1 17); do echo "  - address: 127.0.0.1:0"; done
	echo "upstreams:"
	echo "  - name: pool"
	echo "    servers:"
	echo "      - url: http://${ADDR[r1]}"
} >"$T_DIR/many.yaml"
"$MCPGW" serve -c "$T_DIR/many.yaml" >"$T_DIR/many.out" 2>"$T_DIR/many.err"
assert_eq "17 listeners: usage error" 2 "$?"
assert_match "17 listeners: the error says the limit" 'at most 16' "$(cat "$T_DIR/many.err")"
"$MCPGW" serve --listen 127.0.0.1:0 --upstream "http://${ADDR[r1]}" \
	--shutdown-timeout 2h >/dev/null 2>"$T_DIR/st.err"
assert_eq "--shutdown-timeout above 1h: usage error" 2 "$?"

finish
