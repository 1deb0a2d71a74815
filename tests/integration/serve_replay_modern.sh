#!/bin/bash
# serve_replay_modern.sh - modern calls lost in flight through the
# stateless gateway (issue 17): two "mcpgw backend --era modern"
# replicas; r1 holds every answer back (--delay-ms) and has nearly all the
# weight, so calls sit in flight on it when it is SIGKILLed.  Then:
#   A. nothing learned yet: server/discover (safe by the specification)
#      is replayed on r2 and succeeds; tools/call sleep (read-only, but no
#      tools/list went through the gateway), counter_create (not
#      annotated) and a sleep carrying requestState (SEP-2322) get the
#      not-replayed error -32010 and never reach r2;
#   B. after a tools/list went through the gateway (the group learned its
#      annotations, on either worker): sleep and tools/list are replayed
#      and succeed; counter_create and the requestState call are refused;
#   C. a route with "replay: always": counter_create and the requestState
#      call are replayed too;
#   D. a group with "tools_probe: true": the gateway asked for tools/list
#      itself, so sleep is replayed although no client listed the tools.
# Every case counts in /mcpgw/stats (upstreams[].replays) and /metrics
# (mcpgw_replays_total); the access lines note replayed-after-loss and
# not-replayed.  Which replica holds a call is read from the replicas'
# /stats (in flight) and /debug/requests (record); every wait is bounded.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq sha256sum
require_mcpgw
watchdog 240

DELAY=5000 # long enough that all the calls of a round sit in flight together on a loaded machine
start_backend --era modern --id r1 --record 200 --delay-ms $DELAY
R1=$B_ADDR
R1PID=$B_PID
start_backend --era modern --id r2 --record 200
R2=$B_ADDR

# gw_config FILE REPLAY [GROUP_EXTRA]: two workers (what one learns the other uses),
# r1 weighted 1000:1 under least_request, health on GET /healthz (not held
# back by --delay-ms).  least_request compares (in flight + 1) / weight of
# both servers, so r1 takes every new call while it holds fewer than 999
# and is up: deterministic.  (round_robin starts each worker at a random
# point of its 1001-pick cycle, so one call in a test this long could
# land on r2 by turn.)
gw_config() {
	cat >"$1" <<EOF
listeners:
  - address: 127.0.0.1:0
workers: 2
log:
  access: true
upstreams:
  - name: pool
    balancer: least_request
    servers:
      - url: http://$R1
        weight: 1000
      - url: http://$R2
        weight: 1
    health:
      method: GET
      path: /healthz
      interval: 300ms
      timeout: 250ms
      rise: 1
      fall: 2
    outlier:
      consecutive_connect_failures: 3
      base_ejection: 300ms
      max_ejection: 600ms
${3:-}
routes:
  - upstream: pool
    retries: 2
    replay: $2
retry_budget:
  min_per_second: 50
EOF
}
gw_config "$T_DIR/safe.yaml" safe
gw_config "$T_DIR/always.yaml" always
gw_config "$T_DIR/probe.yaml" safe "    tools_probe: true"

# r1_up: (re)starts r1 on its port when it is dead.
r1_up() {
	if ! kill -0 "$R1PID" 2>/dev/null || is_zombie "$R1PID"; then
		start_backend --listen "$R1" --era modern --id r1 --record 200 --delay-ms $DELAY
		R1PID=$B_PID
	fi
}

# gw_on_r1 URL: waits (bounded) until new calls through the gateway land
# on r1 again (health and ejection have let it back in).
gw_on_r1() {
	local k
	for k in $(seq 1 30); do
		who "$1"
		[ "$WHO" = r1 ] && return 0
		sleep 0.3
	done
	return 1
}

# call NAME ID METHOD PARAMS: prepares a modern request (the SEP-2243
# headers mirrored); SHA_<NAME> gets its body's digest.  fire NAMES...
# then sends the prepared ones in the background, back to back, so that
# they are all in flight together however slow the preparing was.
call() {
	local name=$1 id=$2 method=$3 params=$4 body
	body=$(modern_body "$id" "$method" "$params")
	eval "SHA_$name=$(sha_of "$body")"
	printf '%s' "$body" >"$T_DIR/$name.req"
	printf '%s' "$method" >"$T_DIR/$name.method"
	: >"$T_DIR/$name.mname"
	[ "$method" = tools/call ] && printf '%s' "$params" | jq -j .name >"$T_DIR/$name.mname"
}
fire() {
	local name extra
	for name in "$@"; do
		extra=()
		[ -s "$T_DIR/$name.mname" ] && extra=(-H "Mcp-Name: $(cat "$T_DIR/$name.mname")")
		bg_post "$name" "$GW" "$(cat "$T_DIR/$name.req")" \
			-H "MCP-Protocol-Version: $MODERN_VERSION" \
			-H "Mcp-Method: $(cat "$T_DIR/$name.method")" "${extra[@]}"
		eval "PID_$name=\$BG_PID"
	done
}

