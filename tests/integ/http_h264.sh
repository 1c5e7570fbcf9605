#!/bin/sh
# H.264 over HTTP from the software encoder on the test pattern: ffmpeg
# decodes /stream.h264, /stream?format=h264 and /stream.mp4 with 0 errors
# and every stream starts with an IDR; the MP4 starts ftyp, moov; a client
# joining mid-stream (gop=300: the next natural IDR is 10 s away) gets its
# first frame at once, an IDR, and decodes from it; two clients with the
# same parameters share one encoder; a slow reader (small socket buffer,
# 8 KB/s) decodes without an error (when it skips, it resumes at IDRs);
# bad requests are refused. The daemon picks its own port.
cd "$(dirname "$0")/../.." || exit 2
T=http_h264
. tests/integ/lib/common.sh

for c in ffmpeg ffprobe python3; do
	if ! command -v $c >/dev/null 2>&1; then
		skip all "$c is not installed"; exit 0
	fi
done
if ! start_vcapd_any --device test:640x480@30:YUYV --log-level debug; then
	fail start "daemon did not come up"; exit 1
fi
U=http://127.0.0.1:$VPORT

# cut_au IN OUT: IN (Annex-B with 4-byte start codes, cut anywhere by a
# timeout) without its last NAL unit and the parameter sets before it, so
# every access unit left is whole.
cut_au() {
	python3 -c 'import sys
p = open(sys.argv[1], "rb").read().split(b"\0\0\0\1")[:-1]
while len(p) > 1 and p[-1] and (p[-1][0] & 0x1f) in (7, 8):
	p.pop()
open(sys.argv[2], "wb").write(b"\0\0\0\1".join(p))' "$1" "$2"
}

# decode NAME URL-OR-FILE MIN: ffmpeg decodes at least MIN frames with no
# error output and the first frame is an I frame (key).
decode() {
	timeout 30 ffmpeg -v error -i "$2" -frames:v $(($3 + 30)) -f framemd5 "$TMP/$1.md5" 2>"$TMP/$1.err"
	n=$(grep -vc '^#' "$TMP/$1.md5" 2>/dev/null); n=${n:-0}
	u=$(grep -v '^#' "$TMP/$1.md5" | awk -F, '{print $6}' | sort -u | wc -l)
	first=$(timeout 30 ffprobe -v error -show_frames -read_intervals '%+#1' \
		-show_entries frame=key_frame,pict_type -of csv=p=0 "$2" 2>&1 | head -1)
	check "$1" "$([ "$n" -ge "$3" ] && [ "$u" -ge $(($3 / 2)) ] && [ ! -s "$TMP/$1.err" ] &&
		[ "$first" = "1,I" ]; echo $?)" \
		"$n frames ($u distinct; want >= $3), first frame '$first', errors: $(head -c 300 "$TMP/$1.err")"
}

# Headers.
curl -s -D "$TMP/h" -o /dev/null --max-time 1 "$U/stream.h264?size=320x240"
check annexb_headers "$([ "$(hdr "$TMP/h" Content-Type)" = video/h264 ] &&
	[ "$(hdr "$TMP/h" X-Size)" = 320x240 ]; echo $?)" "$(tr -d '\r' <"$TMP/h" | tr '\n' ' ')"
# The init segment comes with the first IDR, which may wait for a device
# mode switch and the encoder's start (over a second under ASan): up to 5 s,
# reading stops after the first 4 KiB (ftyp, moov and the start of the
# first fragment); the second box must still be a moov.
curl -s -D "$TMP/h" --max-time 5 "$U/stream.mp4" | head -c 4096 >"$TMP/head.mp4"
boxes=$(od -An -c -j4 -N4 "$TMP/head.mp4" | tr -d ' \n')
size=$(od -An -tu1 -N4 "$TMP/head.mp4" | awk '{print $1*16777216+$2*65536+$3*256+$4}')
second=$(od -An -c -j$((size + 4)) -N4 "$TMP/head.mp4" | tr -d ' \n')
check mp4_headers_ftyp_moov "$([ "$(hdr "$TMP/h" Content-Type)" = video/mp4 ] && [ "$boxes" = ftyp ] &&
	[ "$second" = moov ]; echo $?)" "type '$(hdr "$TMP/h" Content-Type)', boxes '$boxes' '$second'"

# Whole streams decode: Annex-B (both URLs) and MP4.
decode annexb_decodes "$U/stream.h264" 60
decode query_form_decodes "$U/stream?format=h264&size=320x240&bitrate=300k" 60
decode mp4_decodes "$U/stream.mp4?size=320x240" 60
timeout 20 ffprobe -v error -show_entries stream=codec_name,profile,width,height -of csv=p=0 \
	"$U/stream.mp4?size=320x240" >"$TMP/probe" 2>&1
