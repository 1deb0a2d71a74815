#!/bin/bash
# serve_upstream_auth.sh - no token passthrough by default (issue 15,
# doc/security.md "Upstream credentials"), checked at the replicas'
# /debug/requests (mcpgw backend --record):
# - strip (the default): the client's Authorization never reaches the
#   upstream, modern (stateless handler) or legacy in a session
#   (stateful handler), nor its Proxy-Authorization; other headers
#   (Cookie) still do;
# - static: every request the gateway sends carries exactly the group's
#   upstream_credential (first line of its file, trimmed) instead of the
#   client's: client requests, HTTP health probes, the initialize and
#   notifications/initialized replayed by a re-pin after the pinned
#   replica was killed, the DELETE of a session; the credential never
#   appears in the gateway's log (debug level); a changed file takes
#   effect on SIGHUP; {env: NAME} reads a variable;
# - passthrough: the client's Authorization arrives unchanged;
# - check-config refuses a static group without a credential, a
#   credential on a non-static group, a missing file or variable, an
#   empty one, both sources, a value that is no header value.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq sha256sum
require_mcpgw
watchdog 120

CLIENT_AUTH=(-H 'Authorization: Bearer client-token-not-for-upstreams')
# auths ADDR [FILTER]: the Authorization values of each recorded request
# (FILTER selects requests; default every one), one JSON array per request
auths() {
	rec "$1" | jq -c "[.requests[]? | ${2:-.} | [.headers[] | select(.[0] | ascii_downcase == \"authorization\") | .[1]]]"
}
# all_are ADDR FILTER VALUE_JSON: every selected request carried exactly
# VALUE_JSON (an array of Authorization values); prints "N ok" or the list.
all_are() {
	rec "$1" | jq -r --argjson v "$3" "[.requests[]? | ${2} | [.headers[] | select(.[0] | ascii_downcase == \"authorization\") | .[1]]] |
		if length > 0 and all(. == \$v) then \"ok\" else tostring end"
}

# --- strip (the default) ------------------------------------------------------
start_backend --era dual --id s1 --record 200
S1=$B_ADDR
cat >"$T_DIR/strip.yaml" <<EOF
listeners:
  - address: 127.0.0.1:0
mode: auto
upstreams:
  - name: pool
    servers:
      - url: http://$S1
    health:
      type: tcp
EOF
start_serve -c "$T_DIR/strip.yaml"
rec_clear "$S1"
modern "$G_URL" 1 tools/call '{"name":"whoami","arguments":{}}' "${CLIENT_AUTH[@]}" -H 'Cookie: c=1' \
	-H 'Proxy-Authorization: Basic cHJveHk6cHc='
assert_code "strip: a modern call" 200
legacy_init "$G_URL" "$LEGACY_VERSION" "${CLIENT_AUTH[@]}"
legacy "$G_URL" 2 tools/call '{"name":"whoami","arguments":{}}' "${CLIENT_AUTH[@]}"
assert_code "strip: a legacy call in a session" 200
assert_eq "strip: four requests reached the replica" 4 "$(rec "$S1" | jq '[.requests[]? | select(.method == "POST")] | length')"
assert_eq "strip: none carried an Authorization" ok "$(all_are "$S1" 'select(.method == "POST")' '[]')"
assert_eq "strip: nor a Proxy-Authorization" "" "$(rec "$S1" | jq -r '.requests[]?.headers[] | select(.[0] | ascii_downcase == "proxy-authorization") | .[1]')"
assert_eq "strip: the Cookie still did" "c=1" "$(rec "$S1" | jq -r '[.requests[0].headers[] | select(.[0] | ascii_downcase == "cookie") | .[1]] | join(",")')"
stop_serve

