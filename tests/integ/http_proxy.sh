#!/bin/sh
# Clients behind a reverse proxy on this host (trusted_proxies): curl from
# 127.0.0.1 with -H plays the proxy, --interface 127.0.0.x another peer.
#  - trusted_proxies = 127.0.0.1: 20 distinct pictures from 5 forwarded
#    client addresses (4 each) are all served; the same 20 sent from
#    127.0.0.1 without the header get its one share (at most 4, the rest
#    429), as do 20 from the untrusted peer 127.0.0.2 with 5 forwarded
#    addresses (its headers are ignored);
#  - control writes without auth: a direct loopback PUT reaches the
#    handler, one forwarded for an internet client is refused 403 JSON, and
#    so is one from the untrusted 127.0.0.2 carrying X-Forwarded-For;
#  - login back-off: 10 failed logins of one forwarded address get it 429,
#    another forwarded address behind the same proxy still gets 401 / 200;
#  - no trusted_proxies at all: a loopback PUT carrying X-Forwarded-For,
#    Forwarded or X-Real-IP is refused 403, and the log says trusted_proxies
#    would help.
cd "$(dirname "$0")/../.." || exit 2
T=http_proxy
. tests/integ/lib/common.sh
FLOOD=${VCAP_BUILD:-build}/tools/auth_flood
code() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@"; }
put() { curl -s -o "$TMP/put.out" -w '%{http_code}' --max-time 5 -X PUT --data-binary '{}' "$@"; }

# pictures NAME Q0: 20 distinct /stream pictures at once (qualities Q0+1..
# Q0+20: none an output left by an earlier batch serves), client N (1..20)
# asking with the extra curl arguments the function `args N` prints; leaves
# "N200 N429" in $TMP/NAME.res.
pictures() {
	: >"$TMP/$1.codes"
	_pids=
	for i in $(seq 1 20); do
		# shellcheck disable=SC2046
		curl -s -N --max-time 4 -o /dev/null -w '%{http_code}\n' $(args "$i") \
			"$U/stream?size=320x240&quality=$(($2 + i))" >>"$TMP/$1.codes" &
		_pids="$_pids $!"
	done
	wait $_pids
	echo "$(grep -c '^200' "$TMP/$1.codes") $(grep -c '^429' "$TMP/$1.codes")" >"$TMP/$1.res"
}

cat >"$TMP/a.conf" <<EOF
[server]
trusted_proxies = 127.0.0.1
max_outputs = 40
[camera 0]
device = test:640x480@30
EOF
if start_vcapd_any --config "$TMP/a.conf"; then
	U=http://127.0.0.1:$VPORT
	# five clients behind the proxy, four pictures each
	args() { echo "-H X-Forwarded-For:192.0.2.7,198.51.100.$((($1 - 1) / 4 + 1))"; }
	pictures fwd 0
	read -r n200 n429 <"$TMP/fwd.res"
	echo "$T: 20 pictures from 5 forwarded addresses: $n200 served, $n429 refused 429"
	[ "$n200" = 20 ]
	check shares_per_forwarded_client $? "200=$n200 429=$n429"
	# the proxy itself, no header: one share
	args() { :; }
	pictures direct 20
	read -r n200 n429 <"$TMP/direct.res"
	echo "$T: 20 pictures from 127.0.0.1 without a header: $n200 served, $n429 refused 429"
	[ "$n200" -ge 1 ] && [ "$n200" -le 4 ] && [ $((n200 + n429)) = 20 ]
	check share_unforwarded $? "200=$n200 429=$n429"
	# an untrusted peer's headers are ignored: one share for 127.0.0.2
	args() { echo "--interface 127.0.0.2 -H X-Forwarded-For:198.51.100.$((($1 - 1) / 4 + 1))"; }
	pictures untrusted 40
	read -r n200 n429 <"$TMP/untrusted.res"
	echo "$T: 20 pictures from untrusted 127.0.0.2 naming 5 addresses: $n200 served, $n429 refused 429"
	[ "$n200" -ge 1 ] && [ "$n200" -le 4 ] && [ $((n200 + n429)) = 20 ]
	check untrusted_headers_ignored $? "200=$n200 429=$n429"

	# control: open to local requests only
	c1=$(put "$U/api/cams/0/controls")
	[ "$c1" = 200 ] || [ "$c1" = 400 ]
	check control_direct_local $? "direct PUT from 127.0.0.1: $c1 $(cat "$TMP/put.out")"
	c2=$(put -H "X-Forwarded-For: 203.0.113.9" "$U/api/cams/0/controls"); b2=$(cat "$TMP/put.out")
	c3=$(put -H "Forwarded: for=203.0.113.9;proto=https" "$U/api/cams/0/controls")
	[ "$c2" = 403 ] && [ "$c3" = 403 ] && echo "$b2" | grep -q '"status":403' &&
		echo "$b2" | grep -q auth_control
	check control_forwarded_refused $? "X-Forwarded-For: $c2 ($b2); Forwarded: $c3"
	c4=$(put --interface 127.0.0.2 -H "X-Forwarded-For: 203.0.113.9" "$U/api/cams/0/controls")
	c5=$(put -H "X-Forwarded-For: garbage" "$U/api/cams/0/controls")
	[ "$c4" = 403 ] && [ "$c5" = 403 ]
	check control_untrusted_or_bad_refused $? "untrusted 127.0.0.2 with a header: $c4; malformed: $c5"
	grep -q "malformed X-Forwarded-For 'garbage'" "$VLOG"
	check malformed_logged $? "$(grep -c malformed "$VLOG") lines"
	stopped_clean
