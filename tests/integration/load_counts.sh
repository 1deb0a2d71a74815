#!/bin/bash
# load_counts.sh - "mcpgw load" against "mcpgw backend": a closed-loop run
# of N requests reports exactly N, every one successful, in each dialect
# (legacy, modern, auto) and whether the server answers with JSON or with
# SSE streams; over HTTP/1.1 keep-alive, a new connection per request,
# h2c, and TLS (verified against --ca-file, refused without it); the
# counter handle flow on one replica loses nothing; a stdio server (one
# process per virtual user) counts the same; a weighted call mix
# from a scenario file; a warmup phase stays out of the total; the JSON
# report and the CSV timeline have the documented shape.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq openssl node
require_mcpgw
watchdog 300

N=300

# exact WHAT [N [TL]]: the last report ran exactly N measured calls and
# all succeeded, the per-tool rows add up to the same and the timeline
# (warmup included) to TL (default N).
exact() {
	local n=${2:-$N} tl=${3:-${2:-$N}}
	assert_eq "$1: requests" "$n" "$(lj .total.requests)"
	assert_eq "$1: ok" "$n" "$(lj .total.ok)"
	assert_eq "$1: per-tool rows add up" "$n" "$(lj '[.total.per_tool[].requests] | add')"
	assert_eq "$1: timeline adds up" "$tl" "$(lj '[.timeline[].ok] | add')"
	assert_eq "$1: no failure of any kind" 0 "$(lj '[.total.failures[]] | add')"
}

start_backend --era dual --id json
JSON_URL=$B_URL
start_backend --era dual --sse always --id sse
SSE_URL=$B_URL

for answer in json sse; do
	url=$JSON_URL
	[ $answer = sse ] && url=$SSE_URL
	for d in legacy modern auto; do
		run_load "$d-$answer" --target "$url" --dialect "$d" --tool echo \
			--arg text=hello --concurrency 4 --requests $N
		assert_load_exit "$d/$answer" 0
		exact "$d/$answer"
		# a dual server: auto probes with a modern request first
		want=$d
		[ "$d" = auto ] && want=modern
		assert_eq "$d/$answer: era in the report" "$want" "$(lj .dialect)"
		assert_eq "$d/$answer: one replica, no re-initialization" 0 "$(lj .total.reinitializations)"
		assert_cmp "$d/$answer: response bytes counted" "$(lj .total.bytes)" ">" $((N * 20))
	done
done

# A new connection per request: a legacy session is still known (one
# replica), so nothing is lost.
for d in legacy modern; do
	run_load "new-$d" --target "$JSON_URL" --dialect $d --connection new \
		--tool add --arg a=2 --arg b=3 --concurrency 3 --requests $N
	assert_load_exit "new connections/$d" 0
	exact "new connections/$d"
	assert_eq "new connections/$d: no session loss" 0 "$(lj .total.failures.session_lost)"
done

# HTTP/2 with prior knowledge (h2c) on the plain listener.
for d in legacy modern; do
	run_load "h2c-$d" --target "$SSE_URL" --dialect $d --http2 --tool echo \
		--arg text=h2 --concurrency 8 --requests $N
	assert_load_exit "h2c/$d" 0
	exact "h2c/$d"
done

# TLS: verified against the CA file (HTTP/1.1 and h2 by ALPN); without it
# the self-signed certificate is refused and nothing succeeds.
gen_cert
start_backend --era dual --id tls --tls-cert "$CERT" --tls-key "$KEY"
TLS_URL=https://$B_ADDR/mcp
run_load tls-h1 --target "$TLS_URL" --ca-file "$CERT" --dialect legacy \
	--tool echo --arg text=tls --concurrency 2 --requests $N
assert_load_exit "tls/http1.1" 0
exact "tls/http1.1"
run_load tls-h2 --target "$TLS_URL" --ca-file "$CERT" --http2 --dialect modern \
	--tool echo --arg text=tls --concurrency 4 --requests $N
assert_load_exit "tls/h2" 0
exact "tls/h2"
run_load tls-untrusted --target "$TLS_URL" --dialect modern --tool echo \
	--arg text=tls --concurrency 1 --requests 5 --timeout 5s
assert_load_exit "tls without the CA" 0
assert_eq "tls without the CA: nothing succeeds" 0 "$(lj .total.ok)"
assert_eq "tls without the CA: connect errors" 5 "$(lj .total.failures.connect_error)"

# The counter handle flow on a single replica (modern memory handles,
# legacy counters in the session): every increment succeeds.
for d in modern legacy; do
	run_load "counter-$d" --target "$JSON_URL" --dialect $d --tool counter \
		--concurrency 4 --requests $N
	assert_load_exit "counter/$d" 0
	exact "counter/$d"
	assert_eq "counter/$d: per-tool row" "$N" "$(lj '.total.per_tool.counter.ok')"
