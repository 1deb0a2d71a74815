# redis_tls_lib.sh - the test PKI of the Redis TLS tests (sourced after
# lib.sh, by redis_tls.sh and redis_sentinel_tls.sh): certificates made
# with openssl in $T_DIR/pki, and the TLS lines of a redis-server or
# sentinel configuration.

C=$T_DIR/pki
mkdir -p "$C"

# mkcert NAME CN SIGNER-NAME|self [SAN]: $C/NAME.key and $C/NAME.pem, an
# EC P-256 key and its certificate, signed by $C/SIGNER-NAME (or a
# self-signed CA); openssl's output goes to $C/openssl.err.
mkcert() {
	local n=$1 cn=$2 signer=$3 san=${4:-}
	timeout 30 openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$C/$n.key" -out "$C/$n.csr" -subj "/CN=$cn" >>"$C/openssl.err" 2>&1 || return 1
	local ext=()
	if [ -n "$san" ]; then
		printf 'subjectAltName=%s\n' "$san" >"$C/$n.ext"
		ext=(-extfile "$C/$n.ext")
	fi
	if [ "$signer" = self ]; then
		printf 'basicConstraints=critical,CA:TRUE\nkeyUsage=keyCertSign,cRLSign\n' >"$C/$n.ext"
		timeout 30 openssl x509 -req -in "$C/$n.csr" -signkey "$C/$n.key" -days 2 \
			-extfile "$C/$n.ext" -out "$C/$n.pem" >>"$C/openssl.err" 2>&1
	else
		timeout 30 openssl x509 -req -in "$C/$n.csr" -CA "$C/$signer.pem" -CAkey "$C/$signer.key" \
			-CAcreateserial -days 2 "${ext[@]}" -out "$C/$n.pem" >>"$C/openssl.err" 2>&1
	fi
}

# tls_pki: the test CA (ca), a foreign CA (other), the servers'
# certificate for localhost and 127.0.0.1 (server, also the client
# certificate redis-server and sentinel present to each other) and a
# client certificate (client); dies when openssl fails.
tls_pki() {
	mkcert ca "itest CA" self &&
		mkcert other "another CA" self &&
		mkcert server localhost ca "DNS:localhost,IP:127.0.0.1" &&
		mkcert client "itest client" ca ||
		die "openssl could not make the certificates: $(tail -n 5 "$C/openssl.err")"
}

# tls_server_conf: the lines every TLS server (redis, sentinel) shares.
# Client certificates are required (tls-auth-clients defaults to yes).
tls_server_conf() {
	printf 'bind 127.0.0.1\ntls-cert-file %s\ntls-key-file %s\ntls-ca-cert-file %s\n' \
		"$C/server.pem" "$C/server.key" "$C/ca.pem"
}
