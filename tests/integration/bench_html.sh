#!/bin/bash
# bench_html.sh - the bench's HTML report renders in a real browser.  A
# synthetic report.json and raw run files (made here with jq, so the test
# does not depend on a bench run) are rendered with `mcpgw-bench html DIR`;
# headless Chromium then (1) parses it: --dump-dom must show one <svg> per
# chart, the bars and kill markers inside them, and a cell named with a
# <script> tag as text, never as an element; (2) takes a screenshot, which
# must not be blank.
#
# "Not blank" without a PNG decoder (the stack has none, and no scripting
# language beyond bash, jq and perl is guaranteed): Chromium itself draws
# two reference pages of the same size - an empty white page and the same
# report with every <svg> cut out.  PNG deflates the pixels, so a page of
# one colour compresses to a few kilobytes while text and charts do not:
# the report's screenshot must be several times larger than the blank
# one, and must differ from the chartless one (the charts drew pixels
# inside the captured window).  Both comparisons are against images the
# same browser produced at the same size, so fonts, scaling and PNG
# encoder settings cancel out.
#
# Exits 77 only when Chromium is not installed or cannot start at all.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools jq md5sum
watchdog 300
BENCH=${MCPGW_BENCH:-$TOP_BUILDDIR/mcpgw-bench}
[ -x "$BENCH" ] || die "mcpgw-bench binary not found at '$BENCH'"

CHROME=""
for c in chromium chromium-browser; do
	command -v "$c" >/dev/null 2>&1 && { CHROME=$(command -v "$c"); break; }
done
[ -n "$CHROME" ] || skip "chromium is not installed (scripts/setup.sh installs it)"

# chrome ARGS... - one headless Chromium run with a private profile and
# home, no network services, bounded in time.  GNU timeout signals its
# whole process group, so a hung browser takes its helpers with it.
chrome() {
	local prof
	prof=$(mktemp -d "$T_DIR/profile.XXXXXX")
	HOME=$T_DIR XDG_CONFIG_HOME=$T_DIR/xdg XDG_CACHE_HOME=$T_DIR/xdg \
		timeout -k 5 90 "$CHROME" --headless --no-sandbox --disable-gpu \
		--disable-quic --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --disable-extensions \
		--hide-scrollbars --user-data-dir="$prof" "$@" 2>>"$T_DIR/chrome.err"
}

# Can Chromium run here at all?  (A skip, not a failure, when it cannot:
# e.g. a container without the shared memory it needs.)
printf '<!DOCTYPE html><html><body><p id="probe">probe</p></body></html>\n' >"$T_DIR/probe.html"
if ! chrome --dump-dom "file://$T_DIR/probe.html" 2>/dev/null | grep -q 'id="probe"'; then
	tail -20 "$T_DIR/chrome.err" >&2
	skip "chromium is installed but cannot run headless here"
fi
ok "chromium runs headless ($("$CHROME" --version 2>/dev/null | head -1))"

# ---- a synthetic bench output directory ----
D=$T_DIR/out
mkdir -p "$D/runs"
EVIL='legacy direct <script>document.title="pwned"</script> & co'

# run FILE SECS RATE KILL_T LOST_AT LOST VALID: a run record (the shape
# of doc/bench.md) whose load report has RATE ok per second, LOST failures
# (session losses) in second LOST_AT, and a kill record at KILL_T s (none
# when KILL_T is "none") whose replacement was healthy 2 s later.
run() {
	jq -n --argjson secs "$2" --argjson rate "$3" --arg kill "$4" \
		--argjson at "$5" --argjson lost "$6" --argjson valid "$7" '
	{scene: "pod-kill", valid: $valid,
	 load: {version: "test", dialect: "legacy",
		phases: [{name: "load", warmup: false, duration_s: $secs}],
		timeline: [range(0; $secs) as $t | {t: $t,
			ok: (if $t == $at then $rate - $lost else $rate end),
			failed: (if $t == $at then $lost else 0 end),
			session_lost: (if $t == $at then $lost else 0 end),
			handle_lost: 0, p50_ms: 1.5, p99_ms: 4.0}]},
	 kills: (if $kill == "none" then [] else
		[{victim: "replica 1", signal: "KILL", at_s: ($kill | tonumber),
		  valid: $valid, replacement: {healthy: true,
		  healthy_at_s: (($kill | tonumber) + 2)}}] end)}' >"$D/runs/$1"
}
run scale-1.json 10 200 none -1 0 true
run scale-2.json 10 180 none -1 0 true
for i in 1 2 3; do
	run "kill-direct-$i.json" 30 100 20.1 20 $((20 + i * 7)) true
	run "kill-gw-$i.json" 30 100 20.1 -1 0 true
done

