#!/bin/sh
# Daemon wiring against vivid (helper "wire"), ONE short vivid-vm boot with
# two vivid capture nodes: vcapd with no --device and no config serves both
# discovered devices (not the test pattern); a [camera] with
# "control = brightness=200" has it applied when the camera opens (read back
# through /api/cams/v/controls). Prints "wire.<check>: OK|FAIL why".
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
	$VCAPD --listen 127.0.0.1:18981 >"$out/zero.log" 2>&1 &
	vp=$!
	up 18981 $vp && curl -s --max-time 10 http://127.0.0.1:18981/api/cams >"$out/zero.json"
	kill $vp; wait $vp
	printf '[server]\nlisten = 127.0.0.1:18982\n[camera v]\ndevice = /dev/video0\nidle_stop_ms = never\ncontrol = brightness=200\ncontrol = no_such_thing=1\n' \
		>"$out/c.conf"
	$VCAPD --config "$out/c.conf" >"$out/ctl.log" 2>&1 &
	vp=$!
	up 18982 $vp && sleep 1.5 &&
		curl -s --max-time 10 http://127.0.0.1:18982/api/cams/v/controls >"$out/ctl.json"
	kill $vp; wait $vp
	ls /dev/video* >"$out/nodes"
	exit 0
fi

work=$(mktemp -d "$PWD/build/vm-wire.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
../shared/vm/vivid-vm --timeout 120 --vivid "n_devs=2 node_types=0x1,0x1" \
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
if [ $? = 0 ]; then echo "wire.config_control_applied: OK"; else
	echo "wire.config_control_applied: FAIL brightness entry '$b': $(tail -6 "$work/ctl.log" | tr '\n' ' ')"; fi
