#!/bin/bash
# stateful_repin.sh - a legacy session survives its replica.  SIGKILL the
# pinned replica between two requests: the next request succeeds on
# another replica, under the same client session id, with exactly one
# replayed initialize (the client's bytes) and notifications/initialized
# on the new replica and none anywhere else; the session then stays there.
# The same when the replicas answer a lost session with 400
# (--lost-session-status 400).  A replica restarted on the same port has
# forgotten its sessions: its 404 (or 400) triggers a re-pin, not a
# client error.  The gateway counts the re-pins and replays.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node sha256sum
require_mcpgw
watchdog 60

INIT_SHA=$(sha_of "$INIT_BODY")
INITIALIZED_SHA=$(sha_of '{"jsonrpc":"2.0","method":"notifications/initialized"}')

scene() { # LOST_STATUS
	local st=$1 i r
	local -A ADDR=() PID=()
	local -a all=()
	for i in 1 2 3; do
		start_backend --era legacy --id "s$st-r$i" --record 200 --lost-session-status "$st"
		ADDR[s$st-r$i]=$B_ADDR
		PID[s$st-r$i]=$B_PID
		all+=("$B_ADDR")
	done
	sf_config "$T_DIR/repin$st.yaml" stateful "${all[@]}"
	start_serve -c "$T_DIR/repin$st.yaml"
	local gw=$G_URL gaddr=$G_ADDR gpid=$G_PID
	local t="lost=$st"

	sf_init "$gw" || die "$t: no session"
	local sid=$SID
	lwho "$gw"
	local p=$WHO
	[ -n "$p" ] || die "$t: whoami failed before the kill: HTTP $CODE"
	log "$t: session ${sid:0:8}... pinned to $p"
	local -a rest=()
	for r in "${!ADDR[@]}"; do [ "$r" = "$p" ] || rest+=("$r"); done
	local -A i0=()
	for r in "${rest[@]}"; do
		i0[$r]=$(bstat "${ADDR[$r]}" .initialize_count)
		rec_clear "${ADDR[$r]}"
	done
	local rp0
	rp0=$(gstat "$gaddr" '.sessions.replays')

	# --- SIGKILL the pinned replica between two requests ---
	kill_wait "${PID[$p]}" KILL 5 || fail "$t: $p did not die"
	lwho "$gw"
	assert_code "$t: the first request after the kill succeeds" 200
	local q=$WHO
	assert_ne "$t: it was served by another replica" "$p" "$q"
	assert_match "$t: ... one of the survivors" "^s$st-r[123]\$" "$q"
	[ -z "$SID_BACK" ] || assert_eq "$t: the answer keeps the client's session id" "$sid" "$SID_BACK"
	local delta=0 dq=0 n
	for r in "${rest[@]}"; do
		n=$(bstat "${ADDR[$r]}" .initialize_count)
		delta=$((delta + n - ${i0[$r]}))
		[ "$r" = "$q" ] && dq=$((n - ${i0[$r]}))
	done
	assert_eq "$t: one initialize replayed over all survivors" 1 "$delta"
	assert_eq "$t: ... on the new pin" 1 "$dq"
	if [ -n "$q" ]; then
		assert_eq "$t: the replay is the client's initialize, byte for byte" 1 "$(rec_sha "${ADDR[$q]}" "$INIT_SHA")"
		assert_eq "$t: notifications/initialized was replayed too" 1 "$(rec_sha "${ADDR[$q]}" "$INITIALIZED_SHA")"
		assert_eq "$t: the new replica knows one upstream session" 1 "$(rec_sids "${ADDR[$q]}" | grep -c .)"
		assert_nomatch "$t: the new replica never saw the client's id" "^$sid\$" "$(rec_sids "${ADDR[$q]}")"
	fi

	# --- the session stays on the new pin ---
	local failed=""
	for i in 1 2 3 4 5; do
		lwho "$gw"
		[ "$CODE" = 200 ] && [ "$WHO" = "$q" ] || failed="$failed #$i:$CODE:$WHO"
	done
	assert_eq "$t: the next requests stay on $q" "" "$failed"
	assert_eq "$t: no further replay" "$((${i0[${rest[0]}]} + ${i0[${rest[1]}]} + 1))" "$(init_sum "${ADDR[${rest[0]}]}" "${ADDR[${rest[1]}]}")"
	legacy "$gw" 9 tools/call '{"name":"echo","arguments":{"text":"still here"}}'
	assert_eq "$t: echo in the re-pinned session" "still here" "$(tool_text)"
	local rp1
	rp1=$(gstat "$gaddr" '.sessions.replays')
	assert_eq "$t: the gateway counted one replay" "$((rp0 + 1))" "$rp1"

	# --- restart a replica on the same port: it forgot its sessions ---
	# a second session, pinned wherever the balancer says; its replica
	# is restarted quickly (far shorter than three failed health probes)
	sf_init "$gw" || die "$t: no second session"
	local sid2=$SID
	lwho "$gw"
	local h=$WHO
	[ -n "$h" ] || die "$t: whoami failed in the second session"
	local haddr=${ADDR[$h]}
	kill_wait "${PID[$h]}" KILL 5 || fail "$t: $h did not die"
	start_backend --listen "$haddr" --era legacy --id "$h" --record 200 --lost-session-status "$st"
	PID[$h]=$B_PID
	local s0
	s0=$(init_sum "${ADDR[${rest[0]}]}" "${ADDR[${rest[1]}]}")
	local lr0
	lr0=$(gstat "$gaddr" ".sessions.repins.lost_$st")
	lwho "$gw"
	assert_code "$t: a request to the restarted replica succeeds" 200
	assert_eq "$t: the restarted replica answered lost-session once (re-pin trigger)" 1 "$(bstat "$haddr" .lost_session_rejections)"
	assert_eq "$t: the gateway counted a re-pin for reason lost_$st" "$((lr0 + 1))" "$(gstat "$gaddr" ".sessions.repins.lost_$st")"
	assert_eq "$t: one initialize replayed for it" "$((s0 + 1))" "$(init_sum "${ADDR[${rest[0]}]}" "${ADDR[${rest[1]}]}")"
	[ -z "$SID_BACK" ] || assert_eq "$t: the client's id is kept" "$sid2" "$SID_BACK"
	lwho "$gw"
	assert_code "$t: and the session goes on" 200
	sf_stop_serve "$gpid"
}

scene 404
scene 400

finish
