#!/bin/sh
# Benchmark (not a test; issue 6): vcapd CPU per served frame for an MJPEG
# webcam (v4l2loopback fed by tests/tools/mjpeg_feed: passthrough) beside a
# YUYV webcam (vivid: YUYV -> MJPEG encode), 640x480 and 1280x720, with 1 and
# 20 /stream clients, in one vivid-vm --loopback boot. Under TCG (no KVM here) absolute
# CPU times are emulated and inflated; compare the ratio.
# Usage: sh tests/vm/bench_mjpeg.sh [seconds per cell, default 10]
cd "$(dirname "$0")/../.." || exit 2
B=${VCAP_BUILD:-build}
FEED=$B/tools/mjpeg_feed
VCAPD=${VCAPD:-$B/vcapd}
SECS=${1:-10}

if [ "${1:-}" = "--guest" ]; then
	work=$2 SECS=$3
	U=http://127.0.0.1:18310
	cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; } # utime + stime, clock ticks
	frames() { curl -s --max-time 5 "$U/api/cams" | sed -n 's/.*"frames":\([0-9]*\).*/\1/p'; }
	cell() { # label, clients, device args...
		label=$1 n=$2; shift 2
		"$VCAPD" --listen 127.0.0.1:18310 "$@" >"$work/vcapd.log" 2>&1 &
		vpid=$!
		for i in $(seq 100); do curl -s -o /dev/null --max-time 2 "$U/api/status" && break; sleep 0.2; done
		pids=""
		for i in $(seq "$n"); do
			curl -s -o /dev/null --max-time $((SECS + 4)) "$U/stream" &
			pids="$pids $!"
		done
		sleep 3 # warm up: streaming started, clients connected
		c0=$(cpu $vpid); f0=$(frames)
		sleep "$SECS"
		c1=$(cpu $vpid); f1=$(frames)
		kill $pids $vpid 2>/dev/null
		wait $pids $vpid 2>/dev/null
		hz=$(getconf CLK_TCK)
		awk -v l="$label" -v n="$n" -v c=$((c1 - c0)) -v f=$((f1 - f0)) -v hz="$hz" -v s="$SECS" \
			'BEGIN { if (f < 1) f = 1; printf "  %-30s %2d clients %6.1f fps %8.2f ms CPU/frame %5.1f %% CPU\n", l, n, f / s, 1000 * c / hz / f, 100 * c / hz / s }' |
			tee -a "$work/cells"
	}
	echo "vcapd CPU per captured frame, $SECS s per cell (TCG: emulated CPU):"
	for size in 640x480 1280x720; do
		w=${size%x*} h=${size#*x}
		$FEED -i "$work/in-$size.mjpeg" -d /dev/video20 -r 15 -n 100000 >/dev/null 2>&1 &
		fpid=$!
		sleep 2
		v4l2-ctl -d /dev/video0 -v width=$w,height=$h,pixelformat=YUYV -p 15 >/dev/null 2>&1
		for n in 1 20; do
			cell "$size MJPEG passthrough (loopback)" $n --device /dev/video20
			cell "$size YUYV -> MJPEG (vivid)" $n --device "/dev/video0"
		done
		kill $fpid 2>/dev/null
		wait $fpid 2>/dev/null
	done
	# ratio: encode CPU per frame / passthrough CPU per frame, per size and client count
	awk '{ ms[NR] = $(NF - 5); l[NR] = $1 ", " $(NF - 9) } END { for (i = 1; i + 1 <= NR; i += 2)
		printf "  ratio YUYV->MJPEG / passthrough, %s clients: %.1fx\n", l[i], ms[i + 1] / ms[i] }' "$work/cells"
	exit 0
fi
[ -x "$FEED" ] && [ -x "$VCAPD" ] || { echo "bench_mjpeg: build first (make all)"; exit 2; }
work=$(mktemp -d "$PWD/build/vm-bench.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT INT TERM
for size in 640x480 1280x720; do
	ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=$size:rate=15 -frames:v 45 \
		-c:v mjpeg -huffman default -q:v 5 -f mjpeg "$work/in-$size.mjpeg" || exit 2
done
../shared/vm/vivid-vm --loopback --timeout 600 -- sh "$0" --guest "$work" "$SECS"
