#!/usr/bin/env bash
# serve_ratelimit.sh - routes' rate limits and per-client connection
# limits with real processes: `mcpgw serve` in front of `mcpgw backend`,
# a real redis-server for the shared limits.
#   A. one gateway, 2 workers, three limited routes: tools/call whoami by
#      client (burst 3), other tools/call by tool (burst 2), the rest by
#      method (burst 2).  Over each, 429 with Retry-After (1 s .. 1/rate,
#      whole seconds) and the JSON-RPC error -32019 with the request's id
#      and data {retry_after, key}; the admitted count within burst +
#      rate x elapsed although every request is a new connection spread
#      over both workers (one table per process); another client address,
#      another tool, another method are not affected; a bucket refills
#      (bounded polling); traffic under the limits passes; a reload keeps
#      an unchanged limit's buckets, a changed limit starts full; the metric
#      mcpgw_rate_limited_total by route and key; promtool clean.
#   B. two gateways sharing one bucket through Redis (shared: redis):
#      the sum admitted across both stays within burst + rate x elapsed;
#      the bucket is in Redis; with Redis gone the local bucket decides
#      (requests still answered, the fallback counted and logged); with
#      Redis stopped (SIGSTOP) the wait ends at redis.timeout, and a client
#      leaving while it waits is handled.
#   C. limits.max_connections_per_client: with two connections open from
#      127.0.0.1 (on any worker), a third is closed at once, one from
#      127.0.0.2 is served, and closing one makes room again; refusals
#      counted by reason; `mcpgw backend` with the same limit.
#   D. limits.new_connections_per_client: a burst of parallel new
#      connections past the rate is refused, within burst + rate x
#      elapsed; later ones pass again.
#   E. check-config refuses bad values.
. "$(dirname "$0")/lib.sh"
require_tools curl jq redis-server redis-cli promtool
require_mcpgw
watchdog 200

# metric TEXTFILE NAME LABEL-ERE: the sum of the samples of NAME whose
# labels match LABEL-ERE (0 when none does).
metric() {
	awk -v n="$2" -v re="$3" '
		{ name = $1; sub(/\{.*/, "", name) }
		name == n { l = $1; if (index(l, "{")) { sub(/^[^{]*\{/, "", l); sub(/\}$/, "", l) } else l = ""
		            if (l ~ re) s += $NF }
		END { printf "%d\n", s + 0 }' "$1"
}

# scrape ADDR NAME: GET /metrics from 127.0.0.2 (not the address under a
# connection limit) into $T_DIR/NAME.prom.
scrape() {
	curl -sS --max-time "$CURL_MAX" --interface 127.0.0.2 -o "$T_DIR/$2.prom" \
		"http://$1/metrics" 2>/dev/null
}

now() { date +%s.%N; }
# elapsed T0: seconds since T0 (a decimal).
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f\n", b - a }'; }
# bound BURST RATE SECS: the most a token bucket admits in SECS seconds.
bound() { awk -v b="$1" -v r="$2" -v s="$3" 'BEGIN { printf "%d\n", b + int(r * s) }'; }

# until_429 MAX CMD...: runs CMD (which sets CODE) until it answers 429,
# MAX times at most; ADMITTED counts the 200s before it, ELAPSED the
# seconds it all took.
until_429() {
	local max=$1 i=0 t0
	shift
	ADMITTED=0 OTHER=""
	t0=$(now)
	while [ $i -lt "$max" ]; do
		"$@"
		case $CODE in
		429) break ;;
		200) ADMITTED=$((ADMITTED + 1)) ;;
		*) OTHER="$OTHER $CODE" ;;
		esac
		i=$((i + 1))
	done
	ELAPSED=$(elapsed "$t0")
}

