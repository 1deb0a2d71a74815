#!/usr/bin/env bash
# bench_soak.sh - `mcpgw-bench soak`: a short soak (40 s at 100 rps
# through a stateless gateway over 3 replicas, a replica SIGKILLed every
# 10 s, samples every 2 s) writes soak.json with one sample per period,
# the gateway's RSS and descriptors in each, the load client's counts
# rising; the 3 planned kills made and verified, the replicas in turn;
# no call lost (echo is safe to replay) and the losses recomputed from
# the run record; the growth figures recomputed from the samples; an
# exit status that follows the targets; and a soak.html that parses,
# with its chart and a marker per kill.  Then a stateful soak with an
# impossible target (--max-growth -1) must exit 1 naming the miss, and a
# sampling period longer than the run is a usage error.  No timing is
# asserted: the counts are what the schedule implies.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench_lib.sh"
require_bench
watchdog 300

# soak NAME OPTIONS...: runs the soak into $T_DIR/NAME; sets SOAK_STATUS,
# OUT and J (its soak.json).
soak() {
	local name=$1
	shift
	OUT=$T_DIR/$name
	J=$OUT/soak.json
	timeout 200 "$BENCH" soak --out "$OUT" --mcpgw "$MCPGW" "$@" \
		>"$T_DIR/soak-$name.out" 2>"$T_DIR/soak-$name.err"
	SOAK_STATUS=$?
	log "mcpgw-bench soak $*: exit $SOAK_STATUS"
}
sj() { jq -r "$1" "$J" 2>/dev/null; }

# ---- usage ----
"$BENCH" soak --duration 40s --sample-every 50s >/dev/null 2>"$T_DIR/usage.err"
assert_eq "a sampling period longer than the run is a usage error" 2 "$?"
assert_match "it says why" 'longer than the 40 s run' "$(cat "$T_DIR/usage.err")"
"$BENCH" soak --mode sessionful >/dev/null 2>&1
assert_eq "an unknown mode is a usage error" 2 "$?"

# ---- the short soak ----
soak a --duration 40s --rate 100 --kill-every 10s --sample-every 2s \
	--replicas 3
[ -r "$J" ] || die "no soak.json (exit $SOAK_STATUS): $(tail -5 "$T_DIR/soak-a.err")"
RUN=$OUT/$(sj .run)
[ -r "$RUN" ] || die "soak.json names no readable run record ($(sj .run))"
assert_eq "the run is valid" true "$(sj .valid)"
assert_eq "mode" stateless "$(sj .options.mode)"

# samples due at 0, 2, ..., 38 s: one per period before the end
assert_eq "samples: one every 2 s of the 40 s run" 20 "$(sj '.samples | length')"
assert_eq "samples in the run record too" 20 "$(jq '.samples | length' "$RUN")"
assert_eq "due times 0, 2, ..., 38" "$(seq -s, 0 2 38)" \
	"$(jq -r '[.samples[].due_s] | map(tostring) | join(",")' "$RUN")"
assert_eq "every sample read the gateway's RSS and fds" 0 \
	"$(sj '[.samples[] | select((.rss_kib // 0) <= 0 or (.fds // 0) <= 0)] | length')"
assert_eq "the load client's counts never go down" true \
	"$(sj '[.samples[] | .done // 0] as $d | [range(1; $d | length) | $d[.] >= $d[. - 1]] | all')"
assert_cmp "the last sample saw calls done" "$(sj '.samples[-1].done')" '>' 0
assert_cmp "...no more than the run made" "$(sj '.samples[-1].done')" '<=' "$(sj .load.requests)"
assert_eq "kills counted in the samples rise to 3" 3 "$(sj '.samples[-1].kills')"
# the load client's --progress-file: its last write is the final count
PROG=$OUT/$(jq -r .logs "$RUN")/load.progress
assert_eq "the progress file's last write says finished" true "$(jq -r .finished "$PROG")"
assert_eq "...with the report's count of calls" "$(jq .load.total.requests "$RUN")" \
	"$(jq .requests "$PROG")"
assert_eq "...and of failures" "$(jq .load.total.failures "$RUN" | jq -S -c .)" \
	"$(jq -S -c .failures "$PROG")"

# kills at 10, 20 and 30 s, the replicas in turn, each verified
assert_eq "kills planned" 3 "$(sj .kills.planned)"
assert_eq "kills done" 3 "$(sj .kills.done)"
assert_eq "kills verified" 3 "$(sj .kills.verified)"
assert_eq "the victims in turn" "replica 1,replica 2,replica 3" \
	"$(jq -r '[.kills[].victim] | join(",")' "$RUN")"
assert_eq "scheduled at 10, 20, 30 s" "10,20,30" \
	"$(jq -r '[.kills[].planned_at_s] | map(tostring) | join(",")' "$RUN")"
