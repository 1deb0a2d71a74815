#!/bin/bash
# load_cli.sh - the command line of "mcpgw load": --help documents every
# option; bad flags and bad scenario files exit 2 with a message that
# names the problem (FILE:LINE:COL for files) before any load is sent;
# gates pass (exit 0) or fail (exit 1) and are recorded in the report;
# flags override scenario values; the example scenarios in conf/ run;
# --json - puts the report on stdout; SIGINT ends a run early with a
# complete report.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq
require_mcpgw
watchdog 240

# usage_err WHAT REGEX mcpgw-load-args...: exit 2, stderr matches REGEX,
# nothing on stdout.
usage_err() {
	local what=$1 re=$2 out err st
	shift 2
	out=$(timeout 20 "$MCPGW" load "$@" 2>"$T_DIR/usage.err")
	st=$?
	err=$(cat "$T_DIR/usage.err")
	assert_eq "$what: exit 2" 2 "$st"
	assert_match "$what: message" "$re" "$err"
	assert_eq "$what: nothing on stdout" "" "$out"
}

# --help
HELP=$(timeout 10 "$MCPGW" load --help)
assert_eq "--help exits 0" 0 "$?"
for o in --target --dialect --concurrency --rate --duration --warmup \
	--connection --http2 --tool --arg --json --csv --scenario --max-p95 \
	--max-p99 --max-error-rate --min-rps --max-session-losses \
	--max-handle-losses --stdio --timeout --think --auth-header \
	--auth-command --seed --quiet --requests --backlog --ca-file \
	--protocol-version --list-tools --log-level --lost-session-match \
	--clock-file --reconnect-after --spread-users; do
	case $HELP in
	*"$o"*) ok "--help documents $o" ;;
	*) fail "--help does not document $o" ;;
	esac
done
assert_match "mcpgw help lists load" 'load ' "$(timeout 10 "$MCPGW" help)"

start_backend --era dual --id cli --delay-ms 5
URL=$B_URL
BASE=(--target "$URL" --tool echo --arg text=x)

usage_err "unknown option" "unknown option '--bogus'" "${BASE[@]}" --bogus
usage_err "missing value" "option '--rate' needs a value" "${BASE[@]}" --rate
usage_err "stray argument" "unexpected argument 'extra'" "${BASE[@]}" extra
usage_err "bad rate" "invalid --rate 'fast'" "${BASE[@]}" --rate fast
usage_err "zero concurrency" "invalid --concurrency '0'" "${BASE[@]}" --concurrency 0
usage_err "bad dialect" "invalid --dialect 'old' \\(legacy, modern or auto\\)" "${BASE[@]}" --dialect old
usage_err "bad connection" "invalid --connection 'pooled'" "${BASE[@]}" --connection pooled
usage_err "bad duration" "invalid --duration '-1'" "${BASE[@]}" --duration -1
usage_err "bad timeout" "invalid --timeout" "${BASE[@]}" --timeout soon
usage_err "bad think" "invalid --think" "${BASE[@]}" --think 2s-1s
usage_err "bad seed" "invalid --seed" "${BASE[@]}" --seed -3
usage_err "bad arg" "--arg 'novalue': expected KEY=VALUE" "${BASE[@]}" --arg novalue
usage_err "bad JSON arg" "--arg n: not JSON" "${BASE[@]}" --arg 'n:={'
usage_err "arg without tool" "--arg needs --tool" --target "$URL" --arg a=1
usage_err "no target" "no target: give --target URL" --tool echo
usage_err "no calls" "no calls: give --tool NAME" --target "$URL"
usage_err "bad target" "invalid --target 'ftp://x/mcp'" --target ftp://x/mcp --tool echo
usage_err "stdio and target" "--stdio and --target exclude each other" "${BASE[@]}" --stdio cat
usage_err "stdio with http2" "apply to HTTP targets" --stdio cat --tool echo --http2
usage_err "bad gate" "invalid --max-error-rate '2'" "${BASE[@]}" --max-error-rate 2
usage_err "bad gate number" "invalid --max-p95 '1e3'" "${BASE[@]}" --max-p95 1e3
usage_err "bad losses gate" "invalid --max-session-losses" "${BASE[@]}" --max-session-losses -1
usage_err "bad auth header" "invalid --auth-header 'NoColon'" "${BASE[@]}" --auth-header NoColon
usage_err "bad log level" "invalid --log-level" "${BASE[@]}" --log-level loud
usage_err "unset auth env" "environment variable MGW_NOT_SET_ANYWHERE is not set" \
	"${BASE[@]}" --auth-header "Authorization: env:MGW_NOT_SET_ANYWHERE" --requests 1
usage_err "missing CA file" "TLS: .*/nonexistent/ca.pem" \
	--target https://127.0.0.1:1/mcp --tool echo --ca-file /nonexistent/ca.pem --requests 1

