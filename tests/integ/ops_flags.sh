#!/bin/sh
# First run as a launcher does it: per-camera flags (--resolution, --fps,
# --format...) are what clients that ask for nothing get (a /snapshot and a
# /stream without parameters give 640x360 at 15 fps), they bind to the
# --device before them (before any --device: every camera, discovered ones
# too), bad values stop vcapd with the flag named, and the shipped
# conf/vcapd.conf serves discovered cameras instead of a test pattern.
cd "$(dirname "$0")/../.." || exit 2
T=ops_flags
. tests/integ/lib/common.sh

# fps_of FILE: frames per second of an MJPEG stream dump, from its parts'
# X-Timestamp (capture times): (parts - 1) / (last - first).
fps_of() {
	tr -d '\r' <"$1" | sed -n 's/^X-Timestamp: //p' |
		awk 'NR == 1 { f = $1 } { l = $1; n++ } END { if (n > 1 && l > f) printf "%.1f", (n - 1) / (l - f); else print 0 }'
}
# size_of FILE: WxH of the first JPEG in a stream dump (ffprobe).
size_of() {
	ffprobe -v error -f mpjpeg -show_entries stream=width,height -of csv=p=0:s=x "$1" 2>/dev/null | head -1
}

if ! start_vcapd_any --device test:1280x720@30:YUYV --resolution 640x360 --fps 15; then
	fail start "vcapd did not start"; exit 1
fi
U=http://127.0.0.1:$VPORT
curl -s -D "$TMP/sh" -o "$TMP/s.jpg" "$U/snapshot"
sz=$(hdr "$TMP/sh" X-Size)
[ "$(status "$TMP/sh")" = 200 ] && [ "$sz" = 640x360 ]
check snapshot_default_size $? "status $(status "$TMP/sh"), X-Size '$sz' (want 640x360)"
timeout 4 curl -s -N -D "$TMP/th" -o "$TMP/t.mjpeg" "$U/stream"
sz=$(hdr "$TMP/th" X-Size) fsz=$(size_of "$TMP/t.mjpeg") fps=$(fps_of "$TMP/t.mjpeg")
[ "$sz" = 640x360 ] && [ "$fsz" = 640x360 ]
check stream_default_size $? "X-Size '$sz', first frame '$fsz' (want 640x360)"
awk -v f="$fps" 'BEGIN { exit !(f >= 13.5 && f <= 16.5) }'
check stream_default_fps $? "$fps fps from the parts' X-Timestamp (want 15)"
echo "$T: /stream without parameters: $sz, $fps fps"
m=$(curl -s "$U/api/cams/0" | sed -n 's/.*"mode":{[^}]*"width":\([0-9]*\),"height":\([0-9]*\),"interval":\[\([0-9]*\),\([0-9]*\)\].*/\1x\2 \3\/\4/p')
[ "$m" = "640x360 1/15" ]
check device_mode $? "device mode '$m' (want 640x360 1/15)"
# a URL's own size and rate still win over the flags
timeout 3 curl -s -N -o "$TMP/u.mjpeg" "$U/stream?size=320x180&fps=5"
fsz=$(size_of "$TMP/u.mjpeg") fps=$(fps_of "$TMP/u.mjpeg")
[ "$fsz" = 320x180 ] && awk -v f="$fps" 'BEGIN { exit !(f >= 4 && f <= 6) }'
check url_wins $? "size=320x180&fps=5 gave $fsz at $fps fps"
stop_vcapd

# Flags bind to the --device before them; flags before any --device apply
# to every camera unless the camera's own say otherwise.
if start_vcapd_any --fps 10 --device test:1280x720@30:YUYV --resolution 320x240 \
	--device test:1280x720@30:YUYV --device test:640x480@30:MJPG --fps 15; then
	U=http://127.0.0.1:$VPORT
	for c in 0 1 2; do
		curl -s -o /dev/null "$U/snapshot?cam=$c"
	done
	modes=""
	for c in 0 1 2; do
		modes="$modes $(curl -s "$U/api/cams/$c" | sed -n 's/.*"mode":{[^}]*"width":\([0-9]*\),"height":\([0-9]*\),"interval":\[\([0-9]*\),\([0-9]*\)\].*/\1x\2@\3\/\4/p')"
	done
	[ "$modes" = " 320x240@1/10 1280x720@1/10 640x480@1/15" ]
	check per_device $? "modes '$modes' (want 320x240@1/10 1280x720@1/10 640x480@1/15)"
	stop_vcapd
