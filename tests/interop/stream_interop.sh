#!/bin/bash
# stream_interop.sh - the official TypeScript SDK 1.x client
# (@modelcontextprotocol/sdk) runs server-everything's
# trigger-long-running-operation (progress notifications on the call's
# SSE answer) through "mcpgw serve --mode stateful" with two
# server-everything replicas, and the shell SIGKILLs the session's
# replica at the first progress (issue 17).  The SDK resumes both cut
# streams (the call's and its standalone GET) with GET + Last-Event-ID;
# the gateway answers the call's resume with that request's JSON-RPC
# error -32010 and opens only the standalone one on the new replica.  So
# the call ends with the gateway's -32010, not with the client's own
# "Request timed out"; no 409 reaches the client; the session goes on on
# the other replica.  Packages live in their own npm prefix
# ($TOP_BUILDDIR/tests/interop/.cache/stateful_stream).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node npm
require_mcpgw
watchdog 300

SDK1=${MCPGW_SDK1_VERSION:-1.32.2}
EVERY=${MCPGW_EVERYTHING_VERSION:-2026.8.31}
CACHE=$TOP_BUILDDIR/tests/interop/.cache
PREFIX=$CACHE/stateful_stream
mkdir -p "$PREFIX" || die "cannot create $PREFIX"
. "$TOP_SRCDIR/tests/interop/node.sh"
interop_node
interop_packages "$PREFIX" "@modelcontextprotocol/sdk@$SDK1" "@modelcontextprotocol/server-everything@$EVERY"
cp "$TOP_SRCDIR/tests/interop/stream_client.mjs" "$PREFIX/" || die "cannot copy the client"
EVERY_DIR=$PREFIX/node_modules/@modelcontextprotocol/server-everything

declare -A RPID
interop_everything e1
E1=$E_ADDR
interop_everything e2
E2=$E_ADDR
SF_WORKERS=1 SF_HEALTH='      type: tcp
      interval: 500ms
      timeout: 400ms
      rise: 1
      fall: 3' sf_config "$T_DIR/everything.yaml" stateful "$E1" "$E2"
start_serve -c "$T_DIR/everything.yaml"
GWADDR=$G_ADDR

RUNS=${MCPGW_STREAM_RUNS:-3}
for run in $(seq 1 "$RUNS"); do
	ctl=$T_DIR/ctl-$run
	mkdir -p "$ctl"
	(cd "$PREFIX" && exec timeout 60 "$NODE" stream_client.mjs \
		"$(jq -cn --arg u "$G_URL" --arg c "$ctl" '{url: $u, control: $c, duration: 10, steps: 20, timeoutMs: 20000}')") \
		>"$T_DIR/run$run.json" 2>"$T_DIR/run$run.err" &
	cpid=$!
	track_pid "$cpid"
	if wait_match "$ctl/progress" '.' 30; then
		K=$(jq -r '.replica // empty' "$ctl/progress")
		if [ -n "$K" ] && [ -n "${RPID[$K]:-}" ]; then
			kill_wait "${RPID[$K]}" KILL 5 || fail "run $run: $K did not die"
			log "run $run: killed $K mid-stream"
		else
			fail "run $run: progress from an unknown replica '$K'"
		fi
	else
		fail "run $run: no progress: $(head -c 800 "$T_DIR/run$run.err")"
	fi
	wait_pid "$cpid" 55
	SUM=$(tail -n 1 "$T_DIR/run$run.json")
	log "run $run: $(printf '%s' "$SUM" | jq -c '{outcome, code, message, progress, ms, after, statuses}' 2>/dev/null | head -c 2000)"
	sum_ok() { # WHAT FILTER
		if printf '%s' "$SUM" | jq -e "$2" >/dev/null 2>&1; then ok "run $run: $1"; else
			fail "run $run: $1: jq '$2' does not hold on: $(printf '%s' "$SUM" | head -c 1500)"; fi
	}
	sum_ok "progress arrived before the kill" '.progress >= 1'
	sum_ok "the call ended with the gateway's -32010, not the client's timeout" \
		'.outcome == "error" and .code == -32010 and (.message | test("timed out") | not)'
	sum_ok "no 409 reached the client" '[.statuses[] | select(endswith(" 409"))] | length == 0'
	sum_ok "the session goes on on the other replica" ".after != \"$K\" and (.after | startswith(\"e\"))"
	assert_cmp "run $run: the gateway answered the call's resumed stream" \
		"$(gstat "$G_ADDR" '.sessions.resumes_answered // 0')" '>=' 1
	# bring the killed replica back for the next run
	interop_everything "$K"
	[ "$K" = e1 ] && E1=$E_ADDR || E2=$E_ADDR
	sf_stop_serve
	SF_WORKERS=1 SF_HEALTH='      type: tcp
      interval: 500ms
      timeout: 400ms
      rise: 1
      fall: 3' sf_config "$T_DIR/everything.yaml" stateful "$E1" "$E2"
	start_serve -c "$T_DIR/everything.yaml"
done
finish
