#!/bin/bash
# serve_auth.sh - "mcpgw serve" as an OAuth 2.1 resource server (auth:,
# issue 15).  A test issuer made here with OpenSSL (tests/tools/
# mgw-test-issuer: keys, JWKS, tokens signed with RS256, PS256, ES256 and
# EdDSA) and a JWKS served over HTTPS by `openssl s_server -WWW` on
# loopback:
# - every algorithm verifies; expired, not yet valid, wrong aud, wrong
#   iss, a flipped signature bit, alg none, HS256 keyed with the RSA
#   public key, an oversized token, a malformed Authorization: each is
#   refused with its status, WWW-Authenticate (resource_metadata, error,
#   scope) and a JSON-RPC error with the request's id, never 500;
# - clock skew is honoured; a missing scope is 403 insufficient_scope; a
#   route with auth: false needs no token, one with its own
#   required_scopes asks for those;
# - a token with a kid the keys lack makes the gateway fetch the JWKS
#   again (a key added at the issuer is found, a retired key no longer
#   verifies even a token verified before), at most once per
#   jwks_min_interval; with the issuer down the last good keys still
#   verify, also across a SIGHUP reload, which reads the JWKS file again;
# - static tokens (kept as digests);
# - a route's tool policy with a rule on the token's claims;
# - Protected Resource Metadata at /.well-known/oauth-protected-resource
#   and its path-suffixed form, naming the configured public URL;
# - the refused requests never reached the replica, and the replica never
#   sees the client's Authorization (upstream_auth strip by default);
# - /metrics counts the outcomes and the fetches.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node openssl
require_mcpgw
ISSUER_TOOL=${ISSUER_TOOL:-$TOP_BUILDDIR/tests/tools/mgw-test-issuer}
[ -x "$ISSUER_TOOL" ] || die "$ISSUER_TOOL not built (make check builds it)"
watchdog 180

iss() { "$ISSUER_TOOL" "$@" 2>>"$T_DIR/issuer.err"; }
K=$T_DIR/keys
mkdir -p "$K" "$T_DIR/www"
for a in RS256:r1 PS256:p1 ES256:e1 EdDSA:d1 RS256:late; do
	iss keygen "${a%%:*}" "${a##*:}" "$K/${a##*:}.pem" ||
		die "mgw-test-issuer keygen $a failed: $(tail -n 3 "$T_DIR/issuer.err")"
done
# the file holds r1; the issuer serves p1, e1, d1 (and "late" later)
iss jwks "$K/r1.pem:r1:RS256" >"$T_DIR/jwks_file.json" || die "jwks r1"
iss jwks "$K/p1.pem:p1:PS256" "$K/e1.pem:e1:ES256" "$K/d1.pem:d1:EdDSA" \
	>"$T_DIR/www/jwks.json" || die "jwks served"

gen_cert
start_https() {
	local try
	for try in 1 2 3; do
		JWKS_PORT=$(free_port) || continue
		(cd "$T_DIR/www" && exec openssl s_server -quiet -WWW \
			-accept "127.0.0.1:$JWKS_PORT" -cert "$CERT" -key "$KEY" \
			>"$T_DIR/s_server.out" 2>"$T_DIR/s_server.err") &
		JWKS_PID=$!
		track_pid "$JWKS_PID"
		if poll_until 5 curl -sf --max-time 2 --cacert "$CERT" \
			-o /dev/null "https://127.0.0.1:$JWKS_PORT/jwks.json"; then
			log "JWKS over HTTPS (pid $JWKS_PID) on 127.0.0.1:$JWKS_PORT"
			return 0
		fi
		kill "$JWKS_PID" 2>/dev/null
		wait "$JWKS_PID" 2>/dev/null
	done
	die "openssl s_server did not start: $(tail -n 3 "$T_DIR/s_server.err")"
}
start_https

start_backend --id r1 --record 500
R1=$B_ADDR
ISS=https://issuer.test
AUD=https://mcp.test/mcp
STATIC_TOKEN=static-secret-token-for-ci-0123456789
STATIC_DIGEST=$(iss digest "$STATIC_TOKEN")

cat >"$T_DIR/serve.yaml" <<EOF
listeners:
  - address: 127.0.0.1:0
upstreams:
  - name: pool
    servers:
      - url: http://$R1
    health:
      type: tcp
      interval: 1s
