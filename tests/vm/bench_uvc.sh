#!/bin/sh
# Benchmark (not a test; issue 25): vcapd on the kernel's uvcvideo driver, in
# one vivid-vm --uvc boot (uvcdev as a C920: MJPEG at 30 fps, YUYV 720p at
# 10), beside vivid's YUYV webcam in the same boot. Per cell, 1 and 10
# /stream clients, the camera's mode set to 1280x720 by its flags:
#   MJPEG passthrough (uvc)   the camera's own JPEGs, the DHT inserted
#   YUYV -> MJPEG (uvc)       the camera held in YUYV (--format YUYV)
#   YUYV -> MJPEG (vivid)     the same path on vivid, for the ratio
# CPU per captured frame (vcapd's utime + stime over the camera's frames)
# and the latency from the capture time (X-Timestamp: uvcvideo's buffer
# time, the first payload's arrival) to the part's arrival at one client
# (tools/day_watch, p50 and p99). Under TCG (no KVM here) absolute figures
# are emulated and inflated: read the ratios it prints against vivid in the
# same boot. Usage: sh tests/vm/bench_uvc.sh [seconds per cell, default 8]
cd "$(dirname "$0")/../.." || exit 2
B=${VCAP_BUILD:-build}
VCAPD=${VCAPD:-$B/vcapd}
WATCH=$B/tools/day_watch
SECS=${1:-8}
PORT=18320

if [ "${1:-}" = "--guest" ]; then
	work=$2 SECS=$3
	U=http://127.0.0.1:$PORT
	cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; } # utime + stime, clock ticks
	frames() { curl -s --max-time 5 "$U/api/status" | sed -n 's/.*"stats":{"frames":\([0-9]*\).*/\1/p' | head -1; }
	# cell LABEL CLIENTS DEVICE-ARGS...
	cell() {
		key=$1 label=$2 n=$3; shift 3
		"$VCAPD" --listen 127.0.0.1:$PORT "$@" >"$work/vcapd.log" 2>&1 &
		vpid=$!
		for i in $(seq 150); do curl -s -o /dev/null --max-time 2 "$U/api/status" && break; sleep 0.2; done
		pids=""
		for i in $(seq $((n - 1))); do
			curl -s -o /dev/null --max-time $((SECS + 30)) "$U/stream" &
			pids="$pids $!"
		done
		"$WATCH" stream $PORT /stream $((SECS + 30)) >"$work/parts" 2>/dev/null &
		wpid=$!
		# warm up: streaming, every client served (a curl start takes
		# seconds under TCG)
		for i in $(seq 150); do
			c=$(curl -s --max-time 5 "$U/api/status" | grep -o '"peer"' | wc -l)
			[ "$c" -ge "$n" ] && [ -s "$work/parts" ] && break
			sleep 0.2
		done
		sleep 2
		t0=$(awk '{ print $1 }' /proc/uptime); c0=$(cpu $vpid); f0=$(frames)
		sleep "$SECS"
		t1=$(awk '{ print $1 }' /proc/uptime); c1=$(cpu $vpid); f1=$(frames)
		mode=$(curl -s --max-time 5 "$U/api/status" | sed -n 's/.*"mode":{"fourcc":"\([^"]*\)".*"width":\([0-9]*\),"height":\([0-9]*\).*/\1 \2x\3/p' | head -1)
		kill $pids $wpid $vpid 2>/dev/null
		wait $pids $wpid $vpid 2>/dev/null
		hz=$(getconf CLK_TCK)
		# latency of every live part the watching client got: its
		# arrival (wall clock) - its X-Timestamp (capture time, wall clock)
		lat=$(awk '$4 == 0 && $2 != "-" { print ($1 - $2) * 1000 }' "$work/parts" | sort -n |
			awk '{ v[NR] = $1 } END { k = int(NR * 0.99); if (k < 1) k = 1
				if (NR) printf "%.0f %.0f %d", v[int((NR + 1) / 2)], v[k], NR; else print "- - 0" }')
		set -- $lat
		row=$(awk -v c=$((c1 - c0)) -v f=$((f1 - f0)) -v hz="$hz" -v s="$(echo "$t0 $t1" | awk '{ print $2 - $1 }')" \
			'BEGIN { if (f < 1) f = 1; printf "%.1f %.2f %.1f", f / s, 1000 * c / hz / f, 100 * c / hz / s }')
		set -- $row $lat
		echo "$key $n $2 $4" >>"$work/rows" # cell, clients, ms CPU/frame, latency p50
		printf "  %-26s %2d clients %5s fps %7s ms CPU/frame %5s %% CPU  latency p50 %s p99 %s ms (%s parts)  [%s]\n" \
			"$label" "$n" "$1" "$2" "$3" "$4" "$5" "$6" "$mode"
	}
	echo "vcapd on uvcvideo against vivid, $SECS s per cell, 1280x720 (TCG: emulated CPU):"
	for n in 1 10; do
		cell pass "MJPEG passthrough (uvc)" $n --device "$UVC_DEV" --format MJPEG --resolution 1280x720
	done
	# the same camera offering YUYV alone (uvcdev again, as a webcam
	# without MJPEG): vcapd would rightly pick MJPEG when it is there
	. tests/vm/uvc_swap.sh
	uvc_unplug
	"$UVC_BIN" --yuyv 1280x720@10 --product "YUYV Cam" >"$work/uvcdev2.log" 2>&1 &
	up=$!
	node=$(uvc_node)
	for n in 1 10; do
		cell enc "YUYV -> MJPEG (uvc)" $n --device "$node"
		cell viv "YUYV -> MJPEG (vivid)" $n --device /dev/video0 --format YUYV --resolution 1280x720
	done
	kill $up 2>/dev/null
	# ratios per client count: CPU per frame and latency p50 of the uvc
	# cells against vivid's encode (the same path on a driver without
	# USB), and uvc's encode against its passthrough
	awk '{ ms[$1 " " $2] = $3; p[$1 " " $2] = $4 } END {
		split("1 10", ns, " ")
		for (i = 1; i <= 2; i++) { n = ns[i]
			printf "  %d clients: CPU/frame  uvc passthrough / vivid encode %.2fx, uvc encode / vivid encode %.2fx, uvc encode / uvc passthrough %.1fx\n",
				n, ms["pass " n] / ms["viv " n], ms["enc " n] / ms["viv " n], ms["enc " n] / ms["pass " n]
			if (p["viv " n] + 0 > 0) printf "  %d clients: latency p50 uvc passthrough / vivid encode %.2fx, uvc encode / vivid encode %.2fx\n",
				n, p["pass " n] / p["viv " n], p["enc " n] / p["viv " n]
		} }' "$work/rows"
	exit 0
fi
[ -x "$WATCH" ] && [ -x "$VCAPD" ] || { echo "bench_uvc: build first (make all)"; exit 2; }
work=$(mktemp -d "$PWD/build/vm-bench-uvc.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT INT TERM
../shared/vm/vivid-vm --uvc --timeout 600 -- sh "$0" --guest "$work" "$SECS"
