#!/bin/sh
# An MJPEG camera (the test pattern in MJPEG): full-size JPEG clients get the
# camera's frames untouched (X-Steps: passthrough), smaller ones and raw
# clients get decoded/scaled/re-encoded frames. Port: the daemon picks its own.
cd "$(dirname "$0")/../.." || exit 2
T=http_mjpeg
. tests/integ/lib/common.sh

if ! start_vcapd_any --device test:640x480@30:MJPEG; then
	fail start "daemon did not answer"; exit 1
fi
PORT=$VPORT
U=http://127.0.0.1:$PORT
curl -s -D "$TMP/h" -o "$TMP/s.jpg" "$U/snapshot"
got=$(ffprobe -v error -show_entries stream=width,height -of csv=p=0:s=x "$TMP/s.jpg" 2>&1)
st=$(hdr "$TMP/h" X-Steps)
check passthrough_snapshot "$([ "$got" = 640x480 ] && [ "$st" = passthrough ]; echo $?)" "size '$got', steps '$st'"
# a snapshot switches the MJPEG camera to 320x240 (passthrough) only when the
# current mode cannot give that size (issue 13): /api/try asked as a snapshot says which
set -- $(try_answer "endpoint=snapshot&size=320x240")
curl -s -D "$TMP/h" -o "$TMP/q.jpg" "$U/snapshot?size=320x240"
got=$(ffprobe -v error -show_entries stream=width,height -of csv=p=0:s=x "$TMP/q.jpg" 2>&1)
st=$(hdr "$TMP/h" X-Steps)
check scaled_snapshot "$([ "$got" = 320x240 ] && [ "$st" = "$2" ]; echo $?)" "size '$got', steps '$st', /api/try: $*"
curl -s -D "$TMP/h" -o "$TMP/rot.jpg" "$U/snapshot?rotate=90"
got=$(ffprobe -v error -show_entries stream=width,height -of csv=p=0:s=x "$TMP/rot.jpg" 2>&1)
st=$(hdr "$TMP/h" X-Steps)
check rotate_90 "$([ "$got" = 480x640 ]; echo $?)" "size '$got', steps '$st'"
curl -s -D "$TMP/h" -o "$TMP/r" "$U/raw?format=YUYV"
n=$(wc -c <"$TMP/r")
check raw_from_mjpeg "$([ "$n" = 614400 ]; echo $?)" "$n bytes"
timeout 30 ffmpeg -v error -f mpjpeg -i "$U/stream" -frames:v 30 -f framemd5 "$TMP/md5" 2>"$TMP/e"
n=$(grep -vc '^#' "$TMP/md5")
check passthrough_stream_decodes "$([ "$n" -ge 30 ] && [ ! -s "$TMP/e" ]; echo $?)" "$n frames: $(head -c 200 "$TMP/e")"
stop_vcapd
check exit_clean $? "daemon exit status not 0"
exit 0
