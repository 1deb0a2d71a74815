#!/usr/bin/env bash
# package_k8s.sh - the Kubernetes manifests of packaging/kubernetes/,
# rendered offline with `kubectl kustomize` (no cluster), base (sealed
# sessions) and redis (sessions in Redis):
#   - every file parses and both render; each has the objects a
#     deployment needs (Deployment, Service, PDB, HPA, ConfigMap, Secret;
#     Redis's Deployment and Service in the overlay), the selectors of
#     Service, PDB and HPA reach the gateway pods;
#   - the configuration the ConfigMap carries passes `mcpgw check-config`
#     (the Secret's key file at the path the Deployment mounts it), and
#     the Secret holds the key file the operator made;
#   - containerPort, probe ports, the Service's targetPort and the
#     Prometheus annotation are the listener port of that configuration;
#     the pod's uid is the image's USER (packaging/docker/Dockerfile);
#     terminationGracePeriodSeconds is above preStop's sleep plus
#     timeouts.shutdown;
#   - `mcpgw serve` with each rendered configuration (the listener on a
#     free port, the upstream URLs on a local reference server, Redis on
#     a local redis-server) answers the readiness and liveness paths the
#     Deployment probes: 200 each, from the gateway itself.
# kubectl is not a Debian 12 package at a version with today's kustomize:
# without it the test is skipped (77).
. "$(dirname "$0")/lib.sh"
watchdog 120
command -v kubectl >/dev/null 2>&1 || skip "kubectl not installed"
require_tools yq jq openssl curl redis-server
require_mcpgw

K=$T_DIR/k
cp -R "$TOP_SRCDIR/packaging/kubernetes" "$K"
chmod -R u+w "$K"
rm -f "$K/base/session.keys"

