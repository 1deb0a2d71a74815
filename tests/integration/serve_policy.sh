#!/bin/bash
# serve_policy.sh - a route's tool policy (issue 15, doc/security.md "Tool
# policy"): allow/deny lists of methods, tools, prompts and resources
# judged on the body's names, before any upstream is contacted:
# - a denied tools/call, prompts/get, resources/read or method gets 403
#   with JSON-RPC -32018, data {reason: "policy", method, name} and the
#   request's id (number or string), modern era (stateless handler) and
#   legacy era inside a session (stateful handler) alike; what is allowed
#   reaches the replica;
# - an Mcp-Name that disagrees with the body does not bypass: 400 -32020
#   on a validating route, 403 on a route with validate_headers: false
#   chosen by that very header (match.mcp_name);
# - a legacy batch holding one denied call is refused whole;
# - a body that is not JSON-RPC cannot be judged: 400 on a policy route;
# - notifications pass unless deny_methods names them;
# - filter_tools_list: the JSON tools/list answer lacks the denied tools
#   (both eras), everything else as the replica sent it, Content-Length
#   right; without it the list is the replica's, unchanged;
# - rules of "policy:" chosen by the principal the auth check verified
#   (static bearer tokens with scopes): the first whose when holds
#   replaces the route's lists, for tools/call and the tools/list filter;
# - a configuration with a bad policy key fails check-config with its
#   key path.
# The replica's /debug/requests show that no denied request reached it.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq sha256sum
require_mcpgw
watchdog 120

start_backend --era dual --id r1 --record 500
R1=$B_ADDR

cat >"$T_DIR/serve.yaml" <<EOF
listeners:
  - address: 127.0.0.1:0
mode: auto
upstreams:
  - name: pool
    servers:
      - url: http://$R1
    health:
      type: tcp
      interval: 1s
routes:
  # chosen by the Mcp-Name header, not validated: the policy must still
  # judge the body's name
  - match: {mcp_name: echo}
    upstream: pool
    validate_headers: false
    deny_tools: [add]
  - match: {path: /mcp}
    upstream: pool
    deny_tools: [add, counter_create]
    deny_prompts: [secret]
    allow_resources: ['file:///public/*']
    deny_methods: [resources/templates/list, notifications/roots/list_changed]
    filter_tools_list: true
  - upstream: pool
    deny_tools: [add]
EOF
"$MCPGW" check-config -q -c "$T_DIR/serve.yaml" 2>"$T_DIR/cc.err"
assert_eq "the policy configuration is valid" 0 "$?"
start_serve -c "$T_DIR/serve.yaml"
GW=$G_URL

# denied NAME: the last answer is the policy's 403 naming NAME (ID: the
# id expected back, as JSON).
denied() { # WHAT ID MESSAGE METHOD NAME
	assert_code "$1: 403" 403
	assert_jq "$1: -32018 with the request's id" ".error.code == -32018 and .id == $2"
	assert_jq "$1: the message names it" ".error.message == \"$3\""
	if [ -n "$5" ]; then
		assert_jq "$1: data" ".error.data == {reason: \"policy\", method: \"$4\", name: \"$5\"}"
	else
		assert_jq "$1: data" ".error.data == {reason: \"policy\", method: \"$4\"}"
	fi
}
# unseen WHAT BODY: the replica never received BODY.
unseen() {
	assert_eq "$1: never reached the replica" 0 "$(rec_sha "$R1" "$(sha_of "$2")")"
}
seen() {
	assert_eq "$1: reached the replica" 1 "$(rec_sha "$R1" "$(sha_of "$2")")"
}
MH=(-H "MCP-Protocol-Version: $MODERN_VERSION")

