#!/bin/bash
# backend_cli.sh - the command line of mcpgw: help texts naming every
# option, exit codes (0 ok, 2 usage/config error, 1 runtime failure),
# version, check-config on every example in conf/ and on broken files
# (FILE:LINE:COL and the key), and graceful SIGTERM/SIGINT: in-flight
# requests finish, new connections are refused, exit status 0.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node
require_mcpgw
watchdog 90

# run NAME CMD...: runs a short command (10 s at most); sets RC, OUT, ERR.
run() {
	local name=$1
	shift
	timeout 10 "$@" >"$T_DIR/$name.stdout" 2>"$T_DIR/$name.stderr" </dev/null
	RC=$?
	OUT=$(cat "$T_DIR/$name.stdout")
	ERR=$(cat "$T_DIR/$name.stderr")
}

# --- help and version ---------------------------------------------------------------
run help "$MCPGW" help
assert_eq "mcpgw help exits 0" 0 "$RC"
for c in backend check-config version; do
	assert_match "mcpgw help names '$c'" "$c" "$OUT"
done

run bhelp "$MCPGW" backend --help
assert_eq "mcpgw backend --help exits 0" 0 "$RC"
for o in --listen --era --state --redis --key-file --sse --delay-ms --id --lost-session-status; do
	assert_match "backend --help describes $o" "(^|[^a-z-])$o([^a-z-]|$)" "$OUT"
done
for v in legacy modern dual memory hmac redis always never; do
	assert_match "backend --help names the value '$v'" "$v" "$OUT"
done

run chelp "$MCPGW" check-config --help
assert_eq "mcpgw check-config --help exits 0" 0 "$RC"
assert_match "check-config --help describes -c" '(^|[^a-z])-c([^a-z]|$)' "$OUT"

run version "$MCPGW" version
assert_eq "mcpgw version exits 0" 0 "$RC"
assert_match "mcpgw version prints the version" '^mcpgw [0-9]+\.[0-9]+' "$(printf '%s' "$OUT" | head -n 1)"

# --- usage errors -----------------------------------------------------------------------
run noargs "$MCPGW"
assert_eq "mcpgw without a command exits 2" 2 "$RC"
run unknown "$MCPGW" frobnicate
assert_eq "unknown command exits 2" 2 "$RC"
run badflag "$MCPGW" backend --no-such-flag
assert_eq "backend with an unknown flag exits 2" 2 "$RC"
assert_match "unknown flag is named on stderr" 'no-such-flag' "$ERR"
run badera "$MCPGW" backend --listen 127.0.0.1:0 --era ancient
assert_eq "backend --era ancient exits 2" 2 "$RC"
run badstate "$MCPGW" backend --listen 127.0.0.1:0 --state disk
assert_eq "backend --state disk exits 2" 2 "$RC"
run badsse "$MCPGW" backend --listen 127.0.0.1:0 --sse sometimes
assert_eq "backend --sse sometimes exits 2" 2 "$RC"
run baddelay "$MCPGW" backend --listen 127.0.0.1:0 --delay-ms -5
assert_eq "backend --delay-ms -5 exits 2" 2 "$RC"
run badlost "$MCPGW" backend --listen 127.0.0.1:0 --lost-session-status 500
assert_eq "backend --lost-session-status 500 exits 2" 2 "$RC"
run badlisten "$MCPGW" backend --listen not-an-address
assert_eq "backend --listen not-an-address exits 2" 2 "$RC"
# durations past the file's bounds overflowed into milliseconds/timevals
for flag in --session-idle-timeout --sse-keepalive --handle-ttl --shutdown-timeout; do
	run hugedur "$MCPGW" backend --listen 127.0.0.1:0 $flag 20000000000000000
	assert_eq "backend $flag 20000000000000000 exits 2" 2 "$RC"
done
run missingarg "$MCPGW" backend --era
assert_eq "backend --era without a value exits 2" 2 "$RC"
run nokey "$MCPGW" backend --listen 127.0.0.1:0 --state hmac --key-file "$T_DIR/no-such-file"
assert_ne "backend with a missing key file does not run" 0 "$RC"
assert_match "missing key file is named" 'no-such-file' "$ERR"

# Runtime failure: the address is taken.
start_backend --era modern
run inuse "$MCPGW" backend --listen "$B_ADDR"
assert_eq "backend on an address in use exits 1" 1 "$RC"

