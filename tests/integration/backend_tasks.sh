#!/bin/bash
# backend_tasks.sh - tasks in the reference backend (doc/backend.md,
# "Tasks"): slow_job run as a task in both eras, tasks/get until
# completed, the result, tasks/cancel, the unknown-task error, bad input;
# --tasks memory (another replica does not know the task) and --tasks
# redis (any replica answers, a task whose replica died fails at its
# deadline).
. "$(dirname "$0")/lib.sh"
require_tools curl jq redis-server redis-cli node
require_mcpgw
watchdog 150

# tbody, tm, tget: lib.sh ("MCP: tasks").
create() { task_create "$@"; }

done_on() { tget "$1" "$2"; [ "$ST" = completed ] || [ "$ST" = failed ] || [ "$ST" = cancelled ]; }

# ---- modern, memory -----------------------------------------------------
start_backend --era dual --id A --tasks memory --task-poll-interval 50ms
A=$B_ADDR
AU=$B_URL
start_backend --era modern --id B --tasks memory
BU=$B_URL

tm "$AU" 1 server/discover '{}'
assert_jq "discover advertises the tasks extension" \
	'.result.capabilities.extensions["io.modelcontextprotocol/tasks"] == {}'

create "$AU" 1500
assert_code "task-augmented slow_job" 200
assert_jq "CreateTaskResult: resultType task, working, ids and times" \
	'.result.resultType == "task" and .result.status == "working" and
	 (.result.taskId | test("^t_[0-9a-f]{32}$")) and .result.ttlMs == 300000 and
	 .result.pollIntervalMs == 50 and (.result.createdAt | test("Z$")) and
	 (.result | has("lastUpdatedAt"))'
tget "$AU" "$TID"
assert_jq "tasks/get while working: resultType complete, no result yet" \
	'.result.resultType == "complete" and .result.status == "working" and
	 (.result | has("result") | not)'
poll_until 10 done_on "$AU" "$TID" || fail "task $TID did not finish within 10 s"
assert_jq "tasks/get once completed inlines the tool result" \
	'.result.status == "completed" and
	 .result.result.content[0].text == "slow_job done after 1500 ms" and
	 .result.result.isError == false'
assert_eq "stats: tasks_created" 1 "$(bstat "$A" .tasks_created)"
assert_eq "stats: tasks_completed" 1 "$(bstat "$A" .tasks_completed)"
assert_eq "stats: tasks_held (memory keeps the record)" 1 "$(bstat "$A" .tasks_held)"

# memory: the other replica does not know A's task
tget "$BU" "$TID"
assert_code "tasks/get of A's task on B" 200
assert_jq "memory: B answers the unknown-task error" \
	'.error.code == -32602 and .error.message == "Failed to retrieve task: Task not found"'
assert_eq "stats: B counted the unknown task" 1 "$(bstat "$B_ADDR" .tasks_unknown)"

# cancel
create "$AU" 20000
CT=$TID
assert_eq "stats: a long job runs" 1 "$(bstat "$A" .tasks_running)"
tm "$AU" 3 tasks/cancel "{\"taskId\":\"$CT\"}"
assert_jq "tasks/cancel is an ack" '.result.resultType == "complete" and (.result | keys - ["_meta", "resultType"] == [])'
tget "$AU" "$CT"
assert_jq "the task reads cancelled" '.result.status == "cancelled"'
assert_eq "stats: tasks_cancelled" 1 "$(bstat "$A" .tasks_cancelled)"
assert_eq "stats: the cancelled job stopped" 0 "$(bstat "$A" .tasks_running)"
tm "$AU" 3 tasks/cancel "{\"taskId\":\"$CT\"}"
assert_jq "cancelling a terminal task is still an ack (modern)" '.result.resultType == "complete"'

tm "$AU" 4 tasks/update "{\"taskId\":\"$CT\",\"inputResponses\":{}}"
assert_jq "tasks/update of a known task: ack" '.result.resultType == "complete"'