done

# A weighted mix from a scenario file, a warmup phase, a CSV timeline.
cat >"$T_DIR/mix.yaml" <<YAML
targets: [$JSON_URL]
dialect: modern
seed: 3
calls:
  - tool: echo
    weight: 3
    arguments: {text: mixed}
  - tool: add
    arguments: {a: 1, b: 2}
phases:
  - {name: warm, warmup: true, concurrency: 2, requests: 50}
  - {name: measured, concurrency: 4, requests: $N}
YAML
run_load mix --scenario "$T_DIR/mix.yaml" --csv "$T_DIR/mix.csv"
assert_load_exit "scenario mix" 0
exact "scenario mix" $N $((N + 50))
assert_eq "mix: two phases reported" 2 "$(lj '.phases | length')"
assert_eq "mix: the warmup is marked" true "$(lj '.phases[0].warmup')"
assert_eq "mix: the warmup ran its 50" 50 "$(lj '.phases[0].requests')"
assert_eq "mix: total is the measured phase" "$(lj '.phases[1].requests')" "$(lj .total.requests)"
E=$(lj '.total.per_tool.echo.requests')
A=$(lj '.total.per_tool.add.requests')
assert_cmp "mix: both tools called (add)" "$A" ">" 0
assert_cmp "mix: echo (weight 3) called more than add (weight 1)" "$E" ">" "$A"
assert_eq "mix: config echoes the calls" "echo add" "$(lj '[.config.calls[].name] | join(" ")')"
assert_eq "mix: config echoes the arguments" mixed "$(lj '.config.calls[0].arguments.text')"
ROWS=$(($(wc -l <"$T_DIR/mix.csv") - 1))
assert_eq "mix: one CSV line per timeline second" "$(lj '.timeline | length')" "$ROWS"
assert_match "mix: CSV header" '^t,phase,ok,failed,session_lost,handle_lost,' "$(head -n 1 "$T_DIR/mix.csv")"
for k in version dialect config phases total timeline gates; do
	assert_eq "report has $k" true "$(lj "has(\"$k\")")"
done
for k in min mean p50 p90 p95 p99 p999 max; do
	assert_eq "latency_ms.$k is a number" number "$(lj ".total.latency_ms.$k | type")"
done
assert_eq "gates passed with none set" true "$(lj .gates.passed)"

# The terminal table (without --quiet) has a row per phase and the total.
timeout 60 "$MCPGW" load --target "$JSON_URL" --dialect modern --tool echo \
	--arg text=t --concurrency 2 --requests 20 --warmup 0.2s \
	>"$T_DIR/table.out" 2>"$T_DIR/table.err"
assert_eq "table run exit" 0 "$?"
assert_match "table header" 'phase +conc/rate +reqs +rps +ok% +mean +p50 +p90 +p95 +p99 +max +losses' "$(cat "$T_DIR/table.out")"
assert_match "table warmup row" 'warmup\* ' "$(cat "$T_DIR/table.out")"
assert_match "table load row" $'\n''load +2 +20 ' "$(cat "$T_DIR/table.out")"
assert_nomatch "no progress line when stdout is not a terminal" $'\r' "$(cat "$T_DIR/table.out")"

# stdio: a small newline-delimited JSON-RPC echo server (node), launched
# by each virtual user; exact counts in each dialect.
cat >"$T_DIR/stdio-server.js" <<'JS'
const rl = require("readline").createInterface({ input: process.stdin });
rl.on("line", (line) => {
	let m;
	try { m = JSON.parse(line); } catch (e) { return; }
	if (m.id === undefined || !m.method) return;
	const info = { name: "stdio-echo", version: "1" };
	let result = {};
	if (m.method === "initialize")
		result = { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: info };
	else if (m.method === "server/discover")
		result = { supportedVersions: ["2026-07-28"], capabilities: { tools: {} }, serverInfo: info };
	else if (m.method === "tools/call")
		result = { content: [{ type: "text", text: String((m.params.arguments || {}).text) }], isError: false };
	if (m.params && m.params._meta) result.resultType = "complete";
	process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: m.id, result }) + "\n");
});
JS
for d in legacy modern auto; do
	run_load "stdio-$d" --stdio "node $T_DIR/stdio-server.js" --dialect $d \
		--tool echo --arg text=pipe --concurrency 3 --requests 200
	assert_load_exit "stdio/$d" 0
	exact "stdio/$d" 200
	assert_eq "stdio/$d: transport in the config" stdio "$(lj .config.transport)"
done

finish
