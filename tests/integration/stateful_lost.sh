#!/bin/bash
# stateful_lost.sh - when a legacy session cannot be kept, and when an
# upstream answer is not a lost session at all.
# - Every replica restarted (all forgot the session): it is re-pinned
#   onto a restarted one; the client notices nothing.
# - Every replica dead: the session is unrecoverable and the client gets
#   404 (so a spec-following client starts a new session), never 503;
#   the gateway counts it.
# - A replica that forgets every session at once (a fake server, always
#   404 "Session not found"): the replays are bounded by
#   max_repin_attempts, then 404.
# - A 400 whose body is not about the session (a bad version) reaches the
#   client unchanged, and so does a 400 "Session not found" when
#   lost_session.statuses is only "404"; with the default statuses that
#   400 is a lost session.
# - A replay whose notifications/initialized is refused ends the session
#   its initialize opened on the replica (DELETE).
# - A sessionless initialize the gateway cannot read (but the replica
#   could) is refused, not forwarded.
# - An initialize whose answer is cut after its head ends the session the
#   replica opened.
# - A replica that loses a request in flight twice in a row while its
#   health check passes: the request (safe to send again) moves with its
#   session to another replica and is answered there.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node
require_mcpgw
watchdog 60

# --- every replica restarted, then every replica dead -------------------------------------------
start_backend --era legacy --id r1
R1=$B_ADDR
P1=$B_PID
start_backend --era legacy --id r2
R2=$B_ADDR
P2=$B_PID
SF_HEALTH='      method: GET
      path: /healthz
      interval: 1s
      timeout: 500ms
      rise: 1
      fall: 3' sf_config "$T_DIR/two.yaml" stateful "$R1" "$R2"
start_serve -c "$T_DIR/two.yaml"
GW=$G_URL
GWADDR=$G_ADDR
sf_init "$GW" || die "no session"
S1=$SID
lwho "$GW"
assert_match "the session is served" '^r[12]$' "$WHO"

kill_wait "$P1" KILL 5
kill_wait "$P2" KILL 5
start_backend --listen "$R1" --era legacy --id r1
P1=$B_PID
start_backend --listen "$R2" --era legacy --id r2
P2=$B_PID
lwho "$GW"
assert_code "every replica restarted: the session is re-pinned" 200
assert_eq "every replica restarted: one initialize replayed" 1 "$(init_sum "$R1" "$R2")"
[ -z "$SID_BACK" ] || assert_eq "every replica restarted: same client id" "$S1" "$SID_BACK"

U0=$(gstat "$GWADDR" '.sessions.unrecoverable')
kill_wait "$P1" KILL 5
kill_wait "$P2" KILL 5
lwho "$GW"
assert_code "every replica dead: the session is answered 404 (not 503)" 404
assert_jq "every replica dead: the session-lost error (-32012) with the request id" '.id == 7 and .error.code == -32012'
assert_eq "every replica dead: counted as unrecoverable" "$((U0 + 1))" \
	"$(gstat "$GWADDR" '.sessions.unrecoverable')"
legacy "$GW" 8 ping '{}'
assert_code "every replica dead: the next request of that session" 404
sf_stop_serve

