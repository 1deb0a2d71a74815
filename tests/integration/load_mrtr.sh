#!/bin/bash
# load_mrtr.sh - MRTR dialogues (SEP-2322) as a call kind of "mcpgw load":
# the backend's book tool answers input_required rounds; the load client
# answers each input request from the scenario's answers and retries with
# the echoed requestState until the booking.  Each dialogue is one outcome
# with its rounds counted: against one replica N dialogues of R rounds
# give exactly N outcomes and N*R rounds; over two replicas with memory
# state (a new connection, and target, per request) dialogues lose their
# state - counted as state_lost, equal to the failed dialogues and to the
# replicas' own refusals; with sealed state (a shared key file) and with
# Redis-kept state nothing is lost.  Bad scenarios are refused.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq openssl redis-server redis-cli
require_mcpgw
watchdog 240

N=40
R=3
stat() { curl -sS --max-time 5 "http://$1/stats" | jq -r ".$2"; }

SC=$T_DIR/mrtr.yaml
cat >"$SC" <<EOF
name: mrtr
dialect: modern
calls:
  - tool: book
    flow: mrtr
    arguments: {rounds: $R}
    answers:
      date: {action: accept, content: {date: "2026-08-01"}}
      confirm: {action: accept, content: {confirm: true}}
      "*": {action: accept, content: {note: "window seat"}}
phases:
  - concurrency: 4
    requests: $N
EOF

# ------------------------------------------------------------ one replica
start_backend --era modern --request-state memory --id one
ONE=$B_ADDR
run_load one --scenario "$SC" --target "http://$ONE/mcp" --seed 3
assert_load_exit "one replica: the run succeeds" 0
assert_eq "one replica: one outcome per dialogue" $N "$(lj .total.requests)"
assert_eq "one replica: every dialogue ends in a booking" $N "$(lj .total.ok)"
assert_eq "one replica: dialogues counted" $N "$(lj .total.dialogues)"
assert_eq "one replica: exactly N*R rounds" $((N * R)) "$(lj .total.rounds)"
assert_eq "one replica: rounds per dialogue" $R "$(lj .total.rounds_per_dialogue)"
assert_eq "one replica: per-tool rounds" $((N * R)) "$(lj .total.per_tool.book.rounds)"
assert_eq "one replica: the plan in the report" "mrtr 20 true" \
	"$(lj '.config.calls[0] | "\(.flow) \(.max_rounds) \(.answers.confirm.content.confirm)"')"
assert_eq "one replica: the replica booked N times" $N "$(stat "$ONE" mrtr_completed)"
assert_eq "one replica: the replica issued N*R states" $((N * R)) "$(stat "$ONE" mrtr_states_issued)"
TEXT=$(timeout 60 "$MCPGW" load --scenario "$SC" --target "http://$ONE/mcp" 2>&1)
assert_match "one replica: the text report names the rounds" \
	"phase1: $N dialogues, $((N * R)) rounds \\(3.00 per dialogue\\)" "$TEXT"

# ------------------------------------------- two replicas, memory state
# pair NAME [backend options...]: two fresh replicas and one run with a
# new connection (and a target drawn) per request.
pair() {
	local name=$1
	shift
	start_backend --era modern --id "$name-1" "$@"
	P1=$B_ADDR
	start_backend --era modern --id "$name-2" "$@"
	P2=$B_ADDR
	run_load "$name" --scenario "$SC" --target "http://$P1/mcp" \
		--target "http://$P2/mcp" --connection new --seed 5 --max-state-losses 0
	assert_eq "$name: one outcome per dialogue" $N "$(lj .total.requests)"
	assert_eq "$name: dialogues counted" $N "$(lj .total.dialogues)"
}

pair memory --request-state memory
LOST=$(lj .total.failures.state_lost)
assert_load_exit "memory: the state-loss gate fails" 1
assert_cmp "memory: state losses counted" "$LOST" ">" 0
assert_eq "memory: gate value" "$LOST" "$(lj '.gates.checks[] | select(.name == "max_state_losses") | .value')"
assert_eq "memory: state losses are the failed dialogues" "$LOST" "$(lj '.total.requests - .total.ok')"
assert_eq "memory: no other failure kind" "$LOST" "$(lj '[.total.failures[]] | add')"
assert_eq "memory: the replicas refused exactly the lost states" "$LOST" \
	$(( $(stat "$P1" mrtr_refusals) + $(stat "$P2" mrtr_refusals) ))
