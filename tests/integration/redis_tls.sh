#!/bin/bash
# redis_tls.sh - Redis over TLS (rediss://) with an ACL user, against a
# real redis-server with TLS only (--port 0 --tls-port P, client
# certificates required: tls-auth-clients yes).  Certificates are made
# here with openssl (a CA, the server's, a client's, and a foreign CA).
# The session store: a session created through gateway A is served by
# gateway B, and its record is in the TLS Redis (redis-cli --tls).  A
# foreign CA is refused (store_down with the verification failure, new
# sessions 503, nothing stored, the gateway keeps answering); a wrong ACL
# password is refused with the server's WRONGPASS; redis-server restarted
# -> the gateways reconnect over TLS.  The backend's --state redis over
# rediss://: two replicas share a counter; a shared rate limit
# (rate_limits.redis.tls) keeps its bucket in the TLS Redis; with
# Sentinel, the sentinel is asked over TLS and the master it names is
# reached over TLS.  verify: false accepts the foreign CA and is logged as
# a warning (check-config and serve).  server_name: a second TLS
# redis-server whose certificate names only DNS:redis.itest is refused
# without server_name (the address does not match) and with a wrong one,
# and reached with server_name: redis.itest.  check-config names a TLS
# file that does not load, and refuses an encrypted client key with the
# listeners' message, without prompting.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node redis-server redis-cli openssl
require_mcpgw
watchdog 120

# ---- certificates (redis_tls_lib.sh: mkcert, tls_pki, tls_server_conf) -------------
. "$TOP_SRCDIR/tests/integration/redis_tls_lib.sh"
tls_pki

# ---- redis-server: TLS only, ACL user alice ---------------------------------------
PW='tls-s3cr3t/Pw'
PORT=$(free_port) || die "no free port"
cat >"$T_DIR/redis.conf" <<EOF
port 0
tls-port $PORT
$(tls_server_conf)
dir $T_DIR
save ""
appendonly no
user default off
user alice on >$PW ~* &* +@all
EOF
start_tls_redis() {
	redis-server "$T_DIR/redis.conf" >>"$T_DIR/redis.out" 2>&1 &
	REDIS_PID=$!
	track_pid "$REDIS_PID"
	poll_until 10 rup || die "redis-server with TLS did not start: $(tail -n 5 "$T_DIR/redis.out")"
}
rcli() {
	timeout 5 redis-cli -h 127.0.0.1 -p "$PORT" --tls --cacert "$C/ca.pem" \
		--cert "$C/client.pem" --key "$C/client.key" --user alice --pass "$PW" \
		--no-auth-warning "$@" 2>/dev/null
}
rup() { [ "$(rcli ping)" = PONG ]; }
start_tls_redis
PLAIN=$(timeout 2 redis-cli -h 127.0.0.1 -p "$PORT" ping 2>&1)
assert_nomatch "the server does not speak plain text" '^PONG$' "$PLAIN"

# ---- gateways ----------------------------------------------------------------------
start_backend --era legacy --id r1
B1=$B_ADDR
conf() { # FILE URL CA PREFIX [MORE-TLS-LINES]
	SF_SESSIONS="  store: redis
  redis:
    url: \"$2\"
    timeout: 500ms
    cache_ttl: 0s
    key_prefix: \"$4\"
    tls:
      ca_file: $3
      cert_file: $C/client.pem
      key_file: $C/client.key${5:+
$5}" sf_config "$1" stateful "$B1"
}
URL="rediss://alice:$PW@127.0.0.1:$PORT"
conf "$T_DIR/good.yaml" "$URL" "$C/ca.pem" "itest:$T_NAME:"
conf "$T_DIR/badca.yaml" "$URL" "$C/other.pem" "itest:badca:"
conf "$T_DIR/badpw.yaml" "rediss://alice:wrong-Pw9@127.0.0.1:$PORT" "$C/ca.pem" "itest:badpw:"

"$MCPGW" check-config -c "$T_DIR/good.yaml" >"$T_DIR/check.out" 2>&1
assert_eq "check-config accepts the rediss:// store with its TLS files" 0 "$?"