# --- modern era ---------------------------------------------------------------
rec_clear "$R1"
modern "$GW" 11 tools/call '{"name":"add","arguments":{"a":1,"b":2}}'
denied "modern: deny_tools add" 11 "tool 'add' not allowed on this route" tools/call add
unseen "modern: add" "$(modern_body 11 tools/call '{"name":"add","arguments":{"a":1,"b":2}}')"
modern "$GW" '"str-id"' tools/call '{"name":"counter_create","arguments":{}}'
denied "modern: a string id" '"str-id"' "tool 'counter_create' not allowed on this route" tools/call counter_create
modern "$GW" 12 tools/call '{"name":"whoami","arguments":{}}'
assert_code "modern: an allowed tool" 200
assert_eq "modern: it answered" r1 "$(tool_text)"
modern "$GW" 13 prompts/get '{"name":"secret"}'
denied "modern: deny_prompts secret" 13 "prompt 'secret' not allowed on this route" prompts/get secret
B=$(modern_body 14 prompts/get '{"name":"summary"}')
modern "$GW" 14 prompts/get '{"name":"summary"}'
assert_code "modern: another prompt passes (the replica answers: it has no prompts)" 404
assert_jq "modern: the replica's own answer" '.id == 14 and .error.code == -32601'
seen "modern: prompts/get summary" "$B"
modern "$GW" 15 resources/read '{"uri":"file:///etc/passwd"}'
denied "modern: a resource outside allow_resources" 15 "resource 'file:///etc/passwd' not allowed on this route" resources/read file:///etc/passwd
B=$(modern_body 16 resources/read '{"uri":"file:///public/readme"}')
modern "$GW" 16 resources/read '{"uri":"file:///public/readme"}'
assert_code "modern: a resource under the allowed prefix passes (the replica answers)" 404
assert_jq "modern: the replica's own answer" '.id == 16 and .error.code == -32601'
seen "modern: resources/read file:///public/readme" "$B"
modern "$GW" 17 resources/templates/list '{}'
denied "modern: deny_methods" 17 "method 'resources/templates/list' not allowed on this route" resources/templates/list ""

# Mcp-Name says echo, the body says add
B=$(modern_body 18 tools/call '{"name":"add","arguments":{"a":1,"b":2}}')
post "$GW" "$B" "${MH[@]}" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo'
assert_code "modern: Mcp-Name echo, body add, route not validating: refused" 403
assert_jq "modern: the body's name is the one judged" '.error.code == -32018 and .error.data.name == "add" and .id == 18'
post "$G_ADDR/other" "$B" "${MH[@]}" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: whoami'
assert_code "modern: Mcp-Name whoami, body add, validating route: refused" 400
assert_jq "modern: as a header mismatch" '.error.code == -32020 and .id == 18'
unseen "modern: the disagreeing requests" "$B"
# the same route lets the body's echo through
modern "$GW" 19 tools/call '{"name":"echo","arguments":{"text":"hi"}}'
assert_code "modern: echo on the mcp_name route" 200
assert_eq "modern: echo answered" hi "$(tool_text)"

# a body with a BOM, sent as text/plain, is still read (RFC 8259 8.1 lets
# a reader ignore the BOM) and judged on its name; a body that is not
# JSON-RPC cannot be judged and is refused
req POST "$GW" -H 'Content-Type: text/plain' -H 'Accept: application/json, text/event-stream' \
	--data-binary $'\xef\xbb\xbf{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"add"}}'
assert_code "a body with a BOM as text/plain on a policy route: judged and refused" 403
assert_jq "... by the policy, with the id" '.error.code == -32018 and .id == 20 and .error.data.name == "add"'
req POST "$GW" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
	--data-binary '{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"add"'
assert_code "a truncated body on a policy route: refused" 400

