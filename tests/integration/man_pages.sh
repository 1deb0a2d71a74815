#!/usr/bin/env bash
# man_pages.sh - the manual pages say what the programs do: every long
# option a subcommand's --help lists is described in its section of
# doc/mcpgw.1 (or in doc/mcpgw-bench.1), every option a section describes
# is one the program accepts, and both pages format without warnings.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench_lib.sh"
require_bench
watchdog 60

MAN1=$TOP_SRCDIR/doc/mcpgw.1
MAN_BENCH=$TOP_SRCDIR/doc/mcpgw-bench.1
[ -r "$MAN1" ] && [ -r "$MAN_BENCH" ] || die "manual pages not found under $TOP_SRCDIR/doc"

# Long options written in a help text, one per line.
help_opts() {
	grep -oE -- '(^|[ ,[(])--[a-z][a-z0-9-]+' | grep -oE -- '--[a-z0-9-]+' | sort -u
}

# Long options written in a roff text (\-\-name), one per line.
roff_opts() {
	grep -oE -- '\\-\\-[a-z][a-z0-9\\-]*[a-z0-9]' | sed 's/\\-/-/g' | sort -u
}

# The lines of section TITLE (".SH TITLE" up to the next .SH) of a page.
section() { # PAGE TITLE
	awk -v t=".SH $2" '$0 == t { on = 1; next } /^\.SH / { on = 0 } on' "$1"
}

# Both directions: HELP's options all in ROFF, ROFF's all in HELP.
compare() { # WHAT HELP_TEXT ROFF_TEXT
	local what=$1 h r missing extra
	h=$(printf '%s\n' "$2" | help_opts)
	r=$(printf '%s\n' "$3" | roff_opts)
	[ -n "$h" ] || die "$what: no options found in --help"
	missing=$(comm -23 <(printf '%s\n' "$h") <(printf '%s\n' "$r") | tr '\n' ' ')
	extra=$(comm -13 <(printf '%s\n' "$h") <(printf '%s\n' "$r") | tr '\n' ' ')
	if [ -z "$missing" ]; then
		ok "$what: every --help option is in the manual"
	else
		fail "$what: --help options missing from the manual: $missing"
	fi
	if [ -z "$extra" ]; then
		ok "$what: the manual describes no option the program lacks"
	else
		fail "$what: manual options the program does not list: $extra"
	fi
}

for cmd in serve backend load; do
	help=$("$MCPGW" "$cmd" --help 2>&1) || die "mcpgw $cmd --help failed"
	title=$(printf '%s OPTIONS' "$cmd" | tr '[:lower:]' '[:upper:]')
	sec=$(section "$MAN1" "$title")
	[ -n "$sec" ] || die "doc/mcpgw.1 has no section '$title'"
	compare "mcpgw $cmd" "$help" "$sec"
done

help=$("$BENCH" --help 2>&1) || die "mcpgw-bench --help failed"
compare "mcpgw-bench" "$help" "$(section "$MAN_BENCH" OPTIONS)"
help=$("$BENCH" soak --help 2>&1) || die "mcpgw-bench soak --help failed"
compare "mcpgw-bench soak" "$help" "$(section "$MAN_BENCH" "SOAK OPTIONS")"

# Every subcommand in the usage is in the synopsis.
for sub in serve backend load check-config version help; do
	if grep -q -- "^\.B mcpgw $(printf '%s' "$sub" | sed 's/-/\\\\-/g')\b" "$MAN1" ||
	   grep -q -- "^\.B mcpgw $sub\b" "$MAN1"; then
		ok "synopsis lists mcpgw $sub"
	else
		fail "doc/mcpgw.1 synopsis lacks mcpgw $sub"
	fi
done

# Formatting: groff's warnings are errors here (skipped without groff).
if command -v groff >/dev/null 2>&1; then
	for page in "$MAN1" "$MAN_BENCH"; do
		w=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
		assert_eq "$(basename "$page") formats without warnings" "" "$w"
	done
else
	log "groff not installed: formatting not checked"
fi

finish
