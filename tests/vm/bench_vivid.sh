#!/bin/sh
# Benchmark (not a test; issue 3): capture CPU per frame on the vivid driver,
# YUYV 1280x720 and 1920x1080, zero-copy lending vs copying every frame into
# the pool (tests/tools/vivid_bench), in one vivid-vm boot. Under TCG (no KVM
# here) the absolute CPU times are emulated and inflated; compare the ratios.
# Usage: sh tests/vm/bench_vivid.sh [seconds per window, default 4]
# (`make bench` runs it with VCAP_BUILD=build/bench-o3.)
cd "$(dirname "$0")/../.." || exit 2
B=${VCAP_BUILD:-build}
BENCH=$B/tools/vivid_bench
VM=../shared/vm/vivid-vm
[ -x "$BENCH" ] || { echo "bench_vivid: $BENCH not built (make all)"; exit 2; }
[ -x "$VM" ] || { echo "bench_vivid: skipped, no $VM"; exit 0; }
# One capture node: vivid's default inputs (0 webcam, 1 TV, 2 S-Video, 3 HDMI).
# One vCPU: on two, our ioctls spin on the device mutex that vivid's kthread
# holds while it draws a frame, and that spinning counts as our sys time
# (measured: lend 20 ms/frame sys at 1080p, vs ~0.3 ms on one vCPU).
exec "$VM" --cpus 1 --timeout 400 --vivid "n_devs=1 node_types=0x1" -- "$BENCH" /dev/video0 "${1:-4}"
