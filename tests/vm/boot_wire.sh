#!/bin/sh
# Daemon wiring against vivid (helper "wire"), ONE short vivid-vm boot with
# two vivid capture nodes: vcapd with no --device and no config serves both
# discovered devices (not the test pattern); a [camera] with
# "control = brightness=200" has it applied when the camera opens (read back
# through /api/cams/v/controls). ops, same boot: a --device camera takes the
# control lines of the [camera] naming its device; SIGHUP with a changed
# control line sets it on the streaming device (no reopen) while a client
# keeps streaming; zero config with no
# device (vivid unloaded) serves the test pattern, then vivid loaded while
# running is picked up by the hotplug watch, served, and the test pattern
# makes way. Prints "wire.<check>: OK|FAIL why".
cd "$(dirname "$0")/../.." || exit 2
B=${VCAP_BUILD:-build}
VCAPD=${VCAPD:-$B/vcapd}

if [ "${1:-}" = "--guest" ]; then
	out=$2
	# up PORT PID: wait until the daemon answers
	up() {
		for i in $(seq 150); do
			curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$1/api/status" && return 0
			kill -0 "$2" 2>/dev/null || return 1
			sleep 0.2
		done
		return 1
	}
	# dsec: the guest's clock in tenths of a second
	dsec() { echo $(($(date +%s%N) / 100000000)); }
	# controls URL FILE VALUE: reads the controls JSON every 0.5 s, up to
	# 20 s by the clock, until brightness has VALUE (the camera opens and
	# applies its control lines some time after the daemon answers: slow
	# under TCG); the last read is what is judged. FILE.wait: the seconds
	# it took.
	controls() {
		t0=$(dsec)
		while :; do
			curl -s --max-time 10 "$1" >"$2"
			tr '{' '\n' <"$2" | grep '"key":"brightness"' | grep -q "\"value\":$3[,}]" && break
			[ $(($(dsec) - t0)) -ge 200 ] && break
			sleep 0.5
		done
		t=$(($(dsec) - t0)); echo "$((t / 10)).$((t % 10))" >"$2.wait"
	}
	$VCAPD --listen 127.0.0.1:18981 >"$out/zero.log" 2>&1 &
	vp=$!
	up 18981 $vp && curl -s --max-time 10 http://127.0.0.1:18981/api/cams >"$out/zero.json"
	kill $vp; wait $vp
	printf '[server]\nlisten = 127.0.0.1:18982\n[camera v]\ndevice = /dev/video0\nidle_stop_ms = never\ncontrol = brightness=200\ncontrol = no_such_thing=1\n' \
		>"$out/c.conf"
	$VCAPD --config "$out/c.conf" >"$out/ctl.log" 2>&1 &
	vp=$!
	up 18982 $vp && controls http://127.0.0.1:18982/api/cams/v/controls "$out/ctl.json" 200
	kill $vp; wait $vp
	ls /dev/video* >"$out/nodes"
	# ops: --device + a [camera] for the same device
	printf '[server]\nlisten = 127.0.0.1:18983\n[camera w]\ndevice = /dev/video1\ncontrol = brightness=180\n' \
		>"$out/d.conf"
	$VCAPD --config "$out/d.conf" --device /dev/video1 >"$out/dev.log" 2>&1 &
	vp=$!
	up 18983 $vp && controls http://127.0.0.1:18983/api/cams/0/controls "$out/dev.json" 180
	kill $vp; wait $vp
	# ops: reload with a changed control line applies it (no reopen)
	sed 's/brightness=200/brightness=60/' "$out/c.conf" >"$out/c2.conf"
	cp "$out/c.conf" "$out/r.conf"
	$VCAPD --config "$out/r.conf" >"$out/reload.log" 2>&1 &
	vp=$!
	if up 18982 $vp; then
		# a client streams across the reopen (vivid: 5 fps)
		curl -s -N --max-time 10 http://127.0.0.1:18982/stream -o "$out/reload.bin" &
		cp=$!
		sleep 4
		grep -ac 'Content-Type: image/jpeg' "$out/reload.bin" >"$out/reload.parts"
		cp "$out/c2.conf" "$out/r.conf"
		kill -HUP $vp
		wait $cp
		echo $? >>"$out/reload.parts"
		grep -ac 'Content-Type: image/jpeg' "$out/reload.bin" >>"$out/reload.parts"
		curl -s --max-time 10 http://127.0.0.1:18982/api/cams/v/controls >"$out/reload.json"
	fi
	kill $vp; wait $vp
	# ops: zero-config hotplug, a device appearing after the start
	busybox modprobe -r vivid
	ls /dev/video* >"$out/nodes0" 2>/dev/null
	$VCAPD --listen 127.0.0.1:18984 >"$out/hp.log" 2>&1 &
	vp=$!
	if up 18984 $vp; then
		curl -s --max-time 10 http://127.0.0.1:18984/api/cams >"$out/hp0.json"
		busybox modprobe vivid n_devs=1 node_types=0x1
		for i in $(seq 50); do
			curl -s --max-time 5 http://127.0.0.1:18984/api/cams >"$out/hp1.json"
			grep -q '"path":"/dev/video0"' "$out/hp1.json" && break
			sleep 0.2
		done
		curl -s --max-time 20 -o "$out/hp.jpg" -w '%{http_code}' 'http://127.0.0.1:18984/snapshot?cam=0' \
			>"$out/hp.code"
	fi
	kill $vp; wait $vp
	exit 0