routes:
  - match: {mcp_method: tools/list}
    upstream: pool
    auth: false
  - match: {mcp_method: server/discover}
    upstream: pool
    required_scopes: [admin]
  - match: {mcp_method: tools/call}
    upstream: pool
    deny_tools: [add]
    policy:
      - when: {claims: {role: admin}}
        allow_tools: ["*"]
  - match: {path: "*"}
    upstream: pool
auth:
  issuer: $ISS
  resource: $AUD
  authorization_servers: [$ISS]
  required_scopes: [mcp]
  jwks_file: $T_DIR/jwks_file.json
  jwks_url: https://127.0.0.1:$JWKS_PORT/jwks.json
  jwks_ca_file: $CERT
  jwks_min_interval: 2s
  clock_skew: 60s
  max_token_bytes: 4KiB
  static_tokens:
    - name: ci
      digest: "$STATIC_DIGEST"
      scopes: [mcp]
EOF
"$MCPGW" check-config -c "$T_DIR/serve.yaml" >"$T_DIR/check.out" 2>&1
assert_eq "check-config accepts the auth: section" 0 $?
start_serve -c "$T_DIR/serve.yaml"
GW=$G_URL
BASE=http://$G_ADDR

NOW=$(date +%s)
# claims SUB [jq updates...]: a claims file for a valid token, changed by
# the jq expression.
claims() {
	jq -cn --arg iss "$ISS" --arg aud "$AUD" --argjson now "$NOW" \
		"{iss: \$iss, aud: \$aud, sub: \"alice\", client_id: \"app1\",
		  scope: \"mcp tools\", iat: \$now, exp: (\$now + 600)} | ${1:-.}" \
		>"$T_DIR/claims.json"
	printf '%s' "$T_DIR/claims.json"
}
tok() { # KEY ALG KID [jq update]
	iss sign "$K/$1.pem" "$2" "$3" "$(claims "${4:-.}")"
}

INIT='{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
posts() { rec "$R1" | jq '[.requests[]? | select(.method == "POST")] | length'; }
challenge() { hdr www-authenticate; }

# ---- the metadata -----------------------------------------------------------
for p in /.well-known/oauth-protected-resource/mcp /.well-known/oauth-protected-resource; do
	req GET "$BASE$p"
	assert_code "metadata at $p, no token needed" 200
	assert_eq "metadata at $p: resource is the configured public URL" "$AUD" "$(printf '%s' "$BODY" | jq -r .resource)"
	assert_eq "metadata at $p: authorization_servers" "[\"$ISS\"]" "$(printf '%s' "$BODY" | jq -c .authorization_servers)"
	assert_eq "metadata at $p: scopes_supported" '["mcp"]' "$(printf '%s' "$BODY" | jq -c .scopes_supported)"
	assert_eq "metadata at $p: readable cross-origin" "*" "$(hdr access-control-allow-origin)"
done

BEFORE=$(posts)
# ---- no credentials ---------------------------------------------------------
post "$GW" "$INIT"
assert_code "no Authorization: 401" 401
assert_eq "no Authorization: the challenge names the metadata and the scope, no error code" \
	"Bearer resource_metadata=\"https://mcp.test/.well-known/oauth-protected-resource/mcp\", scope=\"mcp\"" "$(challenge)"
assert_jq "no Authorization: JSON-RPC -32017 with the id" '.error.code == -32017 and .id == 7'
post "$GW" "$INIT" -H "Authorization: Basic dXNlcjpwYXNz"
assert_code "Basic credentials: 401" 401
assert_nomatch "Basic credentials: no error code (RFC 6750 3.1)" 'error=' "$(challenge)"
for bad in "Bearer" "Bearer    " "Bearer a b" "Bearer a=b" "Bearer ab%cd"; do
	post "$GW" "$INIT" -H "Authorization: $bad"
	assert_code "malformed '$bad': 400" 400
	assert_match "malformed '$bad': invalid_request" 'error="invalid_request"' "$(challenge)"
	assert_jq "malformed '$bad': JSON-RPC -32017 with the id" '.error.code == -32017 and .id == 7'
done

# ---- every algorithm --------------------------------------------------------
for a in r1:RS256 p1:PS256 e1:ES256 d1:EdDSA; do
	T=$(tok "${a%%:*}" "${a##*:}" "${a%%:*}")
	post "$GW" "$INIT" -H "Authorization: Bearer $T"
	assert_code "${a##*:} token (kid ${a%%:*}): passes" 200
	[ "${a%%:*}" = p1 ] && T_P1=$T   # verified, so cached: see the refetch
