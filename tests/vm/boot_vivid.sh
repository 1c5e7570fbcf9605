#!/bin/sh
# V4L2 source checks against the vivid driver (issue 3), in ONE vivid-vm boot
# with three vivid instances, each a capture node only:
#   /dev/video0  single-planar: device, controls, inputs (webcam, TV, S-Video,
#                HDMI with standards, DV timings, source change), half the
#                format matrix; a camera's TV standard and DV timings set
#                again after an unplug (reopen)
#   /dev/video1  multi-planar (multiplanar=2): QUERYCAP/caps, the formats with
#                several memory planes (NM12, YM12...)
#   /dev/video2  single-planar: error paths and vivid's fault injection (run
#                with the ASan build when there is one: leaks fail it), the
#                other half of the format matrix
#   /dev/video20 (v4l2loopback fed with MJPEG): libv4l2's emulated formats
#   /dev/video3, /dev/video4  build/vcapd serving both (YUYV webcams): /api/cams,
#                /snapshot and /stream decode in ffmpeg, /raw exact sizes, two
#                streams at once, /stream.h264 and /stream.mp4 through the
#                software encoder; RTSP and HLS (issue 24) of one picture
#                of video3 (320x180, 5 fps, the software encoder):
#                rtsp_check over TCP interleaved, no protocol fault
#                (rtsp_tcp), beside a /stream.mp4 client on the same
#                encoder (rtsp_mp4_one_encoder, /api/status), then ffmpeg
#                decoding RTSP over UDP (rtsp_udp_ffmpeg) and ffprobe
#                reading /stream.m3u8 (hls_ffprobe): frames of the asked
#                size, 0 errors; SIGTERM exit status; then video3 alone:
#                one-shot pollers (issue 21): a default /snapshot has the
#                same size alone and beside a smaller /stream viewer, and a
#                /snapshot every 5 s beside it for VIVID_POLLER_S (120) s
#                switches the mode never (policy.switches)
# The format matrix: every capture format at 320x180 (webcam input, 60 fps)
# and 640x480, 1280x720 (HDMI input, DV timings at 60 Hz: vivid's webcam
# gives 720p only at 12.5 fps, too slow under TCG), 30 frames each, driver
# bytesperline/sizeimage against common/fmt.c's geometry, frames must change.
# The first three groups run in parallel in the guest, the daemon after them.
# Prints "vivid.<check>: OK|FAIL why|SKIP why". Usage: sh tests/vm/boot_vivid.sh
cd "$(dirname "$0")/../.." || exit 2
B=${VCAP_BUILD:-build}
CHECK=$B/tools/vivid_check
# The fault checks want leak detection: the ASan build when it is there.
CHECK_ASAN=build/asan/tools/vivid_check
[ -x "$CHECK_ASAN" ] || CHECK_ASAN=$CHECK
VCAPD=${VCAPD:-$B/vcapd}
FEED=$B/tools/mjpeg_feed
VCAPD_ASAN=build/asan/vcapd
[ -x "$VCAPD_ASAN" ] || VCAPD_ASAN=$VCAPD
SIZES_WEBCAM=320x180
# RTSP and HLS from video3 (issue 24): a size and rate the software encoder
# keeps up with under TCG
RTSPC=$B/tools/rtsp_check
RTSP_SIZE=320x180
RTSP_FPS=5
SIZES_HDMI=640x480,1280x720
# How long the /snapshot poller runs beside the viewer (guest seconds).
POLL_S=${VIVID_POLLER_S:-120}

