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
