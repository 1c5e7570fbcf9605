#!/bin/sh
# RTSP protocol checks with our own client (tests/tools/rtsp_check.c: RTP
# sequence, 90 kHz timestamps against the frame rate, marker bits, FU-A,
# IDR with SPS/PPS first, RTCP sender report NTP time), 20 clients at once,
# a join mid-GOP, one encoder shared with /stream.mp4, sessions reaped after
# the timeout (a client that vanishes, one that reads but never sends a
# keep-alive) while ffmpeg's and GStreamer's keep-alives hold theirs, an
# H.264 camera passed through, and the default port's fallback.
cd "$(dirname "$0")/../.." || exit 1
. tests/integ/lib/common.sh
. tests/integ/lib/rtsp.sh
T=rtsp_check
CHK=${VCAP_BUILD:-build}/tools/rtsp_check
[ -x "$CHK" ] || { skip all "$CHK not built"; exit 0; }

start_vcapd_any --device test:640x480@30:YUYV --rtsp 127.0.0.1:0 --rtsp-timeout 6 ||
	{ fail start "no daemon"; exit 0; }
RP=$(rtsp_port "$VLOG") || { fail start "no RTSP port in the log"; exit 0; }
U="http://127.0.0.1:$VPORT"

out=$("$CHK" -n 1 -t 4 -f 30 127.0.0.1 "$RP" "/0?size=640x360" 2>&1)
check protocol "$?" "$out"
# the join: the IDR seen since DESCRIBE goes out with the PLAY answer
j=$(echo "$out" | sed -n 's/.*first after \([0-9]*\) ms.*/\1/p')
check join_under_300ms "$([ -n "$j" ] && [ "$j" -lt 300 ]; echo $?)" "PLAY to first access unit: ${j:-?} ms"
out=$("$CHK" -n 20 -t 4 -f 30 127.0.0.1 "$RP" "/0?size=320x240" 2>&1)
check twenty_clients "$?" "$(echo "$out" | grep -v OK | head -3 | tr '\n' '|')"

# a joiner mid-GOP (gop 300: 10 s between natural IDRs) starts at an IDR
"$CHK" -t 5 127.0.0.1 "$RP" "/0?size=320x180&gop=300" >"$TMP/hold" 2>&1 & h=$!
sleep 2
out=$("$CHK" -t 2 127.0.0.1 "$RP" "/0?size=320x180&gop=300" 2>&1)
check join_mid_gop "$?" "$out"

