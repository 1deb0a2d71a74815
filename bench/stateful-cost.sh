#!/usr/bin/env bash
# bench/stateful-cost.sh - what a legacy session costs the gateway (issue
# 16, P4), and the memory a session holds, in one run against one
# `mcpgw backend --era dual`:
#
#   mcpgw-stateless  a modern tools/call through `mcpgw serve` stateless
#   mcpgw-stateful   a legacy tools/call inside a session through
#                    `mcpgw serve` stateful (memory store): session lookup,
#                    id rewriting, the in-flight record
#   haproxy-sticky   the same legacy calls through HAProxy (nbthread 1)
#                    with a stick table on Mcp-Session-Id
#                    (bench/haproxy-sticky.sh generates its configuration)
#
#   bench/stateful-cost.sh [-n REQUESTS] [-c USERS] [-k ROUNDS]
#                          [-s STRACE_REQUESTS] [-g CALLGRIND_REQUESTS]
#                          [-m SESSIONS] [-o OUTDIR]
#
# The client is `mcpgw load`, closed loop, C virtual users (default 32),
# N calls (default 20000) per run; legacy users initialize once each (C
# sessions) and then call with their session.  Per cell:
#   CPU µs/req    the proxy's CPU time (/proc/PID/task/*/schedstat) over
#                 the run / calls; median of K rounds (default 3), the
#                 cells alternating after a warm-up
#   syscalls/req  `strace -c` on every thread, a separate run of S calls
#   instructions/req  callgrind on a fresh instance, G calls (8 users)
#                 after a warm-up: other load does not move it
# and the ratios the goal names: stateful / stateless, stateful /
# HAProxy-sticky (<= 1.2x each).
#
# Memory per session: a fresh stateful gateway, M sessions (default
# 10000) opened by a small node client (initialize only, never deleted),
# after 200 to warm up; the growth of the gateway's VmRSS and of the
# store's own memory_bytes (GET /mcpgw/stats) over the M, per session,
# beside the size of the stored initialize body.
# Output: a README.md table and the raw runs under OUTDIR (default
# bench/results/stateful-cost-<UTC date>/).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
N=20000 C=32 K=3 S=4000 G=2000 M=10000 OUT=
while getopts n:c:k:s:g:m:o: o; do
	case $o in
	n) N=$OPTARG ;; c) C=$OPTARG ;; k) K=$OPTARG ;; s) S=$OPTARG ;; g) G=$OPTARG ;;
	m) M=$OPTARG ;; o) OUT=$OPTARG ;; *) exit 2 ;;
	esac
done
. "$top/bench/lib.sh"
bench_init stateful-cost haproxy jq strace curl node valgrind callgrind_control callgrind_annotate
load_avg=$(cut -d' ' -f1-3 /proc/loadavg)

"$MCPGW" backend --listen 127.0.0.1:0 --era dual --id sf \
	--log-level warn >"$work/be.out" 2>"$work/be.err" &
pids+=($!)
be=$(first_line "$work/be.out")

serve_cfg stateless "$be" "$work/sl.yaml"
serve_cfg stateful "$be" "$work/sf.yaml"
start_serve "$work/sl.yaml" sl
sl_pid=$srv_pid sl_addr=$srv_addr
start_serve "$work/sf.yaml" sf
sf_pid=$srv_pid sf_addr=$srv_addr

# sticky_cfg PORT DIR: bench/haproxy-sticky.sh's configuration, one thread
sticky_cfg() {
	HAPROXY_NBTHREAD=1 HAPROXY_CFG_ONLY=1 sh "$top/bench/haproxy-sticky.sh" \
		"127.0.0.1:$1" "$2" "${be##*:}"
}
hp=$(free_port)
sticky_cfg "$hp" "$work/hs"
start_haproxy "$work/hs/haproxy.cfg" "$hp" hs
hpid=$srv_pid

CELLS="mcpgw-stateless mcpgw-stateful haproxy-sticky"
url() {
	case $1 in
	mcpgw-stateless) echo "http://$sl_addr/mcp" ;;
	mcpgw-stateful) echo "http://$sf_addr/mcp" ;;
	haproxy-sticky) echo "http://127.0.0.1:$hp/mcp" ;;
	esac
}
pid_of() { case $1 in mcpgw-stateless) echo "$sl_pid" ;; mcpgw-stateful) echo "$sf_pid" ;; haproxy-sticky) echo "$hpid" ;; esac; }
dialect() { case $1 in mcpgw-stateless) echo modern ;; *) echo legacy ;; esac; }