# Several listeners in one process: one line each, all serving the same
# sessions.
start_backend --listen 127.0.0.1:0 --listen 127.0.0.1:0 --era legacy
i=0
while [ "$(grep -c '^listening on ' "$B_OUT")" -lt 2 ] && [ $i -lt 20 ]; do
	sleep 0.1
	i=$((i + 1))
done
assert_eq "two listeners print two 'listening on' lines" 2 "$(grep -c '^listening on ' "$B_OUT")"
SECOND=$(sed -n 2p "$B_OUT" | sed 's/^listening on //')
assert_ne "the listeners have different addresses" "$B_ADDR" "$SECOND"
legacy_init "$B_URL" || fail "no session on the first listener"
legacy "http://$SECOND/mcp" 2 tools/call '{"name":"echo","arguments":{"text":"other door"}}'
assert_eq "a session opened on one listener works on the other" "other door" "$(tool_text)"

# IPv6 loopback, when this machine has it.
if timeout 5 node -e 'const s=require("net").createServer();s.on("error",()=>process.exit(1));s.listen(0,"::1",()=>s.close())' 2>/dev/null; then
	start_backend --listen '[::1]:0' --era modern
	assert_match "IPv6 listener prints a bracketed address" '^\[::1\]:[0-9]+$' "$B_ADDR"
	req GET "http://$B_ADDR/healthz" -g
	assert_code "GET /healthz over IPv6" 200
	modern "$B_URL" 1 tools/call '{"name":"echo","arguments":{"text":"v6"}}' -g
	assert_eq "modern echo over IPv6" v6 "$(tool_text)"
else
	log "note: no IPv6 loopback on this machine; IPv6 listener not exercised"
fi

