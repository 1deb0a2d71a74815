#!/usr/bin/env bash
# bench/proxy-cost.sh - the cost of one proxied request, side by side in
# one run: HAProxy (nbthread W, http-reuse always), nginx (proxy_pass to
# a keepalive upstream, W workers) and mcpgw serve (stateless, W
# workers, SEP-2243 validation on: its default); W is 1 unless -w.
#
#   bench/proxy-cost.sh [-n REQUESTS] [-c CONNECTIONS] [-k ROUNDS] [-w WORKERS]
#                       [-s STRACE_REQUESTS] [-g CALLGRIND_REQUESTS] [-o OUTDIR] [-F|-N]
#                       [-Q PERCENT]
#
# -F: HAProxy and nginx add the forwarding headers mcpgw adds by default
# (Forwarded: for=...;proto=...;host="..." and X-Forwarded-For), so that
# all three send the upstream the same request; without it HAProxy and
# nginx forward the client's headers only (their defaults).  -N: the
# other way to the same request, mcpgw adds none either (forwarded:
# {add: false}).
# -Q PERCENT: each proxy under test may use PERCENT % of one CPU (its
# own CPU cgroup, CFS bandwidth control in 10 ms periods; root and the
# cpu controller needed), the client and the canned upstream are not
# limited.  Without it, on a 2-core machine the proxy is not what
# saturates: h2load and the canned upstream together cost about as much
# per request as the proxy, and a proxy faster than that pair waits for
# it (`perf sched timehist` shows the proxy's CPU idle between its
# bursts), so req/s measures the pair and the scheduler more than the
# proxy.  With a budget below what the pair leaves, the proxy is the
# bottleneck and req/s is its throughput at saturation on that budget;
# the README gives the share of periods in which each proxy used up its
# budget (throttled), which near 100 % shows it was saturated.
# -w WORKERS: threads (HAProxy nbthread), worker processes (nginx) and
# workers (mcpgw) of each proxy under test, for the scaling table: run it
# with -w 1 and -w 2 and compare req/s at saturation (the canned upstream
# keeps one thread; CPU and system calls are summed over every thread or
# worker process).
#
# The upstream is canned: a second HAProxy (nbthread 1) answering every
# request with `http-request return` (a fixed 200 JSON-RPC result, no
# body parsing, keep-alive), so that the upstream costs the same small
# amount for all three and is not what saturates; `mcpgw backend` would
# parse and build JSON for every call and be the bottleneck.
#
# Per proxy and client protocol (h1: HTTP/1.1 keep-alive; h2c: prior
# knowledge; tls: HTTP/2 over TLS with ALPN — each proxy talks HTTP/1.1
# keep-alive to the upstream), C connections, h2load -n N:
#   req/s      at saturation (h2load's "finished in" figure)
#   CPU us/req the proxy's own CPU time (/proc/PID/task/*/schedstat, ns,
#              all threads; nginx: its worker) over the run / requests
#   p50, p99   from h2load --log-file (2xx only)
#   sys/req    system calls per request of the proxy, from `strace -c`
#              attached to every thread on a separate pass of S requests
#              (strace slows the proxy; the count, not the time, is kept)
#   instructions/req  user-space instructions per request, counted by
#              callgrind on a fresh instance of the proxy (same
#              configuration, new ports) over G requests (-g, default
#              2000; 0 skips it) after a warm-up: unlike the CPU time,
#              other load on the machine does not move it (the kernel's
#              share is not in it: see sys/req)
# Three rounds (K) go round the proxies in turn after a warm-up, each cell
# is the median, and the ratio to HAProxy is given for CPU and req/s.
# Everything shares the machine's cores: read the ratios.  Output: a
# README.md table and the raw runs under OUTDIR (default
# bench/results/proxy-cost-<UTC date>/).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
N=40000 C=32 K=3 S=4000 G=2000 W=1 OUT= FWD= Q=
while getopts n:c:k:s:g:w:o:FNQ: o; do
	case $o in
	n) N=$OPTARG ;; c) C=$OPTARG ;; k) K=$OPTARG ;; s) S=$OPTARG ;; g) G=$OPTARG ;;
	w) W=$OPTARG ;; F) FWD=1 ;; N) FWD=none ;; Q) Q=$OPTARG ;;
	o) OUT=$OPTARG ;; *) exit 2 ;;
	esac
done
. "$top/bench/lib.sh"
bench_init proxy-cost h2load haproxy nginx strace openssl curl node valgrind callgrind_control callgrind_annotate

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	-keyout "$work/key.pem" -out "$work/cert.pem" -days 2 -subj /CN=localhost \
	-addext "subjectAltName=DNS:localhost,IP:127.0.0.1" >/dev/null 2>&1