# Scenario files: a missing file, and errors pointing into the file.
usage_err "missing scenario" "/nonexistent.yaml: cannot open" --scenario /nonexistent.yaml
printf 'targets: [%s]\ncalls:\n  - tool: echo\n    colour: red\n' "$URL" >"$T_DIR/bad1.yaml"
usage_err "scenario unknown key" "bad1.yaml:4:5: calls\\[0\\].colour: unknown key" --scenario "$T_DIR/bad1.yaml"
printf 'targets: [%s]\ncalls: [{tool: echo}]\nphases:\n  - {rate: 10}\n' "$URL" >"$T_DIR/bad2.yaml"
usage_err "scenario phase without length" "phase phase1: give a duration or a number of requests" --scenario "$T_DIR/bad2.yaml"
printf '{"targets": "%s", "dialect": "dual"}\n' "$URL" >"$T_DIR/bad3.json"
usage_err "JSON scenario bad enum" "bad3.json:1:.*dialect: 'dual' is not one of: legacy, modern, auto" --scenario "$T_DIR/bad3.json"
printf 'targets: [%s]\ncalls:\n  - tool: echo\n    arguments: [1]\n' "$URL" >"$T_DIR/bad4.yaml"
usage_err "scenario arguments not a mapping" "bad4.yaml:4:16: calls\\[0\\].arguments: expected a mapping" --scenario "$T_DIR/bad4.yaml"

# Gates: pass -> 0, breach -> 1; recorded in the report either way.
run_load gates-pass "${BASE[@]}" --concurrency 2 --requests 50 \
	--max-p99 10000 --max-error-rate 0 --min-rps 1 --max-session-losses 0
assert_load_exit "gates pass" 0
assert_eq "gates pass: recorded" true "$(lj .gates.passed)"
assert_eq "gates pass: four checks" 4 "$(lj '.gates.checks | length')"
assert_eq "gates pass: names" "max_p99_ms max_error_rate min_rps max_session_losses" \
	"$(lj '[.gates.checks[].name] | join(" ")')"
run_load gates-p95 "${BASE[@]}" --concurrency 2 --requests 50 --max-p95 1
assert_load_exit "p95 gate breached (backend holds answers 5 ms)" 1
assert_eq "p95 gate: recorded failed" false "$(lj .gates.passed)"
assert_cmp "p95 gate: value" "$(lj '.gates.checks[0].value')" ">" 1
run_load gates-rps "${BASE[@]}" --concurrency 1 --requests 20 --min-rps 1000000
assert_load_exit "min-rps gate breached" 1
run_load gates-err --target "$URL" --tool no_such_tool --requests 10 --max-error-rate 0.5
assert_load_exit "error-rate gate breached" 1
assert_eq "error-rate: every call failed" 0 "$(lj .total.ok)"
assert_cmp "error-rate: failures classified" "$(lj '.total.failures.rpc_error + .total.failures.tool_error')" "==" 10

# Flags override the scenario; scenario gates apply.
cat >"$T_DIR/s.yaml" <<YAML
targets: [http://127.0.0.1:1/mcp]
dialect: legacy
calls: [{tool: add, arguments: {a: 1, b: 2}}]
phases:
  - {name: warm, warmup: true, concurrency: 1, duration: 10s}
  - {name: main, concurrency: 1, duration: 60s}
gates: {max_p95_ms: 0.001}
YAML
run_load override --scenario "$T_DIR/s.yaml" --target "$URL" --dialect modern \
	--concurrency 3 --requests 30 --warmup 0.3s
assert_load_exit "scenario gate breached" 1
assert_eq "override: target" "$URL" "$(lj '.config.targets[0]')"
assert_eq "override: dialect" modern "$(lj .dialect)"
assert_eq "override: requests" 30 "$(lj .total.requests)"
assert_eq "override: concurrency on every phase" "3 3" "$(lj '[.phases[].concurrency] | map(tostring) | join(" ")')"
assert_cmp "override: warmup shortened" "$(lj '.phases[0].duration_s')" "<" 5
assert_eq "override: scenario calls kept" add "$(lj '.config.calls[0].tool')"
assert_eq "override: scenario gate recorded" max_p95_ms "$(lj '.gates.checks[0].name')"

# The examples in conf/ parse and run (short, pointed at our backend).
for f in "$TOP_SRCDIR"/conf/load-*.yaml; do
	n=$(basename "$f" .yaml)
	run_load "$n" --scenario "$f" --target "$URL" --duration 0.5s --warmup 0.2s \
		--concurrency 2 --think none --csv "$T_DIR/$n.csv"
	case $LOAD_STATUS in
	0|1) ok "$n: runs (exit $LOAD_STATUS)" ;;
	*) fail "$n: exit $LOAD_STATUS: $(tail -n 3 "$LOAD_ERR")" ;;
	esac
	assert_cmp "$n: calls succeeded" "$(lj .total.ok)" ">" 0
	assert_eq "$n: scenario named in the report" "$f" "$(lj .config.scenario)"
