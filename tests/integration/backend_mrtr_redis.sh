#!/bin/bash
# backend_mrtr_redis.sh - the book tool (SEP-2322 multi round-trip
# requests) with --request-state redis: the dialogue's state is a key in a
# shared redis-server and the client holds "rr1." + an opaque id, so a
# dialogue whose rounds alternate between two replicas completes; /stats
# counts the Redis operations (one write and one read a round); unknown,
# tampered, malformed, expired, other-request and (with --single-use,
# across replicas) replayed states are refused with their documented
# codes; a state presented with other arguments is not consumed; and a
# killed Redis gives the JSON-RPC error -32047 at once, not a hang.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node openssl redis-server redis-cli
require_mcpgw
watchdog 180
. "$TOP_SRCDIR/tests/integration/mrtr_lib.sh"

stat_of() { req GET "http://$1/stats"; printf '%s' "$BODY" | jq -r ".$2"; }

start_redis
start_backend --era modern --request-state redis --redis "$REDIS_URL" --id rr-A
RA=$B_URL RA_ADDR=$B_ADDR
start_backend --era modern --request-state redis --redis "$REDIS_URL" --id rr-B
RB=$B_URL RB_ADDR=$B_ADDR

assert_eq "stats: request_state redis" redis "$(stat_of "$RA_ADDR" request_state)"
# the connection comes up asynchronously: wait for it (bounded)
i=0
while [ "$(stat_of "$RA_ADDR" mrtr_redis_connected)" != true ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
assert_eq "stats: connected to redis" true "$(stat_of "$RA_ADDR" mrtr_redis_connected)"

# ---------------------------------------------------------------- dialogue
book "$RA" '{"rounds":3}'
assert_eq "the first call asks for input" "input_required date" "$RT $KEY"
assert_match "requestState is rr1.<id>" '^rr1\.[0-9a-f]{32}$' "$RSTATE"
KEYNAME="mcpgw:rs:${RSTATE#rr1.}"
TTL=$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ttl "$KEYNAME")
[ "$TTL" -gt 0 ] 2>/dev/null && [ "$TTL" -le 660 ] &&
	ok "the state is a Redis key with an expiry ($TTL s)" ||
	fail "the state key $KEYNAME has ttl '$TTL'"

A0=$(stat_of "$RA_ADDR" mrtr_store_ops)
B0=$(stat_of "$RB_ADDR" mrtr_store_ops)
dialogue 4 "$RA" "$RB"
assert_eq "a 4-round dialogue alternating two replicas ends complete" complete "$RT"
assert_eq "4 rounds take 5 calls" 5 "$CALLS"
assert_match "a booking id" '^bk-[0-9a-f]{16}$' "$BOOKING"
assert_eq "date, notes, confirm" " date note_1 note_2 confirm" "$KEYS_SEEN"
A1=$(stat_of "$RA_ADDR" mrtr_store_ops)
B1=$(stat_of "$RB_ADDR" mrtr_store_ops)
assert_eq "mrtr_store_ops: 2 per round (write + read), 8 for 4 rounds" 8 \
	$((A1 - A0 + B1 - B0))
[ $((A1 - A0)) -gt 0 ] && [ $((B1 - B0)) -gt 0 ] &&
	ok "both replicas worked on the dialogue" ||
	fail "the dialogue did not cross replicas (A +$((A1 - A0)), B +$((B1 - B0)))"

