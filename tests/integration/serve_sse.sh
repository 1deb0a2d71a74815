#!/bin/bash
# serve_sse.sh - SSE through "mcpgw serve": the events of a slow stream
# (the backend's ticks tool) reach the client as the backend writes them,
# in order, comments included - the client holds the first event before
# the backend has written the last (both stamps come from this machine's
# wall clock: the backend's in each tick, the client's reader loop for
# each line; no duration is asserted); a client that leaves (HTTP/1.1
# connection close, HTTP/2 RST_STREAM on a connection that stays open)
# cancels the upstream call; a subscriptions/listen stream stays open,
# carries keep-alives and pushed notifications, and closing it ends the
# replica's stream.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node
require_mcpgw
watchdog 90

# one replica, so that a listen stream and list_changed meet on it
start_backend --era modern --id r1 --sse-keepalive 200ms
R1=$B_ADDR
start_serve --upstream "http://$R1"
GW=$G_URL
MCPH=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream'
	-H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: tools/call')

stats() { curl -sS --max-time 5 "http://$R1/stats" | jq -r "$1"; }

# ts_stream NAME SECS [curl options...]: curl -N in the background, each
# received line written to NAME.ts prefixed with the wall clock (ms) at
# which the reader got it.  Sets TS_PID (the reader subshell).
ts_stream() {
	local name=$1 secs=$2
	shift 2
	: >"$T_DIR/$name.ts"
	(
		curl -sS -N --max-time "$secs" -D "$T_DIR/$name.hdr" "$@" 2>"$T_DIR/$name.curlerr" |
			while IFS= read -r line; do
				t=${EPOCHREALTIME/./}
				printf '%s %s\n' "${t:0:13}" "${line%$'\r'}"
			done >"$T_DIR/$name.ts"
	) &
	TS_PID=$!
	track_pid "$TS_PID"
}

