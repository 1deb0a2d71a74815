#!/bin/bash
# mrtr_interop.sh - the official TypeScript SDK 2.x client
# (@modelcontextprotocol/client, npm) in the 2026-07-28 flows that span
# several requests, against "mcpgw backend --era modern" directly and
# through "mcpgw serve" (stateless, round_robin, one worker so that
# consecutive requests alternate between two replicas):
#   - MRTR (SEP-2322): the SDK's own driver completes a 3-round `book`
#     dialogue, its elicitation/create handler answering each form and each
#     retry echoing requestState; with --request-state sealed and one key
#     file the dialogue survives rounds on different replicas, with
#     --request-state memory the client gets -32040.
#   - Tasks (SEP-2663): SDK 2.4.0 declares the extension but rejects the
#     resultType "task" answer of client.callTool (checked, as it is what a
#     consumer of the SDK gets); the task is then driven by hand with the
#     SDK's transport and client.request('tasks/get') over --tasks redis
#     (completes) and --tasks memory (the poll on the other replica is
#     "Task not found").
# The package lives in its own npm prefix ($TOP_BUILDDIR/tests/interop/
# .cache/mrtr); without it and without the npm registry the test skips.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq openssl redis-server redis-cli
require_mcpgw
watchdog 400

CLIENT_V=${MCPGW_SDK2_VERSION:-2.4.0}
CACHE=$TOP_BUILDDIR/tests/interop/.cache
PREFIX=$CACHE/mrtr
. "$TOP_SRCDIR/tests/interop/node.sh"
mkdir -p "$PREFIX" || die "cannot create $PREFIX"
interop_online_or_skip 20 "$PREFIX" "@modelcontextprotocol/client@$CLIENT_V"
interop_node
log "node: $NODE ($("$NODE" --version))"
interop_packages "$PREFIX" "@modelcontextprotocol/client@$CLIENT_V"
# ESM resolves packages from the program's directory.
cp "$TOP_SRCDIR/tests/interop/mrtr_client.mjs" "$PREFIX/" || die "cannot copy the client program"

client() { # NAME URL FLOW ARG: runs mrtr_client.mjs; sets RC and SUM
	local name=$1
	shift
	(cd "$PREFIX" && timeout 40 "$NODE" mrtr_client.mjs "$@") >"$T_DIR/$name.json" 2>"$T_DIR/$name.clienterr"
	RC=$?
	SUM=$(tail -n 1 "$T_DIR/$name.json")
	log "$name: exit $RC"
}
sum_is() { # WHAT FILTER
	if printf '%s' "$SUM" | jq -e "$2" >/dev/null 2>&1; then
		ok "$1"
	else
		fail "$1: jq '$2' does not hold on: $(printf '%s' "$SUM" | head -c 1500)"
	fi
}
stat_sum() { # FILTER ADDR...: the sum of a numeric /stats value over replicas
	local f=$1 a n s=0
	shift
	for a in "$@"; do
		n=$(bstat "$a" "$f // 0")
		s=$((s + ${n:-0}))
	done
	echo "$s"
}
# pair NAME OPTIONS...: two replicas NAME-a and NAME-b started with the
# same backend options (addresses in P1, P2) behind a stateless
# round-robin gateway of one worker.
pair() {
	local name=$1
	shift
	start_backend --era modern "$@" --id "$name-a"
	P1=$B_ADDR
	start_backend --era modern "$@" --id "$name-b"
	P2=$B_ADDR
	start_serve --mode stateless --balancer round_robin --workers 1 \
		--upstream "http://$P1" --upstream "http://$P2"
}