# kill_r1 N NAMES...: sends the prepared calls, waits until r1 holds all
# N, SIGKILLs it and collects every call (their CODE/BODY through result
# NAME).
kill_r1() {
	local n=$1 name pid
	shift
	fire "$@"
	wait_inflight "http://$R1" "$n" || fail "the $n calls did not all reach r1: $(bstat "$R1" .inflight) in flight"
	kill_wait "$R1PID" KILL 5 || fail "r1 did not die on SIGKILL"
	for name in "$@"; do
		eval "pid=\$PID_$name"
		wait_pid "$pid" 20
	done
}
result() {
	bg_result "$1"
	log "$1: HTTP $CODE $(printf '%s' "$BODY" | head -c 240)"
}
# on_r2 NAME: how many times r2 received that call's bytes.
on_r2() {
	local sha
	eval "sha=\$SHA_$1"
	rec_sha "$R2" "$sha"
}
replays() { gstat "$GWADDR" ".upstreams[0].replays.$1"; }
metric() {
	curl -sS --max-time 5 "http://$GWADDR/metrics" 2>/dev/null |
		awk -v r="$1" '$1 ~ /^mcpgw_replays_total\{/ && index($1, "result=\"" r "\"") { s += $2 } END { print s + 0 }'
}

SLEEP='{"name":"sleep","arguments":{"ms":50}}'
SLEEP_STATE='{"name":"sleep","arguments":{"ms":50},"requestState":"c3RhdGU="}'
COUNTER='{"name":"counter_create","arguments":{}}'

start_serve -c "$T_DIR/safe.yaml"
GW=$G_URL
GWADDR=$G_ADDR
GWPID=$G_PID
GWERR=$G_ERR
gw_on_r1 "$GW" || die "calls never landed on r1"

# --- A: nothing learned yet ----------------------------------------------------------------
assert_eq "A: no tool known replay-safe before any tools/list" 0 "$(gstat "$GWADDR" '.upstreams[0].replays.safe_tools')"
rec_clear "$R2"
call a_discover 11 server/discover '{}'
call a_sleep 12 tools/call "$SLEEP"
call a_counter 13 tools/call "$COUNTER"
call a_state 14 tools/call "$SLEEP_STATE"
kill_r1 4 a_discover a_sleep a_counter a_state
result a_discover
assert_code "A: server/discover lost in flight is replayed and succeeds" 200
assert_jq "A: ... with its own answer, from r2" '.id == 11 and (.result.instructions | test("replica r2"))'
assert_eq "A: server/discover reached r2 once" 1 "$(on_r2 a_discover)"
result a_sleep
assert_code "A: sleep (never seen annotated) is not replayed" 502
assert_jq "A: ... the not-replayed error -32010 with its id" \
	'.id == 12 and .error.code == -32010 and (.error.message | test("sleep"))'
assert_eq "A: sleep did not reach r2" 0 "$(on_r2 a_sleep)"
result a_counter
assert_code "A: counter_create is not replayed" 502
assert_jq "A: ... -32010 with its id" '.id == 13 and .error.code == -32010'
assert_eq "A: counter_create did not reach r2" 0 "$(on_r2 a_counter)"
result a_state
assert_code "A: a call carrying requestState is not replayed" 502
assert_jq "A: ... -32010 naming requestState" \
	'.id == 14 and .error.code == -32010 and (.error.message | test("requestState"))'
assert_eq "A: the requestState call did not reach r2" 0 "$(on_r2 a_state)"
fg_result
assert_eq "A: counted replayed" 1 "$(replays replayed)"
assert_eq "A: counted refused" 3 "$(replays refused)"

# --- B: annotations learned from a tools/list through the gateway ----------------------------
r1_up
gw_on_r1 "$GW" || die "calls never landed on r1 again"
modern "$GW" 20 tools/list '{}'
assert_code "B: tools/list through the gateway" 200
assert_jq "B: sleep is annotated read-only, counter_create is not" \
	'(.result.tools[] | select(.name == "sleep") | .annotations.readOnlyHint == true) and
	 (.result.tools[] | select(.name == "counter_create") | (.annotations.readOnlyHint or .annotations.idempotentHint) | not)'
