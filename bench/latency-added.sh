#!/usr/bin/env bash
# bench/latency-added.sh - the latency a proxy adds at a fixed request
# rate (issue 16, P3): `mcpgw load` in an open loop against one
# `mcpgw backend --era modern`, directly, through HAProxy (nbthread 1,
# http-reuse always) and through `mcpgw serve` (stateless, one worker),
# in one run.
#
#   bench/latency-added.sh [-r RATE] [-d SECONDS] [-k ROUNDS] [-c CONCURRENCY]
#                          [-s STRACE_REQUESTS] [-g CALLGRIND_REQUESTS] [-o OUTDIR]
#
# An open loop starts calls on a fixed schedule whatever the server does
# (RATE per second, default 2000, for SECONDS, default 10, at most
# CONCURRENCY in flight, default 64), so a slow path shows as latency,
# not as a lower rate; latencies are from the intended start (what a
# user saw: `mcpgw load`'s latency_ms).  The three paths alternate in
# each of ROUNDS rounds (default 3) after a warm-up, so background load
# falls on all three alike; in each round a proxy's addition is its
# p50/p99 minus the direct path's in the same round, and each cell is
# the median over the rounds.  The ratio of mcpgw's p99 addition to
# HAProxy's is the goal's figure (<= 1.00x).
#
# Latency on a shared machine moves with its load, so two figures it
# does not move are printed beside it, for the two proxies: system calls
# per request (`strace -c` on every thread, a separate open-loop pass of
# S requests at RATE: at a rate below saturation each request pays its
# own epoll_wait and wake-ups, which is part of the latency) and
# user-space instructions per request (callgrind, a fresh instance, G
# closed-loop requests on 8 connections after a warm-up).
# Output: a README.md table and the raw runs under OUTDIR (default
# bench/results/latency-added-<UTC date>/).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
R=2000 D=10 K=3 C=64 S=4000 G=2000 OUT=
while getopts r:d:k:c:s:g:o: o; do
	case $o in
	r) R=$OPTARG ;; d) D=$OPTARG ;; k) K=$OPTARG ;; c) C=$OPTARG ;;
	s) S=$OPTARG ;; g) G=$OPTARG ;; o) OUT=$OPTARG ;; *) exit 2 ;;
	esac
done
. "$top/bench/lib.sh"
bench_init latency-added haproxy jq strace node valgrind callgrind_control callgrind_annotate
load_avg=$(cut -d' ' -f1-3 /proc/loadavg)

"$MCPGW" backend --listen 127.0.0.1:0 --era modern --id lat \
	--log-level warn >"$work/be.out" 2>"$work/be.err" &
pids+=($!)
be=$(first_line "$work/be.out")

# haproxy_cfg PORT FILE: HAProxy on PORT in front of the backend
haproxy_cfg() {
	{
		haproxy_prologue 1
		cat <<EOF
frontend fe
    bind 127.0.0.1:$1
    default_backend be
backend be
    server b $be
EOF
	} >"$2"
}
hp=$(free_port)
haproxy_cfg "$hp" "$work/haproxy.cfg"
start_haproxy "$work/haproxy.cfg" "$hp" haproxy
hpid=$srv_pid

serve_cfg stateless "$be" "$work/serve.yaml"
start_serve "$work/serve.yaml" serve
mpid=$srv_pid gw=$srv_addr

url() { case $1 in direct) echo "http://$be/mcp" ;; haproxy) echo "http://127.0.0.1:$hp/mcp" ;; mcpgw) echo "http://$gw/mcp" ;; esac; }
pid_of() { case $1 in haproxy) echo "$hpid" ;; mcpgw) echo "$mpid" ;; esac; }
PATHS="direct haproxy mcpgw"

# load URL JSON ARGS...: one `mcpgw load` run (modern echo) writing JSON;
# fails unless every call succeeded
load() { mcpgw_load modern "$@"; }

# load_ok URL JSON ARGS...: load, then the calls that succeeded into
# JSON's name with .ok for .json
load_ok() {
	load "$@" || true
	jq -r '.total.ok' "$2" >"${2%.json}.ok"
}

