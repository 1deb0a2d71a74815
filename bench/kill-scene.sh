#!/usr/bin/env bash
# bench/kill-scene.sh - the pod-kill scene of issue 4, measured: legacy
# (2025-11-25) MCP sessions under load while one replica is SIGKILLed
# mid-run (and restarted on its port a little later), with and without
# the stateful gateway in front.
#
#   bench/kill-scene.sh [-r REPLICAS] [-d SECONDS] [-c USERS] [-t THINK]
#                       [-k KILL_AT] [-R RESTART_AFTER] [-w WORKERS]
#
# Defaults: 4 `mcpgw backend --era legacy` replicas, 20 s of closed-loop
# load by 16 virtual users, each with its own legacy session and a 50 ms
# think time between calls (about 300 calls/s: enough sessions that
# every replica holds some, which an open loop on a fast server would not
# give), replica 1 killed at 8 s and restarted 3 s later (-R 0: never),
# gateway with 2 workers.  The load client is `mcpgw load --dialect
# legacy` (initialize, calls with the session id, a lost session
# re-initializes), calling echo.
# Four rows, each on fresh replicas:
#   service/reuse  the load client picks a replica at random per
#                  connection and keeps it (a Kubernetes Service, keep-alive)
#   service/new    the same with a new connection per request (per-
#                  connection balancing: sessions land on replicas that
#                  do not know them)
#   mcpgw/new      through `mcpgw serve --mode stateful`, a new
#                  connection per request
#   mcpgw/reuse    through the gateway, keep-alive
# For each: calls started, succeeded, failed (by kind), client re-
# initializations, and for the gateway its re-pins, replays and
# unrecoverable sessions from its admin counters.  Everything runs on
# 127.0.0.1 on one machine.  The table is printed and kept in
# bench/results/kill-scene-<UTC date>.md.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
R=4 D=20 C=16 TH=50ms K=8 RS=3 W=2
while getopts r:d:c:t:k:R:w: o; do
	case $o in
	r) R=$OPTARG ;; d) D=$OPTARG ;; c) C=$OPTARG ;; t) TH=$OPTARG ;;
	k) K=$OPTARG ;; R) RS=$OPTARG ;; w) W=$OPTARG ;; *) exit 2 ;;
	esac
done
[ "$K" -lt "$D" ] || { echo "-k must be below -d" >&2; exit 2; }
MCPGW=${MCPGW:-$top/_build/normal/mcpgw}
[ -x "$MCPGW" ] || { echo "build first (scripts/build.sh _build/normal) or set MCPGW" >&2; exit 2; }
STATS_PATH=${STATS_PATH:-/mcpgw/stats}
for t in curl jq; do
	command -v "$t" >/dev/null || { echo "$t missing: run scripts/setup.sh" >&2; exit 2; }
done

. "$top/bench/lib.sh"

# replicas TAG: starts R replicas; sets REP (addresses) and RPID (pids)
replicas() {
	local i
	REP=() RPID=()
	for i in $(seq 1 "$R"); do
		"$MCPGW" backend --listen 127.0.0.1:0 --era legacy --id "r$i" --log-level warn \
			>"$work/$1-r$i.out" 2>"$work/$1-r$i.err" &
		pids+=($!)
		RPID+=($!)
		REP+=("$(first_line "$work/$1-r$i.out")")
	done
}
stop_replicas() {
	local p
	for p in "${RPID[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${RPID[@]}"; do wait "$p" 2>/dev/null || true; done
}

# gateway TAG: mcpgw serve --mode stateful over REP; sets GW (HOST:PORT), GPID
gateway() {
	{
		printf 'listeners:\n  - address: 127.0.0.1:0\nmode: stateful\nworkers: %s\n' "$W"
		printf 'log:\n  level: warn\n'
		printf 'upstreams:\n  - name: pool\n    servers:\n'
		for a in "${REP[@]}"; do printf '      - url: http://%s\n' "$a"; done
		printf '    health:\n      method: GET\n      path: /healthz\n      interval: 1s\n      timeout: 500ms\n'
		printf 'routes:\n  - upstream: pool\n'
		printf 'sessions:\n  store: memory\n'
	} >"$work/$1-gw.yaml"
	"$MCPGW" serve -c "$work/$1-gw.yaml" >"$work/$1-gw.out" 2>"$work/$1-gw.err" &
	GPID=$!
	pids+=($!)
	GW=$(first_line "$work/$1-gw.out")
}

