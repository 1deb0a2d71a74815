#!/bin/bash
# serve_handles.sh - modern counter handles (SEP-2567) through "mcpgw
# serve" over three replicas, one of which is killed (SIGKILL) mid-run,
# for each state design of the backend: hmac (signed self-contained
# handles, shared key) and redis (a redis-server started here) lose
# nothing - every counter reaches its exact value - while memory loses
# handles (the tool error "unknown handle") - behind round robin at once,
# and behind a sticky hash balancer exactly when a replica dies (the
# counters that lived on it are gone, the others go on).  The contrast is
# the point: a stateless balancer is only as good as the handle design
# behind it.  In every design the gateway itself fails no request.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node redis-server redis-cli openssl
require_mcpgw
watchdog 120

KEYS=$T_DIR/keys
echo "k1 $(openssl rand -hex 32)" >"$KEYS"
start_redis

ROUNDS=4
KILL_AFTER=2
NCOUNTERS=6

# run_design STATE [backend options...]: three replicas, a gateway, six
# counters incremented ROUNDS times; replica 2 is killed after round
# KILL_AFTER.  With BAL=hash the gateway hashes on X-Counter and each
# counter has its own key, two of them on replica 2 and two elsewhere.
# Sets LOSSES (unknown-handle errors; LOSSES_BEFORE before the kill),
# LOST_COUNTERS (counters that saw a loss), HTTPFAIL (non-200 answers),
# WRONG (successful increments with an unexpected value) and FINAL (the
# last values, space-separated).
run_design() {
	local state=$1 i r round h n=$NCOUNTERS k
	shift
	local -a addr pid handle value key kh
	for i in 1 2 3; do
		start_backend --era modern --state "$state" --id "$state-$i" "$@"
		addr[$i]=$B_ADDR
		pid[$i]=$B_PID
	done
	local gw=(--upstream "http://${addr[1]}" --upstream "http://${addr[2]}" --upstream "http://${addr[3]}")
	[ "${BAL:-}" = hash ] && gw+=(--balancer hash --hash-header X-Counter)
	start_serve "${gw[@]}"
	if [ "${BAL:-}" = hash ]; then
		# two keys that land on replica 2 and two that do not
		local on2=() off2=()
		for k in $(seq 1 40); do
			who "$G_URL" -H "X-Counter: key-$k"
			if [ "$WHO" = "$state-2" ]; then
				[ ${#on2[@]} -lt 2 ] && on2+=("key-$k")
			elif [ -n "$WHO" ]; then
				[ ${#off2[@]} -lt 2 ] && off2+=("key-$k")
			fi
			[ ${#on2[@]} = 2 ] && [ ${#off2[@]} = 2 ] && break
		done
		[ ${#on2[@]} = 2 ] && [ ${#off2[@]} = 2 ] || die "$state/hash: no two keys on each side of replica 2"
		key=("" "${on2[@]}" "${off2[@]}")
		n=4
	fi
	LOSSES=0
	LOSSES_BEFORE=0
	LOST_COUNTERS=""
	HTTPFAIL=0
	WRONG=0
	for i in $(seq 1 $n); do
		kh=()
		[ -n "${key[$i]:-}" ] && kh=(-H "X-Counter: ${key[$i]}")
		modern "$G_URL" "$i" tools/call '{"name":"counter_create","arguments":{}}' "${kh[@]}"
		handle[$i]=$(jq_get '.result.structuredContent.handle // empty')
		value[$i]=0
		[ "$CODE" = 200 ] && [ -n "${handle[$i]}" ] || { HTTPFAIL=$((HTTPFAIL + 1)); fail "$state: counter_create $i: HTTP $CODE $BODY"; }
	done
	for round in $(seq 1 $ROUNDS); do
		[ "$round" = $((KILL_AFTER + 1)) ] && LOSSES_BEFORE=$LOSSES
		if [ "$round" = $((KILL_AFTER + 1)) ]; then
			stop_wait "${pid[2]}" KILL 5 || fail "$state: replica 2 did not die on SIGKILL"
			log "$state: replica $state-2 killed (SIGKILL) before round $round"
		fi
		for i in $(seq 1 $n); do
			kh=()
			[ -n "${key[$i]:-}" ] && kh=(-H "X-Counter: ${key[$i]}")
			modern "$G_URL" "$((100 * round + i))" tools/call \
				"$(jq -cn --arg h "${handle[$i]}" '{name:"counter_increment",arguments:{handle:$h}}')" "${kh[@]}"
			if [ "$CODE" != 200 ]; then
				HTTPFAIL=$((HTTPFAIL + 1))
				log "$state: increment of counter $i in round $round: HTTP $CODE $(head -c 200 "$BODYF")"
				continue
			fi
			if [ "$(jq_get '.result.isError')" = true ]; then
				case $(tool_text) in
				"unknown handle"*)
					LOSSES=$((LOSSES + 1))
					case " $LOST_COUNTERS " in *" $i "*) ;; *) LOST_COUNTERS="${LOST_COUNTERS:+$LOST_COUNTERS }$i" ;; esac
					;;
				*) WRONG=$((WRONG + 1)); log "$state: counter $i round $round: tool error '$(tool_text)'" ;;
				esac
				continue
			fi
			value[$i]=$((value[$i] + 1))
			[ "$(jq_get '.result.structuredContent.value')" = "${value[$i]}" ] || {
				WRONG=$((WRONG + 1))
				log "$state: counter $i round $round: value $(jq_get '.result.structuredContent.value'), expected ${value[$i]}"
			}
			h=$(jq_get '.result.structuredContent.handle // empty')
			[ -n "$h" ] && handle[$i]=$h # hmac: the successor handle
		done
	done
	FINAL="${value[*]:1}"
	log "$state: losses $LOSSES, HTTP failures $HTTPFAIL, wrong values $WRONG, final values $FINAL"
	stop_serve
	for i in 1 3; do
		stop_wait "${pid[$i]}" TERM 15
		[ "$STOP_STATUS" = 0 ] || fail "$state: replica $i exited with status '$STOP_STATUS' on SIGTERM"
	done
}

ALL=$(printf "$ROUNDS %.0s" $(seq 1 $NCOUNTERS) | sed 's/ $//')

run_design hmac --key-file "$KEYS"
assert_eq "hmac: no request failed at the gateway" 0 "$HTTPFAIL"
assert_eq "hmac: no handle lost when a replica died" 0 "$LOSSES"
assert_eq "hmac: no wrong value" 0 "$WRONG"
assert_eq "hmac: every counter reached $ROUNDS" "$ALL" "$FINAL"

run_design redis --redis "$REDIS_URL"
assert_eq "redis: no request failed at the gateway" 0 "$HTTPFAIL"
assert_eq "redis: no handle lost when a replica died" 0 "$LOSSES"
assert_eq "redis: no wrong value" 0 "$WRONG"
assert_eq "redis: every counter reached $ROUNDS" "$ALL" "$FINAL"

run_design memory
assert_eq "memory: no request failed at the gateway (the loss is in the state)" 0 "$HTTPFAIL"
if [ "$LOSSES" -gt 0 ]; then
	ok "memory: handles were lost ($LOSSES of $((ROUNDS * NCOUNTERS)) increments answered 'unknown handle')"
else
	fail "memory: expected handle losses behind a stateless balancer with a replica killed, saw none"
fi
assert_ne "memory: not every counter reached $ROUNDS" "$ALL" "$FINAL"

# memory behind a sticky balancer: fine until a replica dies, then exactly
# the counters that lived on it are lost
BAL=hash run_design memory
assert_eq "memory + hash: no request failed at the gateway" 0 "$HTTPFAIL"
assert_eq "memory + hash: no loss while every replica lives" 0 "$LOSSES_BEFORE"
assert_eq "memory + hash: the two counters on the killed replica are lost, the others are not" "1 2" "$LOST_COUNTERS"
assert_eq "memory + hash: the survivors reached $ROUNDS, the lost stopped at $KILL_AFTER" \
	"$KILL_AFTER $KILL_AFTER $ROUNDS $ROUNDS" "$FINAL"

finish
