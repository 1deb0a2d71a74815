#!/usr/bin/env bash
# bench/gateway-rps.sh - requests/s and p99 latency of `mcpgw serve`
# (stateless) side by side with HAProxy, in one run, on the same
# `mcpgw backend --era modern` replicas, driven by h2load.
#
#   bench/gateway-rps.sh [-n REQUESTS] [-c CONNECTIONS] [-m STREAMS]
#                        [-r REPLICAS] [-w WORKERS] [-k REPEATS]
#
# Three targets, each over HTTP/1.1 (keep-alive) and h2c from the client:
#   direct   h2load straight to replica 1 (one replica only: a reference
#            for the cost of the replicas, not a like-for-like peer)
#   mcpgw    mcpgw serve --upstream ... (round robin, HTTP/1.1 keep-alive
#            pools to the replicas, WORKERS event-loop threads)
#   haproxy  HAProxy in HTTP mode, balance roundrobin, keep-alive and
#            connection reuse to the same replicas, WORKERS threads
# The request is a modern tools/call echo with its SEP-2243 headers, so
# mcpgw validates each one (its default) while HAProxy forwards blindly.
# h2load's per-request log (--log-file) gives the latency percentiles
# (h2load itself prints only mean and sd).  Each cell is the median of
# REPEATS runs (by req/s) after a warm-up run; the repeats go round the
# three targets in turn, so a change in background load hits all three
# alike.  Everything runs on
# 127.0.0.1, so load generator, proxies and replicas share the CPUs:
# compare ratios, not absolute numbers.  The table is printed and kept in
# bench/results/gateway-rps-<UTC date>.md.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
N=20000 C=32 M=8 R=2 W=0 K=3
while getopts n:c:m:r:w:k: o; do
	case $o in
	n) N=$OPTARG ;; c) C=$OPTARG ;; m) M=$OPTARG ;; r) R=$OPTARG ;;
	w) W=$OPTARG ;; k) K=$OPTARG ;; *) exit 2 ;;
	esac
done
[ "$W" -gt 0 ] || W=$(nproc)
MCPGW=${MCPGW:-$top/_build/normal/mcpgw}
[ -x "$MCPGW" ] || { echo "build first (scripts/build.sh _build/normal) or set MCPGW" >&2; exit 2; }
for t in h2load haproxy curl node; do
	command -v "$t" >/dev/null || { echo "$t missing: run scripts/setup.sh" >&2; exit 2; }
done

. "$top/bench/lib.sh"

# --- replicas ---------------------------------------------------------------------
replicas=()
for i in $(seq 1 "$R"); do
	"$MCPGW" backend --listen 127.0.0.1:0 --era modern --id "r$i" --log-level warn \
		>"$work/r$i.out" 2>"$work/r$i.err" &
	pids+=($!)
	replicas+=("$(first_line "$work/r$i.out")")
done

# --- mcpgw serve --------------------------------------------------------------------
ups=()
for a in "${replicas[@]}"; do ups+=(--upstream "http://$a"); done
"$MCPGW" serve --listen 127.0.0.1:0 "${ups[@]}" --workers "$W" --log-level warn \
	>"$work/serve.out" 2>"$work/serve.err" &
pids+=($!)
gw=$(first_line "$work/serve.out")

# --- HAProxy: the equivalent reverse proxy --------------------------------------------
hp=$(free_port)
{
	haproxy_prologue "$W"
	cat <<EOF
frontend fe
    bind 127.0.0.1:$hp
    default_backend replicas
backend replicas
    balance roundrobin
EOF
	i=0
	for a in "${replicas[@]}"; do
		i=$((i + 1))
		echo "    server r$i $a"
	done
} >"$work/haproxy.cfg"
haproxy -c -f "$work/haproxy.cfg" >"$work/haproxy-check.out" 2>&1 ||
	{ cat "$work/haproxy-check.out" >&2; exit 1; }
haproxy -db -f "$work/haproxy.cfg" >"$work/haproxy.out" 2>&1 &
pids+=($!)
wait_port "$hp" || { echo "haproxy did not listen" >&2; exit 1; }

# --- the request ----------------------------------------------------------------------------
printf '%s' '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' >"$work/body.json"
HDRS=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream'
	-H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo')
for url in "http://${replicas[0]}/mcp" "http://$gw/mcp" "http://127.0.0.1:$hp/mcp"; do
	out=$(curl -sS --max-time 5 "${HDRS[@]}" --data-binary "@$work/body.json" "$url")
	case $out in *'"text":"hello"'*) ;; *) echo "sanity check failed on $url: $out" >&2; exit 1 ;; esac
