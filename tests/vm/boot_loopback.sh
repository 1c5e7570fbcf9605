#!/bin/sh
# MJPEG webcam checks (issue 6) in one vivid-vm boot with --loopback:
# v4l2loopback at /dev/video20 fed by tests/tools/mjpeg_feed (frames made by
# ffmpeg on the host before the boot, with the standard Huffman tables as
# webcams use: ffmpeg optimises its tables by default, and a frame coded
# with optimised tables cannot lose its DHT), like a USB webcam sending MJPEG:
#   loopback.passthrough  the camera's frames arrive byte for byte
#   loopback.nodht_repaired_decodes  a frame without DHT, repaired, decodes in
#                         ffmpeg exactly like the original
#   loopback.nodht        frames without Huffman tables arrive byte for byte
#   loopback.faults       corrupt/truncated/empty frames are rejected by
#                         vc_jpeg_parse, the good ones still pass
#   loopback.overtaken_detected  a copy taken after the producer lapped the
#                         ring is flagged (v4l2_copy_overtaken, the daemon's
#                         guard against torn frames from v4l2loopback)
#   loopback.stale_detected  a buffer whose record the reader's REQBUFS reset
#                         (length = whole buffer, old bytes) is flagged
#                         (v4l2_copy_stale)
# Then the daemon (build/vcapd --device /dev/video20), one instance per feed:
#   loopback.daemon_snapshot_passthrough / _stream_passthrough: /snapshot and
#       every /stream part are byte for byte frames that were fed
#   loopback.daemon_nodht_repaired: fed without DHT, served with the standard
#       tables inserted (= strip + vc_jpeg_add_dht of a fed frame), ffmpeg decodes
#   loopback.daemon_copies_out: the daemon copies v4l2loopback's frames out
#       at dequeue (the driver rewrites buffers a reader holds)
#   loopback.daemon_quality_reencodes: quality=20 decodes and encodes the
#       camera's JPEG (smaller than the camera's frame)
#   loopback.daemon_raw_from_mjpeg, _scaled_from_mjpeg: /raw YUYV and a 320x240
#       snapshot from the MJPEG camera
#   loopback.daemon_rotate_lossless: rotate=90 snapshot = vc_jpeg_transform of a
#       fed frame (no re-encode)
#   loopback.daemon_two_cameras: vivid's YUYV webcam and the MJPEG loopback in
#       one daemon, streamed at the same time
#   loopback.daemon_stale_dropped: a buffer whose length the daemon's REQBUFS
#       reset (v4l2loopback) is not served as a picture
#   loopback.daemon_faults_dropped / _faults_counted: with corrupt, truncated
#       and empty frames fed, every served part is a good fed frame and the
#       camera's error counter (/api/cams) grows
# Then an H.264 camera (UVC webcams that deliver V4L2_PIX_FMT_H264): ffmpeg
# copies a file made by libx264 on the host (SPS/PPS only before its first
# IDR, as many such cameras send them) into the loopback, unchanged:
#   loopback.h264_mode_listed: /api/cams lists the H264 mode
#   loopback.h264_try_passthrough: /api/try?format=h264 plans passthrough
#   loopback.h264_try_mjpeg_refused: MJPEG from it: 400, "only H.264"
#   loopback.h264_snapshot_refused: /snapshot is not served (no decoder)
#   loopback.h264_annexb_identical: /stream.h264 (X-Steps: passthrough):
#       every NAL unit byte for byte a fed one, starting at SPS, every IDR
#       with SPS+PPS before it (inserted where the camera left them out)
#   loopback.h264_annexb_decodes / h264_mp4_decodes: ffmpeg, 0 errors
#   loopback.h264_mp4_identical: /stream.mp4's samples (to Annex-B) are fed
#       NAL units byte for byte
#   loopback.h264_join_mid_stream: a second client joining later starts at
#       an IDR with SPS/PPS and decodes with 0 errors
#   loopback.h264_join_kept_gop_annexb1/2, _mp4: clients joining mid-GOP
#       (the camera's GOP is 1 s) get their first body byte within a
#       quarter of it (the kept GOP from its IDR, then live; the time is
#       printed), start at SPS/PPS/IDR, NAL units byte for byte the
#       camera's, 0 decode errors
# (LOOPBACK_ONLY=h264: only these, one short boot.)
# After the boot, on the host: loopback.nodht_chromium: that repaired snapshot
#       shows in headless Chromium at 640x480
# Prints "name: OK|FAIL why|SKIP why" lines. Usage: sh tests/vm/boot_loopback.sh
# (LOOPBACK_NO_DAEMON=1: only the camera-side checks, ~30 s).
cd "$(dirname "$0")/../.." || exit 2
B=${VCAP_BUILD:-build}
# the H.264 camera's GOP in frames (15 fps; host and guest)
H264_GOP=15
FEED=$B/tools/mjpeg_feed