start_serve -c "$T_DIR/good.yaml"
GA=$G_URL
GAERR=$G_ERR
start_serve -c "$T_DIR/good.yaml"
GB=$G_URL
GBADDR=$G_ADDR
sf_init "$GA" || die "no session through gateway A over rediss://"
lwho "$GB"
assert_code "a session created through A is served by B (Redis over TLS)" 200
assert_eq "... by the backend that has it" r1 "$WHO"
assert_eq "the record is in the TLS Redis" 1 "$(rcli exists "itest:$T_NAME:$SID")"
assert_eq "B's store is reachable" 0 "$(gstat "$GBADDR" '.sessions.store.unreachable')"

# ---- a foreign CA ------------------------------------------------------------------
start_serve -c "$T_DIR/badca.yaml"
BADADDR=$G_ADDR
logged() { grep -Eq 'event=store_down store=redis .*detail="TLS certificate verification failed' "$G_ERR"; }
poll_until 10 logged && ok "a foreign CA: store_down with the verification failure" ||
	fail "a foreign CA: no clear error: $(grep -i redis "$G_ERR" | tail -n 3)"
post "$G_URL" "$INIT_BODY"
assert_code "a foreign CA: new sessions are refused" 503
assert_eq "a foreign CA: nothing stored" 0 "$(rcli --scan --pattern 'itest:badca:*' | grep -c .)"
assert_eq "a foreign CA: the store is unreachable" 1 "$(gstat "$BADADDR" '.sessions.store.unreachable')"
kill -0 "$G_PID" 2>/dev/null && ok "a foreign CA: the gateway is still running" || fail "a foreign CA: the gateway died"

# ---- nothing listening: a refused connection reads as one, not as a TLS error ----------------
conf "$T_DIR/noport.yaml" "rediss://alice:$PW@127.0.0.1:$(free_port)" "$C/ca.pem" "itest:noport:"
start_serve -c "$T_DIR/noport.yaml"
logged() { grep -Eq 'event=store_down store=redis .*detail="connect failed: Connection refused"' "$G_ERR"; }
poll_until 10 logged && ok "rediss:// to a closed port: store_down says the connection was refused" ||
	fail "rediss:// to a closed port: $(grep -i redis "$G_ERR" | tail -n 3)"

# ---- a wrong ACL password ------------------------------------------------------------
start_serve -c "$T_DIR/badpw.yaml"
logged() { grep -Eq 'event=store_down store=redis .*detail="AUTH refused: WRONGPASS' "$G_ERR"; }
poll_until 10 logged && ok "a wrong password over TLS: store_down with the server's WRONGPASS" ||
	fail "a wrong password over TLS: no clear error: $(grep -i redis "$G_ERR" | tail -n 3)"
