# bench_lib.sh - helpers of the mcpgw-bench integration tests (sourced
# after lib.sh): run the bench into the test's directory, recompute every
# aggregated number of report.json from the run files it lists, and read
# cells.

BENCH=${MCPGW_BENCH:-$TOP_BUILDDIR/mcpgw-bench}

require_bench() {
	require_mcpgw
	[ -x "$BENCH" ] || die "mcpgw-bench not found at '$BENCH'"
	require_tools jq
}

# bench_run NAME [mcpgw-bench options...]: runs the bench (600 s at most)
# with --out $T_DIR/NAME; sets BENCH_STATUS and OUT.  Its stdout and
# stderr go to $T_DIR/bench-NAME.out / .err (scanned for sanitizer
# reports at cleanup); the processes' logs stay under $OUT/logs and are
# scanned by bench_sanitizers.
bench_run() {
	local name=$1
	shift
	OUT=$T_DIR/$name
	timeout 600 "$BENCH" --out "$OUT" "$@" >"$T_DIR/bench-$name.out" \
		2>"$T_DIR/bench-$name.err"
	BENCH_STATUS=$?
	log "mcpgw-bench $*: exit $BENCH_STATUS"
}

# A sanitizer report in any log of the bench's processes fails the test.
bench_sanitizers() {
	local hits
	hits=$(grep -rlE 'ERROR: (Address|Leak|Thread|Memory)Sanitizer|runtime error:' \
		"$OUT/logs" 2>/dev/null | head -n 5)
	if [ -n "$hits" ]; then
		fail "sanitizer report in the bench's process logs: $hits"
		local f
		for f in $hits; do
			printf '%s\n' "----- $f"
			head -n 40 "$f"
		done
	else
		ok "no sanitizer report in the bench's process logs"
	fi
}

# rj FILTER: a value of $OUT/report.json (raw).
rj() { jq -r "$1" "$OUT/report.json" 2>/dev/null; }

# cell SCENE NAME FILTER: FILTER applied to one cell of report.json.
cellv() {
	jq -r --arg s "$1" --arg c "$2" \
		".scenes[] | select(.scene == \$s) | .cells[] | select(.cell == \$c) | $3" \
		"$OUT/report.json" 2>/dev/null
}

# The aggregation rules, recomputed with jq from the run files each cell
# lists (doc/bench.md): n and valid counted, achieved rps median and
# range, p50/p99 medians, loss sums, other failures, re-pins, saturation.
# Prints one line per discrepancy ("" when all agree).
AGG_JQ='
def median: sort | if length == 0 then null
	elif length % 2 == 1 then .[(length - 1) / 2]
	else (.[length / 2 - 1] + .[length / 2]) / 2 end;
def r3: if . == null then null else (. * 1000 | round) / 1000 end;
def close($a; $b): ($a == null and $b == null) or
	($a != null and $b != null and ((($a - $b) | fabs) < 0.0011));
def others: ["http_4xx","http_5xx","rpc_error","tool_error","timeout",
	"connect_error","shed"];
