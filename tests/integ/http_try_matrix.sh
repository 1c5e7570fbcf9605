#!/bin/sh
# /api/try says exactly what is served (issue 21): for a matrix of URLs over
# /stream, /snapshot, /raw, /raw/stream, /stream.mp4 and /stream.h264 against
# cameras in four states (one streaming another mode for a background viewer,
# one idle, one absent, one whose budget is full: max_outputs = 2 held by two
# viewers), /api/try?endpoint=E&... just before the request answers the same
# status code, and for a 200 the same delivered size (X-Size), format
# (X-Fourcc on raw, else the content type's) and steps (X-Steps) the request
# is then served with. No endpoint sends its rate in a header: fps is not
# compared. Each mismatch is printed; a row is asked up to three times (the
# camera's mode may still be settling after the previous row's switch; the
# second and third wait for the policy's hold to be over too).
cd "$(dirname "$0")/../.." || exit 2
T=http_try_matrix
. tests/integ/lib/common.sh

printf '[server]\nmax_outputs = 2\n' >"$TMP/m.conf"
if ! start_vcapd_any --config "$TMP/m.conf" --device test:640x480@15:YUYV \
	--device test:640x480@15:YUYV --device /dev/vcapd-try-no-such-camera \
	--device test:320x240@15:YUYV; then
	fail start "vcapd did not start"; exit 1
fi
U=http://127.0.0.1:$VPORT
# background viewers: cam 0 streams another mode, cam 3 holds max_outputs
for q in "cam=0&size=320x240" "cam=3&size=160x120" "cam=3&quality=40"; do
	curl -s -N --max-time 600 -o /dev/null "$U/stream?$q" &
	PIDS="$PIDS $!"
done
BG=3

# settle [hold]: until only the background viewers are clients and no
# camera has a mode choice pending (10 s at most: a busy host is slow to
# let the previous row's client go); with "hold" also until no camera
# switched within the policy's hold (2 s), so the row's own switch is not
# held back (asked so before the second and third try of a row)
settle() {
	_end=$(($(date +%s) + 10))
	while [ "$(date +%s)" -lt $_end ]; do
		_s=$(curl -s "$U/api/status")
		[ "$(echo "$_s" | grep -o '"peer"' | wc -l)" = "$BG" ] &&
			! echo "$_s" | grep -q '"rechoice_pending":true' &&
			{ [ -z "${1:-}" ] || echo "$_s" | grep -o '"since_switch_s":-*[0-9.]*' |
				awk -F: '$2 >= 0 && $2 < 2.2 { n++ } END { exit n > 0 }'; } && return 0
		sleep 0.1
	done
	return 0
}
settle

# served FORMAT from a header dump: raw frames say X-Fourcc, JPEG and H.264
# responses their content type
fmt_of() {
	_f=$(hdr "$1" X-Fourcc)
	[ -n "$_f" ] && { echo "$_f"; return; }
	case $(hdr "$1" Content-Type) in
	multipart/x-mixed-replace* | image/jpeg) echo MJPG ;;
	video/h264 | video/mp4) echo H264 ;;
	*) echo "?" ;;
	esac
}

# row CAM ENDPOINT QUERY: "" when /api/try and the response agree, else what
# differs
row() {
	_try=$(curl -s -w '\n%{http_code}' --max-time 3 "$U/api/try?endpoint=$2&cam=$1${3:+&$3}")
	_tst=$(echo "$_try" | tail -1)
	_tb=$(echo "$_try" | head -1)
	rm -f "$TMP/h"
	curl -s -N -D "$TMP/h" -o /dev/null --max-time 1.5 "$U$2?cam=$1${3:+&$3}"
	_st=$(status "$TMP/h")
	if [ "$_st" != "$_tst" ]; then
		echo "status try=$_tst served=$_st"
		return
	fi
	[ "$_st" = 200 ] || return
	_tw=$(echo "$_tb" | sed -n 's/.*"output":{"fourcc":"\([^"]*\)"[^}]*"width":\([0-9]*\),"height":\([0-9]*\)[^}]*},"steps":"\([^"]*\)".*/\1 \2x\3 \4/p')
	_sv="$(fmt_of "$TMP/h") $(hdr "$TMP/h" X-Size) $(hdr "$TMP/h" X-Steps)"
	[ "$_tw" = "$_sv" ] || echo "try '$_tw' served '$_sv'"
}

# CAM ENDPOINT QUERY, one per line (cams: 0 streaming another mode, 1 idle,
# 2 absent, 3 budget full)
cat >"$TMP/rows" <<'EOF'
0 /stream
0 /stream size=640x480
0 /stream size=160x120&quality=50
0 /stream rotate=90
0 /stream fps=5&size=320x240
0 /snapshot
0 /snapshot size=640x480
0 /snapshot quality=30&rotate=180
0 /raw size=320x240
0 /raw format=NV12&size=160x120
0 /raw/stream size=160x120
0 /stream.mp4 size=320x240&bitrate=300000
0 /stream.h264
0 /stream quality=0
1 /stream
1 /stream size=320x240&quality=60
1 /snapshot
1 /snapshot size=160x120
1 /raw
1 /raw format=RGB3&size=320x240
1 /raw/stream format=NV12
1 /stream.mp4
1 /stream.h264 size=320x240&fps=5
1 /stream format=h264&size=320x240
1 /raw format=MJPEG
2 /stream
2 /stream size=320x240
2 /snapshot
2 /snapshot placeholder=1
2 /raw
2 /raw/stream size=160x120
2 /stream.mp4
2 /stream.h264
3 /stream
3 /stream size=160x120
3 /stream size=80x60
3 /snapshot
3 /snapshot quality=40
3 /snapshot size=240x180
3 /raw size=320x240
3 /raw/stream
3 /stream.mp4
3 /stream.h264 size=160x120
3 /stream rotate=45
EOF

n=0; bad=0
while read -r cam ep q; do
	n=$((n + 1))
	name="row$(printf %02d "$n")"
	for try in 1 2 3; do
		settle $([ $try -gt 1 ] && echo hold)
		why=$(row "$cam" "$ep" "$q")
		[ -z "$why" ] && break
	done
	if [ -z "$why" ]; then
		ok "$name" "${VERBOSE:+cam $cam $ep?$q}"
	else
		bad=$((bad + 1))
		fail "$name" "cam $cam $ep?$q: $why"
	fi
done <"$TMP/rows"
echo "$T: $n URLs, $bad where /api/try and the response disagree"
[ "$n" -ge 40 ]
check matrix_size $? "$n rows"
stopped_clean
