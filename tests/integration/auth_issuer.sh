#!/usr/bin/env bash
# auth_issuer.sh - the test issuer (tests/tools/mgw-test-issuer) checked
# against OpenSSL's command line, independently of the gateway's
# verifier: its keys are the keys openssl reads, its JWKS members are
# those keys' public numbers, and every token it signs (RS256, PS256 with
# a 32-byte salt, ES256 as R || S, EdDSA, HS256) verifies with `openssl
# dgst` / `pkeyutl` / `mac` over the signing input, while a changed input
# does not.
. "$(dirname "$0")/lib.sh"
watchdog 120
require_tools openssl jq basenc xxd cmp sha256sum
ISSUER=$TOP_BUILDDIR/tests/tools/mgw-test-issuer
[ -x "$ISSUER" ] || die "$ISSUER not built (make check builds it)"
cd "$T_DIR" || die "no temp dir"

# base64url (unpadded) on stdin to bytes on stdout
b64d() {
	local s
	s=$(cat)
	while [ $((${#s} % 4)) -ne 0 ]; do s="$s="; done
	printf '%s' "$s" | basenc --base64url -d
}
hex() { xxd -p | tr -d '\n' | tr a-f A-F; }

cat >claims.json <<'EOF'
{"iss":"https://issuer.test","aud":"https://mcp.test/mcp","sub":"alice","scope":"mcp","exp":4102444800}
EOF

for alg in RS256 PS256 ES256 EdDSA; do
	"$ISSUER" keygen "$alg" "kid-$alg" "$alg.pem" || fail "$alg: keygen failed"
	openssl pkey -in "$alg.pem" -pubout -out "$alg.pub" 2>/dev/null ||
		fail "$alg: openssl cannot read the key"
	openssl pkey -pubin -in "$alg.pub" -outform DER -out "$alg.spki" 2>/dev/null
	text=$(openssl pkey -pubin -in "$alg.pub" -text_pub -noout 2>/dev/null)
	case $alg in
	RS256 | PS256) want='Public-Key: (2048 bit)' ;;
	ES256) want='prime256v1' ;;
	EdDSA) want='ED25519 Public-Key' ;;
	esac
	if grep -qF "$want" <<<"$text"; then ok "$alg: openssl reads a $want key"; else
		fail "$alg: key is not $want: $(head -2 <<<"$text")"; fi
done

# the JWKS: kids recorded at keygen, an override, none, an alg member
"$ISSUER" jwks RS256.pem PS256.pem:ps-override:PS256 ES256.pem EdDSA.pem: >jwks.json ||
	fail "jwks failed"
[ "$(jq -r '[.keys[] | .kid // "-"] | join(",")' jwks.json)" = "kid-RS256,ps-override,kid-ES256,-" ] &&
	ok "jwks: kids from keygen, overridden, left out" || fail "jwks kids: $(jq -c '[.keys[].kid]' jwks.json)"
[ "$(jq -r '[.keys[] | .alg // "-"] | join(",")' jwks.json)" = "-,PS256,-,-" ] &&
	ok "jwks: alg member only where asked" || fail "jwks algs: $(jq -c '[.keys[].alg]' jwks.json)"
[ "$(jq -r '[.keys[] | .kty + "/" + (.crv // "") + "/" + .use] | join(",")' jwks.json)" = "RSA//sig,RSA//sig,EC/P-256/sig,OKP/Ed25519/sig" ] &&
	ok "jwks: kty, crv, use" || fail "jwks types: $(jq -c '[.keys[] | [.kty, .crv, .use]]' jwks.json)"
# the public numbers are the keys' own
mod=$(openssl rsa -pubin -in RS256.pub -modulus -noout 2>/dev/null | sed 's/^Modulus=//')
[ "$(jq -r '.keys[0].n' jwks.json | b64d | hex)" = "$mod" ] && [ "$(jq -r '.keys[0].e' jwks.json)" = AQAB ] &&
	ok "jwks: RSA n and e are the key's modulus and exponent" || fail "jwks: RSA n differs from openssl's modulus"
ec=$(tail -c 65 ES256.spki | hex)
[ "04$(jq -r '.keys[2].x' jwks.json | b64d | hex)$(jq -r '.keys[2].y' jwks.json | b64d | hex)" = "$ec" ] &&
	ok "jwks: EC x and y are the key's point" || fail "jwks: EC point differs"
[ "$(jq -r '.keys[3].x' jwks.json | b64d | hex)" = "$(tail -c 32 EdDSA.spki | hex)" ] &&
	ok "jwks: Ed25519 x is the key's public key" || fail "jwks: Ed25519 x differs"

# splits token $1 into input (h.p), sig.bin, header.json, payload.bin
split_token() {
	local h p s
	IFS=. read -r h p s <<<"$1"
	printf '%s.%s' "$h" "$p" >input
	printf '%s' "$s" | b64d >sig.bin
	printf '%s' "$h" | b64d >header.json
	printf '%s' "$p" | b64d >payload.bin
	printf '%s.%s!' "$h" "$p" >input.bad
}

# verify ALG PUBKEY INPUT: 0 if openssl accepts sig.bin as ALG's signature
verify() {
	local alg=$1 pub=$2 in=$3
	case $alg in
	RS256) openssl dgst -sha256 -verify "$pub" -signature sig.bin "$in" ;;
	PS256) openssl dgst -sha256 -sigopt rsa_padding_mode:pss \
		-sigopt rsa_pss_saltlen:32 -sigopt rsa_mgf1_md:sha256 \
		-verify "$pub" -signature sig.bin "$in" ;;
	ES256)
		# R || S into the DER ECDSA-Sig-Value openssl verifies
		local r s
		r=$(head -c 32 sig.bin | hex)
		s=$(tail -c 32 sig.bin | hex)
		printf 'asn1=SEQUENCE:sig\n[sig]\nr=INTEGER:0x%s\ns=INTEGER:0x%s\n' "$r" "$s" >der.cnf
		openssl asn1parse -genconf der.cnf -out sig.der -noout &&
			openssl dgst -sha256 -verify "$pub" -signature sig.der "$in" ;;
	EdDSA) openssl pkeyutl -verify -pubin -inkey "$pub" -rawin -in "$in" -sigfile sig.bin ;;
	esac
}

