#!/bin/sh
# A browser shows /stream in an <img>: headless Chromium takes two
# screenshots a moment apart; the picture is there (not the blank page) and
# it changes. Ports 18400-18409.
cd "$(dirname "$0")/../.." || exit 2
T=http_chromium
PORT=18400
. tests/integ/lib/common.sh
U=http://127.0.0.1:$PORT
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
if [ -z "$CHROME" ]; then
	skip img_stream_animates "no chromium installed"; exit 0
fi
if ! start_vcapd $PORT --device test:320x240@30:YUYV; then
	fail start "daemon did not answer on $PORT"; exit 1
fi
printf '<html><body style="margin:0;background:#000"><img src="%s/stream"></body></html>\n' "$U" >"$TMP/p.html"
printf '<html><body style="margin:0;background:#000"></body></html>\n' >"$TMP/blank.html"
shot() { # FILE PAGE
	timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$TMP/prof" --window-size=400,300 --virtual-time-budget=1500 \
		--screenshot="$1" "file://$2" >"$TMP/chrome.log" 2>&1
}
shot "$TMP/blank.png" "$TMP/blank.html"
shot "$TMP/a.png" "$TMP/p.html"
sleep 1
shot "$TMP/b.png" "$TMP/p.html"
if [ ! -s "$TMP/a.png" ] || [ ! -s "$TMP/b.png" ]; then
	fail img_stream_animates "no screenshot: $(tail -3 "$TMP/chrome.log")"; exit 0
fi
! cmp -s "$TMP/a.png" "$TMP/blank.png" && ! cmp -s "$TMP/b.png" "$TMP/blank.png"
check img_stream_shows_picture $? "screenshot equals the blank page"
! cmp -s "$TMP/a.png" "$TMP/b.png"
check img_stream_animates $? "two screenshots 1 s apart are identical"
# the stream client Chromium opened has gone once it quit
sleep 0.3
n=$(curl -s "$U/api/status" | grep -o '"peer"' | wc -l)
check browser_clients_released "$([ "$n" = 0 ]; echo $?)" "$n clients left"
stop_vcapd
check exit_clean $? "daemon exit status not 0"
exit 0
