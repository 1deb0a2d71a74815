#!/bin/bash
# sdk_interop.sh - the official TypeScript SDK clients from the npm
# registry talk to "mcpgw backend": @modelcontextprotocol/sdk 1.x
# (legacy era) and @modelcontextprotocol/client 2.x (modern era,
# 2026-07-28, pinned and auto-negotiated), each listing tools and calling
# echo.  The packages are installed once into a cache inside the build
# tree ($TOP_BUILDDIR/tests/interop/.cache) and reused.  The client
# programs record what they put on the wire, so the test checks the
# protocol really spoken, not only the API results.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node npm
require_mcpgw
watchdog 400

SDK1=${MCPGW_SDK1_VERSION:-1.32.2}
SDK2=${MCPGW_SDK2_VERSION:-2.4.0}
CACHE=$TOP_BUILDDIR/tests/interop/.cache
mkdir -p "$CACHE" || die "cannot create $CACHE"
. "$TOP_SRCDIR/tests/interop/node.sh"
interop_node
log "node: $NODE ($("$NODE" --version))"

interop_packages "$CACHE" "@modelcontextprotocol/sdk@$SDK1" "@modelcontextprotocol/client@$SDK2"

# The client programs resolve the packages from the cache's node_modules,
# so they run from there (ESM ignores NODE_PATH).
cp "$TOP_SRCDIR/tests/interop/legacy_client.mjs" "$TOP_SRCDIR/tests/interop/modern_client.mjs" "$CACHE/" ||
	die "cannot copy the client programs"

# client NAME PROGRAM ARGS...: runs a client (30 s at most); sets RC and
# SUM (its JSON summary line).
client() {
	local name=$1 prog=$2
	shift 2
	(cd "$CACHE" && timeout 30 "$NODE" "$prog" "$@") >"$T_DIR/$name.json" 2>"$T_DIR/$name.err"
	RC=$?
	SUM=$(tail -n 1 "$T_DIR/$name.json")
	[ "$RC" = 0 ] || log "$name stderr: $(head -c 1500 "$T_DIR/$name.err")"
}

# sum_is WHAT FILTER: FILTER holds on the last client's summary.
sum_is() {
	if printf '%s' "$SUM" | jq -e "$2" >/dev/null 2>&1; then
		ok "$1"
	else
		fail "$1: jq '$2' does not hold on: $(printf '%s' "$SUM" | head -c 1500)"
	fi
}

# --- sdk 1.x against --era legacy ---------------------------------------------------------
start_backend --era legacy --id interop-legacy
client legacy1 legacy_client.mjs "$B_URL" "héllo legacy"
assert_eq "sdk 1.x vs legacy: exit status" 0 "$RC"
sum_is "sdk 1.x vs legacy: echo answered" '.echo == "héllo legacy" and .isError == false'
sum_is "sdk 1.x vs legacy: tools listed" '.tools | index("echo") != null and index("counter_increment") != null'
sum_is "sdk 1.x vs legacy: a session was used" '(.sessionId | type) == "string" and (.sessionId | length) >= 32'
sum_is "sdk 1.x vs legacy: a 2025 version negotiated" '.protocolVersion | test("^2025-")'
sum_is "sdk 1.x vs legacy: session ended with DELETE" '[.wire[] | select(.http == "DELETE")] | length == 1 and (.[0].status < 300)'
sum_is "sdk 1.x vs legacy: notifications/initialized got 202" '.wire | any(.rpc == "notifications/initialized" and .status == 202)'

# --- sdk 2.x against --era modern (pinned 2026-07-28) ------------------------------------------
start_backend --era modern --id interop-modern
MODERN_URL=$B_URL
client modern1 modern_client.mjs "$MODERN_URL" pin "héllo modern"
assert_eq "sdk 2.x pinned vs modern: exit status" 0 "$RC"
sum_is "sdk 2.x pinned vs modern: modern era" '.era == "modern" and .protocolVersion == "2026-07-28"'
sum_is "sdk 2.x pinned vs modern: echo answered" '.echo == "héllo modern" and .isError == false'
sum_is "sdk 2.x pinned vs modern: tools listed" '.tools | index("echo") != null'
sum_is "sdk 2.x pinned vs modern: no initialize on the wire" '.wire | all(.rpc != "initialize")'
sum_is "sdk 2.x pinned vs modern: no session header sent" '.wire | all(.session == false)'
sum_is "sdk 2.x pinned vs modern: server/discover probed" '.wire | any(.rpc == "server/discover" and .status == 200)'
sum_is "sdk 2.x pinned vs modern: every request mirrored its headers" \
	'[.wire[] | select(.rpc != null and (.rpc | startswith("notifications/") | not))] | all(.protocolVersion == "2026-07-28" and .mcpMethod == .rpc and .metaVersion == "2026-07-28")'
sum_is "sdk 2.x pinned vs modern: tools/call sent Mcp-Name" '.wire | any(.rpc == "tools/call" and .mcpName == "echo" and .status == 200)'

client modern2 modern_client.mjs "$MODERN_URL" auto "auto modern"
assert_eq "sdk 2.x auto vs modern: exit status" 0 "$RC"
sum_is "sdk 2.x auto vs modern: chose the modern era" '.era == "modern" and .echo == "auto modern"'

# A legacy client against a modern-only server fails (spec compatibility
# matrix): the server must not pretend to be legacy.
client legacy_vs_modern legacy_client.mjs "$MODERN_URL" x
assert_ne "sdk 1.x vs modern-only: refused" 0 "$RC"

# --- dual: both clients on one endpoint ----------------------------------------------------------
start_backend --era dual --id interop-dual
client dual_modern modern_client.mjs "$B_URL" auto "dual modern"
assert_eq "sdk 2.x auto vs dual: exit status" 0 "$RC"
sum_is "sdk 2.x auto vs dual: modern era" '.era == "modern" and .echo == "dual modern"'
client dual_pin modern_client.mjs "$B_URL" pin "dual pinned"
assert_eq "sdk 2.x pinned vs dual: exit status" 0 "$RC"
sum_is "sdk 2.x pinned vs dual: echo" '.echo == "dual pinned"'
client dual_legacy legacy_client.mjs "$B_URL" "dual legacy"
assert_eq "sdk 1.x vs dual: exit status" 0 "$RC"
sum_is "sdk 1.x vs dual: legacy session and echo" '.echo == "dual legacy" and (.sessionId | type) == "string"'

# --- sdk 2.x auto falls back to initialize against --era legacy ------------------------------------
start_backend --era legacy --id interop-legacy2
client auto_legacy modern_client.mjs "$B_URL" auto "auto legacy"
assert_eq "sdk 2.x auto vs legacy: exit status" 0 "$RC"
sum_is "sdk 2.x auto vs legacy: fell back to the legacy era" '.era == "legacy" and .echo == "auto legacy"'
sum_is "sdk 2.x auto vs legacy: initialize on the wire" '.wire | any(.rpc == "initialize" and .status == 200)'

finish
