#!/bin/sh
# An H.264 camera with MJPEG and raw modes too (like a UVC webcam such as
# the Logitech C920), played by the test pattern's H.264 mode
# (test:640x480@30:H264), through the switches between its modes:
#  a) an H.264 client alone: the camera runs its H.264 mode, passed through
#     (X-Steps: passthrough, /api/status mode H264); every NAL unit served
#     is byte for byte one the source produced (tools/testsrc_frames renders
#     them), ffmpeg decodes with 0 errors;
#  b) an MJPEG /stream client joins: the camera switches to MJPEG, the MJPEG
#     client gets frames, the H.264 clients go on from an IDR of the encoder
#     (Annex-B: one capture over every step decodes with 0 errors; MP4: kept
#     while the encoder's SPS/PPS equal the camera's, ended otherwise, as
#     README says);
#  c) the MJPEG client leaves: after the policy's settle time (300 ms; the
#     2 s hold since the last switch is over) the camera is back in H.264
#     passthrough, the H.264 clients go on from the camera's next IDR;
#  d) /api/status and the log name the mode at each step.
# A camera whose SPS differs from the encoder's (bitrate=20M): the MP4
# client is ended at the switch, the Annex-B one decodes on.
# Then ps_once (SPS/PPS only with the camera's first IDR): every IDR served
# carries them (inserted), MP4 plays. The daemon picks its own port.
cd "$(dirname "$0")/../.." || exit 2
T=http_h264_camera
. tests/integ/lib/common.sh
VCAP_BUILD=${VCAP_BUILD:-build}
FRAMES=$VCAP_BUILD/tools/testsrc_frames
NALS=tests/tools/h264_nals.py

for c in ffmpeg ffprobe python3; do
	if ! command -v $c >/dev/null 2>&1; then
		skip all "$c is not installed"; exit 0
	fi
done
if [ ! -x "$FRAMES" ]; then
	fail tools "$FRAMES is not built (make all)"; exit 1
fi
CAM=test:640x480@30:H264
if ! start_vcapd_any --device $CAM --log-level debug; then
	fail start "daemon did not come up"; exit 1
fi
U=http://127.0.0.1:$VPORT
# What the camera sends: frames 0..899 (30 s; every stream start is frame 0)
"$FRAMES" $CAM 0 900 "$TMP/fed.h264" || fail fed "testsrc_frames failed"

# mode: the camera's current mode fourcc and the policy's reason
mode() {
	curl -s "$U/api/status" | python3 -c 'import json, sys
c = json.load(sys.stdin)["cams"][0]
print(c["mode"]["fourcc"], c["policy"]["why"], c["state"])' 2>&1
}
# decode NAME FILE MIN: ffmpeg decodes FILE (cut to whole access units) to
# at least MIN frames with no error output.
decode() {
	python3 $NALS trim "$2" "$2.cut" 2>/dev/null || cp "$2" "$2.cut"
	timeout 30 ffmpeg -v error -i "$2.cut" -f framemd5 "$TMP/$1.md5" 2>"$TMP/$1.err"
	n=$(grep -vc '^#' "$TMP/$1.md5" 2>/dev/null); n=${n:-0}
	check "$1" "$([ "$n" -ge "$3" ] && [ ! -s "$TMP/$1.err" ]; echo $?)" \
		"$n frames (want >= $3), errors: $(head -c 300 "$TMP/$1.err")"
}
# identical NAME FILE: every NAL unit of FILE is one the camera sent.
identical() {
	python3 $NALS trim "$2" "$2.cut" 2>/dev/null || cp "$2" "$2.cut"
	r=$(python3 $NALS check "$TMP/fed.h264" "$2.cut" 2>&1)
	set -- "$1" $r
	check "$1" "$([ "$3" -ge 30 ] && [ "${11}" = 0 ]; echo $?)" "$*"
}