if [ "${1:-}" = "--guest" ]; then
	out=$2
	. tests/integ/lib/rtsp.sh
	export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
	# r CMD...: runs a checker; exit 1 = it printed its FAIL lines, anything
	# else (a crash, a sanitizer abort, usage) is a failure of its own
	r() {
		"$@" && return 0
		s=$?
		[ $s = 1 ] || echo "vivid.exit: FAIL '$*' exit status $s"
	}
	{
		r $CHECK device /dev/video0
		r $CHECK controls /dev/video0
		r $CHECK inputs /dev/video0
		r $CHECK formats /dev/video0 --input 0 --sizes $SIZES_WEBCAM --part 0/2
		r $CHECK formats /dev/video0 --input 3 --sizes $SIZES_HDMI --part 0/2
		r $CHECK_ASAN reopen /dev/video0
	} >"$out/a.log" 2>"$out/a.err" &
	a=$!
	{
		r $CHECK_ASAN errors /dev/video2
		r $CHECK formats /dev/video2 --input 0 --sizes $SIZES_WEBCAM --part 1/2
		r $CHECK formats /dev/video2 --input 3 --sizes $SIZES_HDMI --part 1/2
	} >"$out/b.log" 2>"$out/b.err" &
	b=$!
	{
		r $CHECK device /dev/video1 --mplane
		r $CHECK formats /dev/video1 --input 0 --sizes $SIZES_WEBCAM --only-mplane --tag mplane.
		r $CHECK formats /dev/video1 --input 3 --sizes $SIZES_HDMI --only-mplane --tag mplane.
	} >"$out/c.log" 2>"$out/c.err" &
	c=$!
	wait $a; wait $b; wait $c
	# wait_up URL PID: prints 1 once the daemon answers URL/api/status, 0 when
	# it exited or 30 s passed
	wait_up() {
		for i in $(seq 150); do
			curl -s -o /dev/null --max-time 2 "$1/api/status" && { echo 1; return; }
			kill -0 "$2" 2>/dev/null || break
			sleep 0.2
		done
		echo 0
	}
	cat "$out/a.log" "$out/b.log" "$out/c.log"
	# Then the daemon on two vivid cameras (video3, video4), alone (JPEG
	# encoding under TCG needs the CPUs): its HTTP answers are saved and
	# judged on the host after the boot (ffmpeg there is fast).
	{
		d=$out/daemon
		mkdir -p "$d"
		U=http://127.0.0.1:18400
		$VCAPD --device /dev/video3 --device /dev/video4 --listen 127.0.0.1:18400 \
			--rtsp 127.0.0.1:0 >"$d/vcapd.log" 2>&1 &
		vp=$!
		up=$(wait_up "$U" $vp)
		echo $up >"$d/up"
		if [ $up = 1 ]; then
			curl -s -o "$d/cams.json" "$U/api/cams"
			curl -s -X PUT -d '{"brightness":200}' -o "$d/ctrl_put.json" "$U/api/cams/0/controls"
			curl -s -o "$d/ctrl.json" "$U/api/cams/0/controls"
			curl -s -D "$d/snap.h" -o "$d/snap.jpg" "$U/snapshot?cam=0"
			curl -s -D "$d/raw0.h" -o "$d/raw0.bin" "$U/raw?cam=0&format=YUYV"
			curl -s -D "$d/raw1.h" -o "$d/raw1.bin" "$U/raw?cam=1&format=NV12&size=320x180"
			curl -s --max-time 10 -D "$d/s0.h" -o "$d/s0.bin" "$U/stream?cam=0" &
			p0=$!
			curl -s --max-time 10 -D "$d/s1.h" -o "$d/s1.bin" "$U/stream?cam=1" &
			p1=$!
			wait $p0 $p1
			# H.264 from the YUYV webcams by the software encoder
			curl -s --max-time 8 -D "$d/h0.h" -o "$d/h0.h264" "$U/stream.h264?cam=0&size=320x180" &
			p0=$!
			curl -s --max-time 8 -D "$d/h1.h" -o "$d/h1.mp4" "$U/stream.mp4?cam=1&size=320x180" &
			p1=$!
			wait $p0 $p1
			# RTSP and HLS (issue 24) of one picture of video3 through the
			# software encoder; gop = fps (what HLS picks) so that all
			# share one encoder. First rtsp_check over TCP (interleaved)
			# beside a /stream.mp4 client: /api/status is saved once both
			# are listed (up to 20 s). Then ffmpeg over UDP and ffprobe on
			# /stream.m3u8 at once: their starts take the guest's CPUs for
			# seconds, which would starve the encoder under rtsp_check.
			RQ="size=$RTSP_SIZE&fps=$RTSP_FPS&gop=$RTSP_FPS"
			RP=$(rtsp_port "$d/vcapd.log")
			echo "$RP" >"$d/rtsp_port"
			t0=$(date +%s)
			timeout 60 $RTSPC -t 4 -f $RTSP_FPS 127.0.0.1 "${RP:-1}" "/0?$RQ" >"$d/rtsp_tcp.txt" 2>&1 &
			pr=$!
			curl -s --max-time 6 -o /dev/null "$U/stream.mp4?cam=0&$RQ" &
			pm=$!
			_end=$(($(date +%s) + 20))
			while [ "$(date +%s)" -lt $_end ]; do
				curl -s --max-time 5 -o "$d/share.json" "$U/api/status"
				grep -q '"kind":"mp4"' "$d/share.json" && grep -q '"kind":"h264"' "$d/share.json" && break
				kill -0 $pm 2>/dev/null || break
				sleep 0.3
			done
			wait $pr; echo $? >"$d/rtsp_tcp.rc"
			wait $pm
			timeout 60 ffmpeg -nostdin -v error -rtsp_transport udp -i "rtsp://127.0.0.1:$RP/0?$RQ" \
				-t 4 -f framecrc - >"$d/rtsp_udp.crc" 2>"$d/rtsp_udp.err" &
			pu=$!
			timeout 60 ffprobe -v error -read_intervals %+4 -count_frames \
				-show_entries stream=codec_name,width,height,nb_read_frames -of default=nw=1 \
				"$U/stream.m3u8?cam=0&$RQ" >"$d/hls.txt" 2>"$d/hls.err" &
			ph=$!
			wait $pu; echo $? >"$d/rtsp_udp.rc"
			wait $ph; echo $? >"$d/hls.rc"
			curl -s --max-time 10 -o "$d/hls.m3u8" "$U/stream.m3u8?cam=0&$RQ"
			echo $(($(date +%s) - t0)) >"$d/rtsp_hls.secs"
			curl -s -o "$d/status.json" "$U/api/status"
		fi
		kill -TERM $vp 2>/dev/null
		wait $vp
		echo $? >"$d/exit"
	} >"$out/d.log" 2>"$out/d.err"
	# One-shot pollers count as demand (issue 21, part 4) on a real driver: a
	# fresh daemon on video3 alone (so /api/status holds one policy). A
	# default /snapshot alone, a /stream viewer of the offered size nearest
	# below the default (from /api/cams), the same /snapshot beside it, then
	# that /snapshot every 5 s (guest clock) for $POLL_S s. Answers and
	# policy.switches after each poll are saved, judged on the host.
	{
		d=$out/poller
		mkdir -p "$d"
		U=http://127.0.0.1:18403
		# switches: this camera's policy.switches now
		switches() { curl -s --max-time 5 "$U/api/status" | sed -n 's/.*"policy":{.*"switches":\([0-9]*\).*/\1/p' | head -1; }
		$VCAPD --device /dev/video3 --listen 127.0.0.1:18403 >"$d/vcapd.log" 2>&1 &
		vp=$!
		up=$(wait_up "$U" $vp)
		echo "$up" >"$d/up"
		if [ "$up" = 1 ]; then
			curl -s -o "$d/cams.json" "$U/api/cams"
			# the default mode's size, and the offered sizes below it
			def=$(sed -n 's/.*"default":{[^}]*"width":\([0-9]*\),"height":\([0-9]*\).*/\1 \2/p' "$d/cams.json" | head -1)
			vs=$(grep -o '"width":[0-9]*,"height":[0-9]*,"intervals"' "$d/cams.json" |
				sed 's/"width":\([0-9]*\),"height":\([0-9]*\).*/\1 \2/' | sort -u |
				awk -v def="$def" 'BEGIN { split(def, m, " ") }
					$1 <= m[1] && $2 <= m[2] && $1 * $2 < m[1] * m[2] && $1 * $2 > best { best = $1 * $2; s = $1 "x" $2 }
					END { print s }')
			echo "${def% *}x${def#* } $vs" >"$d/sizes"
			curl -s --max-time 20 -D "$d/alone.h" -o "$d/alone.jpg" "$U/snapshot"
			switches >"$d/n0"
			curl -s -N -D "$d/viewer.h" -o "$d/viewer.bin" "$U/stream?size=$vs" &
			cp=$!
			# the viewer is there once its headers came (a curl start takes
			# seconds under TCG): up to 30 s by the guest clock, then 2 s
			# for the mode to settle
			_end=$(($(date +%s) + 30))
			until grep -qi '^X-Size:' "$d/viewer.h" 2>/dev/null || [ "$(date +%s)" -ge $_end ]; do
				sleep 0.2
			done
			sleep 2
			curl -s --max-time 20 -D "$d/beside.h" -o "$d/beside.jpg" "$U/snapshot"
			# $POLL_S / 5 polls, 5 s apart at least: counted, not fitted
			# into $POLL_S s (a guest on a busy host took 6-7 s for some
			# polls and made 19 of 24); bounded by twice the time
			t0=$(date +%s); i=0
			while [ $i -lt $((POLL_S / 5)) ] && [ $(($(date +%s) - t0)) -lt $((POLL_S * 2)) ]; do
				i=$((i + 1))
				# the next slot 5 s after the last, by the guest clock
				while [ $(($(date +%s) - t0)) -lt $((i * 5)) ]; do sleep 0.2; done
				curl -s --max-time 20 -D "$d/p$i.h" -o "$d/p$i.jpg" "$U/snapshot"
				echo "$i $(($(date +%s) - t0)) $(switches)" >>"$d/polls"
			done
			v0=$(wc -c <"$d/viewer.bin"); sleep 2; v1=$(wc -c <"$d/viewer.bin")
			kill -0 $cp 2>/dev/null && echo "$v0 $v1" >"$d/viewer_grew"
			curl -s -o "$d/status.json" "$U/api/status"
			kill $cp 2>/dev/null; wait $cp
		fi
		kill -TERM $vp 2>/dev/null
		wait $vp
		echo $? >"$d/exit"
	} >"$out/p.log" 2>"$out/p.err"
	# A [camera] section's std line on vivid's TV input (video4, free again):
	# the device starts on NTSC (480 lines), the daemon must serve PAL; a
	# reload (SIGHUP) with std = NTSC reopens the camera on NTSC; another one
	# with input = 3 (HDMI) and dv_timings = 800x600p60 serves 800x600.
	{
		d=$out/std
		mkdir -p "$d"
		U=http://127.0.0.1:18402
		v4l2-ctl -d /dev/video4 -i 1 -s ntsc >"$d/ctl.log" 2>&1
		v4l2-ctl -d /dev/video4 --get-standard >"$d/before.txt" 2>&1
		printf '[server]\nlisten = 127.0.0.1:18402\n[camera tv]\ndevice = /dev/video4\ninput = 1\nstd = PAL\n' \
			>"$d/vcapd.conf"
		$VCAPD --config "$d/vcapd.conf" >"$d/vcapd.log" 2>&1 &
		vp=$!
		up=$(wait_up "$U" $vp)
		echo $up >"$d/up"
		# raw_until NAME HEIGHT: /raw into $d/NAME.h/.bin until the device
		# serves HEIGHT lines (a reload or PUT switches it asynchronously)
		raw_until() {
			for i in $(seq 20); do
				sleep 0.5
				curl -s -D "$d/$1.h" -o "$d/$1.bin" "$U/raw?cam=tv&format=YUYV"
				tr -d '\r' <"$d/$1.h" | grep -qi "^X-Height: $2\$" && break
			done
		}
		if [ $up = 1 ]; then
			curl -s -D "$d/raw.h" -o "$d/raw.bin" "$U/raw?cam=tv&format=YUYV"
			v4l2-ctl -d /dev/video4 --get-standard >"$d/std.txt" 2>&1
			curl -s -o "$d/cam_std.json" "$U/api/cams/tv"
			sed -i 's/^std = PAL$/std = NTSC/' "$d/vcapd.conf"
			kill -HUP $vp
			raw_until raw2 480
			sed -i -e 's/^input = 1$/input = 3/' -e 's/^std = NTSC$/dv_timings = 800x600p60/' \
				"$d/vcapd.conf"
			kill -HUP $vp
			raw_until raw3 600
			v4l2-ctl -d /dev/video4 --get-dv-timings >"$d/dv.txt" 2>&1
			curl -s -o "$d/cam_dv.json" "$U/api/cams/tv"
			# The same over HTTP while a client streams: PUT .../signal
			# with other DV timings, then (back on the TV input by a
			# reload) another standard; bad values are refused.
			# killed below; the timeout only bounds a hang (a loaded
			# TCG guest took over 30 s to reach the PUT of std, and a
			# client ended by its own timeout looked like a stall)
			timeout 300 curl -s -o "$d/put_stream.bin" "$U/stream?cam=tv" &
			cp=$!
			sleep 1
			# put NAME BODY: the status code; 503 (the camera reopens after
			# a signal change: the driver reports a source change, and a
			# reopen that fails backs off) is retried as its Retry-After
			# says, for up to 60 s by the guest's clock (10 tries 1 s apart
			# once ran out on a loaded TCG guest: "503 ... (error): retry")
			put() {
				_end=$(($(date +%s) + 60))
				while :; do
					c=$(curl -s -D "$d/$1.h" -o "$d/$1.json" -w '%{http_code}' -X PUT --data "$2" "$U/api/cams/tv/signal")
					[ "$c" = 503 ] && [ "$(date +%s)" -lt "$_end" ] || break
					ra=$(sed -n 's/^Retry-After: *\([0-9]*\).*/\1/ip' "$d/$1.h" | head -1)
					[ -n "$ra" ] && [ "$ra" -ge 1 ] && [ "$ra" -le 5 ] || ra=1
					sleep "$ra"
				done
				echo "$c"
			}
			put put_dv '{"dv_timings":"1280x720p60"}' >"$d/put_dv.code"
			raw_until raw4 720
			put put_std_on_hdmi '{"std":"PAL"}' >"$d/put_std_on_hdmi.code"
			put put_dv_bad '{"dv_timings":"123x45p60"}' >"$d/put_dv_bad.code"
			sed -i -e 's/^input = 3$/input = 1/' -e 's/^dv_timings = 800x600p60$/std = NTSC/' \
				"$d/vcapd.conf"
			kill -HUP $vp
			raw_until raw5 480
			put put_std '{"std":"PAL"}' >"$d/put_std.code"
			raw_until raw6 576
			grep -ac '^Content-Type: image/jpeg' "$d/put_stream.bin" >"$d/put_parts1"
			sleep 2
			grep -ac '^Content-Type: image/jpeg' "$d/put_stream.bin" >"$d/put_parts2"
			kill -0 $cp 2>/dev/null && echo yes >"$d/put_alive"
			kill $cp 2>/dev/null
		fi
		kill -TERM $vp 2>/dev/null
		wait $vp
	} >"$out/s.log" 2>"$out/s.err"
	# The daemon (ASan build when there is one) through vivid's faults while
	# a client streams: error-flagged buffers, a fatal streaming error, drops,
	# a failing STREAMON on the restart, an unplug (disconnect; vivid
	# re-registers once every handle is closed). It must recover, keep the
	# client, and exit cleanly without leaks.
	{
		d=$out/faults
		mkdir -p "$d"
		U=http://127.0.0.1:18401
		ctl() { v4l2-ctl -d /dev/video3 -c "$1" 2>>"$d/ctl.err" || echo "ctl $1 failed" >>"$d/ctl.err"; }
		restarts() { sed -n 's/.*"restarts":\([0-9]*\).*/\1/p' "$1" 2>/dev/null | head -1; }
		dsec() { echo $(($(date +%s%N) / 100000000)); } # tenths of a second
		# recovered FILE MIN: /api/status every 0.5 s, up to 30 s by the
		# clock, until the camera has at least MIN restarts and streams
		# again (the ASan daemon in a TCG guest takes seconds to reopen);
		# the last read is what is judged; FILE.wait: the seconds it took
		recovered() {
			t0=$(dsec)
			while :; do
				curl -s --max-time 5 -o "$1" "$U/api/status"
				[ "$(restarts "$1")" -ge "$2" ] 2>/dev/null &&
					grep -q '"state":"streaming"' "$1" && break
				[ $(($(dsec) - t0)) -ge 300 ] && break
				sleep 0.5
			done
			t=$(($(dsec) - t0)); echo "$((t / 10)).$((t % 10))" >"$1.wait"
		}
		$VCAPD_ASAN --device /dev/video3 --listen 127.0.0.1:18401 >"$d/vcapd.log" 2>&1 &
		vp=$!
		up=$(wait_up "$U" $vp)
		echo $up >"$d/up"
		if [ $up = 1 ]; then
			curl -s --max-time 40 -o "$d/stream.bin" "$U/stream" &
			cp=$!
			sleep 4
			ctl inject_v4l2_buf_flag_error=1; sleep 2
			ctl percentage_of_dropped_buffers=50; sleep 3
			ctl percentage_of_dropped_buffers=0
			ctl inject_vidioc_streamon_error=1
			ctl inject_fatal_streaming_error=1
			recovered "$d/status1.json" 1
			rs=$(restarts "$d/status1.json")
			ctl disconnect=1
			recovered "$d/status2.json" $((${rs:-0} + 1))
			curl -s -o "$d/after.jpg" "$U/snapshot"
			kill $cp 2>/dev/null; wait $cp
		fi
		kill -TERM $vp 2>/dev/null
		wait $vp
		echo $? >"$d/exit"
	} >"$out/f.log" 2>"$out/f.err"
	# discovery, then a replug (unload + reload vivid) last: it changes the
	# devices. udev does not run in the guest: the command makes the by-id
	# link itself, as udev would.
	r $CHECK_ASAN discover 5 2>>"$out/e.err"
	# libv4l2's emulated formats: vivid offers every format natively, so
	# they are checked on the v4l2loopback node fed with MJPEG like a webcam.
	$FEED -i "$out/in.mjpeg" -d /dev/video20 -r 15 -n 100000 >"$out/feed.log" 2>&1 &
	fp=$!
	sleep 2
	r $CHECK_ASAN emulated /dev/video20 2>>"$out/e.err"
	kill $fp 2>/dev/null; wait $fp 2>/dev/null
	r $CHECK_ASAN hotplug /dev/v4l/by-id/usb-vivid_Replug-video-index0 sh -c \
		'busybox rmmod vivid && sleep 0.5 && busybox modprobe vivid n_devs=1 node_types=0x1 &&
		 mkdir -p /dev/v4l/by-id && ln -sf ../../video0 /dev/v4l/by-id/usb-vivid_Replug-video-index0' \
		2>>"$out/e.err"
	exit 0
fi

for t in "$CHECK" "$CHECK_ASAN" "$VCAPD" "$VCAPD_ASAN" "$FEED" "$RTSPC"; do
	if [ ! -x "$t" ]; then
		echo "vivid.build: FAIL $t not built (make all)"
		exit 1
	fi
done
work=$(mktemp -d "$PWD/build/vm-vivid.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT INT TERM

# MJPEG frames for the loopback camera, made on the host (ffmpeg is slow
# to start under TCG).
if ! ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=640x480:rate=15 -frames:v 45 \
	-c:v mjpeg -huffman default -q:v 5 -f mjpeg "$work/in.mjpeg"; then
	echo "vivid.emulated: FAIL ffmpeg could not make the MJPEG input"
fi

start=$(date +%s)
# 900: with the 2 min poller a boot took 638 s under TCG on a loaded host
# (load average 9-11, the guest alone about 10 min); the limit
# only bounds a hang
../shared/vm/vivid-vm --timeout 900 --loopback \
	--vivid "n_devs=5 multiplanar=1,2,1,1,1 node_types=0x1,0x1,0x1,0x1,0x1" \
	-- sh "$0" --guest "$work" >"$work/out" 2>"$work/vm.err"
rc=$?
cat "$work/out"
fail=0
case $rc in
0) ;;
124) echo "vivid.vm: FAIL the guest timed out (vivid-vm --timeout 900)" ;;
125) echo "vivid.vm: FAIL vivid-vm could not boot the guest (exit 125): $(tail -3 "$work/vm.err" | tr '\n' ' ')" ;;
*) echo "vivid.vm: FAIL vivid-vm exit $rc: $(tail -3 "$work/vm.err" | tr '\n' ' ')" ;;
esac
# Program errors (a crash, ASan) show on stderr; keep them in the log.
if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$work"/*.err 2>/dev/null; then
	echo "vivid.sanitizer: FAIL $(grep -hE 'ERROR: |runtime error:' "$work"/*.err | head -3 | tr '\n' ' ')"
	grep -hA20 -E 'ERROR: (AddressSanitizer|LeakSanitizer)' "$work"/*.err | head -60
fi
# The daemon's answers (issue 3/6: a YUYV camera through the whole server).
d=$work/daemon
dres() {
	if [ "$2" = 0 ]; then echo "vivid.daemon.$1: OK${4:+ $4}"; else echo "vivid.daemon.$1: FAIL $3"; fi |
		tee -a "$work/out"
}
hdr() { tr -d '\r' <"$1" 2>/dev/null | sed -n "s/^$2: //Ip" | head -1; }
if [ "$(cat "$d/up" 2>/dev/null)" != 1 ]; then
	echo "vivid.daemon.start: FAIL $VCAPD did not answer in the guest: $(tail -5 "$d/vcapd.log" 2>/dev/null | tr '\n' ' ')" |
		tee -a "$work/out"
else
	grep -q '"YUYV"' "$d/cams.json" && [ "$(grep -o '"id"' "$d/cams.json" | wc -l)" -ge 2 ]
	dres api_cams $? "$(head -c 300 "$d/cams.json")"
	got=$(ffprobe -v error -show_entries stream=codec_name,width,height -of csv=p=0 "$d/snap.jpg" 2>&1)
	ffmpeg -nostdin -v error -i "$d/snap.jpg" -f null - 2>"$d/snap.err"
	[ "${got%%,*}" = mjpeg ] && [ ! -s "$d/snap.err" ]
	dres snapshot $? "ffprobe '$got', decode: $(head -c 200 "$d/snap.err")" "$got"
	for r in raw0 raw1; do
		n=$(wc -c <"$d/$r.bin"); si=$(hdr "$d/$r.h" X-Sizeimage)
		w=$(hdr "$d/$r.h" X-Width); h=$(hdr "$d/$r.h" X-Height); fc=$(hdr "$d/$r.h" X-Fourcc)
		case $r in raw0) want=$((w * h * 2)) ;; *) want=$((w * h * 3 / 2)) ;; esac
		[ -n "$w" ] && [ "$n" = "$si" ] && [ "$n" = "$want" ] && [ "$n" -gt 0 ]
		dres "${r}_exact_size" $? "body $n bytes, X-Sizeimage '$si', ${w}x$h $fc (want $want)" "$fc ${w}x$h $n bytes"
	done
	[ "$(hdr "$d/raw1.h" X-Width)x$(hdr "$d/raw1.h" X-Height)" = 320x180 ]
	dres raw_size_asked $? "asked 320x180, got $(hdr "$d/raw1.h" X-Width)x$(hdr "$d/raw1.h" X-Height)"
	for sN in s0 s1; do
		parts=$(grep -ac '^Content-Type: image/jpeg' "$d/$sN.bin")
		dec=$(ffmpeg -nostdin -v error -f mjpeg -i "$d/$sN.bin" -f framecrc - 2>"$d/$sN.err" | grep -vc '^#')
		[ "$parts" -ge 10 ] && [ "$dec" -ge "$parts" ] && [ ! -s "$d/$sN.err" ]
		dres "stream_cam${sN#s}" $? "$parts parts, $dec decoded, errors: $(head -c 200 "$d/$sN.err")" "$parts JPEG parts in 10 s, all decode"
	done
	# H.264 (software encoder) from vivid's YUYV: decodes with no error,
	# starts with an IDR, carries the size asked
	for hN in h0.h264 h1.mp4; do
		got=$(ffprobe -v error -select_streams v:0 -count_frames \
			-show_entries stream=codec_name,width,height,nb_read_frames -of csv=p=0 "$d/$hN" 2>&1)
		ffmpeg -nostdin -v error -i "$d/$hN" -enc_time_base -1 -f null - 2>"$d/$hN.err"
		first=$(ffprobe -v error -select_streams v:0 -show_entries frame=key_frame,pict_type \
			-read_intervals '%+#1' -of csv=p=0 "$d/$hN" 2>/dev/null | head -1)
		n=${got##*,}
		case $got in h264,320,180,*) ;; *) n=0 ;; esac
		[ "${n:-0}" -ge 10 ] 2>/dev/null && [ ! -s "$d/$hN.err" ] && [ "$first" = "1,I" ]
		dres "h264_${hN%%.*}_${hN##*.}" $? "ffprobe '$got', first frame '$first', steps '$(hdr "$d/${hN%%.*}.h" X-Steps)', decode: $(head -c 200 "$d/$hN.err")" \
			"$n frames of 320x180 H.264 in 8 s ($(hdr "$d/${hN%%.*}.h" X-Steps)), 0 errors, IDR first"
	done
	# RTSP and HLS (issue 24) from video3 at $RTSP_SIZE, $RTSP_FPS fps
	rw=${RTSP_SIZE%x*} rh=${RTSP_SIZE#*x}
	xr=$(cat "$d/rtsp_tcp.rc" 2>/dev/null)
	[ "$xr" = 0 ] && grep -q '^client 0: OK' "$d/rtsp_tcp.txt" && ! grep -q FAIL "$d/rtsp_tcp.txt"
	dres rtsp_tcp $? "rtsp_check (port '$(cat "$d/rtsp_port" 2>/dev/null)') exit '$xr': $(head -c 300 "$d/rtsp_tcp.txt" | tr '\n' ' ')" \
		"$(sed -n 's/^client 0: OK //p' "$d/rtsp_tcp.txt" | head -1)"
	xr=$(cat "$d/rtsp_udp.rc" 2>/dev/null)
	n=$(grep -vc '^#' "$d/rtsp_udp.crc" 2>/dev/null)
	dim=$(sed -n 's/^#dimensions 0: //p' "$d/rtsp_udp.crc" 2>/dev/null)
	[ "$xr" = 0 ] && [ "${n:-0}" -ge 10 ] && [ "$dim" = "$RTSP_SIZE" ] && [ ! -s "$d/rtsp_udp.err" ]
	dres rtsp_udp_ffmpeg $? "ffmpeg exit '$xr', ${n:-0} frames decoded (want >= 10) of '$dim' (asked $RTSP_SIZE), errors: $(head -c 300 "$d/rtsp_udp.err" | tr '\n' ' ')" \
		"$n frames of $dim in 4 s over UDP, 0 errors"
	xr=$(cat "$d/hls.rc" 2>/dev/null)
	hv() { sed -n "s/^$1=//p" "$d/hls.txt" 2>/dev/null | head -1; }
	n=$(hv nb_read_frames)
	[ "$xr" = 0 ] && [ "$(hv codec_name)" = h264 ] && [ "$(hv width)" = "$rw" ] && [ "$(hv height)" = "$rh" ] &&
		[ "${n:-0}" -ge 10 ] 2>/dev/null && [ ! -s "$d/hls.err" ] && grep -q '^#EXT-X-MAP:' "$d/hls.m3u8"
	dres hls_ffprobe $? "ffprobe exit '$xr': $(tr '\n' ' ' <"$d/hls.txt" 2>/dev/null) (asked $RTSP_SIZE, want >= 10 frames), errors: $(head -c 300 "$d/hls.err" | tr '\n' ' '), playlist: $(head -c 200 "$d/hls.m3u8" | tr '\n' ' ')" \
		"$(hv codec_name) $(hv width)x$(hv height), $n frames in 4 s from /stream.m3u8, 0 errors (RTSP and HLS: $(cat "$d/rtsp_hls.secs" 2>/dev/null) s in the guest)"
	# one encoder: while an RTSP and the /stream.mp4 client ran, cam 0 had
	# one H.264 output with clients, of the asked size, with both on it (an
	# output with none is the step before's, in its grace time)
	shr=$(python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))["cams"][0]
outs = ["%sx%s:%d" % (o["plan"]["output"]["width"], o["plan"]["output"]["height"], o["clients"])
	for o in c.get("outputs", []) if o["plan"]["output"]["fourcc"] == "H264" and o["clients"] > 0]
print(" ".join(outs) or "-", ",".join(sorted(k["kind"] for k in c.get("clients", []))) or "-")' "$d/share.json" 2>/dev/null)
	outs=${shr% *} kinds=${shr##* }
	case $outs in "$RTSP_SIZE:"[2-9] | "$RTSP_SIZE:"[1-9][0-9]) ok=0 ;; *) ok=1 ;; esac
	case ",$kinds," in *,h264,*mp4,* | *,mp4,*h264,*) ;; *) ok=1 ;; esac
	dres rtsp_mp4_one_encoder $ok "cam 0 H.264 outputs '$outs' (want one $RTSP_SIZE with >= 2 clients), clients '$kinds' (want an RTSP (h264) and an mp4)" \
		"one $RTSP_SIZE encoder ($outs clients) for clients $kinds"
	bv=$(grep -o '"key":"brightness"[^}]*' "$d/ctrl.json" | sed -n 's/.*"value":\([0-9-]*\).*/\1/p')
	[ "$bv" = 200 ]
	dres controls_put_get $? "brightness '$bv' after PUT 200: $(head -c 200 "$d/ctrl_put.json")" "brightness 200 on vivid"
	grep -q '"frames"' "$d/status.json"
	dres status $? "$(head -c 300 "$d/status.json")"
