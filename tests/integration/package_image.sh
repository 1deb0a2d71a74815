#!/usr/bin/env bash
# package_image.sh - the runtime stage of packaging/docker/Dockerfile,
# carried out without a Docker engine (this kind of machine has only the
# client, so `docker build` never runs here):
#   1. the .deb of this tree from scripts/build-deb.sh: the package that
#      package_deb.sh inspects, installs and starts (pkg_lib.sh lets the
#      two tests share one build);
#   2. the base: a Debian 12 root file system made by `debootstrap
#      --variant=minbase bookworm` (what debian:12-slim is made from),
#      given the slim image's configuration: its apt sources (bookworm,
#      bookworm-updates, bookworm-security), its dpkg path excludes
#      (/usr/share/doc, man, info, locale...), no translations, a
#      policy-rc.d that starts no service.  debootstrap's result is kept
#      in the build tree (tests/pkg-cache/, 30 days), so only a fresh
#      build tree pays for it;
#   3. the Dockerfile's second stage, read from the Dockerfile itself and
#      executed in order: ENV, COPY --from=build /out/ (stage 1 writes the
#      .deb there with build-deb.sh), RUN as /bin/sh -c in a chroot, USER,
#      EXPOSE, HEALTHCHECK, STOPSIGNAL, ENTRYPOINT, CMD.  Any other
#      instruction, or another form of these, fails the test: it cannot
#      drift from the Dockerfile silently;
#   4. what the RUN installed is the .deb: the package's version, its
#      /usr/bin/mcpgw, /usr/bin/mcpgw-bench and /etc/mcpgw/mcpgw.yaml byte
#      for byte; every file of the package is in the image but those the
#      slim excludes drop (listed in the log);
#   5. ENTRYPOINT + CMD run in the chroot as the USER's uid:gid, the
#      --listen value replaced by 127.0.0.1:0 (loopback, a free port): its
#      root is the image, it runs as uid 10001; the HEALTHCHECK command, in
#      the chroot as that user with the EXPOSEd port replaced by the
#      gateway's, exits 0; from the host GET /mcpgw/healthz is 200 and
#      /mcpgw/readyz 200 or 503 (the default upstream is not running); the
#      STOPSIGNAL ends it with status 0, and the HEALTHCHECK then fails.
# Every chroot command runs in a private mount namespace (unshare), where
# the root's /proc and /sys are mounted: nothing is mounted on the host,
# and the cleanup checks that before removing the directory.
# What a Docker engine adds is not reproduced: network, PID, IPC and user
# namespaces, cgroup limits, the seccomp profile and dropped capabilities,
# its own /dev; stage 1 is the host's build, not a debian:12-slim one.
# Skipped (77): not root; the sanitizer build (the package is built from
# the tarball with Debian's flags, the same in both runs); no
# dpkg-buildpackage; deb.debian.org not reachable (no network).  Any
# other failure, debootstrap's or apt's included, fails the test.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pkg_lib.sh"
watchdog 600
T0=$(date +%s)

[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, chroot, mount)"
if grep -q -- '--enable-asan' "$TOP_BUILDDIR/config.status" 2>/dev/null; then
	skip "sanitizer build: the package does not depend on it (it runs in the normal build)"
fi
for t in dpkg-buildpackage dh fakeroot; do
	command -v "$t" >/dev/null 2>&1 || skip "$t not installed (scripts/setup.sh installs it)"
done
require_tools debootstrap unshare chroot mount umount flock curl jq dpkg-deb tar gzip timeout

D=$TOP_SRCDIR/packaging/docker/Dockerfile
[ -r "$D" ] || die "no $D"
MIRROR=http://deb.debian.org/debian
SECURITY=http://deb.debian.org/debian-security
SUITE=bookworm
ROOT=$T_DIR/rootfs
DS_PID=""

