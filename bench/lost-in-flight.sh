#!/usr/bin/env bash
# bench/lost-in-flight.sh - what the stateful gateway does with the calls
# in flight on a replica that is SIGKILLed: how often one of them is lost
# a second time on the dying replica, whether any is lost a third time,
# and what the clients saw.
#
#   bench/lost-in-flight.sh [-n REPS] [-o DIR]
#
# It runs `mcpgw-bench pod-kill --cell 'legacy-gateway-2*'` (2 legacy
# replicas behind one stateful gateway, 100 requests/s open loop, a new
# connection per request) with 25 s runs and the kill at 10 s, REPS
# times (default 12), with the gateway logging at info: each loss in
# flight is a line naming the session.  Then, from the gateway logs and
# the run files:
#   kills           verified kills
#   client failures calls that failed at the client (502 and others)
#   lost twice      requests lost in flight twice (sent again to the
#                   dying replica and lost there again)
#   lost 3+         requests lost three times or more
#   re-pins         by reason, from the gateway's counters
# A request lost three times has used up max_repin_attempts (2) and is
# answered 502.  The summary is printed and kept in
# bench/results/lost-in-flight-<UTC date>.md; the bench's own output is
# in DIR (default: a new temporary folder).  Uses MCPGW and MCPGW_BENCH
# (default: _build/normal); LABEL names the build in the summary (for
# example the commit it was built from).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
N=12 OUT=""
while getopts n:o: o; do
	case $o in
	n) N=$OPTARG ;; o) OUT=$OPTARG ;; *) exit 2 ;;
	esac
done
MCPGW=${MCPGW:-$top/_build/normal/mcpgw}
MCPGW_BENCH=${MCPGW_BENCH:-$top/_build/normal/mcpgw-bench}
for x in "$MCPGW" "$MCPGW_BENCH"; do
	[ -x "$x" ] || { echo "$x missing: build first (scripts/build.sh _build/normal) or set MCPGW / MCPGW_BENCH" >&2; exit 2; }
done
command -v jq >/dev/null || { echo "jq missing: run scripts/setup.sh" >&2; exit 2; }
[ -n "$OUT" ] || OUT=$(mktemp -d)
mkdir -p "$OUT"
[ ! -e "$OUT/run" ] || { echo "$OUT/run exists: give a new -o DIR" >&2; exit 2; }

# The bench starts every mcpgw at --log-level warn; this wrapper lets the
# gateway (serve) log at info and leaves the rest unchanged.
wrap=$OUT/mcpgw-info
cat >"$wrap" <<EOF
#!/usr/bin/env bash
if [ "\${1:-}" = serve ]; then
	args=()
	for a in "\$@"; do [ "\$a" = warn ] && a=info; args+=("\$a"); done
	exec "$MCPGW" "\${args[@]}"
fi
exec "$MCPGW" "\$@"
EOF
chmod +x "$wrap"

(cd "$top" && "$MCPGW_BENCH" pod-kill --cell 'legacy-gateway-2*' --reps "$N" \
	--duration 25 --kill-at 10 --mcpgw "$wrap" --out "$OUT/run")

kills=0 fails=0 twice=0 thrice=0
declare -A repins=()
for run in "$OUT"/run/runs/pod-kill/legacy-gateway-2-replicas-r*.json; do
	log=$OUT/run/logs/pod-kill/$(basename "$run" .json)/gateway1.err
	kills=$((kills + $(jq '[.kills[] | select(.valid)] | length' "$run")))
	fails=$((fails + $(jq '[.load.total.failures[]] | add' "$run")))
	# losses in flight per session: "sess=ID upstream NAME: MSG (closed)"
	read -r t2 t3 < <(grep -o 'sess=[^ ]* upstream [^ ]*: .* (closed)' "$log" |
		awk '{n[$1]++} END {a=0; b=0; for (s in n) {if (n[s] >= 2) a++; if (n[s] >= 3) b++} print a, b}')
	twice=$((twice + t2))
	thrice=$((thrice + t3))
	while read -r k v; do
		repins[$k]=$(( ${repins[$k]:-0} + v ))
	done < <(jq -r '.gateway_stats[].stats.sessions.repins | to_entries[] | "\(.key) \(.value)"' "$run")
done
by=""
for k in $(printf '%s\n' "${!repins[@]}" | sort); do
	[ "${repins[$k]}" -gt 0 ] && by+="$k ${repins[$k]}, "
done
by=${by%, }

mkdir -p "$top/bench/results"
res=$top/bench/results/lost-in-flight-$(date -u +%Y%m%d-%H%M%S).md
{
	echo "# Calls lost in flight at a pod kill ($(date -u +%Y-%m-%dT%H:%MZ))"
	echo
	echo "\`bench/lost-in-flight.sh -n $N\`: mcpgw-bench pod-kill, cell legacy gateway 2 replicas,"
	echo "25 s runs, kill at 10 s; mcpgw ${LABEL:-$MCPGW} (sha256 $(sha256sum "$MCPGW" | cut -c1-16))."
	echo
	echo "| kills | client failures | requests lost twice | lost 3+ times | re-pins by reason |"
	echo "|---:|---:|---:|---:|---|"
	echo "| $kills | $fails | $twice | $thrice | ${by:-none} |"
} >"$res"
cat "$res"
echo "kept in $res; the bench's run in $OUT/run"
