#!/bin/bash
# serve_body_form.sh - a body on a route chosen by MCP headers is confirmed
# against them or refused, whatever its form (issue 15, the body-form
# hardening class).  Each row of the table below is one POST of a modern
# request carrying Mcp-Method / Mcp-Name through "mcpgw serve":
# - Content-Type text/plain, none, application/octet-stream, multipart,
#   application/json with parameters, case variants;
# - with a UTF-8 BOM (read as JSON ignoring it, RFC 8259 8.1, and
#   forwarded unchanged), leading whitespace, a double BOM, a UTF-16 mark;
# - JSON that is not an object (a batch, a string), an empty body,
#   garbage, a duplicate member, a gzip body (Content-Encoding: 415);
# and asserts the status, the JSON-RPC code, and at the replicas
# (/debug/requests) that a refused request reached none of them while a
# confirmed one reached the replica of its route with its bytes unchanged.
# Then: legacy-era and era-unknown requests and non-POSTs are never routed
# by Mcp-Method / Mcp-Name (they take the path route); a modern request
# without Mcp-Name whose body names the tool does not take the Mcp-Name
# route and is refused by validation; over HTTP/2 the same; with
# validate_headers: false the unconfirmed body is forwarded (the
# operator's documented choice); in stateful mode a modern request with a
# (stray) session header is validated too.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node gzip sha256sum
require_mcpgw
watchdog 150

# R1 serves the routes chosen by headers (tool "add", method
# prompts/list); R2 the catch-all route.
start_backend --id r1 --record 500
R1=$B_ADDR
start_backend --id r2 --record 500
R2=$B_ADDR

serve_conf() { # FILE [TOP_YAML]
	cat >"$1" <<EOF
listeners:
  - address: 127.0.0.1:0
${2:-}
upstreams:
  - name: adder
    servers:
      - url: http://$R1
    health:
      type: tcp
      interval: 1s
  - name: pool
    servers:
      - url: http://$R2
    health:
      type: tcp
      interval: 1s
routes:
  - match: {mcp_method: tools/call, mcp_name: add}
    upstream: adder
  - match: {mcp_method: prompts/list}
    upstream: adder
  - upstream: pool
EOF
}
serve_conf "$T_DIR/serve.yaml"
start_serve -c "$T_DIR/serve.yaml"
GW=$G_URL

# ---- bodies -------------------------------------------------------------------
B=$T_DIR/bodies
mkdir -p "$B"
BOM=$'\xEF\xBB\xBF'
ECHO_P='{"name":"echo","arguments":{"text":"smuggled"}}'
ADD_P='{"name":"add","arguments":{"a":2,"b":3}}'
modern_body 11 tools/call "$ECHO_P" >"$B/echo.raw"
modern_body 12 tools/call "$ADD_P" >"$B/add.raw"
modern_body 13 tools/list '{}' >"$B/list.raw"
# write NAME BYTES...: the body file NAME (printf %s of each piece)
write() { local n=$1; shift; printf '%s' "$@" >"$B/$n"; }
write echo "$(cat "$B/echo.raw")"
write add "$(cat "$B/add.raw")"
write bom_echo "$BOM" "$(cat "$B/echo.raw")"
write bom_add "$BOM" "$(cat "$B/add.raw")"
write bom_ws_echo "$BOM" $' \r\n\t' "$(cat "$B/echo.raw")"
write ws_echo $'\r\n\t  ' "$(cat "$B/echo.raw")"
write ws_add $'\n  ' "$(cat "$B/add.raw")"
write bom2_add "$BOM$BOM" "$(cat "$B/add.raw")"
write ws_bom_add ' ' "$BOM" "$(cat "$B/add.raw")"
printf '\xFE\xFF' >"$B/utf16_add"; cat "$B/add.raw" >>"$B/utf16_add"
write bom_list "$BOM" "$(cat "$B/list.raw")"
write batch_add "[$(cat "$B/add.raw")]"
write string '"tools/call"'
: >"$B/empty"
write garbage 'tools/call add a=2 b=3'
write form 'name=add&a=2&b=3'
printf '%s\0' "$(cat "$B/add.raw")" >"$B/nul_add"
# params.name twice: "add" to one parser, "echo" to the next
jq -cn '{jsonrpc:"2.0",id:14,method:"tools/call",params:{name:"add",arguments:{a:1,b:1},
	_meta:{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
	"io.modelcontextprotocol/clientCapabilities":{}}}}' |
	sed 's/"name":"add"/"name":"add","name":"echo"/' >"$B/dup_name"
