#!/bin/sh
# vcapd behind a real nginx (Debian nginx-light) on loopback, configured as
# the README says (proxy_buffering off): the MJPEG stream passes through
# (first part quickly, same rate as direct) and snapshots work. Measured
# (ops, session 4): with proxy_buffering on (even 16x256k buffers) a fast
# loopback client passes too, and for a rate-limited client kernel socket
# buffers dominate the latency either way, so stream_unbuffered proves the
# documented config streams at full rate, not that buffering is off.
cd "$(dirname "$0")/../.." || exit 2
T=ops_nginx
. tests/integ/lib/common.sh
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
if [ ! -x "$NGINX" ]; then skip nginx "nginx not installed (nginx-light in DEPS_TEST)"; exit 0; fi
start_vcapd_any --device test:320x240@20:YUYV || { fail start "vcapd did not start"; exit 1; }
P=$VPORT
NP=$(free_port) # nginx's own port: it cannot take port 0 and say which it got
mkdir -p "$TMP/ng/logs"
cat >"$TMP/ng/nginx.conf" <<EOC
worker_processes 1;
pid $TMP/ng/nginx.pid;
error_log $TMP/ng/logs/error.log;
events { worker_connections 64; }
http {
	access_log off;
	client_body_temp_path $TMP/ng/body;
	proxy_temp_path $TMP/ng/proxy;
	fastcgi_temp_path $TMP/ng/fcgi;
	uwsgi_temp_path $TMP/ng/uwsgi;
	scgi_temp_path $TMP/ng/scgi;
	server {
		listen 127.0.0.1:$NP;
		location /cam/ {
			proxy_pass http://127.0.0.1:$P/;
			proxy_http_version 1.1;
			proxy_buffering off;
			proxy_request_buffering off;
			proxy_read_timeout 1h;
			proxy_set_header Host \$host;
			proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
		}
	}
}
EOC
"$NGINX" -p "$TMP/ng" -c "$TMP/ng/nginx.conf" -g 'daemon off;' >"$TMP/ng/out.log" 2>&1 &
NPID=$!; PIDS="$PIDS $NPID"
for i in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$NP/cam/snapshot" && break; sleep 0.1; done
c=$(curl -s -o "$TMP/s.jpg" -w '%{http_code}' --max-time 5 "http://127.0.0.1:$NP/cam/snapshot")
magic=$(head -c 2 "$TMP/s.jpg" | od -An -tx1 | tr -d ' ')
[ "$c" = 200 ] && [ "$magic" = ffd8 ]; check snapshot_via_nginx $? "$c $magic $(tail -2 "$TMP/ng/logs/error.log" 2>/dev/null)"
# First part through the proxy: time to the first byte of the first frame.
t=$(curl -s -N --max-time 3 -o "$TMP/p.bin" -w '%{time_starttransfer}' "http://127.0.0.1:$NP/cam/stream")
np=$(grep -ac 'Content-Type: image/jpeg' "$TMP/p.bin")
curl -s -N --max-time 3 -o "$TMP/d.bin" "http://127.0.0.1:$P/stream"
nd=$(grep -ac 'Content-Type: image/jpeg' "$TMP/d.bin")
ms=$(awk -v t="$t" 'BEGIN { printf "%d", t * 1000 }')
[ "$ms" -lt 1000 ] && [ "$np" -ge 40 ] && [ $((np * 10)) -ge $((nd * 8)) ]
check stream_unbuffered $? "first byte after $ms ms; parts in 3 s: proxied $np, direct $nd (20 fps)"
# Streams tell nginx not to buffer them (X-Accel-Buffering: no), so a site
# config that left proxy_buffering on still streams; snapshots may be buffered.
hdr() { curl -s -N --max-time 1 -D - -o /dev/null "http://127.0.0.1:$P$1" | tr -d '\r' |
	grep -ci '^X-Accel-Buffering: no$'; }
xs=$(hdr /stream); xr=$(hdr '/raw/stream?format=YUYV'); xn=$(hdr /snapshot)
[ "$xs" = 1 ] && [ "$xr" = 1 ] && [ "$xn" = 0 ]
check streams_say_no_buffering $? "X-Accel-Buffering: no on /stream $xs, /raw/stream $xr, /snapshot $xn"
kill "$NPID" 2>/dev/null
stop_vcapd; check stop $? "exit status"
