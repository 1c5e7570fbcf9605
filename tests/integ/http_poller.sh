#!/bin/sh
# One-shot pollers count as demand (issue 21, part 4) on the YUYV-only test
# pattern (1280x720@30, its configured mode): a default /snapshot has the
# same size alone and beside a /stream?size=640x360 viewer, and a poller every
# 5 s beside that viewer switches the mode never (the viewer joined after
# its first poll: the mode serves both from the start); a poller of a
# picture the mode cannot give switches once, at its first poll, then never;
# a poller stops counting POLLER_LINGER_MS (75 s) after its last request
# (server/stream/poller.h), then the viewer's mode comes back. Switches are
# read from /api/status (policy.switches). Each check prints its numbers.
# POLLER_S: how long the 5 s poller runs (default 120 s, 40 s under ASan);
# the lapse check waits about 80 s on top.
cd "$(dirname "$0")/../.." || exit 2
T=http_poller
. tests/integ/lib/common.sh
ASAN=; grep -aq __asan_init "$VCAPD" && ASAN=1
POLL_S=${POLLER_S:-$([ -n "$ASAN" ] && echo 40 || echo 120)}
LINGER_S=75
DEV=test:1280x720@30:YUYV:only

if ! start_vcapd_any --device "$DEV"; then
	fail start "daemon did not come up"; exit 1
fi
U=http://127.0.0.1:$VPORT

# cam_mode: the device mode now, "WxH"
cam_mode() { curl -s "$U/api/cams/0" | sed -n 's/.*"mode":{[^}]*"width":\([0-9]*\),"height":\([0-9]*\).*/\1x\2/p' | head -1; }
# switches: modes asked of the camera so far (/api/status policy.switches)
switches() { curl -s "$U/api/status" | sed -n 's/.*"policy":{.*"switches":\([0-9]*\).*/\1/p' | head -1; }
# jpeg_size FILE: "WxH" from the SOF0/SOF2 marker.
jpeg_size() { od -An -v -tx1 "$1" | tr -d '\n' | sed 's/ //g' |
	sed -n 's/.*ffc[02]0011..\(....\)\(....\).*/\2 \1/p' | { read w h; [ -n "$w" ] && echo "$((0x$w))x$((0x$h))"; }; }
# snap URL: "X-Size/JPEG-size" of a snapshot
snap() {
	curl -s -D "$TMP/h" -o "$TMP/s.jpg" --max-time 6 "$1"
	echo "$(hdr "$TMP/h" X-Size)/$(jpeg_size "$TMP/s.jpg")"
}
# wait_mode WxH SECONDS: polls every 0.1 s until the device mode is WxH;
# prints the tenths waited
wait_mode() {
	_i=0
	while [ $_i -lt $(($2 * 10)) ]; do
		[ "$(cam_mode)" = "$1" ] && { echo $_i; return 0; }
		sleep 0.1; _i=$((_i + 1))
	done
	echo $_i; return 1
}

# ---- a default /snapshot alone, then beside a 640x360 viewer
wait_mode 1280x720 5 >/dev/null
alone=$(snap "$U/snapshot")
n0=$(switches)
curl -s -N -D "$TMP/vh" -o "$TMP/viewer" "$U/stream?size=640x360" & viewer=$!
PIDS="$PIDS $viewer"
sleep 2
beside=$(snap "$U/snapshot")
[ "$alone" = "1280x720/1280x720" ] && [ "$beside" = "$alone" ] &&
	[ "$(hdr "$TMP/vh" X-Size)" = "640x360" ]
check same_size $? "default /snapshot alone $alone, beside a 640x360 viewer (got $(hdr "$TMP/vh" X-Size)) $beside (X-Size/JPEG; want 1280x720 both)"

# ---- a poller every 5 s beside the viewer: no switch
t0=$(date +%s); polls=0; bad=""; modes=""
while [ $(( $(date +%s) - t0 )) -lt "$POLL_S" ]; do
	s=$(snap "$U/snapshot"); polls=$((polls + 1))
	[ "$s" = "1280x720/1280x720" ] || bad="$bad $polls:$s"
	[ $((polls % 6)) -eq 0 ] && modes="$modes $(cam_mode)"
	sleep 5
done
n1=$(switches)
v0=$(stat -c %s "$TMP/viewer"); sleep 1; v1=$(stat -c %s "$TMP/viewer")
[ -n "$n0" ] && [ "$n1" = "$n0" ] && [ -z "$bad" ] && [ "$polls" -ge $((POLL_S / 6)) ] &&
	[ "$v1" -gt "$v0" ] && kill -0 "$viewer" 2>/dev/null
check poll_no_switch $? "$polls polls in ${POLL_S} s beside the viewer: switches $n0 -> $n1 (want none; the viewer joined too), wrong sizes:${bad:- none}, modes:$modes, viewer still receiving ($v0 -> $v1 bytes)"

curl -s "$U/api/status" >"$TMP/status"
grep -q '"kind":"poller"' "$TMP/status"
check status_lists_poller $? "$(grep -o '"requests":\[[^]]*]' "$TMP/status" | head -c 300)"

# ---- a poller of a picture the mode cannot give (1920x1080) beside the
# viewer: its first poll switches, the next ones do not
n2=$(switches); bad=""
for i in 1 2 3 4 5 6; do
	[ $i -gt 1 ] && sleep 2
	s=$(snap "$U/snapshot?size=1920x1080")
	last=$(date +%s) # its last request: answered just now
	[ "$s" = "1920x1080/1920x1080" ] || bad="$bad $i:$s"
	[ $i -eq 1 ] && n3=$(switches)
done
n4=$(switches); m=$(cam_mode)
[ "$n3" = "$((n2 + 1))" ] && [ "$n4" = "$n3" ] && [ -z "$bad" ] && [ "$m" = 1920x1080 ]
check big_poller_switches_once $? "6 polls of size=1920x1080 every 2 s beside the viewer: switches $n2 -> $n3 at the first -> $n4 after all (want +1, then none), mode $m, wrong sizes:${bad:- none}"

# ---- pollers stop counting LINGER_S after their last request: the viewer's
# mode comes back then, not before
sleep $((LINGER_S - 4 - ($(date +%s) - last)))
early=$(cam_mode)
w=$(wait_mode 640x360 9); back=$(( $(date +%s) - last ))
n5=$(switches)
[ "$early" = 1920x1080 ] && [ "$(cam_mode)" = 640x360 ] && [ "$n5" = "$((n4 + 1))" ] &&
	[ "$back" -ge $((LINGER_S - 1)) ] && [ "$back" -le $((LINGER_S + 4)) ]
check poller_lapses $? "mode $early $((LINGER_S - 4)) s after the last poll, $(cam_mode) ${back} s after it (want 1920x1080, then 640x360 within ${LINGER_S}-$((LINGER_S + 4)) s), switches $n4 -> $n5"

kill "$viewer" 2>/dev/null; wait "$viewer" 2>/dev/null
stop_vcapd; rc=$?
check exit_clean $rc "exit status $rc"
grep -q 'ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error' "$VLOG"
check no_sanitizer_reports "$([ $? != 0 ]; echo $?)" "$(grep -m3 'ERROR\|runtime error' "$VLOG")"
