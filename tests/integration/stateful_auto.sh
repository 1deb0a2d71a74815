#!/bin/bash
# stateful_auto.sh - "mcpgw serve --mode auto": legacy traffic
# (initialize, requests with a session, GET/DELETE with a session) takes
# the stateful path and modern traffic the stateless path, on one
# listener, in front of two "--era dual" replicas.  The legacy session is
# the gateway's (its id never reaches a replica) and pinned; modern calls
# are balanced over both replicas and get no session; a pinned replica
# dying re-pins the legacy session while modern calls go on; GET with the
# session is the legacy stream, DELETE with the session ends it (and the
# stream), and GET without a session is the stateless 405.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node
require_mcpgw
watchdog 60

declare -A ADDR PID
for r in d1 d2; do
	start_backend --era dual --id "$r" --record 200 --sse-keepalive 200ms
	ADDR[$r]=$B_ADDR
	PID[$r]=$B_PID
done
sf_config "$T_DIR/auto.yaml" auto "${ADDR[d1]}" "${ADDR[d2]}"
start_serve -c "$T_DIR/auto.yaml"
GW=$G_URL

# --- both kinds interleaved ------------------------------------------------------------------------
sf_init "$GW" || die "no legacy session in auto mode"
assert_eq "legacy: a 2025 version negotiated" "$LEGACY_VERSION" "$NEGOTIATED"
LSID=$SID
LEG="" MOD="" BAD=""
for k in 1 2 3 4 5 6; do
	SID=$LSID
	lwho "$GW"
	[ "$CODE" = 200 ] && LEG="$LEG $WHO" || BAD="$BAD legacy#$k:$CODE"
	[ -z "$SID_BACK" ] || [ "$SID_BACK" = "$LSID" ] || BAD="$BAD legacy#$k:sid"
	who "$GW"
	[ "$CODE" = 200 ] && MOD="$MOD $WHO" || BAD="$BAD modern#$k:$CODE:$(head -c 200 "$BODYF")"
	[ -z "$(hdr mcp-session-id)" ] || BAD="$BAD modern#$k:got-a-session"
done
assert_eq "every legacy and modern call succeeded" "" "$BAD"
PIN=$(printf '%s\n' $LEG | sort -u | tr '\n' ' ' | sed 's/ $//')
assert_match "legacy calls all went to one replica" '^d[12]$' "$PIN"
assert_eq "modern calls were balanced over both replicas" "d1 d2" "$(printf '%s\n' $MOD | sort -u | tr '\n' ' ' | sed 's/ $//')"
for r in d1 d2; do
	assert_nomatch "$r never saw the gateway's session id" "^$LSID\$" "$(rec_sids "${ADDR[$r]}")"
done
SEEN=$(rec "${ADDR[$PIN]}" | jq -r '[.requests[] | select(.method == "POST") | select(any(.headers[]; .[0] | ascii_downcase == "mcp-session-id"))] | length')
assert_cmp "the pinned replica received the session's requests with its own session id" "$SEEN" '>=' 7

# --- the pinned replica dies: legacy re-pinned, modern goes on -----------------------------------------
[ "$PIN" = d1 ] && OTHER=d2 || OTHER=d1
I0=$(bstat "${ADDR[$OTHER]}" .initialize_count)
kill_wait "${PID[$PIN]}" KILL 5 || fail "$PIN did not die"
SID=$LSID
lwho "$GW"
assert_code "legacy: the session survives its replica" 200
assert_eq "legacy: re-pinned to $OTHER" "$OTHER" "$WHO"
assert_eq "legacy: with one replay" "$((I0 + 1))" "$(bstat "${ADDR[$OTHER]}" .initialize_count)"
BAD=""
for k in 1 2 3 4; do
	who "$GW"
	[ "$CODE" = 200 ] && [ "$WHO" = "$OTHER" ] || BAD="$BAD #$k:$CODE:$WHO"
done
assert_eq "modern: calls go on on the survivor" "" "$BAD"

# --- GET and DELETE ------------------------------------------------------------------------------------------
req GET "$GW" -H 'Accept: text/event-stream'
assert_code "GET without a session: the stateless answer" 405
SID=$LSID
stream_open get 20 GET "$GW" -H 'Accept: text/event-stream' \
	-H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED"
GETPID=$S_PID
wait_match "$T_DIR/get.body" '^: ?keepalive' 5 && ok "GET with the session: the legacy stream, through the stateful path" ||
	fail "GET with the session: no keep-alive: $(head -n 1 "$T_DIR/get.hdr") $(head -c 300 "$T_DIR/get.body")"
assert_eq "GET with the session: held by the pinned replica" 1 "$(bstat "${ADDR[$OTHER]}" .get_streams_open)"
req DELETE "$GW" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED"
assert_code "DELETE with the session" '2[0-9][0-9]'
wait_pid "$GETPID" 5
[ $? -ne 124 ] && ok "the DELETE closed the session's stream" || fail "the stream outlived the DELETE by 5 s"
lwho "$GW"
assert_code "the deleted legacy session" 404
who "$GW"
assert_code "modern calls are unaffected" 200

finish