# The camera lists H.264 beside MJPEG and YUYV; nobody watches: its
# default picture (the configured size, not in H.264) is MJPEG.
curl -s "$U/api/cams/0" >"$TMP/cam.json"
fmts=$(python3 -c 'import json, sys
print(" ".join(sorted(f["fourcc"] for f in json.load(open(sys.argv[1]))["formats"] if f["fourcc"] in ("H264", "MJPG", "YUYV"))))' "$TMP/cam.json" 2>&1)
check caps_h264_mjpeg_yuyv "$([ "$fmts" = "H264 MJPG YUYV" ]; echo $?)" "formats: $fmts"
set -- $(mode)
check idle_default_mjpeg "$([ "$1" = MJPG ] && [ "$2" = default ]; echo $?)" "mode $*"
curl -s "$U/api/try?format=h264" >"$TMP/try"
check try_h264_passthrough "$(grep -q '"steps":"passthrough"' "$TMP/try" &&
	grep -q '"device_mode":{"fourcc":"H264"' "$TMP/try"; echo $?)" "$(head -c 400 "$TMP/try")"

# cam_frames: the frames the camera delivered so far (stats.frames)
cam_frames() {
	curl -s "$U/api/status" | python3 -c 'import json, sys
print(json.load(sys.stdin)["cams"][0]["stats"]["frames"])' 2>/dev/null
}
# The long clients (every step): Annex-B and MP4, until the steps are over
# (ended then: on a busy host the steps take longer than any fixed time).
fc0=$(cam_frames)
curl -s -D "$TMP/all.h" -o "$TMP/all.h264" --max-time 120 "$U/stream.h264" & ca=$!
curl -s -o "$TMP/all.mp4" -w '%{time_total}' --max-time 120 "$U/stream.mp4" >"$TMP/all.mp4.t" & cm=$!
t_all=$(date +%s)

# a) H.264 clients alone: passthrough.
curl -s -D "$TMP/a.h" -o "$TMP/a.h264" --max-time 2.5 "$U/stream.h264"
set -- $(mode)
check a_status_h264 "$([ "$1" = H264 ] && [ "$2" = streams ] && [ "$3" = streaming ]; echo $?)" "mode $*"
check a_passthrough "$([ "$(hdr "$TMP/a.h" X-Steps)" = passthrough ] &&
	[ "$(hdr "$TMP/all.h" X-Steps)" = passthrough ]; echo $?)" \
	"X-Steps '$(hdr "$TMP/a.h" X-Steps)', long client '$(hdr "$TMP/all.h" X-Steps)'"
identical a_nal_units_identical "$TMP/a.h264"
decode a_decodes "$TMP/a.h264" 40

# b) an MJPEG client joins (3 s): the camera's MJPEG mode.
curl -s -D "$TMP/b.h" -o "$TMP/b.mjpeg" --max-time 3 "$U/stream" & cb=$!
sleep 0.8
# a short H.264 client (it leaves well before the MJPEG one: its leave's
# re-choice is over when the MJPEG client's settle time starts)
curl -s -D "$TMP/b264.h" -o "$TMP/b.h264" --max-time 0.8 "$U/stream.h264"
set -- $(mode)
check b_status_mjpeg "$([ "$1" = MJPG ] && [ "$2" = streams ]; echo $?)" "mode $*"
wait $cb
# its parts' rate on the capture clock (X-Timestamp), not per wall second:
# the switch to MJPEG takes part of the 3 s, more on a busy host
set -- $(tr -d '\r' <"$TMP/b.mjpeg" | awk '/^X-Timestamp: / { n++; t = $2; if (n == 1) t0 = t }
	END { printf "%d %.1f", n, (n > 1 && t > t0) ? (n - 1) / (t - t0) : 0 }')
check b_mjpeg_frames "$([ "$1" -ge 15 ] && awk -v r="$2" 'BEGIN { exit !(r >= 24) }' &&
	[ "$(hdr "$TMP/b.h" X-Steps)" = passthrough ]; echo $?)" \
	"$1 MJPEG parts in 3 s at $2 fps on the capture clock (want >= 15 at >= 24), X-Steps '$(hdr "$TMP/b.h" X-Steps)'"
