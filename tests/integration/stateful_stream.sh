#!/bin/bash
# stateful_stream.sh - the standalone GET SSE stream of a legacy session
# through "mcpgw serve --mode stateful": it is proxied to the pinned
# replica (keep-alives and pushed notifications arrive), the client's
# POSTed JSON-RPC responses go to that replica too; when the replica is
# SIGKILLed the gateway closes the stream, and the client's reconnect is
# re-pinned (one replay) and works again.  A Last-Event-ID from before
# the re-pin is not passed on to the new replica; one from the current
# pin is, as the replica's own id (shown with a small node server that
# numbers its events).  DELETE ends the session and its stream.  A
# SIGTERM with a stream open cuts it at the shutdown deadline and exits 0.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node
require_mcpgw
watchdog 60

declare -A ADDR PID
for r in r1 r2; do
	start_backend --era legacy --id "$r" --sse-keepalive 200ms --record 200
	ADDR[$r]=$B_ADDR
	PID[$r]=$B_PID
done
sf_config "$T_DIR/gw.yaml" stateful "${ADDR[r1]}" "${ADDR[r2]}"
start_serve -c "$T_DIR/gw.yaml"
GW=$G_URL

sf_init "$GW" || die "no session"
lwho "$GW"
P=$WHO
[ -n "$P" ] || die "whoami failed: $CODE"
[ "$P" = r1 ] && Q=r2 || Q=r1
log "session pinned to $P"

get_stream() { # NAME [curl options...]
	local name=$1
	shift
	stream_open "$name" 20 GET "$GW" -H 'Accept: text/event-stream' \
		-H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED" "$@"
}

# --- the stream reaches the pinned replica --------------------------------------------------------
get_stream g1
G1=$S_PID
wait_match "$T_DIR/g1.body" '^: ?keepalive' 5 && ok "g1: keep-alives arrive through the gateway" ||
	fail "g1: no keep-alive within 5 s: $(head -c 300 "$T_DIR/g1.body") $(cat "$T_DIR/g1.curlerr")"
assert_match "g1: content type" '^text/event-stream' "$(stream_hdr g1 content-type)"
SB=$(stream_hdr g1 mcp-session-id)
[ -z "$SB" ] || assert_eq "g1: the stream's answer carries the client's session id" "$SID" "$SB"
assert_eq "g1: the pinned replica holds the stream" 1 "$(bstat "${ADDR[$P]}" .get_streams_open)"
assert_eq "g1: the other replica holds none" 0 "$(bstat "${ADDR[$Q]}" .get_streams_open)"
legacy "$GW" 11 tools/call '{"name":"notify","arguments":{"text":"pushed-one"}}'
assert_jq "g1: notify delivered on the session's stream" '.result.structuredContent.delivered == true or .result.structuredContent.delivered >= 1'
wait_match "$T_DIR/g1.body" '^data:.*pushed-one' 5 && ok "g1: the pushed notification came through" ||
	fail "g1: no pushed notification: $(head -c 400 "$T_DIR/g1.body")"
R0=$(bstat "${ADDR[$P]}" '.requests_by_method["(response)"] // 0')
post "$GW" '{"jsonrpc":"2.0","id":"srv-1","result":{}}' -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED"
assert_code "a JSON-RPC response POSTed by the client" 202
assert_eq "... reached the pinned replica" "$((R0 + 1))" "$(bstat "${ADDR[$P]}" '.requests_by_method["(response)"] // 0')"
OLD_ID=$(tr -d '\r' <"$T_DIR/g1.body" | sed -n 's/^id: *//p' | tail -n 1)
log "g1: last event id '${OLD_ID}'"

# --- the replica dies: the stream is closed --------------------------------------------------------
I0=$(bstat "${ADDR[$Q]}" .initialize_count)
kill_wait "${PID[$P]}" KILL 5 || fail "$P did not die"
wait_pid "$G1" 5
[ $? -ne 124 ] && ok "g1: the gateway closed the stream when $P died" ||
	fail "g1: the stream is still open 5 s after $P died"

# --- the reconnect is re-pinned ----------------------------------------------------------------------
# the replicas record health probes (GET /healthz) and /stats reads too:
# the GETs below are those of the MCP endpoint
rec_clear "${ADDR[$Q]}"
get_stream g2 -H "Last-Event-ID: ${OLD_ID:-0}"
G2=$S_PID
wait_match "$T_DIR/g2.body" '^: ?keepalive' 5 && ok "g2: the reconnected stream works" ||
	fail "g2: no keep-alive on the reconnect: $(head -c 300 "$T_DIR/g2.body") $(cat "$T_DIR/g2.curlerr")"