fi
[ "$(cat "$d/exit" 2>/dev/null)" = 0 ]
dres sigterm_exit $? "exit status '$(cat "$d/exit" 2>/dev/null)'"

# Pollers (issue 21, part 4): sizes "X-Size/JPEG-size" (the JPEG's own SOF).
d=$work/poller
jpeg_size() { od -An -v -tx1 "$1" 2>/dev/null | tr -d '\n' | sed 's/ //g' |
	sed -n 's/.*ffc[02]0011..\(....\)\(....\).*/\2 \1/p' | { read -r w h; [ -n "$w" ] && echo "$((0x$w))x$((0x$h))"; }; }
snap() { echo "$(hdr "$d/$1.h" X-Size)/$(jpeg_size "$d/$1.jpg")"; }
if [ "$(cat "$d/up" 2>/dev/null)" != 1 ]; then
	dres poller.start 1 "$VCAPD did not answer in the guest: $(tail -5 "$d/vcapd.log" 2>/dev/null | tr '\n' ' ')"
else
	read -r def vs 2>/dev/null <"$d/sizes"
	alone=$(snap alone); beside=$(snap beside); vx=$(hdr "$d/viewer.h" X-Size)
	# the viewer must be smaller than the default, else "beside" proves nothing
	[ "$alone" = "$def/$def" ] && [ "$beside" = "$alone" ] && [ -n "$vs" ] && [ "$vx" = "$vs" ]
	dres poller.same_size $? "default /snapshot alone $alone, beside a $vs viewer (its X-Size '$vx') $beside (X-Size/JPEG; want $def both, the default in /api/cams)" \
		"default /snapshot $alone alone and $beside beside a $vx viewer"
	n0=$(cat "$d/n0"); bad=""; sw=""
	np=$(wc -l <"$d/polls" 2>/dev/null || echo 0)
	secs=$(tail -1 "$d/polls" 2>/dev/null | cut -d' ' -f2)
	while read -r i t n; do
		[ "$(snap "p$i")" = "$alone" ] || bad="$bad $i:$(snap "p$i")"
		[ "$n" = "$n0" ] || sw="$sw $i@${t}s:$n"
	done 2>/dev/null <"$d/polls"
	read -r v0 v1 2>/dev/null <"$d/viewer_grew"
	[ -n "$n0" ] && [ -z "$sw" ] && [ -z "$bad" ] && [ "$np" -ge $((POLL_S / 5)) ] &&
		[ "${secs:-0}" -ge $((POLL_S - 5)) ] && [ "${v1:-0}" -gt "${v0:-0}" ]
	dres poller.no_switch $? "$np polls in ${secs:-0} s (want $((POLL_S / 5)), 5 s apart at least, over $POLL_S s or more) beside the $vs viewer: switches $n0 then changed at:${sw:- never} (want never), wrong sizes:${bad:- none}, viewer still receiving: ${v0:-no} -> ${v1:-no} bytes" \
		"$np polls every 5 s over $secs s beside the viewer: switches stayed $n0, every snapshot $alone"