# cell NAME MEDIAN MIN MAX OFFERED RUNS_JSON
cell() {
	jq -n --arg name "$1" --argjson med "$2" --argjson min "$3" \
		--argjson max "$4" --argjson off "$5" --argjson runs "$6" '
	{cell: $name, path: "direct", era: "legacy", replicas: 2,
	 connection: "new", state: null, offered_rps: $off, n: ($runs | length),
	 valid: ($runs | length),
	 achieved_rps: {median: $med, min: $min, max: $max},
	 p50_ms: 1.5, p99_ms: 4.0, session_losses: 12, handle_losses: 0,
	 other_failures: 0, repins: 0, saturated: ($med < 0.95 * $off),
	 runs: $runs}'
}
jq -n --slurpfile a <(cell "legacy direct 1 replica" 199.8 199.1 200 200 '["runs/scale-1.json"]') \
	--slurpfile b <(cell "legacy gateway 1 replica" 180 170 190 200 '["runs/scale-2.json"]') \
	--slurpfile c <(cell "$EVIL" 99 98.2 99.6 100 '["runs/kill-direct-1.json","runs/kill-direct-2.json","runs/kill-direct-3.json"]') \
	--slurpfile d <(cell "legacy gateway 2 replicas" 100 99.9 100 100 '["runs/kill-gw-1.json","runs/kill-gw-2.json","runs/kill-gw-3.json"]') \
	--slurpfile e <(cell "missing runs" 100 100 100 100 '["runs/nope.json"]') '
{machine: {cpu: "synthetic <cpu>", cores: 4, kernel: "test"},
 versions: {mcpgw: "test", "redis-server": "none"},
 scenes: [{scene: "scale-out", cells: ($a + $b)},
	{scene: "pod-kill", cells: ($c + $d + $e)},
	{scene: "redis-outage", cells: []}]}' >"$D/report.json" ||
	die "cannot write the synthetic report"

# ---- render ----
out=$("$BENCH" html "$D" 2>"$T_DIR/html.err")
assert_eq "mcpgw-bench html exits 0" 0 "$?"
assert_eq "it names the file it wrote" "$D/report.html" "$out"
[ -s "$D/report.html" ] || die "no report.html: $(cat "$T_DIR/html.err")"
"$BENCH" html "$T_DIR/nowhere" >/dev/null 2>&1
assert_eq "a directory without report.json: exit 1" 1 "$?"
"$BENCH" html >/dev/null 2>&1
assert_eq "no directory: exit 2 (usage)" 2 "$?"

# ---- the browser's DOM ----
chrome --dump-dom "file://$D/report.html" >"$T_DIR/dom.html"
[ -s "$T_DIR/dom.html" ] || die "chromium printed no DOM"
n() { grep -o "$1" "$T_DIR/dom.html" | wc -l; }
assert_eq "one <svg> per chart (2 bar charts, 2 kill charts)" 4 "$(n '<svg')"
assert_eq "bar charts" 2 "$(n '<svg class="bars"')"
assert_eq "kill charts" 2 "$(n '<svg class="timeline"')"
assert_eq "one kill marker per kill chart" 2 "$(n 'class="kill"')"
assert_eq "one replacement marker per kill chart" 2 "$(n 'class="ready"')"
[ "$(n '<rect')" -ge 5 ] && ok "bars drawn as <rect> in the DOM" || fail "bars missing: $(n '<rect') rects"
assert_eq "no <script> element reached the DOM" 0 "$(n '<script')"
assert_eq "the page title was not changed by a cell name" \
	"mcpgw-bench report" "$(sed -n 's:.*<title>\(mcpgw[^<]*\)</title>.*:\1:p' "$T_DIR/dom.html" | head -1)"
grep -q '&lt;script&gt;document.title=' "$T_DIR/dom.html" &&
	ok "the <script> cell name is text" || fail "the <script> cell name is not shown as text"
grep -q 'missing runs: 1 of 1 run file missing' "$T_DIR/dom.html" &&
	ok "a missing run file is noted" || fail "no note for the missing run file"

# ---- screenshots ----
W=1200 H=2000
shot() { # shot PNG HTML
	rm -f "$1"
	chrome --screenshot="$1" --window-size=$W,$H "file://$2" >/dev/null
	[ -s "$1" ] || die "chromium took no screenshot of $2"
}
png_dims() { # width x height from the IHDR chunk (bytes 16..23)
	od -An -tu1 -j16 -N8 "$1" | awk '{printf "%dx%d", $1*16777216+$2*65536+$3*256+$4, $5*16777216+$6*65536+$7*256+$8}'
}
printf '<!DOCTYPE html><html><head><style>body{background:#fff}</style></head><body></body></html>\n' >"$T_DIR/blank.html"
sed '/<svg/,/<\/svg>/d' "$D/report.html" >"$T_DIR/nocharts.html"
[ "$(grep -c '<svg' "$T_DIR/nocharts.html")" = 0 ] || die "could not cut the charts out"

shot "$T_DIR/report.png" "$D/report.html"
shot "$T_DIR/blank.png" "$T_DIR/blank.html"
shot "$T_DIR/nocharts.png" "$T_DIR/nocharts.html"
assert_eq "screenshot is a PNG" "89504e470d0a1a0a" "$(od -An -tx1 -N8 "$T_DIR/report.png" | tr -d ' \n')"
assert_eq "screenshot has the window's size" "${W}x${H}" "$(png_dims "$T_DIR/report.png")"
assert_eq "blank reference has the same size" "${W}x${H}" "$(png_dims "$T_DIR/blank.png")"
rs=$(stat -c %s "$T_DIR/report.png")
bs=$(stat -c %s "$T_DIR/blank.png")
log "screenshot $rs bytes; blank page $bs bytes"
[ "$rs" -gt $((bs * 4)) ] && ok "the report's screenshot is not blank ($rs vs $bs bytes)" ||
	fail "the report's screenshot looks blank ($rs vs $bs bytes for a blank page)"
[ "$(md5sum <"$T_DIR/report.png")" != "$(md5sum <"$T_DIR/nocharts.png")" ] &&
	ok "the charts change the rendered page" ||
	fail "the screenshot is the same with the charts cut out"
cp "$T_DIR/report.png" "${BENCH_HTML_KEEP:-/dev/null}" 2>/dev/null || true
finish
