# Shared helpers for the serving integration tests (sourced, not run).
# Each script sets T (its name prefix) first; ports come from start_vcapd_any,
# logged_port (a config's listen = 127.0.0.1:0) or free_port, never fixed.
VCAPD=${VCAPD:-build/vcapd}
. tests/integ/lib/port.sh
TMP=$(mktemp -d "/tmp/vcapd-integ.XXXXXX")
PIDS=""
ok() { echo "$T.$1: OK${2:+ $2}"; }
fail() { echo "$T.$1: FAIL $2"; }
skip() { echo "$T.$1: SKIP $2"; }
# check NAME CONDITION-EXIT-STATUS WHY
check() { if [ "$2" = 0 ]; then ok "$1" "${VERBOSE:+($3)}"; else fail "$1" "$3"; fi; }

cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	sleep 0.2
	for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap "exit 1" INT TERM PIPE HUP

# start_vcapd_any ARGS...: starts the daemon on a port it picks itself
# (--listen 127.0.0.1:0, read back from its log), so two runs of one test at
# the same moment cannot collide, and waits until it answers (5 s). Sets VPID,
# VPORT and VLOG; returns non-zero, with the log, when it does not come up.
start_vcapd_any() {
	VLOG=$(mktemp "$TMP/vcapd-any.XXXXXX")
	"$VCAPD" --listen 127.0.0.1:0 "$@" >"$VLOG" 2>&1 &
	VPID=$!
	PIDS="$PIDS $VPID"
	VPORT=$(logged_port "$VLOG" "$VPID") && return 0
	cat "$VLOG" >&2
	return 1
}

# free_port: a port free on 127.0.0.1, for processes that cannot take port 0 (no retry needed).
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# stop_vcapd: SIGTERM, returns the exit status (124 when it hangs > 3 s).
stop_vcapd() {
	kill -TERM "$VPID" 2>/dev/null
	for _i in $(seq 30); do
		if ! kill -0 "$VPID" 2>/dev/null; then
			wait "$VPID"
			return $?
		fi
		sleep 0.1
	done
	kill -9 "$VPID" 2>/dev/null
	return 124
}

# stopped_clean: stop_vcapd, then the checks clean_exit (status 0) and
# sanitizer_clean (no ASan/LSan/UBSan report in $VLOG)
stopped_clean() {
	stop_vcapd
	check clean_exit "$?" "exit status"
	if grep -q -E 'AddressSanitizer|LeakSanitizer|runtime error' "$VLOG"; then
		fail sanitizer_clean "$(grep -m1 -A12 -E 'Sanitizer|runtime error' "$VLOG" | tr '\n' ' ' | head -c 1500)"
	else
		ok sanitizer_clean
	fi
}

# hdr FILE NAME: value of a header in a curl -D dump.
hdr() { tr -d '\r' <"$1" | sed -n "s/^$2: //Ip" | head -1; }
# status FILE: HTTP status code of a curl -D dump.
status() { head -1 "$1" | awk '{print $2}'; }
# rss_kb PID
# clients_after_quit URL: the number of stream clients /api/status of the
# daemon at URL lists, polled up to 3 s until none is left (a daemon sees
# closed connections some time after a browser exits); the last count.
clients_after_quit() {
	for _i in $(seq 30); do
		_n=$(curl -s "$1/api/status" | grep -o '"peer"' | wc -l)
		[ "$_n" = 0 ] && break
		sleep 0.1
	done
	echo "$_n"
}

rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null; }

# try_answer QUERY: what /api/try answers for these parameters, as
# "WxH STEPS DEVWxDEVH" (delivered size, steps, device mode size). The
# camera mode follows the clients, so tests compare what they get with this.
try_answer() {
	curl -s "$U/api/try?$1" | sed -n 's/.*"output":{[^}]*"width":\([0-9]*\),"height":\([0-9]*\)[^}]*},"steps":"\([^"]*\)".*"device_mode":{[^}]*"width":\([0-9]*\),"height":\([0-9]*\).*/\1x\2 \3 \4x\5/p'
}
