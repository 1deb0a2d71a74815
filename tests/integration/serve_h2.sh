#!/bin/bash
# serve_h2.sh - protocol mixes through "mcpgw serve": HTTP/2 clients to an
# HTTP/1.1 upstream and HTTP/1.1 clients to an h2c upstream (protocol:
# h2c), with the replica's record telling which protocol reached it; the
# upstream connections are reused (HTTP/1.1 keep-alive) and multiplexed
# (h2c); SSE streams through both ways; a TLS listener negotiates h2 and
# http/1.1 by ALPN.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/h2_raw_lib.sh"

require_tools curl jq node openssl xxd
require_mcpgw
watchdog 90

start_backend --era modern --id r1 --record 200
R1=$B_ADDR
gen_cert

conf() { # FILE PROTOCOL [LISTENER_TLS_YAML]
	cat >"$1" <<EOF
listeners:
  - address: 127.0.0.1:0
${3:-}
workers: 1
upstreams:
  - name: pool
    protocol: $2
    servers:
      - url: http://$R1
    health:
      type: tcp
EOF
}

last_rec() { rec "$R1" | jq -c '[.requests[] | select(.method == "POST")][-1]'; }

# ticks_order URL [curl options...]: the progress/result order of a ticks
# call (events only), e.g. "1 2 3 result".
ticks_order() {
	local url=$1
	shift
	modern "$url" 5 tools/call '{"name":"ticks","arguments":{"count":3,"interval_ms":50},"_meta":{"progressToken":"t"}}' "$@"
	sse_messages | jq -r 'if .method == "notifications/progress" then .params.progress | tostring elif has("result") then "result" else "?" end' | tr '\n' ' ' | sed 's/ $//'
}

# --- HTTP/1.1 upstream ----------------------------------------------------------------------
conf "$T_DIR/h1.yaml" http1
start_serve -c "$T_DIR/h1.yaml"
who "$G_URL" --http2-prior-knowledge
assert_eq "h2c client -> h1 upstream: answered" r1 "$WHO"
assert_eq "h2c client -> h1 upstream: the client spoke HTTP/2" 2 "$HTTPV"
assert_eq "h2c client -> h1 upstream: the replica got HTTP/1.1" 1.1 "$(last_rec | jq -r .http_version)"
assert_eq "h2c client -> h1 upstream: SSE streams through" "1 2 3 result" "$(ticks_order "$G_URL" --http2-prior-knowledge)"
rec_clear "$R1"
for i in 1 2 3 4 5; do who "$G_URL"; done
assert_eq "h1 upstream: five sequential calls reused one keep-alive connection" 1 \
	"$(rec "$R1" | jq -r '[.requests[] | select(.method == "POST") | .peer] | unique | length')"
stop_serve

# --- h2c upstream ---------------------------------------------------------------------------------
conf "$T_DIR/h2c.yaml" h2c
start_serve -c "$T_DIR/h2c.yaml"
who "$G_URL" --http1.1
assert_eq "h1 client -> h2c upstream: answered" r1 "$WHO"
assert_eq "h1 client -> h2c upstream: the client spoke HTTP/1.1" 1.1 "$HTTPV"
assert_eq "h1 client -> h2c upstream: the replica got HTTP/2" 2 "$(last_rec | jq -r .http_version)"
who "$G_URL" --http2-prior-knowledge
assert_eq "h2c client -> h2c upstream: HTTP/2 end to end" "2 2" "$HTTPV $(last_rec | jq -r .http_version)"
assert_eq "h1 client -> h2c upstream: SSE streams through" "1 2 3 result" "$(ticks_order "$G_URL" --http1.1)"
# five concurrent calls from five client connections share one upstream
# connection (multiplexed streams)
rec_clear "$R1"
PIDS=""
for i in 1 2 3 4 5; do
	bg_post "mx$i" "$G_URL" "$(modern_body "$i" tools/call '{"name":"sleep","arguments":{"ms":300}}')" \
		-H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: sleep'
	PIDS="$PIDS $BG_PID"
done
for p in $PIDS; do wait_pid "$p" 10; done
N_OK=0
for i in 1 2 3 4 5; do
	bg_result "mx$i"
	[ "$CODE" = 200 ] && N_OK=$((N_OK + 1))
done
fg_result
assert_eq "h2c upstream: five concurrent calls answered" 5 "$N_OK"
assert_eq "h2c upstream: they shared one upstream connection" "1 5" \
	"$(rec "$R1" | jq -r '[.requests[] | select(.method == "POST")] | "\([.[].peer] | unique | length) \(length)"')"
stop_serve

# the same from the command line (--upstream-h2c)
start_serve --upstream "http://$R1" --upstream-h2c --workers 1
who "$G_URL" --http1.1
assert_eq "--upstream-h2c: h1 client, the replica got HTTP/2" "r1 2" "$WHO $(last_rec | jq -r .http_version)"
stop_serve

# --- HTTP/2 client limits: the gateway's listener, raw frames -------------------------------------------
conf "$T_DIR/limits.yaml" http1
printf 'limits:\n  max_concurrent_streams: 7\n' >>"$T_DIR/limits.yaml"
start_serve -c "$T_DIR/limits.yaml"
h2_check_limits "$G_ADDR" 7 gateway
stop_serve

# --- TLS downstream with ALPN -------------------------------------------------------------------------
conf "$T_DIR/tls.yaml" http1 "    tls:
      cert: $CERT
      key: $KEY"
start_serve -c "$T_DIR/tls.yaml"
TLS_URL=https://$G_ADDR/mcp
who "$TLS_URL" --cacert "$CERT" --http2
assert_eq "TLS, ALPN h2: answered" r1 "$WHO"
assert_eq "TLS, ALPN h2: negotiated HTTP/2" 2 "$HTTPV"
who "$TLS_URL" --cacert "$CERT" --http1.1
assert_eq "TLS, ALPN http/1.1: answered" r1 "$WHO"
assert_eq "TLS, ALPN http/1.1: negotiated HTTP/1.1" 1.1 "$HTTPV"
ALPN=$(echo | timeout 10 openssl s_client -connect "$G_ADDR" -alpn h2,http/1.1 -servername localhost 2>/dev/null | sed -n 's/^ALPN protocol: //p')
assert_eq "TLS: the listener selects h2 when offered first" h2 "$ALPN"
assert_eq "TLS, h2: SSE streams through" "1 2 3 result" "$(ticks_order "$TLS_URL" --cacert "$CERT" --http2)"
assert_eq "TLS: the upstream leg is plain HTTP/1.1 as configured" "1.1 false" \
	"$(last_rec | jq -r '"\(.http_version) \(.tls)"')"

stop_serve

# the same from the command line (--tls-cert / --tls-key)
start_serve --listen 127.0.0.1:0 --tls-cert "$CERT" --tls-key "$KEY" --upstream "http://$R1"
who "https://$G_ADDR/mcp" --cacert "$CERT" --http2
assert_eq "--tls-cert: ALPN h2" "r1 2" "$WHO $HTTPV"
who "https://$G_ADDR/mcp" --cacert "$CERT" --http1.1
assert_eq "--tls-cert: ALPN http/1.1" "r1 1.1" "$WHO $HTTPV"

finish