# check_429 WHAT ID KEY MAXWAIT: the last answer is the rate-limit error.
check_429() {
	local ra
	assert_eq "$1: status" 429 "$CODE"
	ra=$(hdr retry-after)
	assert_match "$1: Retry-After is whole seconds" '^[0-9]+$' "$ra"
	if [ -n "$ra" ] && [ "$ra" -ge 1 ] && [ "$ra" -le "$4" ]; then
		ok "$1: Retry-After $ra within 1..$4"
	else
		fail "$1: Retry-After '$ra' not within 1..$4"
	fi
	assert_eq "$1: JSON-RPC code" -32019 "$(jq_get .error.code)"
	assert_eq "$1: the request's id" "$2" "$(jq_get .id)"
	assert_eq "$1: data.key" "$3" "$(jq_get .error.data.key)"
	assert_eq "$1: data.retry_after = Retry-After" "$ra" "$(jq_get .error.data.retry_after)"
}

# within WHAT N BURST RATE SECS: N admitted is at least BURST and at most
# what the bucket allows in SECS.
within() {
	local max
	max=$(bound "$3" "$4" "$5")
	if [ "$2" -ge "$3" ] && [ "$2" -le "$max" ]; then
		ok "$1: $2 admitted, within $3..$max (burst $3, rate $4/s, ${5}s)"
	else
		fail "$1: $2 admitted, not within $3..$max (burst $3, rate $4/s, ${5}s)"
	fi
}

whoami_from() { # SRC ID
	modern "$G_URL" "$2" tools/call '{"name":"whoami","arguments":{}}' --interface "$1"
}
echo_call() { # ID
	modern "$G_URL" "$1" tools/call '{"name":"echo","arguments":{"text":"hi"}}'
}
add_call() { # ID
	modern "$G_URL" "$1" tools/call '{"name":"add","arguments":{"a":1,"b":2}}'
}
list_call() { modern "$G_URL" "$1" tools/list '{}'; }
discover_call() { modern "$G_URL" "$1" server/discover '{}'; }

start_backend --era dual --id r1
BE=$B_ADDR

# ===== A. local limits, 2 workers ============================================
cat >"$T_DIR/a.yaml" <<YAML
listeners:
  - address: 127.0.0.1:0
workers: 2
upstreams:
  - name: be
    servers: [{url: "http://$BE"}]
routes:
  - match: {mcp_method: tools/call, mcp_name: whoami}
    upstream: be
    rate_limit: {rate: 0.1, burst: 3, key: client}
  - match: {mcp_method: tools/call}
    upstream: be
    rate_limit: {rate: 0.2, burst: 2, key: tool}
  - match: {path: /mcp}
    upstream: be
    rate_limit: {rate: 0.5, burst: 2, key: method}
YAML
start_serve -c "$T_DIR/a.yaml" --access-log
GA=$G_ADDR

# client key: every request a new connection (either worker)
until_429 12 whoami_from 127.0.0.1 "\"w\""
assert_eq "client: nothing but 200 before the 429" "" "$OTHER"
within "client limit over 2 workers" "$ADMITTED" 3 0.1 "$ELAPSED"
check_429 "client limit" w client 10
# a reload that leaves the limit as it was keeps its buckets; one that
# changes it starts afresh
reloads_done() { [ "$(grep -c 'reload: done' "$G_ERR")" -ge "$1" ]; }
kill -HUP "$G_PID"
poll_until 10 reloads_done 1 || fail "reload 1 not done within 10 s"
whoami_from 127.0.0.1 '"r1"'
assert_eq "reloaded, same limit: the bucket is still empty" 429 "$CODE"
sed -i 's/rate: 0.1, burst: 3, key: client/rate: 0.1, burst: 4, key: client/' "$T_DIR/a.yaml"
kill -HUP "$G_PID"
poll_until 10 reloads_done 2 || fail "reload 2 not done within 10 s"
whoami_from 127.0.0.1 '"r2"'
assert_eq "reloaded, changed limit: a full bucket" 200 "$CODE"
# traffic under the limit from other addresses passes
under=0
for i in 3 4 5 6 7 8; do
	for j in 1 2; do
		whoami_from "127.0.0.$i" "$i$j"
		[ "$CODE" = 200 ] && [ -n "$(tool_text)" ] && under=$((under + 1))
	done
