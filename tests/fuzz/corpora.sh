#!/usr/bin/env bash
# corpora.sh - every fuzz target over every input of its corpus
# (tests/fuzz/corpus/<target>/: the seeds and what fuzzers found), through
# driver.c: an input that aborts, crashes or trips a sanitizer fails the
# test and is named.
. "$(dirname "$0")/../integration/lib.sh"
watchdog 600
SRC=$(cd "$(dirname "$0")" && pwd)
for t in json jsonrpc sep2243 chunked h1_request h1_head_diff h1_scan_diff client_h1 sse sse_stamp \
	hmac_handle sealed_token record_codec load_scenario config server jwt; do
	bin=$TOP_BUILDDIR/tests/fuzz/${t}_fuzz
	[ -x "$bin" ] || { fail "$t: $bin not built"; continue; }
	files=("$SRC/corpus/$t"/*)
	[ -e "${files[0]}" ] || { fail "$t: no corpus in $SRC/corpus/$t"; continue; }
	if (cd "$T_DIR" && timeout 300 "$bin" "${files[@]}") >"$T_DIR/$t.out" 2>"$T_DIR/$t.err"; then
		ok "$t: ${#files[@]} inputs"
	else
		fail "$t: an input failed: $(tail -n 5 "$T_DIR/$t.err" | tr '\n' ' ')"
	fi
done
finish