# --- filtered tools/list ----------------------------------------------------------
B=$(modern_body 30 tools/list '{}')
post "http://$R1/mcp" "$B" "${MH[@]}" -H 'Mcp-Method: tools/list'
DIRECT=$BODY
DIRECT_SHA=$(sha256sum <"$BODYF" | cut -d' ' -f1)
assert_jq "direct: the replica lists add" '[.result.tools[].name] | index("add") != null'
post "$GW" "$B" "${MH[@]}" -H 'Mcp-Method: tools/list'
assert_code "modern: tools/list through the gateway" 200
assert_jq "modern: add and counter_create filtered out" '[.result.tools[].name] | (index("add") == null and index("counter_create") == null and index("echo") != null)'
assert_eq "modern: every other tool exactly as the replica sent it" \
	"$(printf '%s' "$DIRECT" | jq -c '.result.tools | map(select(.name != "add" and .name != "counter_create"))')" \
	"$(jq_get '.result.tools' | jq -c .)"
assert_eq "modern: the rest of the answer unchanged" \
	"$(printf '%s' "$DIRECT" | jq -c 'del(.result.tools)')" "$(rpc | jq -c 'del(.result.tools)')"
assert_eq "modern: Content-Length is the filtered body's" "$(wc -c <"$BODYF" | tr -d ' ')" "$(hdr content-length)"
post "$G_ADDR/elsewhere" "$(modern_body 31 tools/call '{"name":"add","arguments":{"a":1,"b":2}}')" "${MH[@]}" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: add'
denied "modern: the catch-all route's own deny_tools" 31 "tool 'add' not allowed on this route" tools/call add

# --- legacy era inside a session (stateful handler) -------------------------------------------
legacy_init "$GW"
assert_ne "legacy: a session" "" "$SID"
legacy "$GW" 41 tools/call '{"name":"add","arguments":{"a":1,"b":2}}'
denied "legacy: deny_tools add" 41 "tool 'add' not allowed on this route" tools/call add
legacy "$GW" 42 tools/call '{"name":"echo","arguments":{"text":"legacy"}}'
assert_code "legacy: an allowed tool" 200
assert_eq "legacy: echo answered" legacy "$(tool_text)"
legacy "$GW" 43 prompts/get '{"name":"secret"}'
denied "legacy: deny_prompts" 43 "prompt 'secret' not allowed on this route" prompts/get secret
legacy "$GW" 44 tools/list '{}'
assert_code "legacy: tools/list" 200
assert_jq "legacy: filtered" '[.result.tools[].name] | (index("add") == null and index("echo") != null)'
post "$GW" '{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}' \
	-H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED"
assert_code "legacy: a notification deny_methods names" 403
assert_jq "legacy: refused with id null" '.error.code == -32018 and .id == null'
post "$GW" '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}' \
	-H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED"
assert_code "legacy: another notification passes" 202
BATCH='[{"jsonrpc":"2.0","id":45,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}},{"jsonrpc":"2.0","id":46,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}]'
post "$GW" "$BATCH" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-03-26"
assert_code "legacy: a batch holding a denied call" 403
assert_jq "legacy: the batch is refused naming the denied element" '.error.code == -32018 and .error.data.name == "add" and .id == null'
unseen "legacy: the batch" "$BATCH"

# --- without filter_tools_list: the replica's list, byte for byte ------------------------------
cat >"$T_DIR/nofilter.yaml" <<EOF
listeners:
  - address: 127.0.0.1:0
upstreams:
  - name: pool
    servers:
      - url: http://$R1
    health:
      type: tcp
routes:
  - upstream: pool
    deny_tools: [add]
EOF
start_serve -c "$T_DIR/nofilter.yaml"
post "$G_URL" "$(modern_body 30 tools/list '{}')" "${MH[@]}" -H 'Mcp-Method: tools/list'
assert_code "no filter_tools_list: tools/list" 200
assert_eq "no filter_tools_list: the replica's bytes" "$DIRECT_SHA" "$(sha256sum <"$BODYF" | cut -d' ' -f1)"
modern "$G_URL" 32 tools/call '{"name":"add","arguments":{"a":1,"b":2}}'
denied "no filter_tools_list: add is still refused" 32 "tool 'add' not allowed on this route" tools/call add

