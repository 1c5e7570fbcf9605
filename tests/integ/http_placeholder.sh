#!/bin/sh
# Streams survive an absent camera: /stream (and mjpg-streamer's
# /?action=stream) of a camera that is not there answers 200 and sends a
# placeholder picture (dark, with the camera's name and state) about once a
# second at the camera's one placeholder size (configured, default or last
# mode, else 640x480: not the size asked, issue 21), then live frames at
# the size asked on the same connection once
# the camera comes (the fault source's first opens fail like an absent
# device), and again a placeholder when it goes (unplugged mid-stream).
# /snapshot stays 503 + Retry-After unless ?placeholder=1 or the camera's
# config says placeholder = yes. A placeholder part says so in its header
# (X-Placeholder); its picture is dark (mean luma < 70), the test pattern's
# bars far brighter.
cd "$(dirname "$0")/../.." || exit 2
T=http_placeholder
. tests/integ/lib/common.sh

# parts FILE: one line per part of a stream dump: "TIME KIND WxH", TIME its
# X-Timestamp, KIND P (a placeholder: X-Placeholder in its header) or L
# (live), WxH its picture's size (ffprobe).
parts() {
	tr -d '\r' <"$1" | awk '/^--vcapdframe$/ { if (t) print t, k; t = ""; k = "L" }
		/^X-Timestamp: / { t = $2 } /^X-Placeholder: / { k = "P" } END { if (t) print t, k }' >"$1.tk"
	ffprobe -v error -f mpjpeg -show_entries frame=width,height -of csv=p=0:s=x "$1" 2>/dev/null >"$1.sz"
	paste -d' ' "$1.tk" "$1.sz"
}
# luma FILE N: mean luma of the picture of part N (1 = first) of a dump
luma() {
	rm -rf "$1.d" && mkdir "$1.d" && ffmpeg -v error -f mpjpeg -i "$1" -c copy -f image2 "$1.d/%04d.jpg" 2>/dev/null
	ffprobe -v error -f lavfi -i "movie=$(printf '%s/%04d.jpg' "$1.d" "$2"),signalstats" \
		-show_entries frame_tags=lavfi.signalstats.YAVG -of csv=p=0 2>/dev/null | cut -d. -f1
}
# intervals: the gaps between consecutive lines' times, one per line
gaps() { awk 'NR > 1 { printf "%.3f\n", $1 - p } { p = $1 }'; }

if ! start_vcapd_any --device /dev/vcapd-no-such-camera --device test:160x120@15:MJPEG; then
	fail start "vcapd did not start"; exit 1
fi
U=http://127.0.0.1:$VPORT
timeout 4.5 curl -s -N -D "$TMP/h1" -o "$TMP/a.mjpeg" "$U/stream?size=320x180"
parts "$TMP/a.mjpeg" >"$TMP/a.txt"
n=$(wc -l <"$TMP/a.txt")
[ "$(status "$TMP/h1")" = 200 ] && case $(hdr "$TMP/h1" Content-Type) in multipart/x-mixed-replace*) true ;; *) false ;; esac
check absent_stream_200 $? "status $(status "$TMP/h1"), type $(hdr "$TMP/h1" Content-Type)"
y=$(luma "$TMP/a.mjpeg" 1)
[ "$n" -ge 4 ] && [ "$n" -le 6 ] && awk '$2 != "P" || $3 != "640x480" { bad = 1 } END { exit bad }' "$TMP/a.txt" &&
	[ -n "$y" ] && [ "$y" -lt 70 ]
check absent_stream_placeholders $? "$n parts in 4.5 s (want 4-6 placeholders, 640x480 whatever was asked, dark): luma $y: $(tr '\n' ';' <"$TMP/a.txt")"
g=$(gaps <"$TMP/a.txt" | tr '\n' ' ')
echo "$g" | awk '{ for (i = 1; i <= NF; i++) if ($i < 0.8 || $i > 1.25) exit 1; exit NF < 3 }'
check absent_stream_1fps $? "gaps between parts: $g"
echo "$T: placeholder parts in 4.5 s: $n, gaps $g"
timeout 2.5 curl -s -N -D "$TMP/h2" -o "$TMP/b.mjpeg" "$U/?action=stream"
parts "$TMP/b.mjpeg" >"$TMP/b.txt"
[ "$(status "$TMP/h2")" = 200 ] && [ "$(wc -l <"$TMP/b.txt")" -ge 2 ] && awk '$2 != "P" { bad = 1 } END { exit bad }' "$TMP/b.txt"
check absent_mjpg_streamer_url $? "status $(status "$TMP/h2"): $(tr '\n' ';' <"$TMP/b.txt")"
# snapshots: 503 unless asked
curl -s -D "$TMP/h3" -o /dev/null "$U/snapshot"
[ "$(status "$TMP/h3")" = 503 ] && [ -n "$(hdr "$TMP/h3" Retry-After)" ]
check absent_snapshot_503 $? "status $(status "$TMP/h3"), Retry-After '$(hdr "$TMP/h3" Retry-After)'"
curl -s -D "$TMP/h4" -o "$TMP/s.jpg" "$U/snapshot?placeholder=1&size=400x300"
sz=$(ffprobe -v error -show_entries stream=width,height -of csv=p=0:s=x "$TMP/s.jpg" 2>/dev/null)
[ "$(status "$TMP/h4")" = 200 ] && [ "$(hdr "$TMP/h4" Content-Type)" = image/jpeg ] && [ "$sz" = 640x480 ] &&
	[ "$(hdr "$TMP/h4" X-Placeholder)" = absent ]
