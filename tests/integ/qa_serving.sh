#!/bin/sh
# A demanding user against the test pattern: per-client fps and quality are
# honoured also when another client already streams the same picture,
# snapshot ETags stay unique across capture restarts, /metrics is valid Prometheus text. Ports: the daemons pick their own.
cd "$(dirname "$0")/../.." || exit 2
T=qa_serving
. tests/integ/lib/common.sh

if ! start_vcapd_any --device test:320x240@30:YUYV; then
	fail start "daemon did not answer"; exit 1
fi
PORT=$VPORT
U=http://127.0.0.1:$PORT
L1=$VLOG # the second daemon's start overwrites VLOG
# frames FILE: MJPEG parts in a saved /stream body.
frames() { grep -c -a '^X-Frame-Seq' "$1"; }

# 1. fps= is this client's maximum even when it joins an output that a
# full-rate client created first (the output's plan has the device rate).
curl -s -m 5 -o "$TMP/full.mjpeg" "$U/stream" &
FULL=$!
sleep 1
curl -s -m 3 -o "$TMP/slow.mjpeg" "$U/stream?fps=5"
n=$(frames "$TMP/slow.mjpeg")
[ "$n" -ge 10 ] && [ "$n" -le 18 ]
check fps_shared_output $? "fps=5 for 3 s beside a full-rate client: $n frames (want 10..18)"
curl -s -m 3 -o "$TMP/slow.raw" "$U/raw/stream?fps=5&format=YUYV"
n=$(( $(wc -c <"$TMP/slow.raw") / (320 * 240 * 2) ))
[ "$n" -ge 10 ] && [ "$n" -le 18 ]
check fps_shared_raw $? "raw fps=5 for 3 s beside a full-rate client: $n frames (want 10..18)"
wait $FULL
n=$(frames "$TMP/full.mjpeg")
[ "$n" -ge 100 ]
check fps_full_rate $? "unlimited client: $n frames in 5 s (want >= 100)"

# 2. quality= is applied: an encode at that quality, visibly smaller at 10
# than at 95, also when the camera gives JPEG itself (the test source offers
# MJPEG natively: quality= re-encodes it); /api/try agrees with the snapshot.
# The two pictures are asked again (three pairs at most) when the sizes do
# not tell: on a busy host once the two came from different moments of a
# mode switch (10: 4426 bytes, 95: 7858); a quality= left unapplied gives
# the same size in every pair.
for qtry in 1 2 3; do
	for q in 10 95; do
		curl -s -D "$TMP/h$q" -o "$TMP/q$q.jpg" "$U/snapshot?quality=$q"
		curl -s "$U/api/try?quality=$q" >"$TMP/try$q"
	done
	s10=$(wc -c <"$TMP/q10.jpg") s95=$(wc -c <"$TMP/q95.jpg")
	[ "$s10" -gt 0 ] && [ $((s10 * 2)) -lt "$s95" ] && break
done
st=$(hdr "$TMP/h10" X-Steps)
! grep -q '"passthrough":true' "$TMP/try10" && [ -n "$st" ] && [ "$st" != passthrough ] &&
	grep -q '"quality":10' "$TMP/try10" && [ "$s10" -gt 0 ] && [ $((s10 * 2)) -lt "$s95" ]
check quality_applied $? "snapshot steps '$st' and '$(hdr "$TMP/h95" X-Steps)', quality=10 $s10 bytes, 95 $s95 bytes (pair $qtry of 3); try: $(head -c 330 "$TMP/try10")"

# 3. A snapshot's ETag names one capture: the sequence restarts at 0 when the
# device mode changes (here raw NV12 <-> MJPEG) or the daemon restarts, so
# the ETag must still differ for frames captured at different times, else a
# polling browser (Cache-Control: no-cache revalidates) gets 304 and keeps
# showing an old picture.
: >"$TMP/tags"
for i in 1 2 3; do
	curl -s -o /dev/null "$U/raw?format=NV12"
	curl -s -D "$TMP/hs" -o /dev/null "$U/snapshot"
	echo "$(hdr "$TMP/hs" ETag) $(hdr "$TMP/hs" X-Timestamp)" >>"$TMP/tags"
done
nt=$(awk '{print $2}' "$TMP/tags" | sort -u | wc -l)
ne=$(awk '{print $1}' "$TMP/tags" | sort -u | wc -l)
[ "$nt" = 3 ] && [ "$ne" = 3 ]
check etag_unique_per_capture $? "3 captures ($nt timestamps) gave $ne ETags: $(tr '\n' ' ' <"$TMP/tags")"
e1=$(head -1 "$TMP/tags" | awk '{print $1}')
curl -s -o /dev/null "$U/raw?format=NV12"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $e1" "$U/snapshot")
[ "$code" = 200 ]
check if_none_match_old_capture $? "If-None-Match: $e1 (an earlier capture) -> $code"

