#!/bin/sh
# Runs test suites and counts their one-line results ("name: OK", "name: FAIL ...",
# "name: SKIP why"). A test program that exits non-zero without printing a FAIL
# line is counted as one failure, so a crash can never pass silently.
#   sh tests/run-all.sh [unit|build-asan|unit-asan|integ|integ-asan|integ-both|build-cross|cross|deb|vm|fuzz]...
# VCAP_BUILD selects the build directory for "unit" and "integ" (default build).
# The default order puts fast results first: a slow build that fails late (a
# cross package a mirror cannot give) leaves every result before it.
cd "$(dirname "$0")/.." || exit 2
BUILD=${VCAP_BUILD:-build}
LOGDIR=build/test-logs
mkdir -p "$LOGDIR"
pass=0 fail=0 skip=0
# every FAIL line, repeated at the end: CI shows only the tail of a long run
FAILS="$LOGDIR/failures.txt"
# a nested run (integ-both's second lane) adds to its parent's lists
if [ -z "${VCAP_RUN_NESTED:-}" ]; then
	: >"$FAILS"
	: >"$LOGDIR/durations.txt"
fi

# run_one NAME TIMEOUT CMD...: run, print its output, count its results.
run_one() {
	name=$1 t=$2; shift 2
	log="$LOGDIR/$(echo "$name" | tr '/ ' '__').log"
	t1=$(date +%s)
	timeout -k 10 "$t" "$@" >"$log" 2>&1
	rc=$?
	echo "  $name took $(($(date +%s) - t1)) s" >>"$LOGDIR/durations.txt"
	cat "$log"
	p=$(grep -cE ': OK( |$)' "$log"); f=$(grep -cE ': FAIL( |$)' "$log")
	s=$(grep -cE ': SKIP( |$)' "$log")
	grep -E ': FAIL( |$)' "$log" | sed "s|^|[$name] |" >>"$FAILS"
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "$name: FAIL (exit status $rc$( [ "$rc" = 124 ] && echo ', timed out'))" | tee -a "$FAILS"
		f=1
	fi
	pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
}

unit() { # $1 = build dir
	if ! ls "$1"/tests/test_* >/dev/null 2>&1; then
		echo "unit[$1]: FAIL no unit test built in $1" | tee -a "$FAILS"; fail=$((fail + 1)); return
	fi
	for t in "$1"/tests/test_*; do
		[ -x "$t" ] || continue
		run_one "$t" 600 "$t"
	done
}