done
T=$(tok r1 RS256 "")
post "$GW" "$INIT" -H "Authorization: Bearer $T"
assert_code "RS256 token without kid: passes (tried against the RSA keys)" 200
post "$GW" "$INIT" -H "authorization: bearer $(tok e1 ES256 e1)"
assert_code "scheme compared case-insensitively" 200
REACHED=$(($(posts) - BEFORE))
assert_eq "only the 6 accepted requests reached the replica" 6 "$REACHED"
E=$(rec_calls "$R1" | tail -n 1)
assert_eq "the replica never sees the client's Authorization (strip)" "" "$(rec_header "$E" authorization)"

# ---- tokens that are not valid ----------------------------------------------
BEFORE=$(posts)
invalid() { # WHAT TOKEN
	post "$GW" "$INIT" -H "Authorization: Bearer $2"
	assert_code "$1: 401" 401
	assert_match "$1: error=\"invalid_token\" with a description" 'error="invalid_token", error_description="[^"]+"' "$(challenge)"
	assert_jq "$1: JSON-RPC -32017 with the id" '.error.code == -32017 and .id == 7'
}
invalid "expired" "$(tok r1 RS256 r1 '.exp = $now - 120')"
invalid "not yet valid" "$(tok r1 RS256 r1 '.nbf = $now + 300')"
invalid "no exp" "$(tok r1 RS256 r1 'del(.exp)')"
invalid "wrong aud" "$(tok r1 RS256 r1 '.aud = "https://other.test/mcp"')"
invalid "wrong aud in an array" "$(tok r1 RS256 r1 '.aud = ["https://a.test", "https://b.test"]')"
invalid "wrong iss" "$(tok r1 RS256 r1 '.iss = "https://evil.test"')"
T=$(tok p1 PS256 p1)
SIG=${T##*.}
C=${SIG:5:1}; [ "$C" = A ] && R=B || R=A
invalid "a changed signature" "${T%.*}.${SIG:0:5}$R${SIG:6}"
HDR64=$(printf '{"alg":"none","typ":"JWT","kid":"r1"}' | base64 -w0 | tr '+/' '-_' | tr -d =)
PAY64=$(claims | xargs cat | base64 -w0 | tr '+/' '-_' | tr -d =)
invalid "alg none" "$HDR64.$PAY64."
openssl pkey -in "$K/r1.pem" -pubout -out "$T_DIR/r1.pub.pem" 2>/dev/null
invalid "HS256 keyed with the RSA public key (algorithm confusion)" \
	"$(iss sign-hs256 "$T_DIR/r1.pub.pem" "$(claims)")"
BIG=$(head -c 5000 /dev/zero | tr '\0' a)
invalid "a token over max_token_bytes" "$(tok r1 RS256 r1 ".pad = \"$BIG\"")"
invalid "a token of random bytes" "abc.def.ghi"
REACHED=$(($(posts) - BEFORE))
assert_eq "none of the refused requests reached the replica" 0 "$REACHED"

# ---- clock skew, scopes, routes ---------------------------------------------
post "$GW" "$INIT" -H "Authorization: Bearer $(tok r1 RS256 r1 '.exp = $now - 20')"
assert_code "expired 20 s ago, clock_skew 60s: passes" 200
post "$GW" "$INIT" -H "Authorization: Bearer $(tok r1 RS256 r1 '.nbf = $now + 20')"
assert_code "valid in 20 s, clock_skew 60s: passes" 200
post "$GW" "$INIT" -H "Authorization: Bearer $(tok r1 RS256 r1 '.scope = "tools"')"
assert_code "without the mcp scope: 403" 403
assert_match "without the mcp scope: insufficient_scope naming it" 'error="insufficient_scope", scope="mcp"' "$(challenge)"
assert_jq "without the mcp scope: JSON-RPC -32018 with the id" '.error.code == -32018 and .id == 7'
post "$GW" "$INIT" -H "Authorization: Bearer $(tok r1 RS256 r1 'del(.scope) | .scp = ["mcp"]')"
assert_code "scp as an array: passes" 200
modern "$GW" 3 tools/list '{}'
assert_code "route with auth: false (modern tools/list) needs no token" 200
modern "$GW" 3 server/discover '{}' -H "Authorization: Bearer $(tok r1 RS256 r1)"
assert_code "route requiring admin, token without it: 403" 403
assert_match "route requiring admin: the challenge asks for admin" 'scope="admin"' "$(challenge)"
assert_jq "route requiring admin: -32018 with the id" '.error.code == -32018 and .id == 3'
modern "$GW" 3 server/discover '{}' -H "Authorization: Bearer $(tok r1 RS256 r1 '.scope = "admin"')"
assert_code "route requiring admin, admin token (no mcp needed there): passes" 200

