#!/bin/sh
# Benchmark (not a test; issue 24): one H.264 picture (1280x720, 30 fps,
# 2 Mbit/s, GOP 30, OpenH264) served over RTSP (TCP interleaved) to 1, 10
# and 50 clients at once, by vcapd (the test source, its software encoder)
# and, where GStreamer's RTSP server and Python bindings are installed, by
# gst-rtsp-server (videotestsrc, openh264enc, one shared media) as a
# yardstick. Per row: the server process's CPU over the window (both draw
# their own pictures and encode once for all clients), and the latency
# judged on each server's sender reports (build/tools/rtsp_check: the NTP
# time of a report is the wall-clock time of the RTP timestamp it names).
# vcapd's is the capture time, so its latency is capture -> access unit at
# the client, the encode included; GStreamer's rtpbin reports the send time
# (rtcp-sync-send-time), so its figure is only the send -> client part.
# rtsp_check fails a client whose first access unit is not an IDR with SPS
# and PPS: gst-rtsp-server's shared media starts a joiner mid-GOP.
# Usage: sh tests/bench/bench_rtsp.sh [seconds per row, default 8]
cd "$(dirname "$0")/../.." || exit 2
B=${VCAP_BUILD:-build}
VCAPD=$B/vcapd
CHK=$B/tools/rtsp_check
SECS=${1:-8}
. tests/integ/lib/rtsp.sh # rtsp_port
W=1280 H=720 FPS=30 RATE=2000000 GOP=30
TMP=$(mktemp -d) || exit 1
SPID=
trap 'kill $SPID 2>/dev/null; rm -rf "$TMP"' EXIT INT TERM

for f in "$VCAPD" "$CHK"; do
	[ -x "$f" ] || { echo "bench_rtsp: $f not built (make bench-bins)" >&2; exit 1; }
done

# the process's user + system time so far, in clock ticks
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# row NAME PID PORT PATH CLIENTS: rtsp_check's clients for SECS seconds;
# prints CPU %, the median of the clients' p50 latencies, the worst p99
row() {
	t0=$(ticks "$2") s0=$(date +%s.%N)
	"$CHK" -n "$5" -t "$SECS" 127.0.0.1 "$3" "$4" >"$TMP/out" 2>&1
	t1=$(ticks "$2") s1=$(date +%s.%N)
	python3 - "$1" "$5" "$t0" "$t1" "$s0" "$s1" "$(getconf CLK_TCK)" "$TMP/out" <<-'EOF'
	import re, sys
	name, n, t0, t1, s0, s1, hz, path = sys.argv[1:]
	wall = float(s1) - float(s0)
	ok = re.findall(r"OK (\d+) access units.*latency p50 (\S+) p99 (\S+) ms", open(path).read())
	bad = re.findall(r"FAIL (.*)", open(path).read())
	p50 = sorted(float(m[1]) for m in ok)
	print("%-16s %4s %5d %6.1f %8.1f %8.1f %9.1f%s" % (
	    name, n, len(ok), sum(int(m[0]) for m in ok) / len(ok) / wall if ok else 0,
	    (int(t1) - int(t0)) / int(hz) / wall * 100, p50[len(p50) // 2] if ok else -1,
	    max(float(m[2]) for m in ok) if ok else -1,
	    "   %d failed: %s" % (len(bad), bad[0]) if bad else ""))
	EOF
}

header() {
	echo "$1"
	printf "%-16s %4s %5s %6s %8s %8s %9s\n" server cl ok fps/cl "cpu %" "p50 ms" "p99 ms"
}

echo "RTSP: ${W}x$H $FPS fps, $RATE bit/s, GOP $GOP, ${SECS} s per row, clients on TCP interleaved;"
echo "cpu % = the server process (picture + encode + serving); p50 = median of the clients' p50,"
echo "p99 = the worst client's p99; latency = capture (sender report) -> access unit at the client"

"$VCAPD" --listen 127.0.0.1:0 --rtsp 127.0.0.1:0 --device "test:${W}x${H}@$FPS:YUYV:only" \
	>"$TMP/vcapd.log" 2>&1 &
SPID=$!
port=$(rtsp_port "$TMP/vcapd.log") || { cat "$TMP/vcapd.log" >&2; exit 1; }
header "vcapd $(git describe --always --dirty 2>/dev/null)"
q="/0?size=${W}x$H&bitrate=$RATE&gop=$GOP"
"$CHK" -t 2 127.0.0.1 "$port" "$q" >/dev/null 2>&1 # warm-up: the encoder runs
for n in 1 10 50; do
	row vcapd "$SPID" "$port" "$q" "$n"
done
kill "$SPID"; wait "$SPID" 2>/dev/null; SPID=

# Debian's python3-gi is for Debian's python3 (not one earlier in PATH)
PYGI=/usr/bin/python3
[ -x "$PYGI" ] || PYGI=python3
if ! "$PYGI" -c 'import gi; gi.require_version("GstRtspServer", "1.0")' 2>/dev/null ||
	! gst-inspect-1.0 openh264enc >/dev/null 2>&1; then
	echo "gst-rtsp-server: not installed (apt-get install python3-gi gir1.2-gst-rtsp-server-1.0" \
		"gstreamer1.0-plugins-bad): no yardstick"
	exit 0
fi
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$TMP/gst_rtsp.py" <<EOF
import gi
gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import Gst, GstRtspServer, GLib
Gst.init(None)
srv = GstRtspServer.RTSPServer()
srv.set_address("127.0.0.1")
srv.set_service("$port")
f = GstRtspServer.RTSPMediaFactory()
f.set_launch("( videotestsrc is-live=true pattern=smpte ! video/x-raw,format=I420,width=$W,height=$H,"
             "framerate=$FPS/1 ! openh264enc bitrate=$RATE gop-size=$GOP rate-control=bitrate ! "
             "h264parse config-interval=-1 ! rtph264pay name=pay0 pt=96 aggregate-mode=zero-latency )")
f.set_shared(True)
srv.get_mount_points().add_factory("/cam", f)
# a Session header with timeout= (only sent when not the default 60 s), as
# rtsp_check asks of vcapd
srv.connect("client-connected",
            lambda s, c: c.connect("new-session", lambda c, sess: sess.set_timeout(30)))
srv.attach(None)
print("listening", flush=True)
GLib.MainLoop().run()
EOF
"$PYGI" "$TMP/gst_rtsp.py" >"$TMP/gst.log" 2>&1 &
SPID=$!
for _i in $(seq 100); do
	grep -q listening "$TMP/gst.log" && break
	sleep 0.1
done
header "gst-rtsp-server $(gst-launch-1.0 --version | sed -n 's/.*version //p' | head -1)"
"$CHK" -t 2 127.0.0.1 "$port" /cam >/dev/null 2>&1
for n in 1 10 50; do
	row gst-rtsp-server "$SPID" "$port" /cam "$n"
done
echo "(gst-rtsp-server's latency: from its send time, not from capture; see the script's head)"