# --- rules on the principal (auth: with static tokens) ---------------------------------------
# The route denies every tool; a token with scope admin gets everything
# but add, one with scope tools only echo, one with neither the route's
# lists (a static token has scopes, no claims: a claims rule never holds).
tokdig() { printf 'sha256:%s' "$(printf %s "$1" | sha256sum | cut -d' ' -f1)"; }
ADMIN=admin-token-0123456789abcdef
READER=reader-token-0123456789abcdef
PLAIN=plain-token-0123456789abcdef
cat >"$T_DIR/rules.yaml" <<EOF
listeners:
  - address: 127.0.0.1:0
upstreams:
  - name: pool
    servers:
      - url: http://$R1
    health:
      type: tcp
routes:
  - upstream: pool
    deny_tools: ['*']
    filter_tools_list: true
    policy:
      - when: {claims: {sub: admin}}
        allow_tools: [add]
      - when: {scopes: [admin]}
        deny_tools: [add]
      - when: {scopes: [tools, mcp]}
        allow_tools: [echo]
auth:
  resource: https://mcp.test/mcp
  required_scopes: [mcp]
  static_tokens:
    - {name: admin, digest: "$(tokdig "$ADMIN")", scopes: [mcp, admin]}
    - {name: reader, digest: "$(tokdig "$READER")", scopes: [mcp, tools]}
    - {name: plain, digest: "$(tokdig "$PLAIN")", scopes: [mcp]}
EOF
start_serve -c "$T_DIR/rules.yaml"
call() { # TOKEN ID TOOL
	modern "$G_URL" "$2" tools/call "{\"name\":\"$3\",\"arguments\":{\"a\":1,\"b\":2,\"text\":\"t\"}}" -H "Authorization: Bearer $1"
}
call "$ADMIN" 51 whoami
assert_code "principal: scope admin -> its rule: whoami allowed" 200
call "$ADMIN" 52 add
denied "principal: scope admin -> its rule denies add" 52 "tool 'add' not allowed on this route" tools/call add
call "$READER" 53 echo
assert_code "principal: scopes tools+mcp -> echo allowed" 200
call "$READER" 54 whoami
denied "principal: scopes tools+mcp -> only echo" 54 "tool 'whoami' not allowed on this route" tools/call whoami
call "$PLAIN" 55 echo
denied "principal: no rule holds -> the route's deny '*'" 55 "tool 'echo' not allowed on this route" tools/call echo
modern "$G_URL" 56 tools/call '{"name":"echo","arguments":{"text":"t"}}'
assert_code "principal: no token at all: the auth check answers first" 401
modern "$G_URL" 57 tools/list '{}' -H "Authorization: Bearer $READER"
assert_jq "principal: the tools/list filter follows the principal's rule" '[.result.tools[].name] == ["echo"]'
stop_serve

# --- check-config ------------------------------------------------------------------
bad() { # WHAT ROUTE_YAML EXPECTED_ERE
	printf 'upstreams:\n  - name: pool\n    servers:\n      - url: http://127.0.0.1:1\nroutes:\n  - upstream: pool\n%s\n' "$2" >"$T_DIR/bad.yaml"
	"$MCPGW" check-config -c "$T_DIR/bad.yaml" >/dev/null 2>"$T_DIR/bad.err"
	assert_eq "check-config: $1: exit status" 2 "$?"
	assert_match "check-config: $1: message" "$3" "$(cat "$T_DIR/bad.err")"
}
bad "a list given as a string" '    deny_tools: add' 'bad\.yaml:7:17: routes\[0\]\.deny_tools: expected a list of strings'
bad "an empty entry" "    allow_tools: ['']" 'routes\[0\]\.allow_tools\[0\]: must be 1 to 1024 bytes long'
bad "a rule without lists" $'    policy:\n      - when: {scopes: [admin]}' 'routes\[0\]\.policy\[0\]: a policy rule needs at least one allow_\* or deny_\* list'
bad "claims not a mapping" $'    policy:\n      - when: {claims: [a]}\n        deny_tools: [x]' 'routes\[0\]\.policy\[0\]\.when\.claims: expected a mapping of strings'

finish
