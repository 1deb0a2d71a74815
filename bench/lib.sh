# bench/lib.sh - what the bench scripts share (sourced, after `set -euo
# pipefail`): a scratch directory `$work` and the PIDs in `pids` stopped
# at exit, waiting (bounded) for a server's "listening on" line or for a
# port, and a free loopback port chosen by the kernel.
work=$(mktemp -d)
pids=()
bench_cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
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

# callgrind_total FILE: the instructions a callgrind output file counted
# (its PROGRAM TOTALS line, without separators); empty when none
callgrind_total() {
	callgrind_annotate "$1" 2>/dev/null |
		sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,
}
