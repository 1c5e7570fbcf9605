#!/bin/sh
# The daemon as deployed (ops): --check-config, auth (Basic 401/200, tokens
# and their expiry), SIGHUP reload (a stream survives an unchanged reload, a
# bad config is rejected and the old one stays), the sd_notify sequence
# READY -> RELOADING -> READY -> STOPPING, SIGTERM exits 0 within a second
# with a client streaming, and TLS against a self-signed certificate.
cd "$(dirname "$0")/../.." || exit 2
T=ops_daemon
. tests/integ/lib/common.sh
BUILD=${VCAP_BUILD:-build}
NL=$BUILD/tools/notify_listen
PW=secret-pw

if ! command -v openssl >/dev/null; then
	skip setup "openssl missing (DEPS_TEST)"; exit 0
fi
HASH=$(openssl passwd -6 "$PW")
cat >"$TMP/v.conf" <<EOC
[server]
listen = 127.0.0.1:0
log_level = info
user = admin:$HASH
token_secret = 0123456789abcdef-integ
auth_view = basic,token
auth_control = basic
auth_status = basic
[camera front]
device = test:320x240@20:YUYV
idle_stop_ms = never
EOC

# --check-config: valid, then errors with their line numbers.
out=$("$VCAPD" --check-config --config "$TMP/v.conf" 2>&1); rc=$?
[ $rc = 0 ] && echo "$out" | grep -q '^\[camera front\]' && echo "$out" | grep -q 'redacted'
check check_config_ok $? "rc=$rc: $out"
printf '[server]\nlisten = 1\n[camera x]\nfps = 0\nbogus = 2\n' >"$TMP/bad.conf"
out=$("$VCAPD" --check-config --config "$TMP/bad.conf" 2>&1); rc=$?
[ $rc != 0 ] && echo "$out" | grep -q "bad.conf:2: listen" && echo "$out" | grep -q "bad.conf:4: fps" &&
	echo "$out" | grep -q "bad.conf:5: unknown key 'bogus'" && echo "$out" | grep -q "bad.conf:3: .*'device' is missing"
check check_config_errors $? "rc=$rc: $out"
"$VCAPD" --config "$TMP/bad.conf" >/dev/null 2>&1; rc=$?
[ $rc != 0 ]; check bad_config_refuses_start $? "rc=$rc"

# Start under a fake systemd notify socket.
if [ -x "$NL" ]; then
	"$NL" "$TMP/notify.sock" 20 >"$TMP/notify.log" 2>&1 &
	NLPID=$!; PIDS="$PIDS $NLPID"
	for i in $(seq 20); do [ -S "$TMP/notify.sock" ] && break; sleep 0.05; done
	export NOTIFY_SOCKET="$TMP/notify.sock"
fi
"$VCAPD" --config "$TMP/v.conf" >"$TMP/vcapd.log" 2>&1 &
VPID=$!; PIDS="$PIDS $VPID"
unset NOTIFY_SOCKET
P=$(logged_port "$TMP/vcapd.log" "$VPID") || { fail setup "$(tail -5 "$TMP/vcapd.log")"; exit 1; }
U="http://127.0.0.1:$P"
code() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@"; }

# Auth per class.
c1=$(code "$U/snapshot"); c2=$(code -u "admin:$PW" "$U/snapshot"); c3=$(code -u "admin:wrong" "$U/snapshot")
c4=$(code -u "admin:$PW" "$U/stream?fps=1" --max-time 1)
[ "$c1" = 401 ] && [ "$c2" = 200 ] && [ "$c3" = 401 ] && [ "$c4" = 200 ]
check auth_basic_view $? "none=$c1 right=$c2 wrong=$c3 stream=$c4"
c1=$(code -u "admin:$PW" "$U/?action=snapshot"); c2=$(code "$U/?action=snapshot"); c3=$(code "$U/state")
[ "$c1" = 200 ] && [ "$c2" = 401 ] && [ "$c3" = 401 ]; check auth_compat_urls $? "right=$c1 none=$c2 /state=$c3"
curl -s -D "$TMP/h401" -o /dev/null "$U/api/status"
[ "$(status "$TMP/h401")" = 401 ] && hdr "$TMP/h401" WWW-Authenticate | grep -q '^Basic realm="vcapd"'
check auth_www_authenticate $? "$(cat "$TMP/h401")"
c1=$(code "$U/api/status"); c2=$(code -u "admin:$PW" "$U/api/status")
[ "$c1" = 401 ] && [ "$c2" = 200 ]; check auth_basic_status $? "none=$c1 right=$c2"
TOK=$("$VCAPD" --config "$TMP/v.conf" --make-token view:60)
STOK=$("$VCAPD" --config "$TMP/v.conf" --make-token status:60)
c1=$(code "$U/snapshot?token=$TOK"); c2=$(code "$U/api/status?token=$TOK"); c3=$(code "$U/snapshot?token=$STOK")
c4=$(code "$U/snapshot?token=${TOK}x")
[ -n "$TOK" ] && [ "$c1" = 200 ] && [ "$c2" = 401 ] && [ "$c3" = 401 ] && [ "$c4" = 401 ]
check auth_token_scope $? "view-token snapshot=$c1 status=$c2; status-token snapshot=$c3; tampered=$c4"
# valid 4 s: a 1 s token expired before its first use on a loaded host
t0=$(date +%s)
ETOK=$("$VCAPD" --config "$TMP/v.conf" --make-token view:4)
c1=$(code "$U/snapshot?token=$ETOK")
while [ $(($(date +%s) - t0)) -lt 7 ]; do sleep 0.5; done
c2=$(code "$U/snapshot?token=$ETOK")
[ "$c1" = 200 ] && [ "$c2" = 401 ]; check auth_token_expiry $? "fresh=$c1 expired=$c2"

