#!/usr/bin/env bash
# serve_health.sh - the gateway's own health endpoints, with real
# processes: `mcpgw serve` (2 workers, active health checks every 500 ms)
# in front of two `mcpgw backend` replicas.
#   - GET /mcpgw/healthz and /mcpgw/readyz answer 200 from the gateway
#     itself (the replicas never see them), on every worker, HEAD too;
#   - with one replica killed the gateway stays ready (the other serves);
#   - with both killed readyz turns 503 naming the group, while healthz
#     stays 200 (the gateway itself is alive);
#   - a replica back: ready again.
. "$(dirname "$0")/lib.sh"
watchdog 120

start_backend --era modern --id h1 --record 100
B1=$B_ADDR P1=$B_PID
start_backend --era modern --id h2 --record 100
B2=$B_ADDR P2=$B_PID
cat >"$T_DIR/gw.yaml" <<YAML
listeners:
  - address: 127.0.0.1:0
workers: 2
upstreams:
  - name: pool
    servers:
      - url: http://$B1
      - url: http://$B2
    health:
      interval: 500ms
      timeout: 400ms
      rise: 1
      fall: 1
YAML
start_serve -c "$T_DIR/gw.yaml"

code() { # PATH [METHOD] -> HTTP status; body in $T_DIR/body
	curl -sS --max-time 5 -o "$T_DIR/body" -w '%{http_code}' -X "${2:-GET}" \
		"http://$G_ADDR$1" 2>/dev/null
}
ready_is() { [ "$(code /mcpgw/readyz)" = "$1" ]; }

assert_body() { jq -e "$1" "$T_DIR/body" >/dev/null || fail "$2: $(cat "$T_DIR/body")"; }
# several requests on fresh connections: both workers answer
for i in 1 2 3 4 5 6; do
	assert_eq "healthz ($i)" 200 "$(code /mcpgw/healthz)"
	assert_body '.status == "ok"' "healthz body ($i)"
done
poll_until 10 ready_is 200 || fail "readyz never 200 with two live replicas: $(cat "$T_DIR/body")"
assert_eq "readyz" 200 "$(code /mcpgw/readyz)"
assert_eq "HEAD healthz" 200 "$(code /mcpgw/healthz HEAD)"
# the replicas never saw them (their record lists what reached them)
for b in $B1 $B2; do
	rec=$(curl -sS --max-time 5 "http://$b/debug/requests" 2>/dev/null || true)
	case $rec in
	*'"requests"'*) ;;
	*) die "no request record from replica $b: $rec" ;;
	esac
	case $rec in
	*mcpgw/healthz*|*mcpgw/readyz*) fail "the health endpoints reached replica $b" ;;
	esac
done
ok "the health endpoints are answered by the gateway"

kill_wait "$P1" KILL 10 || die "replica h1 did not die"
sleep 1.5
assert_eq "readyz with one replica left" 200 "$(code /mcpgw/readyz)"

kill_wait "$P2" KILL 10 || die "replica h2 did not die"
poll_until 20 ready_is 503 || fail "readyz never 503 with every replica dead"
jq -e '.status == "unavailable" and (.reason | test("upstream group pool"))' \
	"$T_DIR/body" >/dev/null || fail "readyz 503 body: $(cat "$T_DIR/body")"
assert_eq "healthz with every replica dead" 200 "$(code /mcpgw/healthz)"

start_backend --listen "$B2" --era modern --id h2b
poll_until 20 ready_is 200 || fail "readyz not 200 again once a replica is back"
ok "ready again with a replica back"
finish
