#!/bin/sh
# Memory per anonymous viewer is bounded (issue 14): 20, then 40
# /raw/stream?size=16384x16384&format=<different> from one address against
# the test camera (its native modes reach 4096x4096) with the default budget
# (8 outputs per camera, 64 MiB of output frames). The daemon's RSS is
# sampled throughout and printed; a normal /stream client and snapshot
# probes must be served all along; the refused requests get a JSON error
# naming the limit (503 frame_memory, or 429 max_outputs_per_ip); RSS
# returns near the baseline after they leave.
cd "$(dirname "$0")/../.." || exit 2
T=qa_memory_budget
. tests/integ/lib/common.sh
# Under ASan freed memory sits in its quarantine and everything is slower:
# RSS and rate limits are then printed and skipped, the rest still checked.
ASAN=; grep -aq __asan_init "$VCAPD" && ASAN=1
# rcheck NAME STATUS WHY: check, or a skip under ASan
rcheck() { if [ -n "$ASAN" ]; then skip "$1" "ASan build ($3)"; else check "$@"; fi; }
start_vcapd_any --device test:640x480@30 || { fail start "vcapd did not start"; exit 1; }
U="http://127.0.0.1:$VPORT"
FMTS=$(curl -s "$U/api/cams" | tr '{' '\n' | sed -n 's/^"fourcc":"[^"]*","fourcc_name":"\([^"]*\)","emulated".*/\1/p' |
	grep -v -e MJPEG -e JPEG | sort -u)
nf=$(echo "$FMTS" | grep -c .)
[ "$nf" -ge 20 ]; check formats_listed $? "$nf raw formats"
# baseline: a normal client streams for a moment
curl -s -o /dev/null --max-time 2 "$U/stream"
base=$(rss_kb "$VPID")
echo "$T: baseline RSS ${base} KiB"