for alg in RS256 PS256 ES256 EdDSA; do
	tok=$("$ISSUER" sign "$alg.pem" "$alg" "kid-$alg" claims.json) || { fail "$alg: sign failed"; continue; }
	split_token "$tok"
	[ "$(jq -c . header.json)" = "{\"alg\":\"$alg\",\"typ\":\"JWT\",\"kid\":\"kid-$alg\"}" ] &&
		ok "$alg: header names alg and kid" || fail "$alg: header $(cat header.json)"
	cmp -s payload.bin claims.json && ok "$alg: payload is the claims file byte for byte" ||
		fail "$alg: payload differs from the claims"
	case $alg in
	ES256 | EdDSA) [ "$(stat -c %s sig.bin)" = 64 ] && ok "$alg: 64-byte signature" ||
		fail "$alg: signature of $(stat -c %s sig.bin) bytes" ;;
	*) [ "$(stat -c %s sig.bin)" = 256 ] && ok "$alg: 256-byte signature" ||
		fail "$alg: signature of $(stat -c %s sig.bin) bytes" ;;
	esac
	if verify "$alg" "$alg.pub" input >verify.out 2>&1; then ok "$alg: openssl verifies the signature"; else
		fail "$alg: openssl refuses the signature: $(cat verify.out)"; fi
	if verify "$alg" "$alg.pub" input.bad >/dev/null 2>&1; then fail "$alg: openssl verifies a changed input"; else
		ok "$alg: a changed input does not verify"; fi
done
# PS256 is PSS with exactly 32 bytes of salt, not PKCS #1 v1.5; RS256 the
# other way round
split_token "$("$ISSUER" sign PS256.pem PS256 k claims.json)"
if openssl dgst -sha256 -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:20 \
	-verify PS256.pub -signature sig.bin input >/dev/null 2>&1 ||
	verify RS256 PS256.pub input >/dev/null 2>&1; then
	fail "PS256: verifies with a 20-byte salt or as RS256"
else ok "PS256: neither a 20-byte salt nor PKCS #1 v1.5 verifies"; fi
split_token "$("$ISSUER" sign RS256.pem RS256 k claims.json)"
if verify PS256 RS256.pub input >/dev/null 2>&1; then fail "RS256 verifies as PSS"; else
	ok "RS256: does not verify as PS256"; fi

# kid "" leaves the kid out; claims from stdin
tok=$("$ISSUER" sign EdDSA.pem EdDSA "" - <claims.json)
split_token "$tok"
[ "$(jq -c . header.json)" = '{"alg":"EdDSA","typ":"JWT"}' ] && verify EdDSA EdDSA.pub input >/dev/null 2>&1 &&
	ok "sign with kid \"\" and claims on stdin" || fail "kid-less token: $(cat header.json)"

# HS256 keyed with the RSA public key's PEM (the confusion attack's token)
tok=$("$ISSUER" sign-hs256 RS256.pub claims.json kid-RS256)
split_token "$tok"
mac=$(openssl mac -digest SHA256 -macopt "hexkey:$(xxd -p RS256.pub | tr -d '\n')" -in input HMAC 2>/dev/null)
[ "$(jq -r .alg header.json)" = HS256 ] && [ "$(hex <sig.bin)" = "$mac" ] &&
	ok "sign-hs256: the HMAC-SHA256 of the input keyed with the file" || fail "sign-hs256: MAC differs"
tok=$("$ISSUER" sign-none claims.json)
[ "${tok: -1}" = . ] && [ "$(printf '%s' "${tok%%.*}" | b64d | jq -r .alg)" = none ] &&
	ok "sign-none: an unsigned token" || fail "sign-none: $tok"

# digest: the SHA-256 of the token's bytes
d=$("$ISSUER" digest "s3cret-token")
[ "$d" = "sha256:$(printf '%s' s3cret-token | sha256sum | cut -d' ' -f1)" ] &&
	ok "digest: sha256:HEX of the token" || fail "digest: $d"

# bad usage: exit 2 with a message
for args in "keygen HS256 k x.pem" "sign RS256.pem ES256 k claims.json" \
	"sign missing.pem RS256 k claims.json" "jwks missing.pem" "frobnicate" ""; do
	# shellcheck disable=SC2086
	"$ISSUER" $args >out 2>err
	rc=$?
	[ "$rc" = 2 ] && [ -s err ] && [ ! -s out ] && ok "'$args': exit 2 with a message" ||
		fail "'$args': exit $rc, stderr $(head -c 200 err)"
done
finish