# load CELL URL JSON ARGS...: one closed-loop `mcpgw load` run of CELL's
# dialect (echo) writing JSON; fails unless every call succeeded
load() {
	local d
	d=$(dialect "$1")
	shift
	mcpgw_load "$d" "$@"
}

# one CELL ROUND: prints "rps cpu_us_per_req ok requests"
one() {
	local j=$OUT/run-$1-$2.json c0 c1
	c0=$(cpu_ns "$(pid_of "$1")")
	load "$1" "$(url "$1")" "$j" --concurrency "$C" --requests "$N" || true
	c1=$(cpu_ns "$(pid_of "$1")")
	jq -r --arg c0 "$c0" --arg c1 "$c1" '.total |
		"\(.achieved_rps) \((($c1 | tonumber) - ($c0 | tonumber)) / 1000 / .requests) \(.ok) \(.requests)"' "$j"
}

for c in $CELLS; do
	load "$c" "$(url "$c")" "$work/warm-$c.json" --concurrency "$C" --requests $((N / 10 > 200 ? N / 10 : 200)) ||
		{ echo "warm-up through $c failed: $(jq -c .total.failures "$work/warm-$c.json" 2>/dev/null)" >&2; exit 1; }
	: >"$OUT/runs-$c"
done
for k in $(seq 1 "$K"); do
	for c in $CELLS; do one "$c" "$k" >>"$OUT/runs-$c"; done
done
for c in $CELLS; do
	strace_per_req "$(pid_of "$c")" "$S" "$OUT/strace-$c.txt" \
		load "$c" "$(url "$c")" "$work/strace-$c.json" --concurrency "$C" --requests "$S" >"$OUT/sys-$c"
done

# instr CELL: instructions per call of a fresh CELL under callgrind
instr() {
	local f=$work/cg-$1.out a u
	case $1 in
	haproxy-sticky)
		a=$(free_port)
		sticky_cfg "$a" "$work/hs-cg"
		start_haproxy "$work/hs-cg/haproxy.cfg" "$a" "cg-$1" "$f" || return 1
		u=http://127.0.0.1:$a/mcp ;;
	mcpgw-*)
		a=sl
		[ "$1" = mcpgw-stateful ] && a=sf
		start_serve "$work/$a.yaml" "cg-$1" "$f" || return 1
		u=http://$srv_addr/mcp ;;
	esac
	load "$1" "$u" "$work/cg-warm-$1.json" --concurrency 8 --requests 200 || true
	callgrind_per_req "$srv_pid" "$f" "$G" load "$1" "$u" "$work/cg-$1.json" --concurrency 8 --requests "$G"
}
for c in $CELLS; do
	echo - >"$OUT/instr-$c"
	if [ "$G" -gt 0 ]; then instr "$c" >"$OUT/instr-$c" || echo - >"$OUT/instr-$c"; fi
done

# --- memory per session ---------------------------------------------------------------
start_serve "$work/sf.yaml" mem
mem_pid=$srv_pid mem_addr=$srv_addr
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench-session-memory","version":"1.0"}}}'
# sessions COUNT: opens COUNT sessions (initialize only) on 8 keep-alive
# connections; fails unless every one got a session id
sessions() {
	timeout 300 node -e '
const http = require("http");
const [addr, count, body] = process.argv.slice(1);
const [host, port] = addr.split(":");
const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
let started = 0, done = 0, ok = 0;
function one() {
	if (started >= +count) return;
	started++;
	const req = http.request({ host, port, path: "/mcp", method: "POST", agent, headers: {
		"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Content-Length": Buffer.byteLength(body) } }, (res) => {
		res.resume();
		res.on("end", () => {
			if (res.statusCode === 200 && res.headers["mcp-session-id"]) ok++;
			if (++done === +count) { console.log(ok); process.exit(ok === +count ? 0 : 1); }
			one();
		});
	});
	req.on("error", (e) => { console.error(e.message); process.exit(1); });
	req.end(body);
}
for (let i = 0; i < 8; i++) one();' "$mem_addr" "$1" "$INIT" >/dev/null
}
rss_kib() { awk '/^VmRSS:/ { print $2 }' /proc/"$1"/status; }
store_stat() { # KEY: sessions.store.KEY of the memory gateway's stats
	curl -sS --max-time 5 "http://$mem_addr/mcpgw/stats" | jq -r ".sessions.store.$1"
}
sessions 200
r0=$(rss_kib "$mem_pid") b0=$(store_stat memory_bytes) a0=$(store_stat active)
sessions "$M"
r1=$(rss_kib "$mem_pid") b1=$(store_stat memory_bytes) a1=$(store_stat active)
echo "$r0 $r1 $b0 $b1 $a0 $a1" >"$OUT/memory"