cat "$work/cert.pem" "$work/key.pem" >"$work/both.pem"

# --- the canned upstream ------------------------------------------------------------
up=$(free_port)
canned_upstream_cfg "$up" "$work/upstream.cfg"
haproxy -db -f "$work/upstream.cfg" >"$work/upstream.out" 2>&1 &
pids+=($!)
wait_port "$up" || { echo "canned upstream did not listen" >&2; exit 1; }

# --- HAProxy under test ---------------------------------------------------------------
# haproxy_cfg PORT PORT_H2C PORT_TLS FILE
haproxy_cfg() {
	{
		haproxy_prologue "$W"
		cat <<EOF
frontend fe
    bind 127.0.0.1:$1
    bind 127.0.0.1:$2 proto h2
    bind 127.0.0.1:$3 ssl crt $work/both.pem alpn h2,http/1.1
    default_backend up
backend up
    server u 127.0.0.1:$up
EOF
		[ "$FWD" != 1 ] || cat <<'EOF'
    option forwardfor
    http-request set-header Forwarded "for=%[src];proto=%[ssl_fc,iif(https,http)];host=\"%[req.hdr(host)]\""
EOF
	} >"$4"
}
hp=$(free_port) hp2=$(free_port) hps=$(free_port)
haproxy_cfg "$hp" "$hp2" "$hps" "$work/haproxy.cfg"
haproxy -db -f "$work/haproxy.cfg" >"$work/haproxy.out" 2>&1 &
hpid=$!
pids+=($hpid)
wait_port "$hp" || { echo "haproxy did not listen" >&2; exit 1; }

# --- nginx under test -------------------------------------------------------------------
# nginx_cfg PORT PORT_H2C PORT_TLS DIR: DIR/nginx.conf (its files in DIR)
nginx_cfg() {
	mkdir -p "$4"
	cat >"$4/nginx.conf" <<EOF
worker_processes $W;
daemon off;
error_log $4/error.log warn;
pid $4/nginx.pid;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $4/body;
    proxy_temp_path $4/proxy;
    fastcgi_temp_path $4/fcgi;
    uwsgi_temp_path $4/uwsgi;
    scgi_temp_path $4/scgi;
    keepalive_requests 1000000;
    upstream up { server 127.0.0.1:$up; keepalive 64; keepalive_requests 1000000; }
    server {
        listen 127.0.0.1:$1;
        listen 127.0.0.1:$2 http2;
        listen 127.0.0.1:$3 ssl http2;
        ssl_certificate $work/cert.pem;
        ssl_certificate_key $work/key.pem;
        http2_max_requests 1000000;
        location / {
            proxy_pass http://up;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
$([ "$FWD" != 1 ] || printf '%s\n' \
	'            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;' \
	'            proxy_set_header Forwarded "for=$remote_addr;proto=$scheme;host=\"$http_host\"";')
        }
    }
}
EOF
}
ng=$(free_port) ng2=$(free_port) ngs=$(free_port)
nginx_cfg "$ng" "$ng2" "$ngs" "$work/nginx"
nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" >"$work/nginx.out" 2>&1 &
pids+=($!)
wait_port "$ng" || { echo "nginx did not listen: $(cat "$work/nginx/error.log")" >&2; exit 1; }
for _ in $(seq 50); do # its workers, once all W are up
	ngpid=$(pgrep -P "$(cat "$work/nginx/nginx.pid")" | tr '\n' ' ')
	[ "$(wc -w <<<"$ngpid")" -ge "$W" ] && break
	sleep 0.1
done

# --- mcpgw serve under test ---------------------------------------------------------------
cat >"$work/serve.yaml" <<EOF
mode: stateless
workers: $W
log:
  level: warn
listeners:
  - address: 127.0.0.1:0
  - address: 127.0.0.1:0
    tls:
      cert: $work/cert.pem
      key: $work/key.pem
upstreams:
  - name: up
    servers:
      - url: http://127.0.0.1:$up
    health:
      type: tcp
      interval: 10s
EOF
[ "$FWD" != none ] || printf 'forwarded:\n  add: false\n' >>"$work/serve.yaml"
"$MCPGW" serve -c "$work/serve.yaml" >"$work/serve.out" 2>"$work/serve.err" &
mpid=$!
pids+=($mpid)
gw=$(first_line "$work/serve.out")
gws=$(sed -n 2p "$work/serve.out" | sed 's/^listening on //; s/[[:space:]].*//')

