#!/bin/sh
# A day in the life of one camera (issue 13), in ONE vivid-vm boot: vcapd
# serves vivid's webcam input while, for DAY_S seconds (default 120; `make
# soak` runs 1800 through SOAK_SECONDS), these come and go:
#   A  a 1280x720 /stream client, the whole run
#   R  a raw client (/raw/stream 320x180 at 2 fps), the whole run
#   B  a 640x360 viewer joining for 6 s every 20 s
#   S  a full-size snapshot (size=1920x1080) every 10 s
#   C  churn: a short /stream of random size and quality every 4 s
#   a SIGHUP (config reload with a changed control line) at 40 % of the run,
#   a vivid disconnect (the device goes away and comes back) at 65 %.
# Before that, a /stream without fps on vivid (whose driver starts at 1/5 s)
# must run at the capped default rate, not 5 fps.
# Checks, each printing its numbers: the device mode returns to the stream
# clients' best (1280x720) within 2 s after each transient; A sees no gap
# over 1 s except at a logged mode switch or the disconnect; CPU per
# delivered frame returns to its steady-state figure; RSS and open fds flat
# (+-10 %); outputs without clients freed; every client served to the end.
# Prints "day.<check>: OK|FAIL why". Usage: sh tests/vm/day.sh
cd "$(dirname "$0")/../.." || exit 2
B=${VCAP_BUILD:-build}
VCAPD=${VCAPD:-$B/vcapd}
S=${SOAK_SECONDS:-${DAY_S:-120}}
PORT=18990
# replug cycles after the day: how many, seconds each
RK=${DAY_REPLUGS:-3} RC=16