gzip -c <"$B/add.raw" >"$B/gzip_add"
{
	printf -- '--XyZ\r\nContent-Disposition: form-data; name="body"\r\n'
	printf 'Content-Type: application/json\r\n\r\n%s\r\n--XyZ--\r\n' "$(cat "$B/add.raw")"
} >"$B/multipart_add"
# a body that names "add" but carries no Mcp-Name: must not take the add route
write noname_add "$(cat "$B/add.raw")"

V="MCP-Protocol-Version: $MODERN_VERSION"
CALL='Mcp-Method: tools/call'

# One row: WHAT | BODY | CONTENT-TYPE ("-" none) | HEADERS (";;"-separated,
# "-" none) | STATUS | JSON-RPC CODE ("-" none: forwarded) | WHERE
# (none | r1 | r2: the replica that must have received it).
CASES=$(cat <<EOF
issue: BOM, text/plain, Mcp-Name disagrees|bom_echo|text/plain|$V;;$CALL;;Mcp-Name: add|400|-32020|none
text/plain, Mcp-Name disagrees|echo|text/plain|$V;;$CALL;;Mcp-Name: add|400|-32020|none
BOM, application/json, Mcp-Name disagrees|bom_echo|application/json|$V;;$CALL;;Mcp-Name: add|400|-32020|none
BOM, no Content-Type, Mcp-Name disagrees|bom_echo|-|$V;;$CALL;;Mcp-Name: add|400|-32020|none
octet-stream, Mcp-Name disagrees|echo|application/octet-stream|$V;;$CALL;;Mcp-Name: add|400|-32020|none
multipart type over raw JSON, Mcp-Name disagrees|echo|multipart/form-data; boundary=XyZ|$V;;$CALL;;Mcp-Name: add|400|-32020|none
APPLICATION/JSON; Charset=UTF-8, Mcp-Name disagrees|echo|APPLICATION/JSON; Charset=UTF-8|$V;;$CALL;;Mcp-Name: add|400|-32020|none
BOM + whitespace, text/plain, Mcp-Name disagrees|bom_ws_echo|text/plain|$V;;$CALL;;Mcp-Name: add|400|-32020|none
leading whitespace, text/plain, Mcp-Name disagrees|ws_echo|text/plain|$V;;$CALL;;Mcp-Name: add|400|-32020|none
BOM, text/plain, Mcp-Method disagrees (method route)|bom_list|text/plain|$V;;Mcp-Method: prompts/list|400|-32020|none
BOM, no version header (_meta modern), Mcp-Name disagrees|bom_echo|text/plain|$CALL;;Mcp-Name: add|400|-32020|none
two BOMs, text/plain|bom2_add|text/plain|$V;;$CALL;;Mcp-Name: add|400|-32700|none
BOM after a space, text/plain|ws_bom_add|text/plain|$V;;$CALL;;Mcp-Name: add|400|-32700|none
UTF-16 BOM, application/json|utf16_add|application/json|$V;;$CALL;;Mcp-Name: add|400|-32700|none
multipart body, multipart type|multipart_add|multipart/form-data; boundary=XyZ|$V;;$CALL;;Mcp-Name: add|400|-32700|none
form body, form type|form|application/x-www-form-urlencoded|$V;;$CALL;;Mcp-Name: add|400|-32700|none
garbage, text/plain|garbage|text/plain|$V;;$CALL;;Mcp-Name: add|400|-32700|none
empty body, text/plain|empty|text/plain|$V;;$CALL;;Mcp-Name: add|400|-32700|none
empty body, no Content-Type|empty|-|$V;;$CALL;;Mcp-Name: add|400|-32700|none
empty body, Mcp-Method only|empty|-|$V;;Mcp-Method: prompts/list|400|-32700|none
trailing NUL, text/plain|nul_add|text/plain|$V;;$CALL;;Mcp-Name: add|400|-32700|none
batch, text/plain|batch_add|text/plain|$V;;$CALL;;Mcp-Name: add|400|-32600|none
JSON string, text/plain|string|text/plain|$V;;$CALL;;Mcp-Name: add|400|-32600|none
duplicate params.name, text/plain|dup_name|text/plain|$V;;$CALL;;Mcp-Name: add|400|-32600|none
gzip, application/json|gzip_add|application/json|$V;;$CALL;;Mcp-Name: add;;Content-Encoding: gzip|415|-32600|none
gzip, text/plain|gzip_add|text/plain|$V;;$CALL;;Mcp-Name: add;;Content-Encoding: gzip|415|-32600|none
plain JSON labelled gzip|add|application/json|$V;;$CALL;;Mcp-Name: add;;Content-Encoding: GZIP|415|-32600|none
gzip, no MCP headers, JSON type|gzip_add|application/json|$V;;Content-Encoding: gzip|415|-32600|none
no Mcp-Name, body names add|noname_add|application/json|$V;;$CALL|400|-32020|none
ok: application/json; charset=utf-8|add|application/json; charset=utf-8|$V;;$CALL;;Mcp-Name: add|200|-|r1
ok: BOM, application/json|bom_add|application/json|$V;;$CALL;;Mcp-Name: add|200|-|r1
ok: leading whitespace|ws_add|application/json|$V;;$CALL;;Mcp-Name: add|200|-|r1
ok: Content-Encoding identity|add|application/json|$V;;$CALL;;Mcp-Name: add;;Content-Encoding: identity|200|-|r1
ok: BOM, text/plain, confirmed (the replica judges the type)|bom_add|text/plain|$V;;$CALL;;Mcp-Name: add|415|-32600|r1
ok: text/plain, confirmed, other tool|echo|text/plain|$V;;$CALL;;Mcp-Name: echo|415|-32600|r2
ok: a form without MCP headers is not an MCP message|form|application/x-www-form-urlencoded|$V|415|-32600|r2
EOF
)