fi

work=$(mktemp -d "$PWD/build/vm-wire.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
../shared/vm/vivid-vm --timeout 160 --vivid "n_devs=2 node_types=0x1,0x1" \
	-- sh "$0" --guest "$work" >"$work/out" 2>"$work/vm.err"
rc=$?
[ $rc = 0 ]
if [ $rc != 0 ]; then
	echo "wire.vm: FAIL vivid-vm exit $rc: $(tail -3 "$work/vm.err" | tr '\n' ' ')"
	exit 1
fi
n=$(grep -o '"id":"[0-9]*"' "$work/zero.json" 2>/dev/null | wc -l)
nodes=$(wc -l <"$work/nodes")
[ "$n" = 2 ] && [ "$nodes" = 2 ] && ! grep -q '"path":"test"' "$work/zero.json" &&
	[ "$(grep -c 'as camera' "$work/zero.log")" = 2 ]
if [ $? = 0 ]; then echo "wire.zero_config_discovers: OK"; else
	echo "wire.zero_config_discovers: FAIL $n cams for $nodes nodes: $(head -c 300 "$work/zero.json") $(tail -5 "$work/zero.log" | tr '\n' ' ')"; fi
# brightness's entry in the controls JSON, then its value
b=$(tr '{' '\n' <"$work/ctl.json" 2>/dev/null | grep '"key":"brightness"')
echo "$b" | grep -q '"value":200' && grep -q "control brightness = 200" "$work/ctl.log" &&
	grep -q "error.*control 'no_such_thing': no such control" "$work/ctl.log"
if [ $? = 0 ]; then echo "wire.config_control_applied: OK${VERBOSE:+ (read back after $(cat "$work/ctl.json.wait") s)}"; else
	echo "wire.config_control_applied: FAIL brightness entry '$b' after $(cat "$work/ctl.json.wait" 2>/dev/null) s: $(tail -6 "$work/ctl.log" | tr '\n' ' ')"; fi
# ops: --device with a [camera] naming the device; reload control change; hotplug
b=$(tr '{' '\n' <"$work/dev.json" 2>/dev/null | grep '"key":"brightness"')
echo "$b" | grep -q '"value":180' && grep -q 'device /dev/video1: control lines of \[camera w\]' "$work/dev.log"
if [ $? = 0 ]; then echo "wire.device_flag_controls: OK${VERBOSE:+ (read back after $(cat "$work/dev.json.wait") s)}"; else
	echo "wire.device_flag_controls: FAIL brightness entry '$b' after $(cat "$work/dev.json.wait" 2>/dev/null) s: $(tail -6 "$work/dev.log" | tr '\n' ' ')"; fi
b=$(tr '{' '\n' <"$work/reload.json" 2>/dev/null | grep '"key":"brightness"')
# parts: before the HUP, curl's exit status (28 = ran to --max-time), total
set -- $(cat "$work/reload.parts" 2>/dev/null) 0 0 0
# only the control line changed: set on the streaming device, no reopen
echo "$b" | grep -q '"value":60' && grep -q 'reload: camera v: control lines changed' "$work/reload.log" &&
	! grep -q 'reload: camera v changed: reopening' "$work/reload.log" &&
	grep -q 'control brightness = 60' "$work/reload.log" && [ "$2" = 28 ] && [ $(($3 - $1)) -ge 10 ]
if [ $? = 0 ]; then echo "wire.reload_control_applied: OK${VERBOSE:+ (parts before HUP $1, after $(($3 - $1)))}"; else
	echo "wire.reload_control_applied: FAIL brightness entry '$b'; stream parts before HUP $1, curl rc $2, total $3: $(tail -6 "$work/reload.log" | tr '\n' ' ')"; fi
magic=$(head -c 2 "$work/hp.jpg" 2>/dev/null | od -An -tx1 | tr -d ' ')
[ ! -s "$work/nodes0" ] && grep -q '"path":"test"' "$work/hp0.json" &&
	grep -q '"path":"/dev/video0"' "$work/hp1.json" && ! grep -q '"path":"test"' "$work/hp1.json" &&
	[ "$(cat "$work/hp.code" 2>/dev/null)" = 200 ] && [ "$magic" = ffd8 ] &&
	grep -q 'hotplug: serving /dev/video0 (/dev/video0, vivid' "$work/hp.log"
if [ $? = 0 ]; then echo "wire.zeroconf_hotplug_adds: OK"; else
	echo "wire.zeroconf_hotplug_adds: FAIL nodes before: '$(cat "$work/nodes0" 2>/dev/null)' before: $(head -c 200 "$work/hp0.json") after: $(head -c 200 "$work/hp1.json") snapshot $(cat "$work/hp.code" 2>/dev/null) magic=$magic: $(tail -6 "$work/hp.log" | tr '\n' ' ')"; fi
# every daemon above exited through SIGTERM: a sanitizer build reports here
# (a plain build cannot report anything: SKIP, not a check that cannot fail)
if ! grep -qa '__asan_init\|__ubsan' "$VCAPD"; then
	echo "wire.no_sanitizer_reports: SKIP $VCAPD is not a sanitizer build"
elif grep -l 'Sanitizer\|runtime error' "$work"/*.log >/dev/null 2>&1; then
	echo "wire.no_sanitizer_reports: FAIL $(grep -h -m3 'Sanitizer\|runtime error' "$work"/*.log | tr '\n' ' ')"
else
	echo "wire.no_sanitizer_reports: OK"
fi