check mp4_probe "$(grep -q '^h264,Constrained Baseline,320,240' "$TMP/probe"; echo $?)" "$(head -c 200 "$TMP/probe")"

# A client joining mid-stream: the first holds the output (gop=300, 10 s
# between natural IDRs); the second is asked an IDR for and starts with it.
J="$U/stream.h264?gop=300&size=320x240"
curl -s -o "$TMP/first.h264" --max-time 9 "$J" & c1=$!
sleep 3
curl -s -o "$TMP/join.h264" --max-time 2 "$J"
cut_au "$TMP/join.h264" "$TMP/join_cut.h264"
decode join_mid_stream "$TMP/join_cut.h264" 20
# encode once: both clients on one output of the camera
outs=$(curl -s "$U/api/status" | python3 -c 'import json, sys
s = json.load(sys.stdin)
print(sum(1 for c in s["cams"] for o in c.get("outputs", []) if o["plan"]["output"]["fourcc"] == "H264"))' 2>&1)
wait $c1
cut_au "$TMP/first.h264" "$TMP/first_cut.h264"
decode first_client_whole "$TMP/first_cut.h264" 200
# the first client's stream has IDRs where the second joined, not only at 0
idr=$(ffprobe -v error -show_frames -show_entries frame=key_frame -of csv=p=0 "$TMP/first_cut.h264" | grep -c '^1')
check join_forces_idr "$([ "$idr" -ge 2 ]; echo $?)" "$idr IDRs in the first client's 9 s (gop 300)"
check one_encoder_per_output "$([ "$outs" = 1 ]; echo $?)" "$outs H.264 outputs (want 1)"

# The device mode switches under an H.264 client (an MJPEG client wants
# more than its 320x240 I420 mode): its output gets a new encoder, whose
# first picture is an IDR; the Annex-B stream decodes without an error
# across it, and the MP4 client (same parameter sets) goes on. Both are
# still streaming when curl's --max-time ends them (exit 28), and each got
# 5/7 of the frames the camera delivered while they ran (its stats.frames;
# the clients are at the camera's rate), and at least 105 (half of 7 s at
# 30 fps) whatever the camera did: the bound was 150 in 7 s, 5/7 of the
# nominal 210, which counted against the clients what the camera did not
# deliver (device restarts, a loaded box: 190 once) and passed a stream
# that ended at the second switch (~157 frames).
cam_frames() {
	curl -s "$U/api/status" | python3 -c 'import json, sys
print(json.load(sys.stdin)["cams"][0]["stats"]["frames"])' 2>/dev/null
}
fc0=$(cam_frames)
curl -s -o "$TMP/sw.h264" --max-time 7 "$U/stream.h264?size=320x240" & a=$!
curl -s -o "$TMP/sw.mp4" --max-time 7 "$U/stream.mp4?size=320x240" & b=$!
sleep 2.5
curl -s -o /dev/null --max-time 2.5 "$U/stream?size=640x480"
wait $a; ra=$?
wait $b; rb=$?
fc=$(($(cam_frames) - ${fc0:-0}))
want=$((fc * 5 / 7)); [ "$want" -ge 105 ] || want=105
echo "$T.switch_camera_frames: INFO $fc frames from the camera while the clients ran: each client wants >= $want"
switches=$(grep -ac 'mode .* -> ' "$VLOG")
cut_au "$TMP/sw.h264" "$TMP/sw_cut.h264"
decode switch_annexb_decodes "$TMP/sw_cut.h264" "$want"
check switch_annexb_kept "$([ "$ra" = 28 ]; echo $?)" "curl of the Annex-B client exited $ra (28: still streaming at --max-time 7)"
idr=$(ffprobe -v error -show_frames -show_entries frame=key_frame -of csv=p=0 "$TMP/sw_cut.h264" | grep -c '^1')
check switch_new_idr "$([ "$idr" -ge 2 ] && [ "$switches" -ge 2 ]; echo $?)" "$idr IDRs, $switches mode switches in the log"
n=$(timeout 30 ffprobe -v error -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$TMP/sw.mp4" 2>/dev/null)
check switch_mp4_kept "$([ "${n:-0}" -ge "$want" ] && [ "$rb" = 28 ]; echo $?)" \
	"the MP4 client got ${n:-0} frames in 7 s, the camera delivered $fc (want >= $want); curl exited $rb (28: still streaming)"

# A slow reader: 8 KiB receive buffer, 8 KB/s, 8 s, on a stream of ~30 KB/s.
python3 -c 'import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
s.connect(("127.0.0.1", int(sys.argv[1])))
s.sendall(("GET /stream.h264?bitrate=1M&gop=30 HTTP/1.1\r\nHost: 127.0.0.1:%s\r\n\r\n" % sys.argv[1]).encode())
out, t_end = b"", time.time() + 8
while time.time() < t_end:
	b = s.recv(4096)
	if not b:
		break
	out += b
	time.sleep(0.5)
i = out.find(b"\r\n\r\n")
open(sys.argv[2], "wb").write(out[i + 4:])' "$VPORT" "$TMP/slow.h264"
cut_au "$TMP/slow.h264" "$TMP/slow_cut.h264"
sleep 0.3
skipped=$(grep -o 'stream ended after [0-9]* frames, [0-9]* skipped' "$VLOG" | tail -1 | awk '{print $6}')
decode slow_client_decodes "$TMP/slow_cut.h264" 10
# Whether it skipped depends on how much loopback TCP buffers (autotuned up
# to megabytes): the skip-to-IDR rule itself is checked deterministically on
# a socketpair by test_client's h264_key_frames.
echo "$T.slow_client_skipped: INFO ${skipped:-?} frames skipped"

# Refused: H.264 is a stream format.
for q in "snapshot?format=h264" "raw?format=h264" "raw/stream?format=h264" "stream.h264?format=YUYV" \
	"stream.h264?bitrate=abc" "stream.h264?gop=0" "stream.mp4?bitrate=5"; do
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$U/$q")
	check "refused_$(echo "$q" | tr -c 'a-z0-9\n' _)" "$([ "$code" = 400 ]; echo $?)" "/$q: $code"
done
curl -s "$U/api/try?format=h264&size=320x240&bitrate=500k&gop=15" >"$TMP/try"
check api_try "$(grep -q '"endpoint":"/stream.h264"' "$TMP/try" && grep -q '"fourcc":"H264"' "$TMP/try" &&
	grep -q '"bitrate":500000' "$TMP/try" && grep -q '"gop":15' "$TMP/try"; echo $?)" "$(head -c 300 "$TMP/try")"

# A pause in an output's frames (its clients left and a new one came within
# the grace period) is a gap in the MP4 timeline: no fragment lasts longer
# than 2 frame intervals and half again (one once lasted the whole pause, and a player
# stretched its buffer over it and ran ahead of the capture clock).
# The pause is 1.2 s: an output without clients is freed once idle for
# OUTPUT_LINGER_MS (2 s; the gc runs every second), so a pause of 2 s
# could meet a new output, whose timeline has no pause, and pass without
# exercising it. Both clients must meet one output: its MP4 timeline's
# start (mp4_t0_ms) is the same (the first client stays 2 s so that the
# output surely had frames before).
# mp4_t0 PID: while curl PID runs, the mp4_t0_ms of the output its client
# is on (the 320-wide H.264 output with a client)
mp4_t0() {
	for _i in $(seq 30); do
		t=$(curl -s "$U/api/status" | python3 -c 'import json, sys
s = json.load(sys.stdin)
print(" ".join(str(o["mp4_t0_ms"]) for c in s["cams"] for o in c.get("outputs", [])
	if o["plan"]["output"]["fourcc"] == "H264" and o["plan"]["output"]["width"] == 320 and
	o["clients"] and "mp4_t0_ms" in o))' 2>/dev/null)
		[ -n "$t" ] && break
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	echo "$t"
}
curl -s -o /dev/null --max-time 2 "$U/stream.mp4?size=320x240&fps=30" & p=$!
t0a=$(mp4_t0 $p)
wait $p
sleep 1.2
curl -s -o "$TMP/pause.mp4" --max-time 2 "$U/stream.mp4?size=320x240&fps=30" & p=$!
t0b=$(mp4_t0 $p)
wait $p
durs=$(python3 -c 'import struct, sys
d = open(sys.argv[1], "rb").read(); i = 0; out = []
while i + 8 <= len(d):
    sz, t = struct.unpack(">I4s", d[i:i + 8])
    if sz < 8: break
    if t == b"moof":
        m = d[i:i + sz]; k = m.find(b"trun")
        out.append(struct.unpack(">I", m[k + 16:k + 20])[0])
    i += sz
print(len(out), max(out) if out else 0)' "$TMP/pause.mp4")
set -- $durs
[ "${1:-0}" -ge 20 ] && [ "${2:-999999}" -le 9000 ] && [ "$t0a" = "$t0b" ] && [ -n "$t0a" ]
check mp4_pause_is_a_gap "$?" "$1 fragments, longest duration $2 ticks of 90 kHz (at most 9000: 2 frames at 30 fps and the margin of vc_mp4_live_duration); output's mp4_t0_ms before the pause '$t0a', after '$t0b' (want one output)"
stop_vcapd
check clean_exit "$?" "exit status"
