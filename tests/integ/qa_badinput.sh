#!/bin/sh
# Hostile and sloppy clients against the test pattern: malformed queries,
# unknown paths, wrong methods, bad JSON, HTTP/1.0, HEAD, idle and vanishing
# clients, 200 connect/disconnect cycles on /stream. Every request must get the
# expected status and the daemon must stay up (checked after each group), leak
# no descriptors and exit 0 on SIGTERM. Then the same daemon under valgrind.
# Ports: the daemon picks its own; the one under valgrind gets a free one.
cd "$(dirname "$0")/../.." || exit 2
T=qa_badinput
. tests/integ/lib/common.sh

if ! start_vcapd_any --device test; then
	fail start "daemon did not answer"; exit 1
fi
PORT=$VPORT
U=http://127.0.0.1:$PORT

# alive GROUP: the daemon still runs and answers /api/status with JSON.
alive() {
	code=$(curl -s -m 5 -o "$TMP/st" -w '%{http_code}' "$U/api/status")
	kill -0 "$VPID" 2>/dev/null && [ "$code" = 200 ] && grep -q '{' "$TMP/st"
	check "alive_after_$1" $? "status $code, pid $VPID $(kill -0 "$VPID" 2>/dev/null && echo running || echo gone)"
}
# expect WANT NAME CURL-ARGS...: status WANT (a list like "400|404" is allowed).
expect() {
	_want=$1 _name=$2; shift 2
	_code=$(curl -s -m 10 -o "$TMP/b" -w '%{http_code}' "$@")
	echo "|$_want|" | grep -q "|$_code|"
	check "$_name" $? "got $_code (want $_want): $(head -c 120 "$TMP/b" | tr -d '\r\n')"
}
# waitbg: wait for the clients started since the last waitbg (a bare `wait`
# would also wait for the daemon).
BG=""
bg() { "$@" & BG="$BG $!"; }
waitbg() { for _p in $BG; do wait "$_p"; done; BG=""; }
nfd() { ls "/proc/$VPID/fd" 2>/dev/null | wc -l; }
fd0=$(nfd)

# 1. Malformed query values: 400 with a JSON error, never 5xx or a crash.
while read -r want name path; do
	_code=$(curl -s -m 10 -o "$TMP/b" -w '%{http_code}' "$U$path")
	[ "$_code" = "$want" ] && grep -q '"error":"' "$TMP/b"
	check "query_$name" $? "$path -> $_code: $(head -c 120 "$TMP/b" | tr -d '\r\n')"
done <<'LIST'
400 format_ZZZZ /snapshot?format=ZZZZ
400 raw_format_ZZZZ /raw?format=ZZZZ
400 width_neg /snapshot?width=-1
400 width_huge /snapshot?width=99999999
400 width_overflow /snapshot?width=99999999999999999999999
400 height_neg /raw?height=-1
400 size_0x0 /snapshot?size=0x0
400 size_x /snapshot?size=x
400 size_neg /raw?size=-640x-480
400 quality_abc /snapshot?quality=abc
400 quality_neg /snapshot?quality=-1
400 fps_1e9 /stream?fps=1e9
400 fps_nan /stream?fps=nan
400 fps_neg /stream?fps=-5
400 rotate_45 /snapshot?rotate=45
400 rotate_91 /raw?rotate=91
400 width_trailing /snapshot?width=320abc
400 width_empty /snapshot?width=
400 pct_zz /snapshot?width=%zz
400 pct_nul /snapshot?format=YU%0012
LIST
for p in "/snapshot?cam=nonexistent" "/stream?cam=nonexistent" "/raw?cam=-1" "/api/cams/nonexistent"; do
	expect 404 "cam_unknown_$(echo "$p" | tr -c 'a-zA-Z0-9' _ | cut -c1-30)" "$U$p"
