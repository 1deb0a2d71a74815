#!/bin/bash
# stateful_redis_sentinel.sh - the redis session store behind Redis
# Sentinel: a master, a replica (replicaof) and three sentinels (quorum 2)
# on loopback, all real redis-server processes.  The gateway finds the
# master through the sentinels (sessions.redis.sentinels, master_name);
# sessions are created and reach the replica; the master is SIGKILLed
# while a loop of requests runs; once the sentinels promoted the replica
# every session still works through the gateway (it asked the sentinels
# again on reconnect), and new sessions are written to the new master.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "$TOP_SRCDIR/tests/integration/sentinel_lib.sh"

require_tools curl jq node redis-server redis-cli
require_mcpgw
watchdog 150

# redis_up PORT: PING answered
redis_up() { [ "$(timeout 2 redis-cli -p "$1" ping 2>/dev/null)" = PONG ]; }
start_redis_port() { # NAME PORT ARGS...: a redis-server (or sentinel)
	local name=$1 port=$2 i=0
	shift 2
	redis-server "$@" --dir "$T_DIR" >"$T_DIR/$name.out" 2>&1 &
	eval "PID_$name=$!"
	track_pid "$!"
	while [ $i -lt 100 ]; do
		redis_up "$port" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	die "$name did not start on $port: $(tail -n 5 "$T_DIR/$name.out")"
}

MPORT=$(free_port) && RPORT=$(free_port) || die "no free port"
start_redis_port master "$MPORT" --port "$MPORT" --bind 127.0.0.1 --save '' --appendonly no
start_redis_port replica "$RPORT" --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no \
	--replicaof 127.0.0.1 "$MPORT"
SENT=()
for k in 1 2 3; do
	p=$(free_port) || die "no free port"
	cat >"$T_DIR/sentinel$k.conf" <<EOF
port $p
bind 127.0.0.1
dir $T_DIR
sentinel monitor mymaster 127.0.0.1 $MPORT 2
sentinel down-after-milliseconds mymaster 500
sentinel failover-timeout mymaster 3000
sentinel parallel-syncs mymaster 1
EOF
	start_redis_port "sentinel$k" "$p" "$T_DIR/sentinel$k.conf" --sentinel
	SENT+=("$p")
done
master_port() { timeout 2 redis-cli -p "${SENT[0]}" sentinel get-master-addr-by-name mymaster 2>/dev/null | sed -n 2p; }
sentinels_ready() {
	local info
	info=$(timeout 2 redis-cli -p "${SENT[0]}" sentinel master mymaster 2>/dev/null | tr '\n' ' ')
	[[ $info == *"num-other-sentinels 2 "* && $info == *"num-slaves 1 "* ]]
}
poll_until 30 sentinels_ready || die "the sentinels did not see each other and the replica"
assert_eq "the sentinels name the master" "$MPORT" "$(master_port)"

start_backend --era legacy --id r1
B1=$B_ADDR
PREFIX="itest:$T_NAME:"
SF_SESSIONS="  store: redis
  redis:
    sentinels: [\"127.0.0.1:${SENT[0]}\", \"127.0.0.1:${SENT[1]}\", \"127.0.0.1:${SENT[2]}\"]
    master_name: mymaster
    cache_ttl: 500ms
    timeout: 500ms
    key_prefix: \"$PREFIX\"" sf_config "$T_DIR/gw.yaml" stateful "$B1"
start_serve -c "$T_DIR/gw.yaml"
GW=$G_URL
GWADDR=$G_ADDR
GWERR=$G_ERR

SIDS=()
for k in 1 2 3 4 5 6; do
	sf_init "$GW" && SIDS+=("$SID")
done
[ ${#SIDS[@]} = 6 ] || die "could not open six sessions"
keys_on() { timeout 5 redis-cli -p "$1" --scan --pattern "$PREFIX*" | grep -Ec "^$PREFIX[0-9a-f]{32}\$"; }
assert_eq "the sessions are on the master" 6 "$(keys_on "$MPORT")"
replicated() { [ "$(keys_on "$RPORT")" = 6 ]; }
poll_until 10 replicated && ok "... and reached the replica" || fail "the replica holds $(keys_on "$RPORT") sessions"

# --- the master SIGKILLed under a loop of requests ----------------------------------------------
session_loop 2000 "$GW"
sleep 1
eval "MPID=\$PID_master"
kill_wait "$MPID" KILL 5 || die "the master did not die"
log "master (port $MPORT) SIGKILLed"
promoted() { [ "$(master_port)" = "$RPORT" ]; }
poll_until 40 promoted && ok "the sentinels promoted the replica" || die "no failover: the sentinels name $(master_port)"
replica_is_master() { timeout 2 redis-cli -p "$RPORT" role 2>/dev/null | head -n 1 | grep -qx master; }
poll_until 10 replica_is_master || die "the replica did not become master"
served_by_new() { [ "$(timeout 2 redis-cli -p "$RPORT" info commandstats | grep -c '^cmdstat_eval:')" = 1 ]; }
poll_until 20 served_by_new && ok "the gateway follows the failover (commands on the new master)" ||
	fail "no command reached the new master"
sleep 1 # past cache_ttl: lookups go to Redis again
touch "$T_DIR/stop"
wait "$LOOP" 2>/dev/null

lost_sessions "$GW"
assert_eq "after the failover every session works (0 lost)" "" "$LOST"
N404=$(grep -c '^404$' "$T_DIR/loop.codes" 2>/dev/null)
assert_eq "no request of the loop was answered 404 (session lost)" 0 "${N404:-0}"
log "loop answers: $(sort "$T_DIR/loop.codes" | uniq -c | tr '\n' ' ')"
sf_init "$GW" || fail "a new session after the failover"
assert_cmp "new sessions go to the new master" "$(keys_on "$RPORT")" '>=' 7
if grep -Eq 'event=store_down store=redis url=sentinel:mymaster' "$GWERR"; then
	ok "the outage is logged with the sentinel master's name (no address, no password)"
else
	fail "no store_down event: $(grep -i redis "$GWERR" | tail -n 3)"
fi

finish
