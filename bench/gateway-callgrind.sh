#!/usr/bin/env bash
# bench/gateway-callgrind.sh - CPU instructions per proxied request, of
# `mcpgw serve` (stateless) and of HAProxy side by side, counted by
# valgrind's callgrind.  Instruction counts do not depend on what else the
# machine is doing, so this comparison holds on a busy or noisy machine
# where req/s (bench/gateway-rps.sh) does not; it says nothing about
# latency, syscalls or cache misses.
#
#   bench/gateway-callgrind.sh [-n REQUESTS] [-p h1|h2c] [-t TOP] [-k FILE]
#
# One `mcpgw backend --era modern` replica; each proxy runs with one
# worker thread under callgrind; h2load sends REQUESTS modern tools/call
# echo requests (8 connections; -p h2c: 8 streams each) through it; the
# counters are zeroed after a warm-up of 200 requests, and what the proxy
# executed from there to its exit is divided by REQUESTS (its shutdown
# included, start-up and warm-up not).
# Prints a table and the TOP functions of mcpgw by self cost, and keeps
# both in bench/results/gateway-callgrind-<UTC date>.md.  -k FILE keeps
# the profile run's callgrind output there, for callgrind_annotate
# --tree=caller (who calls a costly function).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
N=4000 P=h1 T=15 KEEP=
while getopts n:p:t:k: o; do
	case $o in
	n) N=$OPTARG ;; p) P=$OPTARG ;; t) T=$OPTARG ;; k) KEEP=$OPTARG ;;
	*) exit 2 ;;
	esac
done
case $P in h1 | h2c) ;; *) echo "-p h1 or h2c" >&2; exit 2 ;; esac
MCPGW=${MCPGW:-$top/_build/normal/mcpgw}
[ -x "$MCPGW" ] || { echo "build first (scripts/build.sh _build/normal) or set MCPGW" >&2; exit 2; }
for t in valgrind callgrind_annotate callgrind_control h2load haproxy; do
	command -v "$t" >/dev/null || { echo "$t missing: run scripts/setup.sh" >&2; exit 2; }
done

. "$top/bench/lib.sh"

"$MCPGW" backend --listen 127.0.0.1:0 --era modern --id r1 --log-level warn \
	>"$work/r.out" 2>"$work/r.err" &
pids+=($!)
replica=$(first_line "$work/r.out")

printf '%s' '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' >"$work/body.json"
LOAD=(-n "$N" -c 8 -d "$work/body.json" -H 'Content-Type: application/json'
	-H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28'
	-H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo')
if [ "$P" = h1 ]; then LOAD+=(--h1); else LOAD+=(-m 8); fi
WARM=("${LOAD[@]}")
WARM[1]=200

# drive NAME URL PID: a warm-up of 200 requests, the counters zeroed
# (callgrind_control), the measured load, then a graceful stop of PID
# (callgrind writes its counts at exit); sets IR to the instructions
# counted since the zeroing: the requests' own, without start-up
drive() {
	local name=$1 url=$2 pid=$3 ok
	h2load "${WARM[@]}" "$url" >"$work/$name.warm" 2>&1 || true
	callgrind_control -z "$pid" >/dev/null
	h2load "${LOAD[@]}" "$url" >"$work/$name.h2load" 2>&1 || true
	ok=$(sed -n 's/^requests: .* \([0-9]*\) succeeded.*/\1/p' "$work/$name.h2load")
	[ "$ok" = "$N" ] || { echo "$name: $ok of $N requests succeeded" >&2; cat "$work/$name.h2load" >&2; exit 1; }
	kill -TERM "$pid"
	wait "$pid" 2>/dev/null || true
	IR=$(callgrind_total "$work/$name.cg")
	[ -n "$IR" ] || { echo "$name: no callgrind total" >&2; exit 1; }
}

valgrind --tool=callgrind --callgrind-out-file="$work/mcpgw.cg" \
	"$MCPGW" serve --listen 127.0.0.1:0 --upstream "http://$replica" --workers 1 \
	--log-level warn >"$work/mcpgw.out" 2>"$work/mcpgw.err" &
gpid=$!
pids+=($gpid)
gw=$(first_line "$work/mcpgw.out" 60) # valgrind starts slowly
drive mcpgw "http://$gw/mcp" "$gpid"
mcpgw_ir=$IR

# The profile: callgrind attributes the instructions after a zeroing to
# the event loop as a whole, so the per-function view comes from a run
# counted from the start.
valgrind --tool=callgrind --callgrind-out-file="$work/profile.cg" \
	"$MCPGW" serve --listen 127.0.0.1:0 --upstream "http://$replica" --workers 1 \
	--log-level warn >"$work/profile.out" 2>"$work/profile.err" &
ppid=$!
pids+=($ppid)
pgw=$(first_line "$work/profile.out" 60)
h2load "${LOAD[@]}" "http://$pgw/mcp" >"$work/profile.h2load" 2>&1 || true
kill -TERM "$ppid"
wait "$ppid" 2>/dev/null || true
[ -z "$KEEP" ] || cp "$work/profile.cg" "$KEEP"

hp=$(free_port)
cat >"$work/haproxy.cfg" <<CFG
global
    nbthread 1
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    option http-keep-alive
    http-reuse always
frontend fe
    bind 127.0.0.1:$hp $( [ "$P" = h2c ] && echo "proto h2" )
    default_backend replicas
backend replicas
    server r1 $replica
CFG
valgrind --tool=callgrind --callgrind-out-file="$work/haproxy.cg" \
	haproxy -db -f "$work/haproxy.cfg" >"$work/haproxy.out" 2>&1 &
hpid=$!
pids+=($hpid)
wait_port "$hp" 60 || { echo "haproxy did not listen" >&2; exit 1; }
drive haproxy "http://127.0.0.1:$hp/mcp" "$hpid"
haproxy_ir=$IR

out=$top/bench/results/gateway-callgrind-$(date -u +%Y%m%d-%H%M%S).md
{
	echo "# Instructions per proxied request ($P from the client, $N requests, $(date -u +%Y-%m-%dT%H:%MZ))"
	echo
	echo "$("$MCPGW" version | head -n 1), $(haproxy -v | head -n 1 | cut -d' ' -f1-3), valgrind $(valgrind --version)"
	echo
	echo "| proxy | instructions | per request | vs HAProxy |"
	echo "|---|---:|---:|---:|"
	awk -v m="$mcpgw_ir" -v h="$haproxy_ir" -v n="$N" 'BEGIN {
		printf "| mcpgw serve | %d | %.0f | %.2fx |\n", m, m / n, m / h
		printf "| HAProxy | %d | %.0f | 1.00x |\n", h, h / n }'
	echo
	echo "mcpgw's top $T functions by their own instructions (a second run"
	echo "of $N requests, start-up included):"
	echo
	echo '```'
	callgrind_annotate "$work/profile.cg" 2>/dev/null | grep -E '^ *[0-9,]+ \(' | sed -n "2,$((T + 1))p"
	echo '```'
} | tee "$out"
echo "(kept in $out)"
