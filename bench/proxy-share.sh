#!/usr/bin/env bash
# bench/proxy-share.sh - where the machine's time goes per proxied
# request: the proxy, the canned upstream, the client (h2load) and the
# idle CPUs, for HAProxy and `mcpgw serve` side by side on equal work.
#
#   bench/proxy-share.sh [-n REQUESTS] [-c CONNECTIONS] [-k ROUNDS] [-o OUTDIR]
#
# bench/proxy-cost.sh counts the proxy's own CPU.  On a 2-core machine
# the client, the upstream and the proxy share the cores, so the rate at
# saturation also depends on what the proxy makes the others spend and
# on how long the cores wait on one another: this script shows both.
# Equal work: mcpgw adds no forwarding headers (`forwarded: {add:
# false}`), as HAProxy by default, so the upstream receives the same
# request head from both (mcpgw adds the Date of RFC 9110 6.6.1 to each
# answer).  Each round runs h2load --h1 -n N -c C through HAProxy, then
# through mcpgw; per request:
#   proxy, upstream   CPU of that process (/proc/PID/task/*/schedstat)
#   client            h2load's user + system time (GNU time, 10 ms steps)
#   idle              idle + iowait of all CPUs (/proc/stat) over the run
#   proxy sleeps      the proxy's voluntary context switches per 1,000
#                     requests (/proc/PID/task/*/status): how often it
#                     ran out of work and waited in epoll_wait
# Output: one line per round and proxy, the medians, and how many rounds
# mcpgw was below HAProxy for each column (bench/results/proxy-share-<UTC
# date>/README.md).  Speeds move with the machine: read the pairs.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
N=100000 C=32 K=7 OUT=
while getopts n:c:k:o: o; do
	case $o in
	n) N=$OPTARG ;; c) C=$OPTARG ;; k) K=$OPTARG ;; o) OUT=$OPTARG ;;
	*) exit 2 ;;
	esac
done
. "$top/bench/lib.sh"
bench_init proxy-share h2load haproxy curl node
[ -x /usr/bin/time ] || { echo "/usr/bin/time missing: apt-get install time" >&2; exit 2; }

up=$(free_port)
canned_upstream_cfg "$up" "$work/upstream.cfg"
start_haproxy "$work/upstream.cfg" "$up" upstream
uppid=$srv_pid

hp=$(free_port)
{
	haproxy_prologue 1
	cat <<EOF
frontend fe
    bind 127.0.0.1:$hp
    default_backend up
backend up
    server u 127.0.0.1:$up
EOF
} >"$work/haproxy.cfg"
start_haproxy "$work/haproxy.cfg" "$hp" haproxy
hpid=$srv_pid

serve_cfg stateless "127.0.0.1:$up" "$work/serve.yaml"
printf 'forwarded:\n  add: false\n' >>"$work/serve.yaml"
start_serve "$work/serve.yaml" serve
mpid=$srv_pid gw=$srv_addr

printf '%s' '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' >"$work/body.json"
HDRS=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream'
	-H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo')
for u in "http://127.0.0.1:$hp/mcp" "http://$gw/mcp"; do
	ok=
	for _ in $(seq 50); do
		if curl -sS --max-time 5 "${HDRS[@]}" --data-binary "@$work/body.json" "$u" 2>/dev/null |
			grep -q '"text":"hello"'; then ok=1; break; fi
		sleep 0.2
	done
	[ -n "$ok" ] || { echo "sanity check failed: $u" >&2; exit 1; }
done

