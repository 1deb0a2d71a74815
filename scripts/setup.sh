#!/usr/bin/env bash
# scripts/setup.sh - install every Debian package mcpgw needs to build, test
# and benchmark (idempotent; run as root on Debian 12).
set -euo pipefail

PKGS=(
	build-essential autoconf automake libtool pkg-config
	libevent-dev libnghttp2-dev libhttp-parser-dev libssl-dev
	libjansson-dev libyaml-dev libhiredis-dev libcmocka-dev libmimalloc-dev
	redis-server nghttp2-client curl openssl jq ca-certificates procps
	iproute2 psmisc haproxy nginx groff-base
	prometheus
	chromium
	debhelper dpkg-dev fakeroot yq
	debootstrap
)

# --list prints the package names (for .ci/run's explicit apt-get install).
if [ "${1:-}" = "--list" ]; then
	printf '%s\n' "${PKGS[@]}"
	command -v node >/dev/null 2>&1 || echo nodejs
	command -v npm >/dev/null 2>&1 || echo npm
	exit 0
fi

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)

if [ "${#missing[@]}" -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "setup: missing packages: ${missing[*]} (run as root)" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update
	apt-get install -y --no-install-recommends "${missing[@]}"
fi
# redis-server's own service is not needed: tests start their own instances.
echo "setup: all packages present"