# Reload without a gap: a stream runs across SIGHUP of an unchanged config.
curl -s -N --max-time 4 -u "admin:$PW" "$U/stream" >"$TMP/stream.bin" 2>/dev/null &
CPID=$!
sleep 1.5; kill -HUP "$VPID"; sleep 0.3
before=$(grep -ac 'Content-Type: image/jpeg' "$TMP/stream.bin")
wait $CPID; crc=$?
after=$(grep -ac 'Content-Type: image/jpeg' "$TMP/stream.bin")
# judged on the camera's own numbering, not on parts per wall second (a
# busy host's client reads slower): the sequence never starts again (no
# restart of the camera) and goes on after the reload
seqok=$(tr -d '\r' <"$TMP/stream.bin" | awk '/^X-Frame-Seq: / { if (n++ && $2 <= p) bad++; p = $2 }
	END { print (n > 0 && !bad) ? "yes" : "no" }')
kill -0 "$VPID" 2>/dev/null && [ "$crc" = 28 ] && [ "$seqok" = yes ] && [ $((after - before)) -ge 10 ] &&
	grep -q 'reload: .* applied' "$TMP/vcapd.log"
check reload_keeps_stream $? "curl rc=$crc (28 = ran to --max-time), parts at reload+0.3s=$before, total=$after in 4 s (want >= 10 after), sequence rising throughout: $seqok"

# A bad config is rejected and the old one stays (auth still enforced).
cp "$TMP/v.conf" "$TMP/v.good"
echo "nonsense line" >>"$TMP/v.conf"
kill -HUP "$VPID"; sleep 0.3
c1=$(code -u "admin:$PW" "$U/snapshot"); c2=$(code "$U/snapshot")
kill -0 "$VPID" 2>/dev/null && grep -q 'v.conf:12: expected' "$TMP/vcapd.log" && grep -q 'rejected, the running config stays' "$TMP/vcapd.log" &&
	[ "$c1" = 200 ] && [ "$c2" = 401 ]
check reload_bad_rejected $? "alive=$(kill -0 $VPID 2>/dev/null && echo y) auth=$c1 open=$c2: $(tail -3 "$TMP/vcapd.log" | tr '\n' ' ')"
cp "$TMP/v.good" "$TMP/v.conf"

# SIGTERM with a client streaming: exit 0 within a second.
curl -s -N --max-time 10 -u "admin:$PW" "$U/stream" >/dev/null 2>&1 &
CPID=$!; PIDS="$PIDS $CPID"
sleep 0.5
t0=$(date +%s%N); kill -TERM "$VPID"; wait "$VPID"; rc=$?; t1=$(date +%s%N)
ms=$(( (t1 - t0) / 1000000 ))
[ "$rc" = 0 ] && [ "$ms" -lt 1000 ]; check sigterm_fast $? "rc=$rc in $ms ms"

if [ -x "$NL" ]; then
	wait "$NLPID" 2>/dev/null
	seq=$(sed -n 's/^\(READY=1\|RELOADING=1\|STOPPING=1\).*/\1/p' "$TMP/notify.log" | tr '\n' ' ')
	[ "$seq" = "READY=1 RELOADING=1 READY=1 RELOADING=1 READY=1 STOPPING=1 " ] &&
		grep -q "^STATUS=1 cam (" "$TMP/notify.log" && grep -q '^RELOADING=1|MONOTONIC_USEC=[0-9]' "$TMP/notify.log"
	check notify_sequence $? "got: $(tr '\n' ' ' <"$TMP/notify.log")"
else
	fail notify_sequence "$NL not built"
fi

# TLS with a self-signed certificate made here.
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TMP/key.pem" -out "$TMP/cert.pem" -days 1 \
	-subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 >/dev/null 2>&1
printf '[server]\nlisten = 127.0.0.1:0\ntls_cert = %s\ntls_key = %s\n[camera a]\ndevice = test:160x120@10:YUYV\n' \
	"$TMP/cert.pem" "$TMP/key.pem" >"$TMP/tls.conf"
"$VCAPD" --config "$TMP/tls.conf" >"$TMP/tls.log" 2>&1 &
VPID=$!; PIDS="$PIDS $VPID"
P2=$(logged_port "$TMP/tls.log" "$VPID")
c1=$(curl -s -o "$TMP/tls.jpg" -w '%{http_code}' --max-time 5 --cacert "$TMP/cert.pem" "https://127.0.0.1:$P2/snapshot")
c2=$(curl -s -o /dev/null -w '%{http_code}' --max-time 3 "http://127.0.0.1:$P2/snapshot")
c3=$(curl -s -o /dev/null -w '%{http_code}' --max-time 3 "https://127.0.0.1:$P2/snapshot")
magic=$(head -c 2 "$TMP/tls.jpg" | od -An -tx1 | tr -d ' ')
[ "$c1" = 200 ] && [ "$magic" = ffd8 ] && [ "$c2" != 200 ] && [ "$c3" = 000 ]
check tls_self_signed $? "https+cacert=$c1 magic=$magic plain-http=$c2 https-unverified=$c3"
stop_vcapd
