#!/usr/bin/env bash
# package_deb.sh - the Debian package, built from this tree's release
# tarball by scripts/build-deb.sh (nothing taken from a build tree; kept
# in the build tree's tests/pkg-cache/ for the same tree, see pkg_lib.sh),
# then:
#   - its contents (dpkg-deb -c / -I / -f): both programs, both manual
#     pages, /etc/mcpgw/mcpgw.yaml listed in conffiles, both units, the
#     examples; the version is the one the built mcpgw reports;
#   - the units: ExecStart/ExecReload/hardening lines, `systemd-analyze
#     verify` on the installed units, `systemd-analyze security --offline`
#     exposure at most 2.0;
#   - dpkg -i, then /usr/bin/mcpgw check-config on /etc/mcpgw/mcpgw.yaml,
#     and /usr/bin/mcpgw serve with that configuration (listener moved to
#     a free port), run as an unprivileged user the way DynamicUser does:
#     GET /mcpgw/healthz 200, readyz 200 or 503, SIGTERM exits 0;
#   - the conffile: an edited one survives a reinstall and `dpkg -r`,
#     `dpkg --purge` removes it.
# Needs root (dpkg -i) and dpkg-buildpackage: otherwise it is skipped
# (77).  The package is purged on every exit, so the machine is left as
# it was; an mcpgw package installed before the test makes it skip
# rather than touch it.  The sanitizer build skips it: the package is
# built with Debian's flags from the tarball, the same in both runs.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pkg_lib.sh"
watchdog 900

[ "$(id -u)" = 0 ] || skip "needs root (dpkg -i)"
for t in dpkg-buildpackage dh fakeroot; do
	command -v "$t" >/dev/null 2>&1 || skip "$t not installed (scripts/setup.sh installs it)"
done
if grep -q -- '--enable-asan' "$TOP_BUILDDIR/config.status" 2>/dev/null; then
	skip "sanitizer build: the package does not depend on it (it runs in the normal build)"
fi
if dpkg-query -W -f='${Status}' mcpgw 2>/dev/null | grep -q 'installed\|config-files'; then
	skip "an mcpgw package is already on this machine; not touching it"
fi
require_tools dpkg-deb systemd-analyze curl setpriv
require_mcpgw

INSTALLED=0
pkg_purge() {
	[ "$INSTALLED" = 1 ] || return 0
	dpkg --purge mcpgw >"$T_DIR/purge.log" 2>&1 ||
		printf '[%s] FAIL: dpkg --purge mcpgw: %s\n' "$T_NAME" "$(tail -n 3 "$T_DIR/purge.log")"
	INSTALLED=0
}
trap 'st=$?; pkg_purge; (exit $st); t_cleanup' EXIT

# ---- build ------------------------------------------------------------
# (once per state of the tree: package_image.sh installs the same .deb)
pkg_build_deb

# ---- contents -----------------------------------------------------------
dpkg-deb -c "$DEB" | awk '{print $6}' | sed 's|^\./|/|' >"$T_DIR/files"
for f in /usr/bin/mcpgw /usr/bin/mcpgw-bench \
	/usr/share/man/man1/mcpgw.1.gz /usr/share/man/man1/mcpgw-bench.1.gz \
	/etc/mcpgw/mcpgw.yaml \
	/lib/systemd/system/mcpgw.service /lib/systemd/system/mcpgw-backend@.service \
	/usr/share/doc/mcpgw/examples/serve.yaml /usr/share/doc/mcpgw/copyright; do
	if grep -qx -- "$f" "$T_DIR/files"; then ok "package holds $f"; else fail "package lacks $f"; fi
done
assert_eq "nothing under /usr/local" "" "$(grep '^/usr/local' "$T_DIR/files" | head -n 3)"
dpkg-deb -I "$DEB" conffiles >"$T_DIR/conffiles" 2>&1 || fail "no conffiles in the package"
assert_eq "conffiles" "/etc/mcpgw/mcpgw.yaml" "$(cat "$T_DIR/conffiles")"
assert_eq "package name" mcpgw "$(dpkg-deb -f "$DEB" Package)"
want_v=$("$MCPGW" version 2>/dev/null | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -n 1)
assert_eq "package version is mcpgw's" "$want_v" "$(dpkg-deb -f "$DEB" Version | sed 's/-[^-]*$//')"
assert_match "runtime dependencies from the libraries" 'libevent.*libhiredis|libhiredis.*libevent' "$(dpkg-deb -f "$DEB" Depends)"

mkdir "$T_DIR/x"
dpkg-deb -x "$DEB" "$T_DIR/x"
U=$T_DIR/x/lib/systemd/system/mcpgw.service
for l in 'Type=simple' \
	'ExecStart=/usr/bin/mcpgw serve -c /etc/mcpgw/mcpgw.yaml' \
	'ExecReload=/usr/bin/mcpgw serve --check -c /etc/mcpgw/mcpgw.yaml' \
	'ExecReload=/bin/kill -HUP $MAINPID' \
	'DynamicUser=yes' 'ProtectSystem=strict' 'ProtectHome=yes' \
	'NoNewPrivileges=yes' 'PrivateTmp=yes' 'CapabilityBoundingSet=' \
	'LimitNOFILE=65536'; do
	if grep -qxF -- "$l" "$U"; then ok "mcpgw.service: $l"; else fail "mcpgw.service lacks the line '$l'"; fi
done
assert_match "backend unit runs /usr/bin/mcpgw" '^ExecStart=/usr/bin/mcpgw backend ' \
	"$(grep '^ExecStart=' "$T_DIR/x/lib/systemd/system/mcpgw-backend@.service")"

