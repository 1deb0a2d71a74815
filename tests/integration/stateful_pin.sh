#!/bin/bash
# stateful_pin.sh - "mcpgw serve --mode stateful" terminates legacy
# sessions and pins them: with two and with four "mcpgw backend --era
# legacy" replicas and a client that opens a new connection for every
# request (each curl invocation), every request succeeds, the session id
# the client sees is the gateway's own (never an upstream's) and never
# changes, and every request of a session reaches the replica it was
# pinned to (whoami), which sees only its own upstream session id.  The
# client's initialize reaches the replica byte for byte, and nothing is
# replayed while nothing dies.  DELETE ends the upstream session and the
# mapping (then 404); a DELETE of an unknown id is 404.  The same over
# HTTP/2, and with the command-line form (--mode stateful --upstream ...,
# the default health probe) the replicas stay in service.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node sha256sum
require_mcpgw
watchdog 60

INIT_SHA=$(sha_of "$INIT_BODY")

# round N: N replicas, 2N sessions, 4 whoami calls per session.
round() {
	local n=$1 i r s k
	local -a addrs=() ids=()
	local -A addr_of=() pin=()
	for i in $(seq 1 "$n"); do
		start_backend --era legacy --id "n$n-r$i" --record 400
		addrs+=("$B_ADDR")
		ids+=("n$n-r$i")
		addr_of[n$n-r$i]=$B_ADDR
	done
	sf_config "$T_DIR/pin$n.yaml" stateful "${addrs[@]}"
	start_serve -c "$T_DIR/pin$n.yaml"
	local gw=$G_URL gpid=$G_PID
	local -a sids=()
	for s in $(seq 1 $((2 * n))); do
		sf_init "$gw" || continue
		sids+=("$SID")
		pin[$SID]=""
	done
	assert_eq "$n replicas: $((2 * n)) sessions opened" "$((2 * n))" "${#sids[@]}"
	assert_eq "$n replicas: the gateway minted distinct ids" "${#sids[@]}" "$(printf '%s\n' "${sids[@]}" | sort -u | grep -c .)"
	local bad="" moved="" badsid="" failed=""
	for k in 1 2 3 4; do
		for SID in "${sids[@]}"; do
			lwho "$gw"
			if [ "$CODE" != 200 ] || [ -z "$WHO" ]; then
				failed="$failed ${SID:0:8}#$k:$CODE"
				continue
			fi
			[ -n "$SID_BACK" ] && [ "$SID_BACK" != "$SID" ] && badsid="$badsid ${SID:0:8}->${SID_BACK:0:8}"
			if [ -z "${pin[$SID]}" ]; then
				pin[$SID]=$WHO
			elif [ "${pin[$SID]}" != "$WHO" ]; then
				moved="$moved ${SID:0:8}:${pin[$SID]}->$WHO"
			fi
		done
	done
	assert_eq "$n replicas: every whoami succeeded (new connection each)" "" "$failed"
	assert_eq "$n replicas: answers carry the client's session id or none" "" "$badsid"
	assert_eq "$n replicas: every session stayed on its replica" "" "$moved"
	local used
	used=$(for SID in "${sids[@]}"; do echo "${pin[$SID]}"; done | sort -u | grep -c .)
	assert_eq "$n replicas: the sessions were spread over all replicas" "$n" "$used"

	# What the replicas saw: their own upstream session ids only.
	local up_sids all_up="" leaked=""
	for i in "${!addrs[@]}"; do
		up_sids=$(rec_sids "${addrs[$i]}")
		all_up="$all_up $up_sids"
		for SID in "${sids[@]}"; do
			printf '%s\n' "$up_sids" | grep -qxF -- "$SID" && leaked="$leaked ${ids[$i]}:${SID:0:8}"
		done
		# each replica saw as many upstream sessions as sessions pinned to it
		local want=0
		for SID in "${sids[@]}"; do [ "${pin[$SID]}" = "${ids[$i]}" ] && want=$((want + 1)); done
		assert_eq "$n replicas: ${ids[$i]} saw one upstream session id per session pinned to it" \
			"$want" "$(printf '%s\n' "$up_sids" | grep -c .)"
	done
	assert_eq "$n replicas: no client-facing id reached a replica" "" "$leaked"
	for SID in "${sids[@]}"; do
		case " $all_up " in *" $SID "*) fail "$n replicas: client id ${SID:0:8}... is an upstream id" ;; esac
	done
	local inits=0 nin
	for a in "${addrs[@]}"; do
		nin=$(rec_sha "$a" "$INIT_SHA")
		inits=$((inits + ${nin:-0}))
	done
	assert_eq "$n replicas: the client's initialize bytes reached the replicas unchanged, once per session" "${#sids[@]}" "$inits"
	assert_eq "$n replicas: nothing was replayed (initialize_count = sessions)" "${#sids[@]}" "$(init_sum "${addrs[@]}")"

	# DELETE: ends the upstream session and the mapping.
	SID=${sids[0]}
	local home=${addr_of[${pin[$SID]}]} before
	before=$(bstat "$home" .sessions_deleted)
	req DELETE "$gw" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED"
	assert_code "$n replicas: DELETE of a live session" '2[0-9][0-9]'
	deleted_upstream() { [ "$(bstat "$home" .sessions_deleted)" -gt "${before:-0}" ] 2>/dev/null; }
	poll_until 5 deleted_upstream && ok "$n replicas: the DELETE ended the upstream session" ||
		fail "$n replicas: the pinned replica's sessions_deleted stayed $before"
	lwho "$gw"
	assert_code "$n replicas: the deleted session is unknown" 404
	req DELETE "$gw" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED"
	assert_code "$n replicas: a second DELETE of it" 404
	SID=${sids[1]}
	lwho "$gw"
	assert_eq "$n replicas: another session is unaffected by the DELETE" "${pin[$SID]}" "$WHO"
	sf_stop_serve "$gpid"
}

