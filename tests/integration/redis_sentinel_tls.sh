#!/bin/bash
# redis_sentinel_tls.sh - the redis session store behind Redis Sentinel,
# all over TLS: a master, a replica (tls-replication yes) and three
# sentinels (quorum 2, tls-replication yes), every one TLS only (port 0,
# tls-port) with client certificates required (tls-auth-clients yes, the
# default; certificates from the test CA of redis_tls_lib.sh).  Two
# gateways (rediss://, tls: with the CA and a client certificate) find the
# master through the sentinels over TLS.  Sessions are created through
# both and reach the replica; the master is SIGKILLed while a loop of
# requests runs; once the sentinels promoted the replica every session
# still works through both gateways (no 404), new sessions are written to
# the new master, and each gateway logged the outage and its end (it asked
# the sentinels again over TLS and reached the promoted replica).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node redis-server redis-cli openssl
require_mcpgw
watchdog 90

. "$TOP_SRCDIR/tests/integration/redis_tls_lib.sh"
. "$TOP_SRCDIR/tests/integration/sentinel_lib.sh"
tls_pki

# tcli PORT ARGS...: redis-cli over TLS with the client certificate
tcli() {
	local p=$1
	shift
	timeout 5 redis-cli -h 127.0.0.1 -p "$p" --tls --cacert "$C/ca.pem" \
		--cert "$C/client.pem" --key "$C/client.key" "$@" 2>/dev/null
}
tls_up() { [ "$(tcli "$1" ping)" = PONG ]; }
start_tls_server() { # NAME PORT ARGS...: a TLS redis-server (or sentinel)
	local name=$1 port=$2 i=0
	shift 2
	redis-server "$@" >"$T_DIR/$name.out" 2>&1 &
	eval "PID_$name=$!"
	track_pid "$!"
	while [ $i -lt 100 ]; do
		tls_up "$port" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	die "$name did not start on $port: $(tail -n 5 "$T_DIR/$name.out")"
}
redis_conf() { # FILE PORT [MORE-LINES]: a TLS-only redis-server, no persistence
	printf 'port 0\ntls-port %s\n%s\ntls-replication yes\ndir %s\nsave ""\nappendonly no\n%s\n' \
		"$2" "$(tls_server_conf)" "$T_DIR" "${3:-}" >"$1"
}

MPORT=$(free_port) && RPORT=$(free_port) || die "no free port"
redis_conf "$T_DIR/master.conf" "$MPORT"
redis_conf "$T_DIR/replica.conf" "$RPORT" "replicaof 127.0.0.1 $MPORT"
start_tls_server master "$MPORT" "$T_DIR/master.conf"
PLAIN=$(timeout 2 redis-cli -h 127.0.0.1 -p "$MPORT" ping 2>&1)
assert_nomatch "the master does not speak plain text" '^PONG$' "$PLAIN"
NOCERT=$(timeout 2 redis-cli -h 127.0.0.1 -p "$MPORT" --tls --cacert "$C/ca.pem" ping 2>&1)
assert_nomatch "... nor TLS without a client certificate" '^PONG$' "$NOCERT"
start_tls_server replica "$RPORT" "$T_DIR/replica.conf"
linked() { tcli "$RPORT" info replication | tr -d '\r' | grep -qx 'master_link_status:up'; }
poll_until 15 linked || die "the replica did not sync over TLS: $(tail -n 5 "$T_DIR/replica.out")"
ok "the replica is linked to the master over TLS"

SENT=()
for k in 1 2 3; do
	p=$(free_port) || die "no free port"
	cat >"$T_DIR/sentinel$k.conf" <<EOF
port 0
tls-port $p
$(tls_server_conf)
tls-replication yes
dir $T_DIR
sentinel monitor mymaster 127.0.0.1 $MPORT 2
sentinel down-after-milliseconds mymaster 500
sentinel failover-timeout mymaster 3000
sentinel parallel-syncs mymaster 1
EOF
	start_tls_server "sentinel$k" "$p" "$T_DIR/sentinel$k.conf" --sentinel
	SENT+=("$p")
done
master_port() { tcli "${SENT[$1]}" sentinel get-master-addr-by-name mymaster | sed -n 2p; }
sentinels_ready() {
	local k info
	for k in 0 1 2; do
		info=$(tcli "${SENT[$k]}" sentinel master mymaster | tr '\n' ' ')
		[[ $info == *"num-other-sentinels 2 "* && $info == *"num-slaves 1 "* ]] || return 1
	done
}
poll_until 30 sentinels_ready ||
	die "the TLS sentinels did not see each other and the replica: $(tail -n 5 "$T_DIR/sentinel1.out")"
ok "three TLS sentinels see each other and the replica"
assert_eq "the sentinels name the master" "$MPORT" "$(master_port 0)"

