#!/bin/sh
# Serving basics against the test pattern: snapshot JPEG size, raw frame sizes
# and headers, ETag/304, HEAD, errors (400/404/405/413/431), API JSON, IPv6,
# graceful SIGTERM with streams open, a YUYV-only test camera (":only").
# Ports: the daemons pick their own (127.0.0.1:0, [::1]:0).
cd "$(dirname "$0")/../.." || exit 2
T=http_basic
. tests/integ/lib/common.sh

if ! start_vcapd_any --device test:640x480@30:YUYV; then
	fail start "daemon did not answer"; exit 1
fi
PORT=$VPORT
U=http://127.0.0.1:$PORT

# The device mode's rate is the one the device is asked for / runs at, never
# 0/0: no fps = the configured rate; fps=10 alone = a 10 fps mode, and the
# device then really runs at what /api/try said. First: the one-shots below
# are pollers for 75 s (issue 21), and a raw YUYV 640x480 one makes YUYV
# 640x480 (listed at 30 fps only) the mode for a 320x240 stream beside it.
ival() { sed -n "s/.*\"$1\":{[^}]*\"interval\":\[\([0-9]*\),\([0-9]*\)\].*/\1\/\2/p"; }
iv=$(curl -s "$U/api/try" | ival device_mode)
check api_try_rate_default "$([ "$iv" = 1/30 ]; echo $?)" "device_mode interval '$iv', configured 1/30"
iv=$(curl -s "$U/api/try?size=320x240&fps=10" | ival device_mode)
timeout 3 curl -s -o /dev/null "$U/stream?size=320x240&fps=10" &
cpid=$!
sleep 1.5
curl -s "$U/api/status" >"$TMP/st10"
wait $cpid
run=$(ival mode <"$TMP/st10")
pfps=$(grep -o '"fps":[0-9]*,"adjusted"' "$TMP/st10" | head -1)
check api_try_rate_runs "$([ "$iv" = 1/10 ] && [ "$run" = 1/10 ] && [ "$pfps" = '"fps":10,"adjusted"' ]; echo $?)" \
	"/api/try?fps=10 device_mode '$iv', /api/status mode '$run' while streaming, output $pfps"

# Snapshot: a valid JPEG of the asked size (ffprobe decodes it).
for sz in 640x480 320x240 160x120; do
	curl -s -D "$TMP/h" -o "$TMP/s.jpg" "$U/snapshot?size=$sz"
	got=$(ffprobe -v error -show_entries stream=width,height -of csv=p=0:s=x "$TMP/s.jpg" 2>&1)
	ct=$(hdr "$TMP/h" Content-Type)
	[ "$got" = "$sz" ] && [ "$ct" = image/jpeg ] && ffmpeg -v error -i "$TMP/s.jpg" -f null - 2>"$TMP/e" && [ ! -s "$TMP/e" ]
	check "snapshot_$sz" $? "ffprobe says '$got', type '$ct', decode: $(head -c 200 "$TMP/e")"
done
curl -s -o "$TMP/w.jpg" "$U/snapshot?width=320"
got=$(ffprobe -v error -show_entries stream=width,height -of csv=p=0:s=x "$TMP/w.jpg" 2>&1)
check snapshot_width_keeps_aspect "$([ "$got" = 320x240 ]; echo $?)" "got $got"

# Raw frames: exact sizes, headers describe them.
for spec in "YUYV 640x480 614400 1280" "NV12 640x480 460800 640" "RGB24 320x240 230400 960" \
	    "YU12 322x242 116886 322" "GREY 100x50 5000 100"; do
	set -- $spec
	curl -s -D "$TMP/h" -o "$TMP/r" "$U/raw?format=$1&size=$2"
	n=$(wc -c <"$TMP/r")
	si=$(hdr "$TMP/h" X-Sizeimage); bpl=$(hdr "$TMP/h" X-Bytesperline)
	w=$(hdr "$TMP/h" X-Width); h=$(hdr "$TMP/h" X-Height)
	[ "$n" = "$3" ] && [ "$si" = "$3" ] && [ "$bpl" = "$4" ] && [ "${w}x$h" = "$2" ] && \
		[ -n "$(hdr "$TMP/h" X-Fourcc)" ] && [ -n "$(hdr "$TMP/h" X-Field)" ] && \
		[ -n "$(hdr "$TMP/h" X-Colorspace)" ]
	check "raw_${1}_$2" $? "body $n bytes, X-Sizeimage '$si' X-Bytesperline '$bpl' size ${w}x$h (want $3, $4)"