# one PATH ROUND: an open-loop run; prints "achieved_rps p50 p99 ok
# requests shed" (shed: ticks dropped because all CONCURRENCY were busy)
one() {
	local j=$OUT/run-$1-$2.json
	load "$(url "$1")" "$j" --rate "$R" --duration "${D}s" --concurrency "$C" || true
	jq -r '.total | "\(.achieved_rps) \(.latency_ms.p50) \(.latency_ms.p99) \(.ok) \(.requests) \(.failures.shed)"' "$j"
}

for p in $PATHS; do # sanity and warm-up
	load "$(url "$p")" "$work/warm-$p.json" --rate "$R" --duration 2s --concurrency "$C" ||
		{ echo "warm-up through $p failed: $(jq -c .total.failures "$work/warm-$p.json" 2>/dev/null)" >&2; exit 1; }
done
for p in $PATHS; do : >"$OUT/runs-$p"; done
for k in $(seq 1 "$K"); do
	for p in $PATHS; do one "$p" "$k" >>"$OUT/runs-$p"; done
done
# the additions, round by round: "p50_added p99_added"
for p in haproxy mcpgw; do
	paste -d' ' "$OUT/runs-$p" "$OUT/runs-direct" |
		awk '{ h = NF / 2; printf "%.3f %.3f\n", $2 - $(h + 2), $3 - $(h + 3) }' >"$OUT/added-$p"
done

for p in haproxy mcpgw; do
	strace_per_req "$(pid_of "$p")" "@$work/strace-$p.ok" "$OUT/strace-$p.txt" \
		load_ok "$(url "$p")" "$work/strace-$p.json" --rate "$R" --requests "$S" --concurrency "$C" \
		>"$OUT/sys-$p"
	echo "$(cat "$work/strace-$p.ok") of $S" >"$OUT/sys-ok-$p"
done

# instr PROXY: instructions per request of a fresh PROXY under callgrind
instr() {
	local f=$work/cg-$1.out a u
	case $1 in
	haproxy)
		a=$(free_port)
		haproxy_cfg "$a" "$work/haproxy-cg.cfg"
		start_haproxy "$work/haproxy-cg.cfg" "$a" cg-haproxy "$f" || return 1
		u=http://127.0.0.1:$a/mcp ;;
	mcpgw)
		start_serve "$work/serve.yaml" cg-mcpgw "$f" || return 1
		u=http://$srv_addr/mcp ;;
	esac
	load "$u" "$work/cg-warm-$1.json" --concurrency 8 --requests 200 || true
	callgrind_per_req "$srv_pid" "$f" "$G" load "$u" "$work/cg-$1.json" --concurrency 8 --requests "$G"
}
for p in haproxy mcpgw; do
	echo - >"$OUT/instr-$p"
	if [ "$G" -gt 0 ]; then instr "$p" >"$OUT/instr-$p" || echo - >"$OUT/instr-$p"; fi
done

