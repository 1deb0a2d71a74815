# lib.sh - shared helpers of the integration tests (sourced, bash only).
#
# Every test gets a private temporary directory, starts real processes
# (mcpgw backend, redis-server) on 127.0.0.1 with ephemeral ports, and
# leaves nothing behind: an EXIT trap kills every process it started, by
# PID, and removes the directory.  Every wait is bounded in count and time,
# and a watchdog ends a test that runs far longer than it should.
#
# Exit status convention of the automake test driver: 0 pass, 1 fail,
# 77 skip (only for optional tools), 99 hard error.

if [ -z "${BASH_VERSION:-}" ]; then
	echo "lib.sh needs bash" >&2
	exit 99
fi

set -u

T_NAME=$(basename "${0%.sh}")
T_FAILS=0
T_CHECKS=0
T_PIDS=""
B_PIDS=""
T_WATCHDOG=""
MCPGW=${MCPGW:-${TOP_BUILDDIR:-.}/mcpgw}
TOP_SRCDIR=${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
TOP_BUILDDIR=${TOP_BUILDDIR:-$(pwd)}
T_DIR=$(mktemp -d "${TMPDIR:-/tmp}/mcpgw-$T_NAME.XXXXXX") || exit 99
CURL_MAX=${CURL_MAX:-10}

log() { printf '[%s] %s\n' "$T_NAME" "$*"; }

# Records one failed check and goes on, so one run shows every discrepancy.
fail() {
	T_FAILS=$((T_FAILS + 1))
	printf '[%s] FAIL: %s\n' "$T_NAME" "$*"
}

ok() {
	T_CHECKS=$((T_CHECKS + 1))
	printf '[%s] ok: %s\n' "$T_NAME" "$*"
}

# A failure after which the rest of the test cannot mean anything.
die() {
	T_FAILS=$((T_FAILS + 1))
	printf '[%s] FATAL: %s\n' "$T_NAME" "$*"
	exit 1
}

skip() {
	printf '[%s] SKIP: %s\n' "$T_NAME" "$*"
	exit 77
}

# 0 if PID is a zombie (exited, not yet reaped); /proc, no procps needed.
is_zombie() {
	[ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" = Z ]
}

# Kills every process this test started (by PID), then removes the temp
# directory.  Runs once, on any exit.  mcpgw backends are stopped last and
# gracefully (SIGTERM): one that does not exit 0 within 15 s, or whose
# stderr holds a sanitizer report, fails the test, so ASan/UBSan findings
# and leaks surface in every integration test.
t_cleanup() {
	local rc=$? p i st
	trap - EXIT INT TERM
	for p in $T_PIDS; do
		case " $B_PIDS " in *" $p "*) continue ;; esac
		t_same "$p" && kill -TERM "$p" 2>/dev/null
	done
	for p in $T_PIDS; do
		case " $B_PIDS " in *" $p "*) continue ;; esac
		t_same "$p" || { wait "$p" 2>/dev/null; continue; }
		i=0
		while kill -0 "$p" 2>/dev/null && [ $i -lt 30 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	for p in $B_PIDS; do
		# Already reaped by the test itself (it stopped this one on purpose).
		t_same "$p" || continue
		kill -TERM "$p" 2>/dev/null
		i=0
		while kill -0 "$p" 2>/dev/null && [ $i -lt 150 ]; do
			# a crashed backend is a zombie: wait reaps it below
			is_zombie "$p" && break
			sleep 0.1
			i=$((i + 1))
		done
		if ! is_zombie "$p" && kill -0 "$p" 2>/dev/null; then
			kill -KILL "$p" 2>/dev/null
			wait "$p" 2>/dev/null
			printf '[%s] FAIL: backend pid %s did not exit within 15 s of SIGTERM\n' "$T_NAME" "$p"
			[ "$rc" -eq 0 ] && rc=1
			continue
		fi
		wait "$p" 2>/dev/null
		st=$?
		if [ "$st" -ne 0 ]; then
			printf '[%s] FAIL: backend pid %s exited with status %s on SIGTERM\n' "$T_NAME" "$p" "$st"
			[ "$rc" -eq 0 ] && rc=1
		fi
	done
	if [ -n "$T_WATCHDOG" ]; then
		kill -TERM "$T_WATCHDOG" 2>/dev/null
		wait "$T_WATCHDOG" 2>/dev/null
	fi
	if [ -d "$T_DIR" ] && grep -lE 'ERROR: (Address|Leak|Thread|Memory)Sanitizer|runtime error:' "$T_DIR"/*.err >/dev/null 2>&1; then
		printf '[%s] FAIL: sanitizer report in %s\n' "$T_NAME" \
			"$(grep -lE 'ERROR: (Address|Leak|Thread|Memory)Sanitizer|runtime error:' "$T_DIR"/*.err | xargs -n1 basename | tr '\n' ' ')"
		[ "$rc" -eq 0 ] && rc=1
	fi
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && [ -d "$T_DIR" ]; then
		# Leave the processes' stderr in the test log for diagnosis.
		local f
		for f in "$T_DIR"/*.err; do
			[ -s "$f" ] || continue
			printf '%s\n' "----- $(basename "$f") (last 40 lines)"
			tail -n 40 "$f"
		done
	fi
	rm -rf "$T_DIR"
	exit "$rc"
}
trap t_cleanup EXIT
trap 'exit 1' INT TERM

# Ends the test (status 1 through the TERM trap) if it runs longer than
# $1 seconds.  The watchdog's own sleep is ended with it at cleanup.
watchdog() {
	local secs=$1 me=$$
	(
		trap 'kill -TERM $sp 2>/dev/null; exit 0' TERM
		sleep "$secs" &
		sp=$!
		wait $sp
		echo "[$T_NAME] watchdog: test exceeded ${secs}s" >&2
		kill -TERM "$me" 2>/dev/null
	) &
	T_WATCHDOG=$!
}

# Called at the end of every test: the exit status reflects every check.
finish() {
	log "$T_CHECKS checks passed, $T_FAILS failed"
	if [ "$T_FAILS" -ne 0 ]; then
		exit 1
	fi
	exit 0
}

# Required tools are installed by the setup; missing one is a failure.
require_tools() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || die "required tool '$t' is not installed"
	done
}

require_mcpgw() {
	[ -x "$MCPGW" ] || die "mcpgw binary not found at '$MCPGW'"
}

# PIDs wrap within minutes on a busy machine: each tracked PID is kept with
# its start time (field 22 of /proc/PID/stat), and cleanup only signals a
# PID whose start time still matches, never a stranger that reused it.
declare -A T_START
t_starttime() { local s; s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1; s=${s##*) }; set -- $s; echo "${20}"; }
t_same() { [ -n "${T_START[$1]:-}" ] && [ "$(t_starttime "$1")" = "${T_START[$1]}" ]; }
track_pid() { T_PIDS="$T_PIDS $1"; T_START[$1]=$(t_starttime "$1"); }

# Asks the kernel for a free TCP port on 127.0.0.1 (for programs such as
# redis-server that cannot bind port 0 themselves).
free_port() {
	timeout 10 node -e '
const s = require("net").createServer();
s.listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => console.log(p)); });'
}

# start_backend [mcpgw backend options...]
# Starts "mcpgw backend --listen 127.0.0.1:0 OPTIONS" and waits (10 s at
# most) for its first stdout line "listening on HOST:PORT".  Sets B_PID,
# B_ADDR (HOST:PORT), B_URL (http://HOST:PORT/mcp), B_OUT and B_ERR (its
# stdout / stderr files).  The listen option can be replaced by passing
# --listen yourself as the first option.
B_SEQ=0
start_backend() {
	local args=("$@")
	B_SEQ=$((B_SEQ + 1))
	B_OUT=$T_DIR/backend$B_SEQ.out
	B_ERR=$T_DIR/backend$B_SEQ.err
	if [ "${1:-}" != "--listen" ]; then
		args=(--listen 127.0.0.1:0 "${args[@]}")
	fi
	"$MCPGW" backend "${args[@]}" >"$B_OUT" 2>"$B_ERR" &
	B_PID=$!
	track_pid "$B_PID"
	B_PIDS="$B_PIDS $B_PID"
	local i=0 line=""
	while [ $i -lt 100 ]; do
		line=$(head -n 1 "$B_OUT" 2>/dev/null)
		case $line in
		"listening on "*:*) break ;;
		esac
		if ! kill -0 "$B_PID" 2>/dev/null; then
			wait "$B_PID"
			die "mcpgw backend ${args[*]} exited with status $? before listening: $(tail -n 5 "$B_ERR")"
		fi
		sleep 0.1
		i=$((i + 1))
	done
	case $line in
	"listening on "*:*) ;;
	*) die "mcpgw backend ${args[*]}: no 'listening on HOST:PORT' line on stdout within 10 s (got '$line')" ;;
	esac
	B_ADDR=${line#listening on }
	B_ADDR=${B_ADDR%%[[:space:]]*}
	B_URL=http://$B_ADDR/mcp
	log "backend $B_SEQ (pid $B_PID) on $B_ADDR: ${args[*]}"
}

# Sends a signal to a started process and waits (bounded) for its exit;
# prints its exit status.  Returns 1 if it did not exit within $3 seconds.
stop_pid() {
	local pid=$1 sig=${2:-TERM} secs=${3:-10} i=0
	kill -"$sig" "$pid" 2>/dev/null
	while kill -0 "$pid" 2>/dev/null && [ $i -lt $((secs * 10)) ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$pid" 2>/dev/null; then
		return 1
	fi
	wait "$pid" 2>/dev/null
	echo $?
}

# start_redis: runs a private redis-server on 127.0.0.1 (no persistence)
# and waits for PING.  Sets REDIS_PID, REDIS_PORT, REDIS_URL.
start_redis() {
	local try port i
	for try in 1 2 3; do
		port=$(free_port) || continue
		redis-server --port "$port" --bind 127.0.0.1 --save '' \
			--dir "$T_DIR" --appendonly no --daemonize no --protected-mode yes \
			>"$T_DIR/redis.out" 2>"$T_DIR/redis.err" &
		REDIS_PID=$!
		track_pid "$REDIS_PID"
		i=0
		while [ $i -lt 50 ]; do
			if [ "$(timeout 2 redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null)" = PONG ]; then
				REDIS_PORT=$port
				REDIS_URL=redis://127.0.0.1:$port
				log "redis-server (pid $REDIS_PID) on 127.0.0.1:$port"
				return 0
			fi
			kill -0 "$REDIS_PID" 2>/dev/null || break
			sleep 0.1
			i=$((i + 1))
		done
		kill -KILL "$REDIS_PID" 2>/dev/null
		wait "$REDIS_PID" 2>/dev/null
	done
	die "redis-server did not start: $(tail -n 5 "$T_DIR/redis.out")"
}

# gen_cert: a self-signed certificate for localhost and 127.0.0.1.
# Sets CERT and KEY.
gen_cert() {
	CERT=$T_DIR/cert.pem
	KEY=$T_DIR/key.pem
	timeout 30 openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
		-nodes -keyout "$KEY" -out "$CERT" -days 2 -subj /CN=localhost \
		-addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
		>"$T_DIR/openssl.err" 2>&1 ||
		die "openssl could not make a certificate: $(cat "$T_DIR/openssl.err")"
}

# ---- HTTP ----------------------------------------------------------------
# req METHOD URL [curl options...]
# One request with curl, 10 s at most.  Response headers go to $HDR, the
# body to $BODYF; sets CODE (000 when curl failed), BODY (the body text),
# HTTPV (curl's %{http_version}).
HDR=$T_DIR/last.hdr
BODYF=$T_DIR/last.body
req() {
	local method=$1 url=$2 out
	shift 2
	: >"$HDR"
	: >"$BODYF"
	out=$(curl -sS --max-time "$CURL_MAX" -X "$method" -D "$HDR" -o "$BODYF" \
		-w '%{http_code} %{http_version}' "$@" "$url" 2>"$T_DIR/curl.err")
	CODE=${out%% *}
	HTTPV=${out##* }
	[ -n "$CODE" ] || CODE=000
	BODY=$(cat "$BODYF")
}

# Value of a response header of the last request (case-insensitive name,
# last occurrence, CR stripped).
hdr() {
	tr -d '\r' <"$HDR" | awk -v n="$(printf '%s' "$1" | tr 'A-Z' 'a-z')" '
		{ i = index($0, ":"); if (i == 0) next
		  k = tolower(substr($0, 1, i - 1)); v = substr($0, i + 1)
		  sub(/^[ \t]+/, "", v); sub(/[ \t]+$/, "", v)
		  if (k == n) last = v }
		END { if (last != "") print last }'
}

# post URL JSON [curl options...]: an MCP POST (JSON body, both Accepts).
post() {
	local url=$1 json=$2
	shift 2
	req POST "$url" -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' \
		--data-binary "$json" "$@"
}

# Prints the JSON-RPC response of the last request: the body itself when
# it is JSON, or, for an SSE answer, the data of the event that carries
# the response (an "id" with "result" or "error").
rpc() {
	case $(hdr content-type) in
	text/event-stream*) sse_messages | jq -c 'select(has("id") and (has("result") or has("error")))' | tail -n 1 ;;
	*) printf '%s' "$BODY" ;;
	esac
}

# Prints each SSE event's data (one JSON message per line) of the last body.
# Data lines of one event are joined with newlines per the SSE rules.
sse_messages() {
	tr -d '\r' <"$BODYF" | awk '
		/^data:/ { d = substr($0, 6); sub(/^ /, "", d)
		           buf = (buf == "" ? d : buf "\n" d); next }
		/^$/ { if (buf != "") print buf; buf = "" }
		END { if (buf != "") print buf }'
}

# jq_get FILTER: evaluates FILTER on rpc output, raw.
jq_get() { rpc | jq -r "$1" 2>/dev/null; }

# ---- assertions -----------------------------------------------------------
assert_eq() { # WHAT EXPECTED GOT
	if [ "$2" = "$3" ]; then ok "$1"; else fail "$1: expected '$2', got '$3'"; fi
}

assert_ne() { # WHAT UNEXPECTED GOT
	if [ "$2" != "$3" ]; then ok "$1"; else fail "$1: did not expect '$3'"; fi
}

assert_match() { # WHAT ERE GOT
	if printf '%s' "$3" | grep -Eq -- "$2"; then ok "$1"; else fail "$1: expected to match /$2/, got '$3'"; fi
}

assert_nomatch() { # WHAT ERE GOT
	if printf '%s' "$3" | grep -Eq -- "$2"; then fail "$1: expected no match of /$2/, got '$3'"; else ok "$1"; fi
}

# assert_code WHAT EXPECTED_STATUS_ERE: on the last request.
assert_code() {
	if printf '%s' "$CODE" | grep -Eqx -- "$2"; then
		ok "$1 (HTTP $CODE)"
	else
		fail "$1: expected HTTP status $2, got $CODE; body: $(printf '%s' "$BODY" | head -c 400)"
	fi
}

# assert_jq WHAT FILTER: FILTER must yield true on the last JSON-RPC message.
assert_jq() {
	local msg
	msg=$(rpc)
	if printf '%s' "$msg" | jq -e "$2" >/dev/null 2>&1; then
		ok "$1"
	else
		fail "$1: expected jq '$2' to hold on: $(printf '%s' "$msg" | head -c 600)"
	fi
}

# ---- MCP: legacy era ----------------------------------------------------
LEGACY_VERSION=2025-11-25
MODERN_VERSION=2026-07-28

# legacy_init URL [VERSION [curl options...]]: initialize +
# notifications/initialized.  Sets SID, NEGOTIATED, and HTTPV of the
# initialize exchange; failures are recorded, not fatal.
legacy_init() {
	local url=$1 v=${2:-$LEGACY_VERSION} v0
	shift
	[ $# -gt 0 ] && shift
	SID=""
	NEGOTIATED=""
	post "$url" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"$v\",\"capabilities\":{},\"clientInfo\":{\"name\":\"itest\",\"version\":\"1\"}}}" "$@"
	if [ "$CODE" != 200 ]; then
		fail "initialize on $url: HTTP $CODE: $BODY"
		return 1
	fi
	SID=$(hdr mcp-session-id)
	NEGOTIATED=$(jq_get '.result.protocolVersion')
	v0=$HTTPV
	post "$url" '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
		-H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED" "$@"
	if [ "$CODE" != 202 ]; then
		fail "notifications/initialized: expected 202, got $CODE"
		return 1
	fi
	HTTPV=$v0
	return 0
}

# legacy URL ID METHOD PARAMS_JSON [curl options...]: a request in session SID.
legacy() {
	local url=$1 id=$2 method=$3 params=$4
	shift 4
	post "$url" "{\"jsonrpc\":\"2.0\",\"id\":$id,\"method\":\"$method\",\"params\":$params}" \
		-H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED" "$@"
}

# ---- MCP: modern era -----------------------------------------------------
# modern_body ID METHOD PARAMS_JSON [VERSION]: a request body with the
# required _meta envelope merged into params.
modern_body() {
	local id=$1 method=$2 params=$3 v=${4:-$MODERN_VERSION}
	jq -cn --argjson id "$id" --arg m "$method" --argjson p "$params" --arg v "$v" '
		{jsonrpc: "2.0", id: $id, method: $m,
		 params: ($p + {_meta: (($p._meta // {}) + {
			"io.modelcontextprotocol/protocolVersion": $v,
			"io.modelcontextprotocol/clientCapabilities": {},
			"io.modelcontextprotocol/clientInfo": {name: "itest", version: "1"}})})}'
}

# modern URL ID METHOD PARAMS_JSON [curl options...]: a modern request with
# the SEP-2243 headers mirrored from the body (Mcp-Name for tools/call,
# prompts/get, resources/read).
modern() {
	local url=$1 id=$2 method=$3 params=$4 name body
	shift 4
	body=$(modern_body "$id" "$method" "$params")
	local extra=()
	case $method in
	tools/call | prompts/get) name=$(printf '%s' "$params" | jq -r '.name') ;;
	resources/read) name=$(printf '%s' "$params" | jq -r '.uri') ;;
	*) name="" ;;
	esac
	[ -n "$name" ] && extra=(-H "Mcp-Name: $name")
	post "$url" "$body" -H "MCP-Protocol-Version: $MODERN_VERSION" \
		-H "Mcp-Method: $method" "${extra[@]}" "$@"
}

# First text content of a tools/call result of the last request.
tool_text() { jq_get '.result.content[0].text // empty'; }

# ---- MCP: tasks (SEP-2663, the backend's slow_job) ------------------------
TASKS_EXT=io.modelcontextprotocol/tasks

# tbody ID METHOD PARAMS [CAPS]: a modern body declaring the tasks
# extension (CAPS overrides the client capabilities).
tbody() {
	local caps=${4:-"{\"extensions\":{\"$TASKS_EXT\":{}}}"}
	jq -cn --argjson id "$1" --arg m "$2" --argjson p "$3" --argjson c "$caps" '
		{jsonrpc: "2.0", id: $id, method: $m,
		 params: ($p + {_meta: {
			"io.modelcontextprotocol/protocolVersion": "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": $c}})}'
}

# tm URL ID METHOD PARAMS [curl options...]: a modern request with the
# SEP-2243 headers, Mcp-Name being params.name or params.taskId.
tm() {
	local url=$1 id=$2 method=$3 params=$4 name
	shift 4
	name=$(printf '%s' "$params" | jq -r '.name // .taskId // empty')
	local extra=()
	[ -n "$name" ] && extra=(-H "Mcp-Name: $name")
	post "$url" "$(tbody "$id" "$method" "$params")" \
		-H "MCP-Protocol-Version: 2026-07-28" -H "Mcp-Method: $method" \
		"${extra[@]}" "$@"
}

# tget URL TASKID: tasks/get; sets ST to the status (or the error code).
tget() {
	tm "$1" 9 tasks/get "{\"taskId\":\"$2\"}"
	ST=$(jq_get '.result.status // .error.code')
}

# task_create URL MS: a slow_job the backend runs as a task; sets TID.
task_create() {
	tm "$1" 1 tools/call "{\"name\":\"slow_job\",\"arguments\":{\"ms\":$2}}"
	TID=$(jq_get '.result.taskId // empty')
}

# ---- streams ---------------------------------------------------------------
# stream_open NAME SECS METHOD URL [curl options...]: starts curl in the
# background (at most SECS seconds, no buffering); headers go to
# $T_DIR/NAME.hdr and the body to $T_DIR/NAME.body.  Sets S_PID.
stream_open() {
	local name=$1 secs=$2 method=$3 url=$4
	shift 4
	: >"$T_DIR/$name.hdr"
	: >"$T_DIR/$name.body"
	curl -sS -N --max-time "$secs" -X "$method" -D "$T_DIR/$name.hdr" \
		-o "$T_DIR/$name.body" "$@" "$url" 2>"$T_DIR/$name.curlerr" &
	S_PID=$!
	track_pid "$S_PID"
}

# wait_match FILE ERE SECS: polls (0.1 s steps) until FILE has a line
# matching ERE.  Returns 1 after SECS seconds.
wait_match() {
	local f=$1 re=$2 n=$(($3 * 10)) i=0
	while [ $i -lt $n ]; do
		grep -Eq -- "$re" "$f" 2>/dev/null && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# wait_pid PID SECS: waits for a started process (bounded); prints nothing.
# Returns its exit status, or 124 if it is still running after SECS.
wait_pid() {
	local pid=$1 n=$(($2 * 10)) i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt $n ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -0 "$pid" 2>/dev/null && return 124
	wait "$pid" 2>/dev/null
}

# A header of a stream's response (see hdr).
stream_hdr() { HDR=$T_DIR/$1.hdr hdr "$2"; }

# bg_post NAME URL JSON [curl options...]: an MCP POST in the background.
# When it ends, $T_DIR/NAME.code holds the status and NAME.body the body;
# the order in which requests ended can be read from $T_DIR/order.  Sets
# BG_PID.
bg_post() {
	local name=$1 url=$2 json=$3
	shift 3
	rm -f "$T_DIR/$name.code"
	(
		c=$(curl -sS --max-time "$CURL_MAX" -D "$T_DIR/$name.hdr" -o "$T_DIR/$name.body" \
			-w '%{http_code}' -H 'Content-Type: application/json' \
			-H 'Accept: application/json, text/event-stream' \
			--data-binary "$json" "$@" "$url" 2>"$T_DIR/$name.curlerr")
		echo "$name" >>"$T_DIR/order"
		echo "${c:-000}" >"$T_DIR/$name.code"
	) &
	BG_PID=$!
	track_pid "$BG_PID"
}

# bg_result NAME: after the request ended, points CODE/BODY/HDR at it.
bg_result() {
	CODE=$(cat "$T_DIR/$1.code" 2>/dev/null || echo 000)
	HDR=$T_DIR/$1.hdr
	BODYF=$T_DIR/$1.body
	BODY=$(cat "$BODYF" 2>/dev/null)
}

# Restores CODE/BODY/HDR to the foreground request files.
fg_result() {
	HDR=$T_DIR/last.hdr
	BODYF=$T_DIR/last.body
}

# wait_inflight BASE_URL N: polls GET BASE_URL/stats (5 s at most) until
# N requests besides the stats request itself are in flight, so a test
# knows a background request has reached the server.  Returns 1 on timeout.
wait_inflight() {
	local base=$1 n=$2 i=0 got out
	while [ $i -lt 80 ]; do
		out=$(curl -sS --max-time 2 "$base/stats" 2>/dev/null)
		got=$(printf '%s' "$out" | jq -r '.inflight // 0' 2>/dev/null)
		[ -n "$got" ] && [ "$got" -ge $((n + 1)) ] 2>/dev/null && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# ---- mcpgw serve (issue 3) ---------------------------------------------------
# start_serve [mcpgw serve options...]
# Starts "mcpgw serve OPTIONS" (with --listen 127.0.0.1:0 in front unless
# the options hold --listen or -c) and waits (10 s at most) for its first
# stdout line "listening on HOST:PORT".  Sets G_PID, G_ADDR, G_URL
# (http://G_ADDR/mcp), G_OUT, G_ERR.  Like backends, the gateway must stop
# with status 0 on SIGTERM at cleanup, and its stderr is scanned for
# sanitizer reports.
G_SEQ=0
start_serve() {
	local args=("$@") a has_listen=0
	G_SEQ=$((G_SEQ + 1))
	G_OUT=$T_DIR/serve$G_SEQ.out
	G_ERR=$T_DIR/serve$G_SEQ.err
	for a in "$@"; do
		case $a in --listen | --listen=* | -c | --config | --config=*) has_listen=1 ;; esac
	done
	[ $has_listen = 1 ] || args=(--listen 127.0.0.1:0 "${args[@]}")
	"$MCPGW" serve "${args[@]}" >"$G_OUT" 2>"$G_ERR" &
	G_PID=$!
	track_pid "$G_PID"
	B_PIDS="$B_PIDS $G_PID"
	local i=0 line=""
	while [ $i -lt 100 ]; do
		line=$(head -n 1 "$G_OUT" 2>/dev/null)
		case $line in "listening on "*:*) break ;; esac
		if ! kill -0 "$G_PID" 2>/dev/null; then
			wait "$G_PID"
			die "mcpgw serve ${args[*]} exited with status $? before listening: $(tail -n 5 "$G_ERR")"
		fi
		sleep 0.1
		i=$((i + 1))
	done
	case $line in
	"listening on "*:*) ;;
	*) die "mcpgw serve ${args[*]}: no 'listening on HOST:PORT' line on stdout within 10 s (got '$line')" ;;
	esac
	G_ADDR=${line#listening on }
	G_ADDR=${G_ADDR%%[[:space:]]*}
	G_URL=http://$G_ADDR/mcp
	log "gateway $G_SEQ (pid $G_PID) on $G_ADDR: ${args[*]}"
}

# rec ADDR: prints the /debug/requests document of a backend started with
# --record (empty on failure).  rec_clear ADDR empties it.
rec() {
	curl -sS --max-time "$CURL_MAX" "http://$1/debug/requests" 2>/dev/null
}
rec_clear() {
	curl -sS --max-time "$CURL_MAX" -o /dev/null -X DELETE "http://$1/debug/requests" 2>/dev/null
}

# rec_calls ADDR: the recorded POSTs other than the gateway's health
# probes (server/discover, the default probe), one JSON object per line.
rec_calls() {
	rec "$1" | jq -c '.requests[]? | select(.method == "POST") |
		select(([.headers[] | select(.[0] | ascii_downcase == "mcp-method") | .[1]][0]) != "server/discover")'
}

# rec_header ENTRY NAME: the values of header NAME (case-insensitive) in a
# recorded request, one per line, in order.
rec_header() {
	printf '%s' "$1" | jq -r --arg n "$2" '.headers[] | select(.[0] | ascii_downcase == ($n | ascii_downcase)) | .[1]'
}

# who URL [curl options...]: a modern whoami through URL; sets WHO to the
# replica id that answered (empty when the call failed; CODE tells).
who() {
	local url=$1
	shift
	modern "$url" 1 tools/call '{"name":"whoami","arguments":{}}' "$@"
	WHO=$(tool_text)
}

# poll_until SECS CMD...: runs CMD every 0.1 s until it succeeds; returns 1
# after SECS seconds.
poll_until() {
	local n=$(($1 * 10)) i=0
	shift
	while [ $i -lt $n ]; do
		"$@" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# stop_wait PID [SIGNAL [SECS]]: like stop_pid, but in the calling shell
# (stop_pid inside $(...) cannot wait for the process, which is not the
# subshell's child: the status is lost and a zombie stays behind).  Sets
# STOP_STATUS to the exit status (128+N for a signal); returns 1 if the
# process is still running after SECS seconds.
# (kill_wait below does the work: one /proc read per look, so a zombie
# reaped by the shell between two checks is not taken for alive.)
stop_wait() {
	kill_wait "$@"
}

# stop_serve [PID]: stops a gateway (default G_PID) with SIGTERM and
# records a failure unless it exits 0 within 15 s.
stop_serve() {
	local pid=${1:-$G_PID}
	if ! stop_wait "$pid" TERM 15; then
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		fail "gateway pid $pid did not exit within 15 s of SIGTERM"
	elif [ "$STOP_STATUS" != 0 ]; then
		fail "gateway pid $pid exited with status $STOP_STATUS on SIGTERM"
	fi
}

# ---- mcpgw load ----------------------------------------------------------
# run_load NAME [mcpgw load options...]
# Runs "mcpgw load --quiet --json $T_DIR/NAME.json OPTIONS" (120 s at
# most) and sets LOAD_STATUS (its exit status) and LOAD_JSON (the report
# file).  Its stderr goes to $T_DIR/load-NAME.err (scanned for sanitizer
# reports at cleanup), its stdout to $T_DIR/load-NAME.out.
run_load() {
	local name=$1
	shift
	LOAD_JSON=$T_DIR/$name.json
	LOAD_OUT=$T_DIR/load-$name.out
	LOAD_ERR=$T_DIR/load-$name.err
	rm -f "$LOAD_JSON"
	timeout 120 "$MCPGW" load --quiet --json "$LOAD_JSON" "$@" \
		>"$LOAD_OUT" 2>"$LOAD_ERR"
	LOAD_STATUS=$?
	log "load $name: exit $LOAD_STATUS: $*"
}

# start_load NAME [options...]: run_load in the background; L_PID is its
# pid.  wait_load then sets LOAD_STATUS, LOAD_JSON, LOAD_ERR.
start_load() {
	local name=$1
	shift
	LOAD_JSON=$T_DIR/$name.json
	LOAD_OUT=$T_DIR/load-$name.out
	LOAD_ERR=$T_DIR/load-$name.err
	rm -f "$LOAD_JSON"
	"$MCPGW" load --quiet --json "$LOAD_JSON" "$@" >"$LOAD_OUT" 2>"$LOAD_ERR" &
	L_PID=$!
	track_pid "$L_PID"
	log "load $name started (pid $L_PID): $*"
}

wait_load() {
	local i=0
	while kill -0 "$L_PID" 2>/dev/null && ! is_zombie "$L_PID" && [ $i -lt 1200 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$L_PID" 2>/dev/null && ! is_zombie "$L_PID"; then
		kill -KILL "$L_PID" 2>/dev/null
		wait "$L_PID" 2>/dev/null
		LOAD_STATUS=124
		fail "mcpgw load pid $L_PID did not finish within 120 s"
		return 1
	fi
	wait "$L_PID"
	LOAD_STATUS=$?
	log "load finished: exit $LOAD_STATUS"
}

# lj JQ-EXPR: a value from the last load report (empty if unreadable).
lj() { jq -r "$1" "$LOAD_JSON" 2>/dev/null; }

# assert_load_exit WHAT STATUS: the last load run exited with STATUS.
assert_load_exit() {
	if [ "$LOAD_STATUS" = "$2" ]; then
		ok "$1: exit $2"
	else
		fail "$1: exit $LOAD_STATUS, expected $2: $(tail -n 3 "$LOAD_ERR" 2>/dev/null)"
	fi
}

# assert_cmp WHAT A OP B: a numeric comparison (awk), OP one of
# < <= > >= ==; the values are shown either way.
assert_cmp() {
	if awk -v a="$2" -v b="$4" -v op="$3" 'BEGIN {
		if (a == "" || a == "null" || b == "" || b == "null") exit 1
		if (op == "<") exit !(a + 0 < b + 0)
		if (op == "<=") exit !(a + 0 <= b + 0)
		if (op == ">") exit !(a + 0 > b + 0)
		if (op == ">=") exit !(a + 0 >= b + 0)
		if (op == "==") exit !(a + 0 == b + 0)
		exit 1 }'; then
		ok "$1: $2 $3 $4"
	else
		fail "$1: expected $2 $3 $4"
	fi
}

# ---- mcpgw serve, stateful mode (issue 4) ---------------------------------------
# sf_config FILE MODE ADDR... : writes a gateway configuration in MODE
# (stateful|auto) with one group "pool" of the replicas at ADDR (HOST:PORT),
# checked by GET /healthz (the default probe is a modern request, which a
# legacy-only replica refuses), and one catch-all route.  Tunables from
# the environment: SF_WORKERS (2), SF_BALANCER (round_robin), SF_WEIGHTS
# (space-separated weights in ADDR order), SF_GROUP (extra keys of the
# group, indented 4), SF_HEALTH (the keys of health:, indented 6; default
# GET /healthz every 500 ms, rise 1, fall 3), SF_REPLAY (safe), SF_ROUTE
# (extra keys of the route, indented 4), SF_SESSIONS (the body of
# "sessions:", indented 2; default "store: memory"), SF_EXTRA (top-level
# YAML appended).
sf_config() {
	local f=$1 mode=$2 a i=0 w
	shift 2
	local weights=(${SF_WEIGHTS:-})
	{
		printf 'listeners:\n  - address: 127.0.0.1:0\nmode: %s\nworkers: %s\n' "$mode" "${SF_WORKERS:-2}"
		printf 'upstreams:\n  - name: pool\n    balancer: %s\n    servers:\n' "${SF_BALANCER:-round_robin}"
		for a in "$@"; do
			w=${weights[$i]:-}
			printf '      - url: http://%s\n' "$a"
			[ -n "$w" ] && printf '        weight: %s\n' "$w"
			i=$((i + 1))
		done
		[ -n "${SF_GROUP:-}" ] && printf '%s\n' "$SF_GROUP"
		printf '    health:\n'
		if [ -n "${SF_HEALTH:-}" ]; then
			printf '%s\n' "$SF_HEALTH"
		else
			printf '      method: GET\n      path: /healthz\n'
			printf '      interval: 500ms\n      timeout: 400ms\n      rise: 1\n      fall: 3\n'
		fi
		printf 'routes:\n  - upstream: pool\n    replay: %s\n' "${SF_REPLAY:-safe}"
		[ -n "${SF_ROUTE:-}" ] && printf '%s\n' "$SF_ROUTE"
		printf 'sessions:\n%s\n' "${SF_SESSIONS:-  store: memory}"
		[ -n "${SF_EXTRA:-}" ] && printf '%s\n' "$SF_EXTRA"
	} >"$f"
}

# bstat ADDR FILTER: a value of a backend's /stats (raw; empty on failure).
bstat() {
	curl -sS --max-time 5 "http://$1/stats" 2>/dev/null | jq -r "$2" 2>/dev/null
}

# gstat ADDR FILTER: a value of a gateway's admin counters (raw; empty on
# failure).  The path is GW_STATS_PATH.
GW_STATS_PATH=${GW_STATS_PATH:-/mcpgw/stats}
gstat() {
	curl -sS --max-time 5 "http://$1$GW_STATS_PATH" 2>/dev/null | jq -r "$2" 2>/dev/null
}

# init_sum ADDR...: the sum of initialize_count over the replicas at ADDR
# (a replica that does not answer counts 0).
init_sum() {
	local a n s=0
	for a in "$@"; do
		n=$(bstat "$a" '.initialize_count // 0')
		s=$((s + ${n:-0}))
	done
	echo "$s"
}

# INIT_BODY: the initialize body sf_init sends (its bytes are compared
# with what replicas receive, so it is fixed).
INIT_BODY='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"itest-stateful","version":"1"}}}'

# sf_init URL [curl options...]: initialize (INIT_BODY) and
# notifications/initialized through a gateway; sets SID and NEGOTIATED.
# Returns 1 (a failure recorded) when either step fails.
sf_init() {
	local url=$1
	shift
	SID=""
	NEGOTIATED=""
	post "$url" "$INIT_BODY" "$@"
	if [ "$CODE" != 200 ]; then
		fail "initialize through $url: HTTP $CODE: $(printf '%s' "$BODY" | head -c 300)"
		return 1
	fi
	SID=$(hdr mcp-session-id)
	NEGOTIATED=$(jq_get '.result.protocolVersion')
	if [ -z "$SID" ]; then
		fail "initialize through $url: no Mcp-Session-Id in the answer"
		return 1
	fi
	post "$url" '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
		-H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED" "$@"
	if [ "$CODE" != 202 ]; then
		fail "notifications/initialized through $url: expected 202, got $CODE: $(printf '%s' "$BODY" | head -c 300)"
		return 1
	fi
	return 0
}

# lwho URL [curl options...]: whoami in session SID; sets WHO (the replica
# id, empty when the call failed: CODE tells) and SID_BACK (the
# Mcp-Session-Id of the answer, empty when there is none).
lwho() {
	local url=$1
	shift
	legacy "$url" 7 tools/call '{"name":"whoami","arguments":{}}' "$@"
	WHO=""
	[ "$CODE" = 200 ] && WHO=$(tool_text)
	SID_BACK=$(hdr mcp-session-id)
}

# sha_of STRING: lowercase hex SHA-256 of the bytes of STRING.
sha_of() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }

# rec_sha ADDR SHA: how many requests a replica (--record) received whose
# body's SHA-256 is SHA.
rec_sha() {
	rec "$1" | jq --arg s "$2" '[.requests[]? | select(.body_sha256 == $s)] | length' 2>/dev/null
}

# rec_sids ADDR: the distinct Mcp-Session-Id values a replica received.
rec_sids() {
	rec "$1" | jq -r '.requests[]?.headers[] | select(.[0] | ascii_downcase == "mcp-session-id") | .[1]' 2>/dev/null | sort -u
}

# proc_state PID: the state letter of a process (R, S, D, Z, ...), empty
# when it no longer exists.  One read of /proc: stop_wait's "kill -0 &&
# ! is_zombie" can see a zombie with kill -0 and then, once the shell has
# reaped it in between, find no /proc entry and take it for alive.
proc_state() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	s=${s##*) }
	echo "${s%% *}"
}

# kill_wait PID [SIGNAL [SECS]]: stop_wait without that race.  Sends
# SIGNAL (TERM) to a process this test started, waits (SECS, 10) until it
# is a zombie or gone, and reaps it: STOP_STATUS is its exit status
# (128+N for a signal).  Returns 1 if it is still running after SECS.
kill_wait() {
	local pid=$1 sig=${2:-TERM} secs=${3:-10} i=0 st
	STOP_STATUS=""
	kill -"$sig" "$pid" 2>/dev/null
	while [ $i -lt $((secs * 10)) ]; do
		st=$(proc_state "$pid")
		if [ -z "$st" ] || [ "$st" = Z ]; then break; fi
		sleep 0.1
		i=$((i + 1))
	done
	st=$(proc_state "$pid")
	if [ -n "$st" ] && [ "$st" != Z ]; then
		return 1
	fi
	wait "$pid" 2>/dev/null
	STOP_STATUS=$?
	return 0
}

# sf_stop_serve [PID]: stop_serve on kill_wait.
sf_stop_serve() {
	local pid=${1:-$G_PID}
	if ! kill_wait "$pid" TERM 15; then
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		fail "gateway pid $pid did not exit within 15 s of SIGTERM"
	elif [ "$STOP_STATUS" != 0 ]; then
		fail "gateway pid $pid exited with status $STOP_STATUS on SIGTERM"
	fi
}