# unknown and malformed
tget "$AU" t_00000000000000000000000000000000
assert_jq "unknown task: -32602" '.error.code == -32602'
tm "$AU" 5 tasks/cancel '{"taskId":"nope"}'
assert_jq "cancel of an unknown task: -32602" '.error.code == -32602'
tm "$AU" 6 tasks/result "{\"taskId\":\"$CT\"}"
assert_code "modern tasks/result" 404
assert_jq "modern tasks/result is Method not found" '.error.code == -32601'
tm "$AU" 7 tasks/get '{}'
assert_code "tasks/get without taskId" 400
assert_jq "missing taskId: -32602 naming it" '.error.code == -32602 and (.error.message | test("taskId"))'
tm "$AU" 7 tasks/get '{"taskId":42}' -H "Mcp-Name: 42"
assert_code "tasks/get with a numeric taskId" 400
assert_jq "numeric taskId: -32602" '.error.code == -32602'
post "$AU" "$(tbody 8 tasks/get "{\"taskId\":\"$CT\"}")" -H "MCP-Protocol-Version: 2026-07-28" -H "Mcp-Method: tasks/get"
assert_code "tasks/get without Mcp-Name" 400
assert_jq "missing Mcp-Name: -32020" '.error.code == -32020'
tm "$AU" 8 tasks/get "{\"taskId\":\"$CT\"}" -H "Mcp-Name: t_other"
assert_code "tasks/get with two Mcp-Name fields" 400
assert_jq "a second Mcp-Name: -32020" '.error.code == -32020'
post "$AU" "$(tbody 8 tasks/get "{\"taskId\":\"$CT\"}")" -H "MCP-Protocol-Version: 2026-07-28" -H "Mcp-Method: tasks/get" -H "Mcp-Name: t_other"
assert_jq "Mcp-Name not the taskId: -32020" '.error.code == -32020'
post "$AU" "$(tbody 8 tasks/get "{\"taskId\":\"$CT\"}" '{}')" -H "MCP-Protocol-Version: 2026-07-28" -H "Mcp-Method: tasks/get" -H "Mcp-Name: $CT"
assert_code "tasks/get without the extension declared" 400
assert_jq "undeclared extension: -32021 naming it" \
	'.error.code == -32021 and .error.data.requiredCapabilities.extensions["io.modelcontextprotocol/tasks"] == {}'
tm "$AU" 9 tasks/update "{\"taskId\":\"$CT\"}"
assert_code "tasks/update without inputResponses" 400
assert_jq "missing inputResponses: -32602" '.error.code == -32602'

# without the extension the server must not answer with a task
post "$AU" "$(tbody 10 tools/call '{"name":"slow_job","arguments":{"ms":10}}' '{}')" -H "MCP-Protocol-Version: 2026-07-28" -H "Mcp-Method: tools/call" -H "Mcp-Name: slow_job"
assert_jq "slow_job for a client without the extension: the plain result" \
	'.result.resultType == "complete" and .result.content[0].text == "slow_job done after 10 ms" and (.result | has("taskId") | not)'
tm "$AU" 11 tools/call '{"name":"slow_job","arguments":{"ms":"x"}}'
assert_jq "slow_job with a bad ms: tool error, no task" '.result.isError == true and (.result | has("taskId") | not)'
assert_eq "stats: no task for the bad calls" 2 "$(bstat "$A" .tasks_created)"

# ---- legacy (2025-11-25 experimental tasks) ------------------------------
legacy_init "$AU"
assert_jq "initialize declares tasks (cancel, tools/call) and no list" \
	'.result.capabilities.tasks.requests.tools.call == {} and .result.capabilities.tasks.cancel == {} and (.result.capabilities.tasks | has("list") | not)'
legacy "$AU" 2 tools/list '{}'
assert_jq "legacy tools/list: slow_job taskSupport optional" \
	'.result.tools[] | select(.name == "slow_job") | .execution.taskSupport == "optional"'
legacy "$AU" 3 tools/call '{"name":"slow_job","arguments":{"ms":300},"task":{"ttl":60000}}'
assert_jq "legacy CreateTaskResult: {task: ...} with ttl and pollInterval" \
	'.result.task.status == "working" and .result.task.ttl == 60000 and .result.task.pollInterval == 50 and (.result | has("resultType") | not)'
LT=$(jq_get .result.task.taskId)
legacy "$AU" 4 tasks/result "{\"taskId\":\"$LT\"}"
assert_jq "tasks/result blocks until completed, then the tool result with related-task" \
	".result.content[0].text == \"slow_job done after 300 ms\" and .result._meta[\"io.modelcontextprotocol/related-task\"].taskId == \"$LT\""
legacy "$AU" 5 tasks/get "{\"taskId\":\"$LT\"}"
assert_jq "legacy tasks/get: the Task itself" '.result.status == "completed" and .result.taskId != null and (.result | has("result") | not)'
legacy "$AU" 6 tasks/cancel "{\"taskId\":\"$LT\"}"
assert_jq "legacy cancel of a completed task: -32602 naming the status" \
	'.error.code == -32602 and (.error.message | test("completed"))'
