#!/usr/bin/env bash
# bench/auth-cost.sh - what the auth check costs `mcpgw serve` (stateless,
# one worker): instructions per request counted by callgrind (robust on a
# shared machine) for no auth:, a static token, and a JWT signed with
# RS256, PS256, ES256 and EdDSA (keys from a JWKS file), the same token
# on every request (a client reuses its access token until it expires).
#
#   bench/auth-cost.sh [-n REQUESTS] [-v "VARIANT..."] [-o DIR]
#
# One `mcpgw backend --era modern` replica; h2load (HTTP/1.1, 8
# connections) sends modern tools/call echo requests with their SEP-2243
# headers and "Authorization: Bearer TOKEN".  callgrind: a warm-up of 200
# requests, counters zeroed, REQUESTS requests, graceful stop; what the
# gateway executed from the zeroing on, divided by REQUESTS.  Tokens come
# from the test issuer (tests/tools/mgw-test-issuer, built by `make
# check`).  Results go to DIR (default bench/results/auth-<UTC date>).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
N=2000 OUT="" ONLY=""
while getopts n:o:v: o; do
	case $o in
	n) N=$OPTARG ;; o) OUT=$OPTARG ;; v) ONLY=$OPTARG ;; *) exit 2 ;;
	esac
done
MCPGW=${MCPGW:-$top/_build/normal/mcpgw}
ISSUER=${ISSUER_TOOL:-$(dirname "$MCPGW")/tests/tools/mgw-test-issuer}
[ -x "$MCPGW" ] || { echo "build first (scripts/build.sh _build/normal) or set MCPGW" >&2; exit 2; }
[ -x "$ISSUER" ] || { echo "$ISSUER missing: make -C $(dirname "$MCPGW") check TESTS= builds it" >&2; exit 2; }
for t in valgrind callgrind_annotate callgrind_control h2load jq; do
	command -v "$t" >/dev/null || { echo "$t missing: run scripts/setup.sh" >&2; exit 2; }
done
OUT=${OUT:-$top/bench/results/auth-$(date -u +%Y%m%d)}
mkdir -p "$OUT"

. "$top/bench/lib.sh"

"$MCPGW" backend --listen 127.0.0.1:0 --era modern --id r1 --log-level warn \
	>"$work/r.out" 2>"$work/r.err" &
pids+=($!)
replica=$(first_line "$work/r.out")

AUD=https://mcp.bench/mcp
now=$(date +%s)
jq -cn --arg aud "$AUD" --argjson now "$now" \
	'{iss: "https://issuer.bench", aud: $aud, sub: "bench", client_id: "b", scope: "mcp", iat: $now, exp: ($now + 3600)}' \
	>"$work/claims.json"
for a in RS256 PS256 ES256 EdDSA; do
	"$ISSUER" keygen "$a" "k$a" "$work/$a.pem"
	"$ISSUER" sign "$work/$a.pem" "$a" "k$a" "$work/claims.json" >"$work/$a.tok"
done
"$ISSUER" jwks "$work/RS256.pem:kRS256:RS256" "$work/PS256.pem:kPS256:PS256" \
	"$work/ES256.pem:kES256:ES256" "$work/EdDSA.pem:kEdDSA:EdDSA" >"$work/jwks.json"
STATIC=bench-static-token-0123456789abcdef
printf '%s' "$STATIC" >"$work/static.tok"

VARIANTS=(off static RS256 PS256 ES256 EdDSA)
# -v: a subset (off is always measured: the ratios need it)
[ -z "$ONLY" ] || read -r -a VARIANTS <<<"off ${ONLY//off/}"
config() { # VARIANT
	{
		printf 'listeners:\n  - address: 127.0.0.1:0\nworkers: 1\nmode: stateless\n'
		printf 'log: {level: warn}\n'
		printf 'upstreams:\n  - name: r\n    servers: [{url: "http://%s"}]\n    health: {type: tcp}\n' "$replica"
		[ "$1" = off ] || printf 'auth:\n  issuer: https://issuer.bench\n  resource: %s\n  required_scopes: [mcp]\n  jwks_file: %s\n  static_tokens: [{name: s, digest: "%s", scopes: [mcp]}]\n' \
			"$AUD" "$work/jwks.json" "$("$ISSUER" digest "$STATIC")"
	} >"$work/$1.yaml"
}

printf '%s' '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' >"$work/body.json"
load() { # VARIANT
	local a=()
	[ "$1" = off ] || a=(-H "Authorization: Bearer $(cat "$work/$1.tok")")
	LOAD=(--h1 -c 8 -d "$work/body.json" -H 'Content-Type: application/json'
		-H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28'
		-H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo' "${a[@]}")
}

declare -A IR
for v in "${VARIANTS[@]}"; do
	config "$v"
	load "$v"
	valgrind --tool=callgrind --callgrind-out-file="$work/$v.cg" \
		"$MCPGW" serve -c "$work/$v.yaml" >"$work/$v.out" 2>"$work/$v.err" &
	gpid=$!
	pids+=($gpid)
	gw=$(first_line "$work/$v.out" 60)
	h2load -n 200 "${LOAD[@]}" "http://$gw/mcp" >"$work/$v.warm" 2>&1 || true
	callgrind_control -z "$gpid" >/dev/null
	h2load -n "$N" "${LOAD[@]}" "http://$gw/mcp" >"$OUT/callgrind-$v-h2load.txt" 2>&1 || true
	ok=$(sed -n 's/^status codes: \([0-9]*\) 2xx.*/\1/p' "$OUT/callgrind-$v-h2load.txt")
	[ "$ok" = "$N" ] || { echo "$v: $ok of $N requests answered 2xx" >&2; exit 1; }
	kill -TERM "$gpid"
	wait "$gpid" 2>/dev/null || true
	IR[$v]=$(callgrind_total "$work/$v.cg")
	[ -n "${IR[$v]}" ] || { echo "$v: no callgrind total" >&2; exit 1; }
	callgrind_annotate --inclusive=no --threshold=100 "$work/$v.cg" 2>/dev/null | head -n 80 >"$OUT/callgrind-$v-top.txt" || true
	echo "callgrind $v: ${IR[$v]} instructions" >&2
done

{
	echo "# Cost of the auth check (HTTP/1.1 from the client, one worker, $(date -u +%Y-%m-%dT%H:%MZ))"
	echo
	echo "$("$MCPGW" version | head -n 1), valgrind $(valgrind --version), $(openssl version)"
	echo
	echo "Command: \`bench/auth-cost.sh -n $N\`"
	echo
	echo "| token | instructions per request (callgrind) | vs no auth | auth's own |"
	echo "|---|---:|---:|---:|"
	for v in "${VARIANTS[@]}"; do
		awk -v v="$v" -v i="${IR[$v]}" -v i0="${IR[off]}" -v n="$N" 'BEGIN {
			printf "| %s | %.0f | %.3fx | %.0f |\n", v, i / n, i / i0, (i - i0) / n }'
	done
	echo
	echo "The same token on every request, as a client sends it until it expires."
} | tee "$OUT/README.md"
echo "(kept in $OUT)" >&2