if [ "${1:-}" = "--guest" ]; then
	out=$2 S=$3
	U=http://127.0.0.1:$PORT
	W=$B/tools/day_watch
	ev() { echo "$(date +%s.%N) $*" >>"$out/events"; }
	# Under TCG (no KVM) vcapd spends ~0.45 s of guest CPU per 720p frame
	# (encode) and vivid renders each frame in the guest kernel: the day's
	# clients ask fps=2 (the device then runs at 2 fps) so that gaps measure
	# the server, not an emulated CPU running behind. The default rate
	# without fps= is checked on its own first.
	F=; [ "${VIVID_VM_ACCEL:-tcg}" = tcg ] && F="&fps=2"
	echo "${VIVID_VM_ACCEL:-?} $F" >"$out/accel"
	# max_outputs_per_ip: every client of the day comes from 127.0.0.1; in a
	# home they are distinct addresses (A, R, B, S and the churn hold up to
	# 6 outputs at once; the default share of 4 refused B and S with 429)
	printf '[server]\nlisten = 127.0.0.1:%s\nmax_outputs_per_ip = 8\n[camera day]\ndevice = /dev/video0\ncontrol = brightness=128\n' \
		$PORT >"$out/c.conf"
	$VCAPD --config "$out/c.conf" --log-level debug >"$out/vcapd.log" 2>&1 &
	vp=$!
	for i in $(seq 150); do
		curl -s -o /dev/null --max-time 2 "$U/api/status" && break
		kill -0 $vp 2>/dev/null || exit 0
		sleep 0.2
	done
	# the default rate: vivid's 640x360 offers up to 40 fps, its driver starts at 1/5 s
	$W stream $PORT "/stream?size=640x360" 6 >"$out/fps.ts" 2>/dev/null &
	fc=$!
	sleep 4
	curl -s --max-time 5 "$U/api/cams/day" >"$out/fps.json"
	wait $fc
	# one sampler process (day_watch: no shell pipeline per sample under TCG)
	$W sample $PORT $vp 1000 "$out/stop" >"$out/samples" &
	sp=$!
	ev start
	t0=$(date +%s)
	# A and R stay through the replug cycles after the day (RK of them, RC s
	# each) and are stopped at the end: the day's length depends on how
	# long its transient clients take (see below), so no fixed duration
	$W stream $PORT "/stream?size=1280x720$F" $((S + RK * RC + 300)) >"$out/A.ts" 2>"$out/A.err" &
	ap=$!
	# R once the camera streams for A: a raw stream that comes first gets
	# the camera at 320x180 at once, and A then waits out the policy's 2 s
	# between switches (one loaded run saw the mode off 1280x720 3 s in)
	for i in $(seq 75); do
		tail -1 "$out/samples" 2>/dev/null | grep -q ' 1280x720 streaming ' && break
		sleep 0.2
	done
	(curl -s -N --max-time $((S + RK * RC + 300)) -D "$out/R.h" "$U/raw/stream?size=320x180&fps=2" &
		echo $! >"$out/R.pid"; wait) | wc -c >"$out/R.bytes" &
	rp=$!
	sizes="320x180 424x240 512x288 640x360 800x450 960x540 1024x576 1280x720"
	# wall-clock seconds since t0, each action when it is due (the guest
	# is slow: a loop turn can take more than a second, no counting of
	# sleeps and no exact seconds); the first 15 s and the last 10 s: A and
	# R alone (CPU's steady state), so each kind starts only if it is over
	# by then (B: 6 s, a churn stream 1.5 s, a snapshot up to a few s on a
	# busy guest; then its output lingers 2 s)
	b=0 last=-1 hup= disc= nb=25 ns=23 nc=21 tp=
	while :; do
		t=$(( $(date +%s) - t0 ))
		[ $t -ge "$S" ] && break
		if [ $t = $last ]; then sleep 0.2; continue; fi
		last=$t
		busy=$([ $t -ge 15 ] && [ $t -le $((S - 14)) ] && echo 1)
		if [ $t -ge $nb ] && [ -n "$busy" ] && [ $t -le $((S - 18)) ]; then
			nb=$((nb + 20))
			b=$((b + 1))
			(ev b_join; $W stream $PORT "/stream?size=640x360$F" 6 >"$out/B$b.ts" 2>"$out/B$b.err"; ev b_leave) &
			tp="$tp $!"
		fi
		if [ $t -ge $ns ] && [ -n "$busy" ]; then
			ns=$((ns + 10))
			(ev snap; curl -s -o /dev/null --max-time 15 -w '%{http_code} %{size_download}\n' \
				"$U/snapshot?size=1920x1080" >>"$out/snaps"; ev snap_done) &
			tp="$tp $!"
		fi
		if [ $t -ge $nc ] && [ -n "$busy" ]; then
			nc=$((nc + 4))
			set -- $sizes
			n=$(( $(od -An -N2 -tu2 /dev/urandom) % 8 + 1 )); eval sz=\${$n}
			q=$(( $(od -An -N1 -tu1 /dev/urandom) % 60 + 40 ))
			curl -s -N -o /dev/null --max-time 1.5 "$U/stream?size=$sz&quality=$q$F" &
			tp="$tp $!"
		fi
		if [ -z "$hup" ] && [ $t -ge $((S * 40 / 100)) ]; then
			hup=1
			sed 's/brightness=128/brightness=100/' "$out/c.conf" >"$out/c2.conf"
			cp "$out/c2.conf" "$out/c.conf"
			ev hup
			kill -HUP $vp
		fi
		if [ -z "$disc" ] && [ $t -ge $((S * 65 / 100)) ]; then
			disc=1
			ev disconnect
			v4l2-ctl -d /dev/video0 -c disconnect=1 2>>"$out/ctl.err"
		fi
	done
	# the steady window at the end (A and R alone) starts when every
	# transient client is done: under TCG on a busy host a curl takes
	# seconds to start, so a churn stream begun in time still came late
	# (a third output in the last window of one run)
	for p in $tp; do wait $p 2>/dev/null; done
	sleep 12
	ev end
	# replug cycles with A and R alone: each a disconnect, RC - 8 s for
	# vivid to come back and the mode to settle, then 8 s of quiet whose
	# RSS and fds are compared cycle to cycle (a leak grows with each)
	for c in $(seq $RK); do
		t=$(date +%s)
		ev replug
		v4l2-ctl -d /dev/video0 -c disconnect=1 2>>"$out/ctl.err"
		w=$((t + RC - 8 - $(date +%s))); [ $w -gt 0 ] && sleep $w
		ev quiet
		w=$((t + RC - $(date +%s))); [ $w -gt 0 ] && sleep $w
		ev quiet_end
	done
	sleep 2
	touch "$out/stop"
	wait $sp
	curl -s --max-time 5 "$U/api/status" >"$out/end.json"
	kill $ap "$(cat "$out/R.pid")" 2>/dev/null
	wait $ap
	wait $rp 2>/dev/null
	kill -TERM $vp
	wait $vp
	echo $? >"$out/exit"
	exit 0