wait $h
# one encoder for an RTSP and a /stream.mp4 client of the same picture
"$CHK" -t 4 127.0.0.1 "$RP" "/0?size=320x180" >/dev/null 2>&1 & h=$!
curl -s -o /dev/null --max-time 4 "$U/stream.mp4?size=320x180" & m=$!
sleep 1.5
st=$(curl -s "$U/api/status" | python3 -c 'import json, sys
s = json.load(sys.stdin)
print(" ".join("%sx%s:%d" % (o["plan"]["output"]["width"], o["plan"]["output"]["height"], o["clients"])
	for c in s["cams"] for o in c.get("outputs", []) if o["plan"]["output"]["fourcc"] == "H264" and o["clients"]))' 2>&1)
kinds=$(curl -s "$U/api/status" | python3 -c 'import json, sys
s = json.load(sys.stdin)
print(sorted(c2.get("kind", "?") for c in s["cams"] for c2 in c.get("clients", [])))' 2>&1)
wait $h; wait $m
check shared_encoder "$([ "$st" = "320x180:2" ]; echo $?)" "H.264 outputs: '$st' (want one 320x180 with 2 clients), clients $kinds"

# reaped after the session timeout (6 s): one that reads but never sends
# anything, one that neither reads nor sends
out=$("$CHK" -m mute -t 10 127.0.0.1 "$RP" "/0?size=320x240" 2>&1)
check mute_reaped "$?" "$out"
"$CHK" -m vanish -t 14 127.0.0.1 "$RP" "/0?size=320x240" >/dev/null 2>&1 & v=$!
sleep 1
n0=$(curl -s "$U/api/status" | python3 -c 'import json, sys
print(sum(len(c.get("clients", [])) for c in json.load(sys.stdin)["cams"]))')
gone=""
for i in $(seq 120); do
	n=$(curl -s "$U/api/status" | python3 -c 'import json, sys
print(sum(len(c.get("clients", [])) for c in json.load(sys.stdin)["cams"]))')
	[ "$n" = 0 ] && { gone=$i; break; }
	sleep 0.1
done
kill $v 2>/dev/null
check vanish_reaped "$([ "$n0" = 1 ] && [ -n "$gone" ]; echo $?)" \
	"clients: $n0 after PLAY, ${gone:+gone after $gone/10 s more}${gone:-still there after 12 s}"
grep -q 'no request or RTCP report for 6 s' "$VLOG"
check timeout_logged $? "no timeout line in the log"

# keep-alives hold a session past the timeout: ffmpeg's GET_PARAMETER,
# GStreamer's RTCP receiver reports (and its own keep-alive)
ff_decode "$TMP/ka" tcp "rtsp://127.0.0.1:$RP/0?size=320x240" 9 & f=$!
if have_gst; then
	GW=320 GH=240 gst_decode "$TMP/gka" tcp "rtsp://127.0.0.1:$RP/0?size=320x240" 270 & g=$!
fi
wait $f; rc=$?
n=$(ff_frames "$TMP/ka")
check ffmpeg_keepalive "$([ "$rc" = 0 ] && [ "$n" -ge 220 ]; echo $?)" "rc=$rc, $n frames in 9 s (timeout 6 s)"
if have_gst; then
	wait $g; rc=$?
	GW=320 GH=240 gst_check gstreamer_keepalive "$TMP/gka" "$rc" tcp \
		"rtsp://127.0.0.1:$RP/0?size=320x240" 270
else
	skip gstreamer_keepalive "GStreamer not installed"
fi
stop_vcapd >/dev/null

# an H.264 camera: its own stream, passed through (joiners from the kept GOP)
start_vcapd_any --device test:640x480@30:H264 --rtsp 127.0.0.1:0 || { fail h264_start "no daemon"; exit 0; }
RP=$(rtsp_port "$VLOG")
"$CHK" -t 4 127.0.0.1 "$RP" / >"$TMP/p1" 2>&1 & p=$!
sleep 1.5
out=$("$CHK" -t 2 127.0.0.1 "$RP" / 2>&1)
wait $p; r1=$?
check passthrough "$([ "$r1" = 0 ] && echo "$out" | grep -q OK; echo $?)" "$(cat "$TMP/p1") | $out"
stop_vcapd >/dev/null

# the default port (8554) taken: a warning naming the holder, HTTP serves on;
# a port asked for explicitly and taken is fatal
start_vcapd_any --device test:320x240@10 || { fail default_start "no daemon"; exit 0; }
A=$VLOG
if grep -q 'rtsp: listening on 127.0.0.1:8554' "$A"; then
	start_vcapd_any --device test:320x240@10 || { fail default_taken "second daemon did not serve"; exit 0; }
	grep -q 'warn.*rtsp: cannot listen on 127.0.0.1:8554.*running without RTSP.*vcapd' "$VLOG"
	check default_taken_warns $? "$(grep rtsp "$VLOG" | head -2)"
	"$VCAPD" --listen 127.0.0.1:0 --device test:320x240@10 --rtsp 127.0.0.1:8554 >"$TMP/x.log" 2>&1 & x=$!
	for i in $(seq 50); do kill -0 $x 2>/dev/null || break; sleep 0.1; done
	kill -0 $x 2>/dev/null && { kill $x; rc=alive; } || { wait $x; rc=$?; }
	check explicit_taken_fatal "$([ "$rc" != alive ] && [ "$rc" != 0 ]; echo $?)" "rc=$rc: $(grep rtsp "$TMP/x.log" | head -2)"
else
	skip default_taken_warns "port 8554 is taken here: $(grep rtsp "$A" | head -1)"
	skip explicit_taken_fatal "port 8554 is taken here"
fi
