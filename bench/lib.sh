# bench/lib.sh - what the bench scripts share (sourced, after `set -euo
# pipefail`): a scratch directory `$work` and the PIDs in `pids` stopped
# at exit, waiting (bounded) for a server's "listening on" line or for a
# port, and a free loopback port chosen by the kernel.
work=$(mktemp -d)
pids=()
qgroups=()
bench_cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	for p in "${qgroups[@]}"; do rmdir "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap bench_cleanup EXIT

# first_line FILE [SECS]: waits (SECS, default 10) for the first line
# "listening on HOST:PORT" of FILE; prints HOST:PORT
first_line() {
	local l n=$((${2:-10} * 20))
	for _ in $(seq "$n"); do
		l=$(head -n 1 "$1" 2>/dev/null || true)
		case $l in "listening on "*) echo "${l#listening on }"; return 0 ;; esac
		sleep 0.05
	done
	echo "no 'listening on' line in $1: $(tail -n 3 "${1%.out}.err" 2>/dev/null)" >&2
	return 1
}

# wait_port PORT [SECS]: until 127.0.0.1:PORT accepts (SECS, default 10)
wait_port() {
	local n=$((${2:-10} * 20))
	for _ in $(seq "$n"); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# free_port: a port on 127.0.0.1 the kernel just handed out (bound to 0,
# then closed), for peers that cannot report the port they bound
free_port() {
	timeout 10 node -e '
const s = require("net").createServer();
s.listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => console.log(p)); });'
}

# cpu_quota NAME PERCENT PID...: moves the PIDs (every thread) into a new
# CPU cgroup NAME that may use PERCENT % of one CPU (CFS bandwidth
# control, 10 ms periods: cgroup v2 cpu.max, or v1 cpu.cfs_quota_us);
# prints the group's directory, removed at exit.  Needs root and the
# cpu controller; fails with a message otherwise.
cpu_quota() {
	local name=$1 d quota=$(($2 * 100)) p
	shift 2
	if grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
		grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control ||
			echo +cpu >/sys/fs/cgroup/cgroup.subtree_control || return 1
		d=/sys/fs/cgroup/$name
		mkdir "$d" && echo "$quota 10000" >"$d/cpu.max" || return 1
	elif [ -w /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
		d=/sys/fs/cgroup/cpu/$name
		mkdir "$d" && echo 10000 >"$d/cpu.cfs_period_us" &&
			echo "$quota" >"$d/cpu.cfs_quota_us" || return 1
	else
		echo "no writable cpu cgroup controller (cgroup v2 cpu.max or v1 cpu.cfs_quota_us): -Q needs one, as root" >&2
		return 1
	fi
	for p; do echo "$p" >"$d/cgroup.procs" || return 1; done
	echo "$d"
}

# cpu_throttled DIR: "periods throttled" so far of the cpu cgroup DIR
cpu_throttled() {
	awk '$1 == "nr_periods" { p = $2 } $1 == "nr_throttled" { t = $2 }
		END { print p + 0, t + 0 }' "$1/cpu.stat"
}

# callgrind_total FILE: the instructions a callgrind output file counted
# (its PROGRAM TOTALS line, without separators); empty when none
callgrind_total() {
	callgrind_annotate "$1" 2>/dev/null |
		sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,
}

# cpu_ns PID...: CPU time of every thread of the PIDs so far, in ns
cpu_ns() {
	local p
	for p; do cat /proc/"$p"/task/*/schedstat 2>/dev/null; done |
		awk '{ s += $1 } END { printf "%.0f\n", s }'
}

# strace_per_req "PID..." N FILE CMD...: runs CMD (which makes N
# requests) with `strace -c` attached to every thread of the PIDs (one
# word, space-separated; summary in FILE);
# prints "calls_per_req top5" (the five most frequent calls per request).
# strace slows PID: keep the count, not the time.  N may be @FILE: the
# number of requests CMD got through, which CMD writes into FILE (an
# open loop sheds some of its calls while strace slows the server).
strace_per_req() {
	local pid n=$2 f=$3 t tids=() sp tot top
	for pid in $1; do
		for t in /proc/"$pid"/task/*; do tids+=(-p "${t##*/}"); done
	done
	shift 3
	strace -c -f -o "$f" "${tids[@]}" 2>/dev/null &
	sp=$!
	sleep 0.5
	"$@" >/dev/null 2>&1 || true
	kill -INT "$sp" 2>/dev/null || true
	wait "$sp" 2>/dev/null || true
	case $n in @*) n=$(cat "${n#@}") ;; esac
	tot=$(awk '$NF == "total" { print $4 }' "$f")
	top=$(awk '$1 ~ /^[0-9.]+$/ && $NF != "total" { print $4, $NF }' "$f" |
		sort -rn | head -n 5 | awk -v n="$n" '{ printf "%s%s %.1f", (NR > 1 ? ", " : ""), $2, $1 / n }')
	awk -v t="${tot:-0}" -v n="$n" -v top="$top" 'BEGIN { printf "%.1f %s\n", t / n, top }'
}

# callgrind_per_req PID FILE N CMD...: PID runs under callgrind writing
# FILE; zeroes its counters, runs CMD (which makes N requests), stops
# PID (SIGTERM, so that FILE is written) and prints the user-space
# instructions per request: a figure other load on the machine does
# not move.  CMD must fail when not all N requests succeeded.
callgrind_per_req() {
	local pid=$1 f=$2 n=$3 rc=0
	shift 3
	callgrind_control -z "$pid" >/dev/null 2>&1
	"$@" >/dev/null 2>&1 || rc=1
	kill -TERM "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null || true
	[ "$rc" = 0 ] || return 1
	awk -v t="$(callgrind_total "$f")" -v n="$n" 'BEGIN { printf "%.0f\n", t / n }'
}