# ---- cleanup: nothing may stay mounted under $T_DIR --------------------
mounts_under() { awk -v p="$1/" 'index($5, p) == 1 { print $5 }' /proc/self/mountinfo; }
img_cleanup() {
	local m left was i=0
	if [ -n "$DS_PID" ] && t_same "$DS_PID"; then
		kill -TERM "$DS_PID" 2>/dev/null # timeout passes it on to debootstrap
		while kill -0 "$DS_PID" 2>/dev/null && [ $i -lt 150 ]; do
			sleep 0.1
			i=$((i + 1))
		done
	fi
	# The chroot commands' mounts live in their own namespaces; should
	# one be on the host all the same, exactly that path is unmounted, and
	# if that fails the directory is left rather than removed through it.
	was=$(mounts_under "$T_DIR")
	[ -z "$was" ] && return 0
	for m in $(printf '%s\n' "$was" | sort -r); do
		umount -l -- "$m" 2>/dev/null
	done
	left=$(mounts_under "$T_DIR")
	if [ -n "$left" ]; then
		printf '[%s] FAIL: still mounted, %s left in place: %s\n' "$T_NAME" "$T_DIR" "$left"
		T_DIR=$T_DIR.not-removed-while-mounted # t_cleanup removes nothing then
		return 1
	fi
	printf '[%s] FAIL: mounted on the host (now unmounted): %s\n' "$T_NAME" "$(printf '%s' "$was" | tr '\n' ' ')"
	return 1
}
trap 'st=$?; img_cleanup || [ "$st" != 0 ] || st=1; (exit $st); t_cleanup' EXIT

# ---- the Dockerfile ---------------------------------------------------
# instructions with continuation lines joined, comments dropped
sed -e '/^[[:space:]]*#/d' "$D" | sed -e ':a' -e '/\\$/N; s/\\\n/ /; ta' >"$T_DIR/df"
assert_eq "the Dockerfile has two stages" 2 "$(grep -cE '^FROM[[:space:]]' "$T_DIR/df")"
stage1=$(awk '/^FROM /{n++} n == 1' "$T_DIR/df")
awk '/^FROM /{n++} n == 2' "$T_DIR/df" >"$T_DIR/stage2"
from1=$(printf '%s\n' "$stage1" | head -n 1)
[[ $from1 =~ ^FROM[[:space:]]+[^[:space:]]+[[:space:]]+AS[[:space:]]+([a-z0-9_-]+)[[:space:]]*$ ]] ||
	die "stage 1 is not 'FROM IMAGE AS NAME': '$from1'"
STAGE1=${BASH_REMATCH[1]}
printf '%s\n' "$stage1" | grep -qE '^RUN .*scripts/build-deb\.sh --out /out( |$)' ||
	die "stage 1 does not write the .deb to /out with scripts/build-deb.sh (what this test copies in its place)"

