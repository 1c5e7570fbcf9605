#!/bin/sh
# Real clients on the streams: ffmpeg/ffprobe read /stream (MJPEG multipart)
# and /raw/stream with the advertised parameters and decode them cleanly; a
# raw frame and the JPEG of the same sequence number agree (PSNR); per-client
# fps limit. Ports: the daemons pick their own.
cd "$(dirname "$0")/../.." || exit 2
T=http_stream
. tests/integ/lib/common.sh

if ! start_vcapd_any --device test:640x480@30:YUYV; then
	fail start "daemon did not answer"; exit 1
fi
PORT=$VPORT
U=http://127.0.0.1:$PORT

# ffprobe identifies the multipart stream.
timeout 20 ffprobe -v error -f mpjpeg -show_entries stream=codec_name,width,height -of csv=p=0 \
	"$U/stream?size=320x240" >"$TMP/probe" 2>"$TMP/e"
check ffprobe_stream "$(grep -q '^mjpeg,320,240' "$TMP/probe"; echo $?)" "$(cat "$TMP/probe" "$TMP/e" | head -c 300)"

# ffmpeg decodes >= 60 frames without a single error.
timeout 30 ffmpeg -v error -f mpjpeg -i "$U/stream" -frames:v 60 -f framemd5 "$TMP/md5" 2>"$TMP/e"
n=$(grep -vc '^#' "$TMP/md5"); u=$(grep -v '^#' "$TMP/md5" | awk -F, '{print $6}' | sort -u | wc -l)
check ffmpeg_stream_60_frames "$([ "$n" -ge 60 ] && [ ! -s "$TMP/e" ] && [ "$u" -ge 30 ]; echo $?)" \
	"$n frames, $u distinct, errors: $(head -c 200 "$TMP/e")"

# /raw/stream read as rawvideo with the parameters the headers advertise.
curl -s -D "$TMP/h" -o /dev/null --max-time 1 "$U/raw/stream?format=NV12&size=320x240"
fcc=$(hdr "$TMP/h" X-Fourcc); w=$(hdr "$TMP/h" X-Width); h=$(hdr "$TMP/h" X-Height); si=$(hdr "$TMP/h" X-Sizeimage)
check raw_stream_headers "$([ "$fcc" = NV12 ] && [ "$w" = 320 ] && [ "$h" = 240 ] && [ "$si" = 115200 ]; echo $?)" \
	"fourcc '$fcc' ${w}x$h sizeimage '$si'"
timeout 30 ffmpeg -v error -f rawvideo -pixel_format nv12 -video_size 320x240 -i "$U/raw/stream?format=NV12&size=320x240" \
	-frames:v 30 -f framemd5 "$TMP/rmd5" 2>"$TMP/e"
n=$(grep -vc '^#' "$TMP/rmd5"); u=$(grep -v '^#' "$TMP/rmd5" | awk -F, '{print $6}' | sort -u | wc -l)
check ffmpeg_raw_stream_nv12 "$([ "$n" -ge 30 ] && [ "$u" -ge 15 ] && [ ! -s "$TMP/e" ]; echo $?)" "$n frames, $u distinct: $(head -c 200 "$TMP/e")"
# exact sizes: 20 frames of YUYV 640x480 are 20 * 614400 bytes, frame-aligned
timeout 10 curl -s "$U/raw/stream?format=YUYV" | head -c $((614400 * 20)) >"$TMP/rs"
n=$(wc -c <"$TMP/rs")
ffmpeg -v error -f rawvideo -pixel_format yuyv422 -video_size 640x480 -i "$TMP/rs" -f framemd5 "$TMP/rs.md5" 2>"$TMP/e"
u=$(grep -v '^#' "$TMP/rs.md5" | awk -F, '{print $6}' | sort -u | wc -l)
check raw_stream_exact_frames "$([ "$n" = $((614400 * 20)) ] && [ "$u" -ge 10 ]; echo $?)" "$n bytes, $u distinct frames"

