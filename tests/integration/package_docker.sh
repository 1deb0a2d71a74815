#!/usr/bin/env bash
# package_docker.sh - packaging/docker/Dockerfile, checked STATICALLY:
# no Docker engine runs on this kind of machine (only the client), so the
# image is never built here.  What is checked is that the Dockerfile
# builds and installs the package tests/integration/package_deb.sh tests:
#   - two stages, both debian:12-slim; the first installs the package's
#     Build-Depends from packaging/debian/control and runs
#     scripts/build-deb.sh, the second installs the .deb that script
#     names (mcpgw_VERSION-REV_ARCH.deb, the control file's package) with
#     apt, so its runtime dependencies are resolved;
#   - every file it COPYs from the context exists, and the
#     Dockerfile.dockerignore keeps build trees (_build, .git) out;
#   - a numeric non-root USER, an EXPOSEd port that the CMD's --listen
#     uses, a HEALTHCHECK GET /mcpgw/healthz on that port with curl (which
#     the runtime stage installs), ENTRYPOINT the packaged /usr/bin/mcpgw,
#     CMD serving the packaged /etc/mcpgw/mcpgw.yaml.
. "$(dirname "$0")/lib.sh"
watchdog 60
D=$TOP_SRCDIR/packaging/docker/Dockerfile
[ -r "$D" ] || die "no $D"
# instructions with continuation lines joined, comments dropped
sed -e '/^[[:space:]]*#/d' "$D" | sed -e ':a' -e '/\\$/N; s/\\\n/ /; ta' >"$T_DIR/df"
inst() { grep -E "^$1[[:space:]]" "$T_DIR/df"; }

froms=$(inst FROM | awk '{print $2}' | tr '\n' ' ')
assert_eq "two stages on debian:12-slim" "debian:12-slim debian:12-slim " "$froms"
assert_match "the first stage is named" '^FROM debian:12-slim AS [a-z]+' "$(inst FROM | head -n 1)"

stage1=$(awk '/^FROM /{n++} n == 1' "$T_DIR/df")
stage2=$(awk '/^FROM /{n++} n == 2' "$T_DIR/df")
assert_match "stage 1 installs the control file's Build-Depends" \
	'apt-get build-dep -y /tmp/bd' "$stage1"
assert_match "stage 1 copies the control file there" \
	'^COPY packaging/debian/control packaging/debian/changelog /tmp/bd/debian/' "$stage1"
assert_match "stage 1 runs scripts/build-deb.sh" 'RUN .*/src/scripts/build-deb.sh --out /out' "$stage1"
for t in debhelper dpkg-dev fakeroot autoconf automake libtool; do
	assert_match "stage 1 installs $t" "[[:space:]]$t([[:space:]]|\$)" "$stage1"
done

pkg=$(sed -n 's/^Package: //p' "$TOP_SRCDIR/packaging/debian/control")
assert_eq "the package is mcpgw" mcpgw "$pkg"
assert_match "build-deb.sh makes ${pkg}_VERSION_ARCH.deb" 'deb=\$tmp/pkg/mcpgw_\$\{debver\}_\$arch\.deb' \
	"$(cat "$TOP_SRCDIR/scripts/build-deb.sh")"
assert_match "stage 2 takes the .deb from stage 1" '^COPY --from=build /out/ /tmp/debs/' "$stage2"
assert_match "stage 2 installs it with apt (dependencies resolved)" \
	"apt-get install -y --no-install-recommends /tmp/debs/${pkg}_\\*\\.deb curl" "$stage2"

# COPY sources exist in the context (the repository root)
while read -r _ args; do
	case $args in --from=*) continue ;; esac
	set -- $args
	while [ $# -gt 1 ]; do
		if [ "$1" = . ] || [ -e "$TOP_SRCDIR/$1" ]; then ok "COPY source $1 exists"; else fail "COPY source $1 missing"; fi
		shift
	done
done < <(inst COPY)
I=$TOP_SRCDIR/packaging/docker/Dockerfile.dockerignore
for p in .git _build; do
	if grep -qx -- "$p" "$I"; then ok "dockerignore: $p"; else fail "Dockerfile.dockerignore does not exclude $p"; fi
done

user=$(inst USER | tail -n 1 | awk '{print $2}')
assert_match "USER is numeric and not root" '^[1-9][0-9]*(:[1-9][0-9]*)?$' "$user"
port=$(inst EXPOSE | awk '{print $2}' | sed 's|/tcp||')
assert_match "EXPOSE a port" '^[0-9]+$' "$port"
cmd=$(inst CMD)
assert_match "CMD serves the packaged configuration on the exposed port" \
	"\"serve\", \"-c\", \"/etc/mcpgw/mcpgw.yaml\", \"--listen\", \":$port\"" "$cmd"
assert_eq "ENTRYPOINT is the packaged binary" 'ENTRYPOINT ["/usr/bin/mcpgw"]' "$(inst ENTRYPOINT)"
hc=$(inst HEALTHCHECK)
assert_match "HEALTHCHECK GETs /mcpgw/healthz on that port" \
	"CMD curl -fsS .*http://127\\.0\\.0\\.1:$port/mcpgw/healthz" "$hc"
# /usr/bin/mcpgw and /etc/mcpgw/mcpgw.yaml are what the package installs
# (package_deb.sh checks the .deb); the source of that configuration:
"$MCPGW" check-config -q -c "$TOP_SRCDIR/conf/mcpgw.yaml" >"$T_DIR/check.out" 2>&1
assert_eq "the packaged configuration passes check-config" 0 "$?"
finish
