#!/bin/bash
# serve_access_log.sh - the structured access log and the operator events
# of "mcpgw serve": log.access_format json and log.access_file, at
# --log-level warn, in auto mode in front of two "--era dual" replicas.
# - Every line of the file is one JSON object (jq -e) with the client's
#   address and port, the listener, the protocol, status, bytes in and out
#   (the bodies curl sent and received), method, MCP method and name
#   (bounded to 128 bytes), era, the session as a redacted prefix (the
#   full id appears nowhere), the trace id of traceparent; for a modern
#   tools/call, a legacy session's requests, a 405, a 404 with an unknown
#   session, and an h2c request.
# - logrotate: the file moved away and SIGUSR1: the next line is in a new
#   file under the name, none more in the moved one.
# - The session's replica killed: the access line of the next request
#   names the re-pin reason, and stderr (at --log-level warn) has the
#   event=session_repinned and event=upstream_down lines.
# - Without a format the access line stays the text line, on stderr or in
#   the file; check-config and serve refuse a bad format or an access file
#   that cannot be created, with the key named.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${TOP_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

require_tools curl jq
require_mcpgw
watchdog 90

declare -A ADDR PID
for r in d1 d2; do
	start_backend --era dual --id "$r"
	ADDR[$r]=$B_ADDR
	PID[$r]=$B_PID
done
mkdir -p "$T_DIR/logs"
ALOG=$T_DIR/logs/access.log
SF_EXTRA="log:
  access_format: json
  access_file: $ALOG" sf_config "$T_DIR/gw.yaml" auto "${ADDR[d1]}" "${ADDR[d2]}"

# --- check-config takes the keys and refuses bad values ---------------------------------------------
"$MCPGW" check-config -c "$T_DIR/gw.yaml" >"$T_DIR/cc.out" 2>&1
assert_eq "check-config: the access log keys are accepted" 0 "$?"
sed "s|access_format: json|access_format: xml|" "$T_DIR/gw.yaml" >"$T_DIR/bad1.yaml"
"$MCPGW" check-config -c "$T_DIR/bad1.yaml" >"$T_DIR/cc1.out" 2>&1
assert_eq "check-config: access_format xml refused (exit 2)" 2 "$?"
assert_match "... naming log.access_format" 'log\.access_format' "$(cat "$T_DIR/cc1.out")"
sed "s|access_file: .*|access_file: $T_DIR/no/such/dir/a.log|" "$T_DIR/gw.yaml" >"$T_DIR/bad2.yaml"
"$MCPGW" check-config -c "$T_DIR/bad2.yaml" >"$T_DIR/cc2.out" 2>&1
assert_eq "check-config: an access_file in a missing folder refused (exit 2)" 2 "$?"
assert_match "... naming log.access_file and the folder" 'log\.access_file.*no/such/dir' "$(cat "$T_DIR/cc2.out")"
"$MCPGW" serve -c "$T_DIR/bad2.yaml" >"$T_DIR/s2.out" 2>&1
assert_eq "serve: the same file refused (exit 2)" 2 "$?"
"$MCPGW" serve --listen 127.0.0.1:0 --upstream "http://${ADDR[d1]}" \
	--access-log-format yaml >"$T_DIR/s3.out" 2>&1
assert_eq "serve: --access-log-format yaml refused (exit 2)" 2 "$?"
assert_match "... saying what is allowed" 'text or json' "$(cat "$T_DIR/s3.out")"

start_serve -c "$T_DIR/gw.yaml" --log-level warn
GW=$G_URL
N_SENT=0
sent() { N_SENT=$((N_SENT + 1)); }
# line FILTER: the one line of the access log FILTER selects (empty if
# there is not exactly one)
line() { jq -c -s "map(select($1)) | if length == 1 then .[0] else empty end" "$ALOG" 2>/dev/null; }
# assert_line WHAT SELECT CHECK: the line SELECT picks passes CHECK
assert_line() {
	local l
	l=$(line "$2")
	if [ -z "$l" ]; then
		fail "$1: no single access line with $2 in: $(tail -n 3 "$ALOG")"
	elif printf '%s' "$l" | jq -e "$3" >/dev/null 2>&1; then
		ok "$1"
	else
		fail "$1: expected $3 on $l"
	fi
}

