#!/bin/sh
# A first run as the installed service makes it (systemd/vcapd.service):
# --config-optional with no config file serves on defaults (the test
# pattern where there is no camera) at the --default-listen address; a
# config's listen lines replace that default; the file written later is
# read by SIGHUP; and a port already taken stops the start with one line
# naming the process that holds it. Ports: chosen by the daemon (:0).
cd "$(dirname "$0")/../.." || exit 2
T=ops_firstrun
. tests/integ/lib/common.sh

# run_bg LOG ARGS...: the daemon in the background; sets VPID, VPORT
# (read from "listening on ADDR (port N)"). Non-zero when it does not come up.
run_bg() {
	_log=$1; shift
	"$VCAPD" "$@" >"$_log" 2>&1 &
	VPID=$!
	PIDS="$PIDS $VPID"
	for _i in $(seq 50); do
		VPORT=$(sed -n 's/.*listening on [^ ]* (port \([0-9]*\)).*/\1/p' "$_log" | head -1)
		[ -n "$VPORT" ] && return 0
		kill -0 "$VPID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# 1. No config file: defaults, listening where --default-listen says.
C=$TMP/vcapd.conf
if run_bg "$TMP/a.log" --config "$C" --config-optional --default-listen 127.0.0.1:0; then
	code=$(curl -s -o "$TMP/snap.jpg" -w '%{http_code}' --max-time 10 "http://127.0.0.1:$VPORT/snapshot")
	magic=$(head -c 2 "$TMP/snap.jpg" | od -An -tx1 | tr -d ' ')
	grep -q "no $C: running on defaults" "$TMP/a.log" && grep -q 'listening on 127.0.0.1:0 ' "$TMP/a.log" &&
		[ "$code" = 200 ] && [ "$magic" = ffd8 ]
	check no_config_serves $? "snapshot $code ($magic): $(tr '\n' ' ' <"$TMP/a.log" | head -c 400)"

	# 2. The file written afterwards: SIGHUP reads it (a [camera] appears).
	printf '[server]\nlog_level = info\n[camera front]\ndevice = test:320x240@15:YUYV\n' >"$C"
	kill -HUP "$VPID"
	for i in $(seq 50); do grep -q "reload: $C applied" "$TMP/a.log" && break; sleep 0.1; done
	ids=$(curl -s --max-time 5 "http://127.0.0.1:$VPORT/api/cams" | grep -o '"id":"[^"]*"' | tr '\n' ' ')
	grep -q "reload: $C applied" "$TMP/a.log" && echo "$ids" | grep -q '"id":"front"'
	check written_later_reloads $? "cams: $ids; $(tail -3 "$TMP/a.log" | tr '\n' ' ')"

	# 3. The port taken (by that first daemon): one clear line naming it.
	A=$VPID
	"$VCAPD" --listen "127.0.0.1:$VPORT" --device test >"$TMP/b.log" 2>&1 &
	B=$!
	PIDS="$PIDS $B"
	for i in $(seq 50); do kill -0 $B 2>/dev/null || break; sleep 0.1; done
	kill -0 $B 2>/dev/null; alive=$?
	[ "$alive" = 0 ] && kill -9 $B 2>/dev/null # it got the port: do not wait on it
	wait $B 2>/dev/null; rc=$?
	n=$(grep -c "cannot listen on 127.0.0.1:$VPORT" "$TMP/b.log")
	[ "$alive" != 0 ] && [ "$rc" != 0 ] && [ "$n" = 1 ] &&
		grep -q "cannot listen on 127.0.0.1:$VPORT: Address already in use; port $VPORT is held by another vcapd, pid $A" "$TMP/b.log"
	check port_taken_names_holder $? "alive=$alive rc=$rc lines=$n: $(grep -i 'listen\|port' "$TMP/b.log" | tr '\n' ' ' | head -c 500)"
	kill "$A"; wait "$A" 2>/dev/null
else
	fail no_config_serves "did not start: $(tr '\n' ' ' <"$TMP/a.log" | head -c 400)"
fi

# 4. A config's listen lines replace --default-listen (127.0.0.2 is loopback too).
printf '[server]\nlisten = 127.0.0.2:0\n' >"$C"
if run_bg "$TMP/c.log" --config "$C" --config-optional --default-listen 127.0.0.1:0; then
	c=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.2:$VPORT/api/status")
	grep -q 'listening on 127.0.0.2:0 (port ' "$TMP/c.log" && ! grep -q 'listening on 127.0.0.1' "$TMP/c.log" &&
		[ "$c" = 200 ]
	check config_listen_wins $? "status on 127.0.0.2:$VPORT $c; $(grep listening "$TMP/c.log" | tr '\n' ' ')"
	kill "$VPID"; wait "$VPID" 2>/dev/null
else
	fail config_listen_wins "did not start: $(tr '\n' ' ' <"$TMP/c.log" | head -c 400)"
fi

# 5. Without --config-optional a missing file is still an error.
"$VCAPD" --config "$TMP/none.conf" --listen 127.0.0.1:0 >"$TMP/d.log" 2>&1 &
D=$!
PIDS="$PIDS $D"
for i in $(seq 50); do kill -0 $D 2>/dev/null || break; sleep 0.1; done
kill -0 $D 2>/dev/null && kill -9 $D 2>/dev/null # still up: the missing file was accepted
wait $D 2>/dev/null; rc=$?
[ "$rc" != 0 ] && grep -q 'No such file' "$TMP/d.log"
check missing_config_without_flag_fails $? "rc=$rc $(tr '\n' ' ' <"$TMP/d.log" | head -c 300)"