# The JPEG of a frame is close to the raw frame of the same sequence number.
# Two streams keep both outputs producing every frame; then both are asked
# for their latest, at once, and every answer is kept by its sequence number
# until one number came from both (asked one after the other, a loaded host
# or the ASan build put each pair a frame apart: "173 vs 174").
curl -s -o /dev/null --max-time 20 "$U/stream" & s1=$!
curl -s -o /dev/null --max-time 20 "$U/raw/stream?format=YUYV" & s2=$!
sleep 0.5
psnr="" a="" b=""
mkdir -p "$TMP/seq"
for i in $(seq 40); do
	curl -s -D "$TMP/hr" -o "$TMP/f.yuv" "$U/raw?format=YUYV&max_age_ms=200" & r1=$!
	curl -s -D "$TMP/hj" -o "$TMP/f.jpg" "$U/snapshot?max_age_ms=200"
	wait $r1
	a=$(hdr "$TMP/hr" X-Frame-Seq); b=$(hdr "$TMP/hj" X-Frame-Seq)
	[ -n "$a" ] && mv "$TMP/f.yuv" "$TMP/seq/$a.yuv"
	[ -n "$b" ] && mv "$TMP/f.jpg" "$TMP/seq/$b.jpg"
	for f in "$TMP"/seq/*.yuv; do
		n=${f##*/}; n=${n%.yuv}
		[ -f "$TMP/seq/$n.jpg" ] && { a=$n b=$n; break 2; }
	done
	a="" b=""
	sleep 0.02
done
if [ -n "$a" ]; then
	cp "$TMP/seq/$a.yuv" "$TMP/f.yuv"; cp "$TMP/seq/$a.jpg" "$TMP/f.jpg"
	psnr=$(ffmpeg -v info -f rawvideo -pixel_format yuyv422 -video_size 640x480 -i "$TMP/f.yuv" -i "$TMP/f.jpg" \
		-lavfi "[0:v]format=yuv444p[a];[1:v]scale=in_range=full:out_range=tv,format=yuv444p[b];[a][b]psnr" -f null - 2>&1 |
		sed -n 's/.*PSNR.* y:\([0-9.inf]*\).*/\1/p' | tail -1)
fi
# Another frame scores clearly lower against that JPEG (the comparison can
# fail). Taken while both streams still run, and by sequence number: the
# test source draws a frame from its sequence number alone, and restarts it
# (and so its pictures) when the device mode switches or capture restarts.
sleep 0.5
for i in $(seq 20); do
	curl -s -D "$TMP/h2" -o "$TMP/f2.yuv" "$U/raw?format=YUYV"
	s2nd=$(hdr "$TMP/h2" X-Frame-Seq)
	[ -n "$s2nd" ] && [ "$s2nd" != "$a" ] && break
	sleep 0.2
done
kill $s1 $s2 2>/dev/null
if [ -z "$a" ] || [ "$a" != "$b" ]; then
	fail raw_vs_jpeg_psnr "never got the same sequence from /raw and /snapshot in 40 tries: raw $(ls "$TMP/seq" | grep -c yuv), jpeg $(ls "$TMP/seq" | grep -c jpg) distinct frames"
else
	ok_=$(echo "$psnr" | awk '{print ($1 == "inf" || $1 + 0 >= 30) ? 0 : 1}')
	if [ "$ok_" = 0 ]; then ok raw_vs_jpeg_psnr "($psnr dB at seq $a)"; else fail raw_vs_jpeg_psnr "luma PSNR $psnr dB at seq $a (want >= 30)"; fi
fi

p2=$(ffmpeg -v info -f rawvideo -pixel_format yuyv422 -video_size 640x480 -i "$TMP/f2.yuv" -i "$TMP/f.jpg" \
	-lavfi "[0:v]format=yuv444p[a];[1:v]scale=in_range=full:out_range=tv,format=yuv444p[b];[a][b]psnr" -f null - 2>&1 |
	sed -n 's/.*PSNR.* y:\([0-9.inf]*\).*/\1/p' | tail -1)