fi

if [ ! -x "$VCAPD" ] || [ ! -x "$B/tools/day_watch" ]; then
	echo "day.build: FAIL $VCAPD or $B/tools/day_watch not built (make all)"
	exit 1
fi
# DAY_KEEP=1 keeps the raw data (samples, events, logs) for a look;
# DAY_REJUDGE=DIR judges such kept data again without a boot
if [ -n "${DAY_REJUDGE:-}" ]; then
	work=$DAY_REJUDGE rc=0
else
	work=$(mktemp -d "$PWD/build/vm-day.XXXXXX") || exit 2
	[ -n "${DAY_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT INT TERM
	../shared/vm/vivid-vm --timeout $((S + RK * RC + 300)) --vivid "n_devs=1 node_types=0x1" \
		-e DAY_REPLUGS="$RK" -- sh "$0" --guest "$work" "$S" >"$work/out" 2>"$work/vm.err"
	rc=$?
fi
cat "$work/out"
if [ $rc != 0 ]; then
	echo "day.vm: FAIL vivid-vm exit $rc: $(tail -3 "$work/vm.err" | tr '\n' ' ')"
	exit 1
fi
failed=0
res() { if [ "$2" = 0 ]; then echo "day.$1: OK $3"; else echo "day.$1: FAIL $3"; failed=1; fi; }
calc() { awk "BEGIN { printf \"%.3f\", $* }"; }
L=$work/vcapd.log
E=$work/events
evt() { awk -v k="$1" '$2 == k { print $1 }' "$E"; }
t_start=$(evt start); t_end=$(evt end); t_disc=$(evt disconnect); t_hup=$(evt hup)
# log_at TEXT: "EPOCH REST" per log line with TEXT, REST what follows it
# (the log prints local time)
log_at() {
	grep "$1" "$L" | while read -r d tm rest; do
		echo "$(date -d "$d $tm" +%s.%N) ${rest#*"$1"}"
	done
}
# mode switches as epoch seconds
log_at 'stream: cam day: mode ' >"$work/switches"

# ---- the rate without fps= on vivid
iv=$(sed -n 's/.*"mode":{[^}]*"interval":\[\([0-9]*\),\([0-9]*\)\].*/\1\/\2/p' "$work/fps.json")
parts=$(wc -l <"$work/fps.ts")
fps=$(awk -v p="$parts" 'BEGIN { printf "%.1f", p / 6 }')
# the switch the lone 640x360 client made, as logged (the sample at 4 s may
# come after it left on a slow guest)
sw=$(grep -m1 'stream: cam day: mode .* -> [^ ]* 640x360 [0-9/]* s (streams: 1 stream' "$L" | sed 's/.* -> //')
# delivered frames say more about the guest's CPU than about the policy
# under TCG: asserted (more than vivid's 5) only under KVM
accel=$(cut -d' ' -f1 "$work/accel")
echo "$sw" | grep -q ' 640x360 1/30 s ' && { [ "$accel" != kvm ] || awk -v f="$fps" 'BEGIN { exit !(f > 5) }'; }
res default_rate $? "/stream?size=640x360 without fps: switch to '$sw' (vivid starts at 1/5 s), /api/cams at 4 s: interval $iv s; $parts parts in 6 s = $fps fps delivered (asserted > 5 under KVM only; guest $accel)"

# ---- the mode returns to the streams' best within 2 s after each transient;
# while the camera streams and no transient is under way, it is that mode
# transients: B leaving, the HUP, the disconnect (from the first sample
# streaming again after it). S's 1920x1080 snapshot every 10 s is a poller
# (issue 21): from its first request until 75 s (the linger) + 5 s after
# its last answer the mode may be the one that serves it, 1920x1080.
# back_after D: the first sample streaming again after the device was seen
# away after D (on a loaded guest the daemon saw one disconnect 1.4 s late:
# samples said "streaming" for a second after it, and a window ending 3 s
# after that closed 7 s before the device came back), else after D + 0.5
back_after() {
	awk -v d="$1" '$1 > d + 0.5 && $3 != "streaming" && a == "" { a = $1 }
		$1 > d + 0.5 && $3 == "streaming" { if (f == "") f = $1; if (a != "" && $1 > a) { print $1; done = 1; exit } }
		END { if (!done && f != "") print f }' "$work/samples"
}
t_back=$(back_after "$t_disc")
p0=$(evt snap | sort -n | head -1); p1=$(evt snap_done | sort -n | tail -1)
{
	for k in b_leave hup; do evt $k | sed "s/\$/ $k/"; done
	[ -n "$t_back" ] && echo "$t_back disconnect"
} | sort -n >"$work/transients"
worst=$(awk -v p0="${p0:-0}" -v p1="${p1:--999}" 'NR == FNR { t[++n] = $1; k[n] = $2; next }
	{ s[++m] = $1; md[m] = $2; st[m] = $3 }
	END {
		w = 0; wk = "none"; bad = 0
		for (i = 1; i <= n; i++) {
			# the first sample back on 1280x720 after the event, counted
			# only when some sample after the event was off it
			back = -1; off = 0
			for (j = 1; j <= m; j++) {
				# "none": the sampler got no answer (a starved guest), not a mode
				if (s[j] < t[i] || st[j] == "none") continue
				if ((md[j] == "1280x720" || (md[j] == "1920x1080" && s[j] >= p0 && s[j] <= p1 + 80)) &&
				    st[j] == "streaming") { back = off ? s[j] - t[i] : 0; break }
				off = 1
			}
			if (back < 0) { bad++; continue }
			if (back > w) { w = back; wk = k[i] }
		}
		printf "%.2f %s %d %d", w, wk, bad, n
	}' "$work/transients" "$work/samples")
set -- $worst
# from A's mode's first sample on (A's join is a transient too: the device
# restart for it took 4.5 s on a guest beside a CPU hog, 3.5 s still on the
# default mode)
t_a=$(awk -v s0="$t_start" '$1 > s0 && $2 == "1280x720" && $3 == "streaming" { print $1; exit }' "$work/samples")
off=$(awk -v d="$t_disc" -v b="${t_back:-0}" -v s0="${t_a:-$t_start}" -v e="$t_end" -v p0="${p0:-0}" -v p1="${p1:--999}" '
	$1 > s0 && $1 < e && !($1 >= d - 0.5 && $1 <= b + 2.5) && $3 == "streaming" && $2 != "1280x720" &&
	!($2 == "1920x1080" && $1 >= p0 && $1 <= p1 + 80) { n++ }
	END { print n + 0 }' "$work/samples")
[ "$3" = 0 ] && awk -v w="$1" 'BEGIN { exit !(w <= 2.0) }' && [ "$off" = 0 ] && [ -n "$t_a" ]
res mode_returns $? "A's mode streaming $([ -n "$t_a" ] && calc "$t_a - $t_start" || echo never) s after its start; after $4 transients the mode was 1280x720 (1920x1080 while the snapshot poller lingers) again within $1 s at worst ($2), $3 never; $off samples off those outside the disconnect window; $(wc -l <"$work/switches") switches logged: $(cut -d' ' -f2- "$work/switches" | tr '\n' ';' | head -c 600)"

# ---- A: no gap over 1 s that the daemon caused. At fps=2 (TCG) frames
# are 0.5 s apart, so one frame vivid's late timer thread never produced
# makes a 1.0 s gap and two 1.5 s, and on a busy host the guest's encode of
# a 720p frame takes longer than the frame interval (CPU per frame 97 ms in
# one run, 342 ms in the next; snapshots took up to 6 s): wall time alone
# blamed the daemon for the emulated guest (gaps of 1.00-1.42 s in 2 of 3
# runs before this check). Each gap over 1 s is judged against the
# capture's own timeline and A's output's jobs, both from the debug log
# (tests/vm/day_gaps.awk says how): the daemon's share is the time it held
# a frame A was due for while A's output was not working on one and the
# guest's CPUs were not saturated (a stalled loop, a switch or an output
# that dropped frames, a stalled send), and it must stay under the same
# 1 s. Gaps whose due frame was held 1 s or less
# (the camera's interval, A's 0.45 s fps limit and the encode add up to
# 1.0-1.35 s on a loaded host) or held with the output working (the
# guest's CPU) are printed with their lengths. Around the planned disconnects (from 1 s before to 3 s
# after the first streaming sample after each) the device is away: those
# gaps are printed, not judged.
grep ' frame seq [0-9]* ts ' "$L" | awk '{ print $(NF - 4), $(NF - 2), $NF }' >"$work/frames"
grep ': output 1280x720 q80: frame ts ' "$L" | awk '{ print $(NF - 6), $(NF - 2) }' >"$work/jobs"
wins=$(for d in $t_disc $(evt replug); do
	b=$(back_after "$d")
	echo "$(calc "$d - 1"):$(calc "${b:-$d} + 3")"
done | tr '\n' ' ')
rate=0; [ -n "$(cut -d' ' -f2 "$work/accel")" ] && rate=2
set -- $(awk -v lim=1.0 -v rate=$rate -v s0="$t_start" -v wins="$wins" -f tests/vm/day_gaps.awk \
	"$work/frames" "$work/jobs" "$work/samples" "$work/A.ts")
# the camera's real frame interval in this guest: dequeue to dequeue while
# A watched, outside the disconnect
ivs=$(awk -v s0="$t_start" -v e="$t_end" -v d="$t_disc" '$3 > s0 + 2 && $3 < e {
	if ($3 > d - 1 && $3 < d + 6) { p = ""; next }
	if (p != "") print $3 - p; p = $3 }' "$work/frames" | sort -n |
	awk '{ v[NR] = $1 } END { k = int(NR * 0.99) + 1; if (k > NR) k = NR
		if (NR) printf "median %.3f s, p99 %.3f s, max %.3f s (%d)", v[int((NR + 1) / 2)], v[k], v[NR], NR; else printf "none" }')
[ "$1" = 0 ] && [ "$5" -gt 0 ] && [ "$6" -gt $(($5 / 2)) ]
res no_gap $? "A got $5 parts ($6 matched to captured frames); gaps over 1 s: $1 the daemon's, $2 with the output working or the guest's CPUs saturated, $3 with no due frame held over 1 s (the camera's interval, A's fps limit, the encode), $4 at a disconnect; a due frame held with the output idle $7 s at worst (limit 1 s), held at all $8 s; camera intervals $ivs; gap/held/idle s@s since A's start: $9"

# ---- CPU per delivered frame: steady window early vs the end (A and R only
# streaming; B and the churn between times)
cpu_pf() { # FROM TO (epoch): ms of CPU per frame of A
	awk -v a="$1" -v b="$2" 'NR == FNR { if ($1 >= a && $1 <= b) f++; next }
		$1 >= a && c0 == "" { c0 = $4; t0 = $1 } $1 <= b { c1 = $4 }
		END { printf "%.1f", f ? (c1 - c0) * 10 / f : -1 }' "$work/A.ts" "$work/samples"
}
# Under TCG the guest's CPU time of a frame moves with the host's load (a
# descheduled vCPU's time is charged to whatever ran in the guest): x1.5
# failed 2 of 5 runs on this loaded host with the same work (97 -> 158,
# 126 -> 245 ms). So under TCG the work itself must return: the outputs
# that ran jobs (converts/encodes, from the debug log) and the jobs per
# frame the camera delivered, which an output left encoding after its
# clients or a second encode of A's picture would raise (an extra output at
# the camera's rate is +1 job per frame on a steady 2); CPU time is
# printed, and asserted (x1.5) under KVM. Per frame of the camera, not of
# A: beside a CPU hog A's output, encoding the poller's 1080p mode down to
# 720p for 4-5 s a frame at the end, delivered a third of its frames while
# R's cheap output kept the camera's rate (2.78 and 3.00 jobs per frame of
# A from 1.87 and 1.75: the same work). A busy output skips frames, so load
# lowers jobs per camera frame, early as much as late (1.28 -> 1.75 in one
# loaded run): the end is held to its bound, at most one job per output
# with jobs early per camera frame (+0.25 for the windows' edges), not to
# the early figure.
work_pf() { # FROM TO (epoch): "JOBS_PER_CAMERA_FRAME OUTPUTS_WITH_JOBS"
	awk -v a="$1" -v b="$2" 'FILENAME == ARGV[1] { if ($3 >= a && $3 <= b) f++; next }
		/ output [0-9]*x[0-9]* q[0-9]*: frame ts / && $(NF - 6) >= a && $(NF - 6) <= b {
			j++; for (i = 1; i < NF; i++) if ($i == "output") o[$(i + 1) $(i + 2)] = 1 }
		END { n = 0; for (k in o) n++; printf "%.2f %d", f ? j / f : -1, n }' "$work/frames" "$L"
}
w1=$(cpu_pf "$(calc "$t_start + 5")" "$(calc "$t_start + 14")")
w2=$(cpu_pf "$(calc "$t_end - 9")" "$(calc "$t_end - 1")")
set -- $(work_pf "$(calc "$t_start + 5")" "$(calc "$t_start + 14")") $(work_pf "$(calc "$t_end - 9")" "$(calc "$t_end - 1")")
if [ "$accel" = kvm ]; then
	awk -v a="$w1" -v b="$w2" 'BEGIN { exit !(a > 0 && b > 0 && b <= a * 1.5) }'
else
	awk -v a="$1" -v b="$3" -v x="$2" -v y="$4" 'BEGIN { exit !(a > 0 && b > 0 && b <= x + 0.25 && y <= x) }'
fi
res cpu_per_frame $? "A and R alone, 5-14 s (steady) vs the last 8 s after the day: jobs per camera frame $1 -> $3 (limit: one per output with jobs early, +0.25, under TCG), outputs with jobs $2 -> $4 (no more); CPU per frame of A $w1 -> $w2 ms (limit x1.5 under KVM; guest $accel)"

# ---- no leak: RSS, heap, fds. Over the day RSS swings with the clients
# there (each output's pipeline scratch and frames) and with what glibc
# keeps of freed blocks (budget.c trims only after 8 MiB were freed): one
# run's RssAnon went 3-18 MiB with A and R plus whoever else, so the medians
# of two windows (45-55 % of the run vs the last 10 %, +-10 %: the check
# before this one) differed by +4..+11 MiB by chance, and the replug was
# blamed. A leak grows with every cycle of what leaks: the churn's outputs
# are counted below (outputs_freed); the replug is repeated RK times after
# the day with the same clients (A and R alone), and a quiet window after
# each is compared, the 2nd replug's (the day's was the 1st: one-off memory
# such as scratch sized at the first reopen may come then) to the last's.
# What a leak there would grow: the heap's bytes in use (mallinfo2, in
# /api/status; RSS also holds freed blocks glibc keeps and, in the guest,
# whatever khugepaged backs with 2 MiB pages: it rose in 2 MiB steps
# 35.8 -> 37.8 -> 41.4 MiB over 3 quiet windows of one run with the bytes
# in use flat at 6.46-6.48 MiB), file-backed RSS (capture buffers left
# mapped), fds other than sockets and memfds (connections and a stream
# part's memfd per frame come and go: all fds moved 20 <-> 21 within one
# quiet window), threads. Each is the floor of its window; the heap's may still move by a frame left in
# flight (a 1280x720 frame is 1.8 MiB): at most 2 MiB over the cycles; a
# leaked session (4+ capture buffers, an fd) or a leaked output frame per
# cycle goes past it. RSS is printed with the heap's freed-but-kept bytes,
# the anonymous huge pages and the pooled copies.
med() { # FROM TO COLUMN
	awk -v a="$1" -v b="$2" -v c="$3" '$1 >= a && $1 <= b { print $c }' "$work/samples" | sort -n |
		awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }'
}
d=$(calc "$t_end - $t_start")
a0=$(calc "$t_start + $d * 0.45"); a1=$(calc "$t_start + $d * 0.55")
b0=$(calc "$t_end - $d * 0.10")
r1=$(med "$a0" "$a1" 5); r2=$(med "$b0" "$t_end" 5)
qs=$(evt quiet); qe=$(evt quiet_end)
# column 23: the heap in use less the capture copies the camera's pool
# keeps (common/pool.c: up to 4 frames, 7 MiB at 1280x720, kept or not by
# chance: one run's window held 3 of them, +5.4 MiB, and the next none)
awk '{ for (i = NF + 1; i <= 22; i++) $i = 0; print $0, $16 - $19 }' "$work/samples" >"$work/samples.x"
lo() { # FROM TO COLUMN: the window's floor (frames in flight and
	# connections come and go; what leaked stays)
	awk -v a="$1" -v b="$2" -v c="$3" '$1 >= a && $1 <= b && (m == "" || $c < m) { m = $c } END { print m + 0 }' "$work/samples.x"
}
mx() { # FROM TO COLUMN: the window's median, of samples.x
	awk -v a="$1" -v b="$2" -v c="$3" '$1 >= a && $1 <= b { print $c }' "$work/samples.x" | sort -n |
		awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }'
}
i=0
for q in $qs; do # RSS HEAP RSS_FILE FDS THREADS HEAP_FREE_KEPT ANON_HUGE per window
	i=$((i + 1)); e=$(echo $qe | cut -d' ' -f$i)
	echo "$(mx "$q" "$e" 5) $(lo "$q" "$e" 23) $(lo "$q" "$e" 13) $(lo "$q" "$e" 22) $(lo "$q" "$e" 15) $(mx "$q" "$e" 17) $(mx "$q" "$e" 18) $(mx "$q" "$e" 19) $(lo "$q" "$e" 8) $(mx "$q" "$e" 6)"
