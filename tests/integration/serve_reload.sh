#!/usr/bin/env bash
# serve_reload.sh - configuration reload on SIGHUP, with real processes:
# `mcpgw serve -c FILE` (2 workers) in front of `mcpgw backend` replicas.
#   1. Under `mcpgw load` (modern whoami, 4 users): the file gets a server
#      added (r3), one removed (r1) and a second listener; SIGHUP.  The
#      load sees 0 failed calls; the new listener serves; r1 gets no call
#      after the reload, r3 does; the unchanged server r2 kept its state.
#   2. A broken file (an unknown key) is refused with its file:line:col
#      and the running configuration stays (same servers, still serving).
#   3. A change that needs a restart (mode) is refused, naming it.
#   4. The second listener removed: it stops accepting; the first serves.
#   5. Stateful mode, memory store: a legacy session created before a
#      reload (which adds a replica) goes on after it, with its id.
. "$(dirname "$0")/lib.sh"
require_tools curl jq
watchdog 150

for i in 1 2 3; do
	start_backend --era modern --id "r$i"
	eval "R$i=\$B_ADDR"
done

write_conf() { # FILE MODE EXTRA_LISTENER SERVERS...
	local f=$1 mode=$2 extra=$3 s
	shift 3
	{
		echo "listeners:"
		echo "  - address: 127.0.0.1:0"
		[ -n "$extra" ] && echo "  - address: $extra"
		echo "mode: $mode"
		echo "workers: 2"
		echo "upstreams:"
		echo "  - name: pool"
		echo "    health:"
		echo "      interval: 500ms"
		echo "    servers:"
		for s in "$@"; do echo "      - url: http://$s"; done
	} >"$f.tmp"
	mv "$f.tmp" "$f"
}
CONF=$T_DIR/gw.yaml
write_conf "$CONF" stateless "" "$R1" "$R2"
start_serve -c "$CONF"
GW=$G_URL

reloads() { grep -c "$1" "$G_ERR" 2>/dev/null; }
# hup PATTERN: SIGHUP, then wait (bounded) for one more log line matching
# PATTERN ("reload: done" or "reload refused").
hup() {
	local before
	local i=0
	before=$(reloads "$1")
	kill -HUP "$G_PID"
	while [ "$(reloads "$1")" -le "$before" ]; do
		[ $i -lt 100 ] || die "no '$1' line after SIGHUP: $(tail -n 5 "$G_ERR")"
		sleep 0.1
		i=$((i + 1))
	done
}
servers() { # ADDR: the URLs of the gateway's servers, sorted, one line
	curl -sS --max-time 5 "http://$1/mcpgw/stats" |
		jq -r '[.upstreams[].servers[].url] | sort | join(" ")'
}

# ---- 1. servers and a listener changed under load ---------------------------
P2=$(free_port)
start_load reload --target "$GW" --dialect modern --tool whoami \
	--concurrency 4 --duration 5s --timeout 5s
