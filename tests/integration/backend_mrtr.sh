#!/bin/bash
# backend_mrtr.sh - multi round-trip requests (SEP-2322) with the backend's
# book tool: input_required results with inputRequests and requestState,
# retried with inputResponses and the echoed requestState (a new JSON-RPC
# id each time), for --request-state memory (the state lives in one
# replica: the other answers -32040) and sealed (any replica with the key
# file continues; tampered, truncated, oversized, expired, other-request,
# other-principal and - with --single-use - replayed states each get their
# documented JSON-RPC error), and a sealed dialogue through "mcpgw serve"
# round-robin over two replicas.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node openssl
require_mcpgw
watchdog 240

. "$TOP_SRCDIR/tests/integration/mrtr_lib.sh"

# ---------------------------------------------------------------- memory
start_backend --era modern --request-state memory --id mem-A
MA=$B_URL
start_backend --era modern --request-state memory --id mem-B
MB=$B_URL

book "$MA" '{"rounds":3}'
assert_eq "memory: the first call asks for input" input_required "$RT"
assert_eq "memory: first a date" date "$KEY"
assert_jq "memory: the input request is a form elicitation" \
	'.result.inputRequests.date.method == "elicitation/create" and .result.inputRequests.date.params.mode == "form"'
assert_match "memory: requestState is rm1.<id>" '^rm1\.[0-9a-f]{32}$' "$RSTATE"
FIRST=$RSTATE
book "$MB" '{"rounds":3}' "$FIRST" "$(answer date)"
assert_eq "memory: the other replica does not know the state" -32040 "$ECODE"
assert_eq "memory: reason unknown" unknown "$EREASON"

dialogue 3 "$MA"
assert_eq "memory: a 3-round dialogue on one replica ends complete" complete "$RT"
assert_eq "memory: date, note, confirm" " date note_1 confirm" "$KEYS_SEEN"
assert_eq "memory: 4 calls" 4 "$CALLS"
assert_match "memory: a booking id" '^bk-[0-9a-f]{16}$' "$BOOKING"

# A memory state is consumed by its use: presenting it again is unknown;
# a refused presentation (other arguments) does not consume it.
book "$MA" '{"rounds":3}'
RS1=$RSTATE
book "$MA" '{"rounds":4}' "$RS1" "$(answer date)"
assert_eq "memory: state with other arguments refused" "-32044 other_request" "$ECODE $EREASON"
book "$MA" '{"rounds":3}' "$RS1" "$(answer date)"
assert_eq "memory: continued" input_required "$RT"
book "$MA" '{"rounds":3}' "$RS1" "$(answer date)"
assert_eq "memory: a used state is not accepted twice" -32040 "$ECODE"

# A missing answer asks the same question again (spec: not an error).
book "$MA" '{"rounds":2}'
book "$MA" '{"rounds":2}' "$RSTATE" '{}'
assert_eq "memory: missing inputResponses ask again" "input_required date" "$RT $KEY"

# ---------------------------------------------------------------- sealed
KEYS=$T_DIR/keys
echo "k1 $(openssl rand -hex 32)" >"$KEYS"
start_backend --era modern --request-state sealed --key-file "$KEYS" --id seal-A
SA=$B_URL
SA_ADDR=$B_ADDR
start_backend --era modern --request-state sealed --key-file "$KEYS" --id seal-B
SB=$B_URL

for n in 2 10; do
	dialogue $n "$SA" "$SB"
	assert_eq "sealed: a $n-round dialogue alternating replicas ends complete" complete "$RT"
	assert_eq "sealed: $n rounds take $((n + 1)) calls" $((n + 1)) "$CALLS"
	assert_match "sealed: booking id ($n rounds)" '^bk-[0-9a-f]{16}$' "$BOOKING"
done
log "sealed requestState bytes per round (10 rounds):$SIZES"
set -- $SIZES
[ "${10}" -gt "$1" ] && ok "sealed: the state grows with the answers ($1 -> ${10} bytes)" \
	|| fail "sealed: state did not grow:$SIZES"
assert_eq "sealed: the result reports the last state's size" "${10}" "$SBYTES"
req GET "http://$SA_ADDR/stats"
assert_match "sealed: /stats counts state bytes" '^[1-9][0-9]*$' "$(printf '%s' "$BODY" | jq -r .mrtr_state_bytes_total)"

book "$SA" '{"rounds":3}'
GOOD=$RSTATE
assert_match "sealed: rs1.PAYLOAD.MAC" '^rs1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$' "$GOOD"

