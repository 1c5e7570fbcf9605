#!/bin/sh
# A slow H.264 client end to end (issue 17: "a slow client skips to the
# next key frame; it is never sent a frame whose reference it missed"), on
# the test pattern through the software encoder, for /stream.h264 and
# /stream.mp4: a client reads 2 s, stops reading for 4 s (its 16 KiB
# receive buffer and the server's socket buffer fill, frames are skipped),
# then reads 3 s. Checked: the server counted skipped frames for it (MP4:
# the stream shows them too, a gap in the fragment numbers, which are the
# output's frame numbers); the picture after every skip is an IDR (Annex-B:
# every other picture's frame_num follows the previous picture's, so none
# was sent whose reference the client missed; MP4: the fragment after each
# gap holds an IDR); ffmpeg decodes all of it with no error output. (ffmpeg
# alone would not catch a P frame after a gap: it conceals it silently.)
# The daemon picks its own port.
cd "$(dirname "$0")/../.." || exit 2
T=http_h264_slow
. tests/integ/lib/common.sh

for c in ffmpeg ffprobe python3; do
	if ! command -v $c >/dev/null 2>&1; then
		skip all "$c is not installed"; exit 0
	fi
done
if ! start_vcapd_any --device test:640x480@30:YUYV; then
	fail start "daemon did not come up"; exit 1
fi
NALS="python3 tests/tools/h264_nals.py"
# 2 Mbit/s, 250 KB/s: the 4 s stall leaves about 1 MB unsent
Q="size=640x480&bitrate=2M&gop=30"

# Annex-B
r=$(python3 tests/tools/http_stall_read.py "$VPORT" "/stream.h264?$Q" 2 4 3 "$TMP/slow.h264")
set -- $r
skipped=${8:--1}
$NALS trim "$TMP/slow.h264" "$TMP/slow_t.h264"
refs=$($NALS refs "$TMP/slow_t.h264" 30)
ffmpeg -nostdin -v error -i "$TMP/slow_t.h264" -f null - >"$TMP/h264.err" 2>&1
echo "$T.annexb: INFO client: $r; stream: $refs"
set -- $refs
# (a GOP cut short shows where; a skip from a GOP's very last picture
# leaves none: the server's count is the proof)
check annexb_skipped "$([ "$skipped" -gt 0 ]; echo $?)" \
	"server counted $skipped skipped frames; $8 GOPs cut short in the stream ($refs)"
check annexb_resumes_at_idr "$([ "$6" = 0 ] && [ "${10}" = 1 ] && [ "$2" -ge 60 ]; echo $?)" \
	"$6 pictures sent after a gap (not an IDR); $refs"
check annexb_decodes "$([ ! -s "$TMP/h264.err" ]; echo $?)" "ffmpeg: $(head -c 400 "$TMP/h264.err")"

# MP4: each fragment carries the output's frame number (mfhd), so a skip
# shows as a gap in them (frames the encoder never got leave none)
r=$(python3 tests/tools/http_stall_read.py "$VPORT" "/stream.mp4?$Q" 2 4 3 "$TMP/slow.mp4")
set -- $r
skipped=${8:--1}
$NALS mp4trim "$TMP/slow.mp4" "$TMP/slow_t.mp4"
ffmpeg -nostdin -v error -i "$TMP/slow_t.mp4" -enc_time_base -1 -f null - >"$TMP/mp4.err" 2>&1
gaps=$($NALS mp4frags "$TMP/slow_t.mp4")
echo "$T.mp4: INFO client: $r; stream: $gaps"
set -- $gaps
check mp4_skipped "$([ "$skipped" -gt 0 ] && [ "$4" -ge 1 ]; echo $?)" \
	"server counted $skipped skipped frames; $4 gaps in the fragment numbers ($gaps)"
check mp4_resumes_at_idr "$([ "$6" = 0 ] && [ "$8" = 1 ] && [ "$2" -ge 60 ]; echo $?)" \
	"$6 fragments after a gap without an IDR; $gaps"
check mp4_decodes "$([ ! -s "$TMP/mp4.err" ]; echo $?)" "ffmpeg: $(head -c 400 "$TMP/mp4.err")"

stopped_clean