done

# Stream headers: multipart, each part with type, length, timestamp, sequence.
# 5 s for >= 20 parts: /stream may begin with a device mode switch (a
# one-shot above may have moved the mode), a restart that takes up to a
# second under ASan; this check is about the parts' headers, not the rate.
timeout 5 curl -s -D "$TMP/h" -o "$TMP/st" "$U/stream"
ct=$(hdr "$TMP/h" Content-Type)
parts=$(grep -ac '^Content-Type: image/jpeg' "$TMP/st")
seqs=$(grep -ac '^X-Frame-Seq: [0-9]' "$TMP/st"); tss=$(grep -ac '^X-Timestamp: [0-9]*\.[0-9]' "$TMP/st")
lens=$(grep -ac '^Content-Length: [0-9]' "$TMP/st")
[ "$ct" = "multipart/x-mixed-replace;boundary=vcapdframe" ] && [ "$parts" -ge 20 ] && \
	[ "$seqs" = "$parts" ] && [ "$tss" = "$parts" ] && [ "$lens" = "$parts" ]
check stream_part_headers $? "type '$ct', $parts parts, $seqs seq, $tss ts, $lens lengths in 5 s"

# ETag / If-None-Match. A mode switch between the two requests (the policy
# settling after the stream above, late on a busy host) restarts the
# camera and drops the kept frame: 200 with a new one is right then, so the
# pair is asked again, three times at most; a server without ETags never
# answers 304.
for et_try in 1 2 3; do
	curl -s -D "$TMP/h1" -o /dev/null "$U/snapshot"
	et=$(hdr "$TMP/h1" ETag)
	code=$(curl -s -o "$TMP/b" -w '%{http_code}' -H "If-None-Match: $et" "$U/snapshot?max_age_ms=60000")
	[ "$code" = 304 ] && break
done
check etag_304 "$([ -n "$et" ] && [ "$code" = 304 ] && [ ! -s "$TMP/b" ]; echo $?)" "ETag '$et' -> $code (try $et_try of 3)"
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'If-None-Match: "nope"' "$U/snapshot?max_age_ms=60000")
check etag_mismatch_200 "$([ "$code" = 200 ]; echo $?)" "got $code"
curl -s -D "$TMP/h2" -o /dev/null "$U/snapshot"
# later on the capture clock (a sequence starts again when the camera does)
t1=$(hdr "$TMP/h1" X-Timestamp); t2=$(hdr "$TMP/h2" X-Timestamp)
check snapshot_fresh "$(awk -v a="$t1" -v b="$t2" 'BEGIN { exit !(a != "" && b > a) }'; echo $?)" "second snapshot captured at '$t2', not after the first's '$t1'"

# HEAD answers headers without a body.
code=$(curl -s -I -o "$TMP/hh" -w '%{http_code}' "$U/snapshot")
check head_snapshot "$([ "$code" = 200 ] && [ "$(hdr "$TMP/hh" Content-Type)" = image/jpeg ]; echo $?)" "got $code"

# Bad input: the right 4xx with a JSON message, and the daemon keeps going.
while read -r want path; do
	code=$(curl -s -o "$TMP/b" -w '%{http_code}' "$U$path")
	grep -q '"error":"' "$TMP/b"
	check "bad_${want}_$(echo "$path" | tr -c 'a-zA-Z0-9' _ | cut -c1-40)" \
		"$([ "$code" = "$want" ] && grep -q '"error":"' "$TMP/b"; echo $?)" "got $code: $(head -c 120 "$TMP/b")"