done
# rotate is taken modulo 360 by design (params.c p_rotate)
expect 200 rotate_360_is_0 "$U/raw?rotate=360&format=GREY&size=64x48"
# Percent-garbage in the path itself.
expect "400|404" path_pct_zz "$U/snap%zzshot"
# Repeated parameters: either the last one wins or a clear 400, never a crash.
expect "200|400" repeated_width "$U/snapshot?width=320&width=160"
expect "200|400" repeated_rotate "$U/snapshot?rotate=90&rotate=45&rotate=90"
expect "200|400" many_repeats "$U/snapshot?$(i=0; while [ $i -lt 300 ]; do printf 'quality=50&'; i=$((i + 1)); done)q=1"
# Very long query strings: a 4xx (or a dropped connection), not a crash.
long=$(head -c 60000 /dev/zero | tr '\0' a)
expect "400|414|431|000" long_value "$U/snapshot?format=$long"
# unknown parameters are ignored by design (params.c): any clean answer
expect "200|400|414|431|000" long_name "$U/snapshot?$long=1"
expect "200|400|414|431|000" many_params "$U/snapshot?$(i=0; while [ $i -lt 2000 ]; do printf 'p%d=%d&' $i $i; i=$((i + 1)); done)x=1"
alive queries

# 2. Unknown paths and wrong methods.
for p in /nope /stream/ /snapshot/x /api /api/ /api/cams/0/nope /../../etc/passwd \
	"/%2e%2e/%2e%2e/etc/passwd" /metrics/x; do
	expect "404|400" "path_$(echo "$p" | tr -c 'a-zA-Z0-9' _ | cut -c1-30)" "$U$p"
done
# "/" is the web page (issue 5), served as HTML from the web root.
expect "200" path_root_is_page "$U/"
ctype=$(curl -s -m 10 -o /dev/null -w '%{content_type}' "$U/")
case $ctype in text/html*) r=0 ;; *) r=1 ;; esac
check path_root_is_html $r "content type '$ctype'"
expect 405 post_stream -X POST "$U/stream"
expect 405 post_snapshot -X POST --data x "$U/snapshot"
expect 405 delete_stream -X DELETE "$U/stream"
expect 405 delete_cam -X DELETE "$U/api/cams/0"
expect "405|404" put_status -X PUT --data '{}' "$U/api/status"
expect "405|501|400" method_bogus -X FROB "$U/snapshot"
alive methods

# 3. PUT /api/cams/0/controls with malformed JSON.
while read -r name body; do
	_code=$(curl -s -m 10 -o "$TMP/b" -w '%{http_code}' -X PUT --data-binary "$body" "$U/api/cams/0/controls")
	[ "$_code" = 400 ] && grep -q '"error":"' "$TMP/b"
	check "json_$name" $? "$body -> $_code: $(head -c 120 "$TMP/b" | tr -d '\r\n')"