else
	fail per_device "vcapd did not start"
fi

# --rotate/--flip/--quality: what a URL that names none gets; a URL's own
# value wins (rotate=0 on a camera turned by the flag).
if start_vcapd_any --device test:640x480@30:MJPG --rotate 90 --flip h --quality 50; then
	U=http://127.0.0.1:$VPORT
	curl -s -D "$TMP/r1" -o /dev/null "$U/snapshot"
	curl -s -D "$TMP/r2" -o /dev/null "$U/snapshot?rotate=0&flip=none"
	t1=$(curl -s "$U/api/try" | grep -o '"output":{[^}]*}')
	t2=$(curl -s "$U/api/try?quality=90" | grep -o '"output":{[^}]*}')
	[ "$(hdr "$TMP/r1" X-Size)" = 480x640 ] && [ "$(hdr "$TMP/r2" X-Size)" = 640x480 ] &&
		[ "$(hdr "$TMP/r2" X-Steps)" != passthrough ] &&
		echo "$t1" | grep -q '"quality":50,"rotate":90,"flip":1' && echo "$t2" | grep -q '"quality":90,"rotate":90,"flip":1'
	check rotate_flip_quality $? "X-Size $(hdr "$TMP/r1" X-Size) / rotate=0: $(hdr "$TMP/r2" X-Size) $(hdr "$TMP/r2" X-Steps) (a quality set: re-encoded); try: $t1; quality=90: $t2"
	stop_vcapd
else
	fail rotate_flip_quality "vcapd did not start"
fi
# the same as config keys
printf '[camera c]\ndevice = test:640x480@30:MJPG\nrotate = 270\nquality = 60\n' >"$TMP/r.conf"
if start_vcapd_any --config "$TMP/r.conf"; then
	t=$(curl -s "http://127.0.0.1:$VPORT/api/try" | grep -o '"output":{[^}]*}')
	echo "$t" | grep -q '"width":480,"height":640,"quality":60,"rotate":270,"flip":0'
	check rotate_quality_config $? "try: $t"
	stop_vcapd
else
	fail rotate_quality_config "vcapd did not start"
fi

# Bad values stop vcapd at once, naming the flag.
out=$("$VCAPD" --device test --resolution 640 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q -- "--resolution: '640' is not WxH"
check bad_resolution $? "rc=$rc: $out"
out=$("$VCAPD" --device test --rotate 45 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q -- "--rotate: '45' is not 0, 90, 180 or 270"
check bad_rotate $? "rc=$rc: $out"
out=$("$VCAPD" --help); rc=$?
[ $rc = 0 ] && echo "$out" | grep -q -- "--resolution WxH" && echo "$out" | grep -q -- "--quality Q"
check help $? "rc=$rc"

# The shipped example config, as the Pi quick start copies it: no active
# [camera], so cameras are discovered (here none: the test pattern stands in).
out=$("$VCAPD" --check-config --config conf/vcapd.conf 2>&1); rc=$?
[ $rc = 0 ] && ! echo "$out" | grep -q '^\[camera'
check shipped_conf_no_camera $? "rc=$rc: $(echo "$out" | grep '^\[camera')"
if start_vcapd_any --config conf/vcapd.conf --resolution 320x240; then
	curl -s -D "$TMP/dh" -o /dev/null "http://127.0.0.1:$VPORT/snapshot"
	grep -q 'no --device or \[camera\]' "$VLOG" && [ "$(hdr "$TMP/dh" X-Size)" = 320x240 ]
	check shipped_conf_discovers $? "log: $(grep -m1 'no --device' "$VLOG"); X-Size $(hdr "$TMP/dh" X-Size) (want 320x240 from --resolution)"
	stop_vcapd
else
	fail shipped_conf_discovers "vcapd --config conf/vcapd.conf did not start"
fi