# The tools/call legs of the dialogue: each retry echoes the previous
# answer's requestState byte for byte, answers exactly the keys it asked,
# on a new JSON-RPC id, with Mcp-Name: book.
CALLS='[.wire[] | select(.rpc == "tools/call")]'
ECHOED="$CALLS as \$c | (\$c | length) == 4 and \$c[0].requestState == null and
	all(range(1; 4); \$c[.].requestState != null and \$c[.].requestState == \$c[. - 1].answerState and
		\$c[.].inputResponses == \$c[. - 1].inputRequests) and
	(\$c | map(.id) | unique | length) == 4 and all(\$c[]; .mcpName == \"book\" and .status == 200)"
BOOKED='.result.isError == false and (.result.text | test("^booked bk-[0-9a-f]{16} for 2026-08-01$")) and
	.result.structured.rounds == 3 and .result.structured.bookingId == (.result.text | split(" "))[1]'
ANSWERED='[.elicitations[] | select(.mode == "form") | .key] == ["date", "note_1", "confirm"]'

# --- MRTR: one backend -------------------------------------------------------------------
start_backend --era modern --id direct
D=$B_ADDR
client direct "$B_URL" book 3
assert_eq "direct: the SDK client completed the dialogue" 0 "$RC"
sum_is "direct: a booking after 3 rounds" "$BOOKED"
sum_is "direct: the elicitation handler answered date, note_1, confirm" "$ANSWERED"
sum_is "direct: every retry echoed requestState and answered the asked keys" "$ECHOED"
assert_eq "direct: the backend issued 3 requestStates" 3 "$(bstat "$D" .mrtr_states_issued)"
assert_eq "direct: the backend completed 1 dialogue" 1 "$(bstat "$D" .mrtr_completed)"
assert_eq "direct: 4 tools/call received" 4 "$(bstat "$D" '.requests_by_method["tools/call"]')"
assert_eq "direct: no refusal" 0 "$(bstat "$D" .mrtr_refusals)"

# --- MRTR through the gateway, sealed state, one key file --------------------------------
KEYS=$T_DIR/keys
echo "k1 $(openssl rand -hex 32)" >"$KEYS" || die "cannot write $KEYS"
pair sealed --request-state sealed --key-file "$KEYS"
SA=$P1 SB=$P2
client sealed "$G_URL" book 3
assert_eq "sealed via serve: the SDK client completed the dialogue" 0 "$RC"
sum_is "sealed via serve: a booking after 3 rounds" "$BOOKED"
sum_is "sealed via serve: the elicitation handler answered date, note_1, confirm" "$ANSWERED"
sum_is "sealed via serve: every retry echoed requestState and answered the asked keys" "$ECHOED"
sum_is "sealed via serve: the states were sealed ones" "$CALLS | map(.answerState | select(.)) | length == 3 and all(startswith(\"rs1.\"))"
CA=$(bstat "$SA" '.requests_by_method["tools/call"] // 0')
CB=$(bstat "$SB" '.requests_by_method["tools/call"] // 0')
IA=$(bstat "$SA" .mrtr_states_issued)
IB=$(bstat "$SB" .mrtr_states_issued)
log "sealed via serve: tools/call a $CA b $CB; states issued a $IA b $IB"
assert_eq "sealed via serve: 4 tools/call over both replicas" 4 "$((CA + CB))"
if [ "$CA" -ge 1 ] && [ "$CB" -ge 1 ] && [ "$IA" -ge 1 ] && [ "$IB" -ge 1 ]; then
	ok "sealed via serve: rounds landed on both replicas, each issuing states"
else
	fail "sealed via serve: expected both replicas in the dialogue (calls $CA/$CB, states $IA/$IB)"
fi
assert_eq "sealed via serve: 3 states issued in all" 3 "$((IA + IB))"
assert_eq "sealed via serve: 1 dialogue completed" 1 "$(stat_sum .mrtr_completed "$SA" "$SB")"
assert_eq "sealed via serve: no refusal" 0 "$(stat_sum .mrtr_refusals "$SA" "$SB")"
stop_serve

# --- MRTR through the gateway, memory state: the state is lost ---------------------------
pair memory --request-state memory
MA=$P1 MB=$P2
client memory "$G_URL" book 3
assert_ne "memory via serve: the SDK client did not complete" 0 "$RC"
log "memory via serve: the SDK surfaced $(printf '%s' "$SUM" | jq -c '.error')"
sum_is "memory via serve: the SDK surfaced the backend's -32040 (reason unknown) as a ProtocolError" \
	'.error.class == "ProtocolError" and .error.code == -32040 and .error.data.reason == "unknown"'
sum_is "memory via serve: only the first form was answered" '[.elicitations[].key] == ["date"]'
sum_is "memory via serve: the retry carried the first state and got -32040" \
	"$CALLS | length == 2 and .[1].requestState == .[0].answerState and .[1].errorCode == -32040"
assert_eq "memory via serve: one refusal" 1 "$(stat_sum .mrtr_refusals "$MA" "$MB")"
assert_eq "memory via serve: nothing completed" 0 "$(stat_sum .mrtr_completed "$MA" "$MB")"
stop_serve

# --- Tasks through the gateway, --tasks redis ---------------------------------------------
start_redis
pair tasks --tasks redis --redis "$REDIS_URL" --task-poll-interval 50ms
TA=$P1 TB=$P2
for a in "$TA" "$TB"; do
	poll_until 5 test "$(bstat "$a" .tasks_redis_connected)" = true || die "replica $a did not connect to redis"
done
client task_redis "$G_URL" task 400
# What the SDK itself does: the extension is declared on the wire, the
# server makes slow_job a task, and callTool rejects the answer.
sum_is "tasks: the SDK client declared the extension on its tools/call" \
	'[.wire[] | select(.rpc == "tools/call" and .id != "manual-1")][0] | .extensions == ["io.modelcontextprotocol/tasks"] and .resultType == "task"'
sum_is "tasks: SDK $CLIENT_V callTool rejects resultType task (UNSUPPORTED_RESULT_TYPE)" \
	'.native.error.code == "UNSUPPORTED_RESULT_TYPE" and .native.error.data.resultType == "task"'
assert_eq "tasks redis via serve: the hand-driven task completed" 0 "$RC"
sum_is "tasks redis via serve: created through the SDK transport" \
	'.manual.created.resultType == "task" and .manual.created.status == "working" and (.manual.created.taskId | type) == "string"'
sum_is "tasks redis via serve: tasks/get returned the result inline" \
	'.manual.status == "completed" and .manual.text == "slow_job done after 400 ms" and .manual.polls >= 2'
sum_is "tasks redis via serve: every tasks/get had Mcp-Name = taskId" \
	'.manual.created.taskId as $t | [.wire[] | select(.rpc == "tasks/get")] | length >= 2 and all(.mcpName == $t and .status == 200 and .resultType == "complete")'
GA=$(bstat "$TA" '.requests_by_method["tasks/get"] // 0')
GB=$(bstat "$TB" '.requests_by_method["tasks/get"] // 0')
log "tasks redis via serve: tasks/get a $GA b $GB"
if [ "$GA" -ge 1 ] && [ "$GB" -ge 1 ]; then
	ok "tasks redis via serve: polls answered by both replicas"
else
	fail "tasks redis via serve: expected polls on both replicas (a $GA, b $GB)"
fi
assert_eq "tasks redis via serve: no task unknown" 0 "$(stat_sum .tasks_unknown "$TA" "$TB")"
# The callTool task is created although the SDK drops its taskId.
assert_eq "tasks redis via serve: 2 tasks created (the callTool one orphaned)" 2 "$(stat_sum .tasks_created "$TA" "$TB")"
stop_serve

# --- Tasks through the gateway, --tasks memory: the task is lost ---------------------------
pair tmem --tasks memory --task-poll-interval 50ms
TMA=$P1 TMB=$P2
client task_memory "$G_URL" task 400
assert_ne "tasks memory via serve: the hand-driven task did not complete" 0 "$RC"
log "tasks memory via serve: the SDK surfaced $(printf '%s' "$SUM" | jq -c '.manual.error')"
sum_is "tasks memory via serve: the SDK surfaced 'Task not found' (-32602) as a ProtocolError" \
	'.manual.created.resultType == "task" and .manual.error.class == "ProtocolError" and .manual.error.code == -32602 and (.manual.error.message | test("Task not found"))'
assert_eq "tasks memory via serve: one unknown-task answer" 1 "$(stat_sum .tasks_unknown "$TMA" "$TMB")"
stop_serve

finish
