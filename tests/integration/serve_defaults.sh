#!/usr/bin/env bash
# serve_defaults.sh - `mcpgw serve --upstream URL` with nothing else (no
# --mode, no health:) in front of real `mcpgw backend` replicas:
#   - legacy-only replicas: the default mode is auto and the default probe
#     passes them, so a legacy initialize + tools/call works (not 503) and
#     /mcpgw/stats shows every server up after probes ran;
#   - modern replicas: modern calls work, servers up;
#   - --mode stateless in front of legacy replicas: the default probe
#     does not mark them down either, and one warn line says that
#     stateless mode breaks their sessions;
#   - a server URL whose path doubles the MCP endpoint
#     (http://HOST:PORT/mcp): one warn line at start naming /mcp/mcp;
#     none for a correct URL.
. "$(dirname "$0")/lib.sh"
require_tools curl jq
require_mcpgw
watchdog 120

# probes_seen ADDR N: the backend at ADDR recorded at least N health
# probes (server/discover POSTs).  A second probe starts only after the
# first ended, so by then the first verdict is in.
probes_seen() {
	local n
	n=$(rec "$1" | jq '[.requests[]? | select(.method == "POST") |
		select(([.headers[] | select(.[0] | ascii_downcase == "mcp-method") | .[1]][0]) == "server/discover")] | length' 2>/dev/null)
	[ "${n:-0}" -ge "$2" ]
}

# servers_up: how many servers /mcpgw/stats of the last gateway calls up.
servers_up() {
	curl -sS --max-time "$CURL_MAX" "http://$G_ADDR/mcpgw/stats" 2>/dev/null |
		jq -r '[.upstreams[].servers[] | select(.state == "up")] | length'
}

# --- legacy-only replicas, no --mode ------------------------------------------
start_backend --era legacy --id L1 --record 100
L1=$B_ADDR
start_backend --era legacy --id L2 --record 100
L2=$B_ADDR
start_serve --upstream "http://$L1" --upstream "http://$L2"
AUTO_ERR=$G_ERR
poll_until 15 probes_seen "$L1" 2 && poll_until 15 probes_seen "$L2" 2 ||
	fail "the legacy replicas did not see two health probes each"
assert_eq "default mode in front of legacy replicas: both servers up after probes" 2 "$(servers_up)"
assert_eq "/mcpgw/stats names the default mode" auto \
	"$(curl -sS --max-time "$CURL_MAX" "http://$G_ADDR/mcpgw/stats" | jq -r .mode)"
assert_nomatch "no server went down" "upstream default/[^ ]+ down" "$(cat "$G_ERR")"
if legacy_init "$G_URL"; then
	ok "legacy initialize through the default gateway"
	legacy "$G_URL" 2 tools/call '{"name":"whoami","arguments":{}}'
	assert_code "legacy tools/call through the default gateway" 200
	assert_match "answered by a legacy replica" '^L[12]$' "$(tool_text)"
fi
assert_nomatch "a correct URL gives no doubled-path hint" "doubles" "$(cat "$AUTO_ERR")"
assert_nomatch "legacy replicas in auto mode give no hint" "as a legacy" "$(cat "$AUTO_ERR")"
stop_serve

# --- modern replicas, no --mode -----------------------------------------------
start_backend --era modern --id M1 --record 100
M1=$B_ADDR
start_backend --era modern --id M2 --record 100
M2=$B_ADDR
start_serve --upstream "http://$M1" --upstream "http://$M2"
poll_until 15 probes_seen "$M1" 2 && poll_until 15 probes_seen "$M2" 2 ||
	fail "the modern replicas did not see two health probes each"
assert_eq "default mode in front of modern replicas: both servers up" 2 "$(servers_up)"
who "$G_URL"
assert_code "modern tools/call through the default gateway" 200
assert_match "answered by a modern replica" '^M[12]$' "$WHO"
stop_serve

# --- stateless in front of legacy replicas --------------------------------------
start_serve --mode stateless --upstream "http://$L1" --upstream "http://$L2"
rec_clear "$L1"
rec_clear "$L2"
poll_until 15 probes_seen "$L1" 2 && poll_until 15 probes_seen "$L2" 2 ||
	fail "the legacy replicas did not see two health probes each (stateless)"
assert_eq "stateless mode: the default probe keeps legacy replicas up" 2 "$(servers_up)"
assert_nomatch "stateless mode: no legacy server went down" "upstream default/[^ ]+ down" "$(cat "$G_ERR")"
poll_until 10 grep -q "every server answers the modern health probe as a legacy" "$G_ERR" ||
	fail "no hint that legacy replicas behind stateless mode lose their sessions"
assert_eq "the stateless hint is one line" 1 "$(grep -c "as a legacy" "$G_ERR")"
assert_match "the hint names the group and the way out" "upstream 'default'.*mode auto" \
	"$(grep "as a legacy" "$G_ERR")"
post "$G_URL" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"itest","version":"1"}}}'
assert_code "stateless mode forwards a legacy initialize (servers not down)" 200
stop_serve

# --- a doubled path --------------------------------------------------------------
start_serve --upstream "http://$L1/mcp"
poll_until 10 grep -q "doubles" "$G_ERR" || fail "no doubled-path hint"
assert_eq "the doubled-path hint is one line" 1 "$(grep -c "doubles" "$G_ERR")"
assert_match "the hint names the path and where requests go" \
	"upstream 'default': server URL path '/mcp' doubles .*/mcp/mcp.*http://$L1" \
	"$(grep "doubles" "$G_ERR")"
stop_serve

# the same through a file with a route whose path the URL doubles
cat >"$T_DIR/doubled.yaml" <<EOF
listeners:
  - address: 127.0.0.1:0
upstreams:
  - name: api
    servers:
      - url: http://$L1/mcp
routes:
  - match: {path: /mcp}
    upstream: api
EOF
start_serve -c "$T_DIR/doubled.yaml"
poll_until 10 grep -q "doubles" "$G_ERR" || fail "no doubled-path hint for a route"
assert_match "the route hint names the route path" \
	"upstream 'api': server URL path '/mcp' doubles route path '/mcp' \(requests go to /mcp/mcp\)" \
	"$(grep "doubles" "$G_ERR")"
stop_serve

finish
