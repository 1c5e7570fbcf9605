#!/bin/sh
# Failed logins cannot stall the server (issue 14): 1,000 wrong Basic logins
# per second from 8 clients (tests/tools/auth_flood, open loop, a new wrong
# password each time, yescrypt hash) while an authenticated /stream client
# and a probe of / run. Two floods: from 8 addresses (the per-address
# back-off answers 429), and spread over 2,000 source addresses in
# 127.0.0.0/8 (no back-off: the bounded hash queue answers 503). Prints the
# rate reached, the stream's longest gap and the probe's latency; then checks
# the back-off and cache behaviour with curl from chosen source addresses.
# The 100 ms / 50 ms limits are the issue's, on the wall clock; a host busy
# with other work breaks them now and then whatever the daemon does, so the
# daemon's own loop CPU clock (/metrics) judges too (see flood below).
# solo: make test runs it after the two integration lanes, alone
# (tests/run-all.sh): the 1,000 logins/s flood and the limits need both cores.
cd "$(dirname "$0")/../.." || exit 2
T=qa_auth_flood
. tests/integ/lib/common.sh
FLOOD=${VCAP_BUILD:-build}/tools/auth_flood
[ -x "$FLOOD" ] || { fail tool "$FLOOD not built (make all)"; exit 1; }
# Under ASan everything is several times slower: the rate and latency
# limits are then printed and skipped, the functional checks still run.
ASAN=; grep -aq __asan_init "$VCAPD" && ASAN=1
rcheck() { if [ -n "$ASAN" ]; then skip "$1" "ASan build ($3)"; else check "$@"; fi; }
PW=flood-secret
HASH=$("$FLOOD" --hash "$PW") || { fail hash "no yescrypt hash"; exit 1; }
cat >"$TMP/v.conf" <<EOF
[server]
user = admin:$HASH
auth_view = basic
auth_status = basic
[camera 0]
device = test:640x480@30
EOF
start_vcapd_any --config "$TMP/v.conf" || { fail start "vcapd did not start"; exit 1; }
U="http://127.0.0.1:$VPORT"
code() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@"; }
t=$(curl -s -o /dev/null -w '%{time_total}' -u "admin:wrong" "$U/api/status")
echo "$T: one wrong yescrypt login takes ${t}s end to end (the hash runs on the auth worker)"
echo "$T: load before: $(cut -d' ' -f1-3 /proc/loadavg)"

# loop_turns: the daemon's loop turns so far and those that took over 25 ms
# of CPU (/metrics: each turn timed on the loop thread's own CPU clock).
loop_turns() {
	curl -s --max-time 5 -u "admin:$PW" "$U/metrics" | awk '
		/^vcapd_loop_turn_cpu_seconds_bucket\{le="0.025"\}/ { le = $2 }
		/^vcapd_loop_turn_cpu_seconds_count/ { n = $2; seen = 1 }
		END { if (seen) print n, n - le; else print "none none" }'
}

