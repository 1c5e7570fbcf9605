#!/bin/sh
# HLS (issue 24): /stream.m3u8 of the 640x480 test camera at 320x240, 15 fps
# (software encoder; no gop= in the URL: one second's worth, so segments of
# about 1 s). The first playlist request waits for a segment and lists the
# tags players need; ffprobe reads >= 5 s at the asked size and GStreamer's
# hlsdemux decodes >= 5 s, both with 0 errors; the media sequence advances
# and a segment that left the window is 404 with a JSON body; segments last
# ~1 s by their fMP4 decode times (the capture clock); the window is
# counted in memory "parts"; an HLS reader and a /stream.mp4 client of the
# same picture share one output; the session lingers after its last
# request, then its output is freed; with auth_view = basic the playlist
# and a segment are 401 without credentials. Daemon ports picked by it.
cd "$(dirname "$0")/../.." || exit 2
T=http_hls
. tests/integ/lib/common.sh
for c in python3 curl ffprobe gst-launch-1.0 openssl; do
	command -v $c >/dev/null 2>&1 || { skip all "$c is not installed (DEPS_TEST)"; exit 0; }
done
HC="python3 tests/tools/hls_check.py"
Q="width=320&height=240&fps=15"
start_vcapd_any --device test:640x480@30 || { fail start "vcapd did not start"; exit 1; }
U="http://127.0.0.1:$VPORT"

# status URL FILE: the HTTP status of URL, its body in FILE
status_of() { curl -s --max-time 10 -o "$2" -w '%{http_code}' "$1"; }

t0=$(date +%s%N)
c=$(status_of "$U/stream.m3u8?$Q" "$TMP/p0.m3u8")
ms=$((($(date +%s%N) - t0) / 1000000))
set -- $($HC playlist "$TMP/p0.m3u8")
echo "$T: first playlist after $ms ms: $*"
check first_playlist "$([ "$c" = 200 ] && [ "$6" -ge 1 ] && [ "$4" -ge 1 ] && [ "$2" -ge 0 ] &&
	[ "${10}" = 1 ] && [ "${12}" = 1 ]; echo $?)" "status $c after $ms ms: $*"

# a /stream.mp4 client of the same picture (gop= as HLS asked) shares it
curl -s --max-time 6 -o "$TMP/mp4.mp4" "$U/stream.mp4?$Q&gop=15" &
mp=$!
PIDS="$PIDS $mp"
# ffprobe (6 s) and GStreamer (9 s) at once
ffprobe -v error -read_intervals %+6 -count_frames -show_entries stream=width,height,nb_read_frames \
	-of default=nw=1 "$U/stream.m3u8?$Q" >"$TMP/ffprobe.out" 2>"$TMP/ffprobe.err" &
fp=$!
# libav's decode errors (concealed, not fatal) logged as ERROR lines
GST_DEBUG=libav:2 GST_DEBUG_NO_COLOR=1 timeout 9 gst-launch-1.0 -v souphttpsrc location="$U/stream.m3u8?$Q" ! hlsdemux ! qtdemux ! \
	h264parse ! avdec_h264 ! fakesink silent=false >"$TMP/gst.out" 2>&1 &
gp=$!
PIDS="$PIDS $fp $gp"
shared=""
for _i in $(seq 40); do
	curl -s -o "$TMP/st.json" "$U/api/status"
	shared=$($HC share "$TMP/st.json" 2>&1)
	case $shared in *"same 1"*) break ;; esac
	sleep 0.1
done
check shares_output "$(case $shared in *"same 1"*) echo 0 ;; *) echo 1 ;; esac)" "$shared"
wait $fp
fprc=$?
wait $gp
wait $mp

