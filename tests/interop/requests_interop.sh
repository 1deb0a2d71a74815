#!/bin/bash
# requests_interop.sh - requests a server sends its client in the middle
# of a tool call, through "mcpgw serve".  The official SDK 1.x client
# (tests/interop/requests_client.mjs) calls the reference server
# @modelcontextprotocol/server-everything's trigger-sampling-request,
# trigger-elicitation-request and get-roots-list: each sends
# sampling/createMessage, elicitation/create or roots/list on the tool
# call's SSE response, and the client answers with a separate POST whose
# body is a JSON-RPC response.  That POST carries no method: the gateway
# must route it by session alone, to the replica the session is pinned to,
# or the tool call never completes.
#
# Paths: direct to one replica; stateful and auto gateways (two workers)
# in front of two replicas, round robin.  The control, a stateless
# gateway balancing every request over the same two replicas, must break
# the sessions - proof that the client's checks can fail.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node npm flock
require_mcpgw
watchdog 400

SDK1=${MCPGW_SDK1_VERSION:-1.32.2}
EVERY=${MCPGW_EVERYTHING_VERSION:-2026.8.31}
CACHE=$TOP_BUILDDIR/tests/interop/.cache
PREFIX=$CACHE/requests
. "$TOP_SRCDIR/tests/interop/node.sh"
interop_node
log "node: $NODE ($("$NODE" --version))"
interop_packages "$PREFIX" "@modelcontextprotocol/sdk@$SDK1" "@modelcontextprotocol/server-everything@$EVERY"
cp "$TOP_SRCDIR/tests/interop/requests_client.mjs" "$PREFIX/" || die "cannot copy the client"
EVERY_DIR=$PREFIX/node_modules/@modelcontextprotocol/server-everything

SESSIONS=4
ROUNDS=2
CALLS=$((SESSIONS * ROUNDS * 3))

# run NAME URL: the client (60 s at most); sets RC and SUM.
run() {
	(cd "$PREFIX" && exec timeout 60 "$NODE" requests_client.mjs \
		"$(jq -cn --arg u "$2" --argjson s $SESSIONS --argjson r $ROUNDS '{url: $u, sessions: $s, rounds: $r}')") \
		>"$T_DIR/$1.json" 2>"$T_DIR/$1.err"
	RC=$?
	SUM=$(tail -n 1 "$T_DIR/$1.json")
	log "$1: $(printf '%s' "$SUM" | jq -c '{ok, failed, served, responsesPosted, failures: .failures[0:3]}' 2>/dev/null | head -c 1500)"
}
sum_is() { # WHAT FILTER
	if printf '%s' "$SUM" | jq -e "$2" >/dev/null 2>&1; then
		ok "$1"
	else
		fail "$1: jq '$2' does not hold on: $(printf '%s' "$SUM" | head -c 1500)"
	fi
}
# all_answered LABEL: every call completed with the client's own answer.
all_answered() {
	assert_eq "$1: client exit status" 0 "$RC"
	sum_is "$1: all $CALLS tool calls completed with the client's answers" ".ok == $CALLS and .failed == 0"
	# server-everything may also ask for roots on its own once a session
	# is initialized (timing decides whether that lands before the client
	# closes), so roots are at least one per session; every request it
	# sent must have been answered and every answer accepted
	sum_is "$1: the client served sampling, elicitation and roots requests" \
		".served.sampling == $((SESSIONS * ROUNDS)) and .served.elicitation == $((SESSIONS * ROUNDS)) and .served.roots >= $SESSIONS"
	sum_is "$1: every JSON-RPC response POST was accepted (202)" \
		".responsesPosted == (.served.sampling + .served.elicitation + .served.roots) and (.responseStatuses | all(. == 202))"
	sum_is "$1: $SESSIONS distinct sessions" "(.sessionIds | unique | length) == $SESSIONS"
}

# gateway NAME MODE: a gateway (two workers, TCP probes) over both replicas.
gateway() {
	SF_WORKERS=2 SF_HEALTH='      type: tcp
      interval: 500ms
      timeout: 400ms
      rise: 1
      fall: 3' sf_config "$T_DIR/$1.yaml" "$2" "$E1" "$E2"
	start_serve -c "$T_DIR/$1.yaml"
}

declare -A RPID
interop_everything e1
E1=$E_ADDR
interop_everything e2
E2=$E_ADDR

run direct "http://$E1/mcp"
all_answered "direct"

for mode in stateful auto; do
	gateway "gw-$mode" "$mode"
	run "$mode" "$G_URL"
	all_answered "$mode gateway x2"
	assert_eq "$mode gateway x2: sessions created" $SESSIONS "$(gstat "$G_ADDR" '.sessions.created')"
	assert_eq "$mode gateway x2: sessions ended by DELETE" $SESSIONS "$(gstat "$G_ADDR" '.sessions.deleted')"
	assert_eq "$mode gateway x2: no re-pin" 0 "$(gstat "$G_ADDR" '.sessions.repins_total')"
	assert_eq "$mode gateway x2: sessions placed on both replicas" 2 \
		"$(gstat "$G_ADDR" '[.upstreams[].servers[] | select(.picked > 0)] | length')"
	sf_stop_serve
done

# the control: balancing every request breaks legacy sessions
gateway gw-stateless stateless
run stateless "$G_URL"
assert_cmp "stateless gateway x2 (control): the client fails" "$RC" '>' 0
sum_is "stateless gateway x2 (control): calls or sessions failed" '.failed > 0'
sf_stop_serve

finish
