#!/usr/bin/env bash
# check_config.sh - `mcpgw check-config` refuses what `mcpgw serve` and
# `mcpgw backend` refuse at start, with the same message and exit 2: no
# upstream, no listener, TLS files that are missing or do not load, a
# missing or malformed sealed-session key file, a redis URL that does not
# parse, a Redis tls: section (backend redis_tls:, a --redis-* TLS flag)
# with a URL that is not rediss:// (it would be silently unused).  Relative file names resolve against the file's folder (checked,
# and served, from another working directory).  --version on every
# command prints what `mcpgw --version` prints.
. "$(dirname "$0")/lib.sh"
require_tools curl openssl
require_mcpgw
watchdog 120

BENCH=${MCPGW_BENCH:-$(dirname "$MCPGW")/mcpgw-bench}

run() {
	local name=$1
	shift
	timeout 10 "$@" >"$T_DIR/$name.stdout" 2>"$T_DIR/$name.stderr" </dev/null
	RC=$?
	OUT=$(cat "$T_DIR/$name.stdout")
	ERR=$(cat "$T_DIR/$name.stderr")
}

# same_refusal WHAT FILE CMD: check-config -c FILE and `mcpgw CMD -c FILE`
# both exit 2, and the command's message holds check-config's (less the
# "FILE: " check-config puts first).  Sets MSG to check-config's message.
same_refusal() {
	local what=$1 file=$2 cmd=$3
	run cc "$MCPGW" check-config -c "$file"
	assert_eq "check-config refuses $what (exit 2)" 2 "$RC"
	MSG=$(printf '%s' "$ERR" | head -n 1)
	MSG=${MSG#"$file: "}
	run srv "$MCPGW" "$cmd" -c "$file"
	assert_eq "$cmd refuses $what (exit 2)" 2 "$RC"
	if [ -n "$MSG" ] && printf '%s' "$ERR" | grep -qF -- "$MSG"; then
		ok "$cmd and check-config give the same message for $what"
	else
		fail "$what: check-config said '$MSG', $cmd said '$ERR'"
	fi
	[ "$cmd" = serve ] || return 0
	# serve --check: the same refusal without starting (what a reload checks)
	run chk "$MCPGW" serve --check -c "$file"
	assert_eq "serve --check refuses $what (exit 2)" 2 "$RC"
	printf '%s' "$ERR" | grep -qF -- "$MSG" ||
		fail "$what: serve --check said '$ERR', check-config '$MSG'"
}

gen_cert
openssl rand -hex 32 >"$T_DIR/hex" || die "openssl rand failed"
GOOD_KEYS="k1 $(cat "$T_DIR/hex")"

# --- serve --check on a file serve starts with ---------------------------------------
run chk "$MCPGW" serve --check -c "$TOP_SRCDIR/conf/serve.yaml"
assert_eq "serve --check on conf/serve.yaml" "0 configuration ok" "$RC $OUT"

# --- refusals -------------------------------------------------------------------------
cat >"$T_DIR/noup.yaml" <<EOF
listeners:
  - address: 127.0.0.1:0
mode: auto
EOF
same_refusal "a serve file without upstreams" "$T_DIR/noup.yaml" serve
assert_eq "the no-upstream message" "no upstream: give --upstream URL or an upstreams: section" "$MSG"

cat >"$T_DIR/nolisten.yaml" <<EOF
upstreams:
  - name: a
    servers:
      - url: http://127.0.0.1:9
EOF
same_refusal "a serve file without listeners" "$T_DIR/nolisten.yaml" serve
assert_match "the no-listener message" "^no listener: give --listen HOST:PORT" "$MSG"

cat >"$T_DIR/benolisten.yaml" <<EOF
backend:
  era: legacy
EOF
same_refusal "a backend file without listeners" "$T_DIR/benolisten.yaml" backend

cat >"$T_DIR/nocert.yaml" <<EOF
listeners:
  - address: 127.0.0.1:0
    tls: {cert: $T_DIR/missing-cert.pem, key: $KEY}
upstreams:
  - name: a
    servers:
      - url: http://127.0.0.1:9
EOF
same_refusal "a missing TLS certificate" "$T_DIR/nocert.yaml" serve
assert_match "the TLS message names the listener and the file" "TLS for 127.0.0.1:0: .*missing-cert.pem" "$MSG"

printf 'not a key\n' >"$T_DIR/notakey.pem"
cat >"$T_DIR/badkey.yaml" <<EOF
listeners:
  - address: 127.0.0.1:0
    tls: {cert: $CERT, key: $T_DIR/notakey.pem}
backend:
  era: modern
EOF
same_refusal "a TLS key that does not load" "$T_DIR/badkey.yaml" backend

cat >"$T_DIR/nokeyfile.yaml" <<EOF
listeners:
  - address: 127.0.0.1:0
upstreams:
  - name: a
    servers:
      - url: http://127.0.0.1:9
sessions:
  store: sealed
  key_file: keys/missing.keys
EOF
same_refusal "a missing sealed-store key file" "$T_DIR/nokeyfile.yaml" serve
assert_match "the key-file message has FILE:LINE:COL and the resolved name" \
	"nokeyfile.yaml:9:13: sessions.key_file: .*/keys/missing.keys" "$MSG"

printf 'k1 nothex\n' >"$T_DIR/bad.keys"
sed 's|keys/missing.keys|bad.keys|' "$T_DIR/nokeyfile.yaml" >"$T_DIR/badkeyfile.yaml"
same_refusal "a malformed sealed-store key file" "$T_DIR/badkeyfile.yaml" serve
assert_match "the malformed key file is named with its line" "bad.keys:1" "$MSG"

cat >"$T_DIR/redis.yaml" <<EOF
listeners:
  - address: 127.0.0.1:0
upstreams:
  - name: a
    servers:
      - url: http://127.0.0.1:9
sessions:
  store: redis
  redis: {url: "http://127.0.0.1:6379"}
EOF
same_refusal "a redis URL that does not parse" "$T_DIR/redis.yaml" serve

# --- a Redis tls: section next to a URL that is not rediss:// would be unused --------
cat >"$T_DIR/plaintls.yaml" <<EOF
listeners:
  - address: 127.0.0.1:0
upstreams:
  - name: a
    servers:
      - url: http://127.0.0.1:9
sessions:
  store: redis
  redis:
    url: "redis://alice:plain-Pw@127.0.0.1:6379"
    tls: {verify: false}
EOF
same_refusal "sessions.redis.tls with a redis:// URL" "$T_DIR/plaintls.yaml" serve
assert_match "... naming the key path and the plain URL, suggesting rediss://" \
	"plaintls\.yaml:11:10: sessions\.redis\.tls: url 'redis://127\.0\.0\.1:6379' is plain redis://, so tls: would not be used; use a rediss:// URL" "$MSG"
assert_nomatch "... without the URL's password" 'plain-Pw' "$ERR"
sed 's|url: "redis://|url: "rediss://|' "$T_DIR/plaintls.yaml" >"$T_DIR/tlsok.yaml"
run tlsok "$MCPGW" check-config -q -c "$T_DIR/tlsok.yaml"
assert_eq "the same tls: with a rediss:// URL is accepted" 0 "$RC"
cat >"$T_DIR/rlnourl.yaml" <<EOF
listeners:
  - address: 127.0.0.1:0
upstreams:
  - name: a
    servers:
      - url: http://127.0.0.1:9
rate_limits:
  redis:
    tls: {verify: false}
EOF
same_refusal "rate_limits.redis.tls without a url" "$T_DIR/rlnourl.yaml" serve
assert_match "... saying there is no url" \
	"rate_limits\.redis\.tls: tls: would not be used: there is no url" "$MSG"
cat >"$T_DIR/taskunix.yaml" <<EOF
listeners:
  - address: 127.0.0.1:0
upstreams:
  - name: a
    servers:
      - url: http://127.0.0.1:9
    affinity: task
    task_affinity:
      redis:
        url: "unix:/tmp/no-such-redis.sock"
        tls: {verify: false}
EOF
same_refusal "task_affinity.redis.tls with a unix: URL" "$T_DIR/taskunix.yaml" serve
assert_match "... saying it is a Unix socket" \
	"task_affinity\.redis\.tls: url 'unix:/tmp/no-such-redis\.sock' is a Unix socket" "$MSG"
printf 'backend:\n  redis: "redis://127.0.0.1:6379"\n  redis_tls: {verify: false}\n' >"$T_DIR/betls.yaml"
same_refusal "backend redis_tls: with a redis:// redis:" "$T_DIR/betls.yaml" backend
assert_match "... naming backend.redis_tls" \
	"backend\.redis_tls: redis 'redis://127\.0\.0\.1:6379' is plain redis://, so redis_tls: would not be used" "$MSG"
run beflag "$MCPGW" backend --listen 127.0.0.1:0 --state redis --redis redis://127.0.0.1:6379 \
	--redis-ca-file "$CERT"
assert_eq "backend: --redis-ca-file with a redis:// --redis is a usage error" 2 "$RC"
assert_match "... saying the URL is plain and the flag would not be used" \
	"--redis-ca-file is for a rediss:// --redis, but the Redis URL is 'redis://127\.0\.0\.1:6379' \(plain redis://\), so it would not be used" "$ERR"
run beflag2 "$MCPGW" backend --listen 127.0.0.1:0 --redis-no-verify
assert_eq "backend: --redis-no-verify with the default redis:// URL is a usage error" 2 "$RC"
assert_match "... naming the flag" "--redis-no-verify is for a rediss:// --redis" "$ERR"
printf 'backend:\n  redis: "rediss://127.0.0.1:6379"\n  redis_tls: {verify: false}\n' >"$T_DIR/betls2.yaml"
run beflag3 "$MCPGW" backend -c "$T_DIR/betls2.yaml" --listen 127.0.0.1:0 --redis redis://127.0.0.1:6379
assert_eq "backend: the file's redis_tls: with a redis:// --redis flag is a usage error" 2 "$RC"
assert_match "... naming the file's redis_tls:" "the configuration's redis_tls: is for a rediss:// --redis" "$ERR"
# redis_tls: in a file without redis: may wait for a --redis flag: accepted
# by check-config, refused by the backend only when no rediss:// URL came
printf 'listeners:\n  - address: 127.0.0.1:0\nbackend:\n  redis_tls: {verify: false}\n' >"$T_DIR/betls3.yaml"
run ck3 "$MCPGW" check-config -c "$T_DIR/betls3.yaml"
assert_eq "check-config: redis_tls: in a file without redis: is accepted" 0 "$RC"
run beflag4 "$MCPGW" backend -c "$T_DIR/betls3.yaml" --listen 127.0.0.1:0
assert_eq "backend: that file with no rediss:// --redis is a usage error" 2 "$RC"
assert_match "... naming the default URL" \
	"the configuration's redis_tls: is for a rediss:// --redis, but the Redis URL is 'redis://127\.0\.0\.1:6379'" "$ERR"

# --- relative names: from the file's folder, not the working directory -------------
mkdir -p "$T_DIR/site/tls" "$T_DIR/site/keys" "$T_DIR/elsewhere"
cp "$CERT" "$T_DIR/site/tls/cert.pem"
cp "$KEY" "$T_DIR/site/tls/key.pem"
printf '%s\n' "$GOOD_KEYS" >"$T_DIR/site/keys/session.keys"
cat >"$T_DIR/site/gw.yaml" <<EOF
listeners:
  - address: 127.0.0.1:0
    tls: {cert: tls/cert.pem, key: tls/key.pem}
upstreams:
  - name: a
    servers:
      - url: http://127.0.0.1:9
    health: {enabled: false}
sessions:
  store: sealed
  key_file: keys/session.keys
EOF
run rel env -C "$T_DIR/elsewhere" "$MCPGW" check-config -c ../site/gw.yaml
assert_eq "check-config resolves relative names against the file's folder" 0 "$RC"
[ "$RC" = 0 ] || log "$ERR"
run relq env -C "$T_DIR/site/tls" "$MCPGW" check-config -c "$T_DIR/site/gw.yaml"
assert_eq "the same from inside another folder (names not taken from the cwd)" 0 "$RC"
cp "$T_DIR/site/gw.yaml" "$T_DIR/elsewhere/gw.yaml"
run relbad env -C "$T_DIR/site" "$MCPGW" check-config -c "$T_DIR/elsewhere/gw.yaml"
assert_eq "a copy in a folder without the files is refused, even from the folder that has them" 2 "$RC"
assert_match "the refusal names the file in the copy's folder" "$T_DIR/elsewhere/keys/session.keys" "$ERR"

# serve itself, started from another folder, finds its TLS files
( cd "$T_DIR/elsewhere" && exec "$MCPGW" serve -c ../site/gw.yaml --workers 1 \
	>"$T_DIR/relserve.out" 2>"$T_DIR/relserve.err" ) &
RP=$!
track_pid "$RP"
poll_until 10 grep -q '^listening on ' "$T_DIR/relserve.out" ||
	fail "serve with relative TLS names did not start: $(tail -n 3 "$T_DIR/relserve.err")"
RADDR=$(sed -n 's/^listening on //p' "$T_DIR/relserve.out" | head -n 1)
if [ -n "$RADDR" ]; then
	req GET "https://$RADDR/mcpgw/healthz" --cacert "$CERT"
	assert_code "serve speaks TLS with the certificate named relative to its file" 200
fi
stop_serve "$RP"

# --- --version on every command ------------------------------------------------------------
run v "$MCPGW" --version
assert_eq "mcpgw --version exits 0" 0 "$RC"
WANT=$OUT
assert_match "mcpgw --version names the version" '^mcpgw [0-9]' "$WANT"
for c in serve backend load check-config; do
	run "v-$c" "$MCPGW" "$c" --version
	assert_eq "mcpgw $c --version exits 0" 0 "$RC"
	assert_eq "mcpgw $c --version prints what mcpgw --version prints" "$WANT" "$OUT"
done
if [ -x "$BENCH" ]; then
	run vb "$BENCH" --version
	assert_eq "mcpgw-bench --version exits 0" 0 "$RC"
	assert_eq "mcpgw-bench --version prints what mcpgw --version prints" "$WANT" "$OUT"
else
	fail "mcpgw-bench not found at $BENCH"
fi

finish
