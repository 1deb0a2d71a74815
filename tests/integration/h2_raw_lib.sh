# h2_raw_lib.sh - raw HTTP/2 frames for the integration tests (sourced
# after lib.sh): what no client tool sends on purpose, e.g. streams over
# the server's limit after acknowledging it, or a PING flood.  Needs xxd.

# h2_raw ADDR LABEL HEX: connects to ADDR (HOST:PORT, plain h2c), sends the
# bytes, reads until the server closes (10 s at most), and counts the
# frames received: RAW_HEADERS (HEADERS), RAW_REFUSED (RST_STREAM
# REFUSED_STREAM), RAW_GOAWAY (the first GOAWAY's error code, or "none").
h2_raw() {
	local addr=$1 label=$2 hex=$3 h off=0 n=0 len type pl
	RAW_HEADERS=0 RAW_REFUSED=0 RAW_GOAWAY=none
	exec 3<>"/dev/tcp/${addr%:*}/${addr##*:}" || { fail "$label: cannot connect to $addr"; return 1; }
	printf '%s' "$hex" | xxd -r -p >&3 2>/dev/null
	timeout 10 cat <&3 >"$T_DIR/$label.raw"
	exec 3<&- 3>&-
	h=$(xxd -p "$T_DIR/$label.raw" | tr -d '\n')
	while [ $((off + 18)) -le ${#h} ] && [ "$n" -lt 10000 ]; do
		len=$((16#${h:off:6}))
		type=${h:off+6:2}
		pl=${h:off+18:len*2}
		case $type in
		01) RAW_HEADERS=$((RAW_HEADERS + 1)) ;;
		03) [ "$((16#${pl:0:8}))" -eq 7 ] && RAW_REFUSED=$((RAW_REFUSED + 1)) ;;
		07) [ "$RAW_GOAWAY" = none ] && RAW_GOAWAY=$((16#${pl:8:8})) ;;
		esac
		off=$((off + 18 + len * 2))
		n=$((n + 1))
	done
}

# The client preface, an empty SETTINGS and the ACK of the server's.
H2_PREFACE=505249202a20485454502f322e300d0a0d0a534d0d0a0d0a
H2_SETTINGS_ACKED=${H2_PREFACE}000000040000000000000000040100000000
# GOAWAY(NO_ERROR) from the client: the server closes once it answered.
H2_CLIENT_GOAWAY=0000080700000000000000000000000000
# h2_get_healthz SID: HEADERS (END_STREAM, END_HEADERS) for GET /healthz.
h2_get_healthz() { printf '00000f0105%08x828604082f6865616c74687a010174' "$1"; }
# h2_pings N: N PING frames.
h2_pings() { printf '0000080600000000003132333435363738%.0s' $(seq "$1"); }

# h2_check_limits ADDR LIMIT WHO: streams over LIMIT opened after the
# SETTINGS ACK are refused one by one (the others answered, no GOAWAY
# from the server); a PING flood gets GOAWAY(ENHANCE_YOUR_CALM = 11).
h2_check_limits() {
	local addr=$1 limit=$2 who=$3 total=$(($2 + 5)) hex i
	hex=$H2_SETTINGS_ACKED
	for i in $(seq 0 $((total - 1))); do hex+=$(h2_get_healthz $((2 * i + 1))); done
	h2_raw "$addr" "$who-refuse" "$hex$H2_CLIENT_GOAWAY"
	assert_eq "$who: after the SETTINGS ACK: no GOAWAY from the server" none "$RAW_GOAWAY"
	assert_eq "$who: after the SETTINGS ACK: $total streams each answered or refused" \
		"$total" "$((RAW_HEADERS + RAW_REFUSED))"
	assert_match "$who: after the SETTINGS ACK: streams over $limit refused (got $RAW_REFUSED)" \
		'^[1-9][0-9]*$' "$RAW_REFUSED"
	h2_raw "$addr" "$who-flood" "$H2_SETTINGS_ACKED$(h2_get_healthz 1)$(h2_pings 1500)"
	assert_eq "$who: PING flood: GOAWAY ENHANCE_YOUR_CALM" 11 "$RAW_GOAWAY"
}