assert_eq "g2: re-pinned to $Q with one replay" "$((I0 + 1))" "$(bstat "${ADDR[$Q]}" .initialize_count)"
assert_eq "g2: $Q holds the stream" 1 "$(bstat "${ADDR[$Q]}" .get_streams_open)"
LEI=$(rec "${ADDR[$Q]}" | jq -r '[.requests[] | select(.method == "GET" and (.target | startswith("/mcp")))][0].headers[] | select(.[0] | ascii_downcase == "last-event-id") | .[1]' 2>/dev/null)
assert_eq "g2: $Q saw the stream's GET" 1 "$(rec "${ADDR[$Q]}" | jq '[.requests[] | select(.method == "GET" and (.target | startswith("/mcp")))] | length')"
assert_eq "g2: a Last-Event-ID from before the re-pin is not passed on" "" "$LEI"
lwho "$GW"
assert_eq "requests follow the stream's new pin" "$Q" "$WHO"
legacy "$GW" 12 tools/call '{"name":"notify","arguments":{"text":"pushed-two"}}'
wait_match "$T_DIR/g2.body" '^data:.*pushed-two' 5 && ok "g2: a notification pushed after the re-pin came through" ||
	fail "g2: no pushed notification after the re-pin: $(head -c 400 "$T_DIR/g2.body")"
NEW_ID=$(tr -d '\r' <"$T_DIR/g2.body" | sed -n 's/^id: *//p' | tail -n 1)
if [ -n "$NEW_ID" ]; then
	# the gateway numbers events: an id of the current pin is passed on
	rec_clear "${ADDR[$Q]}"
	get_stream g3 -H "Last-Event-ID: $NEW_ID"
	G3=$S_PID
	wait_match "$T_DIR/g3.body" '^: ?keepalive' 5 || fail "g3: no keep-alive"
	LEI=$(rec "${ADDR[$Q]}" | jq -r '[.requests[] | select(.method == "GET" and (.target | startswith("/mcp")))][0].headers[] | select(.[0] | ascii_downcase == "last-event-id") | .[1]' 2>/dev/null)
	assert_ne "g3: a Last-Event-ID of the current pin is passed on" "" "$LEI"
	kill -TERM "$G3" 2>/dev/null
	wait_pid "$G3" 5
else
	log "events carry no id (the replica sets none): only the pre-re-pin case applies"
fi

# --- DELETE ends the session and its stream -------------------------------------------------------------
req DELETE "$GW" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED"
assert_code "DELETE" '2[0-9][0-9]'
wait_pid "$G2" 5
[ $? -ne 124 ] && ok "g2: the DELETE closed the stream" || fail "g2: the stream outlived the DELETE by 5 s"
get_stream g4
wait_pid "$S_PID" 5
assert_match "a GET stream of the deleted session is refused" '^HTTP/[0-9.]+ 404' "$(head -n 1 "$T_DIR/g4.hdr")"
sf_stop_serve