done
assert_eq "12 calls from 6 other addresses under the limit all pass" 12 "$under"

# tool key: echo's bucket, not add's
until_429 12 echo_call 17
assert_eq "tool: nothing but 200 before the 429" "" "$OTHER"
within "tool limit" "$ADMITTED" 2 0.2 "$ELAPSED"
check_429 "tool limit" 17 tool 5
add_call 18
assert_eq "another tool passes" 200 "$CODE"
assert_eq "another tool's answer" 3 "$(tool_text)"

# method key: tools/list's bucket, not server/discover's
until_429 12 list_call 30
assert_eq "method: nothing but 200 before the 429" "" "$OTHER"
within "method limit" "$ADMITTED" 2 0.5 "$ELAPSED"
check_429 "method limit" 30 method 2
discover_call 31
assert_eq "another method passes" 200 "$CODE"
# tools/list's bucket is empty; polled, it refills (one token per 2 s)
list_ok() { list_call 32; [ "$CODE" = 200 ]; }
if poll_until 10 list_ok; then
	ok "the method bucket refilled: tools/list passes again"
else
	fail "tools/list still refused 10 s after its bucket emptied (last $CODE)"
fi

scrape "$GA" a
promtool_out=$(promtool check metrics <"$T_DIR/a.prom" 2>&1)
assert_eq "A: promtool check metrics" "" "$promtool_out"
assert_eq "A: rate_limited route 0 client" 2 "$(metric "$T_DIR/a.prom" mcpgw_rate_limited_total 'route="0".*key="client"')"
assert_eq "A: rate_limited route 1 tool" 1 "$(metric "$T_DIR/a.prom" mcpgw_rate_limited_total 'route="1".*key="tool"')"
if [ "$(metric "$T_DIR/a.prom" mcpgw_rate_limited_total 'route="2".*key="method"')" -ge 1 ]; then
	ok "A: rate_limited route 2 method counted"
else
	fail "A: rate_limited route 2 method not counted"
fi
assert_match "A: access line notes the refusal" 'rate limited' "$(cat "$G_ERR")"
stop_serve

# ===== B. shared through Redis, two gateways =================================
start_redis
for n in 1 2; do
	cat >"$T_DIR/b$n.yaml" <<YAML
listeners:
  - address: 127.0.0.1:0
workers: 2
upstreams:
  - name: be
    servers: [{url: "http://$BE"}]
rate_limits:
  redis: {url: "$REDIS_URL", timeout: 500ms}
routes:
  - match: {path: /mcp}
    upstream: be
    rate_limit: {rate: 1, burst: 4, key: client, shared: redis}
YAML
done
start_serve -c "$T_DIR/b1.yaml"
GB1=$G_ADDR GB1P=$G_PID GB1E=$G_ERR
start_serve -c "$T_DIR/b2.yaml"
GB2=$G_ADDR GB2P=$G_PID
both=0 refused=0 other=""
t0=$(now)
for i in $(seq 1 16); do
	if [ $((i % 2)) = 0 ]; then a=$GB1; else a=$GB2; fi
	modern "http://$a/mcp" "$i" tools/list '{}'
	case $CODE in
	200) both=$((both + 1)) ;;
	429) refused=$((refused + 1)) ;;
	*) other="$other $CODE" ;;
	esac
done
el=$(elapsed "$t0")
assert_eq "shared: every answer 200 or 429" "" "$other"
within "shared limit over two gateways" "$both" 4 1 "$el"
if [ "$refused" -ge 1 ]; then ok "shared: $refused refused"; else fail "shared: none refused"; fi
keys=$(timeout 5 redis-cli -p "$REDIS_PORT" --scan --pattern 'mcpgw:rl:*' | wc -l)
assert_eq "shared: one bucket in Redis" 1 "$keys"
# Redis stopped (answers nothing): a client that leaves while its check
# waits frees nothing twice; a request that waits past redis.timeout is
# decided by the local bucket
kill -STOP "$REDIS_PID"
body=$(modern_body 97 tools/list '{}')
curl -s --max-time 0.2 -o /dev/null -X POST -H 'Content-Type: application/json' \
	-H 'Accept: application/json, text/event-stream' \
	-H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: tools/list' \
	--data-binary "$body" "http://$GB1/mcp" 2>/dev/null
