#!/usr/bin/env bash
# bench_cli.sh - mcpgw-bench's command line: --help, usage errors exit 2
# with a message and start nothing, an output directory holding a run is
# refused, and `mcpgw-bench html DIR` re-renders a run's report.html.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench_lib.sh"
require_bench
watchdog 200

out=$("$BENCH" --help 2>&1)
assert_eq "--help exits 0" 0 $?
for w in scale-out handles pod-kill gateway-kill redis-outage all --external --kill-signal; do
	assert_match "--help mentions $w" "$w" "$out"
done

usage() { # WHAT EXPECTED_MESSAGE_ERE ARGS...
	local what=$1 re=$2 st
	shift 2
	(cd "$T_DIR/cwd" && exec "$BENCH" "$@") >"$T_DIR/u.out" 2>"$T_DIR/u.err"
	st=$?
	assert_eq "$what: exit 2" 2 "$st"
	assert_match "$what: message" "$re" "$(cat "$T_DIR/u.err")"
}
mkdir -p "$T_DIR/cwd"
usage "no scene" 'no SCENE' --quick
usage "unknown scene" "unknown scene 'pods'" pods
usage "too few reps" 'at least 5' pod-kill --reps 3
usage "kill outside the run" 'outside' pod-kill --quick --kill-at 9
usage "bad signal" 'KILL or TERM' pod-kill --kill-signal HUP
usage "bad placeholder" 'unknown placeholder \{lisen\}' pod-kill --external 'x {lisen}'
usage "no cell matches" 'no cell matches' pod-kill --cell 'nothing-*'
usage "unknown option" "unknown option '--fast'" pod-kill --fast
usage "option without its value" "--duration needs a value" pod-kill --duration
usage "bad --reconnect-after" 'reconnect-after' pod-kill --reconnect-after -1
assert_eq "usage errors create nothing" "" "$(ls -A "$T_DIR/cwd")"

# one short cell, then the same directory again
bench_run one scale-out --quick --cooldown-max 0 --duration 2 \
	--cell 'modern-direct-1-replica-reuse' --reconnect-after 7 --spread-users
assert_eq "one cell: exit 0" 0 "$BENCH_STATUS"
assert_eq "--reconnect-after reaches the load client" 7 "$(cd "$OUT" && jq -r \
	'.load.config.reconnect_after' "$(rj '.scenes[0].cells[0].runs[0]')")"
assert_eq "--reconnect-after in the options" 7 "$(rj .options.reconnect_after)"
assert_eq "--spread-users reaches the load client" true "$(cd "$OUT" && jq -r \
	'.load.config.spread_users' "$(rj '.scenes[0].cells[0].runs[0]')")"
assert_eq "one cell, one run" 1 "$(rj '.scenes[0].cells[0].n')"
assert_eq "complete" true "$(rj .complete)"
"$BENCH" scale-out --quick --out "$OUT" >"$T_DIR/again.out" 2>"$T_DIR/again.err"
assert_eq "an output directory holding a run is refused" 2 $?
rm -f "$OUT/report.html"
"$BENCH" html "$OUT" >"$T_DIR/html.out" 2>"$T_DIR/html.err"
assert_eq "html DIR: exit 0" 0 $?
[ -s "$OUT/report.html" ] && ok "report.html re-rendered" || fail "report.html not re-rendered"
bench_sanitizers
finish
