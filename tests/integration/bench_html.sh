#!/bin/bash
# bench_html.sh - the bench's HTML report renders in a real browser.  A
# synthetic report.json and raw run files (made here with jq, so the test
# does not depend on a bench run) are rendered with `mcpgw-bench html DIR`;
# headless Chromium then (1) parses it: --dump-dom must show one <svg> per
# chart, the bars and kill markers inside them, and a cell named with a
# <script> tag as text, never as an element; (2) lays it out: a copy of the
# report with a checking script appended reports what the browser drew -
# the first chart is the losses chart, its bars' totals and widths match
# the per-kind sums jq computes from report.json, the per-second charts of
# a scene end their y axes at the same value, the machine table is below
# the results; (3) takes a screenshot, which must not be blank.
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
	# a gateway cell at another rate, losing 1 request in one run: drawn
	# on its own scale its axes would end at 150 and 0.4, not 150 and 40
	run "kill-gw-$i.json" 30 120 20.1 $([ "$i" = 1 ] && echo 21 || echo -1) 1 true
done

# cell NAME MEDIAN MIN MAX OFFERED RUNS_JSON FAILURES_JSON: a cell row of
# report.json (aggregate.c's shape); FAILURES is its per-kind sums, null
# for a cell without a valid repetition (whose numbers are all null).
cell() {
	jq -n --arg name "$1" --argjson med "$2" --argjson min "$3" \
		--argjson max "$4" --argjson off "$5" --argjson runs "$6" \
		--argjson fails "$7" '
	def kinds: {session_lost: 0, handle_lost: 0, http_4xx: 0, http_5xx: 0,
		rpc_error: 0, tool_error: 0, timeout: 0, connect_error: 0, shed: 0};
	($fails | if . == null then null else kinds + . end) as $f |
	{cell: $name, path: "direct", era: "legacy", replicas: 2,
	 connection: "new", state: null, offered_rps: $off, n: ($runs | length),
	 valid: (if $f == null then 0 else ($runs | length) end),
	 achieved_rps: {median: $med, min: $min, max: $max},
	 p50_ms: 1.5, p99_ms: 4.0, failures: $f,
	 session_losses: $f.session_lost, handle_losses: $f.handle_lost,
	 other_failures: (if $f == null then null else
		([$f | to_entries[] | select(.key != "session_lost" and
			.key != "handle_lost") | .value] | add) end),
	 repins: 0, saturated: (if $f == null then null else ($med < 0.95 * $off) end),
	 runs: $runs}'
}
jq -n --slurpfile a <(cell "legacy direct 1 replica" 199.8 199.1 200 200 '["runs/scale-1.json"]' '{}') \
	--slurpfile b <(cell "legacy gateway 1 replica" 180 170 190 200 '["runs/scale-2.json"]' '{"timeout": 3}') \
	--slurpfile c <(cell "$EVIL" 99 98.2 99.6 100 '["runs/kill-direct-1.json","runs/kill-direct-2.json","runs/kill-direct-3.json"]' \
		'{"session_lost": 102, "connect_error": 9}') \
	--slurpfile d <(cell "legacy gateway 2 replicas" 100 99.9 100 100 '["runs/kill-gw-1.json","runs/kill-gw-2.json","runs/kill-gw-3.json"]' \
		'{"http_5xx": 1}') \
	--slurpfile e <(cell "missing runs" 100 100 100 100 '["runs/nope.json"]' '{"session_lost": 5, "handle_lost": 4}') \
	--slurpfile f <(cell "modern direct hmac" 100 100 100 100 '[]' '{"handle_lost": 7, "rpc_error": 2}') \
	--slurpfile g <(cell "no valid run" null null null 100 '[]' null) '
{machine: {cpu: "synthetic <cpu>", cores: 4, kernel: "test"},
 versions: {mcpgw: "test", "redis-server": "none"},
 started_at: "2026-01-01T00:00:00Z",
 scenes: [{scene: "scale-out", cells: ($a + $b)},
	{scene: "pod-kill", cells: ($c + $d + $e)},
	{scene: "handles", cells: ($f + $g)},
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
assert_eq "one <svg> per chart (losses, 3 bar charts, 2 kill charts)" 6 "$(n '<svg')"
assert_eq "one losses chart" 1 "$(n '<svg class="losses"')"
assert_eq "bar charts" 3 "$(n '<svg class="bars"')"
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

# ---- what the browser laid out ----
# check.js runs at the end of a copy of the report and prints its findings
# as one line of JSON in <pre id="check"> (every character that the DOM
# dump would escape written as \uXXXX, so jq reads it back unchanged).
cat >"$T_DIR/check.js" <<'JS'
(function () {
	var all = function (sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); };
	var top = function (el) { return el.getBoundingClientRect().top + window.scrollY; };
	var bottom = function (el) { return el.getBoundingClientRect().bottom + window.scrollY; };
	var svgs = all("svg"), scenes = all("section.scene"), machine = document.getElementById("machine");
	var out = {
		first_svg: svgs.length ? svgs[0].getAttribute("class") : null,
		highest_svg: svgs.slice().sort(function (a, b) { return top(a) - top(b); })
			.map(function (s) { return s.getAttribute("class"); })[0] || null,
		losses: all("svg.losses g.cell").map(function (g) {
			var t = g.querySelector("text.total"), n = Number(t ? t.textContent : NaN);
			return { scene: g.getAttribute("data-scene"), cell: g.getAttribute("data-cell"),
				shown: isNaN(n) ? null : n,
				segs: all("rect.seg", g).map(function (r) {
					return { kind: r.getAttribute("data-kind"), count: Number(r.getAttribute("data-count")),
						w: r.getBoundingClientRect().width };
				}) };
		}),
		axis_ends: all("svg.losses g.scene").map(function (g) {
			var t = all("text.xtick", g);
			return t.length ? Number(t[t.length - 1].textContent) : null;
		}),
		legend: all("svg.losses g.key").map(function (k) { return k.getAttribute("data-kind"); }),
		table_totals: all("table.losses tr").slice(1).map(function (tr) {
			var c = tr.lastElementChild.textContent, n = Number(c);
			return isNaN(n) ? null : n;
		}),
		ymax: scenes.map(function (sec) {
			return all("svg.timeline", sec).map(function (s) {
				return ["ok", "failed"].map(function (p) {
					var t = s.querySelector('g.yaxis[data-panel="' + p + '"] text.ymax');
					return t ? Number(t.textContent) : null;
				});
			});
		}),
		machine_top: machine ? top(machine) : null,
		results_bottom: scenes.length ? bottom(scenes[scenes.length - 1]) : null,
		losses_bottom: document.querySelector("table.losses") ? bottom(document.querySelector("table.losses")) : null,
		first_scene_top: scenes.length ? top(scenes[0]) : null
	};
	var pre = document.createElement("pre");
	pre.id = "check";
	pre.textContent = JSON.stringify(out).replace(/[^\x20-\x7e]|[<>&]/g, function (c) {
		return "\\u" + ("000" + c.charCodeAt(0).toString(16)).slice(-4);
	});
	document.body.appendChild(pre);
})();
JS
{ sed '/<\/body>/,$d' "$D/report.html"; printf '<script>\n'; cat "$T_DIR/check.js"
  printf '</script>\n</body>\n</html>\n'; } >"$D/checked.html"
chrome --dump-dom --window-size=1200,2000 "file://$D/checked.html" >"$T_DIR/checked.dom"
sed -n 's:.*<pre id="check">\(.*\)</pre>.*:\1:p' "$T_DIR/checked.dom" >"$T_DIR/check.json"
jq -e . "$T_DIR/check.json" >/dev/null 2>&1 || die "the checking script printed no JSON: $(head -c 300 "$T_DIR/checked.dom")"
C=$T_DIR/check.json
q() { jq -c "$@" "$C"; }

assert_eq "the first chart in the page is the losses chart" '"losses"' "$(q .first_svg)"
assert_eq "the losses chart is also the highest one drawn" '"losses"' "$(q .highest_svg)"
# the totals as jq sums them from report.json: every per-kind count, null
# for a cell without a valid repetition
jq -c '[.scenes[] | .scene as $s | .cells[] | {scene: $s, cell: .cell,
	total: (if .failures == null then null else ([.failures[]] | add) end)}]' \
	"$D/report.json" >"$T_DIR/expected.json"