# --- check-config --------------------------------------------------------------------------------
N=0
for f in "$TOP_SRCDIR"/conf/*.yaml "$TOP_SRCDIR"/conf/*.yml "$TOP_SRCDIR"/conf/*.json; do
	[ -f "$f" ] || continue
	N=$((N + 1))
	case $(basename "$f") in
	load-*) run cc "$MCPGW" check-config --scenario "$f" ;; # mcpgw load scenarios
	*)
		if grep -q '^ *cert: tls/cert.pem' "$f"; then
			# Its TLS files are named relative to its folder: without
			# them it is refused; a copy next to a fresh certificate
			# passes, checked from another working directory.
			run cc "$MCPGW" check-config -c "$f"
			assert_eq "check-config refuses $(basename "$f") without its TLS files" 2 "$RC"
			assert_match "the refusal names $(basename "$f")'s certificate in its folder" "/conf/tls/cert.pem" "$ERR"
			mkdir -p "$T_DIR/example/tls"
			cp "$f" "$T_DIR/example/"
			( cd "$T_DIR" && gen_cert && mv "$CERT" "$KEY" "$T_DIR/example/tls/" )
			f=$T_DIR/example/$(basename "$f")
			run cc env -C / "$MCPGW" check-config -c "$f"
		else
			run cc "$MCPGW" check-config -c "$f"
		fi
		;;
	esac
	assert_eq "check-config accepts $(basename "$f")" 0 "$RC"
	[ "$RC" = 0 ] || log "$ERR"
done
assert_ne "conf/ holds example configurations" 0 "$N"

# bad_config NAME LINE COL KEY CONTENT: check-config must exit 2 and name
# NAME:LINE:COL and the key.
bad_config() {
	local name=$1 line=$2 col=$3 key=$4
	printf '%s\n' "$5" >"$T_DIR/$name"
	run bad "$MCPGW" check-config -c "$T_DIR/$name"
	assert_eq "check-config $name exits 2" 2 "$RC"
	assert_match "check-config $name names $name:$line:$col" "$name:$line:$col" "$ERR"
	[ -n "$key" ] && assert_match "check-config $name names the key $key" "$key" "$ERR"
}
bad_config unknown.yaml 3 3 bogus_key $'backend:\n  era: dual\n  bogus_key: 1'
bad_config type.yaml 2 13 delay_ms $'backend:\n  delay_ms: soon'
bad_config range.yaml 3 24 lost_session_status $'# comment line\nbackend:\n  lost_session_status: 500'
bad_config enum.yaml 2 8 era $'backend:\n  era: ancient'
bad_config dup.yaml 3 3 era $'backend:\n  era: dual\n  era: legacy'
bad_config syntax.yaml 3 3 '' $'backend:\n  era: dual\n  - x'
bad_config tab.yaml 3 1 '' $'backend:\n  era: dual\n\tid: x'
bad_config limits.yaml 2 19 max_body_bytes $'limits:\n  max_body_bytes: lots'
bad_config json.json 1 14 bogus $'{"backend": {"bogus": 1}}'

run missing "$MCPGW" check-config -c "$T_DIR/does-not-exist.yaml"
assert_eq "check-config on a missing file exits 2" 2 "$RC"
run backendbad "$MCPGW" backend -c "$T_DIR/unknown.yaml" --listen 127.0.0.1:0
assert_eq "backend with a bad config exits 2" 2 "$RC"
assert_match "backend with a bad config names file:line:col" 'unknown.yaml:3:3' "$ERR"

# A good config drives the backend (flags still apply on top of it).
# (its listener is replaced by start_backend's --listen; without one
# check-config would refuse it, as backend -c does without --listen)
cat >"$T_DIR/good.yaml" <<'EOF'
listeners:
  - address: 127.0.0.1:0
backend:
  era: legacy
  id: from-config
EOF
run goodcc "$MCPGW" check-config -c "$T_DIR/good.yaml"
assert_eq "check-config good.yaml" 0 "$RC"
start_backend -c "$T_DIR/good.yaml"
legacy_init "$B_URL" && ok "backend -c good.yaml serves the legacy era from the file"
legacy "$B_URL" 2 tools/call '{"name":"whoami","arguments":{}}'
assert_match "id from the config file" 'from-config' "$(tool_text)"
modern "$B_URL" 3 server/discover '{}'
assert_ne "era legacy from the config: modern calls are not served" 200 "$CODE"

# --- graceful shutdown -------------------------------------------------------------------------------
start_backend --era modern --id term-A
URL=$B_URL
ADDR=$B_ADDR
PID=$B_PID
: >"$T_DIR/order"
bg_post inflight "$URL" "$(modern_body 1 tools/call '{"name":"sleep","arguments":{"ms":1500}}')" \
	-H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: sleep'
INFLIGHT=$BG_PID
wait_inflight "http://$ADDR" 1 || fail "the sleep request did not reach the server"
kill -TERM "$PID"
# The listener closes once the signal is handled; poll (bounded) for that.
i=0
CODE=200
while [ "$CODE" != 000 ] && [ $i -lt 10 ]; do
	req GET "http://$ADDR/healthz" --max-time 1
	[ "$CODE" = 000 ] || sleep 0.1
	i=$((i + 1))
done
assert_eq "after SIGTERM new connections are not served" 000 "$CODE"
if [ -s "$T_DIR/inflight.code" ]; then
	fail "the in-flight request had already ended, so the refusal proves nothing"
else
	ok "new connections were refused while the in-flight request was still running"
fi
wait_pid "$INFLIGHT" 8
bg_result inflight
assert_code "the in-flight sleep(1500) completes after SIGTERM" 200
assert_jq "the in-flight request got its result" '.id == 1 and has("result") and (.result.isError // false) == false'
fg_result
wait_pid "$PID" 15
RC=$?
assert_eq "SIGTERM: exit status 0" 0 "$RC"

# SIGINT with an open subscriptions/listen stream: the stream is closed
# with its graceful completion result and the process exits 0.
start_backend --era modern --sse-keepalive 200ms
PID=$B_PID
stream_open listen 10 POST "$B_URL" -H 'Content-Type: application/json' \
	-H 'Accept: application/json, text/event-stream' \
	-H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: subscriptions/listen' \
	--data-binary "$(modern_body 77 subscriptions/listen '{"notifications":{"toolsListChanged":true}}')"
LPID=$S_PID
wait_match "$T_DIR/listen.body" '^:' 3 || fail "listen stream did not start"
kill -INT "$PID"
wait_pid "$PID" 15
RC=$?
assert_eq "SIGINT: exit status 0" 0 "$RC"
wait_pid "$LPID" 5
assert_eq "listen stream ended cleanly when the server stopped" 0 "$?"
BODYF=$T_DIR/listen.body
LAST=$(sse_messages | tail -n 1)
fg_result
assert_match "listen stream ends with its completion result for id 77" '"id":77.*"result"|"result".*"id":77' "$LAST"

finish