check psnr_discriminates "$(echo "$p2 $psnr" | awk -v a="$a" -v c="$s2nd" '{print (c != "" && c != a && $1 + 0 < $2 + 0) ? 0 : 1}')" \
	"frame $s2nd vs the JPEG of $a: $p2 dB; same frame: $psnr dB"

# Per-client fps limit: fps=5 gives 15-16 parts in 3.0 s of capture time
# (both ends counted). The request lowers the device to 5 fps, a restart
# (0.4-0.9 s under ASan) that a wall-clock window would count against the
# limiter; so the window starts at the first part after that restart (the
# part after the first interval >= 0.3 s that begins within the stream's
# first 1.5 s; the first part when there is none). 13-17 parts: at least
# 4 fps, less than 5.7 (a limiter letting 30 fps through gives ~90).
timeout 6 curl -s -o "$TMP/f5" "$U/stream?fps=5"
n=$(grep -a '^X-Timestamp: ' "$TMP/f5" | tr -d '\r' | awk '{ t[NR] = $2 } END {
	for (i = 1; i < NR && t[i] - t[1] < 1.5 && t[i + 1] - t[i] < 0.3; i++) ;
	i = (i < NR && t[i] - t[1] < 1.5) ? i + 1 : 1
	if (NR == 0 || t[NR] - t[i] < 3.0) { print "window of " t[NR] - t[i] " s only"; exit }
	for (j = i; j <= NR && t[j] - t[i] <= 3.0005; j++) n++
	print n + 0 }')
check fps_limit_5 "$([ "$n" -ge 13 ] && [ "$n" -le 17 ] 2>/dev/null; echo $?)" "$n parts in 3.0 s (capture time) at fps=5"
# Full rate: the fps=5 client just lowered the device to 5 fps, so this
# client starts with a mode switch (a device restart, slow under ASan on a
# loaded box: CI once counted 64 when the window began at a last 5 fps
# frame before the restart); the rate is counted over 3 s of capture time
# from the first part that came at the new rate (next part < 100 ms later).
timeout 7 curl -s -o "$TMP/f0" "$U/stream"
n=$(grep -a '^X-Timestamp: ' "$TMP/f0" | tr -d '\r' | awk '{ t[NR] = $2 } END {
	for (i = 1; i < NR && t[i + 1] - t[i] >= 0.1; i++) ;
	if (t[NR] - t[i] < 3.0) { print "window of " t[NR] - t[i] " s only"; exit }
	for (j = i; j <= NR && t[j] - t[i] < 3.0; j++) n++
	print n + 0 }')
check full_rate "$([ "$n" -ge 75 ] 2>/dev/null; echo $?)" "$n parts in 3 s (capture time) at 30 fps"

stop_vcapd
check exit_clean $? "exit status $?"
grep -q 'ERROR: AddressSanitizer\|runtime error' "$VLOG"
check no_sanitizer_reports "$([ $? != 0 ]; echo $?)" "$(grep -m3 'ERROR\|runtime error' "$VLOG")"

# Outputs that become equal after a mode change are merged. A 1280x720
# client holds the device at 16:9; width=320 keeps the aspect ratio of the
# camera's default (640x480), not of the mode someone else holds (issue 13:
# the same URL gives the same picture), so width=320 and size=320x240 are
# one 320x240 output with both clients from the start (this asserted two
# outputs, 320x180 and 320x240, before); once the 1280x720 client is gone
# the device moves to a 4:3 mode and the one output keeps both clients,
# which keep receiving frames.
# "WxH q=Q n=N" per output delivering MJPEG 320 wide (Q its quality, N its clients)
outs320() {
	curl -s "$U/api/status" | grep -o '"plan":{"output":{"fourcc":"MJPG"[^}]*"width":320,"height":[0-9]*[^}]*}[^}]*},"clients":[0-9]*' |
		sed 's/.*"height":\([0-9]*\).*"quality":\([0-9]*\).*"clients":\([0-9]*\)/320x\1 q=\2 n=\3/' | sort | tr '\n' ' '
}
if ! start_vcapd_any --device test:640x480@30:YUYV; then
	fail start2 "second daemon did not answer"; exit 1
