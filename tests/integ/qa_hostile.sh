#!/bin/sh
# Hostile requests of issue 14 against the test pattern: a NUL (%00) in the
# path, oversized request lines and headers, a URL that tries to forge a log
# line through "%0a", raw snapshot headers against the body, and the TLS
# versions a listener accepts (1.2/1.3 by default, 1.0/1.1 only when
# tls_priorities allows them). The daemon picks its own ports.
cd "$(dirname "$0")/../.." || exit 2
T=qa_hostile
. tests/integ/lib/common.sh

if ! start_vcapd_any --device test:320x240@15:YUYV --log-level debug; then
	fail start "daemon did not come up"; exit 1
fi
U=http://127.0.0.1:$VPORT

# expect WANT NAME CURL-ARGS...: status WANT (a list like "400|431" is allowed).
expect() {
	_want=$1 _name=$2; shift 2
	_code=$(curl -s -m 10 -o "$TMP/b" -w '%{http_code}' "$@")
	echo "|$_want|" | grep -q "|$_code|"
	check "$_name" $? "got $_code (want $_want): $(head -c 120 "$TMP/b" | tr -d '\r\n')"
}

# 1. A NUL in the path: decoding would end the path there and serve
# /snapshot or /index.html; it is a 400 instead. Encoded elsewhere is fine.
expect 400 nul_snapshot "$U/snapshot%00.jpg"
expect 400 nul_index "$U/index.html%00"
expect 400 nul_api "$U/api/status%00/x"
expect 200 encoded_path_ok "$U/api/statu%73"
expect 200 nul_in_query_is_not_path "$U/api/status?x=%00"
grep -q '"error":"NUL byte' "$TMP/b" 2>/dev/null; curl -s -o "$TMP/b" "$U/snapshot%00.jpg"
grep -q '"error":"NUL byte' "$TMP/b"
check nul_json_error $? "$(head -c 120 "$TMP/b")"

# 2. Header and request line limits (8 KiB a line, 16 KiB in all).
a4k=$(head -c 4096 /dev/zero | tr '\0' a)
a9k=$(head -c 9000 /dev/zero | tr '\0' a)
a64k=$(head -c 65536 /dev/zero | tr '\0' a)
expect 200 header_4k -H "X-Pad: $a4k" "$U/api/status"
expect "431|400" header_64k -H "X-Pad: $a64k" "$U/api/status"
expect 431 header_9k_line -H "X-Pad: $a9k" "$U/api/status"
expect 431 headers_20k_total -H "X-A: $a4k" -H "X-B: $a4k" -H "X-C: $a4k" -H "X-D: $a4k" \
	-H "X-E: $a4k" "$U/api/status"
expect 414 target_9k "$U/api/status?pad=$a9k"
expect 200 after_limits "$U/api/status"

# 3. Log lines: "%0a" in a URL must not start a line of its own.
expect 404 forge_request "$U/no-such%0a2001-01-01%2000:00:00.000%20error%20http:%20FORGED%0d"
sleep 0.3
n_forged=$(grep -c '^2001-01-01' "$VLOG")
grep -q 'no-such\\n2001-01-01 00:00:00.000 error http: FORGED\\r' "$VLOG"
check log_not_forged $(( $? + n_forged )) "forged lines: $n_forged; $(grep FORGED "$VLOG" | head -2)"

# 4. Raw snapshots: the format headers describe the body actually sent.
bad=0
for q in "format=YUYV" "format=NV12&size=160x120" "format=RGB24&size=64x48" "format=YU12&rotate=90"; do
	curl -s -m 10 -D "$TMP/h" -o "$TMP/raw" "$U/raw?$q"
	len=$(wc -c <"$TMP/raw")
	[ "$(hdr "$TMP/h" X-Sizeimage)" = "$len" ] || { bad=$((bad + 1)); echo "  $q: X-Sizeimage $(hdr "$TMP/h" X-Sizeimage) body $len"; }
done
check raw_sizeimage_is_body $bad "$bad of 4 disagree"
expect 200 alive "$U/api/status"
stop_vcapd
check clean_exit $? "exit status"

