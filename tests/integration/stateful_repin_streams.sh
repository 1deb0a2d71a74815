#!/bin/bash
# stateful_repin_streams.sh - a re-pin ends the moved session's GET
# streams in every worker of the gateway, not only in the one whose
# request re-pinned it (issue 17).  Two workers; eight GET streams of one
# session on eight connections (the kernel spreads them over both
# workers); the pinned replica is SIGSTOPped, so its streams stay open
# and fall silent, and the health check marks it down; the next request
# re-pins the session to the other replica.  Every one of the eight
# streams is then closed by the gateway (their clients reconnect to the
# new pin), whichever worker holds it.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq
require_mcpgw
watchdog 60

declare -A ADDR PID
for r in r1 r2; do
	start_backend --era legacy --id "$r" --sse-keepalive 200ms
	ADDR[$r]=$B_ADDR
	PID[$r]=$B_PID
done
SF_WORKERS=2 sf_config "$T_DIR/gw.yaml" stateful "${ADDR[r1]}" "${ADDR[r2]}"
start_serve -c "$T_DIR/gw.yaml"
GW=$G_URL
sf_init "$GW" || die "no session"
lwho "$GW"
P=$WHO
[ "$P" = r1 ] && Q=r2 || Q=r1
[ -n "$P" ] || die "whoami failed: $CODE"
log "session pinned to $P"

N=8
S=()
for k in $(seq 1 $N); do
	stream_open "g$k" 30 GET "$GW" -H 'Accept: text/event-stream' \
		-H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED"
	S+=("$S_PID")
done
for k in $(seq 1 $N); do
	wait_match "$T_DIR/g$k.body" '^: ?keepalive' 5 || fail "g$k: no stream"
done
assert_eq "$P holds the $N streams" "$N" "$(bstat "${ADDR[$P]}" .get_streams_open)"
C0=$(gstat "$G_ADDR" .sessions.streams_closed)

kill -STOP "${PID[$P]}"
# the health check marks $P down (fall 3, every 500 ms): 5 s at most
p_down() { [ "$(gstat "$G_ADDR" ".upstreams[0].servers[] | select(.name | endswith(\"${ADDR[$P]}\")) | .state")" = down ]; }
poll_until 10 p_down ||
	log "the health check has not marked $P down yet"
lwho "$GW"
assert_eq "the next request re-pinned the session to $Q" "$Q" "$WHO"

open=0
for k in $(seq 1 $N); do
	wait_pid "${S[$((k - 1))]}" 5
	[ $? -eq 124 ] && open=$((open + 1))
done
assert_eq "every stream of the moved session was closed, in both workers" 0 "$open"
assert_eq "the gateway counted $N streams closed" "$((C0 + N))" "$(gstat "$G_ADDR" .sessions.streams_closed)"
log "closed by the other worker: $(gstat "$G_ADDR" .sessions.streams_closed_elsewhere)"
kill -CONT "${PID[$P]}"
sf_stop_serve
finish
