#!/bin/bash
# auth_interop.sh - the official TypeScript SDK 1.x client through
# "mcpgw serve" with auth: (issue 15).  With a bearer token from its
# OAuthClientProvider the client runs a whole session (initialize,
# tools/list, tools/call echo) and the replica never sees the token.
# Without one, the SDK's own OAuth discovery follows the gateway's 401 to
# the Protected Resource Metadata named by WWW-Authenticate, accepts it
# (it checks "resource" against the server URL) and moves on to the
# authorization server listed there.  Tokens come from the test issuer
# (tests/tools/mgw-test-issuer); the gateway reads its keys from a JWKS
# file.  The SDK then asks that server for the scope the challenge named
# and for a token whose resource (RFC 8707) is the gateway's URL.
# Packages in their own npm prefix (.cache/auth).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node npm
require_mcpgw
ISSUER_TOOL=${ISSUER_TOOL:-$TOP_BUILDDIR/tests/tools/mgw-test-issuer}
[ -x "$ISSUER_TOOL" ] || die "$ISSUER_TOOL not built (make check builds it)"
watchdog 300

SDK1=${MCPGW_SDK1_VERSION:-1.32.2}
PREFIX=$TOP_BUILDDIR/tests/interop/.cache/auth
. "$TOP_SRCDIR/tests/interop/node.sh"
interop_node
interop_packages "$PREFIX" "@modelcontextprotocol/sdk@$SDK1"
cp "$TOP_SRCDIR/tests/interop/auth_client.mjs" "$PREFIX/" || die "cannot copy the client"

"$ISSUER_TOOL" keygen ES256 k1 "$T_DIR/k1.pem" 2>"$T_DIR/issuer.err" &&
	"$ISSUER_TOOL" jwks "$T_DIR/k1.pem:k1:ES256" >"$T_DIR/jwks.json" ||
	die "test issuer: $(cat "$T_DIR/issuer.err")"

start_backend --id r1 --record 200
R1=$B_ADDR
AS=http://$R1          # an "authorization server" that is not one
PORT=$(free_port) || die "no free port"
URL=http://127.0.0.1:$PORT/mcp
cat >"$T_DIR/serve.yaml" <<EOF
listeners:
  - address: 127.0.0.1:$PORT
upstreams:
  - name: pool
    servers:
      - url: http://$R1
    health: {type: tcp, interval: 1s}
auth:
  issuer: https://issuer.test
  resource: $URL
  authorization_servers: [$AS]
  required_scopes: [mcp]
  jwks_file: $T_DIR/jwks.json
EOF
start_serve -c "$T_DIR/serve.yaml"

NOW=$(date +%s)
jq -cn --arg aud "$URL" --argjson now "$NOW" \
	'{iss: "https://issuer.test", aud: $aud, sub: "sdk-user", scope: "mcp", iat: $now, exp: ($now + 600)}' \
	>"$T_DIR/claims.json"
TOKEN=$("$ISSUER_TOOL" sign "$T_DIR/k1.pem" ES256 k1 "$T_DIR/claims.json") || die "sign"

run_client() { # MODE
	(cd "$PREFIX" && timeout 40 "$NODE" auth_client.mjs \
		"$(jq -cn --arg u "$URL" --arg m "$1" --arg t "$TOKEN" --arg asrv "$AS" \
			'{url: $u, mode: $m, token: $t, as: $asrv}')") \
		>"$T_DIR/$1.json" 2>"$T_DIR/$1.err"
	RC=$?
	SUM=$(tail -n 1 "$T_DIR/$1.json")
	log "$1: $(printf '%s' "$SUM" | head -c 1500)"
	[ -s "$T_DIR/$1.err" ] && log "$1 stderr: $(head -c 1500 "$T_DIR/$1.err")"
	return 0
}
sum_is() { # WHAT FILTER
	if printf '%s' "$SUM" | jq -e "$2" >/dev/null 2>&1; then ok "$1"; else
		fail "$1: jq '$2' does not hold on: $(printf '%s' "$SUM" | head -c 1500) $(head -c 600 "$T_DIR/$MODE.err")"
	fi
}

MODE=token
run_client token
assert_eq "with a token: the SDK client's session succeeds" 0 "$RC"
sum_is "with a token: tools listed" '.tools | index("echo") != null'
sum_is "with a token: echo answered" '.echo == "through auth"'
sum_is "with a token: every request carried Bearer" '[.fetches[] | select(.url | startswith("http://127.0.0.1:'"$PORT"'/mcp"))] | all(.auth == "Bearer")'
sum_is "with a token: nothing refused" '[.fetches[] | select(.status == 401 or .status == 403)] | length == 0'
N=$(rec "$R1" | jq '[.requests[]? | select(.method == "POST")] | length')
assert_cmp "the replica got the session's requests" "$N" ">=" 3
LEAK=$(rec "$R1" | jq '[.requests[]? | .headers[] | select(.[0] | ascii_downcase == "authorization")] | length')
assert_eq "the replica never saw the client's token" 0 "$LEAK"

MODE=none
run_client none
assert_eq "without a token: the discovery went as expected (client exit status)" 0 "$RC"
sum_is "without a token: the gateway answered 401" '.firstStatus == 401'
sum_is "without a token: the challenge names the metadata" \
	'.challenge | test("resource_metadata=\"http://127.0.0.1:'"$PORT"'/.well-known/oauth-protected-resource/mcp\"")'
sum_is "without a token: the SDK read the metadata (200) and accepted it" '.prmStatus == 200'
sum_is "without a token: the SDK went on to the authorization server listed" '.followedToAs == true'
sum_is "without a token: the SDK asks that server for the scope the challenge named" '.redirectedTo | test("[?&]scope=mcp(&|$)")'
sum_is "without a token: ... and for a token for the gateway's resource (RFC 8707)" \
	'.redirectedTo | test("[?&]resource=http%3A%2F%2F127.0.0.1%3A'"$PORT"'%2Fmcp(&|$)")'

finish