{
	echo "# stateful cost per request and memory per session — $(date -u +%F), $(nproc) cores, loopback"
	echo
	echo "\`mcpgw load\` (mcpgw $("$MCPGW" version | head -n 1 | awk '{print $2}'), HTTP/1.1 keep-alive), closed loop, $C users, $N echo calls per run;"
	echo "one \`mcpgw backend --era dual\`; mcpgw serve 1 worker (stateless: modern calls; stateful, memory store:"
	echo "legacy calls in $C sessions); $(haproxy -v | head -n 1 | awk '{print $1, $3}') nbthread 1 with bench/haproxy-sticky.sh's stick table (legacy)."
	echo "Median of $K rounds after a warm-up, the cells alternating; CPU from /proc/PID/task/*/schedstat;"
	echo "system calls from strace -c on a separate run of $S calls; user-space instructions from"
	echo "callgrind on a fresh instance, $G calls (8 users) after a warm-up: a count other load does not move."
	echo "Legacy users each send an initialize and notifications/initialized first (not counted as calls:"
	echo "the per-request figures carry them, 2 × users / calls more requests than counted)."
	echo "Load average before the run: $load_avg."
	echo
	echo "| cell | req/s (client-bound) | CPU µs/req | syscalls/req | instructions/req (user) |"
	echo "|---|---:|---:|---:|---:|"
	for c in $CELLS; do
		printf '| %s | %.0f | %.1f | %s | %s |\n' "$c" "$(median_col "$OUT/runs-$c" 1)" \
			"$(median_col "$OUT/runs-$c" 2)" "$(cut -d' ' -f1 "$OUT/sys-$c")" "$(cat "$OUT/instr-$c")"
	done
	echo
	cpu() { median_col "$OUT/runs-$1" 2; }
	sys() { cut -d' ' -f1 "$OUT/sys-$1"; }
	ins() { cat "$OUT/instr-$1"; }
	echo "| ratio (goal <= 1.20×) | CPU | syscalls | instructions |"
	echo "|---|---:|---:|---:|"
	for peer in mcpgw-stateless haproxy-sticky; do
		echo "| mcpgw-stateful / $peer | $(ratio "$(cpu mcpgw-stateful)" "$(cpu $peer)") |" \
			"$(ratio "$(sys mcpgw-stateful)" "$(sys $peer)") | $(ratio "$(ins mcpgw-stateful)" "$(ins $peer)") |"
	done
	echo
	echo "System calls per request, the five most frequent (strace -c):"
	echo
	for c in $CELLS; do echo "- $c: $(cut -d' ' -f2- "$OUT/sys-$c")"; done
	echo
	echo "## Memory per legacy session (memory store)"
	echo
	echo "A fresh stateful gateway; $M sessions opened by initialize alone (never deleted) after 200 to warm up;"
	echo "the stored initialize is the client's body, ${#INIT} bytes here."
	echo
	read -r r0 r1 b0 b1 a0 a1 <"$OUT/memory"
	echo "| measure | before | after | per session |"
	echo "|---|---:|---:|---:|"
	awk -v a="$a0" -v b="$a1" 'BEGIN { printf "| sessions active | %d | %d | |\n", a, b }'
	awk -v a="$r0" -v b="$r1" -v n="$M" 'BEGIN { printf "| VmRSS KiB | %d | %d | %.2f KiB |\n", a, b, (b - a) / n }'
	awk -v a="$b0" -v b="$b1" -v n="$M" 'BEGIN { printf "| store memory_bytes | %d | %d | %.2f KiB (%.0f B) |\n", a, b, (b - a) / n / 1024, (b - a) / n }'
	echo
	echo "Goal: <= 1 KiB plus the stored initialize ($(awk -v l=${#INIT} 'BEGIN { printf "%.2f", 1 + l / 1024 }') KiB here)."
	echo
	echo "Raw: \`runs-CELL\` (achieved_rps cpu_us_per_req ok requests per round), \`run-CELL-ROUND.json\`, \`strace-*.txt\`, \`memory\`."
	echo
	echo "Rerun: \`MCPGW=_build/normal/mcpgw bench/stateful-cost.sh -n $N -c $C -k $K -s $S -g $G -m $M\`"
} | tee "$OUT/README.md"
echo "written: $OUT/README.md" >&2
