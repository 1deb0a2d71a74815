#!/usr/bin/env bash
# bench/load-vs-h2load.sh - how fast is `mcpgw load` as a load generator?
# Requests/s of `mcpgw load` and of h2load, in one run, against the same
# `mcpgw backend --era modern` replica, each client pinned to one core.
#
#   bench/load-vs-h2load.sh [-n REQUESTS] [-c CONCURRENCY] [-k REPEATS]
#                           [-g CALLGRIND_REQUESTS]
#
# The replica runs on core 1 (taskset), the client on core 0: one core
# each, so the client is the bottleneck only if it is slow.  Both clients
# keep CONCURRENCY requests in flight on keep-alive connections, over
# HTTP/1.1 and over h2c (one stream per connection for h2load, so the
# in-flight count is the same; mcpgw load multiplexes its virtual users'
# streams as its HTTP client does).  The request is a modern tools/call
# echo: h2load replays one fixed body with its SEP-2243 headers, mcpgw
# load builds each request (id, params._meta, Mcp-Method/Mcp-Name),
# reads each answer whole (a plain success with the JSON skim, which
# validates every byte and checks the id, isError and resultType; any
# other answer as a full tree), classifies it and records two latencies - work
# h2load does not do.  mcpgw load runs a closed loop with --requests, its
# rps is the report's achieved_rps.  Each cell is the median of REPEATS
# runs after a warm-up; the two clients alternate so background load hits
# both alike.  Beside the rates, a figure other load does not move: each
# client's user-space instructions per request under callgrind, over a
# run of G requests (-g, default 5000; 0 skips it; start-up included,
# which is why G should be large).  The table is printed and kept in
# bench/results/load-vs-h2load-<UTC date>.md.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
N=50000 C=32 K=3 G=5000
while getopts n:c:k:g: o; do
	case $o in
	n) N=$OPTARG ;; c) C=$OPTARG ;; k) K=$OPTARG ;; g) G=$OPTARG ;; *) exit 2 ;;
	esac
done
MCPGW=${MCPGW:-$top/_build/normal/mcpgw}
[ -x "$MCPGW" ] || { echo "build first (scripts/build.sh _build/normal) or set MCPGW" >&2; exit 2; }
for t in h2load taskset jq curl valgrind callgrind_annotate; do
	command -v "$t" >/dev/null || { echo "$t missing: run scripts/setup.sh" >&2; exit 2; }
done
[ "$(nproc)" -ge 2 ] || { echo "needs 2 cores (one for the server, one for the client)" >&2; exit 2; }
CLIENT_CPU=0 SERVER_CPU=1

. "$top/bench/lib.sh"

taskset -c $SERVER_CPU "$MCPGW" backend --listen 127.0.0.1:0 --era modern \
	--id bench --log-level warn >"$work/be.out" 2>"$work/be.err" &
pids+=($!)
addr=$(first_line "$work/be.out")
URL=http://$addr/mcp

printf '%s' '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"h2load","version":"1"}}}}' >"$work/body.json"
HDRS=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream'
	-H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo')
out=$(curl -sS --max-time 5 "${HDRS[@]}" --data-binary "@$work/body.json" "$URL")
case $out in *'"text":"hello"'*) ;; *) echo "sanity check failed: $out" >&2; exit 1 ;; esac

# h2 PROTO N: one h2load run on the client core; prints "rps ok"
h2() {
	local args=(-n "$2" -c "$C" -m 1 -d "$work/body.json" "${HDRS[@]}")
	[ "$1" = h1 ] && args+=(--h1)
	taskset -c $CLIENT_CPU ${WRAP:-} h2load "${args[@]}" "$URL" >"$work/h2load.out" 2>&1 || true
	awk '/^finished in/ { gsub(",", "", $4); r = $4 }
	     /^status codes:/ { o = $3 }
	     END { print (r == "" ? 0 : r), (o == "" ? 0 : o) }' "$work/h2load.out"
}