else
	fail start_a "vcapd did not start"
fi

# ---- login back-off per forwarded client ----
if [ -x "$FLOOD" ] && HASH=$("$FLOOD" --hash secret-pw); then
	cat >"$TMP/b.conf" <<EOF
[server]
trusted_proxies = 127.0.0.1
user = admin:$HASH
auth_status = basic
[camera 0]
device = test:320x240@10
EOF
	if start_vcapd_any --config "$TMP/b.conf"; then
		U=http://127.0.0.1:$VPORT
		: >"$TMP/bad"
		for i in $(seq 10); do
			code -H "X-Forwarded-For: 198.51.100.1" -u "admin:bad-$i" "$U/api/status" >>"$TMP/bad"
			echo >>"$TMP/bad"
		done
		b1=$(code -H "X-Forwarded-For: 198.51.100.1" -u "admin:bad-11" "$U/api/status")
		b2=$(code -H "X-Forwarded-For: 198.51.100.2" -u "admin:bad-once" "$U/api/status")
		b3=$(code -H "X-Forwarded-For: 198.51.100.2" -u "admin:secret-pw" "$U/api/status")
		b4=$(code -u "admin:secret-pw" "$U/api/status")
		[ "$b1" = 429 ] && [ "$b2" = 401 ] && [ "$b3" = 200 ] && [ "$b4" = 200 ]
		check backoff_per_forwarded_client $? "10 wrong: $(sort "$TMP/bad" | uniq -c | tr '\n' ' '); 11th: $b1; another forwarded: wrong $b2 right $b3; the proxy itself: $b4"
		grep -q '198\.51\.100\.1:0: 10 failed logins' "$VLOG"
		check backoff_names_client $? "$(grep -m1 'back-off' "$VLOG")"
		stopped_clean
	else
		fail start_b "vcapd did not start"
	fi
else
	fail backoff_per_forwarded_client "$FLOOD not built or no hash (make all)"
fi

# ---- no trusted_proxies: a forwarded request is not local ----
if start_vcapd_any --device test:320x240@10; then
	U=http://127.0.0.1:$VPORT
	c1=$(put "$U/api/cams/0/controls")
	c2=$(put -H "X-Forwarded-For: 203.0.113.9" "$U/api/cams/0/controls")
	c3=$(put -H "Forwarded: for=203.0.113.9" "$U/api/cams/0/controls")
	c4=$(put -H "X-Real-IP: 203.0.113.9" "$U/api/cams/0/controls")
	{ [ "$c1" = 200 ] || [ "$c1" = 400 ]; } && [ "$c2" = 403 ] && [ "$c3" = 403 ] && [ "$c4" = 403 ]
	check unconfigured_forwarded_not_local $? "direct: $c1; X-Forwarded-For: $c2; Forwarded: $c3; X-Real-IP: $c4"
	grep -q 'not in trusted_proxies' "$VLOG"
	check unconfigured_hint_logged $? "$(grep -c trusted_proxies "$VLOG") lines"
	stopped_clean
else
	fail start_c "vcapd did not start"
fi
