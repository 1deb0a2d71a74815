#!/usr/bin/env bash
# scripts/build-deb.sh [--out DIR] [--keep] - build the Debian package of
# this tree (mcpgw_VERSION-REV_ARCH.deb) from its release tarball:
#   1. configure in a fresh temporary directory and `make dist` (so the
#      package is built from what the tarball holds, never from a build
#      tree's objects or generated files);
#   2. unpack the tarball, put its packaging/debian/ in place as debian/;
#   3. dpkg-buildpackage -us -uc -b (dh: autoreconf, configure, make,
#      make install), with DEB_BUILD_OPTIONS=nocheck unless set (the test
#      suite runs on the source tree: scripts/check.sh).
# The .deb is copied to DIR (default: the current directory) and its path
# printed as the last line of stdout.  Build logs go to stderr only when a
# step fails.  --keep leaves the temporary directory (its path is printed).
# JOBS (default 2) is the build's parallelism.  Needs the Build-Depends of
# packaging/debian/control plus debhelper, dpkg-dev and fakeroot
# (scripts/setup.sh installs them).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$PWD
keep=0
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2; shift 2 ;;
	--out=*) out=${1#--out=}; shift ;;
	--keep) keep=1; shift ;;
	-h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "build-deb: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
for t in dpkg-buildpackage dh fakeroot dpkg-checkbuilddeps; do
	command -v "$t" >/dev/null 2>&1 ||
		{ echo "build-deb: '$t' not found: apt-get install dpkg-dev debhelper fakeroot" >&2; exit 1; }
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
jobs=${JOBS:-2}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcpgw-deb.XXXXXX")
cleanup() { if [ "$keep" = 1 ]; then echo "build-deb: kept $tmp" >&2; else rm -rf "$tmp"; fi; }
trap cleanup EXIT

# step LOG CMD...: runs CMD with its output in $tmp/LOG, shown on failure
step() {
	local log=$tmp/$1
	shift
	if ! "$@" >"$log" 2>&1; then
		echo "build-deb: failed: $* (last lines of its log):" >&2
		tail -n 60 "$log" >&2
		return 1
	fi
}

[ -x "$top/configure" ] || step bootstrap.log "$top/bootstrap"

# 1. the release tarball, from a configure of its own
mkdir "$tmp/dist"
(cd "$tmp/dist" && step configure.log "$top/configure" --quiet &&
	step dist.log make dist-gzip)
tarball=$(ls "$tmp"/dist/mcpgw-*.tar.gz)
base=$(basename "$tarball" .tar.gz)
version=${base#mcpgw-}

# 2. the Debian source tree: the tarball, plus its own packaging/debian
mkdir "$tmp/pkg"
tar -xzf "$tarball" -C "$tmp/pkg"
src=$tmp/pkg/$base
[ -d "$src/packaging/debian" ] || { echo "build-deb: the tarball has no packaging/debian/" >&2; exit 1; }
cp -R "$src/packaging/debian" "$src/debian"
cp "$tarball" "$tmp/pkg/mcpgw_$version.orig.tar.gz"
debver=$(cd "$src" && dpkg-parsechangelog -S Version)
if [ "${debver%-*}" != "$version" ]; then
	echo "build-deb: packaging/debian/changelog says $debver, the tarball is $version (configure.ac AC_INIT): add a changelog entry" >&2
	exit 1
fi

# 3. the binary package
(cd "$src" && DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS:-nocheck} \
	step build.log dpkg-buildpackage -us -uc -b -j"$jobs")
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
deb=$tmp/pkg/mcpgw_${debver}_$arch.deb
[ -f "$deb" ] || { echo "build-deb: dpkg-buildpackage made no $(basename "$deb")" >&2; exit 1; }
cp "$deb" "$out/"
echo "$out/$(basename "$deb")"