# --- Last-Event-ID with replicas that number their events -----------------------------------------------
# sse.js: a legacy server whose GET stream sends one event with id "ev-1"
# at once, then keep-alives; GET /last-ids lists the Last-Event-ID of
# each GET stream it opened (null when there was none), GET /sessions
# counts the sessions it made.
cat >"$T_DIR/sse.js" <<'JS'
const http = require('http');
const crypto = require('crypto');
const sessions = new Set();
const lastIds = [];
const lost = '{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}';
const srv = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/healthz') { res.end('ok'); return; }
  if (req.method === 'GET' && req.url === '/last-ids') { res.end(JSON.stringify(lastIds)); return; }
  if (req.method === 'GET' && req.url === '/sessions') { res.end(String(sessions.size)); return; }
  const sid = req.headers['mcp-session-id'];
  if (req.method === 'GET') {
    if (!sessions.has(sid)) { res.statusCode = 404; res.end(lost); return; }
    lastIds.push(req.headers['last-event-id'] ?? null);
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    res.write('id: ev-1\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"first"}}\n\n');
    const t = setInterval(() => res.write(': keepalive\n\n'), 200);
    req.on('close', () => clearInterval(t));
    return;
  }
  let body = '';
  req.on('data', (d) => { body += d; });
  req.on('end', () => {
    let m = {};
    try { m = JSON.parse(body); } catch { /* answered below */ }
    res.setHeader('Content-Type', 'application/json');
    if (m.method === 'initialize') {
      const id = crypto.randomBytes(16).toString('hex');
      sessions.add(id);
      res.setHeader('Mcp-Session-Id', id);
      res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: {
        protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'sse', version: '1' } } }));
      return;
    }
    if (!sessions.has(sid)) { res.statusCode = 404; res.end(lost); return; }
    if (m.id === undefined) { res.statusCode = 202; res.end(); return; }
    res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: {} }));
  });
});
srv.listen(0, '127.0.0.1', () => console.log(`listening on 127.0.0.1:${srv.address().port}`));
process.on('SIGTERM', () => process.exit(0));
JS
start_sse() { # NAME: sets X_ADDR, X_PID
	local out=$T_DIR/sse-$1.out i=0 line=""
	node "$T_DIR/sse.js" >"$out" 2>"$T_DIR/sse-$1.err" &
	X_PID=$!
	track_pid "$X_PID"
	while [ $i -lt 100 ]; do
		line=$(head -n 1 "$out" 2>/dev/null)
		case $line in "listening on "*) break ;; esac
		sleep 0.1
		i=$((i + 1))
	done
	case $line in "listening on "*) ;; *) die "sse server $1 did not start: $(tail -n 3 "$T_DIR/sse-$1.err")" ;; esac
	X_ADDR=${line#listening on }
}
last_ids() { curl -sS --max-time 5 "http://$1/last-ids" | jq -c .; }
first_id() { tr -d '\r' <"$T_DIR/$1.body" | sed -n 's/^id: *//p' | head -n 1; }
start_sse x1
X1=$X_ADDR
X1PID=$X_PID
start_sse x2
X2=$X_ADDR
SF_WEIGHTS="1000 1" sf_config "$T_DIR/sse.yaml" stateful "$X1" "$X2"
start_serve -c "$T_DIR/sse.yaml"
GW=$G_URL
# x1 has nearly all the weight (the round robin starts at a random point:
# a session that landed on x2 is simply not used)
for k in 1 2 3 4 5; do
	N1=$(curl -sS --max-time 5 "http://$X1/sessions")
	sf_init "$GW" || die "no session through the sse servers"
	[ "$(curl -sS --max-time 5 "http://$X1/sessions")" = "$((N1 + 1))" ] && break
done
get_stream e1
wait_match "$T_DIR/e1.body" '^id:' 5 || fail "e1: the event with an id did not come through: $(head -c 300 "$T_DIR/e1.body")"
EID=$(first_id e1)
log "e1: the replica's event id ev-1 reached the client as '$EID'"
assert_ne "e1: the event id reaches the client" "" "$EID"
assert_eq "e1: the stream is on x1" '[null]' "$(last_ids "$X1")"
kill -TERM "$S_PID" 2>/dev/null
wait_pid "$S_PID" 5
get_stream e2 -H "Last-Event-ID: $EID"
wait_match "$T_DIR/e2.body" '^: ?keepalive' 5 || fail "e2: no keep-alive"
assert_eq "e2: same pin: the Last-Event-ID is passed on, as the replica's own id" '[null,"ev-1"]' "$(last_ids "$X1")"
kill -TERM "$S_PID" 2>/dev/null
wait_pid "$S_PID" 5
kill_wait "$X1PID" KILL 5 || fail "x1 did not die"
get_stream e3 -H "Last-Event-ID: $EID"
wait_match "$T_DIR/e3.body" '^: ?keepalive' 5 && ok "e3: the reconnect after x1 died is re-pinned to x2" ||
	fail "e3: no stream after the re-pin: $(head -n 1 "$T_DIR/e3.hdr") $(head -c 300 "$T_DIR/e3.body")"
assert_eq "e3: another pin: the Last-Event-ID is not passed on" '[null]' "$(last_ids "$X2")"
assert_ne "e3: the same replica event id reaches the client as another id on the new pin" "$EID" "$(first_id e3)"
kill -TERM "$S_PID" 2>/dev/null
wait_pid "$S_PID" 5

# Shutdown with a stream open: the GET stream never ends on its own, so
# the gateway cuts it at its shutdown deadline (1 s here) and exits 0.
start_serve -c "$T_DIR/gw.yaml" --shutdown-timeout 1s
GW=$G_URL
sf_init "$GW" || die "no session (shutdown)"
get_stream sd
wait_match "$T_DIR/sd.body" '^: ?keepalive' 5 || fail "shutdown: no stream before the stop"
T0=$(date +%s%N)
if kill_wait "$G_PID" TERM 10; then
	assert_eq "shutdown with a stream open: exit 0" 0 "$STOP_STATUS"
	T1=$(date +%s%N)
	assert_cmp "shutdown with a stream open: the deadline was kept (ms)" \
		"$(((T1 - T0) / 1000000))" '<' 8000
else
	fail "shutdown with a stream open: still running 10 s after SIGTERM"
fi
wait_pid "$S_PID" 5
[ $? -ne 124 ] && ok "shutdown: the client's stream ended with the gateway" ||
	fail "shutdown: the client's stream is still open"

finish
