#!/bin/sh
# V4L2 source checks against the vivid driver (issue 3), in ONE vivid-vm boot
# with three vivid instances, each a capture node only:
#   /dev/video0  single-planar: device, controls, inputs (webcam, TV, S-Video,
#                HDMI with standards, DV timings, source change), half the
#                format matrix
#   /dev/video1  multi-planar (multiplanar=2): QUERYCAP/caps, the formats with
#                several memory planes (NM12, YM12...)
#   /dev/video2  single-planar: error paths and vivid's fault injection (run
#                with the ASan build when there is one: leaks fail it), the
#                other half of the format matrix
# The format matrix: every capture format at 320x180 (webcam input, 60 fps)
# and 640x480, 1280x720 (HDMI input, DV timings at 60 Hz: vivid's webcam
# gives 720p only at 12.5 fps, too slow under TCG), 30 frames each, driver
# bytesperline/sizeimage against common/fmt.c's geometry, frames must change.
# The three groups run in parallel in the guest.
# Prints "vivid.<check>: OK|FAIL why|SKIP why". Usage: sh tests/vm/boot_vivid.sh
cd "$(dirname "$0")/../.." || exit 2
B=${VCAP_BUILD:-build}
CHECK=$B/tools/vivid_check
# The fault checks want leak detection: the ASan build when it is there.
CHECK_ASAN=build/asan/tools/vivid_check
[ -x "$CHECK_ASAN" ] || CHECK_ASAN=$CHECK
SIZES_WEBCAM=320x180
SIZES_HDMI=640x480,1280x720

if [ "${1:-}" = "--guest" ]; then
	out=$2
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
	cat "$out/a.log" "$out/b.log" "$out/c.log"
	# discovery, then a replug (unload + reload vivid) last: it changes the
	# devices. udev does not run in the guest: the command makes the by-id
	# link itself, as udev would.
	r $CHECK_ASAN discover 3 2>>"$out/d.err"
	r $CHECK_ASAN hotplug /dev/v4l/by-id/usb-vivid_Replug-video-index0 sh -c \
		'busybox modprobe -r vivid && sleep 0.5 && busybox modprobe vivid n_devs=1 node_types=0x1 &&
		 mkdir -p /dev/v4l/by-id && ln -sf ../../video0 /dev/v4l/by-id/usb-vivid_Replug-video-index0' \
		2>>"$out/d.err"
	exit 0
fi

for t in "$CHECK" "$CHECK_ASAN"; do
	if [ ! -x "$t" ]; then
		echo "vivid.build: FAIL $t not built (make all)"
		exit 1
	fi
done
work=$(mktemp -d "$PWD/build/vm-vivid.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT INT TERM

start=$(date +%s)
../shared/vm/vivid-vm --timeout 600 \
	--vivid "n_devs=3 multiplanar=1,2,1 node_types=0x1,0x1,0x1" \
	-- sh "$0" --guest "$work" >"$work/out" 2>"$work/vm.err"
rc=$?
cat "$work/out"
fail=0
case $rc in
0) ;;
124) echo "vivid.vm: FAIL the guest timed out (vivid-vm --timeout 600)" ;;
125) echo "vivid.vm: FAIL vivid-vm could not boot the guest (exit 125): $(tail -3 "$work/vm.err" | tr '\n' ' ')" ;;
*) echo "vivid.vm: FAIL vivid-vm exit $rc: $(tail -3 "$work/vm.err" | tr '\n' ' ')" ;;
esac
# Program errors (a crash, ASan) show on stderr; keep them in the log.
if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$work"/*.err 2>/dev/null; then
	echo "vivid.sanitizer: FAIL $(grep -hE 'ERROR: |runtime error:' "$work"/*.err | head -3 | tr '\n' ' ')"
	grep -hA20 -E 'ERROR: (AddressSanitizer|LeakSanitizer)' "$work"/*.err | head -60
fi
n=$(grep -c ': OK' "$work/out")
echo "vivid.summary: $( [ "$n" -ge 100 ] && echo OK || echo FAIL only) $n checks passed in $(( $(date +%s) - start )) s"
# a FAIL printed here (vm, sanitizer) or by the guest makes the exit status
[ "$rc" = 0 ] && [ "$n" -ge 100 ] && ! grep -q ': FAIL' "$work/out" && ! grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$work"/*.err 2>/dev/null