# num JSON KEY: the number at "KEY": in JSON, 0 when absent
num() { v=$(echo "$1" | sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p"); echo "${v:-0}"; }

# attack N SECONDS: N raw streams of different formats at 16384x16384 from
# one address while a normal stream and snapshot probes run; peak RSS.
attack() {
	n=$1; i=0; : >"$TMP/codes"
	curl -s -N --max-time $(($2 + 3)) -o "$TMP/normal.bin" "$U/stream" &
	apids=$!
	for f in $(echo "$FMTS" | head -$((n < nf ? n : nf))) $(echo "$FMTS" | head -$((n > nf ? n - nf : 0))); do
		i=$((i + 1))
		# the second round repeats formats with a rotation: still distinct pictures
		rot=0; [ $i -gt "$nf" ] && rot=180
		curl -s -o "$TMP/a$i.out" -w '%{http_code}\n' --max-time "$2" \
			"$U/raw/stream?size=16384x16384&format=$f&rotate=$rot" >>"$TMP/codes" 2>/dev/null &
		apids="$apids $!"
	done
	peak=0; ok=0; probes=0; peak_fs=0; peak_nc=0; cap_at=0
	end=$(($(date +%s) + $2))
	while [ "$(date +%s)" -lt "$end" ]; do
		r=$(rss_kb "$VPID"); [ "${r:-0}" -gt "$peak" ] && peak=$r
		# the daemon's own counts (KiB): frames + scratch + copies is
		# what frame_memory limits; "device" (the test pattern's
		# buffers at the mode the streams chose) is what a camera's
		# driver would hold, outside the daemon
		mem=$(curl -s --max-time 3 "$U/api/status" | grep -o '"memory":{[^}]*}')
		fs=$((($(num "$mem" frames) + $(num "$mem" scratch) + $(num "$mem" copies)) / 1024))
		cap=$(($(num "$mem" device) / 1024))
		[ "$fs" -gt "$peak_fs" ] && peak_fs=$fs
		r2=$(rss_kb "$VPID")
		[ $((r2 - cap)) -gt "$peak_nc" ] && peak_nc=$((r2 - cap)) && cap_at=$cap
		c=$(curl -s -o /dev/null -w '%{http_code}' --max-time 3 "$U/snapshot")
		probes=$((probes + 1)); [ "$c" = 200 ] && ok=$((ok + 1))
		sleep 0.2
	done
	wait $apids # not a bare wait: the daemon is a child too
	parts=$(grep -ac 'Content-Type: image/jpeg' "$TMP/normal.bin")
	n503=$(grep -c '^503' "$TMP/codes"); n200=$(grep -c '^200' "$TMP/codes")
	n429=$(grep -c '^429' "$TMP/codes")
	# the start of each body only: a served one is megabytes of raw
	# frames without a newline (grep ran out of memory on them)
	why=$(for f in "$TMP"/a*.out; do head -c 1024 "$f"; echo; done 2>/dev/null |
		grep -ao '"error":"[^"]*' | sed 's/"error":"//' | sort | uniq -c | sort -rn | head -2 | tr '\n' '|')
	echo "$T: $n streams: peak RSS ${peak} KiB (+$(((peak - base) / 1024)) MiB), served=$n200 refused503=$n503 refused429=$n429 ($why)"
	echo "$T: $n streams: peak frames+scratch+copies $((peak_fs / 1024)) MiB (frame_memory 64 MiB); peak RSS less the test pattern's buffers +$(((peak_nc - base) / 1024)) MiB (those then $((cap_at / 1024)) MiB)"
	echo "$T: $n streams: normal /stream got $parts parts in $(($2 + 3)) s, snapshots $ok/$probes"
	# The budget is checked when an output is admitted, on what is held
	# then plus an estimate of what it will hold, so it can be passed by the
	# estimate's error: 25 % allowed.
	[ "$peak_fs" -le $((64 * 1024 * 5 / 4)) ]
	check "frame_memory_${n}" $? "peak frames+scratch+copies ${peak_fs} KiB"
	# RSS beyond the test pattern's buffers stays within the budget, plus
	# 16 MiB for what is not frames (libjpeg state, connection buffers,
	# the allocator's own). Measured +18..+50 MiB since outputs reuse their
	# result frames (common/pipeline.c); +52..+104 MiB before, when glibc's
	# arenas kept the freed frames of a malloc/free per frame; 1.8-2.6 GB
	# before the budget.
	[ $(((peak_nc - base) / 1024)) -le $((64 + 16)) ]
	rcheck "rss_${n}" $? "peak RSS less device buffers ${peak_nc} KiB, baseline ${base} KiB"
	# refused by a limit that names itself: frame_memory (503) or, when
	# the address's share of distinct pictures is full before the frames
	# are held (an ASan daemon beside a second make test: all 36 refusals
	# of the 40), max_outputs_per_ip (429)
	[ $((n503 + n429)) -ge $((n - 8)) ] && [ -n "$why" ]
	check "refused_${n}" $? "503=$n503 429=$n429 200=$n200: $why"
	# served all along (the CPU the admitted outputs take slows it; the
	# rate is printed): at least one part per second, every snapshot 200
	[ "$parts" -ge $(($2 + 3)) ] && [ "$ok" = "$probes" ] && [ "$probes" -ge 2 ]
	rcheck "normal_served_${n}" $? "stream parts=$parts in $(($2 + 3)) s, snapshots $ok/$probes"
}
attack 20 8
attack 40 8
# after the attackers left: unused outputs linger 10 s, the camera stops
# after 5 s idle (its copies and the test pattern's buffers go with it),
# then what was freed goes back to the system (the gc tick's trim). Judged
# once that is over: the camera idle with no outputs, no frames, copies or
# parts counted (up to 45 s: a loaded host delays it), then RSS still for 2 s
# (up to 10 s). "Near the baseline" is within 12 MiB: glibc's arenas keep
# a free top of up to 4 MiB each (server/main.c). Measured +1..+7 MiB
# beside stress-ng --cpu 3; +10..+32 MiB before three fixes: the trim
# counted the outputs' bytes alone and missed the camera's going idle, the
# idle test pattern kept its converter's scratch at the largest mode (8-14
# MiB), and the arenas' tops stayed (up to 64 MiB each by glibc's
# defaults); 330-430 MB before the budget and the trim.
w=0
while :; do
	mem=$(curl -s --max-time 3 "$U/api/status" | tee "$TMP/status.json" | grep -o '"memory":{[^}]*}')
	grep -q '"state":"idle".*"outputs":\[\]' "$TMP/status.json" && [ -n "$mem" ] &&
		[ $(($(num "$mem" frames) + $(num "$mem" copies) + $(num "$mem" parts))) = 0 ] && break
	[ $w -ge 45 ] && break
	sleep 1; w=$((w + 1))
done
after=$(rss_kb "$VPID"); still=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	sleep 1; r=$(rss_kb "$VPID")
	if [ "$r" = "$after" ]; then still=$((still + 1)); else still=0; fi
	after=$r; [ $still -ge 2 ] && break
done
echo "$T: RSS ${w}+${i} s after the attack ${after} KiB (baseline ${base} KiB): $mem $(grep -o '"heap":{[^}]*}' "$TMP/status.json")"
[ $(((after - base) / 1024)) -lt 12 ]; rcheck rss_returns $? "after ${after} KiB, baseline ${base} KiB, ${w} s to idle: $mem"
c=$(curl -s -o /dev/null -w '%{http_code}' "$U/raw?format=NV12&size=320x240")
[ "$c" = 200 ]; check raw_after $? "a normal raw snapshot: $c"
stop_vcapd; check clean_stop $? "exit status"
grep -q -E 'ERROR: AddressSanitizer|LeakSanitizer|runtime error' "$VLOG"; [ $? != 0 ]
check sanitizer_clean $? "$(grep -m3 -E 'Sanitizer|runtime error' "$VLOG")"