legacy "$AU" 7 tools/call '{"name":"slow_job","arguments":{"ms":20000},"task":{}}'
LT2=$(jq_get .result.task.taskId)
legacy "$AU" 8 tasks/cancel "{\"taskId\":\"$LT2\"}"
assert_jq "legacy cancel returns the cancelled task" '.result.status == "cancelled" and .result.taskId != null'
legacy "$AU" 9 tasks/result "{\"taskId\":\"$LT2\"}"
assert_jq "tasks/result of a cancelled task: an error" '.error.code == -32602'
legacy "$AU" 10 tools/call '{"name":"echo","arguments":{"text":"x"},"task":{}}'
assert_jq "task on a tool without taskSupport: -32601" '.error.code == -32601'
legacy "$AU" 11 tools/call '{"name":"slow_job","arguments":{"ms":1},"task":{"ttl":"x"}}'
assert_jq "task with a bad ttl: -32602" '.error.code == -32602'
legacy "$AU" 12 tasks/get '{"taskId":true}'
assert_jq "legacy tasks/get with a boolean taskId: -32602" '.error.code == -32602'
legacy "$AU" 13 tasks/get '{"taskId":"t_none"}'
assert_jq "legacy unknown task: -32602" '.error.code == -32602 and (.error.message | test("not found"))'
legacy "$AU" 14 tasks/update "{\"taskId\":\"$LT\"}"
assert_jq "legacy tasks/update does not exist" '.error.code == -32601'
legacy_init "$AU" 2025-06-18
legacy "$AU" 15 tools/call '{"name":"slow_job","arguments":{"ms":1},"task":{}}'
assert_jq "2025-06-18 session: task ignored, the plain result" '.result.content[0].text == "slow_job done after 1 ms"'
legacy "$AU" 16 tasks/get "{\"taskId\":\"$LT\"}"
assert_jq "2025-06-18 session: no tasks methods" '.error.code == -32601'

# ---- redis: any replica answers -------------------------------------------
start_redis
start_backend --era modern --id C --tasks redis --redis "$REDIS_URL" --state redis
C=$B_ADDR
CU=$B_URL
CPID=$B_PID
start_backend --era modern --id D --tasks redis --redis "$REDIS_URL"
D=$B_ADDR
DU=$B_URL
assert_eq "C shares the --state redis connection" true "$(bstat "$C" .tasks_redis_shared)"
assert_eq "D has its own connection" false "$(bstat "$D" .tasks_redis_shared)"
poll_until 5 test "$(bstat "$D" .tasks_redis_connected)" = true || fail "D not connected to redis"

create "$CU" 300
RT=$TID
assert_ne "task created on C" "" "$RT"
tget "$DU" "$RT"
assert_jq "redis: D reports C's task" '.result.status == "working" or .result.status == "completed"'
poll_until 10 done_on "$DU" "$RT" || fail "task $RT not finished on D within 10 s"
assert_jq "redis: D returns C's result" \
	'.result.status == "completed" and .result.result.content[0].text == "slow_job done after 300 ms"'
assert_eq "stats: C completed it" 1 "$(bstat "$C" .tasks_completed)"

create "$CU" 20000
RT2=$TID
tm "$DU" 3 tasks/cancel "{\"taskId\":\"$RT2\"}"
assert_jq "redis: D cancels C's task" '.result.resultType == "complete"'
tget "$CU" "$RT2"
assert_jq "C sees it cancelled" '.result.status == "cancelled"'
tget "$DU" t_00000000000000000000000000000000
assert_jq "redis: unknown task on D: -32602" '.error.code == -32602'

# the creating replica dies mid-task: the task fails at its deadline
create "$CU" 500
RT3=$TID
kill_wait "$CPID" KILL 10 || fail "C did not die"
tget "$DU" "$RT3"
assert_jq "right after C died the task still reads working" '.result.status == "working"'
poll_until 15 done_on "$DU" "$RT3" || fail "task $RT3 of a dead replica still not terminal after 15 s"
assert_jq "a task whose replica died reads failed with a JSON-RPC error" \
	'.result.status == "failed" and .result.error.code == -32603 and (.result.statusMessage | test("deadline"))'

# bounded: --max-tasks
start_backend --era modern --id E --tasks memory --max-tasks 1
create "$B_URL" 20000
create "$B_URL" 20000
assert_jq "beyond --max-tasks: -32603" '.error.code == -32603 and (.error.message | test("too many tasks"))'
assert_eq "stats: tasks_refused" 1 "$(bstat "$B_ADDR" .tasks_refused)"

finish
