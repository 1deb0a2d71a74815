# mrtr_lib.sh - helpers of the MRTR tests (sourced after lib.sh): one
# tools/call of the backend's book tool, the answer to each of its input
# requests, and a whole dialogue whose calls go round a list of URLs.
ID=0
# book URL ARGS_JSON [REQUEST_STATE [INPUT_RESPONSES_JSON]] [-- curl options]:
# one tools/call of book.  Sets RT (resultType, or "error"), RSTATE (the
# new requestState), KEY (the input request's key), ECODE, EREASON,
# BOOKING, SBYTES (requestStateBytes of the final result), ISERR.
book() {
	local url=$1 args=$2 rs=${3:-} resp=${4:-'{}'} params body
	shift 2
	[ $# -gt 0 ] && shift
	[ $# -gt 0 ] && shift
	[ "${1:-}" = -- ] && shift
	ID=$((ID + 1))
	params=$(jq -cn --argjson a "$args" --arg rs "$rs" --argjson r "$resp" '
		{name: "book", arguments: $a} +
		(if $rs == "" then {} else {requestState: $rs, inputResponses: $r} end)')
	body=$(jq -cn --argjson id "$ID" --argjson p "$params" --arg v "$MODERN_VERSION" '
		{jsonrpc: "2.0", id: $id, method: "tools/call",
		 params: ($p + {_meta: {
			"io.modelcontextprotocol/protocolVersion": $v,
			"io.modelcontextprotocol/clientCapabilities": {elicitation: {}},
			"io.modelcontextprotocol/clientInfo": {name: "itest", version: "1"}}})}')
	post "$url" "$body" -H "MCP-Protocol-Version: $MODERN_VERSION" \
		-H "Mcp-Method: tools/call" -H "Mcp-Name: book" "$@"
	RT=$(jq_get 'if has("error") then "error" else .result.resultType end')
	RSTATE=$(jq_get '.result.requestState // empty')
	KEY=$(jq_get '.result.inputRequests // {} | keys[0] // empty')
	ECODE=$(jq_get '.error.code // empty')
	EREASON=$(jq_get '.error.data.reason // empty')
	BOOKING=$(jq_get '.result.structuredContent.bookingId // empty')
	SBYTES=$(jq_get '.result.structuredContent.requestStateBytes // empty')
	ISERR=$(jq_get '.result.isError // false')
}

# answer KEY: the inputResponses that answer input request KEY.
answer() {
	case $1 in
	date) echo '{"date":{"action":"accept","content":{"date":"2026-08-01"}}}' ;;
	confirm) echo '{"confirm":{"action":"accept","content":{"confirm":true}}}' ;;
	*) jq -cn --arg k "$1" '{($k): {action: "accept", content: {note: "window seat"}}}' ;;
	esac
}

# dialogue N URL...: a whole dialogue of N rounds, call i going to URL
# number i mod count.  Sets CALLS, KEYS_SEEN, SIZES (requestState lengths)
# and leaves the last answer's variables set.
dialogue() {
	local n=$1 i=0 rs="" key="" resp urls
	shift
	urls=("$@")
	CALLS=0 KEYS_SEEN="" SIZES=""
	book "${urls[0]}" "{\"rounds\":$n}"
	CALLS=1
	while [ "$RT" = input_required ] && [ $CALLS -le 12 ]; do
		KEYS_SEEN="$KEYS_SEEN $KEY"
		SIZES="$SIZES ${#RSTATE}"
		rs=$RSTATE key=$KEY
		resp=$(answer "$key")
		i=$((CALLS % ${#urls[@]}))
		book "${urls[$i]}" "{\"rounds\":$n}" "$rs" "$resp"
		CALLS=$((CALLS + 1))
	done
}