# every file parses as YAML (each document)
for f in "$K"/*/*.yaml; do
	if yq -s . "$f" >/dev/null 2>"$T_DIR/yq.err"; then
		ok "parses: ${f#"$K"/}"
	else
		fail "${f#"$K"/} does not parse: $(cat "$T_DIR/yq.err")"
	fi
done

# Without the operator's key file the base does not render (no key is
# committed); with it, it does.
if kubectl kustomize "$K/base" >/dev/null 2>&1; then
	fail "the base renders without session.keys: a committed key?"
else
	ok "the base needs the operator's session.keys"
fi
printf 'k2026a %s\n' "$(openssl rand -hex 32)" >"$K/base/session.keys"

render() { # DIR NAME: the render as one JSON array in $T_DIR/NAME.json
	kubectl kustomize "$K/$1" >"$T_DIR/$2.yaml" 2>"$T_DIR/$2.err" ||
		die "kubectl kustomize $1 failed: $(cat "$T_DIR/$2.err")"
	yq -s . "$T_DIR/$2.yaml" >"$T_DIR/$2.json" || die "the render of $1 does not parse"
	ok "kubectl kustomize $1"
}
render base base
render redis redis

# check_overlay NAME: every check on one render
check_overlay() {
	local n=$1 J=$T_DIR/$1.json conf=$T_DIR/$1-mcpgw.yaml
	q() { jq -r "$1" "$J"; }
	local kinds
	kinds=$(q '[.[] | .kind + "/" + .metadata.name] | sort | join(" ")')
	for k in Deployment/mcpgw Service/mcpgw PodDisruptionBudget/mcpgw HorizontalPodAutoscaler/mcpgw; do
		case " $kinds " in *" $k "*) ok "$n: has $k" ;; *) fail "$n: no $k in ($kinds)" ;; esac
	done
	assert_match "$n: has the ConfigMap" ' ConfigMap/mcpgw-config-[a-z0-9]+ ' " $kinds "
	assert_match "$n: has the Secret" ' Secret/mcpgw-session-keys-[a-z0-9]+ ' " $kinds "

	local D='.[] | select(.kind == "Deployment" and .metadata.name == "mcpgw")'
	local C="$D | .spec.template.spec.containers[0]"
	local podlabels
	podlabels=$(q "$D | .spec.template.metadata.labels")
	# selectors of the Service, PDB, Deployment reach the pods; HPA scales it
	for s in '.[] | select(.kind == "Service" and .metadata.name == "mcpgw") | .spec.selector' \
		'.[] | select(.kind == "PodDisruptionBudget") | .spec.selector.matchLabels' \
		"$D | .spec.selector.matchLabels"; do
		if jq -e --argjson l "$podlabels" "[$s] | .[0] as \$sel | (\$sel | length) > 0 and (\$sel | to_entries | all(\$l[.key] == .value))" "$J" >/dev/null; then
			ok "$n: selector reaches the gateway pods: $s"
		else
			fail "$n: selector $s does not match the pod labels $podlabels"
		fi
	done
	assert_eq "$n: HPA scales the Deployment" "Deployment/mcpgw" \
		"$(q '.[] | select(.kind == "HorizontalPodAutoscaler") | .spec.scaleTargetRef | .kind + "/" + .name')"
	assert_cmp "$n: replicas" "$(q "$D | .spec.replicas")" ">=" 2

	# the ConfigMap the Deployment mounts, at the path serve is given
	local cmname cfgpath keydir secname
	cmname=$(q "$D | .spec.template.spec.volumes[] | select(.configMap) | .configMap.name")
	jq -j ".[] | select(.kind == \"ConfigMap\" and .metadata.name == \"$cmname\") | .data[\"mcpgw.yaml\"]" "$J" >"$conf"
	[ -s "$conf" ] || die "$n: the Deployment's ConfigMap $cmname has no mcpgw.yaml"
	cmp -s "$conf" "$K/$n/mcpgw.yaml" && ok "$n: ConfigMap holds $n/mcpgw.yaml" ||
		fail "$n: the ConfigMap is not $n/mcpgw.yaml"
	cfgpath=$(q "$C | .volumeMounts[] | select(.name == \"config\") | .mountPath")
	assert_eq "$n: serve reads the mounted configuration" \
		"serve -c $cfgpath" "$(q "$C | .args | join(\" \")")"

	# the sealed key file: the Secret the pod mounts holds the operator's file
	secname=$(q "$D | .spec.template.spec.volumes[] | select(.secret) | .secret.secretName")
	keydir=$(q "$C | .volumeMounts[] | select(.name == \"session-keys\") | .mountPath")
	assert_eq "$n: the Secret holds session.keys" "$(cat "$K/base/session.keys")" \
		"$(q ".[] | select(.kind == \"Secret\" and .metadata.name == \"$secname\") | .data[\"session.keys\"]" | base64 -d)"
	local kf
	kf=$(yq -r '.sessions.key_file // empty' "$conf")
	if [ -n "$kf" ]; then
		assert_eq "$n: key_file is in the Secret's mount" "$keydir/session.keys" "$kf"
	fi

	# check-config on it, the key file where the pod would have it
	sed "s|$keydir/session.keys|$K/base/session.keys|" "$conf" >"$conf.local"
	"$MCPGW" check-config -c "$conf.local" >"$T_DIR/$n-check.out" 2>&1
	assert_eq "$n: the ConfigMap's configuration passes check-config ($(head -n 1 "$T_DIR/$n-check.out"))" 0 "$?"

	# ports: the listener's, everywhere
	local lport cport
	lport=$(yq -r '.listeners[0].address' "$conf" | sed 's/.*://')
	cport=$(q "$C | .ports[] | select(.name == \"http\") | .containerPort")
	assert_eq "$n: containerPort http is the listener port" "$lport" "$cport"
	for p in readinessProbe livenessProbe; do
		assert_match "$n: $p port is the listener's" "^(http|$lport)\$" "$(q "$C | .$p.httpGet.port")"
	done
	assert_match "$n: the Service targets it" "^(http|$lport)\$" \
		"$(q '.[] | select(.kind == "Service" and .metadata.name == "mcpgw") | .spec.ports[0].targetPort')"
	assert_eq "$n: prometheus.io/port" "$lport" \
		"$(q "$D | .spec.template.metadata.annotations[\"prometheus.io/port\"]")"

	# the pod's uid is the image's
	assert_eq "$n: runAsNonRoot" true "$(q "$D | .spec.template.spec.securityContext.runAsNonRoot")"
	assert_eq "$n: readOnlyRootFilesystem" true "$(q "$C | .securityContext.readOnlyRootFilesystem")"
	assert_eq "$n: runAsUser is the Dockerfile's USER" \
		"$(sed -n 's/^USER \([0-9]*\).*/\1/p' "$TOP_SRCDIR/packaging/docker/Dockerfile")" \
		"$(q "$D | .spec.template.spec.securityContext.runAsUser")"

	# drain: grace > preStop sleep + timeouts.shutdown
	local grace pre shut
	grace=$(q "$D | .spec.template.spec.terminationGracePeriodSeconds")
	pre=$(q "$C | .lifecycle.preStop.exec.command | if .[0] == \"/bin/sleep\" then .[1] else \"none\" end")
	shut=$(yq -r '.timeouts.shutdown // "10s"' "$conf" | sed 's/s$//')
	assert_match "$n: preStop sleeps (seconds)" '^[0-9]+$' "$pre"
	assert_cmp "$n: terminationGracePeriodSeconds > preStop + timeouts.shutdown" "$grace" ">" "$((pre + shut))"

	# the probe paths, on the gateway running this configuration
	READY_PATH=$(q "$C | .readinessProbe.httpGet.path")
	LIVE_PATH=$(q "$C | .livenessProbe.httpGet.path")
	METRICS_PATH=$(q "$D | .spec.template.metadata.annotations[\"prometheus.io/path\"]")
}