round 2
round 4

# --- DELETE of an id the gateway never issued ------------------------------------------
start_backend --era legacy --id solo
SOLO=$B_ADDR
sf_config "$T_DIR/solo.yaml" stateful "$SOLO"
start_serve -c "$T_DIR/solo.yaml"
GW=$G_URL
req DELETE "$GW" -H 'Mcp-Session-Id: 0123456789abcdef0123456789abcdef' -H "MCP-Protocol-Version: $LEGACY_VERSION"
assert_code "DELETE of an unknown session id" 404
SID=0123456789abcdef0123456789abcdef
NEGOTIATED=$LEGACY_VERSION
lwho "$GW"
assert_code "a request with an unknown session id" 404
assert_jq "its answer is the session-not-found error (-32011) with the request id" '.id == 7 and .error.code == -32011'

req GET "$GW" -H 'Accept: text/event-stream' -H "MCP-Protocol-Version: $LEGACY_VERSION"
assert_code "stateful: GET without a session id" 400
req DELETE "$GW" -H "MCP-Protocol-Version: $LEGACY_VERSION"
assert_code "stateful: DELETE without a session id" 400

# --- HTTP/2 from the client ------------------------------------------------------------------
sf_init "$GW" --http2-prior-knowledge || die "no session over HTTP/2"
assert_eq "initialize over HTTP/2" 2 "$HTTPV"
FAILED=""
for k in 1 2 3; do
	lwho "$GW" --http2-prior-knowledge
	[ "$CODE" = 200 ] && [ "$WHO" = solo ] || FAILED="$FAILED #$k:$CODE:$WHO"
done
assert_eq "HTTP/2: the session is served" "" "$FAILED"
sf_stop_serve

# --- the command-line form, with the default health probe ------------------------------------
start_backend --era legacy --id c1
C1=$B_ADDR
start_backend --era legacy --id c2
C2=$B_ADDR
start_serve --mode stateful --upstream "http://$C1" --upstream "http://$C2"
GW=$G_URL
sf_init "$GW" || die "no session through --mode stateful --upstream"
lwho "$GW"
FIRST=$WHO
assert_match "flags: whoami answered by a replica" '^c[12]$' "$FIRST"
# The default active check probes every 2 s and its first probe decides
# alone: keep calling for 3 s, past the first probes.
FAILED=""
k=0
END=$((SECONDS + 3))
while [ $SECONDS -lt $END ] && [ $k -lt 300 ]; do
	k=$((k + 1))
	lwho "$GW"
	[ "$CODE" = 200 ] && [ "$WHO" = "$FIRST" ] || FAILED="$FAILED #$k:$CODE:$WHO"
	sleep 0.1
done
assert_eq "flags: $k calls over 3 s, all on the pinned replica (health probes keep legacy replicas up)" "" "$(printf '%s' "$FAILED" | head -c 300)"
sf_init "$GW" || fail "flags: a new session after the first probes"
lwho "$GW"
assert_match "flags: a new session after the first probes is served" '^c[12]$' "$WHO"

finish