# --- events stream through as they are written ---------------------------------------------
check_streaming() { # LABEL CURL_PROTO
	local label=$1 proto=$2 f first_rx last_sent order comments
	ts_stream "tk$label" 20 "${MCPH[@]}" -H 'Mcp-Name: ticks' "$proto" \
		--data-binary "$(modern_body 7 tools/call '{"name":"ticks","arguments":{"count":5,"interval_ms":500},"_meta":{"progressToken":"p-7"}}')" "$GW"
	wait_pid "$TS_PID" 20
	f=$T_DIR/tk$label.ts
	assert_match "$label: answered as an event stream" '^text/event-stream' "$(HDR=$T_DIR/tk$label.hdr hdr content-type)"
	order=$(sed -n 's/^[0-9]* data: //p' "$f" | jq -r 'if .method == "notifications/progress" then .params.progress | tostring elif has("result") then "result" else "?" end' | tr '\n' ' ' | sed 's/ $//')
	assert_eq "$label: progress 1..5 in order, then the result" "1 2 3 4 5 result" "$order"
	# events (e1..e5, result) and comments (c1..c5) interleaved as written
	comments=$(cut -d' ' -f2- "$f" | awk '
		/^data: / { if ($0 ~ /"progress":/) { match($0, /"progress":[0-9]+/); printf "e%s ", substr($0, RSTART + 11, RLENGTH - 11) }
		            else if ($0 ~ /"result"/) printf "result " }
		/^: tick / { split($3, a, "/"); printf "c%s ", a[1] }' | sed 's/ $//')
	assert_eq "$label: SSE comments pass, each in its place" "e1 c1 e2 c2 e3 c3 e4 c4 e5 c5 result" "$comments"
	first_rx=$(grep -m1 ' data: .*"progress":1,' "$f" | cut -d' ' -f1)
	last_sent=$(grep ' data: .*"progress":5,' "$f" | sed -n 's/.*sent_ms=\([0-9]*\).*/\1/p')
	if [ -n "$first_rx" ] && [ -n "$last_sent" ] && [ "$first_rx" -lt "$last_sent" ]; then
		ok "$label: the first event reached the client (at $first_rx) before the backend wrote the last (at $last_sent)"
	else
		fail "$label: the first event arrived at '$first_rx', the last was written at '$last_sent': buffered? $(head -c 600 "$f")"
	fi
}
check_streaming h1 --http1.1
check_streaming h2c --http2-prior-knowledge

# --- client disconnect cancels the upstream call ----------------------------------------------------
wait_cancelled() { [ "$(stats .cancelled)" -ge "$1" ]; }
C0=$(stats .cancelled)
stream_open cancel1 20 POST "$GW" "${MCPH[@]}" -H 'Mcp-Name: ticks' \
	--data-binary "$(modern_body 8 tools/call '{"name":"ticks","arguments":{"count":50,"interval_ms":200},"_meta":{"progressToken":8}}')"
CP=$S_PID
wait_match "$T_DIR/cancel1.body" '^: tick 1/50' 10 || fail "h1 cancel: the first tick never arrived"
kill -TERM "$CP" 2>/dev/null
wait_pid "$CP" 5
if poll_until 10 wait_cancelled $((C0 + 1)); then
	ok "h1: closing the client connection cancelled the upstream call"
else
	fail "h1: the replica did not see the call cancelled (cancelled $C0 -> $(stats .cancelled))"
fi

# HTTP/2: the client resets one stream and keeps its connection open.
cat >"$T_DIR/h2reset.mjs" <<'EOF'
import http2 from 'node:http2';
const [url, body] = process.argv.slice(2);
const u = new URL(url);
const s = http2.connect(u.origin);
s.on('error', (e) => { console.log('session error ' + e.message); process.exit(1); });
const req = s.request({ ':method': 'POST', ':path': u.pathname,
	'content-type': 'application/json', 'accept': 'application/json, text/event-stream',
	'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'ticks' });
let got = '';
req.on('data', (d) => {
	got += d;
	if (got.includes(': tick 1/')) {
		req.close(http2.constants.NGHTTP2_CANCEL);
		console.log('reset after first tick');
		// the connection stays open while the test looks at the replica
		setTimeout(() => { console.log(s.closed ? 'session closed' : 'session open'); s.close(); }, 3000);
	}
});
req.on('error', () => {});
req.end(body);
setTimeout(() => { console.log('timeout'); process.exit(2); }, 15000).unref();
EOF
C0=$(stats .cancelled)
(timeout 20 node "$T_DIR/h2reset.mjs" "$GW" "$(modern_body 9 tools/call '{"name":"ticks","arguments":{"count":50,"interval_ms":200},"_meta":{"progressToken":9}}')" \
	>"$T_DIR/h2reset.out" 2>"$T_DIR/h2reset.nodeerr") &
NP=$!
track_pid "$NP"
wait_match "$T_DIR/h2reset.out" 'reset after first tick' 10 || fail "h2 reset: the first tick never arrived"
if poll_until 3 wait_cancelled $((C0 + 1)); then
	ok "h2: RST_STREAM from the client cancelled the upstream call"
else
	fail "h2: the replica did not see the call cancelled after the client's RST_STREAM (cancelled $C0 -> $(stats .cancelled))"
fi
wait_pid "$NP" 10
assert_match "h2: the client's connection stayed open meanwhile" 'session open' "$(cat "$T_DIR/h2reset.out")"
who "$GW" --http2-prior-knowledge
assert_eq "the gateway serves after the cancellations" r1 "$WHO"

# --- subscriptions/listen: a long-lived stream ----------------------------------------------------------
LISTEN=$(modern_body 10 subscriptions/listen '{"notifications":{"toolsListChanged":true}}')
stream_open listen 20 POST "$GW" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
	-H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: subscriptions/listen' --data-binary "$LISTEN"
LP=$S_PID
wait_match "$T_DIR/listen.body" 'notifications/subscriptions/acknowledged' 10 &&
	ok "listen: acknowledged through the gateway" || fail "listen: no acknowledgement: $(head -c 300 "$T_DIR/listen.body")"
wait_match "$T_DIR/listen.body" '^: keepalive' 5 &&
	ok "listen: keep-alive comments pass" || fail "listen: no keep-alive comment within 5 s"
assert_eq "listen: the replica holds one listen stream" 1 "$(stats .listen_streams_open)"
modern "$GW" 11 tools/call '{"name":"list_changed","arguments":{}}'
assert_jq "list_changed reached the listen stream" '.result.structuredContent.streams == 1'
wait_match "$T_DIR/listen.body" 'notifications/tools/list_changed' 5 &&
	ok "listen: the pushed notification arrived through the gateway" ||
	fail "listen: notifications/tools/list_changed did not arrive"
if kill -0 "$LP" 2>/dev/null; then ok "listen: the stream is still open"; else fail "listen: the stream ended"; fi
kill -TERM "$LP" 2>/dev/null
wait_pid "$LP" 5
no_listen() { [ "$(stats .listen_streams_open)" = 0 ]; }
if poll_until 10 no_listen; then
	ok "listen: closing the client stream closed the replica's stream"
else
	fail "listen: the replica still holds $(stats .listen_streams_open) listen stream(s)"
fi

finish
