#!/bin/sh
# Slow readers cannot pin memory outside the budget (issue 22, part 1): 200
# /raw/stream clients of the 1920x1080 YUYV test camera (4 MiB a frame),
# joining 0.1 s apart from 127.0.0.1-4 and each reading 2 KB/s, for 50 s
# (tests/tools/http_slow_many.py). Each holds the frame it is sending (a
# memfd: not in RSS), so the daemon's RSS plus its memfd bytes, sampled
# every 0.25 s, must stay under frame_memory (64 MiB) + 64 MiB (without the
# bound: ~4 MiB per reader, 800 MiB); a normal /stream viewer (320x180
# MJPEG, from 127.0.0.1 too) started before them must get >= 95 % of the
# camera's frames (judged by the X-Frame-Seq of its parts: the capture
# sequence, which restarts when the readers make the camera switch mode);
# the held bytes show as "parts" in /metrics; the drops are logged,
# coalesced. (Started after them, the viewer's new output may get a 503:
# the parts held count in frame_memory.)
# Under ASan the RSS limit is judged over the daemon's RSS before the
# readers came, and the daemon keeps at most 8 MiB of freed memory in its
# quarantine (256 MiB by default: freed frames then count as held, and how
# many depends on the host's load). The daemon picks its own port.
cd "$(dirname "$0")/../.." || exit 2
T=qa_slow_hold
. tests/integ/lib/common.sh
ASAN=; grep -aq __asan_init "$VCAPD" && ASAN=1
[ -n "$ASAN" ] && export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=8"
command -v python3 >/dev/null 2>&1 || { skip all "python3 is not installed"; exit 0; }
N=${HOLD_CLIENTS:-200}
SECS=${HOLD_SECONDS:-50}

start_vcapd_any --device test:1920x1080@15:YUYV || { fail start "vcapd did not start"; exit 1; }
U="http://127.0.0.1:$VPORT"
curl -s -N --max-time $((SECS + 2)) -o "$TMP/viewer.mjpg" "$U/stream?size=320x180" & viewer=$!
PIDS="$PIDS $viewer"
# the viewer's first part, then the baseline
for _i in $(seq 50); do
	grep -aq X-Frame-Seq "$TMP/viewer.mjpg" 2>/dev/null && break
	sleep 0.1
done
base=$(rss_kb "$VPID")
limit=$(((64 + 64) * 1024))
[ -n "$ASAN" ] && limit=$((limit + base))
echo "$T: baseline RSS $base KiB; judging RSS + memfd < $limit KiB"

python3 tests/tools/http_slow_many.py "$VPORT" "/raw/stream?size=1920x1080&format=YUYV" "$N" 0.1 \
	2000 "$SECS" "$VPID" 127.0.0.1 127.0.0.2 127.0.0.3 127.0.0.4 >"$TMP/many.out" &
many=$!
PIDS="$PIDS $many"
# /metrics while the readers hold parts (halfway through)
sleep $((SECS / 2))
parts=$(curl -s "$U/metrics" | sed -n 's/^vcapd_memory_bytes{kind="parts"} \([0-9]*\)$/\1/p')
wait $many
wait $viewer
cat "$TMP/many.out" | sed "s/^/$T: /"
v() { awk -v k="$1" '$1 == k {print $2}' "$TMP/many.out"; }
peak=$(v peak_kib)
check memory_bounded "$([ -n "$peak" ] && [ "$peak" -gt 0 ] && [ "$peak" -lt $limit ]; echo $?)" \
	"peak RSS + memfd ${peak:-?} KiB (RSS $(v peak_rss_kib), memfd $(v peak_memfd_kib)), want < $limit"
check all_joined "$([ "$(v opened)" = "$N" ]; echo $?)" "opened $(v opened) of $N"
check parts_in_metrics "$([ "${parts:-0}" -gt 0 ]; echo $?)" "vcapd_memory_bytes{kind=\"parts\"}: ${parts:-none}"

# the viewer: parts received vs the capture frames from its first to its
# last, over each run of the camera's sequence (a mode switch restarts it)
set -- $(grep -a '^X-Frame-Seq:' "$TMP/viewer.mjpg" | tr -d '\r' |
	awk 'NR > 1 && $2 > p {want += $2 - p} NR > 1 && $2 <= p {want++; runs++}
	     {p = $2; got++} END {print got + 0, want + 1, runs + 1}')
got=$1 want=$2
echo "$T: viewer got $got parts of $want capture frames ($3 runs of the sequence)"
check viewer_frames "$([ "$got" -gt $((SECS * 15 / 2)) ] && [ $((got * 100)) -ge $((want * 95)) ]; echo $?)" \
	"viewer got $got of $want capture frames (want >= 95 %, and more than $((SECS * 15 / 2)))"
echo "$T: dropped: $(sed -n 's/.*stream: \([0-9]*\) .*to send one frame, dropped.*/\1/p' "$VLOG" |
	awk '{n += $1} END {print n + 0}') for age, $(sed -n 's/.*stream: \([0-9]*\) slow stream.*/\1/p' "$VLOG" |
	awk '{n += $1} END {print n + 0}') for memory"
grep -q "to send one frame, dropped\|passed frame_memory" "$VLOG"
check drops_logged $? "$(tail -3 "$VLOG")"
nl=$(grep -c "stream client(s)" "$VLOG")
check drops_coalesced "$([ "$nl" -le $((SECS * 2 + 10)) ]; echo $?)" "$nl drop lines in ${SECS} s"
nm=$(grep -c "mhd:" "$VLOG")
check no_log_flood "$([ "$nm" -le 5 ]; echo $?)" "$nm lines from libmicrohttpd: $(grep -m2 "mhd:" "$VLOG")"

stopped_clean
