#!/usr/bin/env bash
# package_install.sh - `make install` of the build tree under the test's
# own DESTDIR, with the build's own prefix and directories:
#   - the file list: both programs, both manual pages, the default
#     configuration in $(sysconfdir)/mcpgw/, the examples in
#     $(docdir)/examples, both systemd units in $(systemdsystemunitdir),
#     and nothing else;
#   - the units name the installed $(bindir)/mcpgw and the installed
#     configuration; the installed mcpgw accepts that configuration;
#   - an edited configuration is kept by a second `make install` and by
#     `make uninstall`; the unedited one is removed by it, and nothing
#     else is left.
# (make distcheck checks install/uninstall of the release tarball as a
# whole; tests/integration/package_deb.sh builds the tarball afresh.)
. "$(dirname "$0")/lib.sh"
watchdog 300
require_mcpgw
require_tools make
[ -f "$TOP_BUILDDIR/Makefile" ] || die "no Makefile in $TOP_BUILDDIR"

# Under `make check` the test inherits the outer make's flags (-w among
# them: "Entering directory" lines in what we read); these makes are ours.
unset MAKEFLAGS MFLAGS MAKELEVEL
# mkvar NAME: a variable of the build's Makefile, expanded.
mkvar() {
	printf 'mgw-print-var:\n\t@echo "$(%s)"\n' "$1" |
		env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
			make -s --no-print-directory -C "$TOP_BUILDDIR" -f Makefile -f - mgw-print-var
}
bindir=$(mkvar bindir)
sysconfdir=$(mkvar sysconfdir)
mandir=$(mkvar mandir)
docdir=$(mkvar docdir)
unitdir=$(mkvar systemdsystemunitdir)
[ -n "$bindir" ] && [ -n "$sysconfdir" ] && [ -n "$docdir" ] ||
	die "could not read the install directories from $TOP_BUILDDIR/Makefile"
log "bindir=$bindir sysconfdir=$sysconfdir docdir=$docdir unitdir=$unitdir"
for d in "$bindir" "$sysconfdir" "$mandir" "$docdir" ${unitdir:+"$unitdir"}; do
	case $d in
	/*) ;;
	*) fail "install directory '$d' is not an absolute path" ;;
	esac
done
R=$T_DIR/root
CONF=$R$sysconfdir/mcpgw/mcpgw.yaml

minstall() { # TARGET LOG
	make -s --no-print-directory -C "$TOP_BUILDDIR" "$1" DESTDIR="$R" >"$T_DIR/$2" 2>&1 ||
		die "make $1 DESTDIR=... failed: $(tail -n 20 "$T_DIR/$2")"
}
minstall install install1.log

# The installed file list, exactly.
want=$T_DIR/want
{
	echo "$bindir/mcpgw"
	echo "$bindir/mcpgw-bench"
	echo "$mandir/man1/mcpgw.1"
	echo "$mandir/man1/mcpgw-bench.1"
	echo "$sysconfdir/mcpgw/mcpgw.yaml"
	for f in "$TOP_SRCDIR"/conf/*.yaml; do echo "$docdir/examples/$(basename "$f")"; done
	echo "$docdir/README.md"
	echo "$docdir/deploy.md"
	if [ -n "$unitdir" ]; then
		echo "$unitdir/mcpgw.service"
		echo "$unitdir/mcpgw-backend@.service"
	fi
} | sort >"$want"
(cd "$R" && find . -type f -o -type l) | sed 's|^\.||' | sort >"$T_DIR/got"
missing=$(comm -23 "$want" "$T_DIR/got" | tr '\n' ' ')
extra=$(comm -13 "$want" "$T_DIR/got" | tr '\n' ' ')
assert_eq "make install: nothing missing" "" "$missing"
assert_eq "make install: nothing unexpected" "" "$extra"
[ -x "$R$bindir/mcpgw" ] && ok "mcpgw is executable" || fail "$bindir/mcpgw not executable"
cmp -s "$TOP_SRCDIR/conf/mcpgw.yaml" "$CONF" && ok "default configuration is conf/mcpgw.yaml" ||
	fail "installed configuration differs from conf/mcpgw.yaml"

"$R$bindir/mcpgw" check-config -q -c "$CONF" >"$T_DIR/check.out" 2>&1
assert_eq "the installed mcpgw accepts the installed configuration" 0 "$?"

if [ -n "$unitdir" ]; then
	U=$R$unitdir/mcpgw.service
	assert_eq "mcpgw.service ExecStart" "ExecStart=$bindir/mcpgw serve -c $sysconfdir/mcpgw/mcpgw.yaml" \
		"$(grep '^ExecStart=' "$U")"
	assert_eq "mcpgw.service ExecStartPre" "ExecStartPre=$bindir/mcpgw check-config -q -c $sysconfdir/mcpgw/mcpgw.yaml" \
		"$(grep '^ExecStartPre=' "$U")"
	assert_nomatch "no @VAR@ left in the units" '@[a-z]+@' "$(cat "$R$unitdir"/*.service)"
fi

# An operator's edit survives install and uninstall.
echo '# edited by package_install.sh' >>"$CONF"
minstall install install2.log
assert_eq "an edited configuration survives make install" "# edited by package_install.sh" "$(tail -n 1 "$CONF")"
assert_match "make install says it kept it" 'kept the existing' "$(cat "$T_DIR/install2.log")"
minstall uninstall uninstall1.log
left=$( (cd "$R" && find . -type f) | sed 's|^\.||' | tr '\n' ' ')
assert_eq "make uninstall leaves only the edited configuration" "$sysconfdir/mcpgw/mcpgw.yaml " "$left"

# The unedited default is removed by uninstall.
rm -rf "$R"
minstall install install3.log
minstall uninstall uninstall2.log
left=$( (cd "$R" && find . -type f) | sed 's|^\.||' | tr '\n' ' ')
assert_eq "make uninstall removes every installed file" "" "$left"
finish
