#!/bin/sh
# Joining an H.264 camera's passthrough stream mid-GOP (issue 17: "for
# passthrough, keep the current GOP from its last IDR so the client starts
# at once"), on the host with the test pattern's H.264 mode (an IDR every
# second, passed through): while one client holds the output, clients
# joining /stream.h264 (twice) and /stream.mp4 at 0.2, 0.4 and 0.6 s after
# the output kept its first GOP get their first body byte within a quarter
# of the camera's GOP (without the kept GOP they wait for its next IDR,
# about 0.3 to 0.8 s here), start with SPS/PPS/IDR, carry only NAL units
# the camera sent, byte for byte, and decode with no error; the kept GOP shows as
# "gop" in /api/status memory. (tests/vm/boot_loopback.sh checks the same
# on a v4l2loopback H.264 camera.) The daemon picks its own port.
cd "$(dirname "$0")/../.." || exit 2
T=http_h264_join
. tests/integ/lib/common.sh
VCAP_BUILD=${VCAP_BUILD:-build}
FRAMES=$VCAP_BUILD/tools/testsrc_frames
NALS="python3 tests/tools/h264_nals.py"

for c in ffmpeg ffprobe python3; do
	if ! command -v $c >/dev/null 2>&1; then
		skip all "$c is not installed"; exit 0
	fi
done
if [ ! -x "$FRAMES" ]; then
	fail tools "$FRAMES is not built (make all)"; exit 1
fi
CAM=test:640x480@30:H264
if ! start_vcapd_any --device $CAM; then
	fail start "daemon did not come up"; exit 1
fi
U=http://127.0.0.1:$VPORT
# what the camera sends: frames 0..899 (30 s from the stream's start)
"$FRAMES" $CAM 0 900 "$TMP/fed.h264" || fail fed "testsrc_frames failed"
GOP_MS=1000

curl -s -o /dev/null --max-time 20 "$U/stream.h264" & hold=$!
PIDS="$PIDS $hold"
python3 tests/tools/http_join.py "$VPORT" 3 --wait-gop 0.2 /stream.h264 "$TMP/j1.h264" \
	0.4 /stream.h264 "$TMP/j2.h264" 0.6 /stream.mp4 "$TMP/j3.mp4" >"$TMP/joins.t"
kill $hold 2>/dev/null
gop=$(awk '/^gop_bytes/ {print $2}' "$TMP/joins.t")
check gop_counted "$([ "${gop:-0}" -gt 0 ]; echo $?)" "/api/status memory gop: ${gop:-none}"

for j in j1 j2 j3; do
	ttfb=$(grep "/$j\.[hm]" "$TMP/joins.t" | awk '{print $3}')
	if [ $j = j3 ]; then
		name=mp4
		$NALS mp4trim "$TMP/j3.mp4" "$TMP/j3_t.mp4"
		ffmpeg -nostdin -v error -i "$TMP/j3_t.mp4" -enc_time_base -1 -f null - >"$TMP/$j.err" 2>&1
		ffmpeg -nostdin -v error -i "$TMP/j3_t.mp4" -c:v copy -bsf:v h264_mp4toannexb \
			-f h264 "$TMP/${j}_t.h264" 2>/dev/null
	else
		name=annexb${j#j}
		$NALS trim "$TMP/$j.h264" "$TMP/${j}_t.h264"
		ffmpeg -nostdin -v error -i "$TMP/${j}_t.h264" -f null - >"$TMP/$j.err" 2>&1
	fi
	first=$(ffprobe -v error -show_frames -read_intervals '%+#1' -show_entries \
		frame=key_frame,pict_type -of csv=p=0 "$TMP/${j}_t.h264" 2>&1 | head -1)
	r=$($NALS check "$TMP/fed.h264" "$TMP/${j}_t.h264")
	echo "$T.$name: INFO first body byte after ${ttfb:-?} ms (camera GOP $GOP_MS ms); $r"
	set -- $r
	check "${name}_at_once" "$([ "${ttfb:--1}" -ge 0 ] && [ "$ttfb" -lt $((GOP_MS / 4)) ]; echo $?)" \
		"first body byte after ${ttfb:-?} ms, want < $((GOP_MS / 4))"
	check "${name}_starts_idr_identical" "$([ "$first" = "1,I" ] && [ "${12}" = 1 ] &&
		[ "${10}" = 0 ] && [ "$4" -ge 60 ]; echo $?)" "first '$first'; $r"
	check "${name}_decodes" "$([ ! -s "$TMP/$j.err" ]; echo $?)" "ffmpeg: $(head -c 300 "$TMP/$j.err")"
done

stopped_clean