# flood NAME SPREAD: a 5 s flood. The mix of 401/429/503 depends on how
# fast hashes run (printed); every answer must be one of them. The gap and
# latency limits are wall-clock maxima over 5 s, which a host busy with other
# work breaks for a moment now and then whatever the daemon does (seen with
# the code of main before and after a change alike, at load 3-20, and with
# stress-ng --cpu 2 beside: 115-200 ms maxima, 1 ms medians): when a try
# misses them, the flood is measured once more. When both miss, what the
# limits guard (the loop never waits on a hash) is judged on the daemon's
# own clock: no loop turn of the try took over 25 ms of CPU (a hash on the
# loop is one such turn per wrong login), the probes' median stayed under
# 10 ms and the stream kept its rate. A daemon that hashes on its loop
# fails both ways.
flood() {
	for try in 1 2; do
		before=$(loop_turns)
		"$FLOOD" "$VPORT" 5 1000 8 "$2" "admin:$PW" >"$TMP/$1.out" 2>&1
		sed "s/^/$T: $1 (try $try) /" "$TMP/$1.out"
		d=$(echo "$before $(loop_turns)" | awk '{ if ($1 == "none" || $3 == "none") print 0, "none"
			else print $3 - $1, $4 - $2 }')
		turns=${d% *} slow=${d#* }
		echo "$T: $1 (try $try) loop: $turns turns, $slow over 25 ms of CPU"
		rate=$(sed -n 's/^flood: .* rate=\([0-9]*\)\/s.*/\1/p' "$TMP/$1.out")
		other=$(sed -n 's/^flood: .* other=\([0-9]*\) .*/\1/p' "$TMP/$1.out")
		gap=$(sed -n 's/^stream: parts=[0-9]* max_gap_ms=\([0-9]*\).*/\1/p' "$TMP/$1.out")
		parts=$(sed -n 's/^stream: parts=\([0-9]*\).*/\1/p' "$TMP/$1.out")
		root=$(sed -n 's/^probe_root: .* max_ms=\([0-9]*\).*/\1/p' "$TMP/$1.out")
		p50=$(sed -n 's/^probe_root: .* p50_ms=\([0-9]*\).*/\1/p' "$TMP/$1.out")
		an=$(sed -n 's/^probe_auth: n=\([0-9]*\) .*/\1/p' "$TMP/$1.out")
		aok=$(sed -n 's/^probe_auth: .* codes_ok=\([0-9]*\).*/\1/p' "$TMP/$1.out")
		[ "${rate:-0}" -ge 950 ] && [ "${other:-1}" = 0 ]; r_rate=$?
		[ "${parts:-0}" -ge 100 ] && [ "${gap:-9999}" -lt 100 ]; r_gap=$?
		[ "${root:-9999}" -lt 50 ] && [ "${an:-0}" -ge 20 ] && [ "$an" = "$aok" ]; r_lat=$?
		[ "$r_rate$r_gap$r_lat" = 000 ] || [ -n "$ASAN" ] && break
	done
	judge="wall clock"
	if [ "$r_gap$r_lat" != 00 ] && [ -z "$ASAN" ] && [ "$slow" = 0 ] && [ "$turns" -gt 0 ] &&
		[ "${p50:-9999}" -lt 10 ] && [ "${parts:-0}" -ge 100 ] && [ "${an:-0}" -ge 20 ] &&
		[ "$an" = "$aok" ]; then
		judge="loop CPU clock: 0 of $turns turns over 25 ms, / median ${p50} ms; the wall-clock limits missed twice"
		r_gap=0 r_lat=0
	fi
	rcheck "$1_rate" $r_rate "rate=$rate/s other=$other (load $(cut -d' ' -f1 /proc/loadavg)), try $try"
	rcheck "$1_stream_gap" $r_gap "parts=$parts longest gap ${gap} ms (limit 100), try $try; judged on the $judge"
	rcheck "$1_latency" $r_lat "/ max ${root} ms (limit 50); authenticated /api/status $aok/$an answered 200, try $try; judged on the $judge"
	# the daemon's own clock, whatever the host: no turn hashed on the loop
	[ "$slow" = 0 ] && [ "$turns" -gt 0 ]
	check "$1_loop_cpu" $? "$turns loop turns in try $try, $slow over 25 ms of CPU"
}
flood flood_8addr 1
flood flood_spread 2000

# After the floods, once queued hashes are done (a wrong login gets 401,
# not 503): 10 wrong logins from one address, then the next gets 429 with
# Retry-After even for a new password; a verified (cached) header still
# passes from there; a fresh address logs in normally.
for i in $(seq 120); do
	c=$(code --interface 127.0.0.60 -u "admin:drain-$i" "$U/api/status")
	[ "$c" = 401 ] && break
	sleep 0.5
done
check queue_drained "$([ "$c" = 401 ]; echo $?)" "a wrong login after the floods: $c"
# code_past_503 ARGS...: code ARGS, sent again while 503 (hash budget
# spent: not a failed check), up to 20 times 0.3 s apart
code_past_503() {
	for _k in $(seq 20); do
		_c=$(code "$@")
		[ "$_c" = 503 ] || break
		sleep 0.3
	done
	echo "$_c"
}
for i in $(seq 10); do
	code_past_503 --interface 127.0.0.61 -u "admin:bad-$i" "$U/api/status" >>"$TMP/bad"
done
curl -s -D "$TMP/h" -o /dev/null --max-time 5 --interface 127.0.0.61 -u "admin:another-wrong" "$U/api/status"
ra=$(hdr "$TMP/h" Retry-After)
[ "$(status "$TMP/h")" = 429 ] && [ "${ra:-0}" -ge 1 ] && [ "$ra" -le 60 ]
check backoff_429 $? "10 wrong: $(sort "$TMP/bad" | uniq -c | tr '\n' ' '); 11th: $(status "$TMP/h") Retry-After=$ra"
c1=$(code --interface 127.0.0.61 -u "admin:$PW" "$U/api/status")
c2=$(code --interface 127.0.0.77 -u "admin:$PW" "$U/snapshot")
# a wrong login needs a hash: right after the 10 above the hash budget may
# be spent (a 503 that says retry; one loaded run saw it), sent again as above
c3=$(code_past_503 --interface 127.0.0.78 -u "admin:wrong-once" "$U/api/status")
[ "$c1" = 200 ] && [ "$c2" = 200 ] && [ "$c3" = 401 ]
check cached_and_fresh $? "cached header from a blocked address=$c1 fresh address right=$c2 wrong=$c3"
# The block is logged: its own line, or, when the floods' blocks filled the
# log limiter's window (5 lines per 10 s for this site), the window's summary
# naming the address last held back, written when the window closes.
logged=1
for i in $(seq 30); do
	grep -q -e '127\.0\.0\.61:[0-9]*: 10 failed logins within 60 s: refused for 60 s' \
		-e 'login back-off: [0-9]* more in the last 10 s (last from 127\.0\.0\.61)' "$VLOG" &&
		{ logged=0; break; }
	sleep 0.5
done
check backoff_logged $logged "$(grep -c 'failed logins' "$VLOG") block lines, summaries: $(grep 'login back-off:' "$VLOG" | tail -2 | tr '\n' ' ')"
kill -0 "$VPID" 2>/dev/null; check alive $? "daemon survived"
rss=$(rss_kb "$VPID"); echo "$T: RSS after the floods: ${rss} KiB"
stop_vcapd; check clean_stop $? "exit status"
grep -q -E 'ERROR: AddressSanitizer|LeakSanitizer|runtime error' "$VLOG"; [ $? != 0 ]
check sanitizer_clean $? "$(grep -m3 -E 'Sanitizer|runtime error' "$VLOG")"