idle_ticks() { awk '/^cpu /{ print $5 + $6 }' /proc/stat; }
sleeps() { cat /proc/"$1"/task/*/status | awk '/^voluntary_ctxt_switches/ { s += $2 } END { print s + 0 }'; }
hz=$(getconf CLK_TCK)

# one NAME URL PID: one h2load run; appends "NAME rps proxy up client idle"
# (µs per request) and "sleeps" (per 1,000 requests) to $work/rows
one() {
	local p0 u0 i0 s0 p1 u1 i1 s1 out rps done_ us ss
	p0=$(cpu_ns "$3") u0=$(cpu_ns "$uppid") i0=$(idle_ticks) s0=$(sleeps "$3")
	out=$({ /usr/bin/time -f "TIME %U %S" h2load --h1 -n "$N" -c "$C" \
		-d "$work/body.json" "${HDRS[@]}" "$2"; } 2>&1)
	p1=$(cpu_ns "$3") u1=$(cpu_ns "$uppid") i1=$(idle_ticks) s1=$(sleeps "$3")
	rps=$(sed -n 's/.*finished in [0-9.]*[mu]*s, \([0-9.]*\) req\/s.*/\1/p' <<<"$out")
	done_=$(sed -n 's/.* \([0-9]*\) succeeded.*/\1/p' <<<"$out")
	[ "$done_" = "$N" ] || { echo "$1: $done_ of $N succeeded" >&2; exit 1; }
	read -r _ us ss < <(grep '^TIME' <<<"$out")
	awk -v n="$1" -v N="$N" -v r="$rps" -v p=$((p1 - p0)) -v u=$((u1 - u0)) \
		-v us="$us" -v ss="$ss" -v i=$((i1 - i0)) -v hz="$hz" -v sl=$((s1 - s0)) 'BEGIN {
		printf "%s %.0f %.2f %.2f %.2f %.2f %.1f\n", n, r, p / N / 1000, u / N / 1000,
			(us + ss) * 1e6 / N, i * 1e6 / hz / N, sl * 1000 / N }' >>"$work/rows"
}

one warmup "http://127.0.0.1:$hp/mcp" "$hpid"
one warmup "http://$gw/mcp" "$mpid"
: >"$work/rows"
for k in $(seq "$K"); do
	one haproxy "http://127.0.0.1:$hp/mcp" "$hpid"
	one mcpgw "http://$gw/mcp" "$mpid"
done
grep '^haproxy' "$work/rows" >"$work/h"
grep '^mcpgw' "$work/rows" >"$work/m"

{
	echo "# where the time of a proxied request goes — $(date -u +%F), $(nproc) cores, loopback"
	echo
	echo "$(haproxy -v | head -n 1 | awk '{print $1, $3}') nbthread 1 http-reuse always; mcpgw $("$MCPGW" version | head -n 1 | awk '{print $2}') serve stateless, 1 worker, forwarded: {add: false}."
	echo "Upstream: a canned HAProxy (nbthread 1). h2load --h1 -n $N -c $C, $K rounds, HAProxy then mcpgw in each."
	echo "Load average before the run: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo
	echo "µs per request (idle: of all $(nproc) CPUs together):"
	echo
	echo "| round | proxy | req/s | proxy CPU | upstream CPU | client CPU | idle | proxy sleeps per 1,000 requests |"
	echo "|---:|---|---:|---:|---:|---:|---:|---:|"
	awk '{ k = int((NR + 1) / 2); printf "| %d | %s | %s | %s | %s | %s | %s | %s |\n", k, $1, $2, $3, $4, $5, $6, $7 }' "$work/rows"
	for f in h m; do
		name=$([ $f = h ] && echo haproxy || echo mcpgw)
		echo "| median | $name | $(median_col "$work/$f" 2) | $(median_col "$work/$f" 3) | $(median_col "$work/$f" 4) | $(median_col "$work/$f" 5) | $(median_col "$work/$f" 6) | $(median_col "$work/$f" 7) |"
	done
	echo
	echo -n "Rounds where mcpgw's figure was below HAProxy's (of $K):"
	for col in 2:req/s 3:proxy 4:upstream 5:client 6:idle 7:sleeps; do
		c=${col%%:*} label=${col#*:}
		echo -n " $label $(paste -d' ' "$work/h" "$work/m" | awk -v c="$c" -v w=7 '$(c + w) < $c { n++ } END { print n + 0 }');"
	done
	echo
	echo
	echo "Rerun: \`MCPGW=$MCPGW bench/proxy-share.sh -n $N -c $C -k $K\`"
} >"$OUT/README.md"
cat "$OUT/README.md"
echo "written: $OUT/README.md"