# 5. TLS versions.
if ! command -v openssl >/dev/null; then
	skip tls "openssl missing (DEPS_TEST)"; exit 0
fi
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TMP/key.pem" -out "$TMP/cert.pem" -days 1 \
	-subj /CN=127.0.0.1 >/dev/null 2>&1
# tls_start CONF-EXTRA: a TLS daemon on a port of its own; sets TPID, TPORT.
tls_start() {
	printf '[server]\ntls_cert = %s\ntls_key = %s\n%s\n[camera a]\ndevice = test:160x120@10:YUYV\n' \
		"$TMP/cert.pem" "$TMP/key.pem" "$1" >"$TMP/tls.conf"
	"$VCAPD" --config "$TMP/tls.conf" --listen 127.0.0.1:0 >"$TMP/tls.log" 2>&1 &
	TPID=$!
	PIDS="$PIDS $TPID"
	TPORT=""
	for _i in $(seq 50); do
		TPORT=$(sed -n 's/.*listening on 127\.0\.0\.1:0 (port \([0-9]*\)).*/\1/p' "$TMP/tls.log" | head -1)
		[ -n "$TPORT" ] && break
		sleep 0.1
	done
}
# proto VERSION-FLAG: the protocol of the session s_client established, or
# "none" when the handshake failed ("Cipher is (NONE)"; the session block
# names the attempted protocol even then; TLS 1.3 prints no session block,
# its "New, TLSv1.3" line names it). The client allows old versions
# (SECLEVEL=0), so only the server refuses.
proto() {
	echo | timeout 10 openssl s_client -connect "127.0.0.1:$TPORT" "$1" -cipher 'DEFAULT:@SECLEVEL=0' \
		>"$TMP/sc" 2>/dev/null
	if grep -q '^New, .*Cipher is (NONE)' "$TMP/sc" || ! grep -q '^New, ' "$TMP/sc"; then
		echo none
	else
		{ sed -n 's/^ *Protocol *: *//p' "$TMP/sc"; sed -n 's/^New, \(TLSv1\.3\),.*/\1/p' "$TMP/sc"; } |
			head -1
	fi
}
tls_start ""
p11=$(proto -tls1_1) p10=$(proto -tls1) p12=$(proto -tls1_2) p13=$(proto -tls1_3)
[ "$p11" = none ] && [ "$p10" = none ] && [ "$p12" = TLSv1.2 ] && [ "$p13" = TLSv1.3 ]
check tls_default_12_13_only $? "1.0: $p10, 1.1: $p11, 1.2: $p12, 1.3: $p13"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 --cacert "$TMP/cert.pem" "https://127.0.0.1:$TPORT/api/status")
check tls_serves $([ "$code" = 200 ]; echo $?) "https /api/status: $code"
kill "$TPID" 2>/dev/null; wait "$TPID" 2>/dev/null
# the key works both ways: a listener told to allow 1.1 does (so the client
# above could speak it and the refusal was the default's)
tls_start "tls_priorities = NORMAL:-VERS-ALL:+VERS-TLS1.2:+VERS-TLS1.1"
grep -q 'TLS priorities: NORMAL:-VERS-ALL:+VERS-TLS1.2:+VERS-TLS1.1' "$TMP/tls.log"
check tls_priorities_logged $? "$(grep -i 'priorit' "$TMP/tls.log")"
p11=$(proto -tls1_1) p13=$(proto -tls1_3)
[ "$p11" = TLSv1.1 ] && [ "$p13" = none ]
check tls_priorities_key $? "tls_priorities allowing 1.1/1.2: 1.1: $p11, 1.3: $p13"
kill "$TPID" 2>/dev/null; wait "$TPID" 2>/dev/null
tls_start "tls_priorities = NOT-A-PRIORITY"
sleep 0.5
kill -0 "$TPID" 2>/dev/null; alive=$?
grep -qi 'priorit' "$TMP/tls.log"
check tls_bad_priorities_refused $(( $? + (1 - alive) )) "$(grep -i 'priorit\|listen' "$TMP/tls.log" | head -2)"
