#!/bin/bash
# backend_h2.sh - "mcpgw backend" over HTTP/2: h2c with prior knowledge on
# a plain listener, TLS with ALPN choosing h2 or http/1.1 (certificate
# generated here), SETTINGS_MAX_CONCURRENT_STREAMS in the server's
# SETTINGS, many multiplexed requests on one connection, and SSE streamed
# in DATA frames as it is produced.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/h2_raw_lib.sh"

require_tools curl jq node openssl nghttp h2load xxd
require_mcpgw
watchdog 90

# core_calls LABEL URL EXPECTED_HTTPV [curl options...]: a legacy session
# and modern calls over one protocol, checking curl's negotiated version.
core_calls() {
	local label=$1 url=$2 want=$3
	shift 3
	legacy_init "$url" "$LEGACY_VERSION" "$@" || { fail "$label: no legacy session"; return; }
	assert_eq "$label: HTTP version" "$want" "$HTTPV"
	assert_match "$label: session id" '^[0-9A-Fa-f]{32,}$' "$SID"
	legacy "$url" 2 tools/call '{"name":"echo","arguments":{"text":"over '"$label"'"}}' "$@"
	assert_code "$label: legacy tools/call" 200
	assert_eq "$label: legacy echo" "over $label" "$(tool_text)"
	modern "$url" 3 tools/call '{"name":"add","arguments":{"a":40,"b":2}}' "$@"
	assert_code "$label: modern tools/call" 200
	assert_match "$label: modern add" '(^|[^0-9])42([^0-9]|$)' "$(tool_text)"
	assert_eq "$label: modern HTTP version" "$want" "$HTTPV"
	modern "$url" 4 tools/call '{"name":"echo","arguments":{"text":"x"}}' -H 'Mcp-Name: add' "$@"
	assert_code "$label: header mismatch rejected" 400
	req DELETE "$url" -H "Mcp-Session-Id: $SID" "$@"
	assert_code "$label: DELETE" '2[0-9][0-9]'
}

# --- h2c prior knowledge --------------------------------------------------------------
start_backend --era dual --id h2-A --sse-keepalive 200ms
PLAIN=$B_URL
PLAIN_ADDR=$B_ADDR
core_calls h2c "$PLAIN" 2 --http2-prior-knowledge
core_calls http1.1 "$PLAIN" 1.1 --http1.1

# The server's SETTINGS carry a stream limit.
timeout 10 nghttp -v -n "http://$PLAIN_ADDR/healthz" >"$T_DIR/nghttp.out" 2>&1
MAXS=$(grep -Eo 'SETTINGS_MAX_CONCURRENT_STREAMS\(0x03\):[0-9]+' "$T_DIR/nghttp.out" | head -n 1 | sed 's/.*://')
assert_match "server SETTINGS_MAX_CONCURRENT_STREAMS" '^[1-9][0-9]*$' "$MAXS"
assert_match "nghttp: /healthz over h2c" ':status: 200' "$(cat "$T_DIR/nghttp.out")"

# The limit is the configured one (limits.max_concurrent_streams).
printf 'limits:\n  max_concurrent_streams: 7\n' >"$T_DIR/streams.yaml"
start_backend -c "$T_DIR/streams.yaml" --era modern
modern_body 1 tools/call '{"name":"echo","arguments":{"text":"mux"}}' >"$T_DIR/mux.json"
timeout 10 nghttp -v -n "http://$B_ADDR/healthz" >"$T_DIR/nghttp7.out" 2>&1
assert_match "configured SETTINGS_MAX_CONCURRENT_STREAMS is announced" \
	'SETTINGS_MAX_CONCURRENT_STREAMS\(0x03\):7([^0-9]|$)' "$(cat "$T_DIR/nghttp7.out")"
# Streams beyond the limit are refused (RST_STREAM REFUSED_STREAM, safe to
# retry), the others answered: nghttp sends all 20 before it has seen the
# server's SETTINGS.
timeout 10 nghttp -v -n -m 20 -d "$T_DIR/mux.json" \
	-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
	-H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo' \
	"http://$B_ADDR/mcp" >"$T_DIR/nghttp20.out" 2>&1
