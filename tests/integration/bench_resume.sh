#!/usr/bin/env bash
# bench_resume.sh - `mcpgw-bench resume DIR`: a run interrupted after its
# first repetition keeps that repetition; the resume runs only the missing
# ones with the first sitting's options, leaves the finished run file
# untouched, lists both sittings and ends with a complete report whose
# aggregation holds.  A resume is refused when a component's build or
# the kind of machine (here its CPU count) differs from the one the run
# started with, and when the bench's own build differs unless
# --allow-harness-change says so; another machine of the kind (another
# kernel build, another CPU model) is accepted and each sitting's kernel,
# CPU model and bench build recorded.  A complete run has nothing to
# resume.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench_lib.sh"
require_bench
watchdog 400

# a string as an extended regular expression matching only itself
re_esc() { printf '%s' "$1" | sed 's/[][\.*^$()+?{}|]/\\&/g'; }

OUT=$T_DIR/rs
timeout 300 "$BENCH" demo --quick --reps 2 --cooldown-max 0 --out "$OUT" \
	>"$T_DIR/bench-first.out" 2>"$T_DIR/bench-first.err" &
BPID=$!
track_pid "$BPID"
first=
for _ in $(seq 1 600); do
	# a finished repetition: the bench writes NAME.json.tmp, then renames
	first=$(ls "$OUT/runs/demo/" 2>/dev/null | grep '\.json$' | head -n 1)
	[ -n "$first" ] && break
	kill -0 "$BPID" 2>/dev/null || break
	sleep 0.2
done
[ -n "$first" ] || die "no repetition finished before the bench ended"
kill -INT "$BPID"
wait_pid "$BPID" 60
assert_eq "interrupted run exits 1" 1 "$?"
assert_eq "interrupted report is not complete" false "$(rj .complete)"
done_before=$(ls "$OUT/runs/demo" | wc -l)
assert_match "1 to 3 of 4 repetitions kept" '^[123]$' "$done_before"
sum_before=$(sha256sum "$OUT/runs/demo/$first" | cut -d' ' -f1)
assert_eq "mcpgw's build stamped" "$(sha256sum "$MCPGW" | cut -d' ' -f1)" \
	"$(rj .versions.mcpgw_sha256)"
assert_eq "the bench's own build stamped" "$(sha256sum "$BENCH" | cut -d' ' -f1)" \
	"$(rj '.versions["mcpgw-bench_sha256"]')"

# a different build of a component: refused, nothing run
cp "$OUT/report.json" "$T_DIR/report.saved"
jq '.versions.mcpgw_sha256 = "0000"' "$T_DIR/report.saved" >"$OUT/report.json"
timeout 120 "$BENCH" resume "$OUT" >"$T_DIR/bench-bad.out" 2>"$T_DIR/bench-bad.err"
assert_eq "resume with another mcpgw build exits 1" 1 "$?"
assert_match "the refusal names the difference" 'mcpgw_sha256 was "0000"' \
	"$(cat "$T_DIR/bench-bad.err")"
assert_eq "nothing run by the refused resume" "$done_before" \
	"$(ls "$OUT/runs/demo" | wc -l)"

# another kind of machine (here: another CPU count): refused, nothing run
jq '.machine.cpus = 4096' "$T_DIR/report.saved" >"$OUT/report.json"
timeout 120 "$BENCH" resume "$OUT" >"$T_DIR/bench-cpu.out" 2>"$T_DIR/bench-cpu.err"
assert_eq "resume on another CPU count exits 1" 1 "$?"
assert_match "the refusal names the CPU count" 'machine.cpus was 4096' \
	"$(cat "$T_DIR/bench-cpu.err")"
assert_eq "nothing run by the CPU refusal" "$done_before" \
	"$(ls "$OUT/runs/demo" | wc -l)"

# the first sitting on another machine of the same kind (its kernel
# build and CPU model differ, as a new virtual machine's may) and with
# another build of the bench itself
this_kernel=$(jq -r .machine.kernel "$T_DIR/report.saved")
this_cpu=$(jq -r .machine.cpu "$T_DIR/report.saved")
this_bench=$(sha256sum "$BENCH" | cut -d' ' -f1)
jq '.machine.kernel = "Linux 0.0.1-elsewhere x86_64"
    | .machine.cpu = "Imaginary CPU 9000"
    | .versions["mcpgw-bench_sha256"] = "1111"
    | .sittings[0].kernel = "Linux 0.0.1-elsewhere x86_64"
    | .sittings[0].cpu = "Imaginary CPU 9000"
    | .sittings[0].harness_sha256 = "1111"' \
	"$T_DIR/report.saved" >"$OUT/report.json"
timeout 120 "$BENCH" resume "$OUT" >"$T_DIR/bench-harness.out" \
	2>"$T_DIR/bench-harness.err"