modern "http://$GB1/mcp" 98 tools/list '{}'
assert_eq "Redis silent: answered from the local bucket" 200 "$CODE"
kill -CONT "$REDIS_PID"
# the first command's timeout ends the connection: a command behind it
# on the same worker ends with it ("connection"), one alone by its own
# timer ("timeout")
timeout_logged() { grep -Eq 'event=rate_limit_redis_fallback.*why="(timeout|connection)"' "$GB1E"; }
if poll_until 5 timeout_logged; then ok "Redis silent: timeout event logged"; else fail "Redis silent: no timeout event"; fi
# Redis gone: the local bucket of each gateway decides
kill -TERM "$REDIS_PID"
wait "$REDIS_PID" 2>/dev/null
modern "http://$GB1/mcp" 99 tools/list '{}'
assert_eq "Redis down: answered from the local bucket" 200 "$CODE"
scrape "$GB1" b1
if [ "$(metric "$T_DIR/b1.prom" mcpgw_rate_limit_redis_fallbacks_total '')" -ge 1 ]; then
	ok "Redis down: fallback counted"
else
	fail "Redis down: no fallback counted"
fi
fallback_logged() { grep -q 'event=rate_limit_redis_fallback' "$GB1E"; }
if poll_until 5 fallback_logged; then ok "Redis down: event logged"; else fail "Redis down: no event line"; fi
stop_serve "$GB1P"
stop_serve "$GB2P"

# ===== C. concurrent connections per client ==================================
cat >"$T_DIR/c.yaml" <<YAML
listeners:
  - address: 127.0.0.1:0
workers: 2
limits:
  max_connections_per_client: 2
upstreams:
  - name: be
    servers: [{url: "http://$BE"}]
YAML
start_serve -c "$T_DIR/c.yaml"
GC=$G_ADDR
exec 3<>"/dev/tcp/${GC%:*}/${GC##*:}"
exec 4<>"/dev/tcp/${GC%:*}/${GC##*:}"
# both accepted (and counted) before the third: the scrape, from
# 127.0.0.2, is the third open connection
open3() { scrape "$GC" c0 && [ "$(metric "$T_DIR/c0.prom" mcpgw_connections_open '')" -ge 3 ]; }
poll_until 10 open3 || fail "the two connections were not accepted within 10 s"
modern "$G_URL" 1 tools/list '{}'
assert_eq "a third connection from 127.0.0.1 is closed" 000 "$CODE"
modern "$G_URL" 2 tools/list '{}' --interface 127.0.0.2
assert_eq "one from 127.0.0.2 is served" 200 "$CODE"
exec 3>&-
third_ok() { modern "$G_URL" 3 tools/list '{}'; [ "$CODE" = 200 ]; }
if poll_until 10 third_ok; then ok "closing one makes room"; else fail "still refused after one closed (last $CODE)"; fi
exec 4>&-
scrape "$GC" c
assert_eq "C: promtool check metrics" "" "$(promtool check metrics <"$T_DIR/c.prom" 2>&1)"
if [ "$(metric "$T_DIR/c.prom" mcpgw_connections_refused_per_client_total 'reason="max_connections_per_client"')" -ge 1 ]; then
	ok "C: refusal counted by reason"
else
	fail "C: refusal not counted"
fi
assert_eq "C: no rate refusal" 0 "$(metric "$T_DIR/c.prom" mcpgw_connections_refused_per_client_total 'reason="new_connections_per_client"')"
assert_match "C: refusal logged" 'connection refused \(max_connections_per_client\)' "$(cat "$G_ERR")"
stop_serve