assert_eq "one bar row per cell, the right totals, in order" "$(cat "$T_DIR/expected.json")" \
	"$(q '[.losses[] | {scene, cell, total: .shown}]')"
assert_eq "each bar's segments add up to its total" \
	"$(jq -c '[.[] | .total]' "$T_DIR/expected.json")" \
	"$(q '[.losses[] | if .shown == null then null else ([.segs[].count] | add // 0) end]')"
assert_eq "the table under the chart has the same totals" \
	"$(jq -c '[.[] | .total]' "$T_DIR/expected.json")" "$(q .table_totals)"
assert_eq "segments by kind for the <script> cell" '[["session_lost",102],["connect_error",9]]' \
	"$(q '[.losses[] | select(.cell | startswith("legacy direct <script>")) | .segs[] | [.kind, .count]]')"
assert_eq "the legend: session and state losses always, other kinds that occurred" \
	'["session_lost","handle_lost","connect_error","timeout","http_5xx","rpc_error"]' "$(q .legend)"
# drawn widths proportional to the counts: px per request the same for
# every segment of a scene (within 1 %, and more than a hairline); each
# scene has its own axis (scale-out to 5, pod-kill to 150, handles to 10),
# so the pod-kill segments are drawn narrower per request than the others
ratios=$(q '[.losses | group_by(.scene)[] | {(.[0].scene): ([.[].segs[] | .w / .count] | [min, max])}] | add')
jq -e '[.[] | select(.[0] > 0.5 and .[1] / .[0] < 1.01)] | length == 3' <<<"$ratios" >/dev/null &&
	ok "segment widths are proportional to their counts within each scene (px/request $ratios)" ||
	fail "segment widths are not proportional to their counts: px/request $ratios"
jq -e '.["pod-kill"][0] * 10 < .["scale-out"][0] and .handles[0] * 1.5 < .["scale-out"][0]' <<<"$ratios" >/dev/null &&
	ok "each scene's bars on its own scale" || fail "the scenes' bars share a scale: $ratios"
assert_eq "each scene's axis ends at its largest total, rounded up" '[5,150,10]' "$(q .axis_ends)"
assert_eq "per-second charts: two in pod-kill, none elsewhere" '[0,2,0,0]' "$(q '[.ymax[] | length]')"
assert_eq "the per-second charts of pod-kill share their y axes" '[[150,40],[150,40]]' "$(q '.ymax[1]')"
jq -e '.losses_bottom < .first_scene_top and .results_bottom < .machine_top' "$C" >/dev/null &&
	ok "laid out as losses, then the scenes, then the machine table ($(q '[.losses_bottom, .first_scene_top, .results_bottom, .machine_top]'))" ||
	fail "wrong order of losses, scenes and machine table: $(q '[.losses_bottom, .first_scene_top, .results_bottom, .machine_top]')"

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