fi
[ "$(cat "$d/exit" 2>/dev/null)" = 0 ]
dres poller.sigterm_exit $? "exit status '$(cat "$d/exit" 2>/dev/null)'"

# The config's std line.
d=$work/std
if [ "$(cat "$d/up" 2>/dev/null)" != 1 ]; then
	dres conf_std 1 "$VCAPD --config did not answer: $(tail -5 "$d/vcapd.log" 2>/dev/null | tr '\n' ' ')"
else
	h=$(hdr "$d/raw.h" X-Height); w=$(hdr "$d/raw.h" X-Width); n=$(wc -c <"$d/raw.bin")
	# the device really was on NTSC before (else PAL proves nothing)
	grep -q NTSC "$d/before.txt" && ! grep -q PAL "$d/before.txt" &&
		[ "$w" = 720 ] && [ "$h" = 576 ] && [ "$n" = $((720 * 576 * 2)) ] && grep -q PAL "$d/std.txt"
	dres conf_std $? "before: $(tr '\n' ' ' <"$d/before.txt" | head -c 120); std = PAL: /raw ${w}x$h $n bytes, $(tr '\n' ' ' <"$d/std.txt" | head -c 200) $(head -c 200 "$d/ctl.log")" \
		"std = PAL on the TV input: /raw ${w}x$h"
	h=$(hdr "$d/raw2.h" X-Height); w=$(hdr "$d/raw2.h" X-Width); n=$(wc -c <"$d/raw2.bin")
	[ "$w" = 720 ] && [ "$h" = 480 ] && [ "$n" = $((720 * 480 * 2)) ]
	dres conf_std_reload $? "std = NTSC after SIGHUP: /raw ${w}x$h $n bytes; $(grep -i reload "$d/vcapd.log" | tail -2 | tr '\n' ' ')" \
		"reload with std = NTSC: /raw ${w}x$h"
	h=$(hdr "$d/raw3.h" X-Height); w=$(hdr "$d/raw3.h" X-Width); n=$(wc -c <"$d/raw3.bin")
	[ "$w" = 800 ] && [ "$h" = 600 ] && [ "$n" = $((800 * 600 * 2)) ] && grep -q 'Active width: 800' "$d/dv.txt"
	dres conf_dv_timings $? "input 3, dv_timings = 800x600p60 after SIGHUP: /raw ${w}x$h $n bytes; $(tr '\n' ' ' <"$d/dv.txt" | head -c 200)" \
		"input 3, dv_timings = 800x600p60: /raw ${w}x$h"
	# /api/cams/<id>: the TV input's standards (PAL current), the HDMI input's
	# DV timings (current 800x600, the offered list)
	grep -q '"tv_std":{"current":"0x' "$d/cam_std.json" &&
		grep -q '"name":"NTSC","id":"0x[0-9a-f]*","frameperiod":"1001/30000","fps":29.970,"lines":525,"current":false' "$d/cam_std.json" &&
		grep -q '"name":"PAL","id":"0x[0-9a-f]*","frameperiod":"1/25","fps":25.000,"lines":625,"current":true' "$d/cam_std.json" &&
		[ "$(grep -o '"current":true' "$d/cam_std.json" | wc -l)" = 1 ] && ! grep -q '"dv_timings"' "$d/cam_std.json"
	dres api_cam_std $? "$(grep -o '"tv_std":.\{0,400\}' "$d/cam_std.json" | head -c 400)" \
		"/api/cams/tv on the TV input: PAL current, NTSC listed"
	grep -q '"dv_timings":{"current":{"width":800,"height":600,"interlaced":false,"pixelclock":40000000,"fps":60.3' "$d/cam_dv.json" &&
		grep -q '"offered":\[{' "$d/cam_dv.json" && grep -q '"name":"1280x720p60"' "$d/cam_dv.json" &&
		grep -q '"name":"800x600p60"' "$d/cam_dv.json" && ! grep -q '"tv_std"' "$d/cam_dv.json"
	dres api_cam_dv $? "$(grep -o '"dv_timings":.\{0,300\}' "$d/cam_dv.json" | head -c 300) ... $(grep -o '"name":"[0-9]*x[0-9]*[pi][0-9]*"' "$d/cam_dv.json" | wc -l) offered" \
		"/api/cams/tv on the HDMI input: current 800x600p60 + $(grep -o '"name":"[0-9]*x[0-9]*[pi][0-9]*"' "$d/cam_dv.json" | wc -l) timings"
	# PUT /api/cams/tv/signal while a client streams
	h=$(hdr "$d/raw4.h" X-Height); w=$(hdr "$d/raw4.h" X-Width); n=$(wc -c <"$d/raw4.bin")
	[ "$(cat "$d/put_dv.code")" = 202 ] && grep -q '"dv_timings":"1280x720p60.000"' "$d/put_dv.json" &&
		[ "$w" = 1280 ] && [ "$h" = 720 ] && [ "$n" = $((1280 * 720 * 2)) ]
	dres api_put_dv $? "PUT dv_timings 1280x720p60: $(cat "$d/put_dv.code") $(head -c 200 "$d/put_dv.json"); then /raw ${w}x$h $n bytes" \
		"PUT dv_timings 1280x720p60 (from 800x600): /raw ${w}x$h"
	[ "$(cat "$d/put_std_on_hdmi.code")" = 400 ] && [ "$(cat "$d/put_dv_bad.code")" = 400 ]
	dres api_put_bad $? "std on the HDMI input: $(cat "$d/put_std_on_hdmi.code") $(head -c 160 "$d/put_std_on_hdmi.json"); 123x45p60: $(cat "$d/put_dv_bad.code") $(head -c 160 "$d/put_dv_bad.json")"
	h=$(hdr "$d/raw6.h" X-Height); w=$(hdr "$d/raw6.h" X-Width); n=$(wc -c <"$d/raw6.bin")
	p1=$(cat "$d/put_parts1" 2>/dev/null); p2=$(cat "$d/put_parts2" 2>/dev/null)
	[ "$(cat "$d/put_std.code")" = 202 ] && grep -q '"std":"PAL"' "$d/put_std.json" &&
		[ "$w" = 720 ] && [ "$h" = 576 ] && [ "$n" = $((720 * 576 * 2)) ] && [ "${p2:-0}" -gt "${p1:-0}" ]
	dres api_put_std $? "PUT std PAL (from NTSC): $(cat "$d/put_std.code") $(head -c 200 "$d/put_std.json"); then /raw ${w}x$h $n bytes; stream parts $p1 -> $p2 (the client must keep receiving; client still running: $(cat "$d/put_alive" 2>/dev/null || echo no))" \
		"PUT std PAL (from NTSC): /raw ${w}x$h, the streaming client kept receiving ($p1 -> $p2 parts)"
