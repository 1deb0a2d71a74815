#!/bin/bash
# serve_mrtr_guard.sh - a route's mrtr: single_use, the gateway's
# at-most-once guard for SEP-2322 requestState, in front of the reference
# backend's sealed state without --single-use (it accepts a re-presented
# state inside its lifetime: the "fork", a second booking from one
# dialogue).
#   A. directly to the backend, re-presenting the last round's state
#      forks: a second, different booking.
#   B. one gateway, 2 workers: a dialogue completes; every re-presentation
#      of a used state, each on a new connection (so both workers get
#      some), is 409 with -31023 and the request's id and reaches no
#      replica (forks 0); the same state JSON-escaped otherwise is the
#      same state; the first presentation reaches the replica byte for
#      byte; a request without requestState is never recorded; a batch
#      carrying one is 400 -32600; counters in /mcpgw/stats and /metrics.
#   C. a gateway whose route has no mrtr: passes re-presentations.
#   D. two gateways sharing one redis-server (shared: redis): a dialogue
#      alternating between them completes, every re-presentation at the
#      other gateway is refused, the digests are in Redis with a PTTL
#      within ttl; Redis down: 503 -31024 (counted), and the state, not
#      recorded anywhere, passes once Redis is back; Redis stopped: 503
#      after redis.timeout.
#   E. serve --check / check-config refuse bad mrtr: and mrtr_guard: keys.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq redis-server redis-cli promtool sha256sum
require_mcpgw
watchdog 240

