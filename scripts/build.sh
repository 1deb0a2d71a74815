#!/usr/bin/env bash
# scripts/build.sh DIR [CONFIGURE-ARGS...] - bootstrap once, then configure
# and build out of tree in DIR (so normal and sanitizer builds coexist).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$1; shift
[ -x "$top/configure" ] || (cd "$top" && ./bootstrap)
mkdir -p "$dir"
cd "$dir"
[ -f Makefile ] || "$top/configure" "$@"
make -j"$(nproc)"