# scene TAG CONNECTION TARGET...: the load run with the kill (and restart)
# of replica 1; leaves $work/TAG.json
scene() {
	local tag=$1 conn=$2 lpid port
	shift 2
	local targets=()
	for u in "$@"; do targets+=(--target "$u"); done
	"$MCPGW" load --quiet --json "$work/$tag.json" "${targets[@]}" --dialect legacy \
		--connection "$conn" --tool echo --arg text=kill-scene \
		--concurrency "$C" --think "$TH" --duration "${D}s" \
		>"$work/$tag-load.out" 2>"$work/$tag-load.err" &
	lpid=$!
	pids+=($lpid)
	sleep "$K"
	kill -KILL "${RPID[0]}"
	wait "${RPID[0]}" 2>/dev/null || true
	echo "  $tag: killed r1 (${REP[0]}) at ${K}s" >&2
	if [ "$RS" -gt 0 ] && [ $((K + RS)) -lt "$D" ]; then
		sleep "$RS"
		port=${REP[0]##*:}
		"$MCPGW" backend --listen "127.0.0.1:$port" --era legacy --id r1 --log-level warn \
			>"$work/$tag-r1b.out" 2>"$work/$tag-r1b.err" &
		pids+=($!)
		RPID[0]=$!
		echo "  $tag: restarted r1 on port $port at $((K + RS))s" >&2
	fi
	wait "$lpid" || true
}

# row TAG: one table row from the load report (and the gateway counters)
row() {
	local j=$work/$1.json g=${2:-}
	[ -s "$j" ] || { echo "| $1 | load report missing: $(tail -n 2 "$work/$1-load.err" | tr '\n' ' ') |"; return; }
	local reqs okc failed sl h4 h5 ce to re
	reqs=$(jq -r '.total.requests' "$j")
	okc=$(jq -r '.total.ok' "$j")
	failed=$((reqs - okc))
	sl=$(jq -r '.total.failures.session_lost' "$j")
	h4=$(jq -r '.total.failures.http_4xx' "$j")
	h5=$(jq -r '.total.failures.http_5xx' "$j")
	ce=$(jq -r '.total.failures.connect_error' "$j")
	to=$(jq -r '.total.failures.timeout + .total.failures.shed' "$j")
	re=$(jq -r '.total.reinitializations' "$j")
	local rp="-" rl="-" un="-"
	if [ -n "$g" ] && [ -s "$g" ]; then
		rp=$(jq -r '.sessions.repins_total' "$g")
		rl=$(jq -r '.sessions.replays' "$g")
		un=$(jq -r '.sessions.unrecoverable' "$g")
	fi
	printf '| %s | %s | %s | %s | %s | %s/%s/%s | %s | %s | %s | %s | %s |\n' \
		"$1" "$reqs" "$okc" "$failed" "$sl" "$h4" "$h5" "$ce" "$to" "$re" "$rp" "$rl" "$un"
}

rows=()
echo "service/reuse ..." >&2
replicas svc-reuse
urls=()
for a in "${REP[@]}"; do urls+=("http://$a/mcp"); done
scene service-reuse reuse "${urls[@]}"
rows+=("$(row service-reuse)")
stop_replicas

echo "service/new ..." >&2
replicas svc-new
urls=()
for a in "${REP[@]}"; do urls+=("http://$a/mcp"); done
scene service-new new "${urls[@]}"
rows+=("$(row service-new)")
stop_replicas

for conn in new reuse; do
	echo "mcpgw/$conn ..." >&2
	replicas "gw-$conn"
	gateway "gw-$conn"
	scene "mcpgw-$conn" "$conn" "http://$GW/mcp"
	curl -sS --max-time 5 "http://$GW$STATS_PATH" >"$work/mcpgw-$conn-stats.json" 2>/dev/null || true
	rows+=("$(row "mcpgw-$conn" "$work/mcpgw-$conn-stats.json")")
	cp "$work/mcpgw-$conn-stats.json" "$work/keep-mcpgw-$conn-stats.json" 2>/dev/null || true
	kill "$GPID" 2>/dev/null || true
	wait "$GPID" 2>/dev/null || true
	stop_replicas
done

out=$top/bench/results/kill-scene-$(date -u +%Y%m%d-%H%M%S).md
mkdir -p "$top/bench/results"
{
	echo "# kill scene — $(date -u +%F), $(nproc) cores, loopback"
	echo
	echo "$R \`mcpgw backend --era legacy\` replicas; \`mcpgw load --dialect legacy\`, closed loop,"
	echo "$C virtual users (one session each) with $TH think time, ${D}s, tools/call echo; replica r1"
	echo "SIGKILLed at ${K}s$([ "$RS" -gt 0 ] && echo " and restarted on its port ${RS}s later"). Gateway: mcpgw serve --mode"
	echo "stateful, memory store, $W workers. Load average before the runs:"
	echo "$(cut -d' ' -f1-3 /proc/loadavg)."
	echo
	echo "| run | calls | ok | failed | session lost | 4xx/5xx/connect | timeout+shed | client re-inits | gateway re-pins | replays | unrecoverable |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
	echo
	echo "Gateway counters (GET $STATS_PATH) at the end of each mcpgw run: sessions"
	echo "created, re-pins by reason, replays, requests lost in flight (replayed /"
	echo "refused), unrecoverable; sessions pinned per replica (picked):"
	echo
	for conn in new reuse; do
		echo "- mcpgw/$conn: \`$(jq -c '{created: .sessions.created, repins: (.sessions.repins | with_entries(select(.value > 0))),
			replays: .sessions.replays, inflight_replayed: .sessions.inflight_replayed,
			replays_refused: .sessions.replays_refused, unrecoverable: .sessions.unrecoverable,
			picked: [.upstreams[0].servers[].picked]}' "$work/keep-mcpgw-$conn-stats.json" 2>/dev/null || echo unavailable)\`"
	done
} | tee "$out"
echo "kept in $out" >&2
