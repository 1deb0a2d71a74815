#!/usr/bin/env bash
# scripts/demo.sh - the main job on built-in defaults: install, build, then
# (1) start two replicas of the reference MCP server and show why a gateway
# is needed: a legacy session lives in one replica's memory (the other
# replica rejects it), while a modern stateless call with a signed handle
# works on any replica; (2) run the churn bench's short demo: a legacy
# fleet of 2 under load, one replica SIGKILLed and replaced on its port,
# clients going direct vs through the gateway, repeated 3 times, and print
# its table (the HTML report with charts stays in _build/demo/).
# Everything runs on 127.0.0.1 with ephemeral ports.
#
# Environment: MCPGW_DEMO_SKIP_BUILD=1 uses an existing build; MCPGW and
# MCPGW_BENCH name the binaries; MCPGW_DEMO_OUT the bench's output folder;
# MCPGW_DEMO_REPS the repetitions per cell (default 3).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
if [ "${MCPGW_DEMO_SKIP_BUILD:-0}" != 1 ]; then
	scripts/setup.sh >/dev/null
	scripts/build.sh "$top/_build/normal" --enable-werror >/dev/null
fi
MCPGW=${MCPGW:-$top/_build/normal/mcpgw}
MCPGW_BENCH=${MCPGW_BENCH:-$(dirname "$MCPGW")/mcpgw-bench}
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

start() { # start NAME VAR ARGS... -> VAR=HOST:PORT
	# not in a command substitution: the PID must reach this shell's
	# cleanup list (a subshell's pids+= is lost, and the replica with it)
	local name=$1 var=$2 l; shift 2
	"$MCPGW" backend --listen 127.0.0.1:0 --id "$name" "$@" >"$work/$name.out" 2>"$work/$name.err" &
	pids+=($!)
	for _ in $(seq 100); do
		if read -r l <"$work/$name.out" 2>/dev/null && [ -n "${l:-}" ]; then
			printf -v "$var" '%s' "${l#listening on }"; return 0; fi
		sleep 0.05
	done
	echo "demo: $name did not start" >&2; cat "$work/$name.err" >&2; return 1
}
post() { # post URL BODY [HEADER...] -> status line + body
	local url=$1 body=$2; shift 2
	local args=(-sS --max-time 10 -H 'Content-Type: application/json'
		-H 'Accept: application/json, text/event-stream')
	for h in "$@"; do args+=(-H "$h"); done
	curl "${args[@]}" -D "$work/h" -o "$work/b" -w '%{http_code}' --data-binary "$body" "$url"
}

printf '%s\n' "$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n' | sed 's/^/demo /')" >"$work/key"
start replica-a A --era dual --state hmac --key-file "$work/key"
start replica-b B --era dual --state hmac --key-file "$work/key"
echo "== two replicas of 'mcpgw backend': A=$A B=$B"

echo
echo "== legacy (2025-11-25): initialize on replica A"
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"demo","version":"1"}}}'
code=$(post "http://$A/mcp" "$init")
sid=$(grep -i '^mcp-session-id:' "$work/h" | tr -d '\r' | cut -d' ' -f2)
echo "   HTTP $code, session ${sid:0:8}…"
post "http://$A/mcp" '{"jsonrpc":"2.0","method":"notifications/initialized"}' "Mcp-Session-Id: $sid" "MCP-Protocol-Version: 2025-11-25" >/dev/null
call='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami","arguments":{}}}'
code=$(post "http://$A/mcp" "$call" "Mcp-Session-Id: $sid" "MCP-Protocol-Version: 2025-11-25")
echo "   tools/call whoami on A -> HTTP $code: $(jq -c '.result.content[0].text' "$work/b")"
code=$(post "http://$B/mcp" "$call" "Mcp-Session-Id: $sid" "MCP-Protocol-Version: 2025-11-25")
echo "   same session sent to B   -> HTTP $code: $(jq -c '.error.message' "$work/b" 2>/dev/null || cat "$work/b")"
echo "   (a load balancer that spreads requests loses the session: the problem mcpgw's stateful mode solves)"

echo
echo "== modern (2026-07-28): stateless calls, a signed counter handle moves between replicas"
meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"demo","version":"1"}}'
mh=("MCP-Protocol-Version: 2026-07-28" "Mcp-Method: tools/call")
code=$(post "http://$A/mcp" "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"counter_create\",\"arguments\":{},$meta}}" "${mh[@]}" "Mcp-Name: counter_create")
handle=$(jq -r '.result.structuredContent.handle // (.result.content[0].text | fromjson? | .handle) // empty' "$work/b")
echo "   counter_create on A -> HTTP $code, handle ${handle:0:16}…"
for r in B A B; do
	eval "url=http://\$$r/mcp"
	code=$(post "$url" "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"counter_increment\",\"arguments\":{\"handle\":\"$handle\"},$meta}}" "${mh[@]}" "Mcp-Name: counter_increment")
	value=$(jq -r '.result.structuredContent.value // (.result.content[0].text | fromjson? | .value) // empty' "$work/b")
	handle=$(jq -r '.result.structuredContent.handle // (.result.content[0].text | fromjson? | .handle) // empty' "$work/b")
	echo "   counter_increment on $r -> HTTP $code, value $value"
done
code=$(post "http://$B/mcp" "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"},$meta}}" "MCP-Protocol-Version: 2026-07-28" "Mcp-Method: tools/call" "Mcp-Name: wrong")
echo "   a request whose Mcp-Name header disagrees with its body -> HTTP $code, code $(jq '.error.code' "$work/b")"

echo
if [ ! -x "$MCPGW_BENCH" ]; then
	echo "demo: done ($MCPGW_BENCH is not built: no churn bench part)"
	exit 0
fi
out=${MCPGW_DEMO_OUT:-$top/_build/demo/bench-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$(dirname "$out")"
echo "== the churn bench, short: a legacy fleet of 2 under load, replica 1 SIGKILLed"
echo "   mid-run and replaced on its port; clients direct vs through 'mcpgw serve'"
"$MCPGW_BENCH" demo --quick --reps "${MCPGW_DEMO_REPS:-3}" --out "$out" --mcpgw "$MCPGW"
echo
echo "demo: done; the bench's report with charts: $out/report.html"