# --- the request --------------------------------------------------------------------------
printf '%s' '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' >"$work/body.json"
HDRS=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream'
	-H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo')

url() { # PROXY PROTO
	case $1-$2 in
	haproxy-h1) echo "http://127.0.0.1:$hp/mcp" ;;
	haproxy-h2c) echo "http://127.0.0.1:$hp2/mcp" ;;
	haproxy-tls) echo "https://127.0.0.1:$hps/mcp" ;;
	nginx-h1) echo "http://127.0.0.1:$ng/mcp" ;;
	nginx-h2c) echo "http://127.0.0.1:$ng2/mcp" ;;
	nginx-tls) echo "https://127.0.0.1:$ngs/mcp" ;;
	mcpgw-h1 | mcpgw-h2c) echo "http://$gw/mcp" ;;
	mcpgw-tls) echo "https://$gws/mcp" ;;
	esac
}
pid_of() { case $1 in haproxy) echo "$hpid" ;; nginx) echo "$ngpid" ;; mcpgw) echo "$mpid" ;; esac; }
PROXIES=${PROXIES:-haproxy nginx mcpgw}
PROTOS=${PROTOS:-h1 h2c tls}

for p in $PROXIES; do
	for pr in $PROTOS; do
		o=$(curl -sSk --max-time 5 "${HDRS[@]}" --data-binary "@$work/body.json" \
			$([ "$pr" = h2c ] && echo --http2-prior-knowledge) "$(url "$p" "$pr")") || true
		case $o in *'"text":"hello"'*) ;; *) echo "sanity check failed: $p $pr: $o" >&2; exit 1 ;; esac
	done
done

# -Q: each proxy under test in its own CPU cgroup (qdir[PROXY])
declare -A qdir=()
if [ -n "$Q" ]; then
	case $Q in *[!0-9]* | 0 | 0*) echo "-Q PERCENT: a whole number above 0" >&2; exit 2 ;; esac
	for p in $PROXIES; do
		qdir[$p]=$(cpu_quota "mcpgw-bench-$$-$p" "$Q" $(pid_of "$p")) || exit 2
		qgroups+=("${qdir[$p]}")
	done
fi

# throttled PROXY: "periods throttled" of PROXY's CPU cgroup ("0 0" without -Q)
throttled() { if [ -n "$Q" ]; then cpu_throttled "${qdir[$1]}"; else echo 0 0; fi; }

# one PROXY PROTO [N]: one h2load run; prints "rps ok p50_ms p99_ms
# cpu_us_per_req throttled_%" (the share of the proxy's CPU periods in
# which -Q's budget ran out; - without -Q)
one() {
	local p=$1 pr=$2 n=${3:-$N} args c0 c1 q0 q1
	args=(-n "$n" -c "$C" -d "$work/body.json" "${HDRS[@]}" --log-file "$work/h2load.log")
	[ "$pr" = h1 ] && args+=(--h1)
	: >"$work/h2load.log"
	c0=$(cpu_ns $(pid_of "$p")) q0=$(throttled "$p")
	h2load "${args[@]}" "$(url "$p" "$pr")" >"$work/h2load.out" 2>&1 || true
	c1=$(cpu_ns $(pid_of "$p")) q1=$(throttled "$p")
	local rps ok pct
	rps=$(awk '/^finished in/ { gsub(",", "", $4); print $4 }' "$work/h2load.out")
	ok=$(awk '/^status codes:/ { print $3 }' "$work/h2load.out")
	pct=$(awk -F'\t' '$2 >= 200 && $2 < 300 { print $3 }' "$work/h2load.log" | sort -n |
		awk '{ v[NR] = $1 } END {
			if (NR == 0) { print "- -"; exit }
			i50 = int(NR * 0.50); if (i50 < 1) i50 = 1
			i99 = int(NR * 0.99 + 0.999999); if (i99 > NR) i99 = NR
			printf "%.2f %.2f\n", v[i50] / 1000, v[i99] / 1000 }')
	echo "${rps:-0} ${ok:-0} $pct $(awk -v a="$c0" -v b="$c1" -v n="$n" 'BEGIN { printf "%.1f", (b - a) / 1000 / n }')" \
		"$(awk -v a="$q0" -v b="$q1" 'BEGIN { split(a, x, " "); split(b, y, " ")
			if (y[1] > x[1]) printf "%.0f", 100 * (y[2] - x[2]) / (y[1] - x[1]); else print "-" }')"
}

