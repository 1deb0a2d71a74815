#!/bin/bash
# load_tasks.sh - the task call kind of "mcpgw load" (doc/load.md,
# "Tasks"): against one backend the report's tasks and polls are exactly
# what the backend counted (both eras); behind "mcpgw serve" (stateless,
# round_robin) over two replicas, --tasks memory loses tasks (a tasks/get
# lands on the replica that does not hold the task: task_lost > 0, one per
# unknown-task answer) and --tasks redis loses none.
. "$(dirname "$0")/lib.sh"
require_tools curl jq redis-server redis-cli node
require_mcpgw
watchdog 200

# ---- one backend: exact counts -------------------------------------------
start_backend --era dual --id one --tasks memory --task-poll-interval 20ms
ONE=$B_ADDR
run_load modern --target "$B_URL" --dialect modern --tool task --arg ms=60 \
	--concurrency 2 --requests 20 --timeout 10s
assert_load_exit "modern task load" 0
assert_eq "modern: every task ok" 20 "$(lj .total.ok)"
assert_eq "modern: 20 tasks" 20 "$(lj .total.tasks)"
assert_eq "backend created 20 tasks" 20 "$(bstat "$ONE" .tasks_created)"
POLLS=$(lj .total.task_polls)
assert_eq "modern: polls counted = tasks/get the backend received" \
	"$(bstat "$ONE" '.requests_by_method["tasks/get"]')" "$POLLS"
assert_match "at least one poll per task" '^([2-9][0-9]|[1-9][0-9]{2,})$' "$POLLS"

run_load legacy --target "$B_URL" --dialect legacy --tool task --arg ms=60 \
	--concurrency 2 --requests 10 --timeout 10s
assert_load_exit "legacy task load" 0
assert_eq "legacy: every task ok" 10 "$(lj .total.ok)"
assert_eq "legacy: 10 tasks" 10 "$(lj .total.tasks)"
assert_eq "backend: 30 tasks in all" 30 "$(bstat "$ONE" .tasks_created)"
assert_eq "legacy: polls + modern polls = tasks/get received" \
	"$(bstat "$ONE" '.requests_by_method["tasks/get"]')" "$((POLLS + $(lj .total.task_polls)))"
assert_eq "legacy: one tasks/result per task" 10 "$(bstat "$ONE" '.requests_by_method["tasks/result"]')"

# ---- two replicas behind the gateway --------------------------------------
# gw_conf FILE ADDR1 ADDR2
gw_conf() {
	cat >"$1" <<EOF
mode: stateless
workers: 1
listeners:
  - address: 127.0.0.1:0
upstreams:
  - name: pool
    balancer: round_robin
    servers:
      - url: http://$2
      - url: http://$3
    health:
      interval: 1s
EOF
}

start_backend --era modern --id m1 --tasks memory --task-poll-interval 20ms
M1=$B_ADDR
start_backend --era modern --id m2 --tasks memory --task-poll-interval 20ms
M2=$B_ADDR
gw_conf "$T_DIR/mem.yaml" "$M1" "$M2"
start_serve -c "$T_DIR/mem.yaml"
run_load mem --target "$G_URL" --dialect modern --tool task --arg ms=60 \
	--concurrency 2 --requests 20 --timeout 10s
LOST=$(lj '.total.failures.task_lost')
UNK=$(( $(bstat "$M1" .tasks_unknown) + $(bstat "$M2" .tasks_unknown) ))
log "memory behind round_robin: $LOST task losses, $(lj .total.ok) ok"
assert_match "memory: task losses counted" '^[1-9][0-9]*$' "$LOST"
assert_eq "memory: one loss per unknown-task answer of the replicas" "$UNK" "$LOST"
assert_eq "memory: every call is ok or a task loss" 20 "$(( $(lj .total.ok) + LOST ))"
stop_serve

start_redis
start_backend --era modern --id r1 --tasks redis --redis "$REDIS_URL" --task-poll-interval 20ms
R1=$B_ADDR
start_backend --era modern --id r2 --tasks redis --redis "$REDIS_URL" --task-poll-interval 20ms
R2=$B_ADDR
poll_until 5 test "$(bstat "$R2" .tasks_redis_connected)" = true || fail "r2 not connected to redis"
gw_conf "$T_DIR/redis.yaml" "$R1" "$R2"
start_serve -c "$T_DIR/redis.yaml"
run_load redis --target "$G_URL" --dialect modern --tool task --arg ms=60 \
	--concurrency 2 --requests 20 --timeout 10s
assert_load_exit "redis task load" 0
assert_eq "redis: no task loss" 0 "$(lj '.total.failures.task_lost')"
assert_eq "redis: every task ok" 20 "$(lj .total.ok)"
assert_eq "redis: the polls went to both replicas" \
	"$(lj .total.task_polls)" \
	"$(( $(bstat "$R1" '.requests_by_method["tasks/get"] // 0') + $(bstat "$R2" '.requests_by_method["tasks/get"] // 0') ))"
assert_ne "redis: r1 answered polls" 0 "$(bstat "$R1" '.requests_by_method["tasks/get"] // 0')"
assert_ne "redis: r2 answered polls" 0 "$(bstat "$R2" '.requests_by_method["tasks/get"] // 0')"
stop_serve

finish
