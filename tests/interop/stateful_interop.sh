#!/bin/bash
# stateful_interop.sh - the official TypeScript SDK 1.x client
# (@modelcontextprotocol/sdk) runs a legacy session through "mcpgw serve
# --mode stateful" and keeps working when the replica it is pinned to is
# SIGKILLed mid-session: against three "mcpgw backend --era legacy"
# replicas, and against two replicas of the official reference server
# @modelcontextprotocol/server-everything (streamable HTTP; it answers an
# unknown session with 400, which the gateway's default lost-session
# rule recognizes).  The client (tests/interop/stateful_client.mjs) calls
# echo in a loop and asks after each call which replica answered; the
# shell kills that replica while the client waits between two calls.
# Every call succeeds, the client's session id never changes, one
# initialize is replayed, the SDK's standalone GET stream is closed and
# its reconnect re-pinned, and the session ends with DELETE.  Packages
# live in their own npm prefix ($TOP_BUILDDIR/tests/interop/.cache/stateful)
# so that no other interop test installs into it at the same time.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node npm
require_mcpgw
watchdog 400

SDK1=${MCPGW_SDK1_VERSION:-1.32.2}
EVERY=${MCPGW_EVERYTHING_VERSION:-2026.8.31}
CACHE=$TOP_BUILDDIR/tests/interop/.cache
PREFIX=$CACHE/stateful
mkdir -p "$PREFIX" || die "cannot create $PREFIX"
. "$TOP_SRCDIR/tests/interop/node.sh"
interop_node
log "node: $NODE ($("$NODE" --version))"

interop_packages "$PREFIX" "@modelcontextprotocol/sdk@$SDK1" "@modelcontextprotocol/server-everything@$EVERY"
cp "$TOP_SRCDIR/tests/interop/stateful_client.mjs" "$PREFIX/" || die "cannot copy the client"
EVERY_DIR=$PREFIX/node_modules/@modelcontextprotocol/server-everything

declare -A RPID

# session NAME URL WHO_TOOL ECHO_ARG: runs the client (12 calls, pause
# after the 4th), kills the replica that answered the 4th call, lets the
# client go on.  Sets SUM (its summary), RC, KILLED (replica name).
session() {
	local name=$1 url=$2 whot=$3 arg=$4 ctl=$T_DIR/ctl-$1 cpid
	mkdir -p "$ctl"
	(cd "$PREFIX" && exec timeout 60 "$NODE" stateful_client.mjs \
		"$(jq -cn --arg u "$url" --arg c "$ctl" --arg w "$whot" --arg a "$arg" \
			'{url: $u, n: 12, pause: 4, control: $c, who: $w, echoArg: $a}')") \
		>"$T_DIR/$name.json" 2>"$T_DIR/$name.clienterr" &
	cpid=$!
	track_pid "$cpid"
	KILLED=""
	if wait_match "$ctl/paused" '.' 30; then
		KILLED=$(jq -r '.replica // empty' "$ctl/paused")
		if [ -n "$KILLED" ] && [ -n "${RPID[$KILLED]:-}" ]; then
			kill_wait "${RPID[$KILLED]}" KILL 5 || fail "$name: $KILLED did not die"
			log "$name: killed $KILLED (pid ${RPID[$KILLED]}) after call 4"
		else
			fail "$name: the client paused on an unknown replica '$KILLED'"
		fi
	else
		fail "$name: the client never paused: $(head -c 800 "$T_DIR/$name.clienterr")"
	fi
	: >"$ctl/go"
	wait_pid "$cpid" 50
	RC=$?
	SUM=$(tail -n 1 "$T_DIR/$name.json")
	log "$name: $(printf '%s' "$SUM" | jq -c '{ok, failed, failures, replicas, transportErrors, getAfterKill}' 2>/dev/null | head -c 3000)"
	[ "$RC" = 0 ] || log "$name stderr: $(head -c 1500 "$T_DIR/$name.clienterr")"
}
sum_is() { # WHAT FILTER
	if printf '%s' "$SUM" | jq -e "$2" >/dev/null 2>&1; then
		ok "$1"
	else
		fail "$1: jq '$2' does not hold on: $(printf '%s' "$SUM" | head -c 1500)"
	fi
}
check_session() { # LABEL
	local l=$1
	assert_eq "$l: client exit status" 0 "$RC"
	sum_is "$l: all 12 calls succeeded" '.ok == 12 and .failed == 0'
	sum_is "$l: a legacy version negotiated" '.protocolVersion | test("^2025-")'
	sum_is "$l: one session id throughout" '(.sessionIds | length) == 1 and (.sessionIds[0] | type) == "string"'
	sum_is "$l: calls 1-4 on the replica that was then killed" \
		"(.replicas[0:4] | unique) == [\"$KILLED\"]"
	sum_is "$l: calls 5-12 on one other replica" \
		"(.replicas[4:] | unique | length) == 1 and .replicas[4] != \"$KILLED\""
	sum_is "$l: the SDK's GET stream, closed when its replica died, reconnected (re-pinned)" \
		'(.getAfterKill | length) >= 1 and (.getAfterKill | all(. == "GET - 200"))'
	sum_is "$l: the session ended with DELETE" '.terminated == true and (.statuses | any(startswith("DELETE") and (endswith(" 200") or endswith(" 204"))))'
}

# --- SDK 1.x -> gateway -> mcpgw backend replicas ----------------------------------------------
ADDRS=()
for r in b1 b2 b3; do
	start_backend --era legacy --id "$r"
	RPID[$r]=$B_PID
	ADDRS+=("$B_ADDR")
done
SF_WORKERS=1 sf_config "$T_DIR/backends.yaml" stateful "${ADDRS[@]}"
start_serve -c "$T_DIR/backends.yaml"
GWADDR=$G_ADDR
session backends "$G_URL" whoami text
check_session "sdk 1.x -> gateway -> mcpgw backend"
# the killed replica no longer answers: the survivors saw only the replay
assert_eq "mcpgw backend: one initialize replayed on the survivors" 1 "$(init_sum "${ADDRS[@]}")"
REPLAYS=$(gstat "$GWADDR" '.sessions.replays')
assert_eq "mcpgw backend: the gateway counted one replay" 1 "$REPLAYS"
sf_stop_serve

# --- SDK 1.x -> gateway -> server-everything replicas ---------------------------------------------
interop_everything e1
E1=$E_ADDR
interop_everything e2
E2=$E_ADDR
SF_WORKERS=1 SF_HEALTH='      type: tcp
      interval: 500ms
      timeout: 400ms
      rise: 1
      fall: 3' sf_config "$T_DIR/everything.yaml" stateful "$E1" "$E2"
start_serve -c "$T_DIR/everything.yaml"
GWADDR=$G_ADDR
session everything "$G_URL" get-env message
check_session "sdk 1.x -> gateway -> server-everything"
assert_eq "server-everything: the gateway counted one replay" 1 "$(gstat "$GWADDR" '.sessions.replays')"
assert_cmp "server-everything: the re-pin was triggered" \
	"$(gstat "$GWADDR" '.sessions.repins_total')" '>=' 1

finish