# --- a modern tools/call with traceparent ----------------------------------------------------------------
TRACE=4bf92f3577b34da6a3ce929d0e0e4736
BODY1=$(modern_body 11 tools/call '{"name":"echo","arguments":{"text":"access"}}')
modern "$GW" 11 tools/call '{"name":"echo","arguments":{"text":"access"}}' \
	-H "traceparent: 00-$TRACE-00f067aa0ba902b7-01"
sent
assert_code "modern tools/call" 200
OUT1=$(wc -c <"$BODYF")
assert_line "modern: client, listener, protocol, status, bytes, MCP method and name, era, trace id" \
	'.mcp_name == "echo" and .trace_id != null' \
	".client == \"127.0.0.1\" and (.client_port | type == \"number\" and . > 0)
	 and .listener == \"$G_ADDR\" and .proto == \"http/1.1\" and .tls == false
	 and .method == \"POST\" and .path == \"/mcp\" and .status == 200
	 and .bytes_in == ${#BODY1} and .bytes_out == $OUT1
	 and .mcp_method == \"tools/call\" and .era == \"modern\"
	 and .trace_id == \"$TRACE\" and .session == null and .repin == null
	 and (.upstream | test(\"^pool/127\\\\.0\\\\.0\\\\.1:\")) and .attempts == 1
	 and (.duration_ms | type == \"number\") and (.time | test(\"^20[0-9-]+T[0-9:.]+Z$\"))"

# a name of 300 bytes: logged cut to 128; a malformed traceparent: null
LONG=$(printf 'n%.0s' $(seq 1 300))
modern "$GW" 12 tools/call "{\"name\":\"$LONG\",\"arguments\":{}}" -H 'traceparent: 00-xyz-01'
sent
assert_line "modern: the MCP name is bounded (128 bytes), a bad traceparent gives no trace id" \
	'.mcp_name != null and (.mcp_name | startswith("nnnn"))' \
	'(.mcp_name | length) == 128 and .trace_id == null'

# --- a legacy session ------------------------------------------------------------------------------------
sf_init "$GW" || die "no legacy session"
sent
sent
lwho "$GW"
sent
assert_code "legacy: whoami in the session" 200
PIN=$WHO
RED="${SID:0:4}…(${#SID})"
assert_line "legacy: initialize (era legacy, the new session redacted)" \
	'.mcp_method == "initialize"' \
	".era == \"legacy\" and .status == 200 and .session == \"$RED\""
assert_line "legacy: a request in the session (session redacted, MCP name)" \
	'.mcp_method == "tools/call" and .era == "legacy"' \
	".session == \"$RED\" and .mcp_name == \"whoami\" and .status == 200 and .repin == null
	 and (.upstream | endswith(\"${ADDR[$PIN]}\"))"
if grep -qF -- "$SID" "$ALOG"; then
	fail "the full session id is in the access log"
else
	ok "the full session id appears nowhere in the access log"
fi

# --- 405, 404 ---------------------------------------------------------------------------------------------
req GET "$GW" -H 'Accept: text/event-stream'
sent
assert_code "GET without a session in auto mode" 405
assert_line "405: logged with its status and no MCP method" \
	'.status == 405' '.method == "GET" and .mcp_method == null and .bytes_in == 0'
SAVED=$SID
SID=0123456789abcdef0123456789abcdef
lwho "$GW"
sent
assert_code "an unknown session" 404
assert_line "404: an unknown session, redacted too" '.status == 404' \
	'.session == "0123…(32)" and .era == "legacy"'
grep -qF 0123456789abcdef "$ALOG" && fail "the unknown session id is in clear in the log" ||
	ok "the unknown session id is redacted"
SID=$SAVED

# --- h2c ---------------------------------------------------------------------------------------------------
who "$GW" --http2-prior-knowledge
sent
assert_code "an h2c request" 200
assert_eq "... over HTTP/2" 2 "$HTTPV"
assert_line "h2c: protocol h2 on an odd stream" '.proto == "h2"' \
	'.stream % 2 == 1 and .mcp_name == "whoami" and .status == 200 and .tls == false'

# --- every line is one JSON object, one per request ---------------------------------------------------------
BAD=0 N=0
while IFS= read -r l; do
	N=$((N + 1))
	printf '%s' "$l" | jq -e 'type == "object" and (.status | type == "number")' >/dev/null 2>&1 || BAD=$((BAD + 1))
done <"$ALOG"
assert_eq "every access line parses as a JSON object" 0 "$BAD"
assert_eq "one line per request" "$N_SENT" "$N"
assert_nomatch "stderr at --log-level warn has no access or info lines" ' info  ' "$(cat "$G_ERR")"

# --- logrotate: move, SIGUSR1, the next line in the new file ---------------------------------------------------
mv "$ALOG" "$ALOG.1"
kill -USR1 "$G_PID"
poll_until 10 test -e "$ALOG" && ok "SIGUSR1: the access log is created again under its name" ||
	fail "SIGUSR1: no new $ALOG"
who "$GW"
assert_code "a request after the rotation" 200
assert_eq "the new file has the new line" 1 "$(grep -c . "$ALOG")"
assert_eq "the moved file got nothing more" "$N_SENT" "$(grep -c . "$ALOG.1")"
assert_eq "the gateway is still running" 0 "$(kill -0 "$G_PID" 2>/dev/null; echo $?)"

# --- the session's replica killed: re-pin reason and events at warn ------------------------------------------------
[ "$PIN" = d1 ] && OTHER=d2 || OTHER=d1
kill_wait "${PID[$PIN]}" KILL 5 || fail "$PIN did not die"
lwho "$GW"
assert_code "legacy: the session survives its replica" 200
assert_eq "... re-pinned to $OTHER" "$OTHER" "$WHO"
assert_line "the access line names the re-pin reason" \
	'.repin != null' \
	"(.repin | test(\"^(dead|refused|ejected|lost_in_flight)\$\")) and .session == \"$RED\"
	 and (.upstream | endswith(\"${ADDR[$OTHER]}\")) and (.steps | test(\"repin\"))"
wait_match "$G_ERR" " warn  .*event=session_repinned from=pool/${ADDR[$PIN]} to=pool/${ADDR[$OTHER]} reason=" 5 &&
	ok "stderr at warn: event=session_repinned from the dead replica to the other" ||
	fail "no event=session_repinned line: $(tail -n 5 "$G_ERR")"
assert_match "... with the session redacted" "sess=${SID:0:4}…\\(${#SID}\\) event=session_repinned" "$(cat "$G_ERR")"
wait_match "$G_ERR" " warn  event=upstream_down server=pool/${ADDR[$PIN]} by=health " 10 &&
	ok "stderr at warn: event=upstream_down for the dead replica" ||
	fail "no event=upstream_down line: $(tail -n 5 "$G_ERR")"
grep -qF -- "$SID" "$G_ERR" && fail "the full session id is on stderr" ||
	ok "the full session id appears nowhere on stderr"
sf_stop_serve

# --- the text format stays the default: on stderr, or in the file ----------------------------------------------------
start_serve --upstream "http://${ADDR[$OTHER]}" --access-log
who "$G_URL"
wait_match "$G_ERR" " info  c[0-9]+ POST /mcp mcp=tools/call upstream=default/${ADDR[$OTHER]} status=200 [0-9]+ms" 5 &&
	ok "--access-log: the text line on stderr, as before" ||
	fail "no text access line on stderr: $(tail -n 3 "$G_ERR")"
stop_serve
TLOG=$T_DIR/logs/text.log
start_serve --upstream "http://${ADDR[$OTHER]}" --access-log-file "$TLOG" --log-level error
who "$G_URL"
poll_until 5 grep -q . "$TLOG" || true
assert_match "--access-log-file: the text line in the file whatever the level" \
	" info  c[0-9]+ POST /mcp mcp=tools/call upstream=default/${ADDR[$OTHER]} status=200 " "$(cat "$TLOG")"
assert_eq "... and not on stderr" "" "$(grep 'POST /mcp' "$G_ERR")"
stop_serve

finish