# the backend's HTTP layer takes the same limit from its own limits:
printf 'limits:\n  max_connections_per_client: 1\n' >"$T_DIR/be.yaml"
start_backend -c "$T_DIR/be.yaml"
exec 5<>"/dev/tcp/${B_ADDR%:*}/${B_ADDR##*:}"
req GET "http://$B_ADDR/mcpgw-none"
assert_eq "backend: a second connection from 127.0.0.1 is closed" 000 "$CODE"
exec 5>&-
be_ok() { req GET "http://$B_ADDR/mcpgw-none"; [ "$CODE" != 000 ]; }
if poll_until 10 be_ok; then ok "backend: served once the first closed"; else fail "backend: still refused"; fi
stop_pid "$B_PID" >/dev/null

# ===== D. new connections per second per client ==============================
cat >"$T_DIR/d.yaml" <<YAML
listeners:
  - address: 127.0.0.1:0
workers: 2
limits:
  new_connections_per_client: 2
upstreams:
  - name: be
    servers: [{url: "http://$BE"}]
YAML
start_serve -c "$T_DIR/d.yaml"
GD=$G_ADDR
body=$(modern_body 1 tools/list '{}')
t0=$(now)
pids=""
for i in $(seq 1 20); do
	curl -s --max-time 10 -o /dev/null -w '%{http_code}\n' -X POST \
		-H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' \
		-H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: tools/list' \
		--data-binary "$body" "$G_URL" >"$T_DIR/d.$i" 2>/dev/null &
	pids="$pids $!"
done
for p in $pids; do wait "$p"; done
el=$(elapsed "$t0")
passed=$(cat "$T_DIR"/d.* | grep -c '^200$')
closed=$(cat "$T_DIR"/d.* | grep -c '^000$')
assert_eq "D: every one served or closed" 20 $((passed + closed))
if [ "$passed" -le "$(bound 2 2 "$el")" ] && [ "$closed" -ge 1 ]; then
	ok "D: $passed of 20 new connections in ${el}s passed, $closed refused"
else
	fail "D: $passed of 20 passed in ${el}s (at most $(bound 2 2 "$el")), $closed refused"
fi
again() { modern "$G_URL" 5 tools/list '{}'; [ "$CODE" = 200 ]; }
if poll_until 10 again; then ok "D: new connections pass again later"; else fail "D: still refused"; fi
scrape "$GD" d
if [ "$(metric "$T_DIR/d.prom" mcpgw_connections_refused_per_client_total 'reason="new_connections_per_client"')" -ge 1 ]; then
	ok "D: refusals counted by reason"
else
	fail "D: refusals not counted"
fi
stop_serve

# ===== E. configuration errors ================================================
bad() { # WHAT ERE YAML-OF-THE-ROUTE-LIMIT [TOP-LEVEL]
	printf 'listeners: [{address: "127.0.0.1:0"}]\nupstreams: [{name: be, servers: [{url: "http://%s"}]}]\n%s\nroutes:\n  - upstream: be\n    rate_limit: %s\n' \
		"$BE" "${4:-}" "$3" >"$T_DIR/bad.yaml"
	out=$("$MCPGW" check-config -c "$T_DIR/bad.yaml" 2>&1)
	st=$?
	assert_ne "$1: check-config fails" 0 "$st"
	assert_match "$1: says why" "$2" "$out"
}
bad "rate 0" 'rate_limit.rate: must be more than 0' '{rate: 0}'
bad "rate negative" 'rate_limit.rate' '{rate: -1}'
bad "burst 0" 'rate_limit.burst: out of range' '{rate: 1, burst: 0}'
bad "unknown key" "rate_limit.key: 'ip' is not one of" '{rate: 1, key: ip}'
bad "redis without a URL" 'rate_limit.shared: redis needs rate_limits.redis.url' '{rate: 1, shared: redis}'
bad "per-client limit negative" 'limits.max_connections_per_client' '{rate: 1}' 'limits: {max_connections_per_client: -1}'
bad "bad redis URL" 'rate_limits.redis.url' '{rate: 1, shared: redis}' 'rate_limits: {redis: {url: "http://x"}}'

finish
