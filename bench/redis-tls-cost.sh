#!/usr/bin/env bash
# bench/redis-tls-cost.sh - what the Redis transport costs: the backend's
# counter handle flow (--tool counter: every call one Redis command on the
# replica's connection, src/net/redis.c) against --state redis, closed
# loop, over redis:// and over rediss:// (a TLS-only redis-server, client
# certificates); with MCPGW_BASE set, the same plain run with that binary
# too (e.g. a build from before the transport swap).  Achieved calls/s,
# the p50/p99 the load client measured, and the replica's CPU time per
# call (schedstat, warmup included in both counts), one line per case.  Everything on
# 127.0.0.1 with ephemeral ports; numbers from a shared machine are
# indicative only (run -r 3 and compare medians).
#
#   bench/redis-tls-cost.sh [-c USERS] [-d SECONDS] [-r REPETITIONS]
#
# Needs mcpgw ($MCPGW, or the build's), redis-server, openssl, jq, node.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/lib.sh"
USERS=16 DUR=10 REPS=1
while getopts c:d:r: o; do
	case $o in
	c) USERS=$OPTARG ;;
	d) DUR=$OPTARG ;;
	r) REPS=$OPTARG ;;
	*) echo "usage: $0 [-c USERS] [-d SECONDS] [-r REPETITIONS]" >&2; exit 2 ;;
	esac
done
M=${MCPGW:-$top/_build/dev/mcpgw}
[ -x "$M" ] || { echo "no mcpgw at $M (set MCPGW)" >&2; exit 2; }

# a CA, the server's certificate (127.0.0.1), a client certificate
C=$work/pki
mkdir -p "$C"
ossl() { openssl "$@" >>"$C/openssl.log" 2>&1; }
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-keyout "$C/ca.key" -out "$C/ca.pem" -subj /CN=bench-ca
for n in server client; do
	ossl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$C/$n.key" -out "$C/$n.csr" -subj "/CN=$n"
	printf 'subjectAltName=IP:127.0.0.1\n' >"$C/$n.ext"
	ossl x509 -req -in "$C/$n.csr" -CA "$C/ca.pem" -CAkey "$C/ca.key" \
		-CAcreateserial -days 2 -extfile "$C/$n.ext" -out "$C/$n.pem"
done

pp=$(free_port)
tp=$(free_port)
redis-server --port "$pp" --tls-port "$tp" --bind 127.0.0.1 --save '' \
	--appendonly no --dir "$work" --tls-cert-file "$C/server.pem" \
	--tls-key-file "$C/server.key" --tls-ca-cert-file "$C/ca.pem" \
	>"$work/redis.log" 2>&1 &
pids+=($!)
wait_port "$pp" || { echo "redis-server did not listen" >&2; exit 1; }

# run LABEL BINARY REDIS-OPTIONS...: one backend, one load run per repetition
run() {
	local label=$1 bin=$2 addr pid r j
	shift 2
	"$bin" backend --listen 127.0.0.1:0 --era modern --state redis \
		--log-level warn "$@" >"$work/be.out" 2>"$work/be.err" &
	pid=$!
	pids+=($pid)
	addr=$(first_line "$work/be.out")
	for r in $(seq "$REPS"); do
		j=$work/run$r-${label//[^a-z]/}.json
		c0=$(cpu_ns "$pid")
		"$M" load --target "http://$addr/mcp" --dialect modern --tool counter \
			--concurrency "$USERS" --warmup 2s --duration "${DUR}s" \
			--timeout 10s --quiet --json "$j" >/dev/null 2>"$j.err" || true
		c1=$(cpu_ns "$pid")
		jq -r --arg l "$label" --argjson cpu $((c1 - c0)) '"\($l)\tcalls/s \(.total.achieved_rps | floor)\tp50 \(.total.latency_ms.p50)ms\tp99 \(.total.latency_ms.p99)ms\tfailed \(.total.requests - .total.ok)\treplica CPU/call \($cpu / 1000 / ([.phases[].requests] | add) | floor)us"' "$j"
	done
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}
TLS=(--redis-ca-file "$C/ca.pem" --redis-cert-file "$C/client.pem"
	--redis-key-file "$C/client.key")
[ -n "${MCPGW_BASE:-}" ] && run "base redis://" "$MCPGW_BASE" --redis "redis://127.0.0.1:$pp"
run "redis://" "$M" --redis "redis://127.0.0.1:$pp"
run "rediss://" "$M" --redis "rediss://127.0.0.1:$tp" "${TLS[@]}"