nf=$(sed -n 's/^nb_read_frames=//p' "$TMP/ffprobe.out" | head -1)
fw=$(sed -n 's/^width=//p' "$TMP/ffprobe.out" | head -1)
fh=$(sed -n 's/^height=//p' "$TMP/ffprobe.out" | head -1)
echo "$T: ffprobe: ${fw}x$fh, $nf frames, $(grep -c . "$TMP/ffprobe.err") error lines"
check ffprobe_reads "$([ "$fprc" = 0 ] && [ "${nf:-0}" -ge 68 ] && [ "$fw" = 320 ] && [ "$fh" = 240 ] &&
	! [ -s "$TMP/ffprobe.err" ]; echo $?)" \
	"rc $fprc, ${fw}x$fh, ${nf:-0} frames (want >= 68: 5 s at 15 fps less 10 %): $(head -c 400 "$TMP/ffprobe.err")"
gn=$(grep -c 'last-message = chain' "$TMP/gst.out")
gpts=$(sed -n 's/.*last-message = chain.*pts: \([0-9]*\):\([0-9]*\):\([0-9]*\)\..*/\1 \2 \3/p' "$TMP/gst.out" |
	awk 'NR == 1 { f = $1 * 3600 + $2 * 60 + $3 } { l = $1 * 3600 + $2 * 60 + $3 } END { print l - f }')
gerr=$(grep -a -E 'ERROR|WARN|CRITICAL' "$TMP/gst.out" | head -3)
gsize=$(grep -c 'fakesink0.GstPad:sink: caps = video/x-raw.*width=(int)320, height=(int)240' "$TMP/gst.out")
echo "$T: gstreamer: $gn frames over ${gpts:-?} s of pts"
check gst_plays "$([ "${gn:-0}" -ge 68 ] && [ "${gpts:-0}" -ge 5 ] && [ -z "$gerr" ] && [ "$gsize" -ge 1 ]; echo $?)" \
	"${gn:-0} frames over ${gpts:-0} s (want >= 68 over >= 5 s), size 320x240: $gsize, errors: $gerr"

# the window slides: sequence advanced, the first segment seen left it (404 JSON)
first=$(sed -n 's/.*&seg=\([0-9]*\)$/\1/p' "$TMP/p0.m3u8" | head -1)
status_of "$U/stream.m3u8?$Q" "$TMP/p1.m3u8" >/dev/null
set -- $($HC playlist "$TMP/p1.m3u8")
seq1=$2
# the target duration must not change while the playlist lives (RFC 8216)
check target_stable "$([ "$4" = 1 ]; echo $?)" "target duration $4 s after a /stream.mp4 joiner (want 1)"
c=""
for _i in $(seq 50); do
	c=$(status_of "$U/stream.m4s?$Q&seg=${first:-0}" "$TMP/old.json")
	[ "$c" = 404 ] && break
	sleep 0.2
done
echo "$T: playlist now: $*; segment ${first:-?}: $c $(head -c 100 "$TMP/old.json")"
check window_slides "$([ -n "$first" ] && [ "$seq1" -gt "$first" ] && [ "$6" -ge 4 ] && [ "$c" = 404 ] &&
	grep -q '"status":404' "$TMP/old.json"; echo $?)" \
	"first segment ${first:-?}, sequence now $seq1 ($6 segments), old one: $c $(head -c 100 "$TMP/old.json")"

# segment durations by their decode times: every listed segment but the
# two oldest (they may leave the window meanwhile on a loaded host),
# fetched by one curl
status_of "$U/stream.m3u8?$Q" "$TMP/p2.m3u8" >/dev/null
set -- $($HC playlist "$TMP/p2.m3u8")
durs="" sum=0 bad="" prev=""
segs=$(sed -n 's/.*&seg=\([0-9]*\)$/\1/p' "$TMP/p2.m3u8" | tail -n +3)
_args=""
for n in $segs; do
	_args="$_args -o $TMP/s$n.m4s $U/stream.m4s?$Q&seg=$n"