assert_eq "memory: the replicas booked exactly the ok dialogues" "$(lj .total.ok)" \
	$(( $(stat "$P1" mrtr_completed) + $(stat "$P2" mrtr_completed) ))
assert_cmp "memory: rounds below N*R" "$(lj .total.rounds)" "<" $((N * R))
assert_match "memory: the failure says the state was lost" 'state lost after [0-9]+ rounds: -32040' \
	"$(lj '.first_failures[0].detail')"

# ------------------------------------------- two replicas, sealed state
KEYS=$T_DIR/keys
echo "k1 $(openssl rand -hex 32)" >"$KEYS"
pair sealed --request-state sealed --key-file "$KEYS"
assert_load_exit "sealed: the run (and its state-loss gate) succeeds" 0
assert_eq "sealed: no state lost" 0 "$(lj .total.failures.state_lost)"
assert_eq "sealed: every dialogue booked" $N "$(lj .total.ok)"
assert_eq "sealed: exactly N*R rounds" $((N * R)) "$(lj .total.rounds)"
A=$(stat "$P1" mrtr_completed) B=$(stat "$P2" mrtr_completed)
[ "$A" -gt 0 ] && [ "$B" -gt 0 ] && ok "sealed: both replicas finished dialogues ($A, $B)" ||
	fail "sealed: one replica did all the work ($A, $B)"

# ------------------------------------------- two replicas, state in Redis
start_redis
pair redis --request-state redis --redis "$REDIS_URL"
assert_load_exit "redis: the run (and its state-loss gate) succeeds" 0
assert_eq "redis: no state lost" 0 "$(lj .total.failures.state_lost)"
assert_eq "redis: every dialogue booked" $N "$(lj .total.ok)"
OPS=$(( $(stat "$P1" mrtr_store_ops) + $(stat "$P2" mrtr_store_ops) ))
assert_eq "redis: 2 store operations a round" $((2 * N * R)) "$OPS"
log "redis: $((OPS / N)) store round trips per $R-round dialogue"

# ------------------------------------------------------------ bad plans
sed '/answers:/,/"\*"/d' "$SC" >"$T_DIR/noanswers.yaml"
run_load noanswers --scenario "$T_DIR/noanswers.yaml" --target "http://$ONE/mcp"
assert_load_exit "mrtr without answers is a usage error" 2
assert_match "mrtr without answers: the message says so" 'needs answers' "$(cat "$LOAD_ERR")"
sed 's/action: accept, content: {note: "window seat"}/maybe/' "$SC" >"$T_DIR/badanswer.yaml"
run_load badanswer --scenario "$T_DIR/badanswer.yaml" --target "http://$ONE/mcp"
assert_load_exit "an answer that is not an object or accept/decline/cancel is refused" 2
assert_match "bad answer: file position and key" 'calls\[0\]\.answers' "$(cat "$LOAD_ERR")"
# no answer for the notes: the dialogue ends with the reason
sed '/"\*"/d' "$SC" >"$T_DIR/partial.yaml"
run_load partial --scenario "$T_DIR/partial.yaml" --target "http://$ONE/mcp"
assert_eq "a round without an answer ends the dialogue as a tool error" $N \
	"$(lj .total.failures.tool_error)"
assert_match "the reason names the input request" "no answer for input request 'note_1'" \
	"$(lj '.first_failures[0].detail')"
assert_eq "its rounds count the one followed" $N "$(lj .total.rounds)"
# decline: the server ends the dialogue (a tool error), after one round
sed 's/date: {action: accept, content: {date: "2026-08-01"}}/date: decline/' "$SC" >"$T_DIR/decline.yaml"
run_load decline --scenario "$T_DIR/decline.yaml" --target "http://$ONE/mcp"
assert_eq "decline: the booking is cancelled (tool error)" $N "$(lj .total.failures.tool_error)"
assert_match "decline: the server's reason" 'cancelled' "$(lj '.first_failures[0].detail')"

finish
