#!/bin/bash
# stateful_sealed.sh - the sealed session store: the client's session id
# is an AES-256-GCM token, so two "mcpgw serve" processes holding the
# same key file serve each other's sessions with no shared store.
# Sessions created on gateway A are served by gateway B on the same
# replicas (no replay); A is SIGKILLed and the sessions go on through B;
# B re-pins one when its replica dies; a DELETE on B ends a session A
# created.  Tampered, truncated, expired (short max_lifetime), wrong-key
# and wrong-principal (bind_principal with another Authorization, or
# none) tokens answer 404; a gateway whose key file has a new key first
# and the old one after it (rotation) still opens old tokens.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq node openssl
require_mcpgw
watchdog 60

declare -A ADDR PID
for r in r1 r2 r3; do
	start_backend --era legacy --id "$r"
	ADDR[$r]=$B_ADDR
	PID[$r]=$B_PID
done
ALL=("${ADDR[r1]}" "${ADDR[r2]}" "${ADDR[r3]}")

K1=$(openssl rand -hex 32)
K2=$(openssl rand -hex 32)
printf '# gateway session keys\nk1 %s\n' "$K1" >"$T_DIR/k1.keys"
printf 'k1 %s\n' "$K2" >"$T_DIR/other.keys"
printf 'k2 %s\nk1 %s\n' "$K2" "$K1" >"$T_DIR/rotated.keys"

sealed_conf() { # FILE KEYFILE [extra sessions: lines]
	SF_SESSIONS="  store: sealed
  key_file: $2${3:+
$3}" sf_config "$1" stateful "${ALL[@]}"
}
sealed_conf "$T_DIR/a.yaml" "$T_DIR/k1.keys"
start_serve -c "$T_DIR/a.yaml"
GA=$G_URL
GAPID=$G_PID
start_serve -c "$T_DIR/a.yaml"
GB=$G_URL
GBADDR=$G_ADDR

# --- sessions created on A, served by B -------------------------------------------------------
declare -A PIN
SIDS=()
for k in 1 2 3; do
	sf_init "$GA" || continue
	SIDS+=("$SID")
	assert_match "session $k: the id is visible ASCII (base64url)" '^[A-Za-z0-9_-]+$' "$SID"
	lwho "$GA"
	PIN[$SID]=$WHO
	assert_match "session $k: served by A" '^r[123]$' "$WHO"
