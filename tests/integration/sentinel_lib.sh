# sentinel_lib.sh - what the Sentinel failover tests share (sourced after
# lib.sh): the loop of session calls that runs while the master is
# SIGKILLed.
#
# session_loop MAX GATEWAY...: in the background, one tools/call per
# session of SIDS (with NEGOTIATED as the protocol version) per round,
# round r through gateway r mod the number of gateways, until
# $T_DIR/stop exists or MAX rounds; each HTTP status is appended to
# $T_DIR/loop.codes.  Sets LOOP to its PID (tracked).
session_loop() {
	local max=$1
	shift
	local gws=("$@")
	(
		n=0
		while [ ! -e "$T_DIR/stop" ] && [ $n -lt "$max" ]; do
			g=${gws[$((n % ${#gws[@]}))]}
			for s in "${SIDS[@]}"; do
				c=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 5 -X POST "$g" \
					-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
					-H "Mcp-Session-Id: $s" -H "MCP-Protocol-Version: $NEGOTIATED" \
					--data '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"whoami","arguments":{}}}' 2>/dev/null)
				echo "$c" >>"$T_DIR/loop.codes"
			done
			n=$((n + 1))
		done
	) &
	LOOP=$!
	track_pid "$LOOP"
}

# lost_sessions GATEWAY: the sessions of SIDS that GATEWAY no longer
# serves (each tried up to 10 times, half a second apart, while the
# gateway may still be reconnecting; a 404 is final), as "id:code"
# words in LOST (empty: none lost).  Uses the test's lwho.
lost_sessions() {
	local g=$1 ok1 try
	LOST=""
	for SID in "${SIDS[@]}"; do
		ok1=0
		for try in 1 2 3 4 5 6 7 8 9 10; do
			lwho "$g"
			[ "$CODE" = 200 ] && { ok1=1; break; }
			[ "$CODE" = 404 ] && break
			sleep 0.5
		done
		[ $ok1 = 1 ] || LOST="$LOST ${SID:0:6}:$CODE"
	done
}