# ---- stage 2, instruction by instruction -------------------------------
# stage2 check: every instruction is one this test handles (before any
# build); stage2 run: carry them out in the image, in order.
stage2() {
	local pass=$1 line ins args kv
	IMG_ENV=()
	IMG_USER=""
	EXPOSE_PORT=""
	HC_CMD=""
	STOP_SIG=TERM
	EP=()
	CMD=()
	HAVE_EP=0
	HAVE_CMD=0
	NRUN=0
	while IFS= read -r line; do
		[ -n "${line//[[:space:]]/}" ] || continue
		ins=${line%%[[:space:]]*}
		args=${line#"$ins"}
		args=${args#"${args%%[![:space:]]*}"}
		args=${args%"${args##*[![:space:]]}"}
		case ${ins^^} in
		FROM)
			[ "$args" = debian:12-slim ] ||
				die "stage 2 is FROM '$args': this test makes a debian:12-slim base only"
			;;
		ENV)
			for kv in $args; do
				[[ $kv =~ ^[A-Za-z_][A-Za-z0-9_]*=[^\"\'\$]*$ ]] ||
					die "ENV '$args': only KEY=VALUE without quotes or variables is handled"
				IMG_ENV+=("$kv")
			done
			[ "$pass" = check ] || log "ENV $args"
			;;
		COPY)
			[ "$args" = "--from=$STAGE1 /out/ /tmp/debs/" ] ||
				die "COPY '$args': only 'COPY --from=$STAGE1 /out/ /tmp/debs/' (the .deb of stage 1) is handled"
			[ "$pass" = run ] || continue
			mkdir -p "$ROOT/tmp/debs" && cp "$DEB" "$ROOT/tmp/debs/" || die "cannot copy the .deb into the image"
			log "COPY $(basename "$DEB") to /tmp/debs/"
			;;
		RUN)
			case $args in "["*) die "RUN in exec form is not handled: $args" ;; esac
			NRUN=$((NRUN + 1))
			[ "$pass" = run ] || continue
			run_env
			root_cmd "$IMG_USER"
			log "RUN $args"
			t1=$(date +%s)
			timeout 360 "${RC[@]}" /bin/sh -c "$args" >"$T_DIR/run$NRUN.log" 2>&1
			st=$?
			if [ "$st" != 0 ]; then
				why=$(probe)
				[ $? = 1 ] && skip "no network (lost during RUN): $why"
				die "RUN exited with status $st: $(grep -E -A2 '^(dpkg|E): ' "$T_DIR/run$NRUN.log" | head -n 20; echo ...; tail -n 15 "$T_DIR/run$NRUN.log")"
			fi
			ok "RUN $NRUN exits 0 ($(($(date +%s) - t1)) s)"
			;;
		USER)
			[[ $args =~ ^[0-9]+:[0-9]+$ ]] || die "USER '$args': only a numeric uid:gid is handled"
			IMG_USER=$args
			;;
		EXPOSE)
			[[ $args =~ ^([0-9]+)(/tcp)?$ ]] || die "EXPOSE '$args': only one TCP port is handled"
			EXPOSE_PORT=${BASH_REMATCH[1]}
			;;
		HEALTHCHECK)
			[[ $args =~ ^((--[a-z-]+=[^[:space:]]+[[:space:]]+)*)CMD[[:space:]]+(.+)$ ]] ||
				die "HEALTHCHECK '$args': only [--OPTION=VALUE...] CMD COMMAND is handled"
			HC_CMD=${BASH_REMATCH[3]}
			case $HC_CMD in "["*) die "HEALTHCHECK CMD in exec form is not handled: $HC_CMD" ;; esac
			;;
		STOPSIGNAL)
			[[ $args =~ ^(SIG)?([A-Z0-9]+)$ ]] || die "STOPSIGNAL '$args': only a signal name is handled"
			STOP_SIG=${BASH_REMATCH[2]}
			;;
		ENTRYPOINT | CMD)
			printf '%s' "$args" | jq -e 'type == "array" and length > 0 and all(type == "string")' >/dev/null 2>&1 ||
				die "$ins '$args': only the exec form (a JSON array of strings) is handled"
			if [ "${ins^^}" = ENTRYPOINT ]; then
				mapfile -t EP < <(printf '%s' "$args" | jq -r '.[]')
				HAVE_EP=1
			else
				mapfile -t CMD < <(printf '%s' "$args" | jq -r '.[]')
				HAVE_CMD=1
			fi
			;;
		*)
			die "stage 2 instruction '$ins' is not handled by this test (extend it with the Dockerfile)"
			;;
		esac
	done <"$T_DIR/stage2"
	[ "$NRUN" -ge 1 ] || die "stage 2 has no RUN"
	[ -n "$IMG_USER" ] || die "stage 2 has no USER"
	[ -n "$EXPOSE_PORT" ] || die "stage 2 has no EXPOSE"
	[ -n "$HC_CMD" ] || die "stage 2 has no HEALTHCHECK"
	[ "$HAVE_EP" = 1 ] && [ "$HAVE_CMD" = 1 ] || die "stage 2 needs an ENTRYPOINT and a CMD"
}
stage2 check

