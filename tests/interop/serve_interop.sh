#!/bin/bash
# serve_interop.sh - the official TypeScript SDK 2.x through "mcpgw
# serve" (stateless): the client (@modelcontextprotocol/client) reaches
# two "mcpgw backend --era modern" replicas through the gateway, pinned to
# 2026-07-28 and auto-negotiating, with its requests spread over both;
# and the same client reaches two servers built on the SDK itself
# (@modelcontextprotocol/server, tests/interop/sdk_server.mjs); and the
# client through a route with a tool policy and filter_tools_list.  The
# packages live in their own npm prefix under the interop cache
# ($TOP_BUILDDIR/tests/interop/.cache/serve) so that this test and
# sdk_interop.sh never install into one directory at the same time.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node npm
require_mcpgw
watchdog 400

CLIENT_V=${MCPGW_SDK2_VERSION:-2.4.0}
SERVER_V=${MCPGW_SDK2_SERVER_VERSION:-2.4.0}
CACHE=$TOP_BUILDDIR/tests/interop/.cache
mkdir -p "$CACHE/serve" || die "cannot create $CACHE/serve"
. "$TOP_SRCDIR/tests/interop/node.sh"
interop_node
PREFIX=$CACHE/serve
log "node: $NODE ($("$NODE" --version))"

interop_packages "$PREFIX" "@modelcontextprotocol/client@$CLIENT_V" "@modelcontextprotocol/server@$SERVER_V"
# ESM resolves packages from the program's directory, so the programs run
# from the prefix.
cp "$TOP_SRCDIR/tests/interop/modern_client.mjs" "$TOP_SRCDIR/tests/interop/sdk_server.mjs" "$PREFIX/" ||
	die "cannot copy the programs"

client() { # NAME ARGS...: runs modern_client.mjs; sets RC and SUM
	local name=$1
	shift
	(cd "$PREFIX" && timeout 30 "$NODE" modern_client.mjs "$@") >"$T_DIR/$name.json" 2>"$T_DIR/$name.clienterr"
	RC=$?
	SUM=$(tail -n 1 "$T_DIR/$name.json")
	[ "$RC" = 0 ] || log "$name stderr: $(head -c 1500 "$T_DIR/$name.clienterr")"
}
sum_is() { # WHAT FILTER
	if printf '%s' "$SUM" | jq -e "$2" >/dev/null 2>&1; then
		ok "$1"
	else
		fail "$1: jq '$2' does not hold on: $(printf '%s' "$SUM" | head -c 1500)"
	fi
}

# --- client 2.x -> gateway -> two mcpgw backend replicas --------------------------------------
start_backend --era modern --id b1 --record 100
B1=$B_ADDR
start_backend --era modern --id b2 --record 100
B2=$B_ADDR
# One worker: each worker keeps its own round robin (starting at a random
# point), so with two workers the client's two or three requests may land
# on one replica; one worker alternates them exactly.
start_serve --upstream "http://$B1" --upstream "http://$B2" --workers 1
rec_clear "$B1"
rec_clear "$B2"
client pin_backends "$G_URL" pin "héllo through the gateway"
assert_eq "client 2.x pinned -> gateway -> backends: exit status" 0 "$RC"
sum_is "pinned: modern era at 2026-07-28" '.era == "modern" and .protocolVersion == "2026-07-28"'
sum_is "pinned: echo answered" '.echo == "héllo through the gateway" and .isError == false'
sum_is "pinned: tools listed" '.tools | index("echo") != null and index("whoami") != null'
sum_is "pinned: every exchange succeeded" '.wire | all(.status == 200 or .status == 202)'
sum_is "pinned: no session header anywhere" '.wire | all(.session == false)'
N1=$(rec_calls "$B1" | grep -c .)
N2=$(rec_calls "$B2" | grep -c .)
log "client requests recorded: b1 $N1, b2 $N2"
if [ "$N1" -ge 1 ] && [ "$N2" -ge 1 ]; then
	ok "pinned: the client's requests were spread over both replicas"
else
	fail "pinned: expected requests on both replicas, got b1 $N1, b2 $N2"
fi
client auto_backends "$G_URL" auto "auto through the gateway"
assert_eq "client 2.x auto -> gateway -> backends: exit status" 0 "$RC"
sum_is "auto: chose the modern era" '.era == "modern" and .echo == "auto through the gateway"'
sum_is "auto: no initialize on the wire" '.wire | all(.rpc != "initialize")'
stop_serve

# --- client 2.x -> gateway with a tool policy and filter_tools_list (issue 15) ------------------
# The rewritten tools/list answer (denied tools removed, re-serialized)
# must still be one the SDK accepts.
cat >"$T_DIR/policy.yaml" <<EOF
listeners:
  - address: 127.0.0.1:0
upstreams:
  - name: pool
    servers:
      - url: http://$B1
    health:
      type: tcp
routes:
  - upstream: pool
    deny_tools: [add, whoami]
    filter_tools_list: true
EOF
start_serve -c "$T_DIR/policy.yaml"
client pin_policy "$G_URL" pin "through a tool policy"
assert_eq "client 2.x -> gateway with a tool policy: exit status" 0 "$RC"
sum_is "policy: the filtered list is accepted and lacks the denied tools" \
	'(.tools | index("echo") != null and index("add") == null and index("whoami") == null)'
sum_is "policy: echo answered" '.echo == "through a tool policy" and .isError == false'
stop_serve

# --- client 2.x -> gateway -> two SDK 2.x servers --------------------------------------------------
start_sdk_server() { # ID: sets S_ADDR
	local out=$T_DIR/sdk-$1.out i=0 line=""
	(cd "$PREFIX" && exec "$NODE" sdk_server.mjs "$1") >"$out" 2>"$T_DIR/sdk-$1.err" &
	track_pid $!
	while [ $i -lt 100 ]; do
		line=$(head -n 1 "$out" 2>/dev/null)
		case $line in "listening on "*) break ;; esac
		sleep 0.1
		i=$((i + 1))
	done
	case $line in "listening on "*) ;; *) die "sdk_server $1 did not start: $(tail -n 5 "$T_DIR/sdk-$1.err")" ;; esac
	S_ADDR=${line#listening on }
	log "sdk server $1 on $S_ADDR"
}
start_sdk_server s1
S1=$S_ADDR
start_sdk_server s2
S2=$S_ADDR
start_serve --upstream "http://$S1" --upstream "http://$S2"
client pin_sdk "$G_URL" pin "héllo sdk server"
assert_eq "client 2.x pinned -> gateway -> SDK servers: exit status" 0 "$RC"
sum_is "SDK servers: modern era" '.era == "modern" and .protocolVersion == "2026-07-28"'
sum_is "SDK servers: echo answered" '.echo == "héllo sdk server" and .isError == false'
sum_is "SDK servers: the SDK server's tools listed" '.tools | index("whoami") != null'
client auto_sdk "$G_URL" auto "auto sdk server"
assert_eq "client 2.x auto -> gateway -> SDK servers: exit status" 0 "$RC"
sum_is "SDK servers, auto: modern era" '.era == "modern" and .echo == "auto sdk server"'
# plain modern requests through the gateway reach both SDK servers
SEEN=""
for i in 1 2 3 4; do
	who "$G_URL"
	[ "$CODE" = 200 ] || fail "whoami through the gateway to the SDK servers: HTTP $CODE $(head -c 300 "$BODYF")"
	SEEN="$SEEN $WHO"
done
assert_eq "SDK servers: both answered through the gateway" "s1 s2" "$(printf '%s\n' $SEEN | sort -u | tr '\n' ' ' | sed 's/ $//')"

finish
