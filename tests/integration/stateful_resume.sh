#!/bin/bash
# stateful_resume.sh - a legacy client resuming its cut streams after the
# session's replica died mid-call (issue 17): a tools/call "ticks" streams
# progress on its POST answer and the session has its standalone GET
# stream; the replica is SIGKILLed mid-stream and the client resumes both
# streams with GET + their last Last-Event-ID, in both orders.  The
# resume of the POST's stream gets that request's outcome from the
# gateway at once (one event: the JSON-RPC error -32010 for the request's
# id, then the end of the stream), never a standalone stream on the new
# replica; resumed again it gets 204.  The standalone stream's resume
# becomes the one standing GET on the new replica; no 409 reaches the
# client.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq
require_mcpgw
watchdog 90

CALL='{"jsonrpc":"2.0","id":"call-7","method":"tools/call","params":{"name":"ticks","arguments":{"count":100,"interval_ms":100},"_meta":{"progressToken":"p-7"}}}'

get_stream() { # NAME [curl options...]
	local name=$1
	shift
	stream_open "$name" 20 GET "$GW" -H 'Accept: text/event-stream' \
		-H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED" "$@"
}
last_id() { tr -d '\r' <"$T_DIR/$1.body" | sed -n 's/^id: *//p' | tail -n 1; }
code_of() { head -n 1 "$T_DIR/$1.hdr" | awk '{print $2}'; }

# resume_post NAME ID: the POST stream's resume, in the foreground (it
# must end by itself: the outcome, then the end of the stream)
resume_post() {
	get_stream "$1" -H "Last-Event-ID: $2"
	wait_pid "$S_PID" 10
	[ $? -ne 124 ] && ok "$1: the resume of the call's stream ended by itself" ||
		fail "$1: the resume of the call's stream is still open after 10 s"
	assert_eq "$1: answered 200" 200 "$(code_of "$1")"
	HDR=$T_DIR/$1.hdr BODYF=$T_DIR/$1.body
	BODY=$(cat "$BODYF")
	assert_match "$1: an event stream" '^text/event-stream' "$(hdr content-type)"
	assert_eq "$1: the outcome names the lost request" '"call-7"' "$(rpc | jq -c .id)"
	assert_eq "$1: ... the gateway's not-replayed error" -32010 "$(rpc | jq -r .error.code)"
	fg_result
}

scene() { # ORDER: post-first | get-first
	local order=$1 a r P Q
	declare -A ADDR PID
	for r in r1 r2; do
		start_backend --era legacy --id "$order-$r" --sse-keepalive 200ms --record 200
		ADDR[$r]=$B_ADDR
		PID[$r]=$B_PID
	done
	sf_config "$T_DIR/$order.yaml" stateful "${ADDR[r1]}" "${ADDR[r2]}"
	start_serve -c "$T_DIR/$order.yaml"
	GW=$G_URL
	sf_init "$GW" || die "$order: no session"
	lwho "$GW"
	case $WHO in *-r1) P=r1 Q=r2 ;; *-r2) P=r2 Q=r1 ;; *) die "$order: whoami: $CODE $BODY" ;; esac
	log "$order: session pinned to $P"

	get_stream "$order-g"
	G=$S_PID
	wait_match "$T_DIR/$order-g.body" '^: ?keepalive' 5 || fail "$order: no standalone stream"
	legacy "$GW" 11 tools/call '{"name":"notify","arguments":{"text":"pushed"}}'
	wait_match "$T_DIR/$order-g.body" '^id:' 5 || fail "$order: the pushed event has no id"
	GID=$(last_id "$order-g")
	assert_match "$order: the standalone stream's ids carry the plain stamp" '^[0-9a-f]{8}\.' "$GID"

	stream_open "$order-c" 30 POST "$GW" -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' \
		-H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED" --data-binary "$CALL"
	C=$S_PID
	wait_match "$T_DIR/$order-c.body" '^id:' 5 || fail "$order: no progress event with an id"
	sleep 0.3
	CID=$(last_id "$order-c")
	assert_match "$order: the call's event ids name its request" '^[0-9a-f]{8}-[A-Za-z0-9_-]+\.[0-9]+$' "$CID"
	log "$order: ids '$GID' (standalone), '$CID' (the call)"

	kill_wait "${PID[$P]}" KILL 5 || fail "$order: $P did not die"
	wait_pid "$C" 5
	[ $? -ne 124 ] && ok "$order: the call's stream was cut" || fail "$order: the call's stream outlived $P"
	wait_pid "$G" 5
	[ $? -ne 124 ] && ok "$order: the standalone stream was cut" || fail "$order: the standalone stream outlived $P"
	assert_nomatch "$order: no result reached the cut call" '"result"' "$(cat "$T_DIR/$order-c.body")"

	if [ "$order" = post-first ]; then
		resume_post "$order-rc" "$CID"
		get_stream "$order-rg" -H "Last-Event-ID: $GID"
		RG=$S_PID
	else
		get_stream "$order-rg" -H "Last-Event-ID: $GID"
		RG=$S_PID
		wait_match "$T_DIR/$order-rg.body" '^: ?keepalive' 5 || fail "$order: no resumed standalone stream"
		resume_post "$order-rc" "$CID"
	fi
	wait_match "$T_DIR/$order-rg.body" '^: ?keepalive' 5 && ok "$order: the standalone stream resumed on $Q" ||
		fail "$order: no resumed standalone stream: $(head -n 1 "$T_DIR/$order-rg.hdr") $(head -c 300 "$T_DIR/$order-rg.body")"
	assert_eq "$order: the standalone resume answered 200" 200 "$(code_of "$order-rg")"
	assert_eq "$order: exactly one standing GET on $Q" 1 "$(bstat "${ADDR[$Q]}" .get_streams_open)"
	assert_eq "$order: $Q was asked for one GET stream (the call's resume never reached it)" 1 \
		"$(rec "${ADDR[$Q]}" | jq '[.requests[] | select(.method == "GET" and (.target | startswith("/mcp")))] | length')"

	# resumed once more, with the id of the gateway's answer: 204
	AID=$(last_id "$order-rc")
	assert_match "$order: the outcome's id says answered" '^[0-9a-f]{8}\+' "$AID"
	req GET "$GW" -H 'Accept: text/event-stream' -H "Mcp-Session-Id: $SID" \
		-H "MCP-Protocol-Version: $NEGOTIATED" -H "Last-Event-ID: $AID"
	assert_code "$order: a resume of the answered stream" 204
	assert_eq "$order: still one standing GET on $Q" 1 "$(bstat "${ADDR[$Q]}" .get_streams_open)"
	assert_eq "$order: the gateway counted its answers" 2 "$(gstat "$G_ADDR" .sessions.resumes_answered)"
	lwho "$GW"
	assert_eq "$order: the session goes on on $Q" "$order-$Q" "$WHO"
	kill -TERM "$RG" 2>/dev/null
	wait_pid "$RG" 5
	sf_stop_serve
}

scene post-first
scene get-first
finish