done >"$work/cycles"
nq=$(grep -c . "$work/cycles")
set -- $(head -1 "$work/cycles"); q1r=$1 q1h=$2 q1m=$3 q1f=$4 q1t=$5
set -- $(tail -1 "$work/cycles"); qnr=$1 qnh=$2 qnm=$3 qnf=$4 qnt=$5
# each window must have had A and R streaming (a window without them
# measures an idle camera: no check at all)
[ "$(awk '$9 < 2' "$work/cycles" | wc -l)" = 0 ] &&
	[ "$nq" = "$RK" ] && [ "$nq" -ge 2 ] && [ "$q1h" -gt 0 ] && [ $((qnh - q1h)) -le 2048 ] &&
	[ "$qnm" -le $((q1m + 1024)) ] && [ "$qnf" -le "$q1f" ] && [ "$qnt" -le "$q1t" ]
res rss_fds_flat $? "after replugs 2..$((nq + 1)) (A and R alone; floors of each quiet window): heap in use less pooled copies $q1h -> $qnh KiB (limit +2048), file-backed RSS $q1m -> $qnm KiB (limit +1024), fds other than sockets and memfds $q1f -> $qnf, threads $q1t -> $qnt (no growth); RSS (median) $q1r -> $qnr KiB (printed); per window RSS/heap-less-copies/file/fixed-fds/threads/heap-free-kept/anon-huge-pages/copies/clients (at least 2)/all-fds (median): $(tr '\n' ';' <"$work/cycles"); over the day RSS $((r1 / 1024)) -> $((r2 / 1024)) MiB (medians at 45-55 % and in the last 10 %, printed)"