assert_eq "resume with another bench build exits 1" 1 "$?"
assert_match "the refusal names the bench's build" \
	'mcpgw-bench_sha256 was "1111"' "$(cat "$T_DIR/bench-harness.err")"
assert_eq "nothing run by the bench-build refusal" "$done_before" \
	"$(ls "$OUT/runs/demo" | wc -l)"
timeout 60 "$BENCH" resume "$OUT" --allow-other >/dev/null \
	2>"$T_DIR/bench-flag.err"
assert_eq "an unknown resume option is a usage error" 2 "$?"

timeout 300 "$BENCH" resume "$OUT" --allow-harness-change \
	>"$T_DIR/bench-resume.out" 2>"$T_DIR/bench-resume.err"
assert_eq "resume exits 0" 0 "$?"
assert_match "resume says what was done" \
	"resuming .*: $done_before of 4 repetitions already done" \
	"$(cat "$T_DIR/bench-resume.out")"
assert_eq "resumed report is complete" true "$(rj .complete)"
assert_eq "two sittings" "start resume" "$(rj '[.sittings[].command] | join(" ")')"
assert_match "resume says it runs on another kernel" \
	"this sitting runs on kernel $(re_esc "$this_kernel") \\(the run started with Linux 0.0.1-elsewhere" \
	"$(cat "$T_DIR/bench-resume.out")"
assert_match "resume says it runs on another CPU model" \
	"this sitting runs on CPU $(re_esc "$this_cpu") \\(the run started with Imaginary CPU 9000\\)" \
	"$(cat "$T_DIR/bench-resume.out")"
assert_match "resume says it runs another bench build" \
	"this sitting runs mcpgw-bench build $this_bench \\(the run started with 1111\\)" \
	"$(cat "$T_DIR/bench-resume.out")"
assert_eq "each sitting's kernel recorded" \
	"Linux 0.0.1-elsewhere x86_64|$this_kernel" \
	"$(rj '[.sittings[].kernel] | join("|")')"
assert_eq "each sitting's CPU model recorded" \
	"Imaginary CPU 9000|$this_cpu" "$(rj '[.sittings[].cpu] | join("|")')"
assert_eq "each sitting's bench build recorded" \
	"1111|$this_bench" "$(rj '[.sittings[].harness_sha256] | join("|")')"
assert_eq "the report's machine stays the first sitting's" \
	"Linux 0.0.1-elsewhere x86_64|Imaginary CPU 9000" \
	"$(rj '.machine.kernel + "|" + .machine.cpu')"
assert_eq "the report's versions stay the first sitting's" "1111" \
	"$(rj '.versions["mcpgw-bench_sha256"]')"
assert_match "report.md lists the sittings, their kernels and CPUs" \
	"Sittings: 2 \\(start .* on Linux 0.0.1-elsewhere x86_64, Imaginary CPU 9000; resume .* on $(re_esc "$this_kernel"), $(re_esc "$this_cpu")\\)" \
	"$(cat "$OUT/report.md")"
assert_match "report.html has the sittings table" \
	"<td>resume</td><td>[^<]*</td><td>$(re_esc "$this_kernel")</td><td>$(re_esc "$this_cpu")</td><td>$this_bench</td>" \
	"$(cat "$OUT/report.html")"
assert_eq "options of the first sitting" 2 "$(rj .options.reps)"
assert_eq "every cell has both repetitions" "2 2" \
	"$(rj '[.scenes[0].cells[].n] | map(tostring) | join(" ")')"
assert_eq "four run files" 4 "$(ls "$OUT/runs/demo" | wc -l)"
assert_eq "the first sitting's run file is untouched" "$sum_before" \
	"$(sha256sum "$OUT/runs/demo/$first" | cut -d' ' -f1)"
assert_eq "a run of the first sitting is listed" 1 \
	"$(rj "[.scenes[0].cells[].runs[] | select(. == \"runs/demo/$first\")] | length")"
check_aggregation
bench_sanitizers

timeout 60 "$BENCH" resume "$OUT" >"$T_DIR/bench-again.out" 2>"$T_DIR/bench-again.err"
assert_eq "resuming a complete run exits 0" 0 "$?"
assert_match "and says there is nothing to do" 'nothing to resume' \
	"$(cat "$T_DIR/bench-again.out")"
timeout 60 "$BENCH" resume "$T_DIR/nowhere" >/dev/null 2>"$T_DIR/bench-none.err"
assert_eq "resume of a missing run is a usage error" 2 "$?"
timeout 60 "$BENCH" demo --quick --out "$OUT" >/dev/null 2>"$T_DIR/bench-reuse.err"
assert_eq "a new run into a used directory is refused" 2 "$?"
assert_match "and points to resume" 'mcpgw-bench resume' "$(cat "$T_DIR/bench-reuse.err")"
finish