ID=100
# mk ARGS_JSON [RS [RESP_JSON]]: a tools/call of book with the next id,
# into B.
mk() {
	local args=$1 rs=${2:-} resp=${3:-'{}'}
	ID=$((ID + 1))
	B=$(jq -cn --argjson id "$ID" --argjson a "$args" --arg rs "$rs" --argjson r "$resp" \
		--arg v "$MODERN_VERSION" '
		{jsonrpc: "2.0", id: $id, method: "tools/call",
		 params: ({name: "book", arguments: $a} +
		   (if $rs == "" then {} else {requestState: $rs, inputResponses: $r} end) +
		   {_meta: {"io.modelcontextprotocol/protocolVersion": $v,
		    "io.modelcontextprotocol/clientCapabilities": {elicitation: {}},
		    "io.modelcontextprotocol/clientInfo": {name: "itest", version: "1"}}})}')
}
# send URL BODY: posts a book body; sets RT, RSTATE, KEY, ECODE, EID, BOOKING.
send() {
	post "$1" "$2" -H "MCP-Protocol-Version: $MODERN_VERSION" \
		-H "Mcp-Method: tools/call" -H "Mcp-Name: book"
	RT=$(jq_get 'if has("error") then "error" else .result.resultType end')
	RSTATE=$(jq_get '.result.requestState // empty')
	KEY=$(jq_get '.result.inputRequests // {} | keys[0] // empty')
	ECODE=$(jq_get '.error.code // empty')
	EID=$(jq_get '.id')
	BOOKING=$(jq_get '.result.structuredContent.bookingId // empty')
}
# send_while_down GW BODY: send, again every 0.25 s (at most 60 times)
# while GW answers 503 because its Redis connection is not back yet.
send_while_down() {
	local i=0
	while [ $i -lt 60 ]; do
		send "$1" "$2"
		[ "$CODE" = 503 ] || return 0
		sleep 0.25
		i=$((i + 1))
	done
}
answer() {
	case $1 in
	date) echo '{"date":{"action":"accept","content":{"date":"2026-08-01"}}}' ;;
	confirm) echo '{"confirm":{"action":"accept","content":{"confirm":true}}}' ;;
	*) jq -cn --arg k "$1" '{($k): {action: "accept", content: {note: "aisle"}}}' ;;
	esac
}
# dialogue N URL...: a whole dialogue of N rounds, round i sent to URL
# i mod count.  STATES lists the states presented, LAST_BODY the last
# retry's body, LAST_KEY its input key.
dialogue() {
	local n=$1 calls=1 i
	shift
	local urls=("$@")
	STATES=()
	mk "{\"rounds\":$n}"
	send "${urls[0]}" "$B"
	while [ "$RT" = input_required ] && [ $calls -le 12 ]; do
		STATES+=("$RSTATE")
		LAST_KEY=$KEY
		mk "{\"rounds\":$n}" "$RSTATE" "$(answer "$KEY")"
		LAST_BODY=$B
		i=$((calls % ${#urls[@]}))
		send "${urls[$i]}" "$LAST_BODY"
		calls=$((calls + 1))
	done
}
completed() { bstat "$BE" .mrtr_completed; }

start_backend --era modern --request-state sealed --record 5000 --id S1
BE=$B_ADDR

# ================================================= A. the fork, directly
dialogue 2 "http://$BE/mcp"
assert_eq "A: a 2-round dialogue completes" complete "$RT"
FIRST_BOOKING=$BOOKING
mk '{"rounds":2}' "${STATES[1]}" "$(answer confirm)"
	send "http://$BE/mcp" "$B"
assert_eq "A: the backend takes the last state again (the fork)" complete "$RT"
assert_match "A: ... and makes a second booking" '^bk-' "$BOOKING"
assert_ne "A: ... a different one" "$FIRST_BOOKING" "$BOOKING"

# ================================================= B. one gateway, 2 workers
cat >"$T_DIR/b.yaml" <<YAML
listeners:
  - address: 127.0.0.1:0
workers: 2
upstreams:
  - name: be
    servers: [{url: "http://$BE"}]
routes:
  - match: {path: /mcp}
    upstream: be
    mrtr: {single_use: true, ttl: 10m}
YAML
start_serve -c "$T_DIR/b.yaml"
G1=$G_ADDR

dialogue 3 "$G_URL"
assert_eq "B: a 3-round dialogue through the guard completes" complete "$RT"
assert_eq "B: three states presented" 3 "${#STATES[@]}"
assert_eq "B: three states checked" 3 "$(gstat "$G1" .mrtr_guard.checked)"
assert_eq "B: three digests held (the first call had no state)" 3 "$(gstat "$G1" .mrtr_guard.held)"
assert_eq "B: the last retry reached the replica byte for byte" 1 \
	"$(rec_sha "$BE" "$(sha_of "$LAST_BODY")")"

DONE0=$(completed)
REFUSED=0 OTHER="" REACHED=0
for i in $(seq 1 24); do
	k=$((i % 3))
	mk '{"rounds":3}' "${STATES[$k]}" "$(answer confirm)"
	body=$B
	send "$G_URL" "$body"
	if [ "$CODE" = 409 ] && [ "$ECODE" = -31023 ] && [ "$EID" = "$ID" ]; then
		REFUSED=$((REFUSED + 1))
	else
		OTHER="$OTHER $CODE/$ECODE/$EID"
	fi
	REACHED=$((REACHED + $(rec_sha "$BE" "$(sha_of "$body")")))
done
assert_eq "B: 24 re-presentations on new connections, all 409 -31023 with their id" "24" "$REFUSED$OTHER"
assert_eq "B: none reached the replica" 0 "$REACHED"
assert_eq "B: forks 0 (no booking made)" "$DONE0" "$(completed)"
assert_eq "B: refusals counted" 24 "$(gstat "$G1" .mrtr_guard.refused)"

# The digest is over the string's value: the same state with its first
# character written as a JSON escape is the same state.
mk '{"rounds":3}' "${STATES[2]}" "$(answer confirm)"
RAW=$B
BODY_ESC=$(printf '%s' "$RAW" | sed 's/"requestState":"r/"requestState":"\\u0072/')
assert_ne "B: the escaped body differs in its bytes" "$RAW" "$BODY_ESC"
send "$G_URL" "$BODY_ESC"
assert_eq "B: an escaped spelling of a used state is refused too" "409 -31023" "$CODE $ECODE"

# Requests without a requestState are not recorded.
H0=$(gstat "$G1" .mrtr_guard.held)
for i in 1 2 3; do mk '{"rounds":3}'; send "$G_URL" "$B"; done
assert_eq "B: first calls are answered" input_required "$RT"
assert_eq "B: ... and hold no digest" "$H0" "$(gstat "$G1" .mrtr_guard.held)"
post "$G_URL" '{"jsonrpc":"2.0","method":"notifications/x","params":{"requestState":"n1"}}'
post "$G_URL" '{"jsonrpc":"2.0","method":"notifications/x","params":{"requestState":"n1"}}'
assert_eq "B: a notification is not checked" "$H0" "$(gstat "$G1" .mrtr_guard.held)"

# A batch carrying a requestState is refused, not passed unchecked.
mk '{"rounds":3}' "fresh-state" '{}'
post "$G_URL" "[$B]"
assert_code "B: a batch with a requestState" 400
assert_jq "B: ... -32600 naming the batch" '.error.code == -32600 and (.error.message | test("batch"))'

scrape() { curl -sS --max-time "$CURL_MAX" -o "$T_DIR/$2.prom" "http://$1/metrics"; }
scrape "$G1" b
assert_match "B: metrics: refused" '^mcpgw_mrtr_states_refused_total 25$' \
	"$(grep '^mcpgw_mrtr_states_refused_total' "$T_DIR/b.prom")"
assert_match "B: metrics: checked" '^mcpgw_mrtr_states_checked_total 28$' \
	"$(grep '^mcpgw_mrtr_states_checked_total' "$T_DIR/b.prom")"
assert_match "B: metrics: held" '^mcpgw_mrtr_states_held 3$' \
	"$(grep '^mcpgw_mrtr_states_held' "$T_DIR/b.prom")"
if promtool check metrics <"$T_DIR/b.prom" >"$T_DIR/promtool.out" 2>&1; then
	ok "B: promtool accepts the page"
else
	fail "B: promtool: $(head -n 3 "$T_DIR/promtool.out")"
fi

# ================================================= C. no guard on the route
cat >"$T_DIR/c.yaml" <<YAML
listeners:
  - address: 127.0.0.1:0
upstreams:
  - name: be
    servers: [{url: "http://$BE"}]
routes:
  - match: {path: /mcp}
    upstream: be
YAML
start_serve -c "$T_DIR/c.yaml"
dialogue 2 "$G_URL"
assert_eq "C: a dialogue through the unguarded route completes" complete "$RT"
send "$G_URL" "$LAST_BODY"
assert_eq "C: a re-presentation passes (the fork, through the gateway)" complete "$RT"
assert_eq "C: ... and reached the replica twice" 2 "$(rec_sha "$BE" "$(sha_of "$LAST_BODY")")"

# ================================================= D. two gateways, Redis
start_redis
cat >"$T_DIR/d.yaml" <<YAML
listeners:
  - address: 127.0.0.1:0
workers: 2
upstreams:
  - name: be
    servers: [{url: "http://$BE"}]
routes:
  - match: {path: /mcp}
    upstream: be
    mrtr: {single_use: true, ttl: 5m, shared: redis}
mrtr_guard:
  redis: {url: "$REDIS_URL", timeout: 300ms}
YAML
start_serve -c "$T_DIR/d.yaml"
GA=$G_URL GA_ADDR=$G_ADDR
start_serve -c "$T_DIR/d.yaml"
GB=$G_URL GB_ADDR=$G_ADDR

dialogue 4 "$GA" "$GB"
assert_eq "D: a dialogue alternating over two gateways completes" complete "$RT"
DONE0=$(completed)
REFUSED=0 OTHER=""
for k in 0 1 2 3; do
	# state k was first presented at gateway (k+1) mod 2: re-present it
	# at the other one, and at the same one
	for url in "$GA" "$GB"; do
		mk '{"rounds":4}' "${STATES[$k]}" "$(answer confirm)"
		send "$url" "$B"
		if [ "$CODE $ECODE" = "409 -31023" ]; then REFUSED=$((REFUSED + 1)); else OTHER="$OTHER $CODE/$ECODE"; fi
	done
done
assert_eq "D: 8 re-presentations over both gateways refused" "8" "$REFUSED$OTHER"
assert_eq "D: forks 0" "$DONE0" "$(completed)"
RC_KEYS=$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" --scan --pattern 'mcpgw:mrtr:*' | wc -l)
assert_eq "D: four digests in Redis" 4 "$RC_KEYS"
KEY1=mcpgw:mrtr:$(sha_of "${STATES[0]}")
PTTL=$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" pttl "$KEY1")
if [ "$PTTL" -gt 0 ] && [ "$PTTL" -le 300000 ]; then
	ok "D: the first state's digest (SHA-256 of its value) has PTTL $PTTL within ttl"
else
	fail "D: PTTL of $KEY1 is '$PTTL'"
fi

# Redis down: refused 503, the state not recorded anywhere.
mk '{"rounds":4}'
	send "$GA" "$B"
mk '{"rounds":4}' "$RSTATE" "$(answer "$KEY")"
NEXT=$B
stop_pid "$REDIS_PID" TERM 10 >/dev/null
send "$GA" "$NEXT"
assert_eq "D: Redis down: 503 -31024 with the id" "503 -31024 $ID" "$CODE $ECODE $EID"
assert_eq "D: ... counted" 1 "$(gstat "$GA_ADDR" .mrtr_guard.store_errors)"
assert_eq "D: ... and the replica did not see it" 0 "$(rec_sha "$BE" "$(sha_of "$NEXT")")"
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --dir "$T_DIR" \
	--appendonly no --daemonize no >"$T_DIR/redis2.out" 2>&1 &
REDIS_PID=$!
track_pid "$REDIS_PID"
send_while_down "$GA" "$NEXT"
assert_eq "D: Redis back: the same state passes (it was released)" "200 input_required" "$CODE $RT"
# gateway B reconnects on its own schedule: until it has, it answers 503
# (nothing recorded); then the state A passed is refused
send_while_down "$GB" "$NEXT"
assert_eq "D: ... once" "409 -31023" "$CODE $ECODE"

# Redis stopped: the wait ends at redis.timeout with 503.  B has two
# workers, each with its own connection, and send_while_down saw only one
# of them back: a worker still reconnecting answers at once "Redis
# unavailable" (true, and not this step's case), so send again (at most
# 20 times, each on a new connection and so maybe another worker) until
# a worker with a live connection has waited.
mk '{"rounds":4}'
	send "$GA" "$B"
mk '{"rounds":4}' "$RSTATE" "$(answer "$KEY")"
NEXT=$B
kill -STOP "$REDIS_PID"
for _ in $(seq 1 20); do
	send "$GB" "$NEXT"
	case $(jq_get '.error.message // empty') in *"Redis unavailable") ;; *) break ;; esac
done
kill -CONT "$REDIS_PID"
assert_eq "D: Redis stopped: 503 -31024" "503 -31024" "$CODE $ECODE"
assert_jq "D: ... saying it did not answer in time" '.error.message | test("in time")'

# ================================================= E. configuration checks
# refuse WHAT YAML ERE: serve --check and check-config exit 2 with ERE.
refuse() {
	printf '%s\n' "listeners: [{address: 127.0.0.1:0}]" \
		"upstreams: [{name: be, servers: [{url: \"http://$BE\"}]}]" "$2" >"$T_DIR/e.yaml"
	local out rc
	out=$("$MCPGW" serve --check -c "$T_DIR/e.yaml" 2>&1); rc=$?
	assert_eq "E: $1: serve --check exits 2" 2 "$rc"
	assert_match "E: $1: the message" "$3" "$out"
	out=$("$MCPGW" check-config -c "$T_DIR/e.yaml" 2>&1); rc=$?
	assert_eq "E: $1: check-config exits 2" 2 "$rc"
}
refuse "single_use missing" 'routes: [{upstream: be, mrtr: {ttl: 1m}}]' 'routes\[0\]\.mrtr\.single_use'
refuse "ttl 0" 'routes: [{upstream: be, mrtr: {single_use: true, ttl: 0}}]' 'routes\[0\]\.mrtr\.ttl'
refuse "an unknown key" 'routes: [{upstream: be, mrtr: {single_use: true, once: 1}}]' 'once'
refuse "shared: redis without a Redis" 'routes: [{upstream: be, mrtr: {single_use: true, shared: redis}}]' \
	'routes\[0\]\.mrtr\.shared.*mrtr_guard\.redis\.url'
refuse "shared: bogus" 'routes: [{upstream: be, mrtr: {single_use: true, shared: disk}}]' 'routes\[0\]\.mrtr\.shared'
refuse "max_states too small" 'mrtr_guard: {max_states: 1}' 'mrtr_guard\.max_states'
refuse "a bad Redis URL" 'mrtr_guard: {redis: {url: "http://x"}}' 'mrtr_guard\.redis\.url'
printf '%s\n' "listeners: [{address: 127.0.0.1:0}]" \
	"upstreams: [{name: be, servers: [{url: \"http://$BE\"}]}]" \
	'routes: [{upstream: be, mrtr: {single_use: true, shared: redis}}]' \
	'rate_limits: {redis: {url: "redis://127.0.0.1:1"}}' >"$T_DIR/e2.yaml"
"$MCPGW" serve --check -c "$T_DIR/e2.yaml" >/dev/null 2>&1
assert_eq "E: shared: redis takes rate_limits.redis" 0 "$?"

finish