done <<'LIST'
400 /snapshot?width=abc
400 /snapshot?width=-5
400 /snapshot?size=0x0
400 /snapshot?size=640x
400 /snapshot?quality=101
400 /snapshot?quality=0
400 /snapshot?fps=0
400 /snapshot?format=bogus
400 /snapshot?format=YUYV
400 /raw?format=MJPEG
400 /raw?format=SBGGR8
400 /stream?rotate=45
400 /stream?flip=sideways
400 /snapshot?max_age_ms=-1
404 /snapshot?cam=9
404 /api/cams/9
404 /nope
404 /snapshotx
400 /api/try?size=99999x1
LIST
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$U/stream")
check bad_405_post "$([ "$code" = 405 ]; echo $?)" "got $code"
# request header memory is limited (128 KiB per connection): 3 x 100 KB of headers
long=$(head -c 100000 /dev/zero | tr '\0' a)
code=$(curl -s -o /dev/null -w '%{http_code}' -H "X-A: $long" -H "X-B: $long" -H "X-C: $long" "$U/snapshot")
check huge_header_rejected "$([ "$code" -ge 400 ] && [ "$code" -lt 500 ] || [ "$code" = 000 ]; echo $?)" "got $code"
head -c 300000 /dev/zero | tr '\0' b >"$TMP/bigq"
code=$(curl -s -o /dev/null -w '%{http_code}' -G --data-urlencode "q@$TMP/bigq" "$U/snapshot")
check huge_url_rejected "$([ "$code" -ge 400 ] && [ "$code" -lt 500 ] || [ "$code" = 000 ]; echo $?)" "got $code"
code=$(curl -s -o /dev/null -w '%{http_code}' "$U/api/status")
check alive_after_bad_input "$([ "$code" = 200 ]; echo $?)" "status $code"

# API documents.
curl -s "$U/api/cams" >"$TMP/cams"
grep -q '"id":"0"' "$TMP/cams" && grep -q '"formats":\[' "$TMP/cams" && grep -q '"fourcc":"YUYV"' "$TMP/cams"
check api_cams $? "$(head -c 200 "$TMP/cams")"
# a JPEG of 320x240: encoded from the current mode, or (the test source
# offers MJPEG at any size) passed through from a 320x240 MJPEG mode
curl -s "$U/api/try?format=mjpeg&size=320x240" >"$TMP/try"
{ grep -q '"encode":true' "$TMP/try" || grep -q '"device_mode":{"fourcc":"MJPG","fourcc_name":"MJPEG","width":320,"height":240' "$TMP/try"; } &&
	grep -q '"output":{"fourcc":"MJPG","fourcc_name":"MJPEG","width":320,"height":240' "$TMP/try"
check api_try_encode $? "$(head -c 300 "$TMP/try")"
curl -s "$U/api/try?format=YUYV" >"$TMP/try"
grep -q '"passthrough":true' "$TMP/try"
check api_try_passthrough $? "$(head -c 300 "$TMP/try")"
# Unknown parameters are ignored, and /api/try says which (a typo shows).
ig=$(curl -s "$U/api/try?endpoint=raw&fromat=NV12&_=1700000000" | grep -o '"ignored":{[^}]*}')
ig0=$(curl -s "$U/api/try?endpoint=raw&format=NV12" | grep -o '"ignored":{[^}]*}')
check api_try_ignored "$([ "$ig" = '"ignored":{"count":2,"first":"fromat"}' ] && [ "$ig0" = '"ignored":{"count":0,"first":""}' ]; echo $?)" \
	"typo + cache buster: $ig; none: $ig0"
if command -v jq >/dev/null; then
	for p in /api/cams /api/cams/0 /api/status "/api/try?format=NV12&size=320x240"; do
		curl -s "$U$p" | jq -e . >/dev/null
		check "json_valid_$(echo "$p" | tr -c 'a-zA-Z0-9' _)" $? "jq rejects $p"
	done