# median_col FILE COLUMN: the median of column COLUMN (1-based)
median_col() {
	awk -v c="$2" '{ print $c }' "$1" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# paired FILE HAPROXY_FILE COL lt|gt: the median of FILE's column COL over
# HAPROXY_FILE's, row by row (round k with round k); the rounds whose
# ratio is below 1.0 (lt: CPU, less is better) or above it (gt: req/s);
# and the one-sided sign test's p of that count.  Prints
# "0.97× (6 of 7 rounds below 1.0, sign test p 0.06)".
paired() {
	paste -d' ' "$1" "$2" | awk -v c="$3" -v way="$4" '
		{ w = NF / 2; a = $c; b = $(c + w); if (b > 0) r[++n] = a / b }
		END {
			if (n == 0) { print "-"; exit }
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
				if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
			m = n % 2 ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2
			k = 0
			for (i = 1; i <= n; i++) k += way == "lt" ? r[i] < 1 : r[i] > 1
			# P(X >= k), X ~ Binomial(n, 1/2)
			p = 0; cnk = 1
			for (i = 0; i <= n; i++) {
				if (i >= k) p += cnk
				cnk = cnk * (n - i) / (i + 1)
			}
			p /= 2 ^ n
			printf "%.2f× (%d of %d rounds %s 1.0, sign test p %.3f)\n", m, k, n,
				way == "lt" ? "below" : "above", p }'
}

# ratio A B: A / B as "1.23×", "-" when either is missing or B is 0
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f×", a / b; else printf "-" }'
}

# bench_init NAME TOOL...: MCPGW (default _build/normal/mcpgw) must be
# executable and every TOOL on PATH, else exit 2; OUT, unless set,
# becomes bench/results/NAME-<UTC date and time>; OUT is created
bench_init() {
	local name=$1 t
	shift
	MCPGW=${MCPGW:-$top/_build/normal/mcpgw}
	[ -x "$MCPGW" ] || { echo "build first (scripts/build.sh _build/normal) or set MCPGW" >&2; exit 2; }
	for t; do
		command -v "$t" >/dev/null || { echo "$t missing: run scripts/setup.sh" >&2; exit 2; }
	done
	OUT=${OUT:-$top/bench/results/$name-$(date -u +%Y%m%d-%H%M%S)}
	mkdir -p "$OUT"
}

# canned_upstream_cfg PORT FILE: an HAProxy (nbthread 1) on 127.0.0.1:PORT
# that answers every request itself (`http-request return`: a fixed 200
# JSON-RPC result, keep-alive), the upstream of the proxy-cost scripts
canned_upstream_cfg() {
	local result='{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hello"}]}}'
	cat >"$2" <<EOF
global
    nbthread 1
    maxconn 4096
defaults
    mode http
    timeout client 30s
    timeout http-keep-alive 30s
frontend canned
    bind 127.0.0.1:$1
    http-request return status 200 content-type application/json string '$result'
EOF
}

# haproxy_prologue NBTHREAD: the global and defaults sections of an
# HAProxy under test (keep-alive both sides, http-reuse always)
haproxy_prologue() {
	cat <<EOF
global
    nbthread $1
    maxconn 4096
defaults
    mode http
    timeout connect 2s
    timeout client 30s
    timeout server 30s
    timeout http-keep-alive 30s
    option http-keep-alive
    http-reuse always
EOF
}

# serve_cfg MODE HOST:PORT FILE: a one-worker `mcpgw serve` of MODE, one
# listener on a port of its choosing, one upstream server (TCP checks)
serve_cfg() {
	cat >"$3" <<EOF
mode: $1
workers: 1
log:
  level: warn
listeners:
  - address: 127.0.0.1:0
upstreams:
  - name: be
    servers:
      - url: http://$2
    health:
      type: tcp
      interval: 10s
EOF
}

# start_serve CONFIG NAME [CALLGRIND_OUT]: starts `mcpgw serve -c CONFIG`
# (under callgrind when CALLGRIND_OUT is given), its output in
# $work/NAME.out and .err; sets srv_pid and srv_addr (HOST:PORT)
start_serve() {
	local cg=()
	[ -z "${3:-}" ] || cg=(valgrind --tool=callgrind --callgrind-out-file="$3")
	"${cg[@]}" "$MCPGW" serve -c "$1" >"$work/$2.out" 2>"$work/$2.err" &
	srv_pid=$!
	pids+=("$srv_pid")
	srv_addr=$(first_line "$work/$2.out" 60)
}

# start_haproxy CONFIG PORT NAME [CALLGRIND_OUT]: starts HAProxy on
# CONFIG (listening on PORT; under callgrind when CALLGRIND_OUT is
# given); sets srv_pid
start_haproxy() {
	local cg=()
	[ -z "${4:-}" ] || cg=(valgrind --tool=callgrind --callgrind-out-file="$4")
	"${cg[@]}" haproxy -db -f "$1" >"$work/$3.log" 2>&1 &
	srv_pid=$!
	pids+=("$srv_pid")
	wait_port "$2" 60 || { echo "haproxy ($3) did not listen" >&2; return 1; }
}

# mcpgw_load DIALECT URL JSON ARGS...: one `mcpgw load` run calling echo
# (text=hello), its report in JSON; fails unless every call succeeded
mcpgw_load() {
	local d=$1 u=$2 j=$3
	shift 3
	"$MCPGW" load --target "$u" --dialect "$d" --tool echo --arg text=hello \
		--timeout 10s --quiet --json "$j" "$@" >/dev/null 2>"$j.err" || true
	[ "$(jq -r '.total.requests == .total.ok' "$j" 2>/dev/null)" = true ]
}
