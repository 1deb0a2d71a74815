#!/usr/bin/env bash
# readme_examples.sh - the configuration examples of README.md's "Put it
# in front of your servers" are files serve starts with: every ```yaml
# block of that section passes `mcpgw serve --check` (a block without
# listeners:/upstreams:, such as a sessions: snippet, is checked on top of
# the first full example), with a session.keys beside them as the README
# says to make it.
. "$(dirname "$0")/lib.sh"
require_tools openssl awk
require_mcpgw
watchdog 60

README=$TOP_SRCDIR/README.md
[ -r "$README" ] || die "no README.md under $TOP_SRCDIR"
printf 'k1 %s\n' "$(openssl rand -hex 32)" >"$T_DIR/session.keys"

# The yaml blocks of the section, one file each: ex1.yaml, ex2.yaml ...
awk -v dir="$T_DIR" '
	/^## / { on = ($0 == "## Put it in front of your servers") }
	on && /^```yaml$/ { n++; f = dir "/ex" n ".yaml"; inb = 1; next }
	inb && /^```$/ { inb = 0; close(f); next }
	inb { print > f }
	END { print n + 0 > (dir "/count") }' "$README"
N=$(cat "$T_DIR/count")
[ "$N" -ge 5 ] 2>/dev/null || die "expected at least 5 yaml examples in the section, found '$N'"

BASE=""
for i in $(seq 1 "$N"); do
	f=$T_DIR/ex$i.yaml
	if grep -q '^upstreams:' "$f"; then
		[ -n "$BASE" ] || BASE=$f
		conf=$f
	else
		# a snippet: on top of the first full example (which has none of
		# its keys)
		conf=$T_DIR/full$i.yaml
		cat "$BASE" "$f" >"$conf"
	fi
	out=$("$MCPGW" serve --check -c "$conf" 2>&1)
	rc=$?
	if [ "$rc" = 0 ] && [ "$out" = "configuration ok" ]; then
		ok "README example $i passes serve --check"
	else
		fail "README example $i: exit $rc: $out ($(head -n 3 "$f" | tr '\n' ' '))"
	fi
done
finish
