#!/usr/bin/env bash
# bench/access-log-cost.sh - what the access log costs `mcpgw serve`
# (stateless, one worker): instructions per request counted by callgrind
# (the robust figure: it does not depend on what else the machine does)
# and, indicative only on a shared machine, h2load req/s and CPU time per
# request, for the access log off, the text line on stderr, the text line
# in a file and the JSON line in a file, side by side in one run.
#
#   bench/access-log-cost.sh [-n REQUESTS] [-k REPEATS] [-p h1|h2c] [-o DIR]
#
# One `mcpgw backend --era modern` replica; h2load sends modern
# tools/call echo requests with their SEP-2243 headers and a traceparent
# (8 connections; h2c: 8 streams each).  callgrind: a warm-up of 200
# requests, counters zeroed, REQUESTS requests, graceful stop; what the
# gateway executed from the zeroing on, divided by REQUESTS.  h2load:
# REPEATS rounds going through the four variants in turn (a change in
# background load hits all alike), 4 x REQUESTS requests each, the median
# req/s; CPU us/request is the gateway's utime+stime (/proc) over the
# requests.  Results (table and the h2load outputs) go to DIR (default
# bench/results/access-log-<UTC date>).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
N=4000 K=3 P=h1 OUT=""
while getopts n:k:p:o: o; do
	case $o in
	n) N=$OPTARG ;; k) K=$OPTARG ;; p) P=$OPTARG ;; o) OUT=$OPTARG ;; *) exit 2 ;;
	esac
done
case $P in h1 | h2c) ;; *) echo "-p h1 or h2c" >&2; exit 2 ;; esac
MCPGW=${MCPGW:-$top/_build/normal/mcpgw}
[ -x "$MCPGW" ] || { echo "build first (scripts/build.sh _build/normal) or set MCPGW" >&2; exit 2; }
for t in valgrind callgrind_annotate callgrind_control h2load; do
	command -v "$t" >/dev/null || { echo "$t missing: run scripts/setup.sh" >&2; exit 2; }
done
OUT=${OUT:-$top/bench/results/access-log-$(date -u +%Y%m%d)}
mkdir -p "$OUT"

. "$top/bench/lib.sh"

"$MCPGW" backend --listen 127.0.0.1:0 --era modern --id r1 --log-level warn \
	>"$work/r.out" 2>"$work/r.err" &
pids+=($!)
replica=$(first_line "$work/r.out")

printf '%s' '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' >"$work/body.json"
LOAD=(-c 8 -d "$work/body.json" -H 'Content-Type: application/json'
	-H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28'
	-H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo'
	-H 'traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')
if [ "$P" = h1 ]; then LOAD+=(--h1); else LOAD+=(-m 8); fi

VARIANTS=(off text-stderr text-file json-file)
# args VARIANT: the gateway's access log options
args() {
	case $1 in
	off) echo "--log-level warn" ;;
	text-stderr) echo "--log-level info --access-log" ;;
	text-file) echo "--log-level warn --access-log-file $work/$1.log" ;;
	json-file) echo "--log-level warn --access-log-format json --access-log-file $work/$1.log" ;;
	esac
}

# --- callgrind ----------------------------------------------------------------------
declare -A IR
for v in "${VARIANTS[@]}"; do
	rm -f "$work/$v.log"
	# shellcheck disable=SC2046
	valgrind --tool=callgrind --callgrind-out-file="$work/$v.cg" \
		"$MCPGW" serve --listen 127.0.0.1:0 --upstream "http://$replica" --workers 1 \
		$(args "$v") >"$work/$v.out" 2>"$work/$v.err" &
	gpid=$!
	pids+=($gpid)
	gw=$(first_line "$work/$v.out" 60)
	h2load -n 200 "${LOAD[@]}" "http://$gw/mcp" >"$work/$v.warm" 2>&1 || true
	callgrind_control -z "$gpid" >/dev/null
	h2load -n "$N" "${LOAD[@]}" "http://$gw/mcp" >"$OUT/callgrind-$v-h2load.txt" 2>&1 || true
	ok=$(sed -n 's/^requests: .* \([0-9]*\) succeeded.*/\1/p' "$OUT/callgrind-$v-h2load.txt")
	[ "$ok" = "$N" ] || { echo "$v: $ok of $N requests succeeded" >&2; exit 1; }
	kill -TERM "$gpid"
	wait "$gpid" 2>/dev/null || true
	IR[$v]=$(callgrind_total "$work/$v.cg")
	[ -n "${IR[$v]}" ] || { echo "$v: no callgrind total" >&2; exit 1; }
	lines=$(cat "$work/$v.log" 2>/dev/null | wc -l || true)
	echo "callgrind $v: ${IR[$v]} instructions, access lines in the file: $lines" >&2
