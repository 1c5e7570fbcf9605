#!/bin/sh
# M2M device discovery (issue 16, first part) in ONE vivid-vm boot with --m2m:
# vcapd's scan (server/capture/m2m_discover.c, through build/tools/m2m_list)
# must classify the kernel's virtual M2M drivers by their queues' formats:
#   m2m.vicodec_encoder   stateful-encoder: raw in, FWHT out -> video-encoder
#   m2m.vicodec_decoder   stateful-decoder: FWHT in, raw out -> decoder
#   m2m.vicodec_stateless stateless-decoder -> decoder
#   m2m.vim2m_converter   vim2m: raw in, raw out -> converter
#   m2m.no_camera_listed  vivid's capture nodes are not M2M devices
#   m2m.daemon_status     the daemon's /api/status lists them in "m2m" (roles,
#                         formats of each queue) and its camera's encoder
#                         (auto: no JPEG or H.264 encoder here -> would_use,
#                         h264_would_use cpu)
#   m2m.daemon_encoder_path  encoder = <vicodec's encoder> is refused as not a
#                         JPEG encoder (would_use cpu) nor an H.264 encoder
#   m2m.enc_single        build/tools/m2m_enc_check: the encoder session
#                         (server/encode/m2m_enc.c) drives vicodec's stateful
#                         encoder with vivid's frames: DMABUF at 640x480 (0
#                         copies), restart at 1280x720 with MMAP (1 copy per
#                         frame), drain each time, FWHT decoded back by vicodec's
#                         decoder at >= 30 dB PSNR, key frames per GOP, and a
#                         refused frame falling back to the CPU encoder; its own
#                         lines (m2m_enc.single.*) carry the figures
#   m2m.vim2m_convert     build/tools/m2m_conv_check: vim2m as a raw->raw
#                         converter (RGB24->BGR24, RGB24->RGB565,
#                         RGB565->RGB24, RGB24->YUYV, RGB565->YUYV at 640x480)
#                         on vivid's frames, its output compared with vcapd's
#                         CPU converter (vc_conv_run) within the tolerances
#                         measured and explained in that file
# Then vicodec is reloaded in the same guest with multiplanar=1 (the API
# bcm2835-codec uses):
#   m2m.enc_mplane        the same checks through the multi-planar API
#   m2m.mplane_encoder / m2m.mplane_decoder  same roles, api=multi
#   m2m.hotplug_rescan    the daemon, running across the reload, lists the
#                         multi-planar encoder in /api/status (hotplug rescan)
# Prints "name: OK" or "name: FAIL why". Usage: sh tests/vm/boot_m2m.sh
cd "$(dirname "$0")/../.." || exit 2
B=${VCAP_BUILD:-build}
LIST=$B/tools/m2m_list
ENC_CHECK=$B/tools/m2m_enc_check
CONV_CHECK=$B/tools/m2m_conv_check
VCAPD=${VCAPD:-$B/vcapd}

