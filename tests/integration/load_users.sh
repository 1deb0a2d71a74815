#!/bin/bash
# load_users.sh - "mcpgw load --users N" (issue 17): in the open loop, N
# virtual users exist from the start and take the ticks in turn, whatever
# --concurrency (which still bounds the calls in flight): against one
# legacy replica, exactly N sessions are initialized and each carries
# calls; without it a fast replica keeps one or two users busy.  A bad
# value is a usage error.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq
require_mcpgw
watchdog 60

start_backend --era legacy --id u1 --record 2000
A=$B_ADDR
run_load users --target "http://$A/mcp" --dialect legacy --tool echo --arg text=x \
	--rate 100 --duration 2s --concurrency 4 --users 12 --seed 5
assert_load_exit "--users 12" 0
assert_eq "--users: in the report's configuration" 12 "$(lj .config.users)"
assert_eq "--users 12: twelve sessions initialized" 12 "$(bstat "$A" .initialize_count)"
CALLERS=$(rec "$A" | jq '[.requests[] | select(.method == "POST") | [.headers[] | select(.[0] | ascii_downcase == "mcp-session-id") | .[1]][0] | select(. != null)] | unique | length')
assert_eq "--users 12: every session carried calls" 12 "$CALLERS"
assert_cmp "--users 12: calls answered" "$(lj .total.ok)" '>' 0

start_backend --era legacy --id u2
B=$B_ADDR
run_load plain --target "http://$B/mcp" --dialect legacy --tool echo --arg text=x \
	--rate 100 --duration 2s --concurrency 4 --seed 5
assert_load_exit "without --users" 0
assert_cmp "without --users: fewer sessions than 12" "$(bstat "$B" .initialize_count)" '<' 12

for bad in 0 -3 x 1000001; do
	run_load bad --target "http://$B/mcp" --users "$bad"
	assert_eq "--users $bad: usage error" 2 "$LOAD_STATUS"
	assert_match "--users $bad: says why" 'invalid --users' "$(cat "$LOAD_ERR")"
done
finish
