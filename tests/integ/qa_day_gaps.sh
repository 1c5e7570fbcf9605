#!/bin/sh
# The day test's gap judge (tests/vm/day_gaps.awk) on made-up timelines: a
# 2 fps camera whose timestamps run 0.45 s ahead of the dequeue (as vivid's
# do), an output encoding each frame in 0.1 s, a viewer at fps=2, a guest
# half busy. Two seconds (frames 40-43) go wrong in one way per case; the
# judge must blame the daemon for frames it dropped or dequeued late, and
# not for frames the camera never made, for an encode the guest's CPU took
# long over, or for a late dequeue while the guest's CPUs were saturated. No
# daemon, no VM: a check of the check, so it cannot quietly stop failing.
cd "$(dirname "$0")/../.." || exit 2
T=qa_day_gaps
. tests/integ/lib/common.sh
t0=1796000000
# make CASE: writes $TMP/CASE.{frames,jobs,parts}
make_case() {
	awk -v c="$1" -v t0=$t0 -v F="$TMP/$1.frames" -v J="$TMP/$1.jobs" -v P="$TMP/$1.parts" \
		-v S="$TMP/$1.samples" 'BEGIN {
		for (i = 0; i < 120; i++) {
			ts = t0 + 0.5 * i; at = ts - 0.44; bad = i >= 40 && i <= 43
			if (c == "camera" && bad) continue
			if ((c == "stall" || c == "starved") && bad) at = t0 + 0.5 * 44 - 0.44
			printf "%d %.6f %.6f\n", i, ts, at >F
			if (bad && c != "normal" && c != "window") {
				if (c == "busy" && i == 40)
					printf "%.6f %.6f\n", at + 0.005, at + 2.0 >J
				continue
			}
			printf "%.6f %.6f\n", at + 0.005, at + 0.1 >J
			printf "%.3f %.6f %d 0\n", at + 0.11, ts, i >P
		}
		for (s = 0; s <= 60; s++) { # the guest 50 % busy, saturated 19-23 s when starved
			idle += (c == "starved" && s > 19 && s <= 23) ? 5 : 100
			printf "%d%s %d %d\n", t0 + s, substr(" x x x x x x x x x x x x x x x x x x", 1, 36), idle, 200 * s >S
		}
	}'
}
judge() { # CASE [WINDOWS [J0 J1]]: "DAEMON BUSY CAMERA WINDOW PARTS MATCHED IDLE HELD DETAIL"
	awk -v lim=1.0 -v rate=2 -v s0=$t0 -v wins="${2:-}" -v j0="${3:-}" -v j1="${4:-}" \
		-f tests/vm/day_gaps.awk "$TMP/$1.frames" "$TMP/$1.jobs" "$TMP/$1.samples" "$TMP/$1.parts"
}
# session NEW CASE PARTS_TO [JOBS_TO [LONG_FROM]]: a client of CASE's
# camera that joined 19.8 s in and left at 25 s, given the parts that came
# before PARTS_TO s and the jobs submitted before JOBS_TO s (plus one job
# from LONG_FROM s past its leaving: the output still working)
j0=$(awk -v t=$t0 'BEGIN { printf "%.3f", t + 19.8 }'); j1=$((t0 + 25))
session() {
	cp "$TMP/$2.frames" "$TMP/$1.frames"; cp "$TMP/$2.samples" "$TMP/$1.samples"
	awk -v a=$j0 -v b=$t0 -v to="$3" '$1 >= a && $1 < b + to' "$TMP/$2.parts" >"$TMP/$1.parts"
	awk -v b=$t0 -v to="${4:-99}" -v lj="${5:-}" '$1 < b + to { print }
		END { if (lj != "") printf "%.6f %.6f\n", b + lj, b + 25.5 }' "$TMP/$2.jobs" >"$TMP/$1.jobs"
}
for c in normal camera busy dropped stall starved window; do make_case $c; done
# "window": frames dropped as in "dropped" but inside a planned disconnect
awk -v t0=$t0 '!($1 > t0 + 19 && $1 < t0 + 22)' "$TMP/window.parts" >"$TMP/w" && mv "$TMP/w" "$TMP/window.parts"
awk -v t0=$t0 '!($1 > t0 + 19 && $1 < t0 + 22)' "$TMP/window.jobs" >"$TMP/w" && mv "$TMP/w" "$TMP/window.jobs"
win="$((t0 + 19)):$((t0 + 23))"
set -- $(judge normal); [ "$1$2$3$4" = 0000 ] && [ "$6" = 120 ]
check normal $? "$*"
set -- $(judge camera); [ "$1" = 0 ] && [ "$3" = 1 ]
check camera_gap_not_blamed $? "$*"
set -- $(judge busy); [ "$1" = 0 ] && [ "$2" = 1 ]
check busy_output_not_blamed $? "$*"
set -- $(judge dropped); [ "$1" = 1 ]
check dropped_frames_blamed $? "$*"
set -- $(judge stall); [ "$1" = 1 ]
check late_dequeue_blamed $? "$*"
set -- $(judge starved); [ "$1" = 0 ] && [ "$2" = 1 ]
check starved_loop_not_blamed $? "$*"
set -- $(judge window "$win"); [ "$1" = 0 ] && [ "$4" = 1 ]
check window_not_judged $? "$*"
# a short session (day.sh's B viewers): its first part judged from its
# request, the wait after its last part up to its leaving
session s_normal normal 99
set -- $(judge s_normal "" $j0 $j1); [ "$1$2$3$4" = 0000 ] && [ "$5" -ge 9 ]
check session_normal $? "$*"
session s_late dropped 99
set -- $(judge s_late "" $j0 $j1); [ "$1" = 1 ] && [ "$5" -ge 5 ]
first=$?
set -- $(judge s_late); [ "$first" = 0 ] && [ "$1" = 0 ]
check session_late_first_blamed $? "with j0/j1: blamed; without: $* (the first part is then not judged)"
session s_tail normal 21.7 21.7
set -- $(judge s_tail "" $j0 $j1); [ "$1" = 1 ] && [ "$5" = 4 ]
check session_tail_blamed $? "$*"
session s_tail_busy normal 21.7 21.7 22.07
set -- $(judge s_tail_busy "" $j0 $j1); [ "$1" = 0 ] && [ "$2" = 1 ]
check session_tail_busy_not_blamed $? "$*"
session s_none normal 0 0
set -- $(judge s_none "" $j0 $j1); [ "$1" = 1 ] && [ "$5" = 0 ]
check session_nothing_blamed $? "$*"
session s_none_busy normal 0 0 20.07
set -- $(judge s_none_busy "" $j0 $j1); [ "$1" = 0 ] && [ "$2" = 1 ]
check session_nothing_busy_not_blamed $? "$*"