# --- passthrough --------------------------------------------------------------
sed 's/    servers:/    upstream_auth: passthrough\n    servers:/' "$T_DIR/strip.yaml" >"$T_DIR/pass.yaml"
start_serve -c "$T_DIR/pass.yaml"
rec_clear "$S1"
modern "$G_URL" 3 tools/call '{"name":"whoami","arguments":{}}' "${CLIENT_AUTH[@]}"
assert_code "passthrough: a modern call" 200
modern "$G_URL" 4 tools/call '{"name":"whoami","arguments":{}}'
assert_eq "passthrough: the client's Authorization arrives unchanged (and none when it sent none)" \
	'[["Bearer client-token-not-for-upstreams"],[]]' "$(auths "$S1" 'select(.method == "POST")')"
stop_serve

# --- static: client requests, probes, re-pin replays, DELETE, reload ------------------------------
start_backend --era legacy --id r1 --record 300
R1=$B_ADDR
P1=$B_PID
start_backend --era legacy --id r2 --record 300
R2=$B_ADDR
P2=$B_PID
printf '  Bearer gw-secret-1  \nsecond line ignored\n' >"$T_DIR/cred"
SF_WORKERS=1 SF_GROUP='    upstream_auth: static
    upstream_credential: {file: cred}' sf_config "$T_DIR/static.yaml" stateful "$R1" "$R2"
"$MCPGW" check-config -q -c "$T_DIR/static.yaml"
assert_eq "static: the configuration is valid" 0 "$?"
start_serve -c "$T_DIR/static.yaml" --log-level debug
GW=$G_URL
# the probes (GET /healthz every 500 ms) reached both replicas
poll_until 10 sh -c "curl -s http://$R1/debug/requests | jq -e '[.requests[] | select(.target == \"/healthz\")] | length > 0' >/dev/null" ||
	fail "static: no health probe recorded on r1"
assert_eq "static: health probes carry the credential" ok "$(all_are "$R1" 'select(.target == "/healthz")' '["Bearer gw-secret-1"]')"
rec_clear "$R1"
rec_clear "$R2"
sf_init "$GW" "${CLIENT_AUTH[@]}" || die "static: no session"
lwho "$GW" "${CLIENT_AUTH[@]}"
PIN=$WHO
assert_match "static: the session is pinned" '^r[12]$' "$PIN"
if [ "$PIN" = r1 ]; then PA=$R1 PP=$P1 OA=$R2; else PA=$R2 PP=$P2 OA=$R1; fi
assert_eq "static: the client's requests carry the credential, not the client's token" ok \
	"$(all_are "$PA" 'select(.method == "POST")' '["Bearer gw-secret-1"]')"
rec_clear "$OA"
kill_wait "$PP" KILL 5 || fail "static: the pinned replica did not die"
lwho "$GW" "${CLIENT_AUTH[@]}"
assert_code "static: the call after the kill succeeds (re-pinned)" 200
assert_eq "static: ... on the other replica" "$([ "$PIN" = r1 ] && echo r2 || echo r1)" "$WHO"
assert_eq "static: the replayed initialize carries the credential" ok \
	"$(all_are "$OA" 'select(.method == "POST" and .body_sha256 == "'"$(sha_of "$INIT_BODY")"'")' '["Bearer gw-secret-1"]')"
assert_eq "static: ... and so does every request of the re-pin" ok \
	"$(all_are "$OA" 'select(.method == "POST")' '["Bearer gw-secret-1"]')"
req DELETE "$GW" -H "Mcp-Session-Id: $SID" "${CLIENT_AUTH[@]}"
assert_code "static: DELETE of the session" '200|202|204'
poll_until 5 sh -c "curl -s http://$OA/debug/requests | jq -e '[.requests[] | select(.method == \"DELETE\")] | length > 0' >/dev/null" ||
	fail "static: the DELETE did not reach the replica"
assert_eq "static: the DELETE sent upstream carries the credential" ok \
	"$(all_are "$OA" 'select(.method == "DELETE")' '["Bearer gw-secret-1"]')"