# ---- network: deb.debian.org, or skip ----------------------------------
# probe: 0 reachable, 1 no network (curl could not connect/resolve/timed
# out), 2 anything else (printed)
probe() {
	local url rc code
	for url in "$MIRROR/dists/$SUITE/InRelease" "$SECURITY/dists/$SUITE-security/InRelease"; do
		rc=0
		code=$(curl -sS -o /dev/null --max-time 20 -w '%{http_code}' "$url" 2>"$T_DIR/probe.txt") || rc=$?
		case $rc in
		0) [ "$code" = 200 ] || { echo "$url: HTTP $code"; return 2; } ;;
		5 | 6 | 7 | 28 | 35 | 52 | 55 | 56) echo "$url: curl exit $rc: $(cat "$T_DIR/probe.txt")"; return 1 ;;
		*) echo "$url: curl exit $rc: $(cat "$T_DIR/probe.txt")"; return 2 ;;
		esac
	done
	return 0
}
why=$(probe)
case $? in
0) ok "the Debian mirrors answer ($MIRROR, $SECURITY)" ;;
1) skip "no network: $why" ;;
*) die "the Debian mirror: $why" ;;
esac

# ---- the base: debootstrap minbase, cached -----------------------------
ARCH=$(dpkg --print-architecture)
mkdir -p "$PKG_CACHE" || die "cannot make $PKG_CACHE"
RCACHE=$PKG_CACHE/rootfs-$SUITE-minbase-$ARCH.tar.gz
mkdir "$ROOT"
if [ -f "$RCACHE" ] && [ -z "$(find "$RCACHE" -mtime +30)" ]; then
	log "base from the cache: $RCACHE"
	tar --numeric-owner -xpzf "$RCACHE" -C "$ROOT" || die "cannot unpack $RCACHE"
else
	# in the background while the package builds; in a mount namespace
	# of its own (debootstrap mounts /proc and /sys in its target)
	log "debootstrap --variant=minbase $SUITE (in the background)"
	timeout 420 unshare --mount --propagation private -- \
		debootstrap --variant=minbase --arch="$ARCH" "$SUITE" "$ROOT" "$MIRROR" \
		>"$T_DIR/debootstrap.out" 2>"$T_DIR/debootstrap.err" &
	DS_PID=$!
	track_pid "$DS_PID"
fi

# ---- the package (stage 1) --------------------------------------------
pkg_build_deb
PKG_VERSION=$(dpkg-deb -f "$DEB" Version)

if [ -n "$DS_PID" ]; then
	t1=$(date +%s)
	wait "$DS_PID"
	st=$?
	DS_PID=""
	if [ "$st" != 0 ]; then
		why=$(probe)
		[ $? = 1 ] && skip "no network (lost during debootstrap): $why"
		die "debootstrap exited with status $st$([ "$st" = 124 ] && echo ' (timed out after 420 s)'): $(tail -n 15 "$T_DIR/debootstrap.err"; tail -n 15 "$ROOT/debootstrap/debootstrap.log" 2>/dev/null)"
	fi
	log "debootstrap done (waited $(($(date +%s) - t1)) s after the build)"
	[ -z "$(mounts_under "$ROOT")" ] || die "debootstrap left mounts under $ROOT"
	tar --numeric-owner -C "$ROOT" -czf "$RCACHE.tmp.$$" . &&
		mv -f "$RCACHE.tmp.$$" "$RCACHE" || { rm -f "$RCACHE.tmp.$$"; die "cannot store the base in $RCACHE"; }
	log "base stored in $RCACHE ($(du -m "$RCACHE" | cut -f1) MB)"
fi
assert_match "the base is Debian 12" '^12(\.|$)' "$(cat "$ROOT/etc/debian_version")"

# debian:12-slim's own configuration on top of the minbase system
rm -f "$ROOT/etc/apt/sources.list"
cat >"$ROOT/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $SECURITY
Suites: $SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
printf '#!/bin/sh\n# no service is started in an image build\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"
chmod 755 "$ROOT/usr/sbin/policy-rc.d"
SLIM_EXCLUDES=('/usr/share/doc/*' '/usr/share/groff/*' '/usr/share/info/*' '/usr/share/linda/*'
	'/usr/share/lintian/overrides/*' '/usr/share/locale/*' '/usr/share/man/*')
{
	echo '# the slim variant: documentation, manual pages and translations are not installed'
	for p in "${SLIM_EXCLUDES[@]}"; do echo "path-exclude $p"; done
	echo 'path-include /usr/share/doc/*/copyright'
	echo 'path-include /usr/share/locale/locale.alias'
} >"$ROOT/etc/dpkg/dpkg.cfg.d/docker"
echo 'Acquire::Languages "none";' >"$ROOT/etc/apt/apt.conf.d/docker-no-languages"
echo 'Acquire::GzipIndexes "true";' >"$ROOT/etc/apt/apt.conf.d/docker-gzip-indexes"
echo 'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb || true"; };' >"$ROOT/etc/apt/apt.conf.d/docker-clean"
# what the engine provides in a container
cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf" || die "cannot copy /etc/resolv.conf"
printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$ROOT/etc/hosts"

