#!/usr/bin/env bash
# bench/scaling.sh - throughput at 1 and 2 workers: bench/proxy-cost.sh
# run with -w 1 and then -w 2 (HAProxy nbthread, nginx worker_processes
# and mcpgw workers alike), and one table of the two.
#
#   bench/scaling.sh [-n REQUESTS] [-c CONNECTIONS] [-k ROUNDS]
#                    [-s STRACE_REQUESTS] [-g CALLGRIND_REQUESTS] [-o OUTDIR]
#
# PROXIES (default "haproxy mcpgw") and PROTOS (default "h1 h2c") are
# passed on.  The two runs are minutes apart, so other load on the
# machine may differ between them: each run's ratio to HAProxy (measured
# in the same run) is the figure to compare; req/s at saturation is
# bounded by the machine's cores, shared with h2load and the canned
# upstream.  Output: OUTDIR/w1/, OUTDIR/w2/ (proxy-cost.sh's) and
# OUTDIR/README.md (default bench/results/scaling-<UTC date>/).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/lib.sh"
args=() OUT=
while getopts n:c:k:s:g:o: o; do
	case $o in
	n | c | k | s | g) args+=("-$o" "$OPTARG") ;;
	o) OUT=$OPTARG ;;
	*) exit 2 ;;
	esac
done
OUT=${OUT:-$top/bench/results/scaling-$(date -u +%Y%m%d-%H%M%S)}
export PROXIES=${PROXIES:-haproxy mcpgw} PROTOS=${PROTOS:-h1 h2c}
for w in 1 2; do
	"$top/bench/proxy-cost.sh" "${args[@]}" -w "$w" -o "$OUT/w$w" >/dev/null
done

# cell W PROTO PROXY FIELD: a field of proxy-cost's table row (4 req/s,
# 5 CPU µs/req, 6 syscalls/req, 7 instructions/req, 10 req/s vs HAProxy)
cell() {
	awk -F' *[|] *' -v pr="$2 → h1" -v p="$3" -v c="$4" \
		'$2 == pr && $3 == p { print $c }' "$OUT/w$1/README.md"
}
{
	echo "# throughput at 1 and 2 workers — $(date -u +%F), $(nproc) cores, loopback"
	echo
	echo "bench/proxy-cost.sh -w 1 and -w 2 (w1/README.md, w2/README.md: versions, load, every column)."
	echo "req/s at saturation (h2load, median of the rounds); the ratio to HAProxy is from the same run."
	echo
	echo "| client | proxy | req/s 1 worker | req/s 2 workers | 2 / 1 | vs HAProxy, 1 | vs HAProxy, 2 | CPU µs/req 1 / 2 | instructions/req 1 / 2 |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
	for pr in $PROTOS; do
		for p in $PROXIES; do
			a=$(cell 1 "$pr" "$p" 4) b=$(cell 2 "$pr" "$p" 4)
			echo "| $pr | $p | $a | $b | $(ratio "$b" "$a") | $(cell 1 "$pr" "$p" 10) |" \
				"$(cell 2 "$pr" "$p" 10) | $(cell 1 "$pr" "$p" 5) / $(cell 2 "$pr" "$p" 5) |" \
				"$(cell 1 "$pr" "$p" 7) / $(cell 2 "$pr" "$p" 7) |"
		done
	done
	echo
	echo "Load average at the start of each run: 1 worker $(sed -n 's/^Load average before the run: \(.*\)\.$/\1/p' "$OUT/w1/README.md")" \
		"; 2 workers $(sed -n 's/^Load average before the run: \(.*\)\.$/\1/p' "$OUT/w2/README.md")"
	echo
	echo "Rerun: \`MCPGW=_build/normal/mcpgw PROXIES='$PROXIES' PROTOS='$PROTOS' bench/scaling.sh ${args[*]}\`"
} | tee "$OUT/README.md"
echo "written: $OUT/README.md" >&2