done
[ ${#SIDS[@]} = 3 ] || die "could not open three sessions on A"
I0=$(init_sum "${ALL[@]}")
assert_eq "three initializes so far" 3 "$I0"
FAILED=""
for SID in "${SIDS[@]}"; do
	lwho "$GB"
	[ "$CODE" = 200 ] && [ "$WHO" = "${PIN[$SID]}" ] || FAILED="$FAILED ${SID:0:6}:$CODE:$WHO/${PIN[$SID]}"
done
assert_eq "B serves A's sessions on their replicas" "" "$FAILED"
assert_eq "... with no replay" "$I0" "$(init_sum "${ALL[@]}")"

# --- A dies; the sessions go on through B --------------------------------------------------
kill_wait "$GAPID" KILL 5 || fail "gateway A did not die"
FAILED=""
for k in 1 2; do
	for SID in "${SIDS[@]}"; do
		lwho "$GB"
		[ "$CODE" = 200 ] && [ "$WHO" = "${PIN[$SID]}" ] || FAILED="$FAILED ${SID:0:6}:$CODE:$WHO"
	done
done
assert_eq "after A was killed every session goes on through B" "" "$FAILED"

# --- B re-pins a session whose replica dies ---------------------------------------------------
SID=${SIDS[0]}
DEAD=${PIN[$SID]}
SURV=()
for r in r1 r2 r3; do [ "$r" = "$DEAD" ] || SURV+=("${ADDR[$r]}"); done
I1=$(init_sum "${SURV[@]}")
kill_wait "${PID[$DEAD]}" KILL 5 || fail "$DEAD did not die"
lwho "$GB"
assert_code "B: the session of the killed replica $DEAD is re-pinned" 200
assert_ne "B: ... onto another replica" "$DEAD" "$WHO"
NEWPIN=$WHO
[ -z "$SID_BACK" ] || assert_eq "B: the client keeps its (sealed) id" "$SID" "$SID_BACK"
assert_eq "B: one replay" "$((I1 + 1))" "$(init_sum "${SURV[@]}")"
lwho "$GB"
assert_eq "B: the session stays on its new pin" "$NEWPIN" "$WHO"
start_backend --listen "${ADDR[$DEAD]}" --era legacy --id "$DEAD"
PID[$DEAD]=$B_PID

# --- DELETE on B of a session A created ----------------------------------------------------------
# a session on a replica that was not restarted (it still knows it)
if [ "${PIN[${SIDS[1]}]}" != "$DEAD" ]; then DELSID=${SIDS[1]} GOOD=${SIDS[2]}; else DELSID=${SIDS[2]} GOOD=${SIDS[1]}; fi
SID=$DELSID
HOME_ADDR=${ADDR[${PIN[$SID]}]}
D0=$(bstat "$HOME_ADDR" .sessions_deleted)
req DELETE "$GB" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED"
assert_code "DELETE on B of a session created on A" '2[0-9][0-9]'
deleted_upstream() { [ "$(bstat "$HOME_ADDR" .sessions_deleted)" -gt "${D0:-0}" ] 2>/dev/null; }
poll_until 5 deleted_upstream && ok "the DELETE ended the upstream session" ||
	fail "sessions_deleted of ${PIN[$SID]} stayed $D0"
lwho "$GB"
assert_code "B: the deleted session is 404 afterwards" 404
req DELETE "$GB" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED"
assert_code "B: a second DELETE" 404

# --- tokens that must not open -----------------------------------------------------------------------
# flip one character in the middle (another base64url character)
MID=$((${#GOOD} / 2))
C=${GOOD:$MID:1}
[ "$C" = A ] && NC=B || NC=A
SID=${GOOD:0:$MID}$NC${GOOD:$((MID + 1))}
lwho "$GB"
assert_code "a token with one character changed" 404
SID=${GOOD:0:$((${#GOOD} - 4))}
lwho "$GB"
assert_code "a truncated token" 404
SID=${GOOD}AAAA
lwho "$GB"
assert_code "a token with bytes appended" 404
SID=$GOOD
lwho "$GB"
assert_code "the genuine token still opens" 200

sealed_conf "$T_DIR/other.yaml" "$T_DIR/other.keys"
start_serve -c "$T_DIR/other.yaml"
lwho "$G_URL"
assert_code "a gateway with another key (same key id)" 404
req DELETE "$G_URL" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $NEGOTIATED"
assert_code "... cannot DELETE it either" 404
sealed_conf "$T_DIR/rotated.yaml" "$T_DIR/rotated.keys"
start_serve -c "$T_DIR/rotated.yaml"
GROT=$G_URL
lwho "$GROT"
assert_code "a gateway with a new key first and the old one after it opens the old token" 200
sf_init "$GROT" || fail "rotated gateway: no new session"
ROTSID=$SID
lwho "$GROT"
assert_code "rotated gateway: its own new session" 200
lwho "$GB"
assert_code "a token sealed with the new key does not open on a gateway that lacks it" 404

# --- expiry ------------------------------------------------------------------------------------------------
sealed_conf "$T_DIR/short.yaml" "$T_DIR/k1.keys" "  max_lifetime: 2s"
start_serve -c "$T_DIR/short.yaml"
GSHORT=$G_URL
sf_init "$GSHORT" || die "no session on the short-lived gateway"
lwho "$GSHORT"
assert_code "a 2 s session answers at first" 200
lwho "$GB"
assert_code "... on another gateway with the key too" 200
sleep 3
lwho "$GSHORT"
assert_code "the expired token on the gateway that sealed it" 404
lwho "$GB"
assert_code "the expired token on another gateway" 404

# --- bind_principal -------------------------------------------------------------------------------------------
sealed_conf "$T_DIR/bound.yaml" "$T_DIR/k1.keys" "  bind_principal: true"
start_serve -c "$T_DIR/bound.yaml"
GF=$G_URL
start_serve -c "$T_DIR/bound.yaml"
GG=$G_URL
AUTH_A=(-H 'Authorization: Bearer token-of-alice')
AUTH_B=(-H 'Authorization: Bearer token-of-bob')
sf_init "$GF" "${AUTH_A[@]}" || die "no bound session"
lwho "$GF" "${AUTH_A[@]}"
assert_code "bound: the creating principal, same gateway" 200
lwho "$GG" "${AUTH_A[@]}"
assert_code "bound: the creating principal, other gateway" 200
lwho "$GG" "${AUTH_B[@]}"
assert_code "bound: another principal, other gateway" 404
lwho "$GF" "${AUTH_B[@]}"
assert_code "bound: another principal, the gateway that has it cached" 404
lwho "$GG"
assert_code "bound: no Authorization at all" 404
lwho "$GB" "${AUTH_A[@]}"
assert_code "bound token on a gateway with bind_principal off" 404
lwho "$GG" "${AUTH_A[@]}"
assert_code "bound: the creating principal still works afterwards" 200

finish