post "$G_URL" "$INIT_BODY"
assert_code "a wrong password: new sessions are refused" 503
LEAK=$(grep -lF -e "$PW" -e "wrong-Pw9" "$T_DIR"/*.err 2>/dev/null)
assert_eq "no password in any log" "" "$LEAK"

# ---- verify: false: a foreign CA is accepted, and the gateway says verification is off -----
conf "$T_DIR/noverify.yaml" "$URL" "$C/other.pem" "itest:noverify:" "      verify: false"
OUT=$("$MCPGW" check-config -q -c "$T_DIR/noverify.yaml" 2>&1)
assert_eq "verify: false: check-config accepts it" 0 "$?"
NOVERIFY_RE='sessions\.redis \(tls\.verify: false\): TLS certificate verification is off: the Redis server at rediss://127\.0\.0\.1:[0-9]+ is not authenticated'
assert_match "... with a warning that verification is off" "warning: $NOVERIFY_RE" "$OUT"
start_serve -c "$T_DIR/noverify.yaml"
assert_match "verify: false: serve logs the warning at start" "warn +$NOVERIFY_RE" "$(cat "$G_ERR")"
sf_init "$G_URL" && ok "verify: false: a session stored despite the foreign CA" ||
	fail "verify: false: no session: $(grep -i redis "$G_ERR" | tail -n 3)"
assert_eq "... in the TLS Redis" 1 "$(rcli exists "itest:noverify:$SID")"

# ---- server_name: a server whose certificate names only redis.itest ------------------------
mkcert named redis.itest ca "DNS:redis.itest" ||
	die "openssl could not make the redis.itest certificate: $(tail -n 5 "$C/openssl.err")"
NPORT=$(free_port) || die "no free port"
sed -e "s#^tls-port .*#tls-port $NPORT#" -e "s#^tls-cert-file .*#tls-cert-file $C/named.pem#" \
	-e "s#^tls-key-file .*#tls-key-file $C/named.key#" "$T_DIR/redis.conf" >"$T_DIR/named.conf"
redis-server "$T_DIR/named.conf" >>"$T_DIR/named.out" 2>&1 &
track_pid "$!"
ncli() {
	timeout 5 redis-cli -h 127.0.0.1 -p "$NPORT" --tls --sni redis.itest --cacert "$C/ca.pem" \
		--cert "$C/client.pem" --key "$C/client.key" --user alice --pass "$PW" \
		--no-auth-warning "$@" 2>/dev/null
}
nup() { [ "$(ncli ping)" = PONG ]; }
poll_until 10 nup || die "the redis.itest redis-server did not start: $(tail -n 5 "$T_DIR/named.out")"
NURL="rediss://alice:$PW@127.0.0.1:$NPORT"
conf "$T_DIR/named0.yaml" "$NURL" "$C/ca.pem" "itest:named0:"
conf "$T_DIR/namedbad.yaml" "$NURL" "$C/ca.pem" "itest:namedbad:" "      server_name: wrong.itest"
conf "$T_DIR/named.yaml" "$NURL" "$C/ca.pem" "itest:named:" "      server_name: redis.itest"
# name_refused WHAT FILE PREFIX MISMATCH-ERE: verification fails, logged; 503; nothing stored
name_refused() {
	NR_WHY=$4
	start_serve -c "$2"
	logged() { grep -Eq "event=store_down store=redis .*detail=\"TLS certificate verification failed: $NR_WHY" "$G_ERR"; }
	poll_until 10 logged && ok "$1: store_down with the verification failure" ||
		fail "$1: no clear error: $(grep -i redis "$G_ERR" | tail -n 3)"
	post "$G_URL" "$INIT_BODY"
	assert_code "$1: new sessions are refused" 503
	assert_eq "$1: nothing stored" 0 "$(ncli --scan --pattern "$3*" | grep -c .)"
}
name_refused "a certificate for redis.itest reached as 127.0.0.1 (no server_name)" \
	"$T_DIR/named0.yaml" "itest:named0:" "IP address mismatch"
name_refused "server_name: wrong.itest against a certificate for redis.itest" \
	"$T_DIR/namedbad.yaml" "itest:namedbad:" "hostname mismatch"
start_serve -c "$T_DIR/named.yaml"
sf_init "$G_URL" && ok "server_name: redis.itest: a session stored (the name verified)" ||
	fail "server_name: redis.itest: no session: $(grep -i redis "$G_ERR" | tail -n 3)"
assert_eq "... in the redis.itest Redis" 1 "$(ncli exists "itest:named:$SID")"

# ---- redis-server restarted: both gateways reconnect over TLS --------------------------
kill_wait "$REDIS_PID" KILL 10 || die "redis-server did not die"
start_tls_redis
again() { post "$GA" "$INIT_BODY"; [ "$CODE" = 200 ]; }
poll_until 20 again && ok "after a restart of redis-server A stores sessions again" ||
	fail "after a restart: A still refuses ($CODE)"
SID=$(hdr mcp-session-id)
lwho "$GB"
assert_code "... and B serves them (it reconnected over TLS too)" 200
assert_eq "... from the TLS Redis" 1 "$(rcli exists "itest:$T_NAME:$SID")"
grep -Eq 'event=store_up store=redis' "$GAERR" && ok "A logged the store coming back" ||
	fail "A: no store_up: $(grep -i redis "$GAERR" | tail -n 3)"

# ---- backend handles over rediss:// ----------------------------------------------------------
BTLS=(--redis "$URL" --redis-ca-file "$C/ca.pem" --redis-cert-file "$C/client.pem"
	--redis-key-file "$C/client.key")
start_backend --era modern --state redis "${BTLS[@]}" --id tls-A
BA=$B_URL
start_backend --era modern --state redis "${BTLS[@]}" --id tls-B
BB=$B_URL
modern "$BA" 1 tools/call '{"name":"counter_create","arguments":{}}'
H=$(jq_get '.result.structuredContent.handle // empty')
[ -n "$H" ] && ok "backend over rediss://: counter_create returns a handle" ||
	fail "backend over rediss://: no handle: $BODY"
incval() { # URL: one increment, prints the value
	modern "$1" 2 tools/call "$(jq -cn --arg h "$H" '{name:"counter_increment",arguments:{handle:$h}}')"
	jq_get '.result.structuredContent.value // empty'
}
assert_eq "backend over rediss://: a handle from A works on B" 1 "$(incval "$BB")"
assert_eq "backend over rediss://: both replicas share the counter" 2 "$(incval "$BA")"
assert_cmp "backend over rediss://: the counter lives in the TLS Redis" "$(rcli dbsize)" '>=' 1

# ---- Sentinel over TLS: the sentinel asked over TLS, the master it names too -------------------
SPORT=$(free_port) || die "no free port"
cat >"$T_DIR/sentinel.conf" <<EOF
port 0
tls-port $SPORT
$(tls_server_conf)
tls-replication yes
dir $T_DIR
sentinel monitor mymaster 127.0.0.1 $PORT 1
sentinel auth-user mymaster alice
sentinel auth-pass mymaster $PW
EOF
redis-server "$T_DIR/sentinel.conf" --sentinel >"$T_DIR/sentinel.out" 2>&1 &
track_pid "$!"
sknows() {
	[ "$(timeout 5 redis-cli -h 127.0.0.1 -p "$SPORT" --tls --cacert "$C/ca.pem" \
		--cert "$C/client.pem" --key "$C/client.key" \
		sentinel get-master-addr-by-name mymaster 2>/dev/null | tail -n 1)" = "$PORT" ]
}
poll_until 10 sknows || die "the TLS sentinel does not name the master: $(tail -n 5 "$T_DIR/sentinel.out")"
SF_SESSIONS="  store: redis
  redis:
    url: \"$URL\"
    timeout: 500ms
    key_prefix: \"itest:sentinel:\"
    sentinels: [\"127.0.0.1:$SPORT\"]
    master_name: mymaster
    tls: {ca_file: $C/ca.pem, cert_file: $C/client.pem, key_file: $C/client.key}" \
	sf_config "$T_DIR/sentinel.yaml" stateful "$B1"
start_serve -c "$T_DIR/sentinel.yaml"
sf_init "$G_URL" && ok "Sentinel over TLS: a session stored through the master the TLS sentinel named" ||
	fail "Sentinel over TLS: no session: $(grep -i redis "$G_ERR" | tail -n 3)"
assert_eq "... in the TLS Redis" 1 "$(rcli exists "itest:sentinel:$SID")"

# ---- a shared rate limit over rediss:// (the proxy's redis: section) --------------------------
cat >"$T_DIR/rl.yaml" <<YAML
listeners:
  - address: 127.0.0.1:0
upstreams:
  - name: be
    servers: [{url: "${BA%/mcp}"}]
rate_limits:
  redis:
    url: "$URL"
    timeout: 500ms
    tls: {ca_file: $C/ca.pem, cert_file: $C/client.pem, key_file: $C/client.key}
routes:
  - match: {path: /mcp}
    upstream: be
    rate_limit: {rate: 0.1, burst: 2, key: client, shared: redis}
YAML
start_serve -c "$T_DIR/rl.yaml"
RL=$G_URL
codes=""
for i in 1 2 3 4 5; do
	modern "$RL" "$i" tools/list '{}'
	codes="$codes $CODE"
done
assert_match "shared rate limit over rediss://: the burst passes, then 429" '^ 200 200( 429)+$' "$codes"
assert_cmp "... its bucket is in the TLS Redis" "$(rcli --scan --pattern 'mcpgw:rl:*' | grep -c .)" '>=' 1
assert_eq "... decided by Redis (no local fallback)" 0 "$(grep -c 'event=rate_limit_redis_fallback' "$G_ERR")"

# verify: false in a proxy redis: section and in the backend is a warning too
sed 's#tls: {ca_file#tls: {verify: false, ca_file#' "$T_DIR/rl.yaml" >"$T_DIR/rlnoverify.yaml"
OUT=$("$MCPGW" check-config -q -c "$T_DIR/rlnoverify.yaml" 2>&1)
assert_eq "rate_limits.redis verify: false: check-config accepts it" 0 "$?"
assert_match "... with a warning naming rate_limits.redis" \
	'warning: rate_limits\.redis \(tls\.verify: false\): TLS certificate verification is off' "$OUT"
printf 'listeners:\n  - address: 127.0.0.1:0\nbackend:\n  redis: "%s"\n  redis_tls: {verify: false}\n' \
	"$URL" >"$T_DIR/benoverify.yaml"
OUT=$("$MCPGW" check-config -q -c "$T_DIR/benoverify.yaml" 2>&1)
assert_eq "backend redis_tls verify: false: check-config accepts it" 0 "$?"
assert_match "... with a warning naming backend.redis_tls" \
	'warning: backend\.redis_tls \(verify: false\): TLS certificate verification is off' "$OUT"
assert_nomatch "... without the password" "$PW" "$OUT"
start_backend --era modern --state redis --redis "$URL" --redis-cert-file "$C/client.pem" \
	--redis-key-file "$C/client.key" --redis-no-verify --id tls-nv
modern "$B_URL" 1 tools/call '{"name":"counter_create","arguments":{}}'
[ -n "$(jq_get '.result.structuredContent.handle // empty')" ] &&
	ok "backend --redis-no-verify: a counter in the TLS Redis" ||
	fail "backend --redis-no-verify: no handle: $BODY"
assert_match "... and a warning at start" \
	'warn +--redis-no-verify \(redis_tls\.verify: false\): TLS certificate verification is off' "$(cat "$B_ERR")"

# ---- bad TLS options are refused before anything starts -------------------------------------
sed "s#key_file: $C/client.key#key_file: $C/other.key#" "$T_DIR/good.yaml" >"$T_DIR/mismatch.yaml"
OUT=$("$MCPGW" check-config -c "$T_DIR/mismatch.yaml" 2>&1)
assert_ne "check-config: a key that does not match the certificate fails" 0 "$?"
assert_match "... naming the key file" "other\\.key" "$OUT"
OUT=$("$MCPGW" backend --listen 127.0.0.1:0 --state redis --redis "$URL" \
	--redis-ca-file "$T_DIR/no-such-ca.pem" 2>&1)
assert_eq "backend: a CA file that does not exist is a usage error" 2 "$?"
assert_match "... naming the file" "no-such-ca\\.pem" "$OUT"
# An encrypted client key is refused with the listeners' message, and never
# prompts for a passphrase (stdin is /dev/null; a prompt would hang until
# the timeout, exit 124).
timeout 30 openssl pkey -in "$C/client.key" -aes256 -passout pass:x -out "$C/client-enc.key" \
	>>"$C/openssl.err" 2>&1 || die "openssl could not encrypt the client key"
sed "s#key_file: $C/client.key#key_file: $C/client-enc.key#" "$T_DIR/good.yaml" >"$T_DIR/enc.yaml"
OUT=$(timeout 10 "$MCPGW" check-config -c "$T_DIR/enc.yaml" </dev/null 2>&1)
assert_eq "check-config: an encrypted Redis client key is refused (exit 2, no prompt)" 2 "$?"
ENCRE='encrypted private keys are not supported \(decrypt it, e\.g\. openssl pkey -in KEY -out KEY\.plain\); key [^ ]*client-enc\.key'
assert_match "... saying encrypted keys are not supported" "sessions\.redis\.tls: $ENCRE" "$OUT"
assert_nomatch "... without asking for a pass phrase" '[Pp]ass ?phrase:' "$OUT"
REDIS_ENC=$(printf '%s' "$OUT" | grep -Eo "$ENCRE")
cat >"$T_DIR/enclisten.yaml" <<YAML
listeners:
  - address: 127.0.0.1:0
    tls: {cert: $C/client.pem, key: $C/client-enc.key}
upstreams:
  - name: be
    servers: [{url: "http://127.0.0.1:9"}]
YAML
OUT=$(timeout 10 "$MCPGW" check-config -c "$T_DIR/enclisten.yaml" </dev/null 2>&1)
assert_eq "... the same key for a listener: exit 2" 2 "$?"
assert_eq "... with the same message as the listener's" "$REDIS_ENC" "$(printf '%s' "$OUT" | grep -Eo "$ENCRE")"
OUT=$(timeout 10 "$MCPGW" backend --listen 127.0.0.1:0 --state redis "${BTLS[@]:0:4}" \
	--redis-cert-file "$C/client.pem" --redis-key-file "$C/client-enc.key" </dev/null 2>&1)
assert_eq "backend: an encrypted --redis-key-file is a usage error (no prompt)" 2 "$?"
assert_match "... with the same message" "$ENCRE" "$OUT"

finish