# root_cmd USERSPEC: sets RC to the command that runs a command in the
# image: a private mount namespace with the image's /proc and /sys, the
# environment RENV only, chroot as USERSPEC (uid:gid; empty for root).
# unshare, sh, env and chroot each exec the next: a command started in
# the background keeps the PID $! names.
root_cmd() {
	# shellcheck disable=SC2016
	RC=(unshare --mount --propagation private -- /bin/sh -c '
r=$1; shift
mount -t proc proc "$r/proc" && mount -t sysfs -o ro sysfs "$r/sys" || exit 125
exec "$@"' image-root "$ROOT" env -i "${RENV[@]}")
	RC+=(chroot)
	[ -n "$1" ] && RC+=(--userspec="$1")
	RC+=("$ROOT")
}
# the environment of a step: Docker's defaults, the Dockerfile's ENV
run_env() {
	RENV=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOSTNAME=mcpgw-image)
	if [ -z "$IMG_USER" ]; then RENV+=(HOME=/root); else RENV+=(HOME=/); fi
	local v
	for v in http_proxy https_proxy no_proxy; do
		[ -n "${!v:-}" ] && RENV+=("$v=${!v}")
	done
	RENV+=("${IMG_ENV[@]}")
}

stage2 run

# ---- what the image holds is the package --------------------------------
IMG_USER_SAVED=$IMG_USER
IMG_USER=""
run_env
root_cmd ""
assert_eq "the image's mcpgw package is the .deb" "install ok installed $PKG_VERSION" \
	"$(timeout 60 "${RC[@]}" dpkg-query -W -f='${Status} ${Version}' mcpgw 2>&1)"
IMG_USER=$IMG_USER_SAVED
mkdir "$T_DIR/x"
dpkg-deb -x "$DEB" "$T_DIR/x" || die "dpkg-deb -x $DEB failed"
for f in /usr/bin/mcpgw /usr/bin/mcpgw-bench /etc/mcpgw/mcpgw.yaml; do
	if cmp -s "$T_DIR/x$f" "$ROOT$f"; then ok "the image's $f is the package's"; else fail "the image's $f differs from the package's (or is missing)"; fi
