#!/bin/sh
# A stream client that stops reading is dropped after client_timeout and its
# connection closed; a slow reader that still takes data is kept; a fast one
# keeps streaming. Raw 1280x720 YUYV frames (1.8 MB) fill the socket buffers
# within a second. Clients are told apart by their fps limit in /api/status.
# Port: the daemon picks its own.
cd "$(dirname "$0")/../.." || exit 2
T=http_stall
. tests/integ/lib/common.sh

# client_hold (hold.c: a frame held over 5 s drops the client) set out of
# the way: this is client_timeout's rule, tested alone
printf '[server]\nclient_timeout = 3\nclient_hold = 60\n' >"$TMP/c.conf"
if ! start_vcapd_any --config "$TMP/c.conf" --device test:1280x720@30:YUYV; then
	fail start "daemon did not answer"; exit 1
fi
PORT=$VPORT
U=http://127.0.0.1:$PORT
RAW="$U/raw/stream?format=YUYV"
# sockets only: each frame being sent is also a descriptor (its memfd)
nfd() { ls -l "/proc/$VPID/fd" 2>/dev/null | grep -c 'socket:'; }
# field FPS_LIMIT NAME: NAME ("frames", "bytes") of the client with that fps limit, "" when gone
field() {
	curl -s "$U/api/status" | tr '{' '\n' | grep "\"fps_limit\":$1}" |
		sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p" | head -1
}
# the baseline: the fewest sockets seen over 1 s (start_vcapd_any's last
# /api/status connection may still be open; counted, it let a stalled
# socket that was never freed pass: 2 before under ASan)
fd0=$(nfd)
for _i in $(seq 10); do
	sleep 0.1
	n=$(nfd)
	[ "$n" -lt "$fd0" ] && fd0=$n
done

# stalled: curl writes into a fifo nobody reads, so it stops reading the socket
mkfifo "$TMP/stall"
exec 7<>"$TMP/stall"
curl -s "$RAW&fps=25" >"$TMP/stall" & stall=$!
python3 tests/tools/http_slow_read.py $PORT "/raw/stream?format=YUYV&fps=20" 2000000 "$TMP/slow" & slow=$!
curl -s -o /dev/null "$RAW&fps=15" & fast=$!
PIDS="$PIDS $stall $slow $fast"

i=0 dropped=1
while [ $i -lt 60 ]; do
	sleep 0.25
	[ -n "$(field 20 frames)" ] && [ -z "$(field 25 frames)" ] && { dropped=0; break; }
	i=$((i + 1))
done
check stalled_dropped $dropped "the stalled client is still listed after 15 s (timeout 3 s): $(curl -s "$U/api/status" | head -c 600)"
grep -q "took nothing for 3 s, dropped" "$VLOG"
check drop_logged $? "$(tail -3 "$VLOG")"

# the server closed its side: once the fifo drains, curl sees the end
cat "$TMP/stall" >/dev/null & drain=$!
PIDS="$PIDS $drain"
i=0
while kill -0 $stall 2>/dev/null && [ $i -lt 40 ]; do sleep 0.25; i=$((i + 1)); done
! kill -0 $stall 2>/dev/null
check stalled_connection_closed $? "curl of the stalled client still runs 10 s after the drop"
exec 7>&-

# the slow reader (2 MB/s, evenly: about a frame a second, the socket full in between) and the fast one stay, and
# move on
# (what it received, at least half of the 8 MB it asks for in 4 s, and the server's count of parts it sent it)
b0=$(stat -c %s "$TMP/slow") f0=$(field 15 frames) s0=$(field 20 frames)
sleep 4
b1=$(stat -c %s "$TMP/slow") f1=$(field 15 frames) s1=$(field 20 frames)
[ -n "$s1" ] && [ "$s1" -gt "${s0:-0}" ] && [ "$((b1 - b0))" -ge 4000000 ]
check slow_reader_kept $? "slow client received $b0 -> $b1 bytes, frames sent ${s0:-none} -> ${s1:-none (not listed)}"
[ -n "$f1" ] && [ "$((f1 - ${f0:-0}))" -ge 30 ]
check fast_reader_rate $? "fast client (fps=15) frames $f0 -> $f1 in 4 s"
# the stalled client's socket is closed: only the two others remain. The
# /api/status requests just made (field) are sockets too until the daemon
# has closed them after curl exits: polled up to 2 s, the last count judged.
for _i in $(seq 20); do
	fd1=$(nfd)
	[ "$fd1" -le $((fd0 + 2)) ] && break
	sleep 0.1
done
check stalled_socket_freed "$([ "$fd1" -le $((fd0 + 2)) ]; echo $?)" "$fd0 sockets before the clients, $fd1 with the 2 remaining (after up to 2 s)"
kill $slow $fast 2>/dev/null
stop_vcapd; rc=$?
check sigterm_exit0 "$([ "$rc" = 0 ]; echo $?)" "exit $rc"
if grep -q -E 'AddressSanitizer|LeakSanitizer|runtime error' "$VLOG"; then
	fail sanitizer_clean "$(grep -m1 -A12 -E 'Sanitizer|runtime error' "$VLOG" | tr '\n' ' ' | head -c 1500)"
else
	ok sanitizer_clean
fi
