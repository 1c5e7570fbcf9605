#!/bin/sh
# Benchmark (not a test; issue 16): the encoding process's own CPU per frame
# with the M2M encoder session (vicodec's stateful encoder, fed by DMABUF: 0
# copies, or MMAP: 1 copy per frame) against the CPU path (libjpeg-turbo,
# quality 80), on the same vivid frames, at 640x480, 1280x720 and 1920x1080,
# in one vivid-vm --m2m boot (build/tools/m2m_bench does the work).
# Usage: sh tests/vm/bench_m2m.sh [frames per cell, default 50]
cd "$(dirname "$0")/../.." || exit 2
B=${VCAP_BUILD:-build}
BENCH=$B/tools/m2m_bench
N=${1:-50}

node() { grep -lx "$1" /sys/class/video4linux/*/name 2>/dev/null | sed 's|.*/\(.*\)/name|/dev/\1|' | head -1; }

if [ "${1:-}" = "--guest" ]; then
	N=$2
	cam=$(node vivid-000-vid-cap) enc=$(node stateful-encoder)
	echo "Encoding process's CPU per frame (getrusage, $N frames per cell, after 2 warm-up frames;"
	echo "capture and session setup not counted), vivid $cam -> vicodec $enc, guest kernel $(uname -r), ${VIVID_VM_ACCEL:-?}:"
	$BENCH "$cam" "$enc" --frames "$N"
	rc=$?
	cat <<-'EOF'
	Read with care:
	  * vicodec's FWHT encoding runs in the guest's kernel. v4l2-mem2mem starts a job
	    (vicodec's device_run, which encodes synchronously on the CPU) from the
	    ioctl that makes it runnable, so most of it is billed to this process's
	    "sys" time; "user" is the session's own work (and the copy for m2m-mmap).
	    On a Pi, bcm2835-codec's device_run only hands the buffers to the VideoCore
	    firmware, so the daemon pays the user part plus a few ioctls: the user
	    column, not the CPU column, is the figure that carries over.
	  * FWHT is not JPEG: vicodec is a test codec (different cost, different
	    size); the comparison is of the daemon's share of the work, not of codecs.
	  * TCG (no KVM): all CPU is emulated; compare ratios, not absolute times.
	    user and sys are split by sampling at the scheduler tick (their sum is
	    exact): with a 4 ms tick (HZ=250) a cell's user figure is good to about
	    +-1 tick, i.e. +-4/frames ms per frame; 0.00 means below one tick.
	  * In this guest the M2M path costs MORE CPU in total (FWHT is plain C in
	    the kernel, libjpeg-turbo is SIMD); what it removes from the daemon is
	    the user-space encode, which is what a hardware encoder takes away.
	  * copies/frame: m2m-dmabuf 0 (vivid's exported buffers queued by fd),
	    m2m-mmap 1 (memcpy into the encoder's buffer), cpu-jpeg 0 (libjpeg-turbo
	    reads the mapped capture buffer).
	EOF
	exit $rc
fi

[ -x "$BENCH" ] || { echo "bench_m2m: build first (make bench-bins / make all)"; exit 2; }
../shared/vm/vivid-vm --m2m --timeout 400 -- sh "$0" --guest "$N"