{
	echo "# latency added at $R req/s, open loop — $(date -u +%F), $(nproc) cores, loopback"
	echo
	echo "\`mcpgw load\` (mcpgw $("$MCPGW" version | head -n 1 | awk '{print $2}'), HTTP/1.1 keep-alive, modern tools/call echo),"
	echo "open loop at $R calls/s for ${D} s, at most $C in flight, latency from the intended start;"
	echo "one \`mcpgw backend --era modern\`; $(haproxy -v | head -n 1 | awk '{print $1, $3}') nbthread 1 http-reuse always;"
	echo "mcpgw serve, stateless, 1 worker.  $K rounds after a 2 s warm-up per path, the paths alternating;"
	echo "each cell the median over the rounds (additions: minus the direct path of the same round)."
	echo "System calls per request: strace -c, an open-loop pass of $S calls at $R/s (per call answered:"
	echo "strace slows the proxy and the loop sheds some; answered: haproxy $(cat "$OUT/sys-ok-haproxy"), mcpgw $(cat "$OUT/sys-ok-mcpgw"));"
	echo "instructions per request: callgrind, a fresh instance, $G requests on 8 connections."
	echo "Load average before the run: $load_avg."
	echo
	echo "| path | achieved req/s | shed (all rounds) | p50 ms | p99 ms | p50 added ms | p99 added ms | syscalls/req | instructions/req (user) |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
	for p in $PATHS; do
		a50=- a99=- sy=- in=-
		if [ "$p" != direct ]; then
			a50=$(median_col "$OUT/added-$p" 1) a99=$(median_col "$OUT/added-$p" 2)
			sy=$(cut -d' ' -f1 "$OUT/sys-$p") in=$(cat "$OUT/instr-$p" 2>/dev/null || echo -)
		fi
		printf '| %s | %.0f | %s | %s | %s | %s | %s | %s | %s |\n' "$p" \
			"$(median_col "$OUT/runs-$p" 1)" "$(awk '{ s += $6 } END { print s + 0 }' "$OUT/runs-$p")" \
			"$(median_col "$OUT/runs-$p" 2)" \
			"$(median_col "$OUT/runs-$p" 3)" "$a50" "$a99" "$sy" "$in"
	done
	echo
	echo "- mcpgw / HAProxy, p99 added: $(ratio "$(median_col "$OUT/added-mcpgw" 2)" "$(median_col "$OUT/added-haproxy" 2)")" \
		"(goal <= 1.00×); p50 added: $(ratio "$(median_col "$OUT/added-mcpgw" 1)" "$(median_col "$OUT/added-haproxy" 1)")"
	echo "- paired round by round (the paths alternate, so a slow spell hits all three), mcpgw's addition over HAProxy's:" \
		"p99 $(paired "$OUT/added-mcpgw" "$OUT/added-haproxy" 2 lt); p50 $(paired "$OUT/added-mcpgw" "$OUT/added-haproxy" 1 lt)"
	echo "- mcpgw / HAProxy, system calls per request: $(ratio "$(cut -d' ' -f1 "$OUT/sys-mcpgw")" "$(cut -d' ' -f1 "$OUT/sys-haproxy")");" \
		"instructions per request: $(ratio "$(cat "$OUT/instr-mcpgw" 2>/dev/null)" "$(cat "$OUT/instr-haproxy" 2>/dev/null)")"
	echo "- the most frequent system calls per request: haproxy $(cut -d' ' -f2- "$OUT/sys-haproxy"); mcpgw $(cut -d' ' -f2- "$OUT/sys-mcpgw")"
	echo "- per round, p99 ms: direct $(cut -d' ' -f3 "$OUT/runs-direct" | tr '\n' ' ')/ haproxy $(cut -d' ' -f3 "$OUT/runs-haproxy" | tr '\n' ' ')/ mcpgw $(cut -d' ' -f3 "$OUT/runs-mcpgw" | tr '\n' ' ')"
	# the least disturbed round of each path: background load only ever
	# adds latency, so each path's lowest p99 is the nearest to a quiet
	# machine's
	lo() { cut -d' ' -f3 "$OUT/runs-$1" | sort -g | head -n 1; }
	awk -v d="$(lo direct)" -v h="$(lo haproxy)" -v m="$(lo mcpgw)" 'BEGIN {
		printf "- lowest p99 over the rounds: direct %.3f, haproxy %.3f (%+.3f), mcpgw %.3f (%+.3f) ms; mcpgw / HAProxy added: %s\n",
			d, h, h - d, m, m - d, (h - d > 0 && m - d > 0 ? sprintf("%.2f×", (m - d) / (h - d)) : "-") }'
	echo
	echo "Raw: \`runs-PATH\` (achieved_rps p50 p99 ok requests shed per round), \`run-PATH-ROUND.json\` (mcpgw load's reports), \`strace-*.txt\`."
	echo
	echo "Rerun: \`MCPGW=_build/normal/mcpgw bench/latency-added.sh -r $R -d $D -k $K -c $C -s $S -g $G\`"
} | tee "$OUT/README.md"
echo "written: $OUT/README.md" >&2
