#!/bin/bash
# stateful_auth.sh - legacy sessions bound to the verified principal
# (sessions.bind_principal with auth:, issue 15).  Two stateful gateways
# sharing a sealed-session key and a JWKS file (a test issuer's ES256
# key) plus a static token: a session created with one JWT of alice's
# keeps working with a fresh JWT of alice's (another token, same issuer
# and subject) on either gateway, while bob's token and the static token
# get 404 -32011 for it; a
# request without a token is 401 before the session is looked at; a
# session created with the static token follows its name.  Without
# auth: the binding stays on the Authorization value (stateful_sealed.sh).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node openssl
require_mcpgw
ISSUER_TOOL=${ISSUER_TOOL:-$TOP_BUILDDIR/tests/tools/mgw-test-issuer}
[ -x "$ISSUER_TOOL" ] || die "$ISSUER_TOOL not built (make check builds it)"
watchdog 120

iss() { "$ISSUER_TOOL" "$@" 2>>"$T_DIR/issuer.err"; }
iss keygen ES256 k1 "$T_DIR/k1.pem" && iss keygen ES256 k2 "$T_DIR/k2.pem" ||
	die "keygen: $(cat "$T_DIR/issuer.err")"
iss jwks "$T_DIR/k1.pem:k1:ES256" "$T_DIR/k2.pem:k2:ES256" >"$T_DIR/jwks.json" || die "jwks"
STATIC=static-token-of-the-ci-0123456789

declare -A ADDR
for r in r1 r2; do
	start_backend --era legacy --id "$r"
	ADDR[$r]=$B_ADDR
done
printf 'k1 %s\n' "$(openssl rand -hex 32)" >"$T_DIR/s.keys"
SF_SESSIONS="  store: sealed
  key_file: $T_DIR/s.keys
  bind_principal: true" SF_EXTRA="auth:
  issuer: https://issuer.test
  resource: https://mcp.test/mcp
  jwks_file: $T_DIR/jwks.json
  static_tokens:
    - {name: ci, digest: \"$(iss digest "$STATIC")\"}" \
	sf_config "$T_DIR/g.yaml" stateful "${ADDR[r1]}" "${ADDR[r2]}"
start_serve -c "$T_DIR/g.yaml"
GA=$G_URL
start_serve -c "$T_DIR/g.yaml"
GB=$G_URL

NOW=$(date +%s)
tok() { # KEY ISS SUB IAT_OFFSET
	jq -cn --arg iss "$2" --arg sub "$3" --argjson t $((NOW + $4)) \
		'{iss: $iss, aud: "https://mcp.test/mcp", sub: $sub, iat: $t, exp: ($t + 600)}' >"$T_DIR/c.json"
	iss sign "$T_DIR/$1.pem" ES256 "$1" "$T_DIR/c.json"
}
ALICE1=$(tok k1 https://issuer.test alice 0)
ALICE2=$(tok k2 https://issuer.test alice -5)
BOB=$(tok k1 https://issuer.test bob 0)
assert_ne "alice's two tokens differ" "$ALICE1" "$ALICE2"

sf_init "$GA" -H "Authorization: Bearer $ALICE1" || die "no session"
lwho "$GA" -H "Authorization: Bearer $ALICE1"
assert_code "alice, the creating token, gateway A" 200
lwho "$GB" -H "Authorization: Bearer $ALICE2"
assert_code "alice, a fresh token (other key, other iat), gateway B" 200
lwho "$GA" -H "Authorization: Bearer $ALICE2"
assert_code "alice, the fresh token, gateway A (cached there)" 200
lwho "$GB" -H "Authorization: Bearer $BOB"
assert_code "bob's valid token on alice's session: 404" 404
assert_jq "bob: session_not_found -32011" '.error.code == -32011'
lwho "$GA" -H "Authorization: Bearer $STATIC"
assert_code "the static token on alice's session: 404" 404
lwho "$GB"
assert_code "no token: 401 before any session lookup" 401
lwho "$GB" -H "Authorization: Bearer $ALICE2"
assert_code "alice still works afterwards" 200

sf_init "$GB" -H "Authorization: Bearer $STATIC" || die "no static session"
lwho "$GA" -H "Authorization: Bearer $STATIC"
assert_code "a session of the static token, other gateway" 200
lwho "$GA" -H "Authorization: Bearer $ALICE1"
assert_code "alice on the static token's session: 404" 404

finish