# --- a fake upstream: forgetful, or answering 400 about something else -----------------------------
cat >"$T_DIR/fake.js" <<'EOF'
// fake.js MODE: a legacy MCP server that answers initialize (a fresh
// session id each time) and notifications (202), and every other request
// according to MODE: forget (404 Session not found), forget400 (400
// Session not found), badversion (400 about the protocol version),
// refusenotify (as forget, and every notifications/initialized after the
// first answered 500, so that a replayed initialize leaves a session the
// gateway must end), initbreak (initialize answered with a session id and
// half a body, then the connection cut), drop (every other request read
// whole, then its connection cut without an answer: a replica that loses
// requests in flight while its health check passes).  DELETEs are
// counted.
// GET /count tells how many initialize and other requests it saw.
const http = require('http');
const crypto = require('crypto');
const mode = process.argv[2];
let inits = 0, others = 0, notes = 0, deletes = 0;
const srv = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/healthz') { res.end('ok'); return; }
  if (req.method === 'GET' && req.url === '/count') {
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ inits, others, deletes }));
    return;
  }
  if (req.method === 'DELETE') { deletes++; res.end(); return; }
  let body = '';
  req.on('data', (d) => { body += d; });
  req.on('end', () => {
    let m = {};
    try { m = JSON.parse(body); } catch { /* answered below */ }
    res.setHeader('Content-Type', 'application/json');
    if (m.method === 'initialize') {
      inits++;
      res.setHeader('Mcp-Session-Id', crypto.randomBytes(16).toString('hex'));
      if (mode === 'initbreak') {
        res.writeHead(200);
        res.write('{"jsonrpc":"2.0","id":');
        setTimeout(() => res.socket.destroy(), 20);
        return;
      }
      res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: {
        protocolVersion: '2025-11-25', capabilities: { tools: {} },
        serverInfo: { name: 'fake', version: '1' } } }));
      return;
    }
    if (m.id === undefined) {
      notes++;
      res.statusCode = mode === 'refusenotify' && notes > 1 ? 500 : 202;
      res.end();
      return;
    }
    others++;
    if (mode === 'drop') {
      res.socket.destroy();
      return;
    }
    if (mode === 'badversion') {
      res.statusCode = 400;
      res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32600, message: 'Bad Request: Unsupported protocol version' } }));
      return;
    }
    res.statusCode = mode === 'forget400' ? 400 : 404;
    res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
  });
});
srv.listen(0, '127.0.0.1', () => console.log(`listening on 127.0.0.1:${srv.address().port}`));
process.on('SIGTERM', () => process.exit(0));
EOF
start_fake() { # MODE: sets F_ADDR
	local out=$T_DIR/fake-$1.out i=0 line=""
	node "$T_DIR/fake.js" "$1" >"$out" 2>"$T_DIR/fake-$1.err" &
	track_pid $!
	while [ $i -lt 100 ]; do
		line=$(head -n 1 "$out" 2>/dev/null)
		case $line in "listening on "*) break ;; esac
		sleep 0.1
		i=$((i + 1))
	done
	case $line in "listening on "*) ;; *) die "fake server $1 did not start: $(tail -n 3 "$T_DIR/fake-$1.err")" ;; esac
	F_ADDR=${line#listening on }
}
fcount() { curl -sS --max-time 5 "http://$1/count" | jq -r "$2"; }

start_fake forget
FORGET=$F_ADDR
SF_SESSIONS='  store: memory
  max_repin_attempts: 2' sf_config "$T_DIR/forget.yaml" stateful "$FORGET"
start_serve -c "$T_DIR/forget.yaml"
sf_init "$G_URL" || die "no session through the forgetful server"
legacy "$G_URL" 5 tools/list '{}'
assert_code "a server that always forgets: the client gets 404 in the end" 404
assert_jq "... as the session-lost error (-32012) with the request id" '.id == 5 and .error.code == -32012'
REPLAYS=$(($(fcount "$FORGET" .inits) - 1))
assert_cmp "replays bounded by max_repin_attempts (2)" "$REPLAYS" '<=' 2
assert_cmp "... and tried at least once" "$REPLAYS" '>=' 1
assert_eq "the request was sent once per pin" "$((REPLAYS + 1))" "$(fcount "$FORGET" .others)"
sf_stop_serve

start_fake badversion
BADV=$F_ADDR
sf_config "$T_DIR/badv.yaml" stateful "$BADV"
start_serve -c "$T_DIR/badv.yaml"
sf_init "$G_URL" || die "no session through the badversion server"
legacy "$G_URL" 6 tools/list '{}'
assert_code "a 400 not about the session reaches the client" 400
assert_jq "... unchanged" '.id == 6 and .error.message == "Bad Request: Unsupported protocol version"'
assert_eq "... and caused no replay" 1 "$(fcount "$BADV" .inits)"
sf_stop_serve

start_fake forget400
F400=$F_ADDR
SF_SESSIONS='  store: memory
  lost_session:
    statuses: "404"' sf_config "$T_DIR/only404.yaml" stateful "$F400"
start_serve -c "$T_DIR/only404.yaml"
sf_init "$G_URL" || die "no session through the forget400 server"
legacy "$G_URL" 7 tools/list '{}'
assert_code "statuses \"404\": a 400 Session not found reaches the client" 400
assert_eq "... and caused no replay" 1 "$(fcount "$F400" .inits)"
sf_stop_serve
sf_config "$T_DIR/default400.yaml" stateful "$F400"
start_serve -c "$T_DIR/default400.yaml"
I0=$(fcount "$F400" .inits)
sf_init "$G_URL" || die "no session through the forget400 server (defaults)"
legacy "$G_URL" 8 tools/list '{}'
assert_code "default statuses: a 400 Session not found is a lost session (404 after the bounded replays)" 404
assert_cmp "default statuses: it was replayed" "$(fcount "$F400" .inits)" '>=' "$((I0 + 2))"

