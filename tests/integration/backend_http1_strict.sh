#!/bin/bash
# backend_http1_strict.sh - the HTTP/1.1 server layer's strictness seen on
# raw sockets (bash /dev/tcp): request smuggling shapes (Content-Length
# with Transfer-Encoding, duplicate Content-Length, obs-fold, bad header
# bytes) are refused with 400 and the connection is not reused; limits
# answer 431 / 413 / 414 (set small through a config file); keep-alive
# serves several requests on one connection; chunked bodies work.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node
require_mcpgw
watchdog 60
# A server closing while we still write must not kill the test shell.
trap '' PIPE

cat >"$T_DIR/limits.yaml" <<'EOF'
# small limits so the tests can cross them cheaply
limits:
  max_header_bytes: 4096
  max_headers: 32
  max_uri_bytes: 1024
  max_body_bytes: 65536
EOF
start_backend -c "$T_DIR/limits.yaml" --era dual
HOST=${B_ADDR%:*}
PORT=${B_ADDR##*:}

# raw DATA: sends DATA on a fresh connection, reads until the server
# closes (5 s at most); sets RAW (CRs removed) and STATUSES (one status
# code per response found, space separated).
raw() {
	RAW=""
	STATUSES=""
	exec 3<>"/dev/tcp/$HOST/$PORT" || { fail "cannot connect to $B_ADDR"; return 1; }
	printf '%s' "$1" >&3 2>/dev/null
	RAW=$(timeout 5 cat <&3 2>/dev/null | tr -d '\r')
	exec 3<&- 3>&-
	STATUSES=$(printf '%s\n' "$RAW" | grep -Eo '^HTTP/1\.[01] [0-9]{3}' | awk '{print $2}' | tr '\n' ' ' | sed 's/ $//')
}

CRLF=$'\r\n'
HEALTH="GET /healthz HTTP/1.1${CRLF}Host: t${CRLF}${CRLF}"
HEALTH_CLOSE="GET /healthz HTTP/1.1${CRLF}Host: t${CRLF}Connection: close${CRLF}${CRLF}"
MBODY=$(modern_body 1 tools/call '{"name":"echo","arguments":{"text":"raw"}}')
MHDRS="Content-Type: application/json${CRLF}Accept: application/json, text/event-stream${CRLF}MCP-Protocol-Version: $MODERN_VERSION${CRLF}Mcp-Method: tools/call${CRLF}Mcp-Name: echo${CRLF}"

# --- baseline: keep-alive -------------------------------------------------------------
raw "$HEALTH$HEALTH$HEALTH_CLOSE"
assert_eq "keep-alive: three pipelined requests on one connection" "200 200 200" "$STATUSES"

raw "POST /mcp HTTP/1.1${CRLF}Host: t${CRLF}${MHDRS}Content-Length: $(printf '%s' "$MBODY" | wc -c)${CRLF}${CRLF}${MBODY}$HEALTH_CLOSE"
assert_eq "keep-alive: a POST then a GET" "200 200" "$STATUSES"
assert_match "POST answered with the echo" '"raw"' "$RAW"

# Chunk sizes count bytes, not characters.
HEXLEN=$(printf '%x' "$(LC_ALL=C; printf '%s' "$MBODY" | wc -c)")
raw "POST /mcp HTTP/1.1${CRLF}Host: t${CRLF}${MHDRS}Transfer-Encoding: chunked${CRLF}Connection: close${CRLF}${CRLF}${HEXLEN}${CRLF}${MBODY}${CRLF}0${CRLF}${CRLF}"
assert_eq "chunked request body" "200" "$STATUSES"
assert_match "chunked body reached the server intact" '"raw"' "$RAW"

raw "GET /healthz HTTP/1.0${CRLF}Host: t${CRLF}${CRLF}"
assert_eq "HTTP/1.0 without keep-alive is answered and closed" "200" "$STATUSES"

# --- smuggling shapes ----------------------------------------------------------------------
SMUGGLED="GET /healthz HTTP/1.1${CRLF}Host: t${CRLF}${CRLF}"
raw "POST /mcp HTTP/1.1${CRLF}Host: t${CRLF}Content-Length: 5${CRLF}Transfer-Encoding: chunked${CRLF}${CRLF}0${CRLF}${CRLF}$SMUGGLED"
assert_eq "Content-Length with Transfer-Encoding: 400 and the connection ends" "400" "$STATUSES"

raw "POST /mcp HTTP/1.1${CRLF}Host: t${CRLF}Transfer-Encoding: chunked${CRLF}Content-Length: 5${CRLF}${CRLF}0${CRLF}${CRLF}$SMUGGLED"
assert_eq "Transfer-Encoding before Content-Length: 400" "400" "$STATUSES"

raw "POST /mcp HTTP/1.1${CRLF}Host: t${CRLF}Content-Length: 2${CRLF}Content-Length: 2${CRLF}${CRLF}{}$SMUGGLED"
assert_eq "duplicate Content-Length (equal values): 400" "400" "$STATUSES"

raw "POST /mcp HTTP/1.1${CRLF}Host: t${CRLF}Content-Length: 2${CRLF}Content-Length: 40${CRLF}${CRLF}{}$SMUGGLED"
assert_eq "duplicate Content-Length (different values): 400" "400" "$STATUSES"

raw "POST /mcp HTTP/1.1${CRLF}Host: t${CRLF}Content-Length: 2, 2${CRLF}${CRLF}{}$SMUGGLED"
assert_eq "list-valued Content-Length: 400" "400" "$STATUSES"

raw "GET /healthz HTTP/1.1${CRLF}Host: t${CRLF}X-Folded: a${CRLF} b${CRLF}${CRLF}$SMUGGLED"
assert_eq "obs-fold (space): 400" "400" "$STATUSES"

raw "GET /healthz HTTP/1.1${CRLF}Host: t${CRLF}X-Folded: a${CRLF}"$'\t'"b${CRLF}${CRLF}$SMUGGLED"
assert_eq "obs-fold (tab): 400" "400" "$STATUSES"

raw "GET /healthz HTTP/1.1${CRLF}Host: t${CRLF}X-Bad: a"$'\x01'"b${CRLF}${CRLF}$SMUGGLED"
assert_eq "control byte in a header value: 400" "400" "$STATUSES"

raw "GET /healthz HTTP/1.1${CRLF}Host: t${CRLF}Bad Name: x${CRLF}${CRLF}$SMUGGLED"
assert_eq "space in a header name: 400" "400" "$STATUSES"

raw "POST /mcp HTTP/1.1${CRLF}Host: t${CRLF}Transfer-Encoding: gzip, chunked${CRLF}${CRLF}0${CRLF}${CRLF}$SMUGGLED"
assert_match "unsupported transfer coding refused (400/501)" '^(400|501)$' "$STATUSES"

raw "POST /mcp HTTP/1.1${CRLF}Host: t${CRLF}Transfer-Encoding: chunked${CRLF}${CRLF}zz${CRLF}{}${CRLF}0${CRLF}${CRLF}$SMUGGLED"
assert_eq "bad chunk size: 400" "400" "$STATUSES"

raw "POST /mcp HTTP/1.1${CRLF}Host: t${CRLF}Content-Length: -1${CRLF}${CRLF}$SMUGGLED"
assert_eq "negative Content-Length: 400" "400" "$STATUSES"

# --- limits ------------------------------------------------------------------------------------
BIG=$(printf 'x%.0s' $(seq 1 5000))
raw "GET /healthz HTTP/1.1${CRLF}Host: t${CRLF}X-Big: $BIG${CRLF}Connection: close${CRLF}${CRLF}"
assert_eq "header bytes over max_header_bytes: 431" "431" "$STATUSES"

MANY=""
for i in $(seq 1 40); do MANY="${MANY}X-H$i: v${CRLF}"; done
raw "GET /healthz HTTP/1.1${CRLF}Host: t${CRLF}${MANY}Connection: close${CRLF}${CRLF}"
assert_eq "header count over max_headers: 431" "431" "$STATUSES"

LONGURI=/$(printf 'u%.0s' $(seq 1 1500))
raw "GET $LONGURI HTTP/1.1${CRLF}Host: t${CRLF}Connection: close${CRLF}${CRLF}"
assert_eq "URI over max_uri_bytes: 414" "414" "$STATUSES"

raw "POST /mcp HTTP/1.1${CRLF}Host: t${CRLF}Content-Type: application/json${CRLF}Content-Length: 70000${CRLF}Connection: close${CRLF}${CRLF}{"
assert_eq "declared body over max_body_bytes: 413" "413" "$STATUSES"

head -c 70000 /dev/zero | tr '\0' ' ' >"$T_DIR/big.json"
req POST "$B_URL" -H 'Content-Type: application/json' -H 'Transfer-Encoding: chunked' \
	-H 'Accept: application/json, text/event-stream' --data-binary @"$T_DIR/big.json"
assert_code "chunked body over max_body_bytes" 413
# a chunk size that cannot fit is refused at once, before its data comes
# (not after the 30 s body timeout, which would be 408)
raw "POST /mcp HTTP/1.1${CRLF}Host: t${CRLF}Content-Type: application/json${CRLF}Transfer-Encoding: chunked${CRLF}${CRLF}11170${CRLF}{"
assert_eq "declared chunk size over max_body_bytes: 413 at once" "413" "$STATUSES"

# Just under the limits is fine.
MID=$(printf 'x%.0s' $(seq 1 2000))
raw "GET /healthz HTTP/1.1${CRLF}Host: t${CRLF}X-Mid: $MID${CRLF}Connection: close${CRLF}${CRLF}"
assert_eq "headers under the limit" "200" "$STATUSES"

# --- timeouts: slow or idle clients are let go -----------------------------------------------
cat >"$T_DIR/timeouts.yaml" <<'EOF2'
timeouts:
  header: 1s
  body: 1s
  idle: 1s
EOF2
start_backend -c "$T_DIR/timeouts.yaml" --era modern
HOST=${B_ADDR%:*}
PORT=${B_ADDR##*:}
# slow DATA: sends DATA and keeps the connection open; sets SLOW_RC (124
# if the server had not closed it within 6 s) and RAW.
slow() {
	exec 3<>"/dev/tcp/$HOST/$PORT" || { fail "cannot connect to $B_ADDR"; return 1; }
	printf '%s' "$1" >&3 2>/dev/null
	timeout 6 cat <&3 >"$T_DIR/slow.out" 2>/dev/null
	SLOW_RC=$?
	RAW=$(tr -d '\r' <"$T_DIR/slow.out")
	exec 3<&- 3>&-
}
slow "GET /healthz HTTP/1.1${CRLF}Host: t${CRLF}X-Partial: "
assert_ne "header timeout: an unfinished header block is closed" 124 "$SLOW_RC"
slow "POST /mcp HTTP/1.1${CRLF}Host: t${CRLF}Content-Type: application/json${CRLF}Content-Length: 100${CRLF}${CRLF}{\"jsonrpc\""
assert_ne "body timeout: an unfinished body is closed" 124 "$SLOW_RC"
slow "$HEALTH"
assert_ne "idle timeout: an idle keep-alive connection is closed" 124 "$SLOW_RC"
assert_match "idle timeout: the request itself was answered first" '^HTTP/1.1 200' "$RAW"

# The server is still healthy after all of that.
req GET "http://$B_ADDR/healthz"
assert_code "healthz after the abuse" 200
kill -0 "$B_PID" 2>/dev/null && ok "backend still running" || fail "backend died"

finish
