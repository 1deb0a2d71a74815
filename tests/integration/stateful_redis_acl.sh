#!/bin/bash
# stateful_redis_acl.sh - the redis session store with a Redis ACL user:
# a real redis-server whose default user is off and whose user "alice"
# has a password.  redis://alice:PASSWORD@... works (AUTH alice PASSWORD);
# a wrong password is a clear error at start (event store_down with the
# server's WRONGPASS), counted as an outage, new sessions refused 503; the
# password appears in no log line.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node redis-server redis-cli
require_mcpgw
watchdog 60

PW='s3cr3t-Pw/x'
PORT=$(free_port) || die "no free port"
cat >"$T_DIR/redis.conf" <<EOF
port $PORT
bind 127.0.0.1
save ""
appendonly no
user default off
user alice on >$PW ~* &* +@all
EOF
redis-server "$T_DIR/redis.conf" >"$T_DIR/redis.out" 2>&1 &
track_pid "$!"
up() { [ "$(timeout 2 redis-cli -p "$PORT" --user alice --pass "$PW" --no-auth-warning ping 2>/dev/null)" = PONG ]; }
poll_until 10 up || die "redis-server with ACL did not start: $(tail -n 5 "$T_DIR/redis.out")"
NOAUTH=$(timeout 2 redis-cli -p "$PORT" ping 2>&1)
assert_match "the default user is off" 'NOAUTH|WRONGPASS|denied' "$NOAUTH"

start_backend --era legacy --id r1
B1=$B_ADDR
conf() { # FILE URL
	SF_SESSIONS="  store: redis
  redis:
    url: \"$2\"
    timeout: 500ms
    key_prefix: \"itest:$T_NAME:\"" sf_config "$1" stateful "$B1"
}
# '/' in the password stands as it is (the userinfo ends at the last '@')
conf "$T_DIR/good.yaml" "redis://alice:$PW@127.0.0.1:$PORT"
conf "$T_DIR/bad.yaml" "redis://alice:wrong-Pw9@127.0.0.1:$PORT"

start_serve -c "$T_DIR/good.yaml"
GOOD=$G_URL
GOODERR=$G_ERR
GOODOUT=$G_OUT
sf_init "$GOOD" || die "no session with the ACL user"
lwho "$GOOD"
assert_code "a session stored through the ACL user" 200
KEYS=$(timeout 5 redis-cli -p "$PORT" --user alice --pass "$PW" --no-auth-warning --scan --pattern "itest:$T_NAME:*" | grep -c .)
assert_cmp "... in Redis" "$KEYS" '>=' 1

start_serve -c "$T_DIR/bad.yaml"
BAD=$G_URL
BADADDR=$G_ADDR
logged() { grep -Eq 'event=store_down store=redis .*detail="AUTH refused: WRONGPASS' "$G_ERR"; }
poll_until 10 logged && ok "a wrong password: store_down with the server's WRONGPASS at start" ||
	fail "a wrong password: no clear error: $(grep -i redis "$G_ERR" | tail -n 3)"
post "$BAD" "$INIT_BODY"
assert_code "a wrong password: new sessions are refused" 503
assert_cmp "a wrong password: counted as an outage" "$(gstat "$BADADDR" '.sessions.store.outages')" '>=' 1
assert_eq "a wrong password: the store is unreachable" 1 "$(gstat "$BADADDR" '.sessions.store.unreachable')"
LEAK=$(grep -lF -e "$PW" -e "wrong-Pw9" "$GOODERR" "$GOODOUT" "$G_ERR" "$G_OUT" 2>/dev/null)
assert_eq "no password in any log" "" "$LEAK"

finish