# h2load_all N ARGS...: h2load -n N ARGS; fails unless all N got a status
h2load_all() {
	local n=$1
	shift
	h2load -n "$n" "$@" >"$work/h2load-all.out" 2>&1 || true
	[ "$(awk '/^status codes:/ { print $3 }' "$work/h2load-all.out")" = "$n" ]
}

# syscalls PROXY PROTO: system calls per request under strace -c (every
# thread), over S requests; prints "calls_per_req top_calls"
syscalls() {
	local p=$1 pr=$2 args
	args=(-c "$C" -d "$work/body.json" "${HDRS[@]}")
	[ "$pr" = h1 ] && args+=(--h1)
	strace_per_req "$(pid_of "$p")" "$S" "$OUT/strace-$p-$pr.txt" \
		h2load_all "$S" "${args[@]}" "$(url "$p" "$pr")"
}

# instr PROXY PROTO: user-space instructions per request of a fresh
# instance of PROXY under callgrind (the same configuration on new ports),
# over G requests after a warm-up of 200 and a counter reset: a figure
# that other load on the machine does not move.  Prints the number.
instr() {
	local p=$1 pr=$2 f=$work/cg-$1-$2.out pid u a b c args
	a=$(free_port) b=$(free_port) c=$(free_port)
	case $p in
	haproxy)
		haproxy_cfg "$a" "$b" "$c" "$work/haproxy-cg.cfg"
		valgrind --tool=callgrind --callgrind-out-file="$f" \
			haproxy -db -f "$work/haproxy-cg.cfg" >"$work/cg-$p.log" 2>&1 &
		pid=$!
		wait_port "$a" 60 || return 1
		case $pr in h1) u=http://127.0.0.1:$a/mcp ;; h2c) u=http://127.0.0.1:$b/mcp ;;
		tls) u=https://127.0.0.1:$c/mcp ;; esac ;;
	nginx)
		nginx_cfg "$a" "$b" "$c" "$work/nginx-cg"
		sed -i '1i master_process off;' "$work/nginx-cg/nginx.conf"
		valgrind --tool=callgrind --callgrind-out-file="$f" \
			nginx -c "$work/nginx-cg/nginx.conf" -p "$work/nginx-cg" >"$work/cg-$p.log" 2>&1 &
		pid=$!
		wait_port "$a" 60 || return 1
		case $pr in h1) u=http://127.0.0.1:$a/mcp ;; h2c) u=http://127.0.0.1:$b/mcp ;;
		tls) u=https://127.0.0.1:$c/mcp ;; esac ;;
	mcpgw)
		valgrind --tool=callgrind --callgrind-out-file="$f" \
			"$MCPGW" serve -c "$work/serve.yaml" >"$work/cg-$p.out" 2>"$work/cg-$p.err" &
		pid=$!
		a=$(first_line "$work/cg-$p.out" 60) || return 1
		c=$(sed -n 2p "$work/cg-$p.out" | sed 's/^listening on //; s/[[:space:]].*//')
		case $pr in h1 | h2c) u=http://$a/mcp ;; tls) u=https://$c/mcp ;; esac ;;
	esac
	pids+=("$pid")
	args=(-c 8 -d "$work/body.json" "${HDRS[@]}")
	[ "$pr" = h1 ] && args+=(--h1)
	h2load -n 200 "${args[@]}" "$u" >/dev/null 2>&1 || true
	callgrind_per_req "$pid" "$f" "$G" h2load_all "$G" "${args[@]}" "$u"
}

median() { median_col "$@"; }

for pr in $PROTOS; do
	for p in $PROXIES; do
		one "$p" "$pr" $((N / 10 > 200 ? N / 10 : 200)) >/dev/null # warm-up
		: >"$OUT/runs-$p-$pr"
	done
	for k in $(seq 1 "$K"); do
		for p in $PROXIES; do one "$p" "$pr" >>"$OUT/runs-$p-$pr"; done
	done
	for p in $PROXIES; do syscalls "$p" "$pr" >"$OUT/sys-$p-$pr"; done
	for p in $PROXIES; do
		if [ "$G" -gt 0 ]; then instr "$p" "$pr" >"$OUT/instr-$p-$pr" || echo - >"$OUT/instr-$p-$pr"; fi
	done
done

