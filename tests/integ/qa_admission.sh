#!/bin/sh
# Admission on every path (issues 21 and 22), against the test camera with
# the default budget (max_outputs 8, max_outputs_per_ip 4, frame_memory 64):
#  - 60 /stream?cam=1&size=4096x4096&quality=N for an absent second camera
#    do not slow the live camera's viewer: >= 95 % of its frames (judged on
#    the parts' X-Frame-Seq, the camera's own numbering), longest gap
#    between parts < 200 ms (their X-Timestamp, the capture clock), from a
#    second after the 60 are started to the end (starting 60 curl processes
#    alone costs a loaded host's loop 100-130 ms gaps, measured without
#    any request reaching the daemon); a missed measurement is taken
#    again, three in all, as a busy host can be late once;
#  - one client at /stream.mp4?bitrate=123456 at 1080p: plain /stream.mp4
#    and /stream.h264 are still served H.264;
#  - 20 distinct pictures asked at once from 127.0.0.1: at most its share
#    (4) served, the rest 429 JSON naming max_outputs_per_ip; a distinct
#    picture from 127.0.0.2 is still served;
#  - 20 distinct pictures asked while the camera is absent: once it comes
#    back it never holds more than max_outputs outputs, the rest are ended;
#    a plain /stream client that came among them is never ended;
#  - max_clients_per_ip = 3: a 4th connection from 127.0.0.1 is closed,
#    one from 127.0.0.2 is served;
#  - 30 /stream.mp4 at 1280x720 with distinct bitrates at once: the memory
#    the daemon counts (frames + scratch + copies + GOPs) stays within
#    frame_memory all along.
cd "$(dirname "$0")/../.." || exit 2
T=qa_admission
. tests/integ/lib/common.sh