N200=$(grep -c ':status: 200' "$T_DIR/nghttp20.out")
NREF=$(grep -c 'error_code=REFUSED_STREAM' "$T_DIR/nghttp20.out")
assert_eq "20 streams against a limit of 7: each answered or refused" 20 "$((N200 + NREF))"
assert_match "at least 7 streams answered (got $N200)" '^([7-9]|[1-9][0-9])$' "$N200"
assert_match "streams over the limit refused (got $NREF)" '^[1-9][0-9]*$' "$NREF"

# Raw frames: streams over the limit after the SETTINGS ACK are refused
# one by one too; a PING flood ends the connection.
h2_check_limits "$B_ADDR" 7 backend

# Many multiplexed modern requests on one connection (h2load, h2c).
timeout 30 h2load -n 40 -c 1 -m 10 -d "$T_DIR/mux.json" \
	-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
	-H "MCP-Protocol-Version: $MODERN_VERSION" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo' \
	"http://$PLAIN_ADDR/mcp" >"$T_DIR/h2load.out" 2>&1
assert_match "h2load: 40 multiplexed requests succeed" 'status codes: 40 2xx' "$(cat "$T_DIR/h2load.out")"

# SSE over h2: the GET stream delivers keep-alives while it is open.
legacy_init "$PLAIN" "$LEGACY_VERSION" --http2-prior-knowledge || die "h2c: no session for the GET stream"
stream_open h2get 3 GET "$PLAIN" --http2-prior-knowledge -H 'Accept: text/event-stream' \
	-H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED"
H2GET=$S_PID
if wait_match "$T_DIR/h2get.body" '^:' 2; then
	ok "h2c: GET stream data arrives while the stream is open"
else
	fail "h2c: no keep-alive on the GET stream within 2 s"
fi
assert_match "h2c: GET stream over HTTP/2" '^HTTP/2 200' "$(head -n 1 "$T_DIR/h2get.hdr")"
wait_pid "$H2GET" 5
assert_eq "h2c: GET stream stays open until the client leaves" 28 "$?"

# SSE over h2: subscriptions/listen.
stream_open h2listen 2 POST "$PLAIN" --http2-prior-knowledge -H 'Content-Type: application/json' \
	-H 'Accept: application/json, text/event-stream' -H "MCP-Protocol-Version: $MODERN_VERSION" \
	-H 'Mcp-Method: subscriptions/listen' \
	--data-binary "$(modern_body 5 subscriptions/listen '{"notifications":{"toolsListChanged":true}}')"
wait_pid "$S_PID" 5
assert_match "h2c: listen stream is event-stream" '^text/event-stream' "$(stream_hdr h2listen content-type)"
assert_match "h2c: listen stream carries keep-alives" '^:' "$(grep '^:' "$T_DIR/h2listen.body" | head -n 1)"

# An --sse always answer over h2.
start_backend --era modern --sse always
modern "$B_URL" 6 tools/call '{"name":"echo","arguments":{"text":"h2 sse"},"_meta":{"progressToken":1}}' --http2-prior-knowledge
assert_eq "h2c: sse answer over HTTP/2" 2 "$HTTPV"
assert_match "h2c: sse content type" '^text/event-stream' "$(hdr content-type)"
assert_eq "h2c: sse response" "h2 sse" "$(tool_text)"

# --- TLS with ALPN ----------------------------------------------------------------------
gen_cert
start_backend --era dual --id tls-A --tls-cert "$CERT" --tls-key "$KEY"
TLS_URL=https://$B_ADDR/mcp
core_calls tls-h2 "$TLS_URL" 2 --cacert "$CERT" --http2
core_calls tls-http1.1 "$TLS_URL" 1.1 --cacert "$CERT" --http1.1

req GET "https://$B_ADDR/healthz" --cacert "$CERT"
assert_code "TLS /healthz" 200
req GET "http://$B_ADDR/healthz"
assert_ne "plain HTTP on the TLS port is not served" 200 "$CODE"

# ALPN offers h2 and http/1.1.
for proto in h2 http/1.1; do
	OUT=$(timeout 10 openssl s_client -connect "$B_ADDR" -alpn "$proto" \
		-CAfile "$CERT" -verify_return_error 2>/dev/null </dev/null)
	assert_match "ALPN selects $proto" "ALPN protocol: $proto" "$OUT"
done
assert_match "the certificate verifies" 'Verify return code: 0' "$OUT"

finish