# ---- outputs without clients freed: at any moment at most one output per
# kind of client that can be there at once (A, R, B, a churn stream and a
# snapshot: 5; each freed 2 s after its client left), so the count stays
# flat; before the fix it grew with every churn stream (86 after 4 minutes)
om=$(awk -v b="$b0" '$1 >= b { if ($7 > m) m = $7 } END { print m + 0 }' "$work/samples")
oa=$(awk '{ if ($7 > m) m = $7 } END { print m + 0 }' "$work/samples")
[ "$om" -le 5 ] && [ "$oa" -le 12 ]
res outputs_freed $? "at most $om outputs in the last 10 % of the run, $oa at any time"

# ---- every client served to the end. B's 6 s sessions are judged on the
# guest's timeline, not counted against the wall clock: beside a CPU hog the
# TCG guest encoded A's frames 2.5-3.5 s apart while B watched (the output
# working, or the guest's CPUs saturated), so "5 of B's 12 frames" failed
# runs whose every frame went out when it was made (2 and 3 frames). Each B
# session, from its request to its leaving (day_watch's own times): it got a
# frame, no gap the daemon caused (day_gaps.awk, its first part judged from
# its request and the wait after its last up to its leaving), and as many
# frames as A got meanwhile but 2 (its join, the window's edges: a 640x360
# stream costs less than A's 720p). The count is what catches B starved
# beside A on a loaded host, where the guest's CPUs are saturated for half
# the day and the gap judge excuses those spans (an output planted to drop
# 3 of 4 frames, beside stress-ng: B got 3 of A's 7, 6, 5, no gap blamed).
grep ': output 640x360 q80: frame ts ' "$L" | awk '{ print $(NF - 6), $(NF - 2) }' >"$work/jobsB"
bbad=0 bdet= nb=0
for f in "$work"/B*.ts; do
	nb=$((nb + 1))
	set -- $(sed -n 's/^# parts [0-9]* bytes [0-9]* from \([0-9.]*\) to \([0-9.]*\)$/\1 \2/p' "${f%.ts}.err" 2>/dev/null)
	if [ -z "${2:-}" ]; then
		bbad=1 bdet="$bdet ${f##*/}: no session ($(head -c 80 "${f%.ts}.err" 2>/dev/null));"
		continue
	fi
	j0=$1 j1=$2
	na=$(awk -v a="$j0" -v b="$j1" '$1 >= a && $1 <= b' "$work/A.ts" | wc -l)
	set -- $(awk -v lim=1.0 -v rate=$rate -v s0="$j0" -v wins="$wins" -v j0="$j0" -v j1="$j1" \
		-f tests/vm/day_gaps.awk "$work/frames" "$work/jobsB" "$work/samples" "$f")
	{ [ "$5" -ge 1 ] && [ "$5" -ge $((na - 2)) ] && [ "$1" = 0 ]; } || bbad=1
	bdet="$bdet ${f##*/}: $5 parts (A $na) in $(calc "$j1 - $j0") s, gaps over 1 s $1 the daemon's $2 busy $3 camera's $4 at a disconnect, worst idle hold $7 s ($9);"