# ---- the tool policy on the token's claims -----------------------------------
modern "$GW" 4 tools/call '{"name":"add","arguments":{"a":1,"b":2}}' -H "Authorization: Bearer $(tok r1 RS256 r1)"
assert_code "a token without the admin role: add is denied by the route's policy" 403
assert_jq "... -32018 reason policy, with the id" '.error.code == -32018 and .error.data.reason == "policy" and .id == 4'
modern "$GW" 4 tools/call '{"name":"add","arguments":{"a":1,"b":2}}' -H "Authorization: Bearer $(tok r1 RS256 r1 '.role = "admin"')"
assert_code "a token with claim role=admin: the rule allows every tool" 200
modern "$GW" 4 tools/call '{"name":"echo","arguments":{"text":"x"}}' -H "Authorization: Bearer $(tok r1 RS256 r1)"
assert_code "a token without the role: other tools pass" 200

# ---- static tokens ----------------------------------------------------------
post "$GW" "$INIT" -H "Authorization: Bearer $STATIC_TOKEN"
assert_code "a static token: passes" 200
post "$GW" "$INIT" -H "Authorization: Bearer ${STATIC_TOKEN}x"
assert_code "a static token with one byte more: 401" 401

# ---- an unknown kid: the JWKS is fetched again ------------------------------
# the issuer adds "late" and retires p1
iss jwks "$K/e1.pem:e1:ES256" "$K/d1.pem:d1:EdDSA" \
	"$K/late.pem:late:RS256" >"$T_DIR/www/jwks.json.new" &&
	mv "$T_DIR/www/jwks.json.new" "$T_DIR/www/jwks.json"
metric() { curl -sS --max-time 5 "$BASE/metrics" | awk -v k="$1" '$1 == k { print $2 }'; }
F0=$(metric 'mcpgw_jwks_fetches_total{result="ok"}')
T=$(tok late RS256 late)
# the first fetch may be less than jwks_min_interval ago: then the token
# is refused until one may start; bounded retries
poll_until 10 sh -c "curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -H 'Authorization: Bearer $T' --data-binary '$INIT' '$GW' | grep -qx 200"
assert_eq "a key added at the issuer is found by a refetch" 0 $?
F1=$(metric 'mcpgw_jwks_fetches_total{result="ok"}')
assert_cmp "the refetch is counted" "$F1" ">" "$F0"
post "$GW" "$INIT" -H "Authorization: Bearer $T_P1"
assert_code "a token verified (and cached) before, whose key the issuer retired: 401" 401
# bounded: a burst of unknown kids makes at most a couple of fetches
F0=$F1
S0=$(date +%s)
for i in $(seq 1 20); do
	post "$GW" "$INIT" -H "Authorization: Bearer $(tok r1 RS256 nosuchkid$i)"
	[ "$CODE" = 401 ] || fail "unknown kid $i: expected 401, got $CODE"
done
F1=$(metric 'mcpgw_jwks_fetches_total{result="ok"}')
# one fetch per jwks_min_interval (2 s) at most, whatever the burst
assert_cmp "20 unknown kids: at most one fetch per 2 s" "$((F1 - F0))" "<=" "$((($(date +%s) - S0) / 2 + 1))"


