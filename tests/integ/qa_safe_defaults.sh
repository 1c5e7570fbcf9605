#!/bin/sh
# Safe defaults against DNS rebinding and half-configured auth (issue 14):
# a foreign Host name is refused (421) while IP literals, localhost and
# allowed_hosts names pass; control PUTs from a non-loopback peer are refused
# (403) while auth_control is unset, allowed from loopback, and allowed from
# the network with an explicit auth_control = none; auth_view alone protects
# control writes too; start-up warnings name every class left open on a
# non-loopback listen.
cd "$(dirname "$0")/../.." || exit 2
T=qa_safe_defaults
. tests/integ/lib/common.sh
code() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@"; }
put() { curl -s -o "$TMP/put.out" -w '%{http_code}' --max-time 5 -X PUT --data-binary '{}' "$@"; }
# A non-loopback address of this machine (the network side), if any: a
# global-scope one from ip (make test's ASan lane puts one on lo in its own
# network namespace, where hostname -I lists nothing), else hostname -I's.
NL=$( { ip -4 -o addr show scope global 2>/dev/null | awk '{ print $4 }' | cut -d/ -f1
	hostname -I 2>/dev/null | tr ' ' '\n'; } | grep -v '^127\.' | grep -v ':' | grep . | head -1)
# nl_port LOG: the port the daemon picked for $NL:0.
nl_port() { sed -n "s/.*listening on $NL:0 (port \([0-9]*\)).*/\1/p" "$1" | head -1; }

# 1. No config at all.
if [ -n "$NL" ]; then set -- --listen "$NL:0"; else set --; fi
start_vcapd_any --device test:320x240@10 "$@" || { fail start "vcapd did not start"; exit 1; }
U="http://127.0.0.1:$VPORT"
c1=$(code -H "Host: rebind.attacker.example:$VPORT" "$U/api/status")
c2=$(code -H "Host: rebind.attacker.example" "$U/snapshot")
c3=$(code -H "Host: rebind.attacker.example:$VPORT" "$U/")
c4=$(put -H "Host: rebind.attacker.example:$VPORT" "$U/api/cams/0/controls")
curl -s --max-time 5 -H "Host: rebind.attacker.example:$VPORT" "$U/api/status" >"$TMP/421.json"
[ "$c1" = 421 ] && [ "$c2" = 421 ] && [ "$c3" = 421 ] && [ "$c4" = 421 ] && grep -q '"status":421' "$TMP/421.json"
check host_foreign_refused $? "status=$c1 snapshot=$c2 page=$c3 put=$c4 body=$(cat "$TMP/421.json")"
c1=$(code -H "Host: localhost:$VPORT" "$U/api/status")
c2=$(code -H "Host: 127.0.0.1:$VPORT" "$U/api/status")
c3=$(code -H "Host: [::1]:$VPORT" "$U/api/status")
c4=$(code -H "Host: LocalHost." "$U/api/status")
c5=$(code "$U/api/status")
c6=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 --http1.0 -H 'Host:' "$U/api/status")
[ "$c1" = 200 ] && [ "$c2" = 200 ] && [ "$c3" = 200 ] && [ "$c4" = 200 ] && [ "$c5" = 200 ] && [ "$c6" = 200 ]
check host_local_accepted $? "localhost=$c1 127.0.0.1=$c2 [::1]=$c3 LocalHost.=$c4 default=$c5 http1.0-no-host=$c6"
c1=$(put "$U/api/cams/0/controls")
[ "$c1" = 200 ] || [ "$c1" = 400 ]; check put_loopback_allowed $? "PUT from 127.0.0.1 reached the handler: $c1 $(cat "$TMP/put.out")"
if [ -n "$NL" ]; then
	NP=$(nl_port "$VLOG"); N="http://$NL:$NP"
	c1=$(put "$N/api/cams/0/controls"); body=$(cat "$TMP/put.out")
	c2=$(put "$N/api/cams/0/signal")
	c3=$(code "$N/api/status"); c4=$(code "$N/snapshot")
	[ "$c1" = 403 ] && [ "$c2" = 403 ] && [ "$c3" = 200 ] && [ "$c4" = 200 ] && echo "$body" | grep -q auth_control
	check put_network_refused $? "from $NL: controls=$c1 signal=$c2 ($body) status=$c3 snapshot=$c4"
	w=$(grep -c 'is open to anyone' "$VLOG"); r=$(grep -c 'control writes from non-loopback peers are refused' "$VLOG")
	grep -q "listen $NL:0: view .* is open to anyone" "$VLOG" &&
		grep -q "listen $NL:0: status .* is open to anyone" "$VLOG" && [ "$w" = 2 ] && [ "$r" = 1 ]
	check startup_warnings $? "open-warnings=$w refused-notes=$r: $(grep "listen $NL" "$VLOG" | tr '\n' '|')"