# ml PROTO N: one mcpgw load run on the client core; prints "rps ok"
ml() {
	local args=(--target "$URL" --dialect modern --tool echo --arg text=hello
		--concurrency "$C" --requests "$2" --timeout 10s --quiet
		--json "$work/ml.json")
	[ "$1" = h2c ] && args+=(--http2)
	taskset -c $CLIENT_CPU ${WRAP:-} "$MCPGW" load "${args[@]}" >/dev/null 2>"$work/ml.err" || true
	jq -r '"\(.total.achieved_rps) \(.total.ok)"' "$work/ml.json" 2>/dev/null || echo "0 0"
}

median() { sort -n -k1,1 "$1" | awk -v m=$(((K + 1) / 2)) 'NR == m'; }

# instr CLIENT PROTO: the client's instructions per request over one run
# of G requests under callgrind (h2 and ml prefix their command with
# $WRAP); "-" when skipped or when not all G succeeded
instr() {
	local f=$work/cg-$1-$2.out got
	[ "$G" -gt 0 ] || { echo -; return; }
	got=$(WRAP="valgrind --tool=callgrind --callgrind-out-file=$f" "$1" "$2" "$G" | cut -d' ' -f2)
	[ "$got" = "$G" ] || { echo -; return; }
	awk -v t="$(callgrind_total "$f")" -v n="$G" 'BEGIN { printf "%.0f\n", t / n }'
}

declare -A RES CG
for proto in h1 h2c; do
	CG[h2-$proto]=$(instr h2 "$proto")
	CG[ml-$proto]=$(instr ml "$proto")
done
out=$top/bench/results/load-vs-h2load-$(date -u +%Y%m%d-%H%M%S).md
mkdir -p "$top/bench/results"
{
	echo "# load generator requests/s: mcpgw load vs h2load — $(date -u +%F), loopback"
	echo
	echo "mcpgw $("$MCPGW" version | head -n 1 | awk '{print $2}'), $(h2load --version | head -n 1 | awk '{print $2}');"
	echo "one \`mcpgw backend --era modern\` on core $SERVER_CPU, the client on core $CLIENT_CPU (taskset);"
	echo "$N requests, $C in flight on keep-alive connections; modern tools/call echo;"
	echo "median of $K runs after a warm-up, the clients alternating."
	echo "Load average before the run: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo
	echo "Instructions per request: callgrind, one run of $G requests per client (start-up included)."
	echo
	echo "| client | proto | req/s | ok | instructions/req (user) |"
	echo "|---|---|---|---|---|"
	for proto in h1 h2c; do
		h2 "$proto" $((N / 10)) >/dev/null
		ml "$proto" $((N / 10)) >/dev/null
		: >"$work/h2-$proto"
		: >"$work/ml-$proto"
		for _ in $(seq 1 "$K"); do
			h2 "$proto" "$N" >>"$work/h2-$proto"
			ml "$proto" "$N" >>"$work/ml-$proto"
		done
		RES[h2-$proto]=$(median "$work/h2-$proto")
		RES[ml-$proto]=$(median "$work/ml-$proto")
		set -- ${RES[h2-$proto]}
		printf '| h2load | %s | %.0f | %s | %s |\n' "$proto" "$1" "$2" "${CG[h2-$proto]}"
		set -- ${RES[ml-$proto]}
		printf '| mcpgw load | %s | %.0f | %s | %s |\n' "$proto" "$1" "$2" "${CG[ml-$proto]}"
	done
	echo
	for proto in h1 h2c; do
		set -- ${RES[ml-$proto]}
		m=$1
		set -- ${RES[h2-$proto]}
		awk -v p="$proto" -v m="$m" -v h="$1" -v r="$(ratio "${CG[ml-$proto]}" "${CG[h2-$proto]}")" 'BEGIN {
			printf "- %s: mcpgw load / h2load req/s %s; instructions per request %s\n", p,
				(h > 0 ? sprintf("%.2fx", m / h) : "n/a"), r }'
	done
} | tee "$out"
echo "written: $out" >&2