# ---------------------------------------------------------------- refusals
book "$RA" '{"rounds":3}'
GOOD=$RSTATE
book "$RB" '{"rounds":3}' "rr1.$(openssl rand -hex 16)" "$(answer date)"
assert_eq "unknown state refused" "-32040 unknown" "$ECODE $EREASON"
# tampered: one hex digit changed - a well-formed reference naming no state
c=${GOOD:10:1}
[ "$c" = a ] && r=b || r=a
book "$RB" '{"rounds":3}' "${GOOD:0:10}$r${GOOD:11}" "$(answer date)"
assert_eq "tampered state refused" "-32040 unknown" "$ECODE $EREASON"
book "$RB" '{"rounds":3}' "${GOOD:0:10}Z${GOOD:11}" "$(answer date)"
assert_eq "non-hex reference refused without a lookup" "-32041 malformed" "$ECODE $EREASON"
book "$RB" '{"rounds":3}' "${GOOD:0:30}" "$(answer date)"
assert_eq "truncated reference refused" "-32041 malformed" "$ECODE $EREASON"
book "$RB" '{"rounds":4}' "$GOOD" "$(answer date)"
assert_eq "state with other arguments refused" "-32044 other_request" "$ECODE $EREASON"
book "$RB" '{"rounds":3}' "$GOOD" "$(answer date)"
assert_eq "the untouched state continues on the other replica" "input_required note_1" "$RT $KEY"
# without --single-use a re-presented state continues (the fork the spec
# warns about), as with sealed states
book "$RA" '{"rounds":3}' "$GOOD" "$(answer date)"
assert_eq "without --single-use a re-presented state is accepted" input_required "$RT"
# a value under a state key that this design did not write
redis-cli -h 127.0.0.1 -p "$REDIS_PORT" set "mcpgw:rs:$(printf '%032d' 0)" garbage >/dev/null
book "$RA" '{"rounds":3}' "rr1.$(printf '%032d' 0)" "$(answer date)"
assert_eq "a foreign value is invalid" "-32041 invalid" "$ECODE $EREASON"

# ---------------------------------------------------------------- single use
start_backend --era modern --request-state redis --redis "$REDIS_URL" --single-use --id rr-S1
S1=$B_URL
start_backend --era modern --request-state redis --redis "$REDIS_URL" --single-use --id rr-S2
S2=$B_URL
book "$S1" '{"rounds":2}'
SRS=$RSTATE
book "$S2" '{"rounds":3}' "$SRS" "$(answer date)"
assert_eq "single-use: other arguments refused" "-32044 other_request" "$ECODE $EREASON"
book "$S2" '{"rounds":2}' "$SRS" "$(answer date)"
assert_eq "single-use: first presentation (on the other replica) continues" \
	"input_required confirm" "$RT $KEY"
book "$S1" '{"rounds":2}' "$SRS" "$(answer date)"
assert_eq "single-use: second presentation refused on the first replica" \
	"-32046 replayed" "$ECODE $EREASON"
book "$S2" '{"rounds":2}' "$SRS" "$(answer date)"
assert_eq "single-use: and on the second" "-32046 replayed" "$ECODE $EREASON"
dialogue 3 "$S1" "$S2"
assert_eq "single-use: a normal dialogue across replicas completes" complete "$RT"

# ---------------------------------------------------------------- expiry
start_backend --era modern --request-state redis --redis "$REDIS_URL" --request-state-ttl 1s --id rr-T
TU=$B_URL
book "$TU" '{"rounds":2}'
OLD=$RSTATE
i=0
while [ $i -lt 60 ]; do
	book "$TU" '{"rounds":2}' "$OLD" '{}'
	[ "$RT" = error ] && break
	sleep 0.1
	i=$((i + 1))
done
assert_eq "expired state refused" "-32043 expired" "$ECODE $EREASON"
TTL=$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ttl "mcpgw:rs:${OLD#rr1.}")
[ "$TTL" -le 6 ] 2>/dev/null && ok "the key expires soon after the state (ttl $TTL)" ||
	fail "the key of a 1 s state has ttl '$TTL'"

# ---------------------------------------------------------------- redis gone
book "$RA" '{"rounds":2}'
LIVE=$RSTATE
kill -KILL "$REDIS_PID"
wait "$REDIS_PID" 2>/dev/null
book "$RB" '{"rounds":2}' "$LIVE" "$(answer date)"
assert_eq "redis killed: a continuation gets the store error" \
	"-32047 store_unavailable" "$ECODE $EREASON"
assert_code "redis killed: HTTP 200 (a JSON-RPC error)" 200
book "$RA" '{"rounds":2}'
assert_eq "redis killed: a new dialogue gets the store error" \
	"-32047 store_unavailable" "$ECODE $EREASON"
F=$(stat_of "$RA_ADDR" mrtr_store_failures)
[ "$F" -ge 1 ] 2>/dev/null && ok "stats: mrtr_store_failures counted ($F)" ||
	fail "stats: mrtr_store_failures is '$F'"
req GET "http://$RA_ADDR/healthz"
assert_code "the replica still serves" 200

finish