fi

# Faults (vivid's error injection) under the ASan daemon.
d=$work/faults
num() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" "$2" 2>/dev/null | head -1; }
if [ "$(cat "$d/up" 2>/dev/null)" != 1 ]; then
	dres faults.start 1 "$VCAPD_ASAN did not answer in the guest: $(tail -5 "$d/vcapd.log" 2>/dev/null | tr '\n' ' ')"
else
	[ ! -s "$d/ctl.err" ]
	dres faults.controls $? "v4l2-ctl: $(head -c 300 "$d/ctl.err")"
	e1=$(num errors "$d/status1.json"); dr=$(num dropped "$d/status1.json")
	r1=$(num restarts "$d/status1.json"); r2=$(num restarts "$d/status2.json")
	[ "${e1:-0}" -ge 1 ]
	dres faults.error_flag_counted $? "errors '$e1' after inject_v4l2_buf_flag_error" "errors $e1"
	[ "${dr:-0}" -ge 3 ]
	dres faults.drops_counted $? "dropped '$dr' after 3 s at 50 %" "dropped $dr"
	w1=$(cat "$d/status1.json.wait" 2>/dev/null); w2=$(cat "$d/status2.json.wait" 2>/dev/null)
	[ "${r1:-0}" -ge 1 ] && grep -q '"state":"streaming"' "$d/status1.json"
	dres faults.fatal_error_recovered $? "restarts '$r1', $(grep -o '"state":"[a-z]*"' "$d/status1.json") after $w1 s" \
		"restarts $r1, streaming again after $w1 s"
	[ "${r2:-0}" -gt "${r1:-0}" ] && grep -q '"state":"streaming"' "$d/status2.json"
	dres faults.disconnect_recovered $? "restarts '$r1' -> '$r2', $(grep -o '"state":"[a-z]*"' "$d/status2.json") after $w2 s" \
		"restarts $r2, streaming again after $w2 s"
	ffmpeg -nostdin -v error -i "$d/after.jpg" -f null - 2>"$d/after.err" && [ -s "$d/after.jpg" ] && [ ! -s "$d/after.err" ]
	dres faults.snapshot_after $? "$(wc -c <"$d/after.jpg") bytes: $(head -c 200 "$d/after.err")"
	parts=$(grep -ac '^Content-Type: image/jpeg' "$d/stream.bin")
	[ "$parts" -ge 40 ]
	dres faults.client_kept $? "$parts parts in the 40 s stream across the faults" "$parts parts in 40 s"
fi
[ "$(cat "$d/exit" 2>/dev/null)" = 0 ] && ! grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$d/vcapd.log"
dres faults.clean_exit $? "exit '$(cat "$d/exit" 2>/dev/null)': $(grep -hE -A5 'ERROR: |runtime error:' "$d/vcapd.log" | head -8 | tr '\n' ' ')"
n=$(grep -c ': OK' "$work/out")
echo "vivid.summary: $( [ "$n" -ge 100 ] && echo OK || echo FAIL only) $n checks passed in $(( $(date +%s) - start )) s"
# a FAIL printed here (vm, sanitizer) or by the guest makes the exit status
[ "$rc" = 0 ] && [ "$n" -ge 100 ] && ! grep -q ': FAIL' "$work/out" && ! grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$work"/*.err 2>/dev/null