check absent_snapshot_placeholder_param $? "status $(status "$TMP/h4"), $(hdr "$TMP/h4" Content-Type), $sz, X-Placeholder '$(hdr "$TMP/h4" X-Placeholder)'"
# the other camera is not disturbed
curl -s -D "$TMP/h5" -o /dev/null "$U/snapshot?cam=1"
[ "$(status "$TMP/h5")" = 200 ] && [ -z "$(hdr "$TMP/h5" X-Placeholder)" ]
check present_camera_unaffected $? "cam 1: $(status "$TMP/h5")"
stop_vcapd
check exit_clean_absent $? "exit status not 0"

# config: placeholder = yes makes /snapshot answer the picture
printf '[camera away]\ndevice = /dev/vcapd-no-such-camera\nplaceholder = yes\n' >"$TMP/p.conf"
if start_vcapd_any --config "$TMP/p.conf"; then
	curl -s -D "$TMP/h6" -o /dev/null "http://127.0.0.1:$VPORT/snapshot"
	curl -s -D "$TMP/h7" -o /dev/null "http://127.0.0.1:$VPORT/snapshot?placeholder=0"
	[ "$(status "$TMP/h6")" = 200 ] && [ "$(hdr "$TMP/h6" X-Placeholder)" = absent ] && [ "$(status "$TMP/h7")" = 503 ]
	check config_placeholder_snapshot $? "placeholder = yes: /snapshot $(status "$TMP/h6"), ?placeholder=0 $(status "$TMP/h7")"
	stop_vcapd
else
	fail config_placeholder_snapshot "vcapd did not start"
fi

# The camera appears (first 3 opens fail: ~2 s absent): placeholders, then
# live frames at the camera's rate, on one connection.
if start_vcapd_any --device "fault:open=3;test:320x240@15:MJPEG"; then
	timeout 6 curl -s -N -o "$TMP/c.mjpeg" "http://127.0.0.1:$VPORT/stream"
	parts "$TMP/c.mjpeg" >"$TMP/c.txt"
	# placeholders first, then live parts, never a placeholder after; the
	# placeholder dark, the live picture (the test pattern's bars) bright
	seq=$(cut -d' ' -f2 "$TMP/c.txt" | uniq | tr -d '\n')
	np=$(awk '$2 == "P"' "$TMP/c.txt" | wc -l) nl=$(awk '$2 == "L"' "$TMP/c.txt" | wc -l)
	live=$(awk '$2 == "L"' "$TMP/c.txt" | gaps | awk '{ s += $1; n++ } END { if (n) printf "%.1f", n / s }')
	y1=$(luma "$TMP/c.mjpeg" 1) y2=$(luma "$TMP/c.mjpeg" $((np + nl)))
	[ "$seq" = PL ] && [ "$np" -ge 1 ] && [ "$nl" -ge 20 ] &&
		awk '$2 == "L" && $3 != "320x240" { bad = 1 } END { exit bad }' "$TMP/c.txt" &&
		awk -v f="$live" 'BEGIN { exit !(f >= 12 && f <= 17) }' &&
		[ -n "$y1" ] && [ -n "$y2" ] && [ "$y1" -lt 70 ] && [ "$y2" -gt 90 ]
	check appears_goes_live $? "sequence '$seq', $np placeholder + $nl live parts at $live fps, luma first $y1 last $y2: $(head -3 "$TMP/c.txt" | tr '\n' ';')"
	echo "$T: camera appears: $np placeholder parts, then $nl live at $live fps on the same connection"
	stop_vcapd
else
	fail appears_goes_live "vcapd did not start"
fi

# Unplugged mid-stream (the device fails with ENODEV after 30 frames and
# its next open fails: absent until the retry 250 ms later), then back: the
# clients see a placeholder at once, then live frames again.
if start_vcapd_any --device "fault:enodev@30;test:320x240@15:MJPEG"; then
	timeout 5 curl -s -N -o "$TMP/d.mjpeg" "http://127.0.0.1:$VPORT/stream"
	parts "$TMP/d.mjpeg" >"$TMP/d.txt"
	seq=$(cut -d' ' -f2 "$TMP/d.txt" | uniq | tr -d '\n')
	[ "$seq" = LPL ]
	check unplug_placeholder_then_live $? "sequence '$seq' (want LPL): $(cut -d' ' -f2 "$TMP/d.txt" | tr -d '\n')"
	stop_vcapd
else
	fail unplug_placeholder_then_live "vcapd did not start"
fi