# ---- two gateways, rediss:// through the sentinels ------------------------------
start_backend --era legacy --id r1
B1=$B_ADDR
PREFIX="itest:$T_NAME:"
SF_SESSIONS="  store: redis
  redis:
    url: \"rediss://127.0.0.1\"
    sentinels: [\"127.0.0.1:${SENT[0]}\", \"127.0.0.1:${SENT[1]}\", \"127.0.0.1:${SENT[2]}\"]
    master_name: mymaster
    cache_ttl: 500ms
    timeout: 500ms
    key_prefix: \"$PREFIX\"
    tls: {ca_file: $C/ca.pem, cert_file: $C/client.pem, key_file: $C/client.key}" \
	sf_config "$T_DIR/gw.yaml" stateful "$B1"
"$MCPGW" check-config -q -c "$T_DIR/gw.yaml" >"$T_DIR/check.out" 2>&1
assert_eq "check-config accepts rediss:// with sentinels and tls:" 0 "$?"
start_serve -c "$T_DIR/gw.yaml"
GA=$G_URL
GAERR=$G_ERR
start_serve -c "$T_DIR/gw.yaml"
GB=$G_URL
GBADDR=$G_ADDR
GBERR=$G_ERR

SIDS=()
for k in 1 2 3 4 5 6; do
	if [ $((k % 2)) = 1 ]; then sf_init "$GA"; else sf_init "$GB"; fi && SIDS+=("$SID")
done
[ ${#SIDS[@]} = 6 ] || die "could not open six sessions"
keys_on() { tcli "$1" --scan --pattern "$PREFIX*" | grep -Ec "^$PREFIX[0-9a-f]{32}\$"; }
assert_eq "the sessions are on the TLS master" 6 "$(keys_on "$MPORT")"
replicated() { [ "$(keys_on "$RPORT")" = 6 ]; }
poll_until 10 replicated && ok "... and reached the replica over TLS" ||
	fail "the replica holds $(keys_on "$RPORT") sessions"
SID=${SIDS[0]}
lwho "$GB"
assert_code "a session created through A is served by B before the failover" 200

# ---- the master SIGKILLed under a loop of requests through both gateways -----------
session_loop 1000 "$GA" "$GB"
sleep 1
eval "MPID=\$PID_master"
kill_wait "$MPID" KILL 5 || die "the master did not die"
KILLED_AT=$(date +%s%N)
log "master (port $MPORT) SIGKILLed"
promoted() { [ "$(master_port 0)" = "$RPORT" ] && [ "$(master_port 1)" = "$RPORT" ] && [ "$(master_port 2)" = "$RPORT" ]; }
poll_until 40 promoted && ok "the TLS sentinels promoted the replica" ||
	die "no failover: the sentinels name $(master_port 0) $(master_port 1) $(master_port 2)"
log "promotion seen $(( ($(date +%s%N) - KILLED_AT) / 1000000 )) ms after the kill"
replica_is_master() { tcli "$RPORT" role | head -n 1 | grep -qx master; }
poll_until 10 replica_is_master || die "the replica did not become master"
served_by_new() { [ "$(tcli "$RPORT" info commandstats | grep -c '^cmdstat_eval:')" = 1 ]; }
poll_until 20 served_by_new && ok "the gateways follow the failover (commands on the new master)" ||
	fail "no command reached the new master"
log "first gateway command on the new master $(( ($(date +%s%N) - KILLED_AT) / 1000000 )) ms after the kill"
sleep 1 # past cache_ttl: lookups go to Redis again
touch "$T_DIR/stop"
wait "$LOOP" 2>/dev/null

# every session, through each gateway
for G in "$GA" "$GB"; do
	lost_sessions "$G"
	assert_eq "after the failover every session works through $G (0 lost)" "" "$LOST"
done
N404=$(grep -c '^404$' "$T_DIR/loop.codes" 2>/dev/null)
assert_eq "no request of the loop was answered 404 (session lost)" 0 "${N404:-0}"
log "loop answers: $(sort "$T_DIR/loop.codes" | uniq -c | tr '\n' ' ')"

sf_init "$GA" || fail "a new session through A after the failover"
assert_eq "a new session through A is on the new master" 1 "$(tcli "$RPORT" exists "$PREFIX$SID")"
lwho "$GB"
assert_code "... and B serves it" 200
sf_init "$GB" || fail "a new session through B after the failover"
assert_eq "a new session through B is on the new master" 1 "$(tcli "$RPORT" exists "$PREFIX$SID")"
lwho "$GA"
assert_code "... and A serves it" 200
assert_eq "B's store is reachable" 0 "$(gstat "$GBADDR" '.sessions.store.unreachable')"

# the logs: the outage (named by the sentinel master, no address), then
# its end once the gateway reached the promoted replica
down_then_up() { # LOG: the first store_down comes before a store_up
	awk '/event=store_down store=redis url=sentinel:mymaster / && !d { d = NR }
		/event=store_up store=redis url=sentinel:mymaster / && d { u = NR }
		END { exit !(d && u) }' "$1"
}
for E in "$GAERR" "$GBERR"; do
	down_then_up "$E" && ok "$(basename "$E"): store_down, then store_up, for sentinel:mymaster" ||
		fail "$(basename "$E"): no store_down then store_up: $(grep -i redis "$E" | tail -n 3)"
done
log "gateway A: $(grep -E 'event=store_(down|up)' "$GAERR" | tr '\n' ' ')"
# a master that died without a TLS close_notify reads as a closed
# connection, as with redis://, not as a TLS failure
DOWN=$(grep -hE 'event=store_down store=redis' "$GAERR" "$GBERR" | grep -Eo 'detail="[^"]*"' | sort -u)
assert_match "the outage reads as the connection closed or lost" '^detail="connection (closed|lost)' "$DOWN"
assert_eq "... every store_down says so" "" "$(printf '%s\n' "$DOWN" | grep -Ev '^detail="connection (closed|lost)')"
assert_nomatch "... never as a TLS error" 'TLS' "$(grep -hE 'event=store_(down|up)' "$GAERR" "$GBERR")"

finish