done <<'LIST'
empty_string "
garbage xyzzy
unterminated {"brightness":1
bad_string {"brightness
bad_escape {"a\q":1}
trailing {"brightness":1}x
number_garbage {"brightness":1e999999}
nested {"brightness":{"a":[1,2,{"b":3}]}}
array_top [{"brightness":1}]
null_top null
string_value {"brightness":"bright"}
LIST
_code=$(curl -s -m 10 -o "$TMP/b" -w '%{http_code}' -X PUT "$U/api/cams/0/controls")
check json_no_body "$([ "$_code" = 400 ]; echo $?)" "got $_code"
printf '{"a":"\000\377\376"}' >"$TMP/bin"
expect 400 json_binary -X PUT --data-binary "@$TMP/bin" "$U/api/cams/0/controls"
deep=$( (head -c 5000 /dev/zero | tr '\0' '['; head -c 5000 /dev/zero | tr '\0' ']') )
expect 400 json_deep_nesting -X PUT --data-binary "{\"a\":$deep}" "$U/api/cams/0/controls"
alive json

# 4. HTTP/1.0 and HEAD.
curl -s -m 10 --http1.0 -D "$TMP/h" -o "$TMP/s.jpg" "$U/snapshot"
[ "$(status "$TMP/h")" = 200 ] && ffmpeg -v error -i "$TMP/s.jpg" -f null - 2>/dev/null
check http10_snapshot $? "status $(status "$TMP/h"), $(wc -c <"$TMP/s.jpg") bytes"
timeout 3 curl -s --http1.0 -o "$TMP/s10" "$U/stream"
n=$(grep -ac '^Content-Type: image/jpeg' "$TMP/s10")
check http10_stream "$([ "$n" -ge 3 ]; echo $?)" "$n parts in 3 s over HTTP/1.0"
expect 200 http10_status --http1.0 "$U/api/status"
for p in /snapshot /api/status /api/cams "/raw?format=NV12"; do
	_code=$(curl -s -m 10 -I -o "$TMP/hh" -w '%{http_code}' "$U$p")
	check "head_$(echo "$p" | tr -c 'a-zA-Z0-9' _)" "$([ "$_code" = 200 ]; echo $?)" "got $_code"
done
# HEAD of a stream must answer headers and end, not stream forever.
_code=$(timeout 5 curl -s -I -o "$TMP/hh" -w '%{http_code}' "$U/stream"); rc=$?
check head_stream_ends "$([ "$rc" = 0 ] && [ "$_code" = 200 ]; echo $?)" "curl exit $rc, status $_code"
_code=$(curl -s -m 10 -I -o /dev/null -w '%{http_code}' "$U/nope")
check head_404 "$([ "$_code" = 404 ]; echo $?)" "got $_code"
alive http10_head

# 5. Idle, half-open and vanishing clients.
# connects and sends nothing: others are still served meanwhile
i=0; while [ $i -lt 10 ]; do (sleep 4 | curl -s -m 5 telnet://127.0.0.1:$PORT >/dev/null 2>&1) & BG="$BG $!"; i=$((i + 1)); done
sleep 0.5
t0=$(date +%s%N)
expect 200 idle_others_served "$U/snapshot"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check idle_others_fast "$([ "$ms" -lt 3000 ]; echo $?)" "snapshot took $ms ms with 10 idle connections"
# half a request line, then silence; garbage request lines
( (printf 'GET /snapsh'; sleep 3) | curl -s -m 4 telnet://127.0.0.1:$PORT >/dev/null 2>&1) & BG="$BG $!"
printf 'NOT HTTP AT ALL\r\n\r\n' | curl -s -m 2 telnet://127.0.0.1:$PORT >"$TMP/g" 2>/dev/null
grep -aq '^HTTP/1\.[01] 4[0-9][0-9]' "$TMP/g"
check garbage_request_4xx $? "answer: $(head -c 80 "$TMP/g" | tr -d '\r\n')"
printf 'GET /snapshot HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -5\r\n\r\n' | curl -s -m 2 telnet://127.0.0.1:$PORT >"$TMP/g" 2>/dev/null
grep -aq '^HTTP/1\.[01] 4[0-9][0-9]' "$TMP/g" || [ ! -s "$TMP/g" ]
check negative_content_length "$?" "answer: $(head -c 80 "$TMP/g" | tr -d '\r\n')"
# disconnects mid-stream (several at once, different points in the stream)
for t in 0.05 0.2 0.5 1 1.5; do bg timeout "$t" curl -s -o /dev/null "$U/stream"; done
for t in 0.1 0.7; do bg timeout "$t" curl -s -o /dev/null "$U/raw/stream"; done
waitbg
alive idle_vanishing

# 6. 200 quick connect/disconnect cycles on /stream (20 at a time). The raw
# requests name the server by address: a made-up Host name is refused (421,
# DNS rebinding guard) before a stream would start.
i=0
while [ $i -lt 200 ]; do
	j=0
	while [ $j -lt 20 ]; do
		if [ $((j % 2)) = 0 ]; then
			bg curl -s -m 0.15 -o /dev/null "$U/stream?size=320x240"
		else
			(printf 'GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' | timeout 0.05 curl -s telnet://127.0.0.1:$PORT >/dev/null 2>&1) & BG="$BG $!"
		fi
		j=$((j + 1))
	done
	waitbg
	i=$((i + 20))
done
alive stream_cycles
timeout 2 curl -s -o "$TMP/after" "$U/stream"
n=$(grep -ac '^Content-Type: image/jpeg' "$TMP/after")
check stream_after_cycles "$([ "$n" -ge 5 ]; echo $?)" "$n parts in 2 s"
# all those connections are gone: the descriptor count is back to where it was
sleep 1
fd1=$(nfd)
check no_fd_leak "$([ "$fd1" -le $((fd0 + 2)) ]; echo $?)" "$fd0 descriptors before, $fd1 after"
stop_vcapd; rc=$?
check sigterm_exit0 "$([ "$rc" = 0 ]; echo $?)" "exit $rc$(grep -m3 -E 'ERROR|Sanitizer|leak' "$VLOG" | tr '\n' ' ')"
if grep -q -E 'AddressSanitizer|LeakSanitizer|runtime error' "$VLOG"; then
	fail sanitizer_clean "$(grep -m1 -A12 -E 'Sanitizer|runtime error' "$VLOG" | tr '\n' ' ' | head -c 1500)"
else
	ok sanitizer_clean
fi

# 7. Valgrind: snapshot, a short stream, /raw, /api/cams, then SIGTERM.
# Only on the plain build (ASan and valgrind do not mix). Its own port:
# start_vcapd_any waits 5 s, too short for a start under valgrind.
VG_PORT=$(free_port)
if ! command -v valgrind >/dev/null; then
	skip valgrind "valgrind not installed (it is in DEPS_TEST)"
elif nm "$VCAPD" 2>/dev/null | grep -q __asan_init; then
	skip valgrind "$VCAPD is an ASan build (valgrind runs on the plain build)"
else
	t0=$(date +%s)
	valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
		--track-fds=no "$VCAPD" --listen "127.0.0.1:$VG_PORT" --device test:320x240@15:YUYV \
		>"$TMP/vg.log" 2>&1 &
	VPID=$!; PIDS="$PIDS $VPID"
	up=1
	for _i in $(seq 300); do
		curl -s -o /dev/null "http://127.0.0.1:$VG_PORT/api/status" && { up=0; break; }
		kill -0 "$VPID" 2>/dev/null || break
		sleep 0.1
	done
	V=http://127.0.0.1:$VG_PORT
	if [ $up = 0 ]; then
		curl -s -m 30 -o "$TMP/vs.jpg" "$V/snapshot?size=160x120"
		timeout 4 curl -s -o "$TMP/vst" "$V/stream"
		curl -s -m 30 -o "$TMP/vr" "$V/raw?format=NV12"
		curl -s -m 30 -o "$TMP/vc" "$V/api/cams"
		curl -s -m 30 -o /dev/null "$V/snapshot?format=ZZZZ"
		timeout 1 curl -s -o /dev/null "$V/stream"
		kill -TERM "$VPID"
		rc=124
		for _i in $(seq 300); do
			kill -0 "$VPID" 2>/dev/null || { wait "$VPID"; rc=$?; break; }
			sleep 0.1
		done
	fi
	secs=$(( $(date +%s) - t0 ))
	if [ $up != 0 ]; then
		fail valgrind "daemon under valgrind did not answer: $(head -c 600 "$TMP/vg.log" | tr '\n' ' ')"
	else
		[ "$rc" = 0 ] && [ -s "$TMP/vs.jpg" ] && grep -q '"id":"0"' "$TMP/vc" && [ "$(wc -c <"$TMP/vr")" = 115200 ]
		check valgrind $? "exit $rc in $secs s (99 = valgrind errors): $(grep -m1 -B2 -A14 -E 'definitely|Invalid|uninitialised|Mismatched' "$TMP/vg.log" | tr '\n' ' ' | head -c 2000)"
		check valgrind_under_90s "$([ "$secs" -lt 90 ]; echo $?)" "$secs s"
	fi
fi
exit 0
