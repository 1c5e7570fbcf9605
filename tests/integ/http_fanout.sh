#!/bin/sh
# Fan-out under load: 50 concurrent /stream clients plus one client reading
# 1 byte/s and one that never reads: the 50 keep the full rate, the slow ones
# skip frames (counted in /metrics), memory stays bounded, one encode serves
# all of them. Port: the daemon picks its own.
cd "$(dirname "$0")/../.." || exit 2
T=http_fanout
. tests/integ/lib/common.sh
N=50
SECS=6

# the slow ones hold a part for longer than client_hold's 5 s (hold.c drops
# them then): set out of the way, this tests the fan-out's skipping alone
printf '[server]\nclient_hold = 60\n' >"$TMP/c.conf"
if ! start_vcapd_any --config "$TMP/c.conf" --device test:640x480@30:YUYV; then
	fail start "daemon did not answer"; exit 1
fi
PORT=$VPORT
U=http://127.0.0.1:$PORT
curl -s -o /dev/null "$U/snapshot"
rss0=$(rss_kb "$VPID")

# the slow client (1 byte/s) and a stalled one (never reads: a fifo nobody drains
# fills, curl stops reading)
curl -s --limit-rate 1 -o "$TMP/slow" --max-time $((SECS + 14)) "$U/stream" & slow=$!
PIDS="$PIDS $slow"
mkfifo "$TMP/stall"
curl -s --max-time $((SECS + 14)) "$U/stream" >"$TMP/stall" & stall=$!
PIDS="$PIDS $stall"
exec 7<>"$TMP/stall" # keep the fifo open without reading it
# loopback socket buffers hold megabytes: give the slow ones time to fill them
sleep 8

camframes() { curl -s "$U/api/cams/0" | sed -n 's/.*"stats":{"frames":\([0-9]*\).*/\1/p'; }
# "peer frames skipped" per client of an /api/status answer
clients() { grep -o '"peer":"[^"]*"\|"frames":[0-9]*,"skipped":[0-9]*' "$1" |
	awk -F'[":,]+' '/peer/ { p = $3 ":" $4; next } /skipped/ { print p, $3, $5 }' | LC_ALL=C sort; }
i=0; cl=""
while [ $i -lt $N ]; do
	curl -s -o /dev/null --max-time $((SECS + 12)) "$U/stream" & cl="$cl $!"
	i=$((i + 1))
done
PIDS="$PIDS $cl"
# Measure from when every client is connected and served: starting 50 curl
# processes loads a 2-core box for a moment (that burst is the harness's,
# not the fan-out's); from then on the fast ones must keep the full rate.
i=0
while [ $i -lt 30 ]; do
	sleep 0.2
	curl -s "$U/api/status" >"$TMP/status0"
	[ "$(clients "$TMP/status0" | awk '$2 > 0' | wc -l)" -ge $((N + 2)) ] && break
	i=$((i + 1))
done
sleep 0.5
curl -s "$U/api/status" >"$TMP/status0"
f0=$(camframes)
sleep $((SECS / 2))
rss1=$(rss_kb "$VPID")
sleep $((SECS / 2 - 1))
# per-client counters while all are still connected
curl -s "$U/api/status" >"$TMP/status"
f1=$(camframes)
kill $cl 2>/dev/null
for p in $cl; do wait "$p"; done

# Frames sent and frames a client lost because it was still busy with an
# older one (capture-side drops are not the fan-out's doing), per client over
# the window: the 50 fast readers lose almost none, the two slow ones nearly
# everything.
clients "$TMP/status0" >"$TMP/c0"
clients "$TMP/status" >"$TMP/c1"
sk=$(LC_ALL=C join "$TMP/c0" "$TMP/c1" | awk '{ print $4 - $2, $5 - $3 }' | sort -k2 -n)
fast=$(echo "$sk" | head -n $N)
worst=$(echo "$fast" | awk '{ if ($2 * 100 > w * 100) { w = $2; f = $1 } } END { print w + 0 }')
wf=$(echo "$fast" | awk '{ if ($2 >= w) { w = $2; f = $1 } } END { print f + 0 }')
min=$(echo "$fast" | awk 'NR == 1 || $1 < m { m = $1 } END { print m + 0 }')
# relative to what the camera produced meanwhile (a loaded machine renders
# fewer test frames; the fan-out must not lose them)
want=$(((${f1:-0} - ${f0:-0}) * 6 / 10))
[ "$want" -ge 30 ] || want=30
check clients_full_rate "$([ "$min" -ge "$want" ] && [ $((worst * 20)) -le "$wf" ] && [ "$(echo "$fast" | wc -l)" = $N ]; echo $?)" \
	"slowest of $N got $min frames (want >= $want, camera produced $((${f1:-0} - ${f0:-0}))); worst fast client skipped $worst of $wf"
slowsk=$(echo "$sk" | tail -n 2 | awk '{print $2}' | sort -n | head -1)
check slow_clients_skip "$([ "${slowsk:-0}" -ge 30 ]; echo $?)" "the two slow clients skipped only $slowsk frames"
outputs=$(grep -o '"produced"' "$TMP/status" | wc -l)
check one_output_for_all "$([ "$outputs" = 1 ]; echo $?)" "$outputs outputs for $N identical clients"

curl -s "$U/metrics" >"$TMP/m"
sk=$(grep '^vcapd_client_skipped_frames_total' "$TMP/m" | awk '{ if ($2 > m) m = $2 } END { print m + 0 }')
check slow_client_skips_counted "$([ "$sk" -ge 30 ]; echo $?)" "max skipped frames in /metrics: $sk"
alive=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$U/snapshot")
check alive_with_stalled_clients "$([ "$alive" = 200 ]; echo $?)" "snapshot answered $alive"
grow=$((rss1 - rss0))
check rss_bounded "$([ "$grow" -lt 65536 ]; echo $?)" "RSS grew by $grow KiB with $N+2 clients ($rss0 -> $rss1)"
exec 7>&-
kill $slow $stall 2>/dev/null
sleep 0.5
n=$(curl -s "$U/api/status" | grep -o '"peer"' | wc -l)
check clients_gone "$([ "$n" = 0 ]; echo $?)" "$n clients still listed after they left"
stop_vcapd
check exit_clean $? "daemon exit status not 0"
exit 0