done
dpkg-deb -c "$DEB" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\./|/|' >"$T_DIR/pkgfiles"
dropped=()
while IFS= read -r f; do
	[ -e "$ROOT$f" ] || [ -L "$ROOT$f" ] && continue
	ex=0
	for p in "${SLIM_EXCLUDES[@]}"; do
		# shellcheck disable=SC2254
		case $f in /usr/share/doc/*/copyright) ;; $p) ex=1 ;; esac
	done
	if [ $ex = 1 ]; then dropped+=("$f"); else fail "the package's $f is not in the image"; fi
done <"$T_DIR/pkgfiles"
ok "the package's $(($(wc -l <"$T_DIR/pkgfiles") - ${#dropped[@]})) files are in the image, but for ${#dropped[@]} the slim base excludes"
log "not in the image (slim excludes): ${dropped[*]}"
[ ! -e "$ROOT/tmp/debs" ] && ok "the RUN removed /tmp/debs" || fail "/tmp/debs is still in the image"
log "image size: $(du -sm "$ROOT" | cut -f1) MB (the base, the package and its dependencies)"

# ---- the container: ENTRYPOINT + CMD as USER -----------------------------
ARGV=("${EP[@]}" "${CMD[@]}")
n_listen=0
for i in "${!ARGV[@]}"; do
	case ${ARGV[$i]} in
	--listen)
		[ $((i + 1)) -lt ${#ARGV[@]} ] || die "--listen without a value in ENTRYPOINT + CMD"
		assert_eq "CMD listens on the EXPOSEd port" ":$EXPOSE_PORT" "${ARGV[$((i + 1))]}"
		ARGV[i + 1]=127.0.0.1:0
		n_listen=$((n_listen + 1))
		;;
	--listen=*)
		assert_eq "CMD listens on the EXPOSEd port" "--listen=:$EXPOSE_PORT" "${ARGV[$i]}"
		ARGV[i]=--listen=127.0.0.1:0
		n_listen=$((n_listen + 1))
		;;
	esac
done
[ "$n_listen" = 1 ] || die "ENTRYPOINT + CMD should have one --listen (it is moved to loopback), has $n_listen: ${ARGV[*]}"
run_env
root_cmd "$IMG_USER"
log "container: ${ARGV[*]} as $IMG_USER"
G_OUT=$T_DIR/image-serve.out
G_ERR=$T_DIR/image-serve.err
"${RC[@]}" "${ARGV[@]}" >"$G_OUT" 2>"$G_ERR" &
G_PID=$!
track_pid "$G_PID"
B_PIDS="$B_PIDS $G_PID"
i=0
line=""
while [ $i -lt 200 ]; do
	line=$(head -n 1 "$G_OUT" 2>/dev/null)
	case $line in "listening on "*:*) break ;; esac
	if ! kill -0 "$G_PID" 2>/dev/null || is_zombie "$G_PID"; then
		wait "$G_PID"
		die "the container's process exited with status $? before listening: $(tail -n 5 "$G_ERR")"
	fi
	sleep 0.1
	i=$((i + 1))
done
case $line in "listening on 127.0.0.1:"*) ;; *) die "no 'listening on 127.0.0.1:PORT' line within 20 s (got '$line')" ;; esac
PORT=${line#listening on 127.0.0.1:}
PORT=${PORT%%[!0-9]*}
log "container process (pid $G_PID) on 127.0.0.1:$PORT"
assert_eq "its root is the image" "$ROOT" "$(readlink "/proc/$G_PID/root")"
assert_eq "it runs /usr/bin/mcpgw of the image" "$ROOT/usr/bin/mcpgw" "$(readlink "/proc/$G_PID/exe")"
assert_eq "it runs as the USER's uid" "${IMG_USER%%:*}" "$(awk '/^Uid:/ {print $2}' "/proc/$G_PID/status")"
assert_eq "it runs as the USER's gid" "${IMG_USER##*:}" "$(awk '/^Gid:/ {print $2}' "/proc/$G_PID/status")"
assert_eq "uid 10001 (what the Kubernetes manifests expect)" 10001 "$(awk '/^Uid:/ {print $3}' "/proc/$G_PID/status")"

case $HC_CMD in *"127.0.0.1:$EXPOSE_PORT/"*) ;; *) die "the HEALTHCHECK does not name 127.0.0.1:$EXPOSE_PORT: $HC_CMD" ;; esac
HC=${HC_CMD//127.0.0.1:$EXPOSE_PORT\//127.0.0.1:$PORT\/}
timeout 30 "${RC[@]}" /bin/sh -c "$HC" >"$T_DIR/hc1.out" 2>&1
assert_eq "HEALTHCHECK ($HC) in the image as $IMG_USER exits 0" 0 "$?"
req GET "http://127.0.0.1:$PORT/mcpgw/healthz"
assert_code "from the host: GET /mcpgw/healthz" 200
req GET "http://127.0.0.1:$PORT/mcpgw/readyz"
assert_code "from the host: GET /mcpgw/readyz (the default upstream is not running)" '200|503'

kill_wait "$G_PID" "$STOP_SIG" 15 || die "the container's process did not exit within 15 s of SIG$STOP_SIG"
assert_eq "STOPSIGNAL SIG$STOP_SIG: the container's process exits 0" 0 "$STOP_STATUS"
timeout 30 "${RC[@]}" /bin/sh -c "$HC" >"$T_DIR/hc2.out" 2>&1
assert_ne "HEALTHCHECK fails once the gateway has stopped" 0 "$?"
log "took $(($(date +%s) - T0)) s"
finish