# ---- the issuer down: the last good keys keep verifying ---------------------
kill "$JWKS_PID" 2>/dev/null
wait "$JWKS_PID" 2>/dev/null
sleep 2.5   # past jwks_min_interval, so an unknown kid asks for a fetch
post "$GW" "$INIT" -H "Authorization: Bearer $(tok r1 RS256 another-unknown)"
assert_code "issuer down, unknown kid: 401 after the failed fetch" 401
post "$GW" "$INIT" -H "Authorization: Bearer $(tok late RS256 late)"
assert_code "issuer down: a key fetched before still verifies" 200
post "$GW" "$INIT" -H "Authorization: Bearer $(tok e1 ES256 e1)"
assert_code "issuer down: ES256 still verifies" 200
FAILED=$(metric 'mcpgw_jwks_fetches_total{result="failed"}')
assert_cmp "the failed fetch is counted" "${FAILED:-0}" ">=" 1
grep -q 'event=jwks_fetch_failed' "$G_ERR"
assert_eq "the failed fetch is an operator event" 0 $?

# ---- SIGHUP: the JWKS file is read again ------------------------------------
iss keygen EdDSA f2 "$K/f2.pem" || die "keygen f2"
post "$GW" "$INIT" -H "Authorization: Bearer $(tok f2 EdDSA f2)"
assert_code "a key not yet in the file: 401" 401
iss jwks "$K/r1.pem:r1:RS256" "$K/f2.pem:f2:EdDSA" >"$T_DIR/jwks_file.json.new" &&
	mv "$T_DIR/jwks_file.json.new" "$T_DIR/jwks_file.json"
kill -HUP "$G_PID"
poll_until 10 grep -q 'reload: done' "$G_ERR"
assert_eq "the reload is done" 0 $?
post "$GW" "$INIT" -H "Authorization: Bearer $(tok f2 EdDSA f2)"
assert_code "after SIGHUP the file's new key verifies" 200
post "$GW" "$INIT" -H "Authorization: Bearer $(tok late RS256 late)"
assert_code "after SIGHUP the fetched keys were kept (issuer still down)" 200

# ---- metrics ----------------------------------------------------------------
assert_cmp "auth outcomes counted: ok" "$(metric 'mcpgw_auth_requests_total{result="ok"}')" ">=" 10
assert_cmp "auth outcomes counted: missing" "$(metric 'mcpgw_auth_requests_total{result="missing"}')" ">=" 2
assert_cmp "auth outcomes counted: invalid" "$(metric 'mcpgw_auth_requests_total{result="invalid"}')" ">=" 10
assert_cmp "auth outcomes counted: insufficient_scope" "$(metric 'mcpgw_auth_requests_total{result="insufficient_scope"}')" ">=" 2
assert_cmp "keys in use" "$(metric mcpgw_jwks_keys)" ">=" 5

# ---- check-config refusals --------------------------------------------------
cc_refuses() { # WHAT YAML_AUTH_BODY PATTERN
	printf 'upstreams:\n  - name: pool\n    servers: [{url: "http://%s"}]\n%s\n' "$R1" "$2" >"$T_DIR/bad.yaml"
	"$MCPGW" check-config -c "$T_DIR/bad.yaml" >"$T_DIR/bad.out" 2>&1
	local rc=$?
	assert_ne "check-config refuses $1" 0 "$rc"
	assert_match "check-config refuses $1: says why" "$3" "$(cat "$T_DIR/bad.out")"
}
cc_refuses "auth without a way to verify" "auth: {resource: $AUD}" 'needs jwks_file, jwks_url or static_tokens'
cc_refuses "a JWKS without issuer" "auth: {resource: $AUD, jwks_file: $T_DIR/jwks_file.json}" 'issuer.*required'
cc_refuses "an http jwks_url" "auth: {resource: $AUD, issuer: $ISS, jwks_url: http://127.0.0.1:1/j}" 'https'
cc_refuses "a bad digest" "auth: {resource: $AUD, static_tokens: [{name: a, digest: abc}]}" 'sha256'
printf '{"keys":[{"kty":"oct","k":"AAAA"}]}' >"$T_DIR/oct.json"
cc_refuses "a JWKS file without a usable key" "auth: {resource: $AUD, issuer: $ISS, jwks_file: $T_DIR/oct.json}" 'jwks_file'
printf 'upstreams:\n  - name: pool\n    servers: [{url: "http://%s"}]\nroutes:\n  - {upstream: pool, required_scopes: [x]}\n' "$R1" >"$T_DIR/bad.yaml"
"$MCPGW" check-config -c "$T_DIR/bad.yaml" >"$T_DIR/bad.out" 2>&1
assert_ne "check-config refuses route required_scopes without auth:" 0 $?

grep -E 'AddressSanitizer|runtime error' "$G_ERR" && fail "sanitizer report in the gateway's log"
finish