# 4. If-None-Match is a list compared weakly; a 304 keeps the 200's caching.
curl -s -D "$TMP/hs" -o /dev/null "$U/snapshot"
e=$(hdr "$TMP/hs" ETag)
c1=$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: \"other\", $e" "$U/snapshot?max_age_ms=60000")
c2=$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: W/$e" "$U/snapshot?max_age_ms=60000")
c3=$(curl -s -o /dev/null -w '%{http_code}' -H 'If-None-Match: "other", W/"x"' "$U/snapshot?max_age_ms=60000")
curl -s -D "$TMP/h304" -o /dev/null -H "If-None-Match: $e" "$U/snapshot?max_age_ms=60000"
cc=$(hdr "$TMP/h304" Cache-Control)
[ "$c1" = 304 ] && [ "$c2" = 304 ] && [ "$c3" = 200 ] && [ "$cc" = no-cache ] && [ "$(status "$TMP/h304")" = 304 ]
check if_none_match_list $? "list $c1 (want 304), weak $c2 (304), no member $c3 (200), 304 Cache-Control '$cc' (no-cache like the 200)"

# 4b. Other tools' format names (I420, yuv420p, YUY2) are understood.
curl -s -D "$TMP/hi" -o "$TMP/i420" "$U/raw?format=I420&size=64x48"
curl -s -D "$TMP/hy" -o /dev/null "$U/raw?format=YUY2&size=64x48"
[ "$(status "$TMP/hi")" = 200 ] && [ "$(hdr "$TMP/hi" X-Fourcc)" = YU12 ] &&
	[ "$(wc -c <"$TMP/i420")" = 4608 ] && [ "$(hdr "$TMP/hy" X-Fourcc)" = YUYV ]
check format_aliases $? "I420 -> $(status "$TMP/hi") '$(hdr "$TMP/hi" X-Fourcc)' $(wc -c <"$TMP/i420") bytes (want YU12, 4608); YUY2 -> '$(hdr "$TMP/hy" X-Fourcc)'"

kill -0 "$VPID" 2>/dev/null
check alive $? "daemon gone"
stop_vcapd
check sigterm_exit0 $? "exit status $?"

# 5. /metrics is Prometheus text (promtool is not installed): every sample
# line well formed, its family announced by HELP and TYPE before it, and each
# family one contiguous group (two cameras, clients on both, so per-camera
# loops that interleave families show).
if ! start_vcapd_any --device test:320x240@30:YUYV --device test:160x120@15:GREY; then
	fail start2 "second daemon did not answer"; exit 1
fi
P2=$VPORT
U=http://127.0.0.1:$P2
curl -s -m 3 -o /dev/null "$U/stream?cam=0" & c1=$!
curl -s -m 3 -o /dev/null "$U/stream?cam=1&fps=5" & c2=$!
curl -s -m 3 -o /dev/null "$U/raw/stream?cam=1" & c3=$!
sleep 1.5
curl -s -D "$TMP/hm" -o "$TMP/metrics" "$U/metrics"
wait $c1 $c2 $c3
bad=$(awk '
function fam(n) { sub(/_(bucket|sum|count)$/, "", n); return n }
/^# HELP / { help[$3] = 1; if ($3 in done) print "HELP after its group: " $3; next }
/^# TYPE / { if ($3 in type) print "second TYPE: " $3; type[$3] = 1
	if ($3 in done) print "TYPE after its group: " $3
	if (cur != "" && cur != $3) done[cur] = 1; cur = $3; next }
/^#/ || /^$/ { next }
{
	if ($0 !~ /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*"(,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*")*\})? [-+]?([0-9.]+([eE][-+]?[0-9]+)?|NaN|[-+]?Inf)( [0-9]+)?$/) { print "bad line: " $0; next }
	n = $0; sub(/[{ ].*/, "", n); f = fam(n)
	if (!(f in type)) print "no TYPE before: " n
	if (!(f in help)) print "no HELP: " n
	if (f in done) print "family split: " f
	if (cur != "" && cur != f) done[cur] = 1; cur = f
	samples++
}
END { if (samples < 20) print "only " samples " samples" }' "$TMP/metrics" | sort -u | head -5)
ct=$(hdr "$TMP/hm" Content-Type)
[ -z "$bad" ] && echo "$ct" | grep -q '^text/plain; version=0.0.4' && grep -q '^vcapd_client_fps{cam="1"' "$TMP/metrics"
check metrics_exposition_format $? "type '$ct'; $(echo "$bad" | tr '\n' ';')"
stop_vcapd
check sigterm_exit0_2 $? "exit status $?"
# 6. A malformed --device test:... is a command-line error (exit 2 at once),
# not a camera that retries and logs the same error forever.
timeout 3 "$VCAPD" --device test:abc --listen 127.0.0.1:0 >"$TMP/badtest.log" 2>&1
rc=$?
[ "$rc" = 2 ] && grep -q 'test:abc' "$TMP/badtest.log"
check bad_test_device_exit2 $? "exit $rc (124 = still running after 3 s): $(head -c 150 "$TMP/badtest.log")"
printf '[camera x]\ndevice = test:abc\n' >"$TMP/bad.conf"
"$VCAPD" --check-config --config "$TMP/bad.conf" >"$TMP/cc.out" 2>&1
rc=$?
[ "$rc" = 1 ] && grep -q 'bad.conf:1: .*test:abc' "$TMP/cc.out"
check check_config_bad_test_device $? "exit $rc: $(head -c 150 "$TMP/cc.out")"
! grep -q 'ERROR: AddressSanitizer\|runtime error\|LeakSanitizer' "$L1" "$VLOG"
check no_sanitizer_reports $? "$(grep -m3 'ERROR\|runtime error' "$L1" "$VLOG")"
