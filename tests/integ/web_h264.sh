#!/bin/sh
# Headless Chromium plays <video src=/stream.mp4>: MediaSource says it takes
# 'video/mp4; codecs="avc1.42E01F"' (Constrained Baseline 3.1, what the
# software encoder writes), play() starts, the picture has the stream's size,
# is not blank, and two grabs 1.5 s apart differ while currentTime advances.
# A curl client holds the output first, so the browser joins mid-stream (its
# first fragment's decode time is seconds in). The page reports by fetching
# /report/<result>, which the daemon's debug log records (a live stream
# never lets --dump-dom's virtual time run out). The daemon picks its port.
cd "$(dirname "$0")/../.." || exit 2
T=web_h264
. tests/integ/lib/common.sh

CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
if [ -z "$CHROME" ]; then
	skip play "no chromium installed"; exit 0
fi
W=$TMP/www
mkdir -p "$W"
cat >"$W/video.html" <<'EOH'
<!doctype html>
<html><body>
<video id="v" muted playsinline width="320" height="240"></video>
<script>
'use strict';
const out = [];
const sleep = ms => new Promise(r => setTimeout(r, ms));
const report = () => fetch('/report/' + encodeURIComponent(out.join(';')));
function grab(v) {
	const c = document.createElement('canvas');
	c.width = 160;
	c.height = 120;
	const g = c.getContext('2d');
	g.drawImage(v, 0, 0, 160, 120);
	return g.getImageData(0, 0, 160, 120).data;
}
async function run() {
	out.push('mse ' + (window.MediaSource ? MediaSource.isTypeSupported('video/mp4; codecs="avc1.42E01F"') : 'none'));
	const v = document.getElementById('v');
	v.onerror = () => out.push('error ' + (v.error && v.error.code));
	v.src = '/stream.mp4?size=320x240';
	try {
		await v.play();
		out.push('play ok');
	} catch (e) {
		out.push('play ' + e.name);
	}
	for (let i = 0; i < 100 && v.readyState < 2; i++)
		await sleep(100);
	const t0 = v.currentTime;
	const a = grab(v);
	await sleep(1500);
	const b = grab(v);
	let diff = 0, lit = 0;
	for (let i = 0; i < a.length; i += 4) {
		if (Math.abs(a[i] - b[i]) > 16)
			diff++;
		if (b[i] > 30)
			lit++;
	}
	out.push('ready ' + v.readyState, 'size ' + v.videoWidth + 'x' + v.videoHeight, 'diff ' + diff,
		 'lit ' + lit, 'advanced ' + (v.currentTime - t0).toFixed(2), 'paused ' + v.paused);
}
run().catch(e => out.push('exception ' + e)).finally(report);
</script></body></html>
EOH
cat >"$TMP/v.conf" <<EOC
[server]
web_root = $W
EOC
if ! start_vcapd_any --config "$TMP/v.conf" --device test:640x480@30:YUYV --log-level debug; then
	fail start "daemon did not come up"; exit 1
fi
U=http://127.0.0.1:$VPORT
curl -s -o /dev/null --max-time 30 "$U/stream.mp4?size=320x240" & hold=$!
PIDS="$PIDS $hold"
sleep 3
# killed once it reported (or after 25 s)
timeout 25 "$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars \
	--autoplay-policy=no-user-gesture-required --user-data-dir="$TMP/prof" \
	--remote-debugging-port=0 "$U/video.html" 2>"$TMP/chrome.err" & cpid=$!
PIDS="$PIDS $cpid"
for _i in $(seq 250); do
	grep -aq 'GET /report/' "$VLOG" && break
	sleep 0.1
done
kill "$cpid" 2>/dev/null
r=$(grep -a 'GET /report/' "$VLOG" | head -1 | sed 's/.*GET \/report\///; s/ -> .*//' |
	python3 -c 'import sys, urllib.parse; print(urllib.parse.unquote(sys.stdin.read().strip()))' 2>/dev/null)
[ -n "$r" ] || r=$(grep -a 'GET /report/' "$VLOG" | head -1)
val() { echo "$r" | tr ';' '\n' | sed -n "s/^$1 //p" | head -1; }
if [ "$(val mse)" != true ]; then
	skip play "this Chromium's MediaSource does not take avc1.42E01F (got '$(val mse)'): $r"; exit 0
fi
ok mse_avc1_42E01F "($($CHROME --version 2>/dev/null | head -1))"
check play_starts "$([ "$(val play)" = ok ] && [ "$(val ready)" -ge 2 ] 2>/dev/null; echo $?)" "$r"
check video_size "$([ "$(val size)" = 320x240 ]; echo $?)" "$r"
check not_blank "$([ "$(val lit)" -gt 1000 ] 2>/dev/null; echo $?)" "$r"
check moves "$([ "$(val diff)" -gt 50 ] 2>/dev/null &&
	awk -v a="$(val advanced)" 'BEGIN { exit !(a > 0.5) }'; echo $?)" "$r"
kill "$hold" 2>/dev/null
stop_vcapd
check clean_exit "$?" "exit status"
