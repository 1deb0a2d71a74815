#!/usr/bin/env bash
# scripts/check.sh - the whole test suite: install packages, then build and
# run `make check` twice: a normal -Werror build and an ASan+UBSan build.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
scripts/setup.sh
rc=0
run() { # run NAME CONFIGURE-ARGS...
	local name=$1; shift
	local dir="$top/_build/$name"
	echo "=== $name build: configure $* ==="
	scripts/build.sh "$dir" "$@"
	echo "=== $name: make check ==="
	if ! make -C "$dir" -j"$(nproc)" check; then
		rc=1
		find "$dir/tests" -name '*.log' -newer "$dir/Makefile" -print0 2>/dev/null |
			xargs -0 grep -l -E '^(FAIL|ERROR)' 2>/dev/null | while read -r f; do
				echo "----- $f"; tail -n 60 "$f"; done
	fi
}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
run normal --enable-werror
run asan --enable-werror --enable-asan --enable-debug
if [ "$rc" -eq 0 ]; then
	echo "check: all suites passed (normal and ASan+UBSan)"
else
	echo "check: FAILED" >&2
fi
exit "$rc"