# ---- install ------------------------------------------------------------
INSTALLED=1
dpkg -i "$DEB" >"$T_DIR/dpkg-i.log" 2>&1 || die "dpkg -i failed: $(tail -n 10 "$T_DIR/dpkg-i.log")"
assert_eq "dpkg status" "install ok installed" "$(dpkg-query -W -f='${Status}' mcpgw)"
[ -x /usr/bin/mcpgw ] || die "/usr/bin/mcpgw not installed"

# The installed units, with the installed binary and manual page.
man_opt=()
command -v man >/dev/null 2>&1 || man_opt=(--man=no)
for u in mcpgw.service mcpgw-backend@9001.service; do
	if systemd-analyze verify "${man_opt[@]}" "/lib/systemd/system/${u/@9001/@}" \
		>"$T_DIR/verify.out" 2>&1 && [ ! -s "$T_DIR/verify.out" ]; then
		ok "systemd-analyze verify $u: no complaint"
	else
		# a template is verified through an instance of it
		if [ "$u" != mcpgw.service ] &&
			systemd-analyze verify "${man_opt[@]}" "$u" >"$T_DIR/verify.out" 2>&1 &&
			[ ! -s "$T_DIR/verify.out" ]; then
			ok "systemd-analyze verify $u: no complaint"
		else
			fail "systemd-analyze verify $u: $(cat "$T_DIR/verify.out")"
		fi
	fi
done
exposure=$(systemd-analyze security --offline=yes /lib/systemd/system/mcpgw.service 2>&1 |
	sed -n 's/.*Overall exposure level for mcpgw.service: \([0-9.]*\).*/\1/p')
assert_cmp "mcpgw.service exposure (systemd-analyze security)" "$exposure" "<=" 2.0

/usr/bin/mcpgw check-config -c /etc/mcpgw/mcpgw.yaml >"$T_DIR/check.out" 2>&1
assert_eq "installed configuration passes check-config" 0 "$?"

# serve as the unit would: the installed binary and configuration, an
# unprivileged uid/gid (nobody, like DynamicUser's transient user); only
# the listener moves to a free port.
cat >"$T_DIR/as-nobody" <<'EOF'
#!/bin/sh
exec setpriv --reuid=65534 --regid=65534 --clear-groups --no-new-privs /usr/bin/mcpgw "$@"
EOF
chmod 755 "$T_DIR/as-nobody"
cat >"$T_DIR/as-nobody-cmd" <<'EOF'
#!/bin/sh
exec setpriv --reuid=65534 --regid=65534 --clear-groups --no-new-privs "$@"
EOF
chmod 755 "$T_DIR/as-nobody-cmd"
MCPGW_SAVED=$MCPGW
MCPGW=$T_DIR/as-nobody
start_serve -c /etc/mcpgw/mcpgw.yaml --listen 127.0.0.1:0
MCPGW=$MCPGW_SAVED
assert_eq "serve runs as uid 65534" 65534 "$(awk '/^Uid:/ {print $2}' "/proc/$G_PID/status")"
req GET "http://$G_ADDR/mcpgw/healthz"
assert_code "installed gateway: GET /mcpgw/healthz" 200
req GET "http://$G_ADDR/mcpgw/readyz"
assert_code "installed gateway: GET /mcpgw/readyz (the default upstream may be down)" '200|503'
# systemctl reload: the unit's ExecReload lines, run as written (as the
# unprivileged user, $MAINPID the gateway)
grep '^ExecReload=' /lib/systemd/system/mcpgw.service | sed 's/^ExecReload=//' >"$T_DIR/reload.cmds"
assert_eq "the unit's reload: a check, then SIGHUP" 2 "$(wc -l <"$T_DIR/reload.cmds")"
while IFS= read -r cmd; do
	cmd=${cmd//\$MAINPID/$G_PID}
	# shellcheck disable=SC2086
	"$T_DIR/as-nobody-cmd" $cmd >"$T_DIR/reload.out" 2>&1 ||
		fail "ExecReload '$cmd' failed: $(cat "$T_DIR/reload.out")"
done <"$T_DIR/reload.cmds"
poll_until 10 grep -q "reload: done" "$G_ERR" || fail "no 'reload: done' after the unit's ExecReload: $(tail -n 3 "$G_ERR")"
req GET "http://$G_ADDR/mcpgw/healthz"
assert_code "installed gateway after the reload" 200
stop_serve
ok "installed gateway stopped on SIGTERM"

# ---- the conffile ------------------------------------------------------
echo '# edited by package_deb.sh' >>/etc/mcpgw/mcpgw.yaml
dpkg -i "$DEB" >"$T_DIR/dpkg-i2.log" 2>&1 || fail "reinstall failed: $(tail -n 5 "$T_DIR/dpkg-i2.log")"
assert_eq "an edited conffile survives a reinstall" "# edited by package_deb.sh" "$(tail -n 1 /etc/mcpgw/mcpgw.yaml)"
dpkg -r mcpgw >"$T_DIR/dpkg-r.log" 2>&1 || fail "dpkg -r failed: $(tail -n 5 "$T_DIR/dpkg-r.log")"
[ ! -e /usr/bin/mcpgw ] && ok "dpkg -r removed /usr/bin/mcpgw" || fail "/usr/bin/mcpgw still there after dpkg -r"
[ -f /etc/mcpgw/mcpgw.yaml ] && ok "dpkg -r keeps the conffile" || fail "dpkg -r removed the conffile"
pkg_purge
[ ! -e /etc/mcpgw/mcpgw.yaml ] && ok "dpkg --purge removes the conffile" || fail "/etc/mcpgw/mcpgw.yaml left after purge"
assert_eq "package gone" "" "$(dpkg-query -W -f='${Status}' mcpgw 2>/dev/null | grep -v 'not-installed')"
finish
