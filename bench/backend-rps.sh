#!/usr/bin/env bash
# bench/backend-rps.sh - indicative requests/s of `mcpgw backend`, side by
# side with the official reference server (@modelcontextprotocol/
# server-everything, Node.js) in the same run, driven by h2load.
#
#   bench/backend-rps.sh [-n REQUESTS] [-c CONNECTIONS] [-m STREAMS]
#
# Legacy era: one session is opened with curl, then h2load repeats
# tools/call echo on it over HTTP/1.1 keep-alive (the Node server speaks no
# h2c).  Modern era (mcpgw only): stateless tools/call over h1 and h2c.
# Everything runs on 127.0.0.1 with ephemeral ports; results are printed as
# a Markdown table and kept in bench/results/backend-rps-<date>.md.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
N=20000 C=16 M=8
while getopts n:c:m: o; do case $o in n) N=$OPTARG;; c) C=$OPTARG;; m) M=$OPTARG;; *) exit 2;; esac; done
MCPGW=${MCPGW:-$top/_build/normal/mcpgw}
[ -x "$MCPGW" ] || { echo "build first: scripts/build.sh _build/normal" >&2; exit 2; }
command -v h2load >/dev/null || { echo "h2load missing: apt-get install nghttp2-client" >&2; exit 2; }
cache=$top/_build/bench-node
. "$top/bench/lib.sh"

start_mcpgw() { # ERA -> port
	"$MCPGW" backend --listen 127.0.0.1:0 --era "$1" --log-level warn >"$work/mcpgw-$1.out" 2>"$work/mcpgw-$1.err" &
	pids+=($!)
	for _ in $(seq 200); do l=$(head -n1 "$work/mcpgw-$1.out" 2>/dev/null || true); [ -n "$l" ] && { echo "${l##*:}"; return; }; sleep 0.05; done
	return 1
}
start_everything() {
	if [ ! -d "$cache/node_modules/@modelcontextprotocol/server-everything" ]; then
		mkdir -p "$cache"; npm install --silent --no-audit --no-fund --prefix "$cache" @modelcontextprotocol/server-everything >/dev/null
	fi
	local p; p=$(free_port)
	(cd "$cache/node_modules/@modelcontextprotocol/server-everything" && PORT=$p exec node dist/index.js streamableHttp) >"$work/everything.log" 2>&1 &
	pids+=($!)
	wait_port "$p"; echo "$p"
}
legacy_session() { # PORT -> session id
	local init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}'
	curl -sS --max-time 10 -D "$work/h" -o /dev/null -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' --data-binary "$init" "http://127.0.0.1:$1/mcp"
	local sid; sid=$(grep -i '^mcp-session-id:' "$work/h" | tr -d '\r' | awk '{print $2}')
	curl -sS --max-time 10 -o /dev/null -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
		-H "Mcp-Session-Id: $sid" -H 'MCP-Protocol-Version: 2025-11-25' \
		--data-binary '{"jsonrpc":"2.0","method":"notifications/initialized"}' "http://127.0.0.1:$1/mcp"
	echo "$sid"
}
run_h2load() { # LABEL URL BODYFILE PROTO(h1|h2) HEADERS...
	local label=$1 url=$2 body=$3 proto=$4; shift 4
	local args=(-n "$N" -c "$C" -d "$body" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream')
	[ "$proto" = h1 ] && args+=(--h1) || args+=(-m "$M")
	for h in "$@"; do args+=(-H "$h"); done
	h2load "${args[@]}" "$url" >"$work/out" 2>&1 || true
	local rps ok lat
	rps=$(awk '/^finished in/ {gsub(",","",$4); print $4}' "$work/out")
	ok=$(awk '/^status codes:/ {print $3}' "$work/out")
	lat=$(awk '/^time for request:/ {print $6}' "$work/out")
	printf '| %s | %s | %s | %s | %s |\n' "$label" "$proto" "$rps" "$ok" "$lat"
	echo "$rps" >"$work/rps-$(echo "$label-$proto" | tr ' /' '__')"
}

printf '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}' >"$work/legacy-mcpgw.json"
printf '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"}}}' >"$work/legacy-everything.json"
printf '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' >"$work/modern.json"

lp=$(start_mcpgw legacy); mp=$(start_mcpgw modern); ep=$(start_everything)
ls_mcpgw=$(legacy_session "$lp"); ls_every=$(legacy_session "$ep")
out=$top/bench/results/backend-rps-$(date -u +%Y%m%d-%H%M%S).md
mkdir -p "$top/bench/results"
{
	echo "# backend requests/s (indicative, one run) — $(date -u +%F), $(nproc) cores"
	echo
	echo "h2load -n $N -c $C (h2: -m $M); tools/call echo; 127.0.0.1"
	echo
	echo "| server | proto | req/s | 2xx responses | mean latency |"
	echo "|---|---|---|---|---|"
	run_h2load "server-everything legacy" "http://127.0.0.1:$ep/mcp" "$work/legacy-everything.json" h1 "Mcp-Session-Id: $ls_every" "MCP-Protocol-Version: 2025-11-25"
	run_h2load "mcpgw backend legacy" "http://127.0.0.1:$lp/mcp" "$work/legacy-mcpgw.json" h1 "Mcp-Session-Id: $ls_mcpgw" "MCP-Protocol-Version: 2025-11-25"
	run_h2load "mcpgw backend modern" "http://127.0.0.1:$mp/mcp" "$work/modern.json" h1 "MCP-Protocol-Version: 2026-07-28" "Mcp-Method: tools/call" "Mcp-Name: echo"
	run_h2load "mcpgw backend modern" "http://127.0.0.1:$mp/mcp" "$work/modern.json" h2 "MCP-Protocol-Version: 2026-07-28" "Mcp-Method: tools/call" "Mcp-Name: echo"
	e=$(cat "$work"/rps-server-everything_legacy-h1); m=$(cat "$work"/rps-mcpgw_backend_legacy-h1)
	echo
	awk -v e="$e" -v m="$m" 'BEGIN { if (e > 0) printf "ratio mcpgw backend / server-everything (legacy, h1): %.1fx\n", m / e }'
} | tee "$out"