done
lastA=$(tail -1 "$work/A.ts" | cut -d' ' -f1); rb=$(cat "$work/R.bytes" 2>/dev/null)
rw=$(tr -d '\r' <"$work/R.h" | sed -n 's/^X-Width: //p'); rh=$(tr -d '\r' <"$work/R.h" | sed -n 's/^X-Height: //p')
rmin=$(( (S - 20) * 320 * 180 * 2 )) # half of 2 fps
sn=$(wc -l <"$work/snaps"); s200=$(grep -c '^200 ' "$work/snaps")
# a snapshot asked while the camera was away (a window around a planned
# disconnect; beside a CPU hog the guest's vivid took 10 s to come back)
# is answered 503 "absent" at once: not a client left unserved
sab=$(log_at 'http: GET /snapshot -> 503 camera day is absent' | awk -v wins="$wins" '{ n = split(wins, w, " ")
	for (i = 1; i <= n; i++) { split(w[i], x, ":"); if ($1 >= x[1] && $1 <= x[2]) { k++; break } } }
	END { print k + 0 }')
awk -v a="$lastA" -v e="$t_end" 'BEGIN { exit !(a >= e - 2) }' && [ "${rb:-0}" -ge "$rmin" ] &&
	[ "$rw"x"$rh" = 320x180 ] && [ "$nb" -ge 2 ] && [ "$bbad" = 0 ] && [ "$sn" -ge $(((S - 25) / 10 - 1)) ] && [ $((s200 + sab)) = "$sn" ]
res clients_served $? "A's last frame $(calc "$lastA - $t_end") s from the end; R ${rw}x$rh $rb bytes (>= $rmin); $nb B sessions (each: a frame, none of its gaps the daemon's, A's frames meanwhile but 2):$bdet snapshots $s200/$sn 200, $sab 503 while the camera was away"

grep -q 'control brightness = 100' "$L" && grep -qi 'reload' "$L"
res hup $? "$(grep -i 'reload\|brightness' "$L" | tail -2 | cut -c 1-160 | tr '\n' ' ')"
[ "$(cat "$work/exit" 2>/dev/null)" = 0 ]
res clean_exit $? "exit status $(cat "$work/exit" 2>/dev/null)"
exit $failed