# a new credential file, SIGHUP
printf 'Bearer gw-secret-2\n' >"$T_DIR/cred"
n0=$(grep -c "reload" "$G_ERR")
kill -HUP "$G_PID"
poll_until 10 sh -c "[ \$(grep -c reload '$G_ERR') -gt $n0 ]" || fail "static: no reload line after SIGHUP"
poll_until 10 sh -c "grep -q 'reload: done' '$G_ERR'" || fail "static: the reload was not done: $(grep reload "$G_ERR" | tail -n 2)"
rec_clear "$OA"
sf_init "$GW" "${CLIENT_AUTH[@]}" || fail "static: no session after the reload"
assert_eq "static: after SIGHUP the new credential is sent" ok \
	"$(all_are "$OA" 'select(.method == "POST")' '["Bearer gw-secret-2"]')"
assert_nomatch "static: the credential never appears in the gateway's log" 'gw-secret' "$(cat "$G_ERR" "$G_OUT")"
assert_nomatch "static: nor the client's token" 'client-token-not' "$(cat "$G_ERR" "$G_OUT")"
stop_serve

# {env: NAME}
sed 's/{file: cred}/{env: MGW_TEST_UPSTREAM_CRED}/' "$T_DIR/static.yaml" >"$T_DIR/env.yaml"
MGW_TEST_UPSTREAM_CRED='Basic Z3c6ZW52' start_serve -c "$T_DIR/env.yaml"
rec_clear "$OA"
sf_init "$G_URL" "${CLIENT_AUTH[@]}" || fail "env: no session"
assert_eq "env: the variable's value is sent" ok "$(all_are "$OA" 'select(.method == "POST")' '["Basic Z3c6ZW52"]')"
stop_serve

# --- check-config ---------------------------------------------------------------
bad() { # WHAT GROUP_KEYS EXPECTED_ERE [ENV=VALUE]
	printf 'upstreams:\n  - name: pool\n    servers:\n      - url: http://127.0.0.1:1\n%s\n' "$2" >"$T_DIR/bad.yaml"
	env ${4:+"$4"} "$MCPGW" check-config -c "$T_DIR/bad.yaml" >/dev/null 2>"$T_DIR/bad.err"
	assert_eq "check-config: $1: exit status" 2 "$?"
	assert_match "check-config: $1: message" "$3" "$(cat "$T_DIR/bad.err")"
}
printf '\n\n' >"$T_DIR/empty-cred"
printf 'Bearer a\001b\n' >"$T_DIR/ctl-cred"
bad "static without a credential" '    upstream_auth: static' \
	'bad\.yaml:5:20: upstreams\[0\]\.upstream_auth: static needs upstream_credential with exactly one of file or env'
bad "a credential on a strip group" '    upstream_credential: {file: cred}' \
	'upstreams\[0\]\.upstream_credential: only used with upstream_auth: static'
bad "a missing file" $'    upstream_auth: static\n    upstream_credential: {file: no-such-file}' \
	'upstreams\[0\]\.upstream_credential\.file: cannot read'
bad "an unset variable" $'    upstream_auth: static\n    upstream_credential: {env: MGW_TEST_UNSET_CRED}' \
	'upstreams\[0\]\.upstream_credential\.env: the environment variable MGW_TEST_UNSET_CRED is not set'
bad "an empty variable" $'    upstream_auth: static\n    upstream_credential: {env: MGW_TEST_EMPTY_CRED}' \
	'the environment variable MGW_TEST_EMPTY_CRED is empty' MGW_TEST_EMPTY_CRED=
bad "an empty first line" $'    upstream_auth: static\n    upstream_credential: {file: empty-cred}' \
	'upstreams\[0\]\.upstream_credential\.file: the credential is empty'
bad "a control character" $'    upstream_auth: static\n    upstream_credential: {file: ctl-cred}' \
	'the credential is not a valid header value'
bad "both sources" $'    upstream_auth: static\n    upstream_credential: {file: cred, env: X}' \
	'upstreams\[0\]\.upstream_credential: static needs upstream_credential with exactly one of file or env'
bad "an unknown mode" '    upstream_auth: forward' 'upstreams\[0\]\.upstream_auth: '
assert_nomatch "check-config never prints a credential" 'gw-secret' "$(cat "$T_DIR"/*.err 2>/dev/null)"

finish