# one local replica for each server of the configuration
UP=()
for i in 0 1 2; do
	start_backend --era dual --id "k8s-upstream-$i" --record 200
	UP+=("$B_ADDR")
done

# run_overlay NAME: serve with the rendered configuration, upstreams on
# the local replica; GET the probe paths.
run_overlay() {
	local n=$1 conf=$T_DIR/$1-mcpgw.yaml.local
	local i
	for i in 0 1 2; do
		sed -i "s|http://mcp-server-$i\.mcp-server:8080|http://${UP[$i]}|" "$conf"
	done
	[ -n "${REDIS_URL:-}" ] && sed -i "s|redis://mcpgw-redis:6379|$REDIS_URL|" "$conf"
	assert_nomatch "$n: no cluster name left in the local copy" 'mcp-server-|mcpgw-redis' \
		"$(grep -v '^ *#' "$conf")"
	start_serve -c "$conf" --listen 127.0.0.1:0
	ready_ok() { req GET "http://$G_ADDR$READY_PATH"; [ "$CODE" = 200 ]; }
	poll_until 15 ready_ok
	assert_code "$n: readiness probe GET $READY_PATH" 200
	assert_eq "$n: readiness answer" '{"status":"ok"}' "$BODY"
	req GET "http://$G_ADDR$LIVE_PATH"
	assert_code "$n: liveness probe GET $LIVE_PATH" 200
	assert_eq "$n: liveness answer" '{"status":"ok"}' "$BODY"
	# the scrape path of the annotations: the gateway's metrics (the
	# test's client is loopback, so this also needs metrics: any to be
	# right for a pod IP: checked in the file)
	req GET "http://$G_ADDR$METRICS_PATH"
	assert_code "$n: the annotated scrape path GET $METRICS_PATH" 200
	assert_match "$n: it is the gateway's metrics" 'mcpgw_build_info' "$BODY"
	assert_eq "$n: admin.metrics lets a Prometheus in another pod scrape" any \
		"$(yq -r '.admin.metrics // "loopback"' "$conf")"
	# the gateway answered them itself: no replica saw either path
	local a seen
	for a in "${UP[@]}"; do
		seen=$(rec "$a" | jq -r --arg r "$READY_PATH" --arg l "$LIVE_PATH" \
			'[.requests[]? | select(.target == $r or .target == $l)] | length')
		assert_eq "$n: replica $a never saw the probe paths" 0 "$seen"
	done
	sf_stop_serve
}

check_overlay base
run_overlay base

check_overlay redis
assert_match "redis: has Redis" 'Deployment/mcpgw-redis.*Service/mcpgw-redis|Service/mcpgw-redis.*Deployment/mcpgw-redis' \
	"$(jq -r '[.[] | .kind + "/" + .metadata.name] | join(" ")' "$T_DIR/redis.json")"
assert_eq "redis: sessions in Redis" redis "$(yq -r '.sessions.store' "$T_DIR/redis-mcpgw.yaml")"
assert_eq "redis: at the overlay's Redis Service" "redis://mcpgw-redis:6379" \
	"$(yq -r '.sessions.redis.url' "$T_DIR/redis-mcpgw.yaml")"
start_redis
run_overlay redis
finish
