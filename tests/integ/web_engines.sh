#!/bin/sh
# The web page in three engines (issue 23): Chromium (chromedriver),
# Firefox ESR (Marionette) and WebKitGTK (WebKitWebDriver + MiniBrowser
# under Xvfb), each driven by tests/tools/webdrive.py against a daemon with
# two test-pattern cameras. Per engine: both live views are MJPEG in <img>
# (not snapshot polling) and still are once the page's watchdog had time
# to judge them; two screenshots of the view 2 s apart differ and are not
# blank; the format menu has the common formats first and the rest behind
# "more"; a size picked takes effect; the fullscreen button (a real click)
# puts the view in fullscreen; at 1280 px the two cameras sit side by side,
# at 390 px one shows with tabs to switch (the other's stream closed);
# H.264 plays where the page offers it (it asks for MediaSource or
# ManagedMediaSource taking avc1), and when its player is made to stand
# still the page gives it a new stream that plays; with MediaSource removed (an iPhone has only ManagedMediaSource) it plays
# through ManagedMediaSource where the engine has it, and with neither the
# page offers no H.264 and stays on MJPEG. A missing browser is a SKIP.
# Ports: the daemon and the drivers pick free ones.
cd "$(dirname "$0")/../.." || exit 2
T=web_engines
. tests/integ/lib/common.sh

if ! command -v python3 >/dev/null; then
	skip all "python3 missing (DEPS_TEST)"; exit 0
fi
W=$TMP/www
mkdir -p "$W" "$TMP/home"
cp web/* "$W/"
# index.html without MediaSource (as on an iPhone), and without either
sed 's|<script src="app.js">|<script>window.MediaSource = undefined;</script>&|' web/index.html >"$W/mms.html"
sed 's|<script src="app.js">|<script>window.MediaSource = window.ManagedMediaSource = undefined;</script>&|' \
	web/index.html >"$W/nomse.html"
printf '[server]\nweb_root = %s\n' "$W" >"$TMP/v.conf"
if ! start_vcapd_any --config "$TMP/v.conf" --device test:640x480@30:YUYV --device test:320x240@15:MJPEG; then
	fail start "daemon did not start"; exit 1
fi
U=http://127.0.0.1:$VPORT

# engine NAME: run the driver for it (its browser's files under $TMP/NAME)
engine() {
	mkdir -p "$TMP/$1"
	HOME=$TMP/home timeout 200 python3 -B tests/tools/webdrive.py "$1" "$U" "$T.$1" "$TMP/$1" >"$TMP/$1.out" 2>&1
	_rc=$?
	cat "$TMP/$1.out"
	grep -q ": OK" "$TMP/$1.out" || [ $_rc = 0 ] || fail "$1_driver" "exit $_rc: $(tail -c 300 "$TMP/$1/$1.log")"
	[ -n "$VERBOSE" ] && tail -20 "$TMP/$1/$1.log"
}

# WEB_ENGINES="firefox webkit" runs only those
want() { case " ${WEB_ENGINES:-chromium firefox webkit} " in *" $1 "*) true ;; *) false ;; esac; }

if ! want chromium; then
	:
elif command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
	engine chromium
else
	skip chromium "chromium or chromedriver (chromium-driver) missing (DEPS_TEST)"
fi
if ! want firefox; then
	:
elif command -v firefox-esr >/dev/null; then
	engine firefox
else
	skip firefox "firefox-esr missing (DEPS_TEST)"
fi
if ! want webkit; then
	:
elif ! command -v WebKitWebDriver >/dev/null || ! command -v Xvfb >/dev/null; then
	skip webkit "WebKitWebDriver (webkit2gtk-driver) or Xvfb (xvfb) missing (DEPS_TEST)"
else
	# a free display number from Xvfb itself (other runs may hold some)
	Xvfb -displayfd 3 -screen 0 1280x1024x24 -nolisten tcp 3>"$TMP/xdisplay" 2>"$TMP/xvfb.log" &
	XPID=$!
	PIDS="$PIDS $XPID"
	for _i in $(seq 50); do
		[ -s "$TMP/xdisplay" ] && break
		sleep 0.1
	done
	if [ -s "$TMP/xdisplay" ]; then
		# the web process sandbox (bubblewrap) does not start inside a
		# container's namespaces; this page is our own, on loopback
		DISPLAY=:$(cat "$TMP/xdisplay") WEBKIT_DISABLE_SANDBOX_THIS_IS_DANGEROUS=1 engine webkit
	else
		fail webkit_xvfb "Xvfb did not start: $(head -c 300 "$TMP/xvfb.log")"
	fi
	kill "$XPID" 2>/dev/null
fi

[ -n "$VERBOSE" ] && grep -aiE "mp4|h264|warn|error" "$VLOG" | tail -20
n=$(clients_after_quit "$U")
check browser_clients_released "$([ "$n" = 0 ]; echo $?)" "$n clients left (polled up to 3 s after the browsers quit)"
stop_vcapd
check exit_clean $? "daemon exit status not 0"
exit 0