if [ "${1:-}" = "--guest" ]; then
	work=$2
	dev=/dev/video20
	# check NAME: run the rest, expect a "grab:" line, compare fields
	grab() { # name, feeder args..., -- grab args
		name=$1; shift
		$FEED -i "$work/in.mjpeg" -d $dev -r 15 -n 400 "$@" >"$work/$name.feed" 2>&1 &
		fpid=$!
		sleep 2
		# shellcheck disable=SC2086 # GRAB_ARGS: options, split on purpose
		$FEED -i "$work/in.mjpeg" --grab $dev -n 30 $GRAB_ARGS >"$work/$name.grab" 2>&1
		kill $fpid 2>/dev/null; wait $fpid 2>/dev/null
		cat "$work/$name.grab"
	}
	field() { sed -n "s/.* \([0-9]*\) $1.*/\1/p" "$2" | head -1; }

	# The H.264 camera: the loopback fed by ffmpeg -c:v copy, the daemon
	# passing its stream through.
	h264_checks() {
		[ -s "$work/cam.h264" ] || return 0 # no libx264 on the host: said there
		dev=/dev/video21
		VCAPD=${VCAPD:-$B/vcapd}
		U=http://127.0.0.1:18301
		NALS="python3 tests/tools/h264_nals.py"
		# (not looped: ffmpeg's seek back to the start fails on a raw stream)
		ffmpeg -nostdin -v error -re -framerate 15 -i "$work/cam.h264" \
			-c:v copy -f v4l2 $dev 2>"$work/h264feed.err" &
		hf=$!
		for i in $(seq 60); do
			v4l2-ctl -d $dev --list-formats 2>/dev/null | grep -q H264 && break
			sleep 0.5
		done
		"$VCAPD" --device $dev --listen 127.0.0.1:18301 >"$work/vcapd_h264.log" 2>&1 &
		hv=$!
		up=0
		for i in $(seq 100); do
			curl -s -o /dev/null --max-time 2 "$U/api/status" && { up=1; break; }
			kill -0 $hv 2>/dev/null || break
			sleep 0.2
		done
		if [ $up = 0 ]; then
			echo "loopback.h264_daemon_start: FAIL $(tail -5 "$work/vcapd_h264.log") $(cat "$work/h264feed.err")"
			kill $hv $hf 2>/dev/null; wait $hv $hf 2>/dev/null
			return
		fi
		curl -s --max-time 10 "$U/api/cams" >"$work/h264cams.json"
		grep -q '"H264"' "$work/h264cams.json" && echo "loopback.h264_mode_listed: OK" ||
			echo "loopback.h264_mode_listed: FAIL $(head -c 600 "$work/h264cams.json")"
		r=$(curl -s --max-time 10 "$U/api/try?format=h264")
		case $r in *'"steps":"passthrough"'*) echo "loopback.h264_try_passthrough: OK" ;;
		*) echo "loopback.h264_try_passthrough: FAIL $r" ;; esac
		r=$(curl -s --max-time 10 -w ' %{http_code}' "$U/api/try?format=mjpeg")
		case $r in *"only H.264"*" 400") echo "loopback.h264_try_mjpeg_refused: OK" ;;
		*) echo "loopback.h264_try_mjpeg_refused: FAIL $r" ;; esac
		code=$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' "$U/snapshot")
		[ "$code" != 200 ] && echo "loopback.h264_snapshot_refused: OK" ||
			echo "loopback.h264_snapshot_refused: FAIL HTTP $code"
		# one client from the start, a second one joining 3 s later
		# (all fetched while the 60 s feed runs; checked after: ffmpeg is
		# slow under TCG)
		timeout 10 curl -s -D "$work/h264.hdr" -o "$work/served.h264" "$U/stream.h264" &
		c1=$!
		timeout 10 curl -s -o "$work/served.mp4" "$U/stream.mp4" &
		c2=$!
		sleep 3
		# three more joining mid-GOP at uneven offsets once the output
		# keeps a GOP (an IDR came since it started: /api/status memory
		# "gop"), timed (first body byte after the request); one more
		# client holds the output meanwhile
		timeout 60 curl -s -o /dev/null "$U/stream.h264" &
		hold=$!
		python3 tests/tools/http_join.py 18301 4 --wait-gop 0.3 /stream.h264 "$work/j1.h264" \
			1.1 /stream.h264 "$work/j2.h264" 1.7 /stream.mp4 "$work/j3.mp4" >"$work/joins.t" &
		jn=$!
		timeout 5 curl -s -o "$work/joined.h264" "$U/stream.h264"
		wait $c1 $c2 $jn
		kill $hold 2>/dev/null
		# the clients' timeouts cut the streams mid-picture: checked and
		# decoded up to their last whole picture / MP4 fragment
		$NALS trim "$work/served.h264" "$work/served_t.h264"
		$NALS trim "$work/joined.h264" "$work/joined_t.h264"
		r=$($NALS check "$work/cam.h264" "$work/served_t.h264")
		set -- $r
		if grep -qi '^X-Steps: passthrough' "$work/h264.hdr" && [ "${10}" = 0 ] &&
			[ "$4" -ge 30 ] && [ "$6" -ge 2 ] && [ "$8" = "$6" ] && [ "${12}" = 1 ]; then
			echo "loopback.h264_annexb_identical: OK $r"
		else
			echo "loopback.h264_annexb_identical: FAIL $r; $(grep -i '^X-Steps' "$work/h264.hdr"); log: $(tail -8 "$work/vcapd_h264.log"); cams: $(head -c 800 "$work/h264cams.json")"
		fi
		ffmpeg -nostdin -v error -i "$work/served_t.h264" -f null - >"$work/h264dec.err" 2>&1
		n=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames \
			-of csv=p=0 "$work/served_t.h264" 2>/dev/null)
		[ ! -s "$work/h264dec.err" ] && [ "${n:-0}" -ge 30 ] &&
			echo "loopback.h264_annexb_decodes: OK $n frames" ||
			echo "loopback.h264_annexb_decodes: FAIL $n frames: $(head -c 400 "$work/h264dec.err")"
		r=$($NALS check "$work/cam.h264" "$work/joined_t.h264")
		set -- $r
		ffmpeg -nostdin -v error -i "$work/joined_t.h264" -f null - >"$work/h264join.err" 2>&1
		if [ "${10}" = 0 ] && [ "$4" -ge 10 ] && [ "$8" = "$6" ] && [ "${12}" = 1 ] &&
			[ ! -s "$work/h264join.err" ]; then
			echo "loopback.h264_join_mid_stream: OK $r"
		else
			echo "loopback.h264_join_mid_stream: FAIL $r $(head -c 300 "$work/h264join.err")"
		fi
		# kept GOP: without it a joiner waits for the camera's next IDR,
		# 0-1 s (uniform: all three under 250 ms by chance 1 in 64); with
		# it, at once
		gop_ms=$((H264_GOP * 1000 / 15))
		for j in j1 j2 j3; do
			ttfb=$(grep "/$j\.[hm]" "$work/joins.t" | awk '{print $3}')
			if [ $j = j3 ]; then
				name=h264_join_kept_gop_mp4
				$NALS mp4trim "$work/j3.mp4" "$work/j3_t.mp4"
				n=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries \
					stream=nb_read_frames -of csv=p=0 "$work/j3_t.mp4" 2>"$work/$j.err")
				ffmpeg -nostdin -v error -i "$work/j3_t.mp4" -c:v copy -bsf:v h264_mp4toannexb \
					-f h264 "$work/${j}_t.h264" 2>/dev/null
			else
				name=h264_join_kept_gop_annexb${j#j}
				$NALS trim "$work/$j.h264" "$work/${j}_t.h264"
				ffmpeg -nostdin -v error -i "$work/${j}_t.h264" -f null - >"$work/$j.err" 2>&1
				n=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries \
					stream=nb_read_frames -of csv=p=0 "$work/${j}_t.h264" 2>/dev/null)
			fi
			first=$(ffprobe -v error -show_frames -read_intervals '%+#1' -show_entries \
				frame=key_frame,pict_type -of csv=p=0 "$work/${j}_t.h264" 2>&1 | head -1)
			r=$($NALS check "$work/cam.h264" "$work/${j}_t.h264")
			set -- $r
			msg="first byte after ${ttfb:-?} ms (camera GOP $gop_ms ms; kept GOP $(awk '/^gop_bytes/ {print $2}' "$work/joins.t") bytes when they began), $n frames, first '$first'; $r"
			if [ "${ttfb:--1}" -ge 0 ] && [ "$ttfb" -lt $((gop_ms / 4)) ] && [ "${10}" = 0 ] &&
				[ "${12}" = 1 ] && [ "$8" = "$6" ] && [ "${n:-0}" -ge 10 ] &&
				[ "$first" = "1,I" ] && [ ! -s "$work/$j.err" ]; then
				echo "loopback.$name: OK $msg"
			else
				echo "loopback.$name: FAIL $msg $(head -c 300 "$work/$j.err")"
			fi
		done
		$NALS mp4trim "$work/served.mp4" "$work/served_t.mp4"
		# decoded by ffprobe (-count_frames decodes every frame; its errors
		# go to stderr): ffmpeg -f null also re-muxes, and its null muxer
		# rejects two capture times within one of its ticks (v4l2loopback
		# under TCG hands frames over in bursts), which is no decode error
		n=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames \
			-of csv=p=0 "$work/served_t.mp4" 2>"$work/mp4dec.err")
		[ ! -s "$work/mp4dec.err" ] && [ "${n:-0}" -ge 20 ] &&
			echo "loopback.h264_mp4_decodes: OK $n frames" ||
			echo "loopback.h264_mp4_decodes: FAIL $n frames: $(head -c 400 "$work/mp4dec.err")"
		ffmpeg -nostdin -v error -i "$work/served_t.mp4" -c:v copy -bsf:v h264_mp4toannexb \
			-f h264 "$work/mp4.h264" 2>/dev/null
		r=$($NALS check "$work/cam.h264" "$work/mp4.h264")
		set -- $r
		[ "${10}" = 0 ] && [ "$4" -ge 20 ] && echo "loopback.h264_mp4_identical: OK $r" ||
			echo "loopback.h264_mp4_identical: FAIL $r"
		kill $hv $hf 2>/dev/null
		wait $hv $hf 2>/dev/null
	}
	if [ "${LOOPBACK_ONLY:-}" = h264 ]; then
		h264_checks
		exit 0
	fi

	# A copy the producer may have overtaken (the reader a whole ring
	# behind: v4l2loopback hands out the buffer it writes next) and a buffer
	# not filled since the reader's REQBUFS (which reset its length) are
	# counted apart, as the daemon drops them; a few are allowed.
	GRAB_ARGS= grab passthrough
	g=$work/passthrough.grab
	o1=$(field overtaken "$g") o2=$(field stale "$g")
	ot=$((${o1:-99} + ${o2:-99}))
	if [ "$(field frames "$g")" = 30 ] && [ "${ot:-99}" -le 3 ] &&
		[ "$(field matched "$g")" = $((30 - ot)) ]; then
		echo "loopback.passthrough: OK"
	else
		echo "loopback.passthrough: FAIL $(cat "$g")"
	fi

	GRAB_ARGS=--strip-dht grab nodht --strip-dht
	g=$work/nodht.grab
	o1=$(field overtaken "$g") o2=$(field stale "$g")
	ot=$((${o1:-99} + ${o2:-99}))
	if [ "${ot:-99}" -le 3 ] && [ "$(field matched "$g")" = $((30 - ot)) ] &&
		[ "$(field without "$g")" = $((30 - ot)) ]; then
		echo "loopback.nodht: OK"
	else
		echo "loopback.nodht: FAIL $(cat "$g")"
	fi

	GRAB_ARGS= grab faults --corrupt 3 --truncate 5 --empty 7
	g=$work/faults.grab
	# Of every 105 fed frames 35+21+15-7-5-3+1 = 57 are bad; in 30 grabbed
	# at least some of each kind must be rejected and the rest must match.
	inv=$(field invalid "$g"); val=$(field valid "$g"); mat=$(field matched "$g")
	if [ "${inv:-0}" -ge 6 ] && [ "${val:-0}" -ge 6 ] && [ "$mat" = "$val" ]; then
		echo "loopback.faults: OK"
	else
		echo "loopback.faults: FAIL $(cat "$g")"
	fi

	# The check that keeps torn copies out: a reader that waits 1 s between
	# DQBUF and the copy (the producer rewrites the ring 3 times meanwhile)
	# must see every copy flagged as overtaken.
	GRAB_ARGS="--lag 1000 -n 5" grab lagging
	g=$work/lagging.grab
	# (the first buffer after REQBUFS is stale instead: see below)
	o1=$(field overtaken "$g") o2=$(field stale "$g")
	if [ "$(field frames "$g")" = 5 ] && [ "${o1:-0}" -ge 4 ] && [ $((${o1:-0} + ${o2:-0})) = 5 ]; then
		echo "loopback.overtaken_detected: OK"
	else
		echo "loopback.overtaken_detected: FAIL $(cat "$g")"
	fi

	# A reader's REQBUFS resets every buffer's length to the whole buffer
	# but keeps the bytes: with a producer at one frame per 5 s, the first
	# buffer a new reader gets is such a record (truncated frames fed
	# before became "valid" JPEGs of mixed pictures this way). Flagged stale.
	GRAB_ARGS="-n 1" grab slow -r 0.2 --truncate 1
	g=$work/slow.grab
	if [ "$(field frames "$g")" = 1 ] && [ "$(field stale "$g")" = 1 ]; then
		echo "loopback.stale_detected: OK"
	else
		echo "loopback.stale_detected: FAIL $(cat "$g")"
	fi

	# ---- the daemon, one instance per feed
	VCAPD=${VCAPD:-$B/vcapd}
	U=http://127.0.0.1:18300
	start() { # feeder args...
		$FEED -i "$work/in.mjpeg" -d $dev -r 15 -n "${FEED_N:-100000}" "$@" >"$work/feed.log" 2>&1 &
		fpid=$!
		sleep 2
		# shellcheck disable=SC2086 # EXTRA: more --device options
		"$VCAPD" ${EXTRA:-} --device $dev --listen 127.0.0.1:18300 >"$work/vcapd.log" 2>&1 &
		vpid=$!
		for i in $(seq 100); do
			curl -s -o /dev/null --max-time 2 "$U/api/status" && return 0
			kill -0 $vpid 2>/dev/null || break
			sleep 0.2
		done
		echo "vcapd did not come up: $(tail -5 "$work/vcapd.log")"
		return 1
	}
	stop() {
		kill $vpid $fpid 2>/dev/null
		wait $vpid $fpid 2>/dev/null
	}
	m() { $FEED -i "$work/in.mjpeg" --match "$@"; }
	[ -n "${LOOPBACK_NO_DAEMON:-}" ] && exit 0
	if [ ! -x "$VCAPD" ]; then
		echo "loopback.daemon: SKIP $VCAPD not built"
		exit 0
	fi

	if start; then
		curl -s --max-time 20 -o "$work/snap.jpg" "$U/snapshot"
		r=$(m "$work/snap.jpg")
		case $r in "match: 1 of 1 "*) echo "loopback.daemon_snapshot_passthrough: OK" ;;
		*) echo "loopback.daemon_snapshot_passthrough: FAIL $r" ;; esac
		timeout 10 curl -s -o "$work/stream.bin" "$U/stream"
		r=$(m "$work/stream.bin")
		n=$(echo "$r" | sed -n 's/match: \([0-9]*\) of \([0-9]*\) .*/\2/p')
		if m "$work/stream.bin" >/dev/null && [ "${n:-0}" -ge 10 ]; then
			echo "loopback.daemon_stream_passthrough: OK"
		else
			echo "loopback.daemon_stream_passthrough: FAIL $r in 10 s (fed at 15 fps); cam: $(curl -s --max-time 5 "$U/api/cams" | head -c 400)"
		fi
		# v4l2loopback rewrites buffers the daemon holds: it must copy each
		# frame out at dequeue instead of lending the driver's buffer
		if grep -q 'frames are copied' "$work/vcapd.log"; then
			echo "loopback.daemon_copies_out: OK"
		else
			echo "loopback.daemon_copies_out: FAIL no copy-out line in the log: $(head -c 600 "$work/vcapd.log")"
		fi
		# quality= re-encodes the camera's JPEG: decodes, at the asked size,
		# smaller than the camera's own frame
		curl -s --max-time 20 -D "$work/q.h" -o "$work/q20.jpg" "$U/snapshot?quality=20"
		r=$($FEED -i "$work/q20.jpg" --info 2>&1); qs=$(wc -c <"$work/q20.jpg")
		fs=$(wc -c <"$work/snap.jpg")
		case $r in "1 frames 640x480 "*)
			if [ "$qs" -lt "$fs" ] && grep -qi '^X-Steps: decode+encode' "$work/q.h"; then
				echo "loopback.daemon_quality_reencodes: OK"
			else
				echo "loopback.daemon_quality_reencodes: FAIL quality=20 $qs bytes vs the camera's $fs; $(grep -i '^X-Steps' "$work/q.h")"
			fi ;;
		*) echo "loopback.daemon_quality_reencodes: FAIL $r" ;; esac
		curl -s --max-time 20 -o "$work/raw" "$U/raw?format=YUYV"
		n=$(wc -c <"$work/raw")
		[ "$n" = 614400 ] && echo "loopback.daemon_raw_from_mjpeg: OK" ||
			echo "loopback.daemon_raw_from_mjpeg: FAIL /raw?format=YUYV gave $n bytes, want 614400"
		curl -s --max-time 20 -o "$work/small.jpg" "$U/snapshot?size=320x240"
		r=$($FEED -i "$work/small.jpg" --info 2>&1)
		case $r in "1 frames 320x240 "*) echo "loopback.daemon_scaled_from_mjpeg: OK" ;;
		*) echo "loopback.daemon_scaled_from_mjpeg: FAIL $r" ;; esac
		curl -s --max-time 20 -o "$work/rot.jpg" "$U/snapshot?rotate=90"
		r=$(m "$work/rot.jpg" --rotate 90 --flip 0)
		case $r in "match: 1 of 1 "*) echo "loopback.daemon_rotate_lossless: OK" ;;
		*) echo "loopback.daemon_rotate_lossless: FAIL $r ($($FEED -i "$work/rot.jpg" --info 2>&1))" ;; esac
		stop
	else
		echo "loopback.daemon_start: FAIL"
	fi

	# Two cameras in one daemon: vivid's YUYV webcam (/dev/video0, cam 0)
	# and the MJPEG loopback (cam 1), both streamed at the same time.
	if EXTRA="--device /dev/video0" start; then
		timeout 8 curl -s -o "$work/two0.bin" "$U/stream?cam=0" &
		c0=$!
		timeout 8 curl -s -o "$work/two1.bin" "$U/stream?cam=1"
		wait $c0
		p0=$(grep -ac '^Content-Type: image/jpeg' "$work/two0.bin")
		r1=$(m "$work/two1.bin")
		curl -s --max-time 20 -o "$work/two0.jpg" "$U/snapshot?cam=0"
		i0=$($FEED -i "$work/two0.jpg" --info 2>&1)
		if [ "${p0:-0}" -ge 3 ] && m "$work/two1.bin" >/dev/null && [ "${i0#1 frames }" != "$i0" ]; then
			echo "loopback.daemon_two_cameras: OK"
		else
			echo "loopback.daemon_two_cameras: FAIL cam 0 (vivid YUYV): $p0 parts, snapshot '$i0'; cam 1 (MJPEG): $r1"
		fi
		stop
	else
		echo "loopback.daemon_start_two: FAIL"
	fi

	if start --strip-dht; then
		curl -s --max-time 20 -o "$work/nodht.jpg" "$U/snapshot"
		r=$(m "$work/nodht.jpg" --strip-dht --add-dht)
		if [ "${r#match: 1 of 1 }" != "$r" ] && ffmpeg -nostdin -v error -i "$work/nodht.jpg" -f null - 2>"$work/e" &&
			[ ! -s "$work/e" ]; then
			echo "loopback.daemon_nodht_repaired: OK"
		else
			echo "loopback.daemon_nodht_repaired: FAIL $r $(head -c 200 "$work/e" 2>/dev/null)"
		fi
		# the stream too: the tables go out as a separate piece (no copy),
		# every part byte for byte the camera frame with them inserted
		timeout 4 curl -s -o "$work/nodht.bin" "$U/stream"
		np=$(grep -ac '^Content-Type: image/jpeg' "$work/nodht.bin")
		r=$(m "$work/nodht.bin" --strip-dht --add-dht)
		if [ "${np:-0}" -ge 3 ] && m "$work/nodht.bin" --strip-dht --add-dht >/dev/null; then
			echo "loopback.daemon_nodht_stream: OK"
		else
			echo "loopback.daemon_nodht_stream: FAIL $np parts: $r"
		fi
		stop
	else
		echo "loopback.daemon_start_nodht: FAIL"
	fi

	# A producer that stalls after 5 frames, the 5th truncated: it went into
	# the buffer of the 1st (ring of 4), so that buffer holds half of frame
	# 5 and the rest of frame 1. The daemon's REQBUFS resets the buffer's
	# length to the whole buffer; served as is, it parses as a JPEG that is
	# no camera frame. It must be dropped: no snapshot (503), error counted.
	if FEED_N=5 start --truncate 5 --hold; then
		code=$(curl -s --max-time 20 -o "$work/stale.jpg" -w '%{http_code}' "$U/snapshot")
		e=$(curl -s --max-time 10 "$U/api/cams" | sed -n 's/.*"errors":\([0-9]*\).*/\1/p')
		if [ "$code" != 200 ] && [ "${e:-0}" -ge 1 ]; then
			echo "loopback.daemon_stale_dropped: OK"
		else
			echo "loopback.daemon_stale_dropped: FAIL HTTP $code, errors ${e:-?}: $(m "$work/stale.jpg" 2>&1)"
		fi
		stop
	else
		echo "loopback.daemon_start_stale: FAIL"
	fi

	if start --corrupt 3 --truncate 5 --empty 7; then
		e0=$(curl -s --max-time 10 "$U/api/cams" | sed -n 's/.*"errors":\([0-9]*\).*/\1/p')
		timeout 8 curl -s -o "$work/faults.bin" "$U/stream"
		if r=$(m "$work/faults.bin" 2>&1); then
			echo "loopback.daemon_faults_dropped: OK"
		else
			echo "loopback.daemon_faults_dropped: FAIL $r"
		fi
		e1=$(curl -s --max-time 10 "$U/api/cams" | sed -n 's/.*"errors":\([0-9]*\).*/\1/p')
		[ "${e1:-0}" -gt "${e0:-0}" ] && echo "loopback.daemon_faults_counted: OK" ||
			echo "loopback.daemon_faults_counted: FAIL /api/cams errors ${e0:-?} -> ${e1:-?}"
		stop
	else
		echo "loopback.daemon_start_faults: FAIL"
	fi
	h264_checks
	exit 0
