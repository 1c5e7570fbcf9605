#!/bin/sh
# A demanding user against the test pattern: per-client fps and quality are
# honoured also when another client already streams the same picture,
# snapshot ETags stay unique across capture restarts. Ports 18902-18909.
cd "$(dirname "$0")/../.." || exit 2
T=qa_serving
PORT=18902
. tests/integ/lib/common.sh
U=http://127.0.0.1:$PORT

if ! start_vcapd $PORT --device test:320x240@30:YUYV; then
	fail start "daemon did not answer on $PORT"; exit 1
fi
# frames FILE: MJPEG parts in a saved /stream body.
frames() { grep -c -a '^X-Frame-Seq' "$1"; }

# 1. fps= is this client's maximum even when it joins an output that a
# full-rate client created first (the output's plan has the device rate).
curl -s -m 5 -o "$TMP/full.mjpeg" "$U/stream" &
FULL=$!
sleep 1
curl -s -m 3 -o "$TMP/slow.mjpeg" "$U/stream?fps=5"
n=$(frames "$TMP/slow.mjpeg")
[ "$n" -ge 10 ] && [ "$n" -le 18 ]
check fps_shared_output $? "fps=5 for 3 s beside a full-rate client: $n frames (want 10..18)"
curl -s -m 3 -o "$TMP/slow.raw" "$U/raw/stream?fps=5&format=YUYV"
n=$(( $(wc -c <"$TMP/slow.raw") / (320 * 240 * 2) ))
[ "$n" -ge 10 ] && [ "$n" -le 18 ]
check fps_shared_raw $? "raw fps=5 for 3 s beside a full-rate client: $n frames (want 10..18)"
wait $FULL
n=$(frames "$TMP/full.mjpeg")
[ "$n" -ge 100 ]
check fps_full_rate $? "unlimited client: $n frames in 5 s (want >= 100)"

kill -0 "$VPID" 2>/dev/null
check alive $? "daemon gone"
stop_vcapd
check sigterm_exit0 $? "exit status $?"
