#!/bin/bash
# serve_tools_auto.sh - which tools are safe to replay is remembered for
# tools_ttl after the last tools/list; with "tools_probe: auto" (the
# default) the gateway refreshes it itself once clients' traffic taught
# it, so a client that lists its tools once keeps its calls replayable:
#   - auto, before any tools/list: the gateway asks the replicas nothing;
#   - a client's tools/list through the gateway teaches the group; at
#     half of tools_ttl (here 4 s) the gateway asks for tools/list itself
#     (the replicas see the probe's clientInfo), and past tools_ttl the
#     group still knows the tools;
#   - "tools_probe: false": the same set is forgotten after tools_ttl;
#   - tools_ttl and tools_probe values are checked by check-config.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq
require_mcpgw
watchdog 120

start_backend --era modern --id r1
R1=$B_ADDR
start_backend --era modern --id r2
R2=$B_ADDR

# cfg FILE PROBE: a stateless gateway over r1 and r2, tools_ttl 4s
cfg() {
	{
		printf 'listeners:\n  - address: 127.0.0.1:0\nworkers: 2\n'
		printf 'upstreams:\n  - name: pool\n    servers:\n'
		printf '      - url: http://%s\n      - url: http://%s\n' "$R1" "$R2"
		printf '    health: {type: tcp, interval: 300ms}\n    tools_ttl: 4s\n'
		[ -n "$2" ] && printf '    tools_probe: %s\n' "$2"
		printf 'routes:\n  - upstream: pool\n'
	} >"$1"
}
safe() { gstat "$G_ADDR" '.upstreams[0].replays.safe_tools'; }
lists() { gstat "$G_ADDR" '.upstreams[0].replays.tools_lists_learned'; }
all_lists() {
	echo $(($(bstat "$R1" '.requests_by_method["tools/list"] // 0') +
		$(bstat "$R2" '.requests_by_method["tools/list"] // 0')))
}

# --- auto (the default) ----------------------------------------------------------------------------
cfg "$T_DIR/auto.yaml" ""
start_serve -c "$T_DIR/auto.yaml"
sleep 2
assert_eq "auto: before any tools/list the replicas were asked nothing" 0 "$(all_lists)"
modern "$G_URL" 1 tools/list '{}'
assert_code "a client's tools/list" 200
N0=$(safe)
[ "${N0:-0}" -gt 0 ] 2>/dev/null && ok "the group learned replay-safe tools from it ($N0)" ||
	fail "nothing learned from the client's tools/list: '$N0'"
assert_eq "one list learned" 1 "$(lists)"
# the probe is due at half of tools_ttl (2 s): wait for it, bounded
i=0
while [ "$(lists)" -lt 2 ] 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ "$(lists)" -ge 2 ] 2>/dev/null && ok "auto: the gateway asked for tools/list itself" ||
	fail "auto: no probe within 10 s of the client's tools/list (lists learned: $(lists))"
P=$(all_lists)
[ "$P" -ge 2 ] && ok "... the replicas saw the client's tools/list and the probe's ($P)" ||
	fail "the replicas saw $P tools/list, not the client's and the probe's"
sleep 3 # past tools_ttl since the client's tools/list
assert_eq "auto: past tools_ttl the group still knows the tools" "$N0" "$(safe)"
kill_wait "$G_PID" TERM 10

# --- false: forgotten after tools_ttl ---------------------------------------------------------------
L0=$(all_lists)
cfg "$T_DIR/off.yaml" false
start_serve -c "$T_DIR/off.yaml"
modern "$G_URL" 2 tools/list '{}'
assert_code "a client's tools/list (tools_probe: false)" 200
assert_eq "false: learned from the client's list" "$N0" "$(safe)"
sleep 5
assert_eq "false: forgotten past tools_ttl" 0 "$(safe)"
assert_eq "false: the replicas saw the client's tools/list only" $((L0 + 1)) "$(all_lists)"
kill_wait "$G_PID" TERM 10

# --- configuration ----------------------------------------------------------------------------------
cfg "$T_DIR/bad1.yaml" maybe
"$MCPGW" check-config -c "$T_DIR/bad1.yaml" >"$T_DIR/bad1.out" 2>&1
assert_ne "tools_probe: maybe is refused" 0 "$?"
assert_match "... naming the choices" 'auto' "$(cat "$T_DIR/bad1.out")"
sed 's/tools_ttl: 4s/tools_ttl: 1s/' "$T_DIR/auto.yaml" >"$T_DIR/bad2.yaml"
"$MCPGW" check-config -c "$T_DIR/bad2.yaml" >"$T_DIR/bad2.out" 2>&1
assert_ne "tools_ttl: 1s is refused (at least 2s)" 0 "$?"
cfg "$T_DIR/yes.yaml" true
"$MCPGW" check-config -c "$T_DIR/yes.yaml" >/dev/null 2>&1
assert_eq "tools_probe: true is accepted" 0 "$?"
finish
