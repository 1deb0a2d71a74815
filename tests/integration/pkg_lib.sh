# pkg_lib.sh - the Debian package of this tree, for the tests that need
# it (package_deb.sh, package_image.sh); sourced after lib.sh.
#
# pkg_build_deb: sets DEB to the .deb that scripts/build-deb.sh makes of
# this tree (from its release tarball, JOBS=2).  A build takes about a
# minute, so the .deb is kept in $TOP_BUILDDIR/tests/pkg-cache/deb-KEY/
# and a later call with the same KEY takes it from there.  KEY is a hash
# of everything the build reads that can change between two runs:
#   - every file git lists in the source tree, tracked or untracked but
#     not ignored, by name and content (what `make dist` can take; an
#     edited, added or deleted file changes the key);
#   - the installed versions of the Build-Depends of
#     packaging/debian/control and of the build tools;
#   - the host architecture and DEB_BUILD_OPTIONS.
# Without git (a tree unpacked from a tarball) there is no key: every call
# builds.  A lock (flock) makes a second test wait for the first one's
# build and then reuse it; only the newest key is kept.
PKG_CACHE=$TOP_BUILDDIR/tests/pkg-cache

# Prints the cache key, or nothing when the tree has no git.
pkg_deb_key() {
	local top=$TOP_SRCDIR bd
	command -v git >/dev/null 2>&1 || return 0
	[ "$(git -C "$top" rev-parse --is-inside-work-tree 2>/dev/null)" = true ] || return 0
	bd=$(sed -n '/^Build-Depends:/,/^[^ ]/p' "$top/packaging/debian/control" |
		sed -e 's/^Build-Depends://' -e 's/([^)]*)//g' | tr ',' '\n' |
		sed -n 's/^[[:space:]]*\([a-z0-9][a-z0-9.+-]*\).*/\1/p')
	{
		(cd "$top" && git ls-files -z --cached --others --exclude-standard |
			LC_ALL=C sort -zu | xargs -0 sha256sum -- 2>&1)
		# shellcheck disable=SC2086
		dpkg-query -W -f='${Package} ${Version}\n' $bd debhelper dpkg-dev \
			fakeroot gcc autoconf automake libtool 2>&1
		dpkg-architecture -qDEB_HOST_ARCH 2>&1
		echo "DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS:-}"
	} | sha256sum | cut -c1-16
}

pkg_build_deb() {
	local key fd d cached
	DEB=""
	key=$(pkg_deb_key)
	if [ -z "$key" ]; then
		log "no git in $TOP_SRCDIR: building the package without the cache"
		pkg_build_deb_into "$T_DIR/out"
		return
	fi
	mkdir -p "$PKG_CACHE" || die "cannot make $PKG_CACHE"
	exec {fd}>"$PKG_CACHE/deb.lock"
	flock -w 600 "$fd" || die "the package cache $PKG_CACHE stayed locked for 600 s"
	cached=$(ls "$PKG_CACHE/deb-$key"/mcpgw_*.deb 2>/dev/null | head -n 1)
	if [ -n "$cached" ] && [ -f "$cached" ]; then
		DEB=$cached
		log "package of this tree already built: $DEB (cache key $key)"
	else
		pkg_build_deb_into "$T_DIR/out"
		d=$PKG_CACHE/tmp.$$
		rm -rf "$d"
		mkdir "$d" && cp "$DEB" "$d/" || die "cannot store the package in $PKG_CACHE"
		# the older keys' packages go; this one takes their place
		find "$PKG_CACHE" -mindepth 1 -maxdepth 1 -type d -name 'deb-[0-9a-f]*' -exec rm -rf {} +
		mv -T "$d" "$PKG_CACHE/deb-$key" || die "cannot store the package in $PKG_CACHE"
		DEB=$PKG_CACHE/deb-$key/$(basename "$DEB")
	fi
	flock -u "$fd"
	exec {fd}>&-
	[ -f "$DEB" ] || die "no package at $DEB"
}

# pkg_build_deb_into DIR: scripts/build-deb.sh --out DIR; sets DEB.
pkg_build_deb_into() {
	local t0
	log "building the package (scripts/build-deb.sh, JOBS=2)"
	t0=$(date +%s)
	JOBS=2 "$TOP_SRCDIR/scripts/build-deb.sh" --out "$1" >"$T_DIR/build.out" 2>"$T_DIR/build.err" ||
		die "scripts/build-deb.sh failed: $(tail -n 30 "$T_DIR/build.err")"
	DEB=$(tail -n 1 "$T_DIR/build.out")
	[ -f "$DEB" ] || die "scripts/build-deb.sh printed no .deb path: $(tail -n 3 "$T_DIR/build.out")"
	log "built $(basename "$DEB") in $(($(date +%s) - t0)) s"
}