fi

if [ ! -x "$FEED" ]; then
	echo "loopback: SKIP $FEED not built (make all)"
	exit 0
fi
if ! command -v ffmpeg >/dev/null; then
	echo "loopback: SKIP ffmpeg missing"
	exit 0
fi
work=$(mktemp -d "$PWD/build/vm-loopback.XXXXXX") || exit 2
[ -n "${LOOPBACK_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT INT TERM
ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=640x480:rate=15 -frames:v 45 \
	-c:v mjpeg -huffman default -q:v 5 -f mjpeg "$work/in.mjpeg" || { echo "loopback: FAIL ffmpeg"; exit 1; }

# The H.264 camera's stream: libx264, a GOP of 15 (one IDR a second at
# 15 fps), SPS/PPS only before every 4th IDR, 60 s long
if ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=640x480:rate=15 -frames:v 900 \
	-c:v libx264 -preset ultrafast -tune zerolatency -crf 30 -g $H264_GOP -bf 0 -pix_fmt yuv420p \
	-f h264 "$work/x264.h264" 2>"$work/x264.err"; then
	python3 tests/tools/h264_nals.py strip-ps "$work/x264.h264" "$work/cam.h264"
else
	echo "loopback.h264: SKIP no libx264 in ffmpeg: $(head -c 200 "$work/x264.err")"
fi

# A frame without DHT, repaired with vc_jpeg_add_dht, decodes in an
# independent decoder (ffmpeg) to exactly the original's pixels.
$FEED -i "$work/in.mjpeg" --extract 7 "$work/orig.jpg" &&
	$FEED -i "$work/in.mjpeg" --extract 7 "$work/fixed.jpg" --strip-dht --add-dht &&
	a=$(ffmpeg -nostdin -v error -i "$work/orig.jpg" -f framemd5 - | tail -1 | awk '{print $NF}') &&
	b=$(ffmpeg -nostdin -v error -i "$work/fixed.jpg" -f framemd5 - | tail -1 | awk '{print $NF}')
if [ -n "$a" ] && [ "$a" = "$b" ] && ! cmp -s "$work/orig.jpg" "$work/fixed.jpg"; then
	echo "loopback.nodht_repaired_decodes: OK"
else
	echo "loopback.nodht_repaired_decodes: FAIL md5 '$a' vs '$b'"
fi

# two loopback devices: /dev/video21 for the H.264 camera (a device a
# producer has left refuses another producer's G_FMT: not reused)
../shared/vm/vivid-vm \
	--loopback="devices=2 video_nr=20,21 card_label=vivid-vm-loopback,vivid-vm-h264 exclusive_caps=1,1 max_buffers=4" \
	--timeout 600 -- sh "$0" --guest "$work"
rc=$?
[ $rc = 0 ] || echo "loopback.vm: FAIL vivid-vm exit $rc"

# The snapshot the daemon served from DHT-less camera frames (repaired) shows
# in Chromium at its size (issue 6: "valid JPEGs that Chromium and ffmpeg
# decode"). Host side, after the boot: the guest has no browser.
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
if [ -n "${LOOPBACK_ONLY:-}" ]; then
	: # only the H.264 checks ran
elif [ -z "$CHROME" ]; then
	echo "loopback.nodht_chromium: SKIP no chromium installed"
elif [ ! -s "$work/nodht.jpg" ]; then
	echo "loopback.nodht_chromium: FAIL no repaired snapshot saved by the guest"
else
	cat >"$work/nodht.html" <<'EOH'
<!doctype html><html><body><pre id="r">pending</pre>
<img id="i" src="nodht.jpg" onload="document.getElementById('r').textContent = 'size ' + this.naturalWidth + 'x' + this.naturalHeight" onerror="document.getElementById('r').textContent = 'error'">
</body></html>
EOH
	r=$(timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --user-data-dir="$work/prof" \
		--allow-file-access-from-files --virtual-time-budget=5000 --dump-dom "file://$work/nodht.html" 2>/dev/null |
		sed -n 's/.*<pre id="r">\([^<]*\)<.*/\1/p')
	if [ "$r" = "size 640x480" ]; then
		echo "loopback.nodht_chromium: OK"
	else
		echo "loopback.nodht_chromium: FAIL chromium says '$r'"
	fi
fi
