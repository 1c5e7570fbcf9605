#!/bin/sh
# Daemon wiring (helper "wire"): with no --device and no [camera] it serves
# every V4L2 capture node discover finds, else the test pattern; config
# "control = NAME=VALUE" lines that the camera cannot take are logged one
# error each and never stop the start; the hotplug watch pokes an ABSENT
# camera as soon as its node appears in /dev. Ports: the first daemon picks
# its own, the two started with a config get free ones.
cd "$(dirname "$0")/../.." || exit 2
T=wire_zeroconf
. tests/integ/lib/common.sh

# 1. Zero config.
if start_vcapd_any; then
	PORT=$VPORT
	U="http://127.0.0.1:$PORT"
	cams=$(curl -s --max-time 5 "$U/api/cams")
	n=$(echo "$cams" | grep -o '"id":"[0-9]*"' | wc -l)
	log=$VLOG
	if ls /dev/video* >/dev/null 2>&1 && grep -q 'as camera' "$log"; then
		nd=$(grep -c 'as camera' "$log")
		[ "$n" = "$nd" ] && ! echo "$cams" | grep -q '"path":"test"'
		check zero_config_discovered $? "$n cams listed, $nd discovered: $(grep 'as camera' "$log")"
	else
		[ "$n" = 1 ] && echo "$cams" | grep -q '"id":"0","path":"test"' &&
			grep -q 'no V4L2 capture device found: serving the test pattern' "$log"
		check zero_config_test_pattern $? "$n cams: $(echo "$cams" | head -c 200) log: $(cat "$log")"
	fi
	kill "$VPID"; wait "$VPID" 2>/dev/null
else
	fail zero_config_start "daemon did not come up"
fi

# 2. Control lines on a source without these controls: one error each, the
# camera is served anyway.
P2=$(free_port)
cat >"$TMP/c.conf" <<EOC
[server]
listen = 127.0.0.1:$P2
[camera front]
device = test:320x240@20:YUYV
idle_stop_ms = never
control = brightness=200
control = power_line_frequency=50 Hz
EOC
"$VCAPD" --config "$TMP/c.conf" >"$TMP/c.log" 2>&1 &
VPID=$!; PIDS="$PIDS $VPID"
for i in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$P2/api/status" && break; sleep 0.1; done
sleep 1 # the control tick runs every 250 ms once the source is open
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$P2/api/cams/front")
nerr=$(grep -c "error.*\[camera front\]: control '.*': no such control" "$TMP/c.log")
[ "$code" = 200 ] && [ "$nerr" = 2 ]
check controls_refused_logged $? "GET /api/cams/front $code, $nerr error lines: $(cat "$TMP/c.log")"
kill "$VPID"; wait "$VPID" 2>/dev/null

# 3. Hotplug: a configured node that is absent, then appears (a plain file
# is enough for the watch; opening it then fails, which is fine here).
NODE=/dev/video$((200 + $$ % 50))
if [ -e "$NODE" ] || ! touch "$NODE" 2>/dev/null; then
	skip hotplug_poke "cannot create a free $NODE (not root?)"
	exit 0
fi
rm -f "$NODE"
P3=$(free_port)
printf '[server]\nlisten = 127.0.0.1:%s\n[camera hp]\ndevice = %s\n' "$P3" "$NODE" >"$TMP/h.conf"
"$VCAPD" --config "$TMP/h.conf" >"$TMP/h.log" 2>&1 &
VPID=$!; PIDS="$PIDS $VPID"
trap 'rm -f "$NODE"; cleanup' EXIT
for i in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$P3/api/status" && break; sleep 0.1; done
sleep 3 # past the first short backoffs, so a reopen now is the poke's
touch "$NODE"
t0=$(date +%s%N)
for i in $(seq 20); do grep -q "hotplug: $NODE is back" "$TMP/h.log" && break; sleep 0.05; done
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
rm -f "$NODE"
grep -q "hotplug: $NODE is back" "$TMP/h.log"
check hotplug_poke $? "${ms} ms after the node appeared: $(tail -5 "$TMP/h.log")"