fi
# Controls (the test pattern has none: an empty list; bad PUTs are 400).
curl -s "$U/api/cams/0/controls" >"$TMP/ctl"
grep -q '"controls":\[' "$TMP/ctl"
check controls_get $? "$(head -c 200 "$TMP/ctl")"
while read -r want body; do
	code=$(curl -s -o "$TMP/b" -w '%{http_code}' -X PUT --data-binary "$body" "$U/api/cams/0/controls")
	check "controls_put_${want}_$(echo "$body" | tr -c 'a-zA-Z0-9' _ | cut -c1-30)" \
		"$([ "$code" = "$want" ] && grep -q '"error":"' "$TMP/b"; echo $?)" "got $code: $(head -c 120 "$TMP/b")"
done <<'LIST'
400 {"brightness":
400 [1,2]
400 {"no_such_control":1}
400 {"a":1,"a":2}
LIST
# PUT .../signal (TV standard / DV timings): the test pattern offers
# neither, and bad bodies are 400 (the real thing: tests/vm/boot_vivid.sh).
while read -r want body; do
	code=$(curl -s -o "$TMP/b" -w '%{http_code}' -X PUT --data-binary "$body" "$U/api/cams/0/signal")
	check "signal_put_${want}_$(echo "$body" | tr -c 'a-zA-Z0-9' _ | cut -c1-30)" \
		"$([ "$code" = "$want" ] && grep -q '"error":"' "$TMP/b"; echo $?)" "got $code: $(head -c 120 "$TMP/b")"
done <<'LIST'
400 {"std":"PAL"}
400 {"std":"MARS-TV"}
400 {"dv_timings":"1280x720p60"}
400 {"dv_timings":"wide"}
400 {"std":5}
400 {"colour":"PAL"}
400 {}
LIST
code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT --data-binary '{}' "$U/api/cams/9/controls")
check controls_put_404_cam "$([ "$code" = 404 ]; echo $?)" "got $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT --data-binary "$(head -c 70000 /dev/zero | tr '\0' ' ')" "$U/api/cams/0/controls")
check controls_put_413 "$([ "$code" = 413 ]; echo $?)" "got $code"
curl -s "$U/metrics" >"$TMP/m"
grep -q '^vcapd_capture_fps{cam="0"}' "$TMP/m" && grep -q '^vcapd_capture_frames_total{cam="0"} [1-9]' "$TMP/m"
check metrics $? "$(head -c 200 "$TMP/m")"

