#!/bin/sh
# Joiners cannot make a viewer's H.264 stream all key frames (issue 22,
# part 2): each join used to force an IDR on the shared encoder, and a loop
# joining and leaving the viewer's own URL took it from 5 IDRs in 300
# frames to 229, its bitrate from 1.22 to 2.29 Mbit/s. Here a viewer reads
# /stream.h264 of the 640x480 test camera (software encoder, an IDR every
# 2 s) for 10 s alone (the baseline), then for 10 s while a loop joins the
# same URL every 50 ms and leaves after 0.2 s (200 joins). The IDRs it
# receives (tests/tools/h264_nals.py refs) may exceed the baseline's by one
# a second at most (+1 for where the seconds fall), and its bytes per
# picture stay within 1.5x of the baseline's. The daemon picks its own port.
cd "$(dirname "$0")/../.." || exit 2
T=http_h264_idr
. tests/integ/lib/common.sh
SECS=10
for c in python3 curl; do
	command -v $c >/dev/null 2>&1 || { skip all "$c is not installed"; exit 0; }
done
start_vcapd_any --device test:640x480@30 || { fail start "vcapd did not start"; exit 1; }
U="http://127.0.0.1:$VPORT"

# the joiners: one every 50 ms, each leaving after 0.2 s
cat >"$TMP/joins.py" <<'EOF'
import socket, sys, time
port, secs = int(sys.argv[1]), float(sys.argv[2])
req = b"GET /stream.h264 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
open_, n, start = [], 0, time.monotonic()
while time.monotonic() - start < secs:
    now = time.monotonic()
    for s, t in [x for x in open_ if now - x[1] >= 0.2]:
        s.close()
        open_.remove((s, t))
    try:
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(req)
        open_.append((s, now))
        n += 1
    except OSError:
        pass
    time.sleep(0.05)
print(n)
EOF

# view NAME: the viewer for SECS s; prints "pics N idr I bytes B"
view() {
	curl -s --max-time $SECS -o "$TMP/$1.h264" "$U/stream.h264"
	echo "$(python3 tests/tools/h264_nals.py refs "$TMP/$1.h264" 60) bytes $(stat -c %s "$TMP/$1.h264")"
}
set -- $(view base)
bp=$2 bi=$4 bb=${12}
echo "$T: baseline: $*"
python3 "$TMP/joins.py" "$VPORT" $SECS >"$TMP/joins.n" &
jp=$!
PIDS="$PIDS $jp"
set -- $(view joined)
wait $jp
jp_n=$(cat "$TMP/joins.n")
jpics=$2 ji=$4 jb=${12} jbroken=$6
echo "$T: with $jp_n joins: $*"
check viewer_served "$([ "${bp:-0}" -ge 150 ] && [ "${jpics:-0}" -ge 150 ]; echo $?)" \
	"pictures: baseline ${bp:-?}, with joiners ${jpics:-?} (want >= 150 in $SECS s)"
check viewer_intact "$([ "${jbroken:-1}" = 0 ]; echo $?)" "with joiners: $jbroken pictures after a missing reference"
check joins_made "$([ "${jp_n:-0}" -ge 100 ]; echo $?)" "${jp_n:-0} joins"
check idr_rate_limited "$([ -n "$ji" ] && [ "$ji" -le $((bi + SECS + 1)) ]; echo $?)" \
	"IDRs: baseline $bi, with joiners $ji (want <= $((bi + SECS + 1)))"
# bytes per picture, in thousandths
bpp=$((bb * 1000 / (bp > 0 ? bp : 1))) jpp=$((jb * 1000 / (jpics > 0 ? jpics : 1)))
echo "$T: bytes per picture: baseline $((bpp / 1000)), with joiners $((jpp / 1000))"
check bitrate_bounded "$([ "$bpp" -gt 0 ] && [ $((jpp * 2)) -le $((bpp * 3)) ]; echo $?)" \
	"bytes per picture $((bpp / 1000)) -> $((jpp / 1000)) (want <= 1.5x)"

stopped_clean