# num JSON KEY: the first number at "KEY": in JSON, 0 when absent
num() { v=$(echo "$1" | sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p" | head -1); echo "${v:-0}"; }
# seqts FILE: "SEQ TIME" per part of a multipart dump
seqts() {
	tr -d '\r' <"$1" | awk '/^X-Timestamp: / { t = $2 } /^X-Frame-Seq: / { s = $2 }
		/^--vcapdframe$/ { if (t != "") print s, t; t = ""; s = "" } END { if (t != "") print s, t }'
}

# ---- placeholders for an absent camera do not slow a live one ----
# One measurement is 10 s of wall time: on a host busy with other work the
# daemon's loop (or the test source's clock) can be late for a few hundred
# ms once, so a failed measurement is taken again, up to three times in
# all. Placeholders that slow the live viewer fail every time.
# spare_once: one daemon, one measurement; 0 = within the limits
spare_once() {
	start_vcapd_any --device test:640x480@30 --device /dev/vcapd-no-such-camera || return 2
	U=http://127.0.0.1:$VPORT
	curl -s -N --max-time 10 -o "$TMP/v.mjpeg" "$U/stream" &
	vpid=$!
	sleep 1
	apids=
	for i in $(seq 1 60); do
		curl -s -N --max-time 9 -o /dev/null "$U/stream?cam=1&size=4096x4096&quality=$i" &
		apids="$apids $!"
	done
	from=$(($(date +%s) + 1))
	sleep 2
	st=$(curl -s -o /dev/null -w '%{time_total}' --max-time 10 "$U/api/status")
	wait $vpid $apids
	# the parts while all 60 placeholder clients were there
	seqts "$TMP/v.mjpeg" | awk -v f="$from" '$2 >= f' >"$TMP/v.txt"
	res=$(awk 'NR == 1 { s0 = $1 } { n++; if (NR > 1 && $2 - p > g) g = $2 - p; p = $2; s1 = $1 }
		END { printf "%d %d %.3f", n, s1 - s0 + 1, g }' "$TMP/v.txt")
	set -- $res
	sp_n=$1 sp_f=$2 sp_g=$3
	echo "$T: live viewer with 60 placeholder clients: $1 parts of $2 camera frames, longest gap $3 s; /api/status took $st s"
	stop_vcapd
	sp_stop=$?
	[ "$2" -ge 100 ] && [ $(($1 * 100)) -ge $(($2 * 95)) ] && awk -v g="$3" -v t="$st" 'BEGIN { exit !(g < 0.2 && t < 0.5) }'
}
sp_tries=0
while :; do
	sp_tries=$((sp_tries + 1))
	spare_once
	sp_rc=$?
	[ $sp_rc = 1 ] && [ $sp_tries -lt 3 ] || break
done
if [ $sp_rc = 2 ]; then
	fail placeholders_spare_live "vcapd did not start"
else
	[ $(($sp_n * 100)) -ge $(($sp_f * 95)) ] && [ "$sp_f" -ge 100 ] && awk -v g="$sp_g" 'BEGIN { exit !(g < 0.2) }'
	check placeholders_spare_live $? "$sp_n parts of $sp_f frames, longest gap $sp_g s (limits 95 %, 0.2 s; measurement $sp_tries of 3)"
	awk -v t="$st" 'BEGIN { exit !(t < 0.5) }'
	check placeholders_status_fast $? "/api/status took $st s (measurement $sp_tries of 3)"
	check clean_stop_placeholders $sp_stop "exit status"
fi

# ---- plain H.264 URLs stay served while a 1080p bitrate output is held ----
if start_vcapd_any --device test:1920x1080@30; then
	U=http://127.0.0.1:$VPORT
	curl -s -N --max-time 10 -o "$TMP/hold.mp4" -w '%{http_code}\n' "$U/stream.mp4?bitrate=123456" >"$TMP/hold.code" &
	hpid=$!
	# until the holder's encoder runs
	for _i in $(seq 50); do
		s=$(curl -s "$U/api/status")
		case $s in *'"kind":"mp4"'*) break ;; esac
		sleep 0.1
	done
	curl -s -N --max-time 4 -D "$TMP/p1.h" -o "$TMP/p1.mp4" "$U/stream.mp4"
	curl -s -N --max-time 4 -D "$TMP/p2.h" -o "$TMP/p2.h264" "$U/stream.h264"
	c1=$(status "$TMP/p1.h") c2=$(status "$TMP/p2.h")
	k1=$(ffprobe -v error -show_entries stream=codec_name -of csv=p=0 "$TMP/p1.mp4" 2>/dev/null | head -1)
	k2=$(ffprobe -v error -f h264 -show_entries stream=codec_name -of csv=p=0 "$TMP/p2.h264" 2>/dev/null | head -1)
	wait $hpid
	echo "$T: with /stream.mp4?bitrate=123456 held ($(cat "$TMP/hold.code")): plain /stream.mp4 $c1 $k1, /stream.h264 $c2 $k2"
	[ "$c1" = 200 ] && [ "$k1" = h264 ] && [ "$c2" = 200 ] && [ "$k2" = h264 ] && [ "$(cat "$TMP/hold.code")" = 200 ]
	check plain_h264_served $? "holder $(cat "$TMP/hold.code"), /stream.mp4 $c1 '$k1' ($(head -c 200 "$TMP/p1.mp4" | tr -cd '[:print:]')), /stream.h264 $c2 '$k2'"
	stop_vcapd; check clean_stop_h264 $? "exit status"
else
	fail plain_h264_served "vcapd did not start"
fi

# ---- per-address share: 20 distinct pictures from one address ----
if start_vcapd_any --device test:640x480@30; then
	U=http://127.0.0.1:$VPORT
	: >"$TMP/codes"
	pids=
	for i in $(seq 1 20); do
		curl -s -N --max-time 4 -o "$TMP/s$i.out" -w '%{http_code}\n' \
			"$U/stream?size=320x240&quality=$((30 + i))" >>"$TMP/codes" &
		pids="$pids $!"
	done
	sleep 1.5
	curl -s -N --max-time 2 --interface 127.0.0.2 -o "$TMP/other.out" -w '%{http_code}' \
		"$U/stream?size=320x240&quality=90" >"$TMP/other.code"
	wait $pids
	n200=$(grep -c '^200' "$TMP/codes") n429=$(grep -c '^429' "$TMP/codes")
	why=$(for i in $(seq 1 20); do head -c 300 "$TMP/s$i.out"; echo; done | grep -ao '"error":"[^"]*' | sort | uniq -c | head -2 | tr '\n' '|')
	other=$(cat "$TMP/other.code")
	echo "$T: 20 distinct pictures from one address: $n200 served, $n429 refused 429 ($why); another address: $other"
	[ "$n200" -ge 1 ] && [ "$n200" -le 4 ] && [ $((n200 + n429)) = 20 ] && echo "$why" | grep -q max_outputs_per_ip
	check share_one_address $? "200=$n200 429=$n429: $why"
	[ "$other" = 200 ] && grep -aq 'Content-Type: image/jpeg' "$TMP/other.out"
	check share_other_address $? "127.0.0.2: $other"
	stop_vcapd; check clean_stop_share $? "exit status"
else
	fail share_one_address "vcapd did not start"
fi

# ---- a returning camera admits what was asked while it was away ----
if start_vcapd_any --device "fault:open=3;test:320x240@15"; then
	U=http://127.0.0.1:$VPORT
	# the plain client second: the first client's request is what the
	# shared placeholder output is planned for on return; the plain one's
	# is then split off last, the newest output, the first ended when
	# nothing protects it
	pids=
	for i in $(seq 1 20); do
		curl -s -N --max-time 8 -o /dev/null -w '%{http_code} %{time_total}\n' \
			"$U/stream?size=320x240&quality=$((30 + i))" >"$TMP/r$i.code" &
		pids="$pids $!"
		[ "$i" = 1 ] || continue
		sleep 0.3
		curl -s -N --max-time 8 -o "$TMP/plain.mjpeg" -w '%{http_code} %{time_total}\n' \
			"$U/stream" >"$TMP/plain.code" &
		pids="$pids $!"
		sleep 0.3
	done
	seen=0; most=0; back=0
	end=$(($(date +%s) + 7))
	while [ "$(date +%s)" -lt "$end" ]; do
		s=$(curl -s --max-time 2 "$U/api/status")
		case $s in *'"state":"streaming"'*) back=1 ;; esac
		n=$(echo "$s" | grep -o '"produced":' | wc -l)
		[ "$back" = 1 ] && seen=$((seen + 1)) && [ "$n" -gt "$most" ] && most=$n
		sleep 0.1
	done
	wait $pids
	ended=$(cat "$TMP"/r*.code | awk '$2 < 7.5' | wc -l)
	echo "$T: 20 pictures asked while away: at most $most outputs in $seen samples after the camera came; $ended streams ended early"
	[ "$back" = 1 ] && [ "$seen" -ge 10 ] && [ "$most" -le 8 ] && [ "$most" -ge 2 ] && [ "$ended" -ge 12 ]
	check returning_camera_within_max_outputs $? "back=$back, max $most outputs in $seen samples, $ended ended"
	grep -q 'does not fit: ended, 503' "$VLOG"
	check returning_camera_logged $? "$(grep -c 'does not fit' "$VLOG") log lines"
	pl=$(tr -d '\r' <"$TMP/plain.mjpeg" | grep -c '^X-Timestamp')
	awk '$2 >= 7.5' "$TMP/plain.code" | grep -q . && [ "$pl" -ge 40 ]
	check returning_camera_plain_kept $? "plain /stream: $(cat "$TMP/plain.code"), $pl parts"
	stop_vcapd; check clean_stop_return $? "exit status"
else
	fail returning_camera_within_max_outputs "vcapd did not start"
fi

# ---- 30 distinct H.264 outputs asked at once: counted memory within frame_memory ----
if start_vcapd_any --device test:1280x720@30; then
	U=http://127.0.0.1:$VPORT
	: >"$TMP/h.codes"
	pids=
	for i in $(seq 1 30); do
		curl -s -N --max-time 7 -o "$TMP/h$i.out" -w '%{http_code}\n' \
			"$U/stream.mp4?size=1280x720&bitrate=$((1000000 + i * 1000))" >>"$TMP/h.codes" &
		pids="$pids $!"
	done
	# sampled while they run (an ASan build answers /api/status slowly
	# beside two 720p encoders: 8 samples in 5 s)
	peak=0; samples=0
	end=$(($(date +%s) + 6))
	while [ "$(date +%s)" -lt "$end" ]; do
		mem=$(curl -s --max-time 2 "$U/api/status" | grep -o '"memory":{[^}]*}')
		m=$(($(num "$mem" frames) + $(num "$mem" scratch) + $(num "$mem" copies) + $(num "$mem" gop)))
		[ "$m" -gt "$peak" ] && peak=$m
		samples=$((samples + 1))
		sleep 0.05
	done
	wait $pids
	n200=$(grep -c '^200' "$TMP/h.codes") n503=$(grep -c '^503' "$TMP/h.codes")
	echo "$T: 30 distinct 720p H.264 at once: $n200 served, $n503 refused; counted memory peak $((peak / 1024)) KiB in $samples samples (frame_memory 65536 KiB)"
	[ "$samples" -ge 5 ] && [ "$n200" -ge 1 ] && [ "$peak" -le $((64 << 20)) ]
	check burst_h264_within_frame_memory $? "peak $peak bytes, $n200 served, $n503 refused"
	stop_vcapd; check clean_stop_burst $? "exit status"
else
	fail burst_h264_within_frame_memory "vcapd did not start"
fi
# ---- connections per address ----
printf '[server]\nmax_clients_per_ip = 3\n' >"$TMP/conn.conf"
if start_vcapd_any --config "$TMP/conn.conf" --device test:320x240@15; then
	U=http://127.0.0.1:$VPORT
	pids=
	for i in 1 2 3; do
		curl -s -N --max-time 4 -o /dev/null "$U/stream" &
		pids="$pids $!"
	done
	# until the three are streaming
	for _i in $(seq 30); do
		[ "$(curl -s --interface 127.0.0.3 "$U/api/status" | grep -o '"kind":"mjpeg"' | wc -l)" -ge 3 ] && break
		sleep 0.1
	done
	c4=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$U/api/status")
	c5=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 --interface 127.0.0.2 "$U/api/status")
	wait $pids
	echo "$T: max_clients_per_ip = 3 with 3 streams from 127.0.0.1: a 4th from it got '$c4', one from 127.0.0.2 '$c5'"
	[ "$c4" = 000 ] && [ "$c5" = 200 ] && grep -q 'max_clients_per_ip' "$VLOG"
	check conn_limit_per_address $? "4th from 127.0.0.1: $c4, 127.0.0.2: $c5"
	stop_vcapd; check clean_stop_conn $? "exit status"
else
	fail conn_limit_per_address "vcapd did not start"
fi
grep -hE 'ERROR: AddressSanitizer|LeakSanitizer|runtime error' "$TMP"/vcapd-any.* >"$TMP/san" 2>/dev/null
[ ! -s "$TMP/san" ]
check sanitizer_clean $? "$(head -3 "$TMP/san")"