# An initialize the gateway cannot read (a duplicate member, nesting past
# mcp.max_json_depth) that the replica would accept (JSON.parse takes both): sent
# on, it would open a session of the replica's the gateway does not know
# (every later request of it a 404).  Refused instead, never forwarded.
start_fake forget
LAX=$F_ADDR
sf_config "$T_DIR/lax.yaml" stateful "$LAX"
start_serve -c "$T_DIR/lax.yaml"
for bad in \
	'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"capabilities":{"x":1},"clientInfo":{"name":"dup","version":"1"}}}' \
	'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"n":'"$(printf '[%.0s' $(seq 1 70))$(printf ']%.0s' $(seq 1 70))"'},"clientInfo":{"name":"deep","version":"1"}}}'; do
	post "$G_URL" "$bad" -H "MCP-Protocol-Version: $LEGACY_VERSION"
	assert_code "an unreadable sessionless initialize is refused" 400
	assert_jq "its error is the reader's (-32600 / -32700)" '.error.code == -32600 or .error.code == -32700'
	assert_eq "it gave the client no session id" "" "$(hdr mcp-session-id)"
done
assert_eq "no unreadable initialize reached the replica" 0 "$(fcount "$LAX" .inits)"
sf_stop_serve

# A replay whose initialize was answered (the replica opened a session)
# but whose notifications/initialized was refused: that session is ended
# with a DELETE, not left behind on the replica.
start_fake refusenotify
REFN=$F_ADDR
SF_SESSIONS='  store: memory
  max_repin_attempts: 2' sf_config "$T_DIR/refn.yaml" stateful "$REFN"
start_serve -c "$T_DIR/refn.yaml"
sf_init "$G_URL" || die "no session through the refusenotify server"
legacy "$G_URL" 9 tools/list '{}'
assert_code "notifications/initialized refused on every replay: 404 in the end" 404
RREPLAYS=$(($(fcount "$REFN" .inits) - 1))
assert_cmp "refused notifications: at least one replay" "$RREPLAYS" '>=' 1
all_ended() { [ "$(fcount "$REFN" .deletes)" -ge "$RREPLAYS" ]; }
poll_until 5 all_ended && ok "each replayed session the replica opened was ended (DELETE)" ||
	fail "replayed sessions left on the replica: $RREPLAYS replays, $(fcount "$REFN" .deletes) DELETEs"
sf_stop_serve

# An initialize whose answer breaks after its head (the session id was
# sent): the client gets an error, and the session the replica opened is
# ended rather than left behind.
start_fake initbreak
IB=$F_ADDR
sf_config "$T_DIR/ib.yaml" stateful "$IB"
start_serve -c "$T_DIR/ib.yaml"
post "$G_URL" "$INIT_BODY"
assert_match "an initialize cut mid-answer fails" '^5[0-9][0-9]$' "$CODE"
ib_ended() { [ "$(fcount "$IB" .deletes)" -ge "$(fcount "$IB" .inits)" ]; }
poll_until 5 ib_ended && ok "each session opened by a cut initialize was ended (DELETE)" ||
	fail "cut initializes left sessions: $(fcount "$IB" .inits) initializes, $(fcount "$IB" .deletes) DELETEs"
sf_stop_serve

# A replica that loses a request in flight twice in a row while its
# health check passes (and connects still work): the request, safe to
# send again (ping), is sent there once more, then the session moves to
# the other replica, which answers it.  Without the second-loss rule it
# was sent a third time and answered 502.
start_fake drop
DROP=$F_ADDR
start_backend --era legacy --id r9
R9=$B_ADDR
SF_WORKERS=1 SF_WEIGHTS="1000 1" SF_SESSIONS='  store: memory
  max_repin_attempts: 2' sf_config "$T_DIR/drop.yaml" stateful "$DROP" "$R9"
start_serve -c "$T_DIR/drop.yaml"
DGW=$G_ADDR
on_drop=0
for k in 1 2 3 4 5 6 7 8 9 10; do
	I0=$(fcount "$DROP" .inits)
	sf_init "$G_URL" || break
	if [ "$(fcount "$DROP" .inits)" -gt "$I0" ]; then
		on_drop=1
		break
	fi
	req DELETE "$G_URL" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED"
done
[ "$on_drop" = 1 ] || die "no session landed on the dropping replica in 10 tries"
legacy "$G_URL" 11 ping '{}'
assert_code "lost in flight twice on one replica: the request is answered by the other" 200
assert_jq "... with its own id and result" '.id == 11 and .result == {}'
assert_eq "... after one more try on the first replica (2 sends there)" 2 "$(fcount "$DROP" .others)"
assert_eq "the session re-pinned for it (lost_in_flight)" 1 \
	"$(gstat "$DGW" '.sessions.repins.lost_in_flight')"
assert_eq "the request counted once as replayed" 1 "$(gstat "$DGW" '.sessions.inflight_replayed')"
legacy "$G_URL" 12 ping '{}'
assert_code "the session goes on on its new replica" 200
assert_eq "... without touching the first one again" 2 "$(fcount "$DROP" .others)"
sf_stop_serve

finish