.cell as $c | $runs as $all |
[ .runs[] as $p | $all[$p] ] as $rs |
[ $rs[] | select(.valid == true) ] as $v |
[ $v[] | .load.total ] as $t |
($t | map(.achieved_rps)) as $a |
( [ if (.n != ($rs | length)) then "n \(.n) != \($rs | length) runs" else empty end,
    if (.valid != ($v | length)) then "valid \(.valid) != \($v | length)" else empty end,
    if ($v | length) == 0 then
      (if .achieved_rps.median != null or .session_losses != null
       then "no valid run but numbers" else empty end)
    else
      (if close(.achieved_rps.median; $a | median | r3) | not
       then "median \(.achieved_rps.median) != \($a | median)" else empty end),
      (if close(.achieved_rps.min; $a | min) | not
       then "min \(.achieved_rps.min) != \($a | min)" else empty end),
      (if close(.achieved_rps.max; $a | max) | not
       then "max \(.achieved_rps.max) != \($a | max)" else empty end),
      (if close(.p50_ms; [$t[] | .latency_ms.p50 | numbers] | median | r3) | not
       then "p50 \(.p50_ms)" else empty end),
      (if close(.p99_ms; [$t[] | .latency_ms.p99 | numbers] | median | r3) | not
       then "p99 \(.p99_ms)" else empty end),
      (if .session_losses != ([$t[] | .failures.session_lost] | add)
       then "session_losses \(.session_losses)" else empty end),
      (if .handle_losses != ([$t[] | .failures.handle_lost] | add)
       then "handle_losses \(.handle_losses)" else empty end),
      (if .state_losses != ([$t[] | .failures.state_lost // 0] | add)
       then "state_losses \(.state_losses)" else empty end),
      (if .task_losses != ([$t[] | .failures.task_lost // 0] | add)
       then "task_losses \(.task_losses)" else empty end),
      (if has("dialogues") and (.dialogues != ([$t[] | .dialogues] | add)
           or .forked != ([$t[] | .forked] | add)
           or .refused != ([$t[] | .refused] | add)
           or .tasks != ([$t[] | .tasks] | add))
       then "flow counts \(.dialogues)/\(.forked)/\(.refused)/\(.tasks)" else empty end),
      (if .deleted_served != ([$t[] | .failures.deleted_served // 0] | add)
       then "deleted_served \(.deleted_served)" else empty end),
      (if .other_failures != ([$t[] | .failures as $f | others | map($f[.]) | add] | add)
       then "other_failures \(.other_failures)" else empty end),
      (if .repins != ([$v[] | .repins | numbers] | if length == 0 then null else add end)
       then "repins \(.repins)" else empty end),
      (if .saturated != (($a | median) < 0.95 * .offered_rps)
       then "saturated \(.saturated)" else empty end)
    end ] | map("\($c): " + .) | .[])'

# check_aggregation: every cell of $OUT/report.json against its runs.
check_aggregation() {
	local idx=$T_DIR/runs-index.json errs ncells
	# every run file listed, keyed by its path, with what the rules read
	if ! (cd "$OUT" && jq -n '[inputs | {key: input_filename, value: {valid,
		repins, load: {total: (.load.total | {achieved_rps, latency_ms,
		failures, dialogues, forked, refused, tasks})}}}] | from_entries' \
		$(jq -r '.scenes[].cells[].runs[]' report.json)) >"$idx" 2>"$T_DIR/jq.err"; then
		fail "the run files listed in report.json cannot be read: $(head -c 300 "$T_DIR/jq.err")"
		return
	fi
	errs=$(jq -r --slurpfile rf "$idx" "\$rf[0] as \$runs | .scenes[].cells[] | $AGG_JQ" \
		"$OUT/report.json" 2>&1)
	ncells=$(rj '[.scenes[].cells[]] | length')
	if [ -z "$errs" ]; then
		ok "aggregation of $ncells cells recomputed from their run files"
	else
		fail "aggregation differs from the run files: $errs"
	fi
}

# check_outputs SCENE NCELLS: the files of a run and their shape.
check_outputs() {
	local scene=$1 ncells=$2 f
	for f in report.json report.md report.csv report.html versions.txt; do
		[ -s "$OUT/$f" ] && ok "$f written" || fail "$f missing or empty"
	done
	assert_eq "scene in report.json" "$scene" "$(rj '.scenes[0].scene')"
	assert_eq "cells of $scene" "$ncells" "$(rj '.scenes[0].cells | length')"
	assert_match "machine stamped" '.+' "$(rj '.machine.kernel // empty')"
	assert_match "mcpgw version stamped" '^mcpgw [0-9]' "$(rj '.versions.mcpgw')"
	assert_match "versions.txt names mcpgw" '^mcpgw: mcpgw [0-9]' \
		"$(grep '^mcpgw:' "$OUT/versions.txt")"
	if grep -qxF '| cell | users | n | achieved rps, median (range) | p50 ms | p99 ms | session losses | handle losses | deleted served | other failures | re-pins |' "$OUT/report.md"; then
		ok "report.md has the table header"
	else
		fail "report.md lacks the exact table header"
	fi
	assert_eq "report.md rows" "$ncells" \
		"$(sed -n '/^| cell | users |/,/^$/p' "$OUT/report.md" | grep -v '^| cell |' | grep -c '^| [a-z]')"
	assert_eq "report.csv lines" "$((ncells + 1))" "$(wc -l <"$OUT/report.csv" | tr -d ' ')"
	assert_eq "every cell keeps the shape's names" "0" "$(rj '[.scenes[].cells[] |
		select((has("cell") and has("path") and has("era") and has("replicas")
		and has("connection") and has("state") and has("offered_rps") and has("n")
		and has("valid") and has("achieved_rps") and has("p50_ms") and has("p99_ms")
		and has("session_losses") and has("handle_losses") and has("other_failures")
		and has("repins") and has("saturated") and has("runs")) | not)] | length')"
}

# check_kills: every run of every cell with a victim has one kill record
# that landed (reaped with the signal, port refused, replacement healthy).
check_kills() {
	local bad
	bad=$(cd "$OUT" && jq -r 'select(.conditions.victim != null) |
		select((.kills | length) != 1 or (.kills[0].valid != true) or
		       (.kills[0].reaped_with_signal != true) or (.kills[0].refused != true) or
		       (.kills[0].replacement.healthy != true) or (.valid != true)) |
		"\(.cell) rep \(.rep): \(.invalid_reason // .kills[0].reason // "bad kill record")"' \
		$(jq -r '.scenes[].cells[].runs[]' report.json) 2>&1)
	if [ -z "$bad" ]; then
		ok "every kill landed and was verified"
	else
		fail "kills not verified: $bad"
	fi
}