else
	skip put_network_refused "no non-loopback IPv4 address on this machine"
	skip startup_warnings "no non-loopback IPv4 address on this machine"
fi
grep -q 'is open to anyone.*127.0.0.1' "$VLOG"; [ $? != 0 ]
check no_warning_for_loopback $? "$(grep 'open to anyone' "$VLOG" | head -2)"
stop_vcapd

# 2. auth_view alone (no auth_control): control writes need the password too.
PW=pw-view
HASH=$(openssl passwd -6 "$PW")
cat >"$TMP/v.conf" <<EOF
[server]
user = admin:$HASH
auth_view = basic
allowed_hosts = cam.example.org *.home.arpa
[camera 0]
device = test:320x240@10
EOF
chk=$("$VCAPD" --config "$TMP/v.conf" --check-config 2>&1)
echo "$chk" | grep -q '^auth_control = basic$'; check check_config_inherits $? "$(echo "$chk" | grep auth_)"
if [ -n "$NL" ]; then set -- --listen "$NL:0"; else set --; fi
start_vcapd_any --config "$TMP/v.conf" "$@" || { fail start2 "vcapd did not start"; exit 1; }
U="http://127.0.0.1:$VPORT"
c1=$(put "$U/api/cams/0/controls"); c2=$(put -u "admin:$PW" "$U/api/cams/0/controls")
c3=$(put -u "admin:wrong" "$U/api/cams/0/controls")
[ "$c1" = 401 ] && { [ "$c2" = 200 ] || [ "$c2" = 400 ]; } && [ "$c3" = 401 ]
check partial_auth_protects_put $? "none=$c1 right=$c2 wrong=$c3"
c1=$(code "$U/api/status"); c2=$(code "$U/snapshot")
[ "$c1" = 200 ] && [ "$c2" = 401 ]; check partial_auth_status_open $? "status=$c1 snapshot=$c2"
c1=$(code -H "Host: cam.example.org:$VPORT" "$U/api/status"); c2=$(code -H "Host: a.home.arpa" "$U/api/status")
c3=$(code -H "Host: home.arpa" "$U/api/status"); c4=$(code -H "Host: cam.example.org.evil.example" "$U/api/status")
[ "$c1" = 200 ] && [ "$c2" = 200 ] && [ "$c3" = 421 ] && [ "$c4" = 421 ]
check allowed_hosts $? "cam.example.org=$c1 a.home.arpa=$c2 home.arpa=$c3 suffix-trick=$c4"
c1=$(code -u "admin:$PW" -H "Host: rebind.attacker.example" "$U/snapshot")
[ "$c1" = 421 ]; check host_checked_with_auth $? "with credentials, foreign Host: $c1"
if [ -n "$NL" ]; then
	NP=$(nl_port "$VLOG"); N="http://$NL:$NP"
	c1=$(put -u "admin:$PW" "$N/api/cams/0/controls"); c2=$(put "$N/api/cams/0/controls")
	{ [ "$c1" = 200 ] || [ "$c1" = 400 ]; } && [ "$c2" = 401 ]
	check put_network_with_auth $? "from $NL: right=$c1 none=$c2"
	grep -q "listen $NL:0: status .* is open to anyone .*(set auth_status)" "$VLOG" &&
		! grep -q "listen $NL:0: view" "$VLOG" && ! grep -q "listen $NL:0: control" "$VLOG"
	check startup_warnings_partial $? "$(grep "listen $NL" "$VLOG" | tr '\n' '|')"
fi
stop_vcapd

# 3. auth_control = none written out: the network may write (warned).
if [ -n "$NL" ]; then
	printf '[server]\nauth_control = none\nallowed_hosts = *\n[camera 0]\ndevice = test:320x240@10\n' >"$TMP/o.conf"
	start_vcapd_any --config "$TMP/o.conf" --listen "$NL:0" || { fail start3 "vcapd did not start"; exit 1; }
	NP=$(nl_port "$VLOG"); N="http://$NL:$NP"
	c1=$(put "$N/api/cams/0/controls"); c2=$(code -H "Host: any.example" "$N/api/status")
	{ [ "$c1" = 200 ] || [ "$c1" = 400 ]; } && [ "$c2" = 200 ] &&
		grep -q "listen $NL:0: control .* is open to anyone" "$VLOG"
	check explicit_open_control $? "PUT from $NL=$c1 any-host=$c2 $(grep "listen $NL:0: control" "$VLOG")"
	stop_vcapd
	grep -q -E 'ERROR: AddressSanitizer|LeakSanitizer|runtime error' "$VLOG"; [ $? != 0 ]
	check sanitizer_clean $? "$(grep -m3 -E 'Sanitizer|runtime error' "$VLOG")"
else
	skip explicit_open_control "no non-loopback IPv4 address on this machine"
fi