# integ BUILD [lane|solo]: the integration tests against BUILD's daemon; a
# lane leaves out the tests marked "# solo:" (they judge absolute latency and
# need the machine to themselves), solo runs only those.
integ() {
	if [ ! -x "$1/vcapd" ]; then
		echo "integ[$1]: FAIL no daemon built in $1" | tee -a "$FAILS"; fail=$((fail + 1)); return
	fi
	for t in tests/integ/*.sh; do
		[ -f "$t" ] || continue
		case ${2:-all},$(grep -c '^# solo:' "$t") in lane,[1-9]*|solo,0) continue ;; esac
		VCAPD="$1/vcapd" VCAP_BUILD="$1" run_one "$t[$1]" 900 sh "$t"
	done
}

# integ_asan [lane|solo]: integ against the ASan build, with its options
integ_asan() {
	ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1 UBSAN_OPTIONS=print_stacktrace=1 \
		integ build/asan "$@"
}

# integ_both: the plain and the ASan integration suites side by side. Their
# tests mostly wait (on a frame clock, a policy window, a browser), so two
# lanes take little more wall time than one; CI's 90 minutes need it. The
# ASan lane runs in its own network namespace: the lanes then share no port a
# daemon takes by default (RTSP's 8554; HTTP ports are picked by the daemons).
integ_both() {
	lane="$LOGDIR/lane-integ-asan.out"
	if ! unshare -n sh -c 'ip link set lo up' 2>/dev/null; then
		echo "integ-both: no network namespace here (unshare -n, ip): the lanes run one after the other"
		integ "$BUILD"
		integ_asan
		return
	fi
	# 192.0.2.1 (TEST-NET-1, never routed) on lo: the lane's "network side"
	# address for the checks of non-loopback peers (qa_safe_defaults)
	VCAP_RUN_NESTED=1 unshare -n sh -c 'ip link set lo up && ip addr add 192.0.2.1/32 dev lo &&
		exec sh tests/run-all.sh integ-asan-lane' >"$lane" 2>&1 &
	lpid=$!
	integ "$BUILD" lane
	wait "$lpid"
	echo "=== lane integ-asan (ran beside integ)"
	cat "$lane"
	# its own count line; none means it died: one failure
	set -- $(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p' "$lane" | tail -1)
	if [ $# = 3 ]; then
		pass=$((pass + $1)); fail=$((fail + $2)); skip=$((skip + $3))
	else
		echo "integ-both: FAIL the ASan lane printed no count (log: $lane)" | tee -a "$FAILS"; fail=$((fail + 1))
	fi
	echo "=== after the lanes, alone: the tests marked solo"
	integ "$BUILD" solo
	integ_asan solo
}

# build NAME TARGET...: a build step counted as one check (its log kept).
build() {
	name=$1; shift
	run_one "$name" 3600 sh -c 'make --no-print-directory -j2 "$@" && echo "$0: OK"' "$name" "$@"
}

suites=${*:-unit build-asan unit-asan integ-both vm build-cross cross deb fuzz}
for s in $suites; do
	echo "=== suite $s"
	t0=$(date +%s) suite=$s
	case $s in
	unit) unit "$BUILD" ;;
	build-asan) build build-asan BUILD=build/asan SAN=1 all ;;
	build-cross) # the Raspberry Pi builds; each installs its cross packages first
		for a in arm64 armhf; do build "build-cross-$a" cross ARCH=$a; done ;;
	unit-asan) ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1 UBSAN_OPTIONS=print_stacktrace=1 unit build/asan ;;
	integ) integ "$BUILD" ;;
	integ-asan) integ_asan ;;
	integ-asan-lane) integ_asan lane ;;
	integ-both) integ_both ;;
	vm) # one script per guest boot: tests/vm/boot_*.sh (each boots vivid-vm once)
		for t in tests/vm/boot_*.sh; do
			[ -f "$t" ] || continue
			run_one "$t" 1500 sh "$t"
		done
		# the day in the life, one boot too: 90 s of day + 3 replug cycles
		# (~2.5-3.5 min under TCG); `make day` / `make soak` run it longer
		run_one tests/vm/day.sh 900 env DAY_S=90 sh tests/vm/day.sh ;;
	cross) # Raspberry Pi builds (make test-cross): unit tests under qemu-user
		for a in arm64 armhf; do
			if ! ls build/cross-$a/tests/test_* >/dev/null 2>&1; then
				echo "cross-$a: SKIP not built (make cross ARCH=$a)"; skip=$((skip + 1))
				continue
			fi
			# VC_TEST_EMULATED: a test may widen real-time windows (qemu is 5-20x slower)
			for t in build/cross-$a/tests/test_*; do
				VC_TEST_EMULATED=1 run_one "$t" 600 sh tests/cross.sh run "$a" "$t"
			done
		done ;;
	deb) # make deb's three packages from the plain and cross builds (tests/deb_check.sh);
		# the amd64 one started by a real systemd in a container (tests/deb_systemd.sh)
		run_one tests/deb_check.sh 900 sh tests/deb_check.sh
		run_one tests/deb_systemd.sh 900 sh tests/deb_systemd.sh ;;
	fuzz) # libFuzzer harnesses (tests/fuzz/), FUZZ_SECONDS each; builds them.
		# 40 s here (make fuzz: 60): CI's 90 minutes hold every suite, and
		# a smoke run finds shallow crashes within seconds; long runs are
		# make fuzz FUZZ_SECONDS=600
		export FUZZ_SECONDS=${FUZZ_SECONDS:-40}
		if ! command -v "${FUZZ_CC:-clang}" >/dev/null 2>&1; then
			echo "fuzz: SKIP ${FUZZ_CC:-clang} not installed (make deps-test)"; skip=$((skip + 1))
			continue
		fi
		run_one fuzz-build 1800 make --no-print-directory -j2 fuzz-bins
		# two at a time (each harness is one process on one core): each
		# still runs FUZZ_SECONDS, the suite takes half the wall time
		set -- $(for b in build/fuzz/fuzz_*; do [ -x "$b" ] && echo "${b##*/fuzz_}"; done)
		while [ $# -gt 0 ]; do
			a=$1 b=${2:-}; shift; [ $# -gt 0 ] && shift
			run_one "fuzz $a${b:+ + $b}" $((FUZZ_SECONDS + 300)) sh -c \
				'sh tests/fuzz/run.sh "$0" & p=$!; r=0; [ -z "$1" ] || sh tests/fuzz/run.sh "$1" || r=1; wait $p || r=1; exit $r' "$a" "$b"
		done ;;
	*) echo "run-all: unknown suite $s: FAIL" | tee -a "$FAILS"; fail=$((fail + 1)) ;;
	esac
	# CI has a time limit: each suite's share of it, in the log and in
	# durations.txt
	echo "=== suite $suite took $(($(date +%s) - t0)) s" | tee -a "$LOGDIR/durations.txt"
done
echo
if [ -n "${VCAP_RUN_NESTED:-}" ]; then
	echo "$pass passed, $fail failed, $skip skipped"
	[ "$fail" = 0 ]; exit
fi
if [ -s "$FAILS" ]; then
	echo "failed checks (full logs in $LOGDIR):"
	cut -c1-300 "$FAILS"
fi
echo "$pass passed, $fail failed, $skip skipped"
# A run that checked nothing proves nothing: it fails.
if [ "$pass" = 0 ]; then
	echo "run-all: no check passed; an empty run is a failure"
	exit 1
fi
[ "$fail" = 0 ]
