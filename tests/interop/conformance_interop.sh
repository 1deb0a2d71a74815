#!/bin/bash
# conformance_interop.sh - the official MCP conformance suite
# (@modelcontextprotocol/conformance, `conformance server`, its active
# server scenarios: a client nobody here wrote, checking initialize,
# ping, logging, tools, SSE streams, resources, subscriptions, prompts
# and DNS rebinding protection) gives the same verdict on every check
# whether it reaches a server directly or through "mcpgw serve".
#
# Servers: the official reference server
# @modelcontextprotocol/server-everything and "mcpgw backend --era legacy".
# Paths compared with the direct baseline, check by check:
#   - the stateful gateway and the auto gateway in front of one replica;
#   - the stateful gateway in front of two server-everything replicas,
#     round robin: every session must stay on the replica that opened it
#     (its SSE streams, subscriptions and follow-up requests included).
# The baseline itself must pass a fixed list of checks, so "the same
# verdicts" can never mean "everything failed both ways".  Verdicts are
# those of the pinned versions below; the checks the reference server
# fails (fixtures it does not have) fail the same way through the gateway.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node npm flock
require_mcpgw
watchdog 500

CONF_V=${MCPGW_CONFORMANCE_VERSION:-0.1.16}
EVERY=${MCPGW_EVERYTHING_VERSION:-2026.8.31}
CACHE=$TOP_BUILDDIR/tests/interop/.cache
PREFIX=$CACHE/conformance
mkdir -p "$PREFIX" || die "cannot create $PREFIX"
. "$TOP_SRCDIR/tests/interop/node.sh"
interop_node 22 # the conformance CLI needs Node 22
log "node: $NODE ($("$NODE" --version))"

interop_packages "$PREFIX" "@modelcontextprotocol/conformance@$CONF_V" "@modelcontextprotocol/server-everything@$EVERY"
CONF_JS=$PREFIX/node_modules/@modelcontextprotocol/conformance/dist/index.js
EVERY_DIR=$PREFIX/node_modules/@modelcontextprotocol/server-everything

# conform NAME URL: runs the active server scenarios against URL (120 s at
# most) and writes $T_DIR/NAME.verdicts, one "scenario/check STATUS" line
# per check, sorted.  The CLI exits 1 when any check fails, which the
# reference servers do; only a missing result is an error here.
conform() {
	local name=$1 url=$2 out=$T_DIR/conf-$1 d
	(cd "$T_DIR" && exec timeout 120 "$NODE" "$CONF_JS" server --url "$url" -o "$out") \
		>"$T_DIR/$name.conf.out" 2>&1
	: >"$T_DIR/$name.verdicts"
	for d in "$out"/server-*; do
		[ -f "$d/checks.json" ] || continue
		local sc=${d##*/server-}
		sc=${sc%-20[0-9][0-9]-*}
		jq -r --arg s "$sc" '.[] | "\($s)/\(.id) \(.status)"' "$d/checks.json" \
			>>"$T_DIR/$name.verdicts" 2>/dev/null
	done
	sort -o "$T_DIR/$name.verdicts" "$T_DIR/$name.verdicts"
	log "$name: $(grep -c ' SUCCESS$' "$T_DIR/$name.verdicts") checks passed, $(grep -vc ' SUCCESS$' "$T_DIR/$name.verdicts") did not"
}

# same_verdicts WHAT BASE NAME: NAME's verdicts equal BASE's, check by check.
same_verdicts() {
	local d
	d=$(diff "$T_DIR/$2.verdicts" "$T_DIR/$3.verdicts")
	if [ -z "$d" ] && [ -s "$T_DIR/$3.verdicts" ]; then
		ok "$1: every check has the direct verdict ($(wc -l <"$T_DIR/$3.verdicts") checks)"
	else
		fail "$1: verdicts differ from the direct run (< direct, > gateway): $(printf '%s' "$d" | head -c 2000)"
	fi
}

# must_pass WHAT NAME CHECK...: each scenario/check passed in NAME's run.
must_pass() {
	local what=$1 name=$2 c
	shift 2
	for c in "$@"; do
		if grep -qxF "$c SUCCESS" "$T_DIR/$name.verdicts"; then
			ok "$what: $c passes"
		else
			fail "$what: $c does not pass ($(grep -F "$c " "$T_DIR/$name.verdicts" | head -n 1))"
		fi
	done
}

declare -A RPID

# gateway NAME MODE ADDR...: a gateway over the replicas (TCP health
# probes, which every MCP server passes), the suite through it, then the
# gateway stopped.  Leaves the gateway's counters in $T_DIR/NAME.stats.
gateway() {
	local name=$1 mode=$2
	shift 2
	SF_WORKERS=2 SF_HEALTH='      type: tcp
      interval: 500ms
      timeout: 400ms
      rise: 1
      fall: 3' sf_config "$T_DIR/$name.yaml" "$mode" "$@"
	start_serve -c "$T_DIR/$name.yaml" --log-level warn
	conform "$name" "$G_URL"
	curl -sS --max-time 5 "http://$G_ADDR$GW_STATS_PATH" >"$T_DIR/$name.stats" 2>/dev/null
	sf_stop_serve
}

# --- server-everything ---------------------------------------------------------------------
interop_everything e1
E1=$E_ADDR
interop_everything e2
E2=$E_ADDR
conform every-direct "http://$E1/mcp"
# What the reference server passes directly with these versions; a check
# that stops passing here is a change of the suite or the server, and the
# comparisons below would lose their meaning without it.
must_pass "server-everything direct" every-direct \
	server-initialize/server-initialize ping/ping \
	logging-set-level/logging-set-level tools-list/tools-list \
	tools-call-simple-text/tools-call-simple-text tools-call-error/tools-call-error \
	resources-list/resources-list resources-subscribe/resources-subscribe \
	resources-unsubscribe/resources-unsubscribe prompts-list/prompts-list
assert_cmp "server-everything direct: SSE stream checks pass" \
	"$(grep -c '^server-sse-multiple-streams/.* SUCCESS$' "$T_DIR/every-direct.verdicts")" '>=' 2

gateway every-stateful stateful "$E1"
same_verdicts "server-everything via stateful gateway" every-direct every-stateful
gateway every-auto auto "$E1"
same_verdicts "server-everything via auto gateway" every-direct every-auto
gateway every-stateful-2 stateful "$E1" "$E2"
same_verdicts "server-everything x2 via stateful gateway" every-direct every-stateful-2
assert_eq "server-everything x2: the gateway placed sessions on both replicas" 2 \
	"$(jq '[.upstreams[].servers[] | select(.picked > 0)] | length' "$T_DIR/every-stateful-2.stats" 2>/dev/null)"
assert_eq "server-everything x2: no session was re-pinned" 0 \
	"$(jq -r '.sessions.repins_total' "$T_DIR/every-stateful-2.stats")"
assert_cmp "server-everything x2: the gateway terminated the suite's sessions" \
	"$(jq -r '.sessions.created' "$T_DIR/every-stateful-2.stats")" '>=' 20

# --- mcpgw backend ---------------------------------------------------------------------
start_backend --era legacy --id b1
conform backend-direct "$B_URL"
must_pass "mcpgw backend direct" backend-direct \
	server-initialize/server-initialize ping/ping tools-list/tools-list \
	dns-rebinding-protection/localhost-host-rebinding-rejected \
	dns-rebinding-protection/localhost-host-valid-accepted
gateway backend-stateful stateful "$B_ADDR"
same_verdicts "mcpgw backend via stateful gateway" backend-direct backend-stateful

finish