# send BODY CTYPE HEADERS [curl options...]
send() {
	local body=$1 ct=$2 hs=$3 h args=()
	shift 3
	if [ "$ct" = - ]; then args+=(-H 'Content-Type:'); else args+=(-H "Content-Type: $ct"); fi
	if [ "$hs" != - ]; then
		while IFS= read -r h; do
			[ -n "$h" ] && args+=(-H "$h")
		done <<<"${hs//;;/$'\n'}"
	fi
	req POST "$GW" -H 'Accept: application/json, text/event-stream' "${args[@]}" \
		--data-binary "@$B/$body" "$@"
}

# run_cases LABEL [curl options...]: every row of CASES.
run_cases() {
	local label=$1 what body ct hs st code where sha n1 n2
	shift
	while IFS='|' read -r what body ct hs st code where; do
		[ -n "$what" ] || continue
		rec_clear "$R1"
		rec_clear "$R2"
		send "$body" "$ct" "$hs" "$@"
		assert_code "$label$what: status" "$st"
		if [ "$code" != - ]; then
			assert_jq "$label$what: JSON-RPC $code" ".error.code == $code"
		else
			assert_jq "$label$what: a result" 'has("result")'
		fi
		sha=$(sha256sum <"$B/$body" | cut -d' ' -f1)
		n1=$(rec_sha "$R1" "$sha")
		n2=$(rec_sha "$R2" "$sha")
		case $where in
		none) assert_eq "$label$what: no replica received it" "0 0" "${n1:-?} ${n2:-?}" ;;
		r1) assert_eq "$label$what: r1 (its route) received the bytes unchanged, r2 nothing" "1 0" "${n1:-?} ${n2:-?}" ;;
		r2) assert_eq "$label$what: r2 (catch-all) received the bytes unchanged, r1 nothing" "0 1" "${n1:-?} ${n2:-?}" ;;
		esac
	done <<<"$CASES"
}

run_cases ""
# refusals carry the request's id when the body could be read
send bom_echo text/plain "$V;;$CALL;;Mcp-Name: add"
assert_jq "a BOM'd body's id is echoed" '.id == 11'
assert_jq "the mismatch names Mcp-Name" '.error.message | test("Mcp-Name")'
send gzip_add application/json "$V;;$CALL;;Mcp-Name: add;;Content-Encoding: gzip"
assert_eq "415 says which coding the gateway reads" identity "$(hdr accept-encoding)"