done

# --json - : the report on stdout, the table on stderr.
timeout 60 "$MCPGW" load "${BASE[@]}" --requests 5 --json - >"$T_DIR/stdout.json" 2>"$T_DIR/stdout.err"
assert_eq "--json -: exit" 0 "$?"
assert_eq "--json -: stdout is the report" 5 "$(jq -r .total.requests "$T_DIR/stdout.json")"
assert_match "--json -: table on stderr" 'conc/rate' "$(cat "$T_DIR/stdout.err")"

# --clock-file: the engine's t = 0, the same number as the report's
# clock.start_ns (what mcpgw-bench schedules its kills on).
timeout 60 "$MCPGW" load "${BASE[@]}" --requests 3 --quiet --json "$T_DIR/clk.json" \
	--clock-file "$T_DIR/clk" 2>"$T_DIR/clk.err"
assert_eq "--clock-file: exit" 0 "$?"
assert_match "--clock-file: a number of ns" '^[1-9][0-9]*$' "$(cat "$T_DIR/clk" 2>/dev/null)"
assert_eq "--clock-file: equals the report's clock.start_ns" "$(cat "$T_DIR/clk" 2>/dev/null)" \
	"$(jq -r .clock.start_ns "$T_DIR/clk.json")"
assert_eq "--clock-file: CLOCK_MONOTONIC" CLOCK_MONOTONIC "$(jq -r .clock.source "$T_DIR/clk.json")"
timeout 60 "$MCPGW" load "${BASE[@]}" --requests 3 --quiet \
	--clock-file "$T_DIR/no/such/dir/clk" >/dev/null 2>"$T_DIR/clk2.err"
assert_eq "--clock-file in a missing directory: exit 1" 1 "$?"
assert_match "--clock-file: the error names the file" 'cannot write .*no/such/dir/clk' \
	"$(cat "$T_DIR/clk2.err")"

# first_failures: what the failed calls said, in order (here: refused).
DEAD=$(free_port)
timeout 60 "$MCPGW" load --target "http://127.0.0.1:$DEAD/mcp" --tool echo \
	--requests 3 --quiet --json "$T_DIR/dead.json" >/dev/null 2>"$T_DIR/dead.err"
assert_eq "first_failures: one per failed call" 3 "$(jq '.first_failures | length' "$T_DIR/dead.json")"
assert_eq "first_failures: the kind" connect_error "$(jq -r '.first_failures[0].kind' "$T_DIR/dead.json")"
assert_eq "first_failures: the call" echo "$(jq -r '.first_failures[0].call' "$T_DIR/dead.json")"
assert_match "first_failures: what it said" 'refused' "$(jq -r '.first_failures[0].detail' "$T_DIR/dead.json")"
assert_eq "first_failures: none when nothing failed" 0 "$(jq '.first_failures | length' "$T_DIR/clk.json")"

# SIGINT ends the run early, with the report of what ran.
start_load sigint "${BASE[@]}" --concurrency 2 --duration 60s
sleep 1.5
kill -INT "$L_PID"
wait_load
assert_load_exit "SIGINT" 0
assert_eq "SIGINT: marked interrupted" true "$(lj .interrupted)"
assert_cmp "SIGINT: calls were counted" "$(lj .total.ok)" ">" 0
assert_cmp "SIGINT: the phase ended early" "$(lj '.phases[0].duration_s')" "<" 30

# --auth-header replaces the scenario's auth headers (flags override the
# file): one Authorization field on the wire, the flag's.
start_backend --era modern --id authrec --record 10
cat >"$T_DIR/auth.yaml" <<EOF
targets: $B_URL
dialect: modern
auth:
  headers:
    - {name: Authorization, value: "Bearer from-file"}
calls:
  - {tool: echo, arguments: {text: a}}
phases:
  - {name: one, concurrency: 1, requests: 1}
EOF
"$MCPGW" load --scenario "$T_DIR/auth.yaml" --auth-header "Authorization: Bearer from-flag" \
	--quiet >/dev/null 2>"$T_DIR/auth.err"
assert_eq "scenario plus --auth-header: the run succeeds" 0 "$?"
AUTHS=$(rec "$B_ADDR" | jq -c '[.requests[] | select(.method == "POST") | [.headers[] | select(.[0] | ascii_downcase == "authorization") | .[1]]]')
assert_eq "--auth-header replaced the scenario's Authorization (one field, the flag's)" \
	'[["Bearer from-flag"]]' "$AUTHS"

finish
