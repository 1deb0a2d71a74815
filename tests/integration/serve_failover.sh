#!/bin/bash
# serve_failover.sh - a replica dies under "mcpgw serve" (SIGKILL, by PID)
# while clients keep calling: sequential requests never fail (a refused
# connection is retried on another replica), the one call that was in
# flight on the dead replica is reported to its client as a gateway error
# carrying its id (it is not retried: it reached the replica), the dead
# replica is ejected passively and marked down by the active check, and
# once restarted on the same port the active check brings it back.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node sha256sum
require_mcpgw
watchdog 90

declare -A ADDR PID
for r in r1 r2 r3; do
	start_backend --era modern --id "$r" --record 50
	ADDR[$r]=$B_ADDR
	PID[$r]=$B_PID
done
P2=${ADDR[r2]##*:}

# workers 1 + round robin: three calls started in a row land on three
# different replicas.
cat >"$T_DIR/serve.yaml" <<EOF
listeners:
  - address: 127.0.0.1:0
workers: 1
upstreams:
  - name: pool
    balancer: round_robin
    servers:
      - url: http://${ADDR[r1]}
      - url: http://${ADDR[r2]}
      - url: http://${ADDR[r3]}
    # active checks slow to condemn (3 failures 1 s apart), so that the
    # passive ejection is what takes the dead replica out first
    health:
      interval: 1s
      timeout: 500ms
      fall: 3
      rise: 2
    outlier:
      consecutive_connect_failures: 1
      base_ejection: 1s
      max_ejection: 2s
EOF
start_serve -c "$T_DIR/serve.yaml"
GW=$G_URL
SLEEPH=(-H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: sleep')

# --- before: every replica serves -------------------------------------------------------------
FAILED=""
BEFORE=""
for i in $(seq 1 9); do
	who "$GW"
	if [ "$CODE" = 200 ] && [ -n "$WHO" ]; then BEFORE="$BEFORE $WHO"; else FAILED="$FAILED #$i:$CODE"; fi
done
assert_eq "before the kill: no call failed" "" "$FAILED"
assert_eq "before the kill every replica served" "r1 r2 r3" "$(printf '%s\n' $BEFORE | sort -u | tr '\n' ' ' | sed 's/ $//')"

# --- three long calls in flight, one per replica ------------------------------------------
declare -A SHA_OF
CURL_MAX=40
for id in 901 902 903; do
	b=$(modern_body "$id" tools/call '{"name":"sleep","arguments":{"ms":8000}}')
	SHA_OF[$id]=$(printf '%s' "$b" | sha256sum | cut -d' ' -f1)
	bg_post "sleep$id" "$GW" "$b" "${SLEEPH[@]}"
	eval "SPID$id=\$BG_PID"
done
CURL_MAX=10
# which call sits on r2 (its record, read before the kill)
on_r2() {
	ON_R2=""
	local id
	for id in 901 902 903; do
		if [ "$(rec "${ADDR[r2]}" | jq --arg s "${SHA_OF[$id]}" '[.requests[] | select(.body_sha256 == $s)] | length')" -gt 0 ] 2>/dev/null; then
			ON_R2=$id
			return 0
		fi
	done
	return 1
}
all_three_busy() {
	local r n
	for r in r1 r2 r3; do
		n=$(curl -sS --max-time 5 "http://${ADDR[$r]}/stats" | jq -r '.inflight' 2>/dev/null)
		# inflight counts the /stats request itself
		[ "${n:-0}" -ge 2 ] || return 1
	done
	return 0
}
poll_until 10 all_three_busy || fail "the three sleep calls did not spread over the three replicas"
on_r2 || die "no sleep call recorded on r2"
log "call $ON_R2 is in flight on r2"

# --- r2 dies; sequential calls go on -------------------------------------------------------------
stop_wait "${PID[r2]}" KILL 5 || fail "r2 did not die on SIGKILL"
log "r2 (pid ${PID[r2]}) killed with SIGKILL (status $STOP_STATUS) with call $ON_R2 in flight"
FAILED=""
AFTER=""
for i in $(seq 1 45); do
	who "$GW"
	if [ "$CODE" = 200 ] && [ -n "$WHO" ]; then AFTER="$AFTER $WHO"; else FAILED="$FAILED #$i:$CODE"; fi
done
assert_eq "no sequential call failed while r2 was dead" "" "$FAILED"
assert_eq "after the kill r1 and r3 served everything" "r1 r3" "$(printf '%s\n' $AFTER | sort -u | tr '\n' ' ' | sed 's/ $//')"

# --- the in-flight calls --------------------------------------------------------------------------
for id in 901 902 903; do
	eval "wait_pid \$SPID$id 40"
	bg_result "sleep$id"
	if [ "$id" = "$ON_R2" ]; then
		assert_code "call $id, in flight on the killed replica, is reported as failed" '50[24]'
		assert_jq "call $id: a gateway JSON-RPC error carrying its id" \
			".id == $id and .error.code <= -32000 and .error.code >= -32019"
	else
		assert_code "call $id on a surviving replica completes" 200
		assert_jq "call $id: its own result" ".id == $id and (.result.content[0].text | startswith(\"slept\"))"
	fi
done
fg_result
assert_eq "the call in flight on r2 was not replayed elsewhere (reached r2 only)" "" \
	"$(for r in r1 r3; do rec "${ADDR[$r]}" | jq -r --arg s "${SHA_OF[$ON_R2]}" '.requests[] | select(.body_sha256 == $s) | .seq'; done)"

# --- passive ejection, then the active check marks it down ----------------------------------------
if grep -Eq "event=upstream_ejected server=[^ ]*:$P2 " "$G_ERR"; then
	ok "r2 was ejected passively (connect failures)"
else
	fail "no passive ejection of r2 in the gateway log: $(grep -E "server=[^ ]*:$P2" "$G_ERR" | head -n 5)"
fi
wait_match "$G_ERR" "event=upstream_down server=[^ ]*:$P2 " 10 &&
	ok "the active check marked r2 down" ||
	fail "the active check never marked r2 down: $(grep -E "server=[^ ]*:$P2" "$G_ERR" | head -n 5)"
who "$GW"
assert_code "served while r2 is down" 200
UPS_BEFORE=$(grep -Ec "event=upstream_up server=[^ ]*:$P2 " "$G_ERR")

# --- restart on the same port: the active check re-admits it --------------------------------------
start_backend --listen "${ADDR[r2]}" --era modern --id r2 --record 50
back_on_r2() {
	who "$GW"
	[ "$WHO" = r2 ]
}
if poll_until 15 back_on_r2; then
	ok "r2 serves again after its restart"
else
	fail "r2 was not re-admitted within 15 s of its restart"
fi
assert_eq "re-admitted by the active check (an 'up' transition logged)" "$((UPS_BEFORE + 1))" \
	"$(grep -Ec "event=upstream_up server=[^ ]*:$P2 " "$G_ERR")"
FAILED=""
for i in $(seq 1 9); do
	who "$GW"
	[ "$CODE" = 200 ] || FAILED="$FAILED #$i:$CODE"
	AFTER="$AFTER $WHO"
done
assert_eq "no call failed after the re-admission" "" "$FAILED"

finish