# The test source offers bigger modes, so the device mode may follow: the
# answer is what /api/try says, never larger than the device mode it names.
# Last before SIGTERM: its poller keeps the larger mode for 75 s (issue 21),
# which the passthrough and ETag checks above do not expect.
set -- $(try_answer "size=1280x960")
curl -s -D "$TMP/h" -o "$TMP/up.jpg" "$U/snapshot?size=1280x960"
got=$(ffprobe -v error -show_entries stream=width,height -of csv=p=0:s=x "$TMP/up.jpg" 2>&1)
gw=${got%x*}; gh=${got#*x}; dw=${3%x*}; dh=${3#*x}
check snapshot_never_upscales "$([ "$got" = "$1" ] && [ "${gw:-0}" -le "${dw:-0}" ] && [ "${gh:-0}" -le "${dh:-0}" ]; echo $?)" \
	"asked 1280x960, got $got, /api/try says $1 from a $3 mode"

# SIGTERM with two streams open: streams end, exit 0 within a second.
curl -s -o "$TMP/s1" "$U/stream" & c1=$!
curl -s -o "$TMP/s2" "$U/raw/stream" & c2=$!
sleep 0.7
t0=$(date +%s%N)
stop_vcapd; rc=$?
t1=$(date +%s%N)
ms=$(( (t1 - t0) / 1000000 ))
check sigterm_exit0_fast "$([ "$rc" = 0 ] && [ "$ms" -lt 1000 ]; echo $?)" "exit $rc after $ms ms"
wait $c1; r1=$?; wait $c2; r2=$?
check sigterm_streams_ended "$([ "$r1" != 124 ] && [ -s "$TMP/s1" ] && [ -s "$TMP/s2" ]; echo $?)" "curl $r1/$r2"

# IPv6 listen (when the host has ::1).
if ip -6 addr show lo 2>/dev/null | grep -q '::1'; then
	"$VCAPD" --listen "[::1]:0" --listen "127.0.0.1:0" >"$TMP/v6.log" 2>&1 &
	V6=$!; PIDS="$PIDS $V6"
	# up to 5 s for it to come up (as start_vcapd_any waits), both must answer;
	# each port is the one its log line names
	for _i in $(seq 50); do
		p6=$(sed -n 's/.*listening on \[::1\]:0 (port \([0-9]*\)).*/\1/p' "$TMP/v6.log" | head -1)
		p4=$(sed -n 's/.*listening on 127\.0\.0\.1:0 (port \([0-9]*\)).*/\1/p' "$TMP/v6.log" | head -1)
		c6=$(curl -s -o /dev/null -w '%{http_code}' "http://[::1]:${p6:-0}/api/status")
		c4=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${p4:-0}/api/status")
		[ "$c6" = 200 ] && [ "$c4" = 200 ] && break
		kill -0 "$V6" 2>/dev/null || break
		sleep 0.1
	done
	check listen_ipv6_and_ipv4 "$([ "$c6" = 200 ] && [ "$c4" = 200 ]; echo $?)" "v6 $c6 v4 $c4"
	kill "$V6"
else
	skip listen_ipv6_and_ipv4 "no ::1 on lo"
fi
# JSON stays valid UTF-8 whatever bytes a name has (a device path, a driver's
# control or input name): here an absent camera whose path has \377 and \001.
if start_vcapd_any --device test --device "$(printf '/dev/video\377\001')"; then
	curl -s "http://127.0.0.1:$VPORT/api/status" >"$TMP/u8"
	iconv -f UTF-8 -t UTF-8 "$TMP/u8" >/dev/null 2>&1 && grep -q '"path":"/dev/video\\ufffd\\u0001"' "$TMP/u8"
	check json_utf8_escaped $? "$(grep -ao '"path":"/dev/video[^"]*"' "$TMP/u8" | od -c | head -3 | tr -s ' ')"
	kill "$VPID"
else
	fail json_utf8_escaped "daemon did not start"
fi
# A YUYV-only camera (test pattern with "only"): the device lists YUYV alone,
# so an MJPEG client is an encode, never a passthrough; a raw YUYV one is.
if start_vcapd_any --device test:320x240@30:YUYV:only; then
	UO=http://127.0.0.1:$VPORT
	curl -s "$UO/api/try?format=mjpeg" >"$TMP/tryo"
	grep -q '"encode":true' "$TMP/tryo" && grep -q '"passthrough":false' "$TMP/tryo" &&
		grep -q '"device_mode":{"fourcc":"YUYV"' "$TMP/tryo"
	check only_yuyv_try_encode $? "$(head -c 300 "$TMP/tryo")"
	fo=$(curl -s "$UO/api/cams/0" | grep -o '"fourcc":"[A-Z0-9]*"' | sort -u | tr '\n' ' ')
	timeout 2 curl -s -D "$TMP/ho" -o /dev/null "$UO/stream"
	st=$(hdr "$TMP/ho" X-Steps)
	check only_yuyv_stream_encodes "$([ "$fo" = '"fourcc":"YUYV" ' ] && [ "${st%encode}" != "$st" ]; echo $?)" \
		"formats '$fo', /stream X-Steps '$st'"
	curl -s "$UO/api/try?format=YUYV" | grep -q '"passthrough":true'
	check only_yuyv_raw_passthrough $? "raw YUYV is not passthrough"
	kill "$VPID"
else
	fail only_yuyv_try_encode "daemon with test:320x240@30:YUYV:only did not start"
fi
out=$("$VCAPD" --device test:YUYV:onyl 2>&1); code=$?
check bad_test_option_fails "$([ "$code" = 2 ] && echo "$out" | grep -q "unknown option 'onyl'"; echo $?)" "exit $code: $out"
code=$("$VCAPD" --listen nonsense >/dev/null 2>&1; echo $?)
check bad_listen_fails "$([ "$code" != 0 ]; echo $?)" "exit $code"
"$VCAPD" --help | grep -q -- --listen
check help $? "no --listen in --help"
exit 0
