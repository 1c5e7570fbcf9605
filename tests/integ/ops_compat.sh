#!/bin/sh
# Compatibility URLs (ops): mjpg-streamer /?action=stream|snapshot with _N and
# &cam=, µStreamer /stream /snapshot /state. Two cameras of different sizes so
# the camera choice is visible in the JPEG dimensions.
cd "$(dirname "$0")/../.." || exit 2
T=ops_compat
. tests/integ/lib/common.sh
start_vcapd_any --device test:320x240@10:YUYV --device test:160x120@10:NV12 || { fail start "vcapd did not start"; exit 1; }
P=$VPORT
U="http://127.0.0.1:$P"
# jpeg_size FILE: "WxH" from the SOF0/SOF2 marker.
jpeg_size() { od -An -v -tx1 "$1" | tr -d '\n' | sed 's/ //g' |
	sed -n 's/.*ffc[02]0011..\(....\)\(....\).*/\2 \1/p' | { read w h; [ -n "$w" ] && echo "$((0x$w))x$((0x$h))"; }; }
for case in "/?action=snapshot 320x240" "/?action=snapshot_0 320x240" "/?action=snapshot_1 160x120" \
	    "/?action=snapshot&cam=1 160x120" "/snapshot 320x240"; do
	set -- $case
	c=$(curl -s -o "$TMP/s.jpg" -w '%{http_code}' --max-time 5 "$U$1"); sz=$(jpeg_size "$TMP/s.jpg")
	[ "$c" = 200 ] && [ "$sz" = "$2" ]; check "snapshot_$(echo "$1" | tr -c 'a-z0-9\n' _)" $? "$1: $c $sz (want $2)"
done
for case in "/?action=stream" "/?action=stream_1" "/stream"; do
	curl -s -N --max-time 2 -D "$TMP/h" "$U$case" >"$TMP/st.bin" 2>/dev/null
	n=$(grep -ac 'Content-Type: image/jpeg' "$TMP/st.bin")
	hdr "$TMP/h" Content-Type | grep -q '^multipart/x-mixed-replace' && [ "$n" -ge 5 ]
	check "stream_$(echo "$case" | tr -c 'a-z0-9\n' _)" $? "$case: $(hdr "$TMP/h" Content-Type), $n parts in 2 s at 10 fps"
done
c=$(curl -s -o "$TMP/state.json" -w '%{http_code}' "$U/state")
[ "$c" = 200 ] && head -c 1 "$TMP/state.json" | grep -q '{'; check state_json $? "/state: $c"
c1=$(curl -s -o /dev/null -w '%{http_code}' "$U/?action=snapshot_7"); c2=$(curl -s -o /dev/null -w '%{http_code}' "$U/?action=nope")
[ "$c1" = 404 ] && [ "$c2" = 400 ]; check bad_compat_urls $? "_7=$c1 nope=$c2"
stop_vcapd; check stop $? "exit status"