# ---- HTTP/2: the same table ------------------------------------------------------
run_cases "h2: " --http2-prior-knowledge

# ---- requests whose headers are never trusted for routing -----------------------
rec_clear "$R1"
rec_clear "$R2"
LEG=$(jq -cn '{jsonrpc:"2.0",id:21,method:"tools/call",params:{name:"echo",arguments:{text:"l"}}}')
printf '%s' "$LEG" >"$B/legacy_echo"
printf '%s%s' "$BOM" "$LEG" >"$B/bom_legacy_echo"
send legacy_echo application/json "MCP-Protocol-Version: $LEGACY_VERSION;;$CALL;;Mcp-Name: add"
assert_eq "legacy request with Mcp-Name: add is routed by path (r2), never to the Mcp-Name route" \
	"0 1" "$(rec_sha "$R1" "$(sha_of "$LEG")") $(rec_sha "$R2" "$(sha_of "$LEG")")"
send bom_legacy_echo text/plain "$CALL;;Mcp-Name: add"
S=$(sha256sum <"$B/bom_legacy_echo" | cut -d' ' -f1)
assert_eq "era-unknown BOM'd request with Mcp-Name: add is routed by path (r2)" \
	"0 1" "$(rec_sha "$R1" "$S") $(rec_sha "$R2" "$S")"
req PUT "$GW" -H "$V" -H "$CALL" -H 'Mcp-Name: add' -H 'Content-Type: text/plain' \
	--data-binary "@$B/echo"
S=$(sha256sum <"$B/echo" | cut -d' ' -f1)
assert_eq "a PUT with modern headers is routed by path (r2), never by Mcp-Name" \
	"0 1" "$(rec_sha "$R1" "$S") $(rec_sha "$R2" "$S")"

# ---- validate_headers: false trusts the headers (the operator's choice) ----------
cat >"$T_DIR/novalidate.yaml" <<EOF
listeners:
  - address: 127.0.0.1:0
upstreams:
  - name: adder
    servers:
      - url: http://$R1
    health: {type: tcp, interval: 1s}
  - name: pool
    servers:
      - url: http://$R2
    health: {type: tcp, interval: 1s}
routes:
  - match: {mcp_method: tools/call, mcp_name: add}
    upstream: adder
    validate_headers: false
  - upstream: pool
EOF
start_serve -c "$T_DIR/novalidate.yaml"
rec_clear "$R1"
req POST "$G_URL" -H 'Content-Type: text/plain' -H "$V" -H "$CALL" -H 'Mcp-Name: add' \
	--data-binary "@$B/bom_echo"
S=$(sha256sum <"$B/bom_echo" | cut -d' ' -f1)
assert_eq "validate_headers: false forwards the unconfirmed body on the header route (documented)" \
	1 "$(rec_sha "$R1" "$S")"

# ---- stateful mode: a modern request with a session header is validated too -------
SF_WORKERS=1 sf_config "$T_DIR/sf.yaml" stateful "$R1"
start_serve -c "$T_DIR/sf.yaml"
SFGW=$G_URL
sf_init "$SFGW"
rec_clear "$R1"
GW=$SFGW
send bom_echo text/plain "$V;;$CALL;;Mcp-Name: add;;Mcp-Session-Id: $SID"
assert_code "stateful: modern mismatch with a session header: 400" 400
assert_jq "stateful: -32020" '.error.code == -32020'
S=$(sha256sum <"$B/bom_echo" | cut -d' ' -f1)
assert_eq "stateful: the replica did not receive it" 0 "$(rec_sha "$R1" "$S")"
send garbage text/plain "$V;;$CALL;;Mcp-Name: add;;Mcp-Session-Id: $SID"
assert_code "stateful: unreadable body with MCP headers and a session: 400" 400
assert_jq "stateful: -32700" '.error.code == -32700'
# the session itself still works
lwho "$SFGW"
assert_eq "stateful: the legacy session is unaffected" r1 "$WHO"

finish
