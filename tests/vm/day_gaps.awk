# Gaps a stream client saw, told apart by who caused them (tests/vm/day.sh).
# Input files, in this order:
#   1. the capture's timeline: "SEQ TS AT" per frame the daemon dequeued
#      (its debug log: driver sequence, capture timestamp, dequeue time;
#      epoch seconds)
#   2. the client's output's jobs: "SUBMITTED FINISHED" per frame it
#      converted/encoded (the debug log: submitted to the workers, finished
#      on a worker; epoch s), in submission order
#   3. day_watch's samples: column 1 the epoch time, 20 and 21 the guest's
#      idle and all CPU jiffies
#   4. the client's parts: "ARRIVAL TS SEQ PLACEHOLDER" (day_watch stream)
# Variables: lim (s: the longest gap a viewer may see), rate (the client's
# fps= limit, 0 for none), s0 (epoch s: the client's start), wins ("FROM:TO
# ..." in epoch s: the windows around the planned disconnects, where the
# device is away and gaps are reported, not judged); for a short session,
# j0 and j1 (epoch s: when its request was sent and when it stopped
# reading): the first part is then judged as a gap from j0 (due: the first
# frame dequeued after j0, which a joining client starts with) and the wait
# after the last part as one up to j1 (a frame due before j1 and never
# sent); without them both are left out (a client watching for the
# whole run).
# A gap over lim is the daemon's when it held a frame the client was due
# for longer than lim without working on it. Held: from the moment the
# first frame newer than the client's last one could have been dequeued
# (its capture timestamp plus the smallest dequeue-minus-timestamp offset
# seen: vivid's timestamps are ideal times, ~0.9 frame interval from its
# fill) or the client's rate limit let it take one, whichever is later, to
# the arrival of the next part. Working: the output had a frame queued for
# or running on a worker (an encode on the guest's CPU; under TCG on a busy
# host it takes longer than the frame interval, and frames that come
# meanwhile wait), or the guest's CPUs were 90 % busy or more between two
# samples (the loop thread then waits for a CPU: one loaded run's loop
# picked up finished jobs 0.75 s late while curl started, which takes
# seconds of CPU under TCG). A loop that did not dequeue or pick up a finished frame,
# an output or switch that dropped frames it had, a send that stalled: held
# and not working, the daemon's. A gap whose due frame was held lim or
# less is the frame interval, the client's rate limit and the encode; one
# with no frame to deliver is the camera's (under TCG vivid's timer thread
# runs late and skips sequence numbers): printed, not the daemon's fault.
# Prints one line: "DAEMON_GAPS BUSY_GAPS CAMERA_GAPS WINDOW_GAPS PARTS
# MATCHED WORST_IDLE_HELD WORST_HELD DETAIL", DETAIL the gaps over lim as
# "gap/held/idle s@s-since-s0:kind", kind d (the daemon's: held idle over
# lim), b (held over lim, but working or the guest saturated: its CPU), c (held lim or
# less: the camera's interval, the rate limit, the encode), w (in a window).
BEGIN { nw = split(wins, wl, " "); for (i = 1; i <= nw; i++) { split(wl[i], x, ":"); wf[i] = x[1]; wt[i] = x[2] } }
FILENAME == ARGV[1] {
	n++; at[n] = $3; cts[n] = $2; idx[$2] = n
	if ($3 >= s0 && (base == "" || $3 - $2 < base)) base = $3 - $2
	next
}
FILENAME == ARGV[2] { nj++; js[nj] = $1; je[nj] = $2; next }
FILENAME == ARGV[3] { # the guest saturated between two samples
	if (pt != "" && $21 > ptot && 1 - ($20 - pidle) / ($21 - ptot) >= 0.9) { ns++; ss[ns] = pt; se[ns] = $1 }
	pt = $1; pidle = $20; ptot = $21
	next
}
function busy_in(f, t,   x, i, k, b) { # seconds of [f, t] a job or a saturated guest covered
	b = 0; i = 1; k = 1
	for (x = f; x < t; x += 0.01) {
		while (i <= nj && je[i] < x) i++
		while (k <= ns && se[k] < x) k++
		if ((i <= nj && js[i] <= x) || (k <= ns && ss[k] <= x)) b += 0.01
	}
	return b
}
function due_at(pk, pr,   e, r) { # when the client could have had a newer frame
	e = cts[pk + 1] + base; if (at[pk + 1] < e) e = at[pk + 1]
	r = pr + (rate > 0 ? 0.9 / rate : 0)
	return e > r ? e : r
}
function hold_to(t) { # held and idle: the client's next frame due (pk, pr) until t
	d0 = due_at(pk, pr)
	held = t - d0
	idle = held > 0 ? held - busy_in(d0, t) : 0
}
function join(   k) { # a joining client: its first frame (the first dequeued after j0) is due from j0
	joined = 1
	if (j0 == "") return
	for (k = 0; k < n && at[k + 1] <= j0; k++);
	pk = k; pr = j0 - (rate > 0 ? 0.9 / rate : 0); pa = j0
}
function judge(a, held, idle,   i, inw, kind) { # a gap ending at a over lim
	inw = 0
	for (i = 1; i <= nw; i++) if (a >= wf[i] && (pa == "" ? a : pa) <= wt[i]) inw = 1
	if (!inw && held > worsth) worsth = held
	if (!inw && idle > worst) worst = idle
	if (pa != "" && a - pa > lim) {
		kind = inw ? "w" : idle > lim ? "d" : held > lim ? "b" : "c"
		nk[kind]++
		det = det sprintf("%s%.2f/%.2f/%.2f@%.0f:%s", sep, a - pa, held, idle, pa - s0, kind)
		sep = ","
	}
}
FILENAME == ARGV[4] {
	if (!joined) join()
	parts++
	a = $1
	real = ($4 == 0 && ($2 in idx))
	matched += real
	held = idle = 0
	if (real && pk && idx[$2] > pk) hold_to(a)
	judge(a, held, idle)
	pa = a
	if (real) { pk = idx[$2]; pr = a }
}
END {
	if (!joined) join() # no part came
	if (j1 != "") { # the wait after the last part (or since j0)
		held = idle = 0
		if (pk && pk < n && at[pk + 1] < j1) hold_to(j1)
		judge(j1, held, idle)
	}
	printf "%d %d %d %d %d %d %.2f %.2f %s\n", nk["d"], nk["b"], nk["c"], nk["w"], parts, matched,
	worst, worsth, det == "" ? "none" : det }