done

# one LABEL PROTO URL: one h2load run; prints "rps ok p50_ms p99_ms"
one() {
	local proto=$2 url=$3 n=${4:-$N} args
	args=(-n "$n" -c "$C" -d "$work/body.json" "${HDRS[@]}" --log-file "$work/h2load.log")
	if [ "$proto" = h1 ]; then args+=(--h1); else args+=(-m "$M"); fi
	: >"$work/h2load.log"
	h2load "${args[@]}" "$url" >"$work/h2load.out" 2>&1 || true
	local rps ok pct
	rps=$(awk '/^finished in/ { gsub(",", "", $4); print $4 }' "$work/h2load.out")
	ok=$(awk '/^status codes:/ { print $3 }' "$work/h2load.out")
	pct=$(awk -F'\t' '$2 >= 200 && $2 < 300 { print $3 }' "$work/h2load.log" | sort -n |
		awk '{ v[NR] = $1 } END {
			if (NR == 0) { print "- -"; exit }
			i50 = int(NR * 0.50); if (i50 < 1) i50 = 1
			i99 = int(NR * 0.99 + 0.999999); if (i99 > NR) i99 = NR
			printf "%.2f %.2f\n", v[i50] / 1000, v[i99] / 1000 }')
	echo "${rps:-0} ${ok:-0} $pct"
}

target_url() { # TARGET
	case $1 in
	direct) echo "http://${replicas[0]}/mcp" ;;
	mcpgw) echo "http://$gw/mcp" ;;
	haproxy) echo "http://127.0.0.1:$hp/mcp" ;;
	esac
}
TARGETS="direct mcpgw haproxy"

# measure PROTO: warm-up of each target, then K rounds over the targets;
# leaves the runs in $work/runs-TARGET-PROTO
measure() {
	local proto=$1 t k
	for t in $TARGETS; do
		one "$t" "$proto" "$(target_url "$t")" $((N / 10 > 100 ? N / 10 : 100)) >/dev/null
		: >"$work/runs-$t-$proto"
	done
	for k in $(seq 1 "$K"); do
		for t in $TARGETS; do
			one "$t" "$proto" "$(target_url "$t")" >>"$work/runs-$t-$proto"
		done
	done
}
# median TARGET PROTO: the median run by req/s
median() {
	sort -n -k1,1 "$work/runs-$1-$2" | awk -v m=$(((K + 1) / 2)) 'NR == m'
}

declare -A RES
out=$top/bench/results/gateway-rps-$(date -u +%Y%m%d-%H%M%S).md
mkdir -p "$top/bench/results"
{
	echo "# gateway requests/s and p99 — $(date -u +%F), $(nproc) cores, loopback"
	echo
	echo "mcpgw $("$MCPGW" version | head -n 1 | awk '{print $2}') ($W workers) vs $(haproxy -v | head -n 1 | awk '{print $1, $3}') (nbthread $W),"
	echo "$R \`mcpgw backend --era modern\` replicas, $(h2load --version | head -n 1 | awk '{print $2}'):"
	echo "h2load -n $N -c $C (h2c: -m $M); modern tools/call echo with SEP-2243 headers;"
	echo "median of $K runs after a warm-up; p50/p99 from h2load --log-file (2xx only)."
	echo "Load average before the run: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo "\"direct\" is one replica without a proxy (reference, not a peer)."
	echo
	echo "| target | client proto | req/s | 2xx | p50 ms | p99 ms |"
	echo "|---|---|---|---|---|---|"
	for proto in h1 h2c; do
		measure "$proto"
		for t in $TARGETS; do
			r=$(median "$t" "$proto")
			RES[$t-$proto]=$r
			set -- $r
			printf '| %s | %s | %s | %s | %s | %s |\n' "$t" "$proto" "$1" "$2" "$3" "$4"
		done
	done
	echo
	for proto in h1 h2c; do
		set -- ${RES[mcpgw-$proto]}
		m_rps=$1 m_p99=$4
		set -- ${RES[haproxy-$proto]}
		h_rps=$1 h_p99=$4
		awk -v p="$proto" -v mr="$m_rps" -v hr="$h_rps" -v mp="$m_p99" -v hp="$h_p99" 'BEGIN {
			printf "- %s: mcpgw/HAProxy req/s %s, p99 %s\n", p,
				(hr > 0 ? sprintf("%.2fx", mr / hr) : "n/a"),
				(hp > 0 ? sprintf("%.2fx", mp / hp) : "n/a") }'
	done
} | tee "$out"
echo "written: $out" >&2