done
head -n 1 "$work/json-file.log" >"$OUT/json-line-example.txt" 2>/dev/null || true
head -n 1 "$work/text-file.log" >"$OUT/text-line-example.txt" 2>/dev/null || true

# --- h2load, native ---------------------------------------------------------------------
declare -A GW GPID
for v in "${VARIANTS[@]}"; do
	rm -f "$work/$v.log"
	# shellcheck disable=SC2046
	"$MCPGW" serve --listen 127.0.0.1:0 --upstream "http://$replica" --workers 1 \
		$(args "$v") >"$work/n-$v.out" 2>"$work/n-$v.err" &
	GPID[$v]=$!
	pids+=($!)
	GW[$v]=$(first_line "$work/n-$v.out")
	h2load -n 2000 "${LOAD[@]}" "http://${GW[$v]}/mcp" >/dev/null 2>&1 || true
done
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
declare -A RPS CPU
for k in $(seq 1 "$K"); do
	for v in "${VARIANTS[@]}"; do
		f=$OUT/h2load-$v-$k.txt
		t0=$(ticks "${GPID[$v]}")
		h2load -n $((4 * N)) "${LOAD[@]}" "http://${GW[$v]}/mcp" >"$f" 2>&1 || true
		t1=$(ticks "${GPID[$v]}")
		ok=$(sed -n 's/^requests: .* \([0-9]*\) succeeded.*/\1/p' "$f")
		[ "$ok" = $((4 * N)) ] || { echo "$v: $ok of $((4 * N)) requests succeeded" >&2; exit 1; }
		RPS[$v]="${RPS[$v]:-} $(sed -n 's/^finished in .*, \([0-9.]*\) req\/s.*/\1/p' "$f")"
		CPU[$v]="${CPU[$v]:-} $(awk -v a="$t0" -v b="$t1" -v hz="$hz" -v n=$((4 * N)) 'BEGIN { printf "%.1f", (b - a) * 1e6 / hz / n }')"
	done
done
median() { printf '%s\n' $1 | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

{
	echo "# Cost of the access log ($P from the client, one worker, $(date -u +%Y-%m-%dT%H:%MZ))"
	echo
	echo "$("$MCPGW" version | head -n 1), valgrind $(valgrind --version), $(nproc) CPUs shared"
	echo
	echo "Command: \`bench/access-log-cost.sh -n $N -k $K -p $P\`"
	echo
	echo "| access log | instructions per request (callgrind) | vs off | req/s (h2load, median of $K) | vs off | CPU us/request (median) | vs off |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	ro=$(median "${RPS[off]}") co=$(median "${CPU[off]}")
	for v in "${VARIANTS[@]}"; do
		r=$(median "${RPS[$v]}") c=$(median "${CPU[$v]}")
		awk -v v="$v" -v i="${IR[$v]}" -v i0="${IR[off]}" -v n="$N" -v r="$r" -v r0="$ro" -v c="$c" -v c0="$co" 'BEGIN {
			printf "| %s | %.0f | %.3fx | %.0f | %.3fx | %.1f | %.3fx |\n", v, i / n, i / i0, r, r / r0, c, c / c0 }'
	done
	echo
	echo "req/s and CPU time: every run, in round order: "
	for v in "${VARIANTS[@]}"; do echo "- $v: req/s${RPS[$v]}; CPU us/request${CPU[$v]}"; done
	echo
	echo "The machine is shared: req/s and CPU time are indicative only; the"
	echo "instruction counts are the figure to compare."
} | tee "$OUT/README.md"
echo "(kept in $OUT)" >&2