SAFE=$(gstat "$GWADDR" '.upstreams[0].replays.safe_tools')
assert_match "B: the group learned its replay-safe tools" '^[1-9][0-9]*$' "$SAFE"
rec_clear "$R2"
call b_list 21 tools/list '{}'
call b_sleep 22 tools/call "$SLEEP"
call b_counter 23 tools/call "$COUNTER"
call b_state 24 tools/call "$SLEEP_STATE"
kill_r1 4 b_list b_sleep b_counter b_state
result b_list
assert_code "B: tools/list lost in flight is replayed" 200
assert_jq "B: ... its own answer" '.id == 21 and (.result.tools | map(.name) | index("sleep") != null)'
assert_eq "B: tools/list reached r2 once" 1 "$(on_r2 b_list)"
result b_sleep
assert_code "B: sleep (annotated readOnlyHint) is replayed and succeeds" 200
assert_jq "B: ... its own result" '.id == 22 and .result.content[0].text == "slept 50 ms"'
assert_eq "B: sleep reached r2 once" 1 "$(on_r2 b_sleep)"
result b_counter
assert_code "B: counter_create is still not replayed" 502
assert_jq "B: ... -32010 with its id" '.id == 23 and .error.code == -32010'
assert_eq "B: counter_create did not reach r2" 0 "$(on_r2 b_counter)"
result b_state
assert_code "B: sleep carrying requestState is not replayed, annotated or not" 502
assert_jq "B: ... -32010" '.id == 24 and .error.code == -32010'
assert_eq "B: the requestState call did not reach r2" 0 "$(on_r2 b_state)"
fg_result
assert_eq "B: counted replayed (1 + 2)" 3 "$(replays replayed)"
assert_eq "B: counted refused (3 + 2)" 5 "$(replays refused)"
assert_eq "B: /metrics agrees: replayed" 3 "$(metric replayed)"
assert_eq "B: /metrics agrees: refused" 5 "$(metric refused)"
N=$(grep -c 'replayed-after-loss' "$GWERR")
assert_eq "B: the access lines note the replays" 3 "$N"
N=$(grep -c 'not-replayed' "$GWERR")
assert_eq "B: the access lines note the refusals" 5 "$N"
sf_stop_serve "$GWPID"

# --- C: replay: always ------------------------------------------------------------------------
r1_up
start_serve -c "$T_DIR/always.yaml"
GW=$G_URL
GWADDR=$G_ADDR
GWPID=$G_PID
gw_on_r1 "$GW" || die "calls never landed on r1 (replay: always gateway)"
rec_clear "$R2"
call c_counter 31 tools/call "$COUNTER"
call c_state 32 tools/call "$SLEEP_STATE"
kill_r1 2 c_counter c_state
result c_counter
assert_code "C: replay: always replays counter_create" 200
assert_jq "C: ... its own result (a handle from r2)" '.id == 31 and (.result.structuredContent.handle | length) > 0'
assert_eq "C: counter_create reached r2 once" 1 "$(on_r2 c_counter)"
result c_state
assert_code "C: replay: always replays the requestState call" 200
assert_jq "C: ... its own result" '.id == 32 and .result.content[0].text == "slept 50 ms"'
fg_result
assert_eq "C: counted replayed" 2 "$(replays replayed)"
assert_eq "C: counted refused" 0 "$(replays refused)"
sf_stop_serve "$GWPID"

# --- D: the gateway's own tools/list (tools_probe) -------------------------------------------
r1_up
start_serve -c "$T_DIR/probe.yaml"
GW=$G_URL
GWADDR=$G_ADDR
GWPID=$G_PID
learned() { [ "$(gstat "$GWADDR" '.upstreams[0].replays.safe_tools')" -gt 0 ] 2>/dev/null; }
poll_until 15 learned || fail "D: the tools probe taught the group nothing"
assert_eq "D: learned from the gateway's own tools/list, no client's" 1 \
	"$(gstat "$GWADDR" '.upstreams[0].replays.tools_lists_learned')"
gw_on_r1 "$GW" || die "calls never landed on r1 (tools_probe gateway)"
rec_clear "$R2"
call d_sleep 41 tools/call "$SLEEP"
call d_counter 42 tools/call "$COUNTER"
kill_r1 2 d_sleep d_counter
result d_sleep
assert_code "D: sleep, known safe from the probe, is replayed" 200
assert_jq "D: ... its own result" '.id == 41 and .result.content[0].text == "slept 50 ms"'
assert_eq "D: sleep reached r2 once" 1 "$(on_r2 d_sleep)"
result d_counter
assert_code "D: counter_create is not replayed" 502
assert_jq "D: ... -32010" '.id == 42 and .error.code == -32010'
fg_result
sf_stop_serve "$GWPID"
finish