# node NAME: /dev/videoN whose sysfs name is NAME (vicodec's three nodes
# share driver and card: only the name tells them apart)
node() { grep -lx "$1" /sys/class/video4linux/*/name 2>/dev/null | sed 's|.*/\(.*\)/name|/dev/\1|' | head -1; }

if [ "${1:-}" = "--guest" ]; then
	work=$2 ko=$3
	for n in stateful-encoder stateful-decoder stateless-decoder vim2m; do
		echo "$n $(node $n)"
	done >"$work/nodes"
	$LIST >"$work/list1" 2>"$work/list1.err"
	echo $? >"$work/list1.rc"
	# enc_check TAG: the encoder session through vicodec, vivid as the camera
	enc_check() {
		timeout 120 $ENC_CHECK "$(node vivid-000-vid-cap)" "$(node stateful-encoder)" \
			"$(node stateful-decoder)" --tag "$1" >"$work/enc_$1" 2>"$work/enc_$1.err"
		echo $? >"$work/enc_$1.rc"
	}
	enc_check single
	timeout 60 $CONV_CHECK "$(node vivid-000-vid-cap)" "$(node vim2m)" >"$work/conv" 2>"$work/conv.err"
	echo $? >"$work/conv.rc"
	ls /dev/video* >"$work/all" 2>&1
	port=18931
	# daemon RUN ENCODER: starts vcapd with one test camera, waits for /api/status
	daemon() {
		printf '[server]\nlisten = 127.0.0.1:%s\n[camera c]\ndevice = test:640x480@5:YUYV\nencoder = %s\n' \
			$port "$2" >"$work/$1.conf"
		$VCAPD --config "$work/$1.conf" >"$work/$1.log" 2>&1 &
		pid=$!
		i=0
		while [ $i -lt 40 ] && ! curl -sf -o "$work/$1.json" http://127.0.0.1:$port/api/status; do
			sleep 0.5; i=$((i + 1))
		done
	}
	stop() { kill $pid; wait $pid; echo $? >"$work/$1.exit"; port=$((port + 1)); }
	daemon path "$(node stateful-encoder)"
	stop path
	daemon auto auto
	# the multi-planar API: reload vicodec with multiplanar=1 while the
	# daemon runs: its hotplug watch sees the new nodes and rescans
	if busybox rmmod vicodec 2>"$work/reload.err" &&
		busybox insmod "$ko" multiplanar=1 2>>"$work/reload.err"; then
		for n in stateful-encoder stateful-decoder; do
			echo "$n $(node $n)"
		done >"$work/nodes2"
		# the rescan follows the hotplug event some time after insmod (slow
		# under TCG): /api/status every 0.5 s, up to 15 s by the clock,
		# until the new encoder node is listed multi-planar among 4 m2m
		# entries; the last read is what is judged
		enc2=$(node stateful-encoder) t0=$(($(date +%s%N) / 100000000))
		while :; do
			curl -sf -o "$work/hotplug.json" http://127.0.0.1:$port/api/status
			[ "$(grep -o '"api":"' "$work/hotplug.json" | wc -l)" = 4 ] &&
				tr '{' '\n' <"$work/hotplug.json" | grep "\"path\":\"$enc2\"," |
				grep -q '"api":"multi-planar"' && break
			[ $(($(date +%s%N) / 100000000 - t0)) -ge 150 ] && break
			sleep 0.5
		done
		t=$(($(date +%s%N) / 100000000 - t0)); echo "$((t / 10)).$((t % 10))" >"$work/hotplug.wait"
		$LIST >"$work/list2" 2>"$work/list2.err"
		enc_check mplane
	fi
	stop auto
	exit 0
fi

[ -x "$LIST" ] && [ -x "$VCAPD" ] && [ -x "$ENC_CHECK" ] && [ -x "$CONV_CHECK" ] ||
	{ echo "m2m.build: FAIL $LIST, $ENC_CHECK, $CONV_CHECK or $VCAPD missing (make all)"; exit 1; }
work=$(mktemp -d "$PWD/build/vm-m2m.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT INT TERM
cache=${VIVID_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vivid-vm}
../shared/vm/vivid-vm --prepare --m2m >"$work/prepare.log" 2>&1 ||
	echo "m2m.prepare: FAIL $(tail -3 "$work/prepare.log" | tr '\n' ' ')"
ko=$(ls -t "$cache"/kernel/*/m2m/vicodec.ko 2>/dev/null | head -1)

start=$(date +%s)
../shared/vm/vivid-vm --m2m --timeout 400 -- sh "$0" --guest "$work" "$ko" >"$work/out" 2>"$work/vm.err"
rc=$?
cat "$work/out"
[ $rc = 0 ] || echo "m2m.vm: FAIL vivid-vm exit $rc: $(tail -3 "$work/vm.err" | tr '\n' ' ')"

res() { # name, status, why
	if [ "$2" = 0 ]; then echo "$1: OK"; else echo "$1: FAIL $3"; fi
}
# line FILE NODE-NAME NODES-FILE: the m2m_list line of that node
line() { p=$(sed -n "s/^$2 //p" "$4"); [ -n "$p" ] && grep "^$p " "$1"; }
# has LINE KEY=VALUE: the word is on the line
has() { printf '%s\n' "$1" | tr ' ' '\n' | grep -qx "$2"; }

{
l=$(line "$work/list1" stateful-encoder x "$work/nodes")
has "$l" roles=video-encoder && has "$l" api=single && has "$l" out=FWHT && has "$l" driver=vicodec &&
	printf '%s' "$l" | grep -q ' in=YU12,'
res m2m.vicodec_encoder $? "'$l' (nodes: $(tr '\n' ' ' <"$work/nodes"); $(head -c 200 "$work/list1.err"))"
l=$(line "$work/list1" stateful-decoder x "$work/nodes")
has "$l" roles=decoder && has "$l" in=FWHT && has "$l" api=single
res m2m.vicodec_decoder $? "'$l'"
l=$(line "$work/list1" stateless-decoder x "$work/nodes")
has "$l" roles=decoder
res m2m.vicodec_stateless $? "'$l'"
l=$(line "$work/list1" vim2m x "$work/nodes")
has "$l" roles=converter && printf '%s' "$l" | grep -q ' out=.*YUYV'
res m2m.vim2m_converter $? "'$l'"
n=$(wc -l <"$work/list1" 2>/dev/null)
[ "$(cat "$work/list1.rc" 2>/dev/null)" = 0 ] && [ "$n" = 4 ] && ! grep -q vivid "$work/list1"
res m2m.no_camera_listed $? "$n nodes listed, want 4 of: $(tr '\n' ' ' <"$work/all")"

# enc_res TAG: the checker ran to its end with every line OK
enc_res() {
	cat "$work/enc_$1" 2>/dev/null
	[ "$(cat "$work/enc_$1.rc" 2>/dev/null)" = 0 ] && grep -q "^m2m_enc.$1: 0 failed" "$work/enc_$1" &&
		! grep -q ': FAIL' "$work/enc_$1"
	res m2m.enc_$1 $? "exit $(cat "$work/enc_$1.rc" 2>/dev/null); $(grep ': FAIL' "$work/enc_$1" 2>/dev/null | head -3 | tr '\n' ' ') $(tail -3 "$work/enc_$1.err" 2>/dev/null | tr '\n' ' ')"
}
enc_res single
cat "$work/conv" 2>/dev/null
[ "$(cat "$work/conv.rc" 2>/dev/null)" = 0 ] && grep -q '^m2m_conv.single: 0 failed' "$work/conv" &&
	[ "$(grep -c '^m2m_conv.single.[a-z0-9_]*: OK' "$work/conv")" = 5 ]
res m2m.vim2m_convert $? "exit $(cat "$work/conv.rc" 2>/dev/null); $(grep ': FAIL' "$work/conv" 2>/dev/null | head -3 | tr '\n' ' ') $(tail -3 "$work/conv.err" 2>/dev/null | tr '\n' ' ')"

enc=$(sed -n 's/^stateful-encoder //p' "$work/nodes")
# clean RUN: the daemon stopped with status 0 and no sanitizer report
clean() { [ "$(cat "$work/$1.exit" 2>/dev/null)" = 0 ] && ! grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$work/$1.log"; }
# py SCRIPT FILE: asserts over a JSON file; prints the assertion's last line
py() { python3 -c "$1" "$2" "$enc" 2>"$work/py.err"; s=$?; tail -1 "$work/py.err"; return $s; }
out=$(py '
import json, sys
d = json.load(open(sys.argv[1]))
m = {x["path"]: x for x in d["m2m"]}
e = m[sys.argv[2]]
assert e["roles"] == ["video-encoder"] and e["driver"] == "vicodec", e
assert "FWHT" in e["capture_formats"] and "YU12" in e["output_formats"], e
assert e["api"] == "single-planar", e
assert len(d["m2m"]) == 4, [x["path"] for x in d["m2m"]]
c = d["cams"][0]["encoder"]
assert c == {"setting": "auto", "would_use": "cpu", "reason": "no hardware JPEG encoder found",
             "h264_would_use": "cpu", "h264_reason": "no hardware H.264 encoder found",
             "active": "cpu"}, c
' "$work/auto.json") && clean auto
res m2m.daemon_status $? "$out; exit $(cat "$work/auto.exit" 2>/dev/null); $(tail -3 "$work/auto.log" 2>/dev/null | tr '\n' ' ')"
out=$(py '
import json, sys
c = json.load(open(sys.argv[1]))["cams"][0]["encoder"]
assert c["setting"] == sys.argv[2] and c["would_use"] == "cpu" and "not a JPEG encoder" in c["reason"], c
assert c["h264_would_use"] == "cpu" and "not an H.264 encoder" in c["h264_reason"], c
' "$work/path.json") && clean path
res m2m.daemon_encoder_path $? "$out; exit $(cat "$work/path.exit" 2>/dev/null); $(tail -3 "$work/path.log" 2>/dev/null | tr '\n' ' ')"

if [ -s "$work/list2" ]; then
	l=$(line "$work/list2" stateful-encoder x "$work/nodes2")
	has "$l" roles=video-encoder && has "$l" api=multi && has "$l" out=FWHT
	res m2m.mplane_encoder $? "'$l'"
	l=$(line "$work/list2" stateful-decoder x "$work/nodes2")
	has "$l" roles=decoder && has "$l" api=multi
	res m2m.mplane_decoder $? "'$l'"
	enc=$(sed -n 's/^stateful-encoder //p' "$work/nodes2")
	out=$(py '
import json, sys
m = {x["path"]: x for x in json.load(open(sys.argv[1]))["m2m"]}
e = m[sys.argv[2]]
assert e["api"] == "multi-planar" and e["roles"] == ["video-encoder"], e
assert len(m) == 4, list(m)
' "$work/hotplug.json")
	res m2m.hotplug_rescan $? "$out (last of the reads over $(cat "$work/hotplug.wait" 2>/dev/null) s)"
	echo "m2m.hotplug_rescan.wait: $(cat "$work/hotplug.wait" 2>/dev/null) s after insmod (not a check)"
	enc_res mplane
else
	echo "m2m.mplane_encoder: FAIL vicodec not reloaded with multiplanar=1 ($ko): $(head -c 300 "$work/reload.err" 2>/dev/null)"
	echo "m2m.mplane_decoder: FAIL see m2m.mplane_encoder"
	echo "m2m.hotplug_rescan: FAIL see m2m.mplane_encoder"
	echo "m2m.enc_mplane: FAIL see m2m.mplane_encoder"
fi
} | tee "$work/res"
n=$(grep -c '^m2m\.[a-z_0-9]*: OK$' "$work/res")
[ "$n" = 13 ] && ! grep -q ': FAIL' "$work/res" "$work/out" && [ $rc = 0 ]
st=$?
res m2m.summary $st "only $n of 13 checks passed"
echo "m2m.time: $(( $(date +%s) - start )) s (not a check)"
exit $st