# tampered: one payload byte changed (the MAC no longer matches)
P=${GOOD#rs1.}
c=${P:10:1}
[ "$c" = A ] && r=B || r=A
TAMP="rs1.${P:0:10}$r${P:11}"
book "$SB" '{"rounds":3}' "$TAMP" "$(answer date)"
assert_eq "sealed: tampered state refused" "-32041 invalid" "$ECODE $EREASON"
# truncated: the last 5 characters gone
book "$SB" '{"rounds":3}' "${GOOD:0:$((${#GOOD} - 5))}" "$(answer date)"
assert_eq "sealed: truncated state refused" "-32041 invalid" "$ECODE $EREASON"
# malformed
book "$SB" '{"rounds":3}' "not-a-state" "$(answer date)"
assert_eq "sealed: malformed state refused" "-32041 invalid" "$ECODE $EREASON"
# oversized: refused before verifying
BIG="rs1.$(head -c 9000 /dev/zero | tr '\0' A).AAAA"
book "$SB" '{"rounds":3}' "$BIG" "$(answer date)"
assert_eq "sealed: oversized state refused" "-32042 oversized" "$ECODE $EREASON"
# another request: same tool, other arguments; and another tool
book "$SB" '{"rounds":4}' "$GOOD" "$(answer date)"
assert_eq "sealed: state with other arguments refused" "-32044 other_request" "$ECODE $EREASON"
book "$SB" '{"rounds":3,"item":"other"}' "$GOOD" "$(answer date)"
assert_eq "sealed: state with an added argument refused" "-32044 other_request" "$ECODE $EREASON"
# a foreign key
echo "k1 $(openssl rand -hex 32)" >"$T_DIR/other-keys"
start_backend --era modern --request-state sealed --key-file "$T_DIR/other-keys" --id seal-C
book "$B_URL" '{"rounds":3}' "$GOOD" "$(answer date)"
assert_eq "sealed: a replica with another key refuses" "-32041 invalid" "$ECODE $EREASON"
# the genuine state still works after all that
book "$SB" '{"rounds":3}' "$GOOD" "$(answer date)"
assert_eq "sealed: the untouched state continues" "input_required note_1" "$RT $KEY"

# replay without --single-use: accepted (the fork the spec warns about)
book "$SA" '{"rounds":3}' "$GOOD" "$(answer date)"
assert_eq "sealed: without --single-use a re-presented state is accepted" input_required "$RT"

# expired: --request-state-ttl 1s; poll until refused (bounded)
start_backend --era modern --request-state sealed --key-file "$KEYS" --request-state-ttl 1s --id seal-ttl
TU=$B_URL
book "$TU" '{"rounds":2}'
OLD=$RSTATE
i=0
while [ $i -lt 40 ]; do
	book "$TU" '{"rounds":2}' "$OLD" '{}'
	[ "$RT" = error ] && break
	sleep 0.1
	i=$((i + 1))
done
assert_eq "sealed: expired state refused" "-32043 expired" "$ECODE $EREASON"

# principal binding
start_backend --era modern --request-state sealed --key-file "$KEYS" --request-state-bind-principal --id seal-P
PU=$B_URL
book "$PU" '{"rounds":2}' "" "" -- -H "Authorization: Bearer alice"
PRS=$RSTATE
book "$PU" '{"rounds":2}' "$PRS" "$(answer date)" -- -H "Authorization: Bearer mallory"
assert_eq "bind-principal: another Authorization refused" "-32045 other_principal" "$ECODE $EREASON"
book "$PU" '{"rounds":2}' "$PRS" "$(answer date)"
assert_eq "bind-principal: no Authorization refused" "-32045 other_principal" "$ECODE $EREASON"
book "$PU" '{"rounds":2}' "$PRS" "$(answer date)" -- -H "Authorization: Bearer alice"
assert_eq "bind-principal: the same Authorization continues" "input_required confirm" "$RT $KEY"

# single use
start_backend --era modern --request-state sealed --key-file "$KEYS" --single-use --id seal-S
SU=$B_URL
book "$SU" '{"rounds":2}'
SRS=$RSTATE
book "$SU" '{"rounds":2}' "$SRS" "$(answer date)"
assert_eq "single-use: first presentation continues" input_required "$RT"
book "$SU" '{"rounds":2}' "$SRS" "$(answer date)"
assert_eq "single-use: second presentation refused" "-32046 replayed" "$ECODE $EREASON"
dialogue 3 "$SU"
assert_eq "single-use: a normal dialogue still completes" complete "$RT"

# bad input: rounds out of range, requestState not a string
book "$SA" '{"rounds":11}'
assert_eq "rounds 11 is a tool error" true "$ISERR"
ID=$((ID + 1))
modern "$SA" $ID tools/call '{"name":"book","arguments":{"rounds":2},"requestState":5}'
assert_jq "requestState not a string: invalid params" '.error.code == -32602'

# ---------------------------------------------------------------- via serve
SA_UP=${SA%/mcp}
SB_UP=${SB%/mcp}
stat_of() { req GET "$1/stats"; printf '%s' "$BODY" | jq -r ".$2"; }
A0=$(stat_of "$SA_UP" mrtr_states_issued)
B0=$(stat_of "$SB_UP" mrtr_states_issued)
start_serve --upstream "$SA_UP" --upstream "$SB_UP"
dialogue 4 "$G_URL"
assert_eq "serve: a sealed 4-round dialogue survives round robin" complete "$RT"
assert_code "serve: HTTP 200" 200
A1=$(stat_of "$SA_UP" mrtr_states_issued)
B1=$(stat_of "$SB_UP" mrtr_states_issued)
[ $((A1 - A0)) -ge 1 ] && [ $((B1 - B0)) -ge 1 ] &&
	ok "serve: both replicas issued states of the dialogue ($((A1 - A0)) and $((B1 - B0)))" ||
	fail "serve: the dialogue did not cross replicas (A +$((A1 - A0)), B +$((B1 - B0)))"

finish