done
set -f
# shellcheck disable=SC2086
curl -s --max-time 5 -w '%{url} %{http_code}\n' $_args | sed 's/.*&seg=//' >"$TMP/segs.codes"
set +f
bad=$(grep -v ' 200$' "$TMP/segs.codes" | tr '\n' ' ')
# at once, while the session surely lives (it lingers 3 s after a request)
curl -s -o "$TMP/st2.json" "$U/api/status"
for n in $segs; do
	grep -q "^$n 200$" "$TMP/segs.codes" || continue
	sum=$((sum + $(stat -c %s "$TMP/s$n.m4s")))
	t=$($HC tfdt "$TMP/s$n.m4s")
	if [ -n "$prev" ]; then
		d=$(((t - prev) / 90))
		durs="$durs $d"
		{ [ "$d" -ge 800 ] && [ "$d" -le 1250 ]; } || bad="$bad $d ms;"
	fi
	prev=$t
done
ext=$(echo "$*" | sed 's/.*durs //')
echo "$T: segment durations (ms, decode times):$durs; EXTINF $ext"
check segment_durations "$([ -z "$bad" ] && [ -n "$durs" ] &&
	echo "$ext" | tr ',' '\n' | awk '$1 < 0.8 || $1 > 1.25 { b = 1 } END { exit b }'; echo $?)" \
	"durations$durs ms, EXTINF $ext; bad:$bad"

# the window's bytes count in memory "parts" (the mp4 client is gone)
parts=$($HC parts "$TMP/st2.json")
echo "$T: window $sum bytes, memory parts $parts"
check window_counted "$([ "$sum" -gt 0 ] && [ "${parts:-0}" -ge "$sum" ]; echo $?)" \
	"parts ${parts:-?} bytes, window $sum bytes"

# lingers after the last request, then freed
curl -s -o /dev/null "$U/stream.m3u8?$Q"
last=$(date +%s%N)
sleep 1.5
curl -s -o "$TMP/st3.json" "$U/api/status"
check lingers "$(grep -q '"kind":"hls"' "$TMP/st3.json"; echo $?)" \
	"no hls reader 1.5 s after the last request: $(grep 'HLS session' "$VLOG" | tail -2 | tr '\n' ' ')"
gone=""
for _i in $(seq 100); do
	curl -s -o "$TMP/st4.json" "$U/api/status"
	if ! grep -q '"kind":"hls"' "$TMP/st4.json" && ! grep -q '"fourcc":"H264"' "$TMP/st4.json"; then
		gone=$((($(date +%s%N) - last) / 1000000))
		break
	fi
	sleep 0.1
done
echo "$T: reader and output freed ${gone:-?} ms after the last request"
check output_freed "$([ -n "$gone" ]; echo $?)" "still listed 11.5 s after the last request"
stopped_clean

# auth: 401 without credentials
PW=hls-pw
printf '[server]\nuser = admin:%s\nauth_view = basic\n[camera c0]\ndevice = test:320x240@15\n' \
	"$(openssl passwd -6 "$PW")" >"$TMP/auth.conf"
start_vcapd_any --config "$TMP/auth.conf" || { fail auth_start "vcapd did not start"; exit 1; }
U="http://127.0.0.1:$VPORT"
a1=$(status_of "$U/stream.m3u8" "$TMP/a1")
a2=$(curl -s -o "$TMP/a2" -w '%{http_code}' -u "admin:$PW" "$U/stream.m3u8")
seg=$(grep -m1 '&seg=\|?seg=' "$TMP/a2")
a3=$(status_of "$U/$seg" "$TMP/a3")
a4=$(curl -s -o "$TMP/a4" -w '%{http_code}' -u "admin:$PW" "$U/$seg")
a5=$(status_of "$U/stream.m4s?init=1" "$TMP/a5")
check auth_required "$([ "$a1" = 401 ] && [ "$a2" = 200 ] && [ -n "$seg" ] && [ "$a3" = 401 ] &&
	[ "$a4" = 200 ] && [ "$a5" = 401 ]; echo $?)" \
	"playlist: $a1 without, $a2 with credentials; segment ${seg:-none}: $a3 without, $a4 with; init: $a5 without"
stopped_clean
