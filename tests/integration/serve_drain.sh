#!/usr/bin/env bash
# serve_drain.sh - graceful drain of `mcpgw serve` on SIGTERM, with real
# processes: the gateway (drain.delay 1s, 2 workers) in front of one
# modern `mcpgw backend`.
#   - a 4 s tools/call is in flight and an idle HTTP/1.1 keep-alive
#     connection is open when SIGTERM arrives;
#   - readyz answers 503 "draining" at once, while healthz stays 200 and
#     new connections are still accepted and served (the drain delay);
#   - after the delay new connections are refused and the idle keep-alive
#     connection is closed by the gateway, while the call still runs;
#   - the call in flight completes with its answer; the gateway exits 0.
# No timing is asserted: only the order of events.
. "$(dirname "$0")/lib.sh"
watchdog 90

start_backend --era modern --id d1
B1=$B_ADDR
cat >"$T_DIR/gw.yaml" <<YAML
listeners:
  - address: 127.0.0.1:0
workers: 2
drain:
  delay: 1s
timeouts:
  shutdown: 20s
upstreams:
  - name: pool
    servers:
      - url: http://$B1
YAML
start_serve -c "$T_DIR/gw.yaml"
PORT=${G_ADDR##*:}

code() { # PATH -> HTTP status on a new connection; body in $T_DIR/body
	curl -sS --max-time 5 -o "$T_DIR/body" -w '%{http_code}' \
		"http://$G_ADDR$1" 2>/dev/null
}
ready_is() { [ "$(code /mcpgw/readyz)" = "$1" ]; }
poll_until 10 ready_is 200 || die "readyz never 200 before the drain: $(cat "$T_DIR/body")"

# the call in flight
CURL_MAX=40
b=$(modern_body 7 tools/call '{"name":"sleep","arguments":{"ms":4000}}')
bg_post long "$G_URL" "$b" -H "MCP-Protocol-Version: $MODERN_VERSION" \
	-H 'Mcp-Method: tools/call' -H 'Mcp-Name: sleep'
CURL_MAX=10
wait_inflight "http://$B1" 1 || die "the long call never reached the replica"

# an idle keep-alive connection: one answered request, then nothing
exec 3<>"/dev/tcp/127.0.0.1/$PORT" || die "cannot connect to the gateway"
printf 'GET /mcpgw/healthz HTTP/1.1\r\nHost: gw\r\n\r\n' >&3
IFS= read -r -t 5 status <&3 || die "no answer on the keep-alive connection"
case $status in "HTTP/1.1 200"*) ;; *) die "keep-alive request: '$status'" ;; esac
# the rest of that answer (headers and a small body) is drained later

kill -TERM "$G_PID"
poll_until 5 ready_is 503 || fail "readyz not 503 after SIGTERM: $(cat "$T_DIR/body")"
jq -e '.status == "unavailable" and .reason == "draining"' "$T_DIR/body" >/dev/null ||
	fail "readyz body while draining: $(cat "$T_DIR/body")"
assert_eq "healthz while draining" 200 "$(code /mcpgw/healthz)"
who "$G_URL"
assert_eq "a new call during the drain delay" 200 "$CODE"
assert_eq "it was served" d1 "$WHO"
ok "draining: not ready, still accepting and serving"

refused() { ! curl -sS --max-time 2 -o /dev/null "http://$G_ADDR/mcpgw/healthz" 2>/dev/null; }
poll_until 15 refused || fail "new connections still accepted long after the drain delay"
# the idle connection: the gateway closes it (EOF after the first answer)
if timeout 10 cat <&3 >"$T_DIR/idle.rest"; then
	ok "the idle keep-alive connection was closed by the gateway"
else
	fail "the idle keep-alive connection was not closed"
fi
exec 3<&-
[ -e "$T_DIR/long.code" ] && fail "the long call ended before the listeners closed (test premise broken)"

wait_pid "$BG_PID" 30
bg_result long
assert_eq "the call in flight completed" 200 "$CODE"
assert_jq "its result" '.result.content[0].text == "slept 4000 ms"'
# the gateway was signalled once already (a second signal is "exit now")
wait_pid "$G_PID" 30
assert_eq "the gateway's exit status after the drain" 0 "$?"
finish