check b_h264_encoded "$([ "$(hdr "$TMP/b264.h" X-Steps)" != passthrough ] &&
	[ -n "$(hdr "$TMP/b264.h" X-Steps)" ]; echo $?)" "a new H.264 client now: X-Steps '$(hdr "$TMP/b264.h" X-Steps)'"

# c) the MJPEG client left: back to H.264 passthrough after the settle time
# (polled, 10 s at most; the log below times the switch on the daemon's clock).
t_c=$(date +%s)
while :; do
	set -- $(mode)
	[ "$1" = H264 ] && [ "$2" = streams ] && break
	[ $(($(date +%s) - t_c)) -ge 10 ] && break
	sleep 0.2
done
check c_status_h264 "$([ "$1" = H264 ] && [ "$2" = streams ]; echo $?)" "mode $*"
# from the log: the last stream client's end before the switch back
# (the MJPEG one) to that switch
delay=$(python3 -c 'import re, sys
end = None
for l in open(sys.argv[1], errors="replace"):
    t = re.match(r"\S+ (\d+):(\d+):([\d.]+) ", l)
    if not t:
        continue
    t = int(t[1]) * 3600 + int(t[2]) * 60 + float(t[3])
    if "stream ended after" in l:
        end = t
    elif re.search(r"mode MJPG .* -> H264", l) and end is not None:
        print("%.3f" % (t - end))
        break' "$VLOG" 2>&1)
check c_back_after_settle "$(python3 -c 'import sys; sys.exit(not 0.25 <= float(sys.argv[1]) <= 1.0)' "${delay:-99}"; echo $?)" \
	"back to H264 ${delay:-?} s after the MJPEG client left (settle 0.3 s, hold 2 s since the last switch over)"
curl -s -D "$TMP/c.h" -o "$TMP/c.h264" --max-time 3 "$U/stream.h264"
check c_passthrough "$([ "$(hdr "$TMP/c.h" X-Steps)" = passthrough ]; echo $?)" "X-Steps '$(hdr "$TMP/c.h" X-Steps)'"
identical c_nal_units_identical "$TMP/c.h264"
decode c_decodes "$TMP/c.h264" 40

# the long clients: still connected after every step (the server ended
# neither), then ended here
kill -0 $ca 2>/dev/null && alive_a=yes || alive_a=no
kill -0 $cm 2>/dev/null && alive_m=yes || alive_m=no
t_all=$(($(date +%s) - t_all))
kill $ca $cm 2>/dev/null
{ wait $ca; wait $cm; } 2>/dev/null
# What the long clients got is judged against what the camera delivered
# while they ran (its stats.frames; the clients are at the camera's rate):
# the same share as before, 25/36 of it (the bound was 250 in 12 s, of a
# nominal 360), and at least 180 (half of 12 s at 30 fps) whatever the
# camera did; both are still connected when the steps are over. The bound
# on wall time counted against the clients what the camera did not
# deliver (three device restarts, a loaded box).
fc=$(($(cam_frames) - ${fc0:-0}))
want=$((fc * 25 / 36)); [ "$want" -ge 180 ] || want=180
echo "$T.all_camera_frames: INFO $fc frames from the camera while the long clients ran: each wants >= $want"
# The long Annex-B client: 0 errors over every step; it holds the camera's
# NAL units and the encoder's, and at each change of source the first
# picture is an IDR (it went on from the next IDR).
decode all_annexb_decodes "$TMP/all.h264" "$want"
check all_annexb_kept "$([ "$alive_a" = yes ]; echo $?)" "the long Annex-B client still connected after every step ($t_all s): $alive_a"
python3 $NALS trim "$TMP/all.h264" "$TMP/all.cut" 2>/dev/null || cp "$TMP/all.h264" "$TMP/all.cut"
runs=$(python3 -c 'import sys
sys.path.insert(0, "tests/tools")
from h264_nals import nals
fed = set(nals(open(sys.argv[1], "rb").read()))
runs, bad, last, sps = [], 0, None, set()
for n in nals(open(sys.argv[2], "rb").read()):
    t = n[0] & 0x1f
    if t in (7, 8):
        sps.add(n)
    if t not in (1, 5):
        continue
    src = "cam" if n in fed else "enc"
    if src != last:
        runs.append(src)
        bad += t != 5
        last = src
print(" ".join(runs), "non_idr_starts", bad, "param_sets", len(sps))' "$TMP/fed.h264" "$TMP/all.cut" 2>&1)
echo "$runs" | grep -q '^cam enc cam non_idr_starts 0 '
check all_switches_at_idrs "$?" "runs of camera/encoder pictures: $runs"
# MP4: README: kept while the parameter sets stay, ended when they change.
# Its whole fragments (ended mid-fragment above).
mt=$(cat "$TMP/all.mp4.t")
python3 $NALS mp4trim "$TMP/all.mp4" "$TMP/all_t.mp4" 2>/dev/null || cp "$TMP/all.mp4" "$TMP/all_t.mp4"
mn=$(timeout 30 ffprobe -v error -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$TMP/all_t.mp4" 2>/dev/null)
timeout 30 ffmpeg -v error -i "$TMP/all_t.mp4" -enc_time_base -1 -f null - 2>"$TMP/mp4.err"
case "$runs" in
*"param_sets 2") # one SPS and one PPS: the encoder's equal the camera's
	check mp4_kept_same_param_sets "$([ "$alive_m" = yes ] &&
		[ "${mn:-0}" -ge "$want" ] && [ ! -s "$TMP/mp4.err" ]; echo $?)" \
		"same SPS/PPS: MP4 client still connected after every step ($t_all s): $alive_m (curl's own end: '$mt' s), ${mn:-0} frames (want >= $want), errors: $(head -c 200 "$TMP/mp4.err")" ;;
*)
	check mp4_ended_new_param_sets "$([ "$alive_m" = no ] && python3 -c 'import sys; sys.exit(not float(sys.argv[1]) < 6)' "$mt"; echo $?)" \
		"other SPS/PPS: MP4 client lasted $mt s, ${mn:-0} frames" ;;
esac
# d) the log: each switch with its reason, in order
seq=$(grep -a 'mode .* -> ' "$VLOG" | sed 's/.*-> \([A-Z0-9]*\) .*(\([a-z]*\):.*/\1:\2/' | tr '\n' ' ')
echo "$seq" | grep -q 'H264:streams MJPG:streams H264:streams'
check log_modes "$?" "switches: $seq"
stop_vcapd
check clean_exit "$?" "exit status"

# A camera whose SPS differs from the encoder's (its encoder at 20 Mbit/s
# writes level 3.2, vcapd's at 640x480 3.0): at the switch to MJPEG the MP4
# client, whose decoder was set up for the camera's SPS, is ended (README:
# MP4 clients end when the parameter sets change); the Annex-B client goes
# on with the new SPS in-band, 0 errors.
CAM=test:640x480@30:H264:bitrate=20M
if ! start_vcapd_any --device $CAM; then
	fail sps_start "daemon did not come up"; exit 1
fi
U=http://127.0.0.1:$VPORT
"$FRAMES" $CAM 0 300 "$TMP/fed.h264" || fail fed "testsrc_frames failed"
fc0=$(cam_frames)
curl -s -o "$TMP/s.h264" --max-time 7 "$U/stream.h264" & ca=$!
curl -s -o "$TMP/s.mp4" -w '%{time_total}' --max-time 7 "$U/stream.mp4" >"$TMP/s.mp4.t" & cm=$!
sleep 2.5
curl -s -o /dev/null --max-time 2 "$U/stream"
wait $ca; ra=$?
wait $cm
# as above: 5/7 of the camera's frames while it ran (was 150 in 7 s, of a
# nominal 210), at least 105, still streaming at the end
fc=$(($(cam_frames) - ${fc0:-0}))
want=$((fc * 5 / 7)); [ "$want" -ge 105 ] || want=105
echo "$T.sps_camera_frames: INFO $fc frames from the camera while the Annex-B client ran: it wants >= $want"
mt=$(cat "$TMP/s.mp4.t")
mn=$(timeout 30 ffprobe -v error -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$TMP/s.mp4" 2>/dev/null)
timeout 30 ffmpeg -v error -i "$TMP/s.mp4" -enc_time_base -1 -f null - 2>"$TMP/smp4.err"
check sps_change_ends_mp4 "$(python3 -c 'import sys; sys.exit(not 2.3 <= float(sys.argv[1]) <= 4.5)' "$mt" &&
	[ "${mn:-0}" -ge 50 ] && [ ! -s "$TMP/smp4.err" ]; echo $?)" \
	"MP4 client ended after $mt s (MJPEG client at 2.5 s), ${mn:-0} frames decoded, errors: $(head -c 200 "$TMP/smp4.err")"
decode sps_change_annexb_decodes "$TMP/s.h264" "$want"
check sps_change_annexb_kept "$([ "$ra" = 28 ]; echo $?)" "curl of the Annex-B client exited $ra (28: still streaming at --max-time 7)"
python3 $NALS trim "$TMP/s.h264" "$TMP/s.cut" 2>/dev/null
levels=$(python3 -c 'import sys
sys.path.insert(0, "tests/tools")
from h264_nals import nals
print(" ".join(sorted(set("%d" % n[3] for n in nals(open(sys.argv[1], "rb").read()) if n[0] & 0x1f == 7))))' "$TMP/s.cut" 2>&1)
check sps_change_in_band "$([ "$levels" = "30 32" ]; echo $?)" "SPS levels in the Annex-B stream: $levels (want 30 32)"
stop_vcapd
check sps_clean_exit "$?" "exit status"

# ps_once: the camera sends SPS/PPS with its first IDR only; the hub puts
# them before every later IDR, MP4's init segment comes from them.
CAM=test:320x240@30:H264:ps_once
if ! start_vcapd_any --device $CAM; then
	fail ps_once_start "daemon did not come up"; exit 1
fi
U=http://127.0.0.1:$VPORT
"$FRAMES" $CAM 0 300 "$TMP/fed.h264" || fail fed "testsrc_frames failed"
# 5 s for >= 90 frames (3 s at 30 fps): the camera starts for this client
# first (its source encodes with openh264, slow under ASan on a loaded
# machine), and 4 s left 1 s for that
curl -s -o "$TMP/p.h264" --max-time 5 "$U/stream.h264" & cp=$!
sleep 1
curl -s -o "$TMP/p.mp4" --max-time 3 "$U/stream.mp4"
wait $cp
python3 $NALS trim "$TMP/p.h264" "$TMP/p.cut" 2>/dev/null
set -- $(python3 $NALS check "$TMP/fed.h264" "$TMP/p.cut" 2>&1)
check ps_once_inserted "$([ "$6" -ge 3 ] && [ "$8" = "$6" ] && [ "${10}" = 0 ]; echo $?)" "$*"
decode ps_once_decodes "$TMP/p.h264" 90
mn=$(timeout 30 ffprobe -v error -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$TMP/p.mp4" 2>/dev/null)
check ps_once_mp4 "$([ "${mn:-0}" -ge 50 ]; echo $?)" "MP4 joined after the first IDR: ${mn:-0} frames in 3 s"
stop_vcapd
check ps_once_clean_exit "$?" "exit status"