rbusy() { [ "$(curl -sS --max-time 2 "http://$R1/stats" | jq -r .tool_calls 2>/dev/null)" -gt 0 ] 2>/dev/null; }
poll_until 10 rbusy || fail "the load never reached r1"
sleep 1
write_conf "$CONF" stateless "127.0.0.1:$P2" "$R2" "$R3"
hup "reload: done"
grep -q "reload: done, generation 2: .*3\? *servers (1 kept their health state).*listeners +1 -0" "$G_ERR" ||
	fail "reload line: $(grep 'reload: done' "$G_ERR")"
grep -q "^listening on 127.0.0.1:$P2\$" "$G_OUT" || fail "no 'listening on' line for the new listener: $(cat "$G_OUT")"
assert_eq "servers after the reload" "$(printf 'http://%s\n' "$R2" "$R3" | sort | tr '\n' ' ' | sed 's/ $//')" \
	"$(servers "127.0.0.1:$P2")"
wait_load
assert_load_exit "load across the reload" 0
assert_cmp "calls made across the reload" "$(lj .total.requests)" ">" 0
assert_eq "no call failed across the reload" "$(lj .total.requests)" "$(lj .total.ok)"
assert_eq "no failure of any kind" 0 "$(lj '[.total.failures[]] | add')"
SEEN=""
for i in $(seq 1 8); do
	who "$GW"
	[ "$CODE" = 200 ] || fail "call $i after the reload: $CODE"
	SEEN="$SEEN $WHO"
done
assert_nomatch "r1 (removed) serves no call after the reload" "r1" "$SEEN"
assert_match "r3 (added) serves calls" "r3" "$SEEN"
who "http://127.0.0.1:$P2/mcp"
assert_eq "a call on the new listener" 200 "$CODE"

# ---- 2. a broken file is refused, the running configuration stays ----------------
cp "$CONF" "$T_DIR/good.yaml"
printf 'bogus_key: 1\n' >>"$CONF"
LINE=$(wc -l <"$CONF")
hup "reload refused"
grep -q "reload refused, the running configuration stays: .*gw.yaml:$LINE:1: bogus_key" "$G_ERR" ||
	fail "refusal line: $(grep 'reload refused' "$G_ERR" | tail -n 1)"
assert_eq "servers after the refused reload" "$(printf 'http://%s\n' "$R2" "$R3" | sort | tr '\n' ' ' | sed 's/ $//')" \
	"$(servers "$G_ADDR")"
who "$GW"
assert_eq "still serving after the refused reload" 200 "$CODE"

# ---- 3. a change that needs a restart is refused -------------------------------
write_conf "$CONF" stateful "127.0.0.1:$P2" "$R2" "$R3"
hup "reload refused"
grep "reload refused" "$G_ERR" | tail -n 1 | grep -q "mode: stateless -> stateful needs a restart" ||
	fail "mode change: $(grep 'reload refused' "$G_ERR" | tail -n 1)"

# ---- 4. a listener removed ------------------------------------------------------
write_conf "$CONF" stateless "" "$R2" "$R3"
hup "reload: done"
grep "reload: done" "$G_ERR" | tail -n 1 | grep -q "listeners +0 -1" || fail "removal line: $(grep 'reload: done' "$G_ERR" | tail -n 1)"
refused() { ! curl -sS --max-time 2 -o /dev/null "http://127.0.0.1:$P2/mcpgw/healthz" 2>/dev/null; }
poll_until 10 refused || fail "the removed listener still accepts"
who "$GW"
assert_eq "the first listener serves after the removal" 200 "$CODE"
# the reloads in the metrics: 2 done, 2 refused; the page still lints
curl -sS --max-time 5 "http://$G_ADDR/metrics" >"$T_DIR/metrics.txt"
assert_eq "reloads done (metrics)" 2 "$(awk '$1 == "mcpgw_reloads_total{result=\"success\"}" {print $2}' "$T_DIR/metrics.txt")"
assert_eq "reloads refused (metrics)" 2 "$(awk '$1 == "mcpgw_reloads_total{result=\"failure\"}" {print $2}' "$T_DIR/metrics.txt")"
if command -v promtool >/dev/null 2>&1; then
	promtool check metrics <"$T_DIR/metrics.txt" >"$T_DIR/promtool.out" 2>&1 ||
		fail "promtool on the page after reloads: $(head -n 5 "$T_DIR/promtool.out")"
fi
stop_serve

# ---- 5. stateful, memory store: a session survives a reload ---------------------
start_backend --era legacy --id l1
L1=$B_ADDR
start_backend --era legacy --id l2
L2=$B_ADDR
write_conf "$CONF" stateful "" "$L1"
start_serve -c "$CONF"
legacy_init "$G_URL"
[ -n "$SID" ] || die "no session through the gateway: $CODE $BODY"
legacy "$G_URL" 2 tools/call '{"name":"echo","arguments":{"text":"before"}}'
assert_eq "a call in the session before the reload" 200 "$CODE"
write_conf "$CONF" stateful "" "$L1" "$L2"
hup "reload: done"
legacy "$G_URL" 3 tools/call '{"name":"echo","arguments":{"text":"after"}}'
assert_eq "the same session after the reload" 200 "$CODE"
assert_eq "its answer" after "$(tool_text)"
curl -sS --max-time 5 "http://$G_ADDR/mcpgw/stats" >"$T_DIR/stats.json"
jq -e '.sessions.active == 1 and .sessions.created == 1 and .sessions.initializes == 1' \
	"$T_DIR/stats.json" >/dev/null ||
	fail "one session, created once, across the reload: $(jq -c .sessions "$T_DIR/stats.json")"
stop_serve
finish