fi
P2=$VPORT
U=http://127.0.0.1:$P2
timeout 20 curl -s -o /dev/null "$U/stream?size=1280x720" & big=$!
sleep 0.5
timeout 20 curl -s -o "$TMP/ma" "$U/stream?width=320" & ca=$!
timeout 20 curl -s -o "$TMP/mb" "$U/stream?size=320x240" & cb=$!
sleep 1
before=$(outs320)
kill $big 2>/dev/null
sleep 0.3
curl -s -o /dev/null "$U/snapshot?size=320x240"
sleep 0.5
after=$(outs320)
na=$(grep -ac '^X-Frame-Seq' "$TMP/ma"); nb=$(grep -ac '^X-Frame-Seq' "$TMP/mb")
sleep 1
na2=$(grep -ac '^X-Frame-Seq' "$TMP/ma"); nb2=$(grep -ac '^X-Frame-Seq' "$TMP/mb")
kill $ca $cb 2>/dev/null
[ "$before" = "320x240 q=80 n=2 " ] &&
	{ [ "$after" = "320x240 q=0 n=2 " ] || [ "$after" = "320x240 q=80 n=2 " ]; } &&
	[ "$na2" -ge $((na + 10)) ] && [ "$nb2" -ge $((nb + 10)) ]
check outputs_merge_after_replan $? \
	"320-wide outputs before: '$before', after the switch: '$after' (want one 320x240 output with 2 clients); parts in the last second: $((na2 - na)), $((nb2 - nb))"
# The reverse: width=640 and size=640x480 share one output on a 4:3 mode;
# a 1280x720 snapshot moves the device to a 16:9 mode (a one-shot the mode
# cannot give switches it, issue 21) and they still share one 640x480
# output: width=640 keeps the default's 4:3 (issue 13). This asserted a
# split into 640x360 and 640x480, which resolving against the default no
# longer makes; it was skipped while a snapshot never switched the mode.
sleep 0.5
timeout 20 curl -s -o /dev/null "$U/stream?width=640" & ca=$!
sleep 0.5
timeout 20 curl -s -o /dev/null "$U/stream?size=640x480" & cb=$!
sleep 1
outs() {
	curl -s "$U/api/status" | grep -o '"plan":{"output":{"fourcc":"MJPG"[^}]*}[^}]*},"clients":[1-9][0-9]*' |
		sed 's/.*"width":\([0-9]*\),"height":\([0-9]*\).*"clients":\([0-9]*\)/\1x\2 n=\3/' | sort | tr '\n' ' '
}
before=$(outs)
curl -s -o /dev/null "$U/snapshot?size=1280x720"
sleep 0.5
after=$(outs)
mode=$(curl -s "$U/api/status" | sed -n 's/.*"mode":{[^}]*"width":\([0-9]*\),"height":\([0-9]*\).*/\1x\2/p')
kill $ca $cb 2>/dev/null
[ "$before" = "640x480 n=2 " ] && { [ "$mode" != 1280x720 ] || [ "$after" = "640x480 n=2 " ]; }
check outputs_split_after_replan $? "outputs with clients before: '$before', after the switch to $mode: '$after' (want one 640x480 output with both)"
[ "$mode" = 1280x720 ] || skip outputs_split_case "device mode $mode, not 16:9: the split was not exercised"
stop_vcapd
check exit_clean_2 $? "exit status $?"
grep -q 'ERROR: AddressSanitizer\|runtime error' "$VLOG"
check no_sanitizer_reports_2 "$([ $? != 0 ]; echo $?)" "$(grep -m3 'ERROR\|runtime error' "$VLOG")"
exit 0
