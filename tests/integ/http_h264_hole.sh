#!/bin/sh
# An H.264 camera that loses a picture mid-GOP (the driver dropped a buffer,
# or the capture dropped a corrupt one): the pictures after the hole may
# refer to the lost one, so a passthrough client is sent none of them until
# the camera's next IDR. Camera: the test pattern's H.264 mode (an IDR
# every 30 frames) behind the fault source, frame 45 flagged as an error
# (capture drops it). A /stream.h264 client from the start gets a stream
# in which every non-IDR picture follows the one before it (frame_num), the
# pictures 46..59 are not sent, and it decodes with no error. The daemon
# picks its own port.
cd "$(dirname "$0")/../.." || exit 2
T=http_h264_hole
. tests/integ/lib/common.sh
NALS="python3 tests/tools/h264_nals.py"

for c in ffmpeg python3; do
	if ! command -v $c >/dev/null 2>&1; then
		skip all "$c is not installed"; exit 0
	fi
done
CAM='fault:error@45;test:320x240@30:H264'
if ! start_vcapd_any --device "$CAM" --log-level debug; then
	fail start "daemon did not come up"; exit 1
fi
U=http://127.0.0.1:$VPORT
curl -s -o "$TMP/s.h264" --max-time 4 "$U/stream.h264"
r=$($NALS refs "$TMP/s.h264" 30)
# shellcheck disable=SC2086
set -- $r
# pics N idr I broken B short_gops S first_idr F
[ "$6" = 0 ] && [ "${10}" = 1 ] && [ "$2" -ge 60 ] 2>/dev/null
check no_picture_after_hole "$?" "$r"
# the hole's GOP ends short (pictures 30..44 of 30..59 sent): the client got
# the pause, not pictures with a missing reference
[ "$8" -ge 1 ] 2>/dev/null
check hole_seen "$?" "$r (want a short GOP where frame 45 was lost)"
grep -q 'after a hole in the camera.s sequence' "$VLOG"
check hole_logged "$?" "$(grep -c 'hole' "$VLOG") lines"
e=$(ffmpeg -v error -i "$TMP/s.h264" -f null - 2>&1 | head -3)
[ -z "$e" ]
check decodes "$?" "$e"
stop_vcapd
check clean_exit "$?" "exit status"