assert_eq "every kill reaped by SIGKILL, port refused, replaced" 3 \
	"$(jq '[.kills[] | select(.valid and .reaped_with_signal and .refused and .replacement.healthy)] | length' "$RUN")"
assert_eq "a replacement is the process of its slot at the end" 3 \
	"$(jq --argjson k "$(jq '[.kills[].replacement.pid]' "$RUN")" \
	   '[.processes[] | select(.role | startswith("replica")) | .pid] as $p | [$k[] | select(. as $x | $p | index($x))] | length' "$RUN")"

# losses: none with safe calls, and the same as the load client's report
assert_eq "no call lost (echo is replayed)" 0 "$(sj .losses.total)"
assert_eq "losses = the load report's failures but shed" \
	"$(jq '[.load.total.failures | to_entries[] | select(.key != "shed") | .value] | add' "$RUN")" \
	"$(sj .losses.total)"
assert_eq "by reason sums to the total" "$(sj .losses.total)" \
	"$(sj '[.losses.by_reason[]] | add // 0')"
assert_ne "the gateway's replay counter was read" null "$(sj .gateway.replayed)"

# growth recomputed from the samples: the start is the first due at or
# after the warm-up (default 10 % of 40 s), the end the last
WARM=$(sj .warmup_s)
assert_eq "warm-up 10 % of the run" 4 "$WARM"
for f in rss_kib fds; do
	want=$(jq -r --arg f "$f" --argjson w "$WARM" '
		[.samples[] | select(.due_s >= $w)] as $s
		| (($s[-1][$f] - $s[0][$f]) / $s[0][$f] * 100 * 1000 | round) / 1000' "$RUN")
	assert_eq "$f growth recomputed" "$want" "$(sj ".$f.growth_pct")"
	assert_eq "$f max recomputed" "$(jq --arg f "$f" '[.samples[][$f]] | max' "$RUN")" \
		"$(sj ".$f.max")"
done

# the exit status follows the targets (RSS growth under a sanitizer's
# quarantine is not this test's business, so the verdict is not assumed)
assert_eq "five targets" 5 "$(sj '.targets | length')"
P=$(sj .passed)
assert_eq "passed = every target passed" "$(sj '[.targets[].passed] | all')" "$P"
if [ "$P" = true ]; then want=0; else want=1; fi
assert_eq "exit status follows the verdict" "$want" "$SOAK_STATUS"
assert_match "summary on stdout" 'kills +3 planned, 3 done, 3 verified' \
	"$(cat "$T_DIR/soak-a.out")"

# the chart: present, parses, one SVG, a marker per kill
H=$OUT/soak.html
[ -s "$H" ] && ok "soak.html written" || fail "soak.html missing"
if command -v xmllint >/dev/null 2>&1; then
	# libxml2's HTML parser knows neither SVG nor HTML5 tag names;
	# anything else it reports (a tag left open, a stray end tag) is a
	# broken page
	errs=$(xmllint --html --noout "$H" 2>&1 | grep -E 'parser error' |
		grep -vE 'Tag (svg|g|path|line|rect|text|title|figure|figcaption|section) invalid' | head -3)
	assert_eq "soak.html parses" "" "$errs"
else
	log "xmllint not installed: soak.html parsed by tag counts only"
fi
assert_eq "one chart" 1 "$(grep -c '<svg' "$H")"
assert_eq "svg closed" 1 "$(grep -c '</svg>' "$H")"
assert_eq "a marker per kill" 3 "$(grep -o '<line class="kill"' "$H" | wc -l)"
# the panels through report.html's shared axes (html_out.c)
assert_eq "RSS and fds panels with their y axes" "rss,fds" \
	"$(grep -o 'class="yaxis" data-panel="[a-z]*"' "$H" |
		sed 's/.*="//; s/"$//' | paste -sd, -)"
assert_eq "one start-sample marker" 1 "$(grep -o '<line class="warmup"' "$H" | wc -l)"
assert_eq "html closed" 1 "$(grep -c '</html>' "$H")"
bench_sanitizers

# ---- an impossible target ----
soak b --mode stateful --duration 12s --rate 50 --kill-every 5s \
	--sample-every 2s --replicas 2 --max-growth -1
assert_eq "an impossible growth target exits 1" 1 "$SOAK_STATUS"
assert_eq "...the soak failed" false "$(sj .passed)"
assert_eq "...on the RSS growth target" false \
	"$(sj '.targets[] | select(.name | startswith("RSS")) | .passed')"
assert_eq "...with the limit it was given" -1 \
	"$(sj '.targets[] | select(.name | startswith("RSS")) | .limit')"
assert_eq "stateful: legacy sessions" legacy "$(sj .options.era)"
assert_eq "kills at 5 s only (10 s + 2 s readiness is past the end)" 1 "$(sj .kills.planned)"
assert_match "the summary names the miss" 'MISS +RSS growth' "$(cat "$T_DIR/soak-b.out")"
bench_sanitizers
finish