{
	echo "# proxy cost per request — $(date -u +%F), $(nproc) cores, loopback"
	echo
	echo "$(haproxy -v | head -n 1 | awk '{print $1, $3}') nbthread $W http-reuse always;"
	echo "$(nginx -v 2>&1 | sed 's/.*: //') $W worker(s), proxy_pass to an upstream with keepalive 64;"
	echo "mcpgw $("$MCPGW" version | head -n 1 | awk '{print $2}') serve, mode stateless, $W worker(s), SEP-2243 validation on."
	[ "$FWD" != none ] || echo "-N: mcpgw adds no Forwarded or X-Forwarded-For (forwarded: {add: false}), as HAProxy and nginx by default."
	[ -z "$Q" ] || echo "-Q $Q: each proxy under test may use $Q % of one CPU (CFS bandwidth, 10 ms periods); h2load and the upstream are not limited. Periods in which the budget ran out (median): $(for p in $PROXIES; do for pr in $PROTOS; do printf '%s %s %s %%\n' "$pr" "$p" "$(median "$OUT/runs-$p-$pr" 6)"; done; done | paste -sd';' | sed 's/;/; /g')."
	[ "$FWD" != 1 ] || echo "-F: HAProxy (option forwardfor, set-header Forwarded) and nginx (proxy_set_header) add the Forwarded and X-Forwarded-For that mcpgw adds."
	echo "Upstream: a canned HAProxy (\`http-request return\`, HTTP/1.1 keep-alive) for all."
	echo "$(h2load --version | head -n 1 | awk '{print $1, $2}') -n $N -c $C (h1: --h1); a modern tools/call with its SEP-2243 headers."
	echo "Median of $K rounds after a warm-up; CPU from /proc/PID/task/*/schedstat;"
	echo "system calls from strace -c on a separate pass of $S requests;"
	echo "user-space instructions per request from callgrind on a fresh instance, $G requests"
	echo "(8 connections) after a warm-up: a count other load does not move."
	echo "Load average before the run: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo
	echo "| client → upstream | proxy | req/s | CPU µs/req | syscalls/req | instructions/req (user) | p50 ms | p99 ms | req/s vs HAProxy | CPU vs HAProxy | instructions vs HAProxy |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for pr in $PROTOS; do
		hr=0 hc=0 hi=0
		if [ -s "$OUT/runs-haproxy-$pr" ]; then
			hr=$(median "$OUT/runs-haproxy-$pr" 1) hc=$(median "$OUT/runs-haproxy-$pr" 5)
			hi=$(cat "$OUT/instr-haproxy-$pr" 2>/dev/null || echo 0)
		fi
		for p in $PROXIES; do
			f=$OUT/runs-$p-$pr
			r=$(median "$f" 1) c=$(median "$f" 5) i=$(cat "$OUT/instr-$p-$pr" 2>/dev/null || echo -)
			printf '| %s → h1 | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$pr" "$p" \
				"$(printf '%.0f' "$r")" "$c" "$(awk '{print $1}' "$OUT/sys-$p-$pr")" "$i" \
				"$(median "$f" 3)" "$(median "$f" 4)" \
				"$(ratio "$r" "$hr")" "$(ratio "$c" "$hc")" "$(ratio "$i" "$hi")"
		done
	done
	echo
	echo "Paired round by round (round k of each proxy ran right after HAProxy's"
	echo "round k, so a slow spell of the machine hits both): the median of the"
	echo "per-round ratios, how many rounds were on the proxy's side of 1.0, and"
	echo "the one-sided sign test's p (the chance of at least that many under a"
	echo "true ratio of 1.0):"
	echo
	for pr in $PROTOS; do
		[ -s "$OUT/runs-haproxy-$pr" ] || continue
		for p in $PROXIES; do
			[ "$p" = haproxy ] && continue
			echo "- $pr $p: CPU $(paired "$OUT/runs-$p-$pr" "$OUT/runs-haproxy-$pr" 5 lt)," \
				"req/s $(paired "$OUT/runs-$p-$pr" "$OUT/runs-haproxy-$pr" 1 gt)"
		done
	done
	echo
	echo "System calls per request, the five most frequent (strace -c):"
	echo
	for pr in $PROTOS; do
		for p in $PROXIES; do
			echo "- $pr $p: $(cut -d' ' -f2- "$OUT/sys-$p-$pr")"
		done
	done
	echo
	echo "Rerun: \`MCPGW=_build/normal/mcpgw PROXIES='$PROXIES' PROTOS='$PROTOS' bench/proxy-cost.sh -n $N -c $C -k $K -s $S -g $G -w $W$([ "$FWD" = 1 ] && echo ' -F')$([ "$FWD" = none ] && echo ' -N')$([ -n "$Q" ] && echo " -Q $Q")\`"
} | tee "$OUT/README.md"
echo "written: $OUT/README.md" >&2
