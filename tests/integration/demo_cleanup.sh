#!/usr/bin/env bash
# demo_cleanup.sh - the README's first command leaves nothing running: the
# demo (scripts/demo.sh, without the build and without the bench part) is
# run in a session of its own, and once it has exited no process of that
# session is left (its two `mcpgw backend` replicas used to outlive it:
# they were started inside a command substitution, so their PIDs never
# reached the demo's cleanup).
. "$(dirname "$0")/lib.sh"
watchdog 120

out=$T_DIR/demo.out
# setsid: the demo leads a new session whose id is its PID
setsid env MCPGW_DEMO_SKIP_BUILD=1 MCPGW="$MCPGW" MCPGW_BENCH=/nonexistent \
	bash "$TOP_SRCDIR/scripts/demo.sh" >"$out" 2>&1 &
demo=$!
wait "$demo"
rc=$?
assert_eq "the demo exits 0" 0 "$rc"
grep -q 'two replicas' "$out" || { cat "$out" >&2; die "the demo did not start its replicas"; }
grep -q 'same session sent to B' "$out" || fail "the demo's legacy part did not run"

# What is left of the demo's session, zombies excluded (their parent, if
# any, reaps them; they hold no port).  A bounded wait: a killed child may
# take a moment to be gone.
left() {
	ps -e -o sid=,pid=,stat=,args= | awk -v s="$demo" '$1 == s && $3 !~ /^Z/ { $1 = ""; print }'
}
rest=
for _ in $(seq 50); do
	rest=$(left)
	[ -z "$rest" ] && break
	sleep 0.1
done
if [ -z "$rest" ]; then
	ok "no process the demo started outlives it"
else
	fail "processes of the demo still running: $rest"
	# do not leave them behind ourselves
	for p in $(ps -e -o sid=,pid= | awk -v s="$demo" '$1 == s { print $2 }'); do
		kill "$p" 2>/dev/null || true
	done
fi
finish
