#!/bin/sh
# CORS is off unless configured (issue 5): without cors_origin no response
# carries Access-Control-* and OPTIONS answers 204 with Allow only (a
# cross-origin preflight still fails); with it every
# response (API, errors, 401s, streams) carries Access-Control-Allow-Origin
# (the configured origin, or the request's Origin echoed for "*"), OPTIONS
# preflights answer 204 before authentication, SIGHUP switches it, and a
# real cross-origin fetch in headless Chromium is blocked / allowed
# accordingly. Ports: picked by the daemon (port 0).
cd "$(dirname "$0")/../.." || exit 2
T=web_cors
. tests/integ/lib/common.sh
O=https://octopi.local
# hd NAME CURL-ARGS...: headers of the answer to $TMP/NAME.h, body $TMP/NAME.b
hd() { _n=$1; shift; curl -s --max-time 5 -D "$TMP/$_n.h" -o "$TMP/$_n.b" "$@"; }
acao() { hdr "$TMP/$1.h" Access-Control-Allow-Origin; }
anyac() { tr -d '\r' <"$TMP/$1.h" | grep -ci '^access-control-'; }

# --- off (no config) ----------------------------------------------------------
if ! start_vcapd_any --device test:320x240@15:YUYV; then
	fail start "daemon did not start"; exit 1
fi
U=http://127.0.0.1:$VPORT
hd g -H "Origin: $O" "$U/api/status"
[ "$(status "$TMP/g.h")" = 200 ] && [ "$(anyac g)" = 0 ]
check off_get_no_acao $? "GET with Origin: $(status "$TMP/g.h"), $(anyac g) Access-Control headers"
hd s -H "Origin: $O" --max-time 1 "$U/stream"
[ "$(status "$TMP/s.h")" = 200 ] && [ "$(anyac s)" = 0 ]
check off_stream_no_acao $? "/stream: $(status "$TMP/s.h"), $(anyac s) Access-Control headers"
hd o -X OPTIONS -H "Origin: $O" -H "Access-Control-Request-Method: PUT" "$U/api/cams/0/controls"
[ "$(status "$TMP/o.h")" = 204 ] && [ "$(anyac o)" = 0 ] && hdr "$TMP/o.h" Allow | grep -q 'PUT.*OPTIONS'
check off_options_allow_no_cors $? "OPTIONS: $(status "$TMP/o.h"), Allow '$(hdr "$TMP/o.h" Allow)', $(anyac o) Access-Control headers"
stop_vcapd
check off_exit_clean $? "daemon exit status not 0"

# --- on: one named origin, with authentication on the status class ------------
if ! command -v openssl >/dev/null; then
	skip on "openssl missing (DEPS_TEST)"; exit 0
fi
HASH=$(openssl passwd -6 pw)
conf() { # CORS-LINE
	cat >"$TMP/v.conf" <<EOC
[server]
web_root = $TMP/www
user = admin:$HASH
auth_status = basic
auth_view = none
auth_control = none
$1
EOC
}
mkdir -p "$TMP/www"
echo '<!doctype html><title>x</title>' >"$TMP/www/index.html"
conf "cors_origin = $O"
if ! start_vcapd_any --config "$TMP/v.conf" --device test:320x240@15:YUYV; then
	fail start_on "daemon did not start"; exit 1
fi
P1=$VPORT
U=http://127.0.0.1:$P1
hd g -u admin:pw -H "Origin: $O" "$U/api/status"
[ "$(status "$TMP/g.h")" = 200 ] && [ "$(acao g)" = "$O" ]
check on_get_acao $? "GET: $(status "$TMP/g.h"), ACAO '$(acao g)'"
hd r -H "Origin: $O" "$U/raw?format=YUYV"
ex=$(hdr "$TMP/r.h" Access-Control-Expose-Headers)
miss=""
for x in X-Format X-Width X-Height X-Bytesperline X-Sizeimage X-Size; do
	echo "$ex" | grep -q "\(^\|, \)$x\(,\|$\)" || miss="$miss $x"
done
[ "$(status "$TMP/r.h")" = 200 ] && [ -z "$miss" ]
check on_expose_headers $? "/raw: $(status "$TMP/r.h"), not exposed:$miss (Access-Control-Expose-Headers '$ex')"
hd e -u admin:pw -H "Origin: https://evil.example" "$U/api/status"
[ "$(acao e)" = "$O" ]
check on_other_origin_not_echoed $? "ACAO '$(acao e)' for another Origin"
hd u -H "Origin: $O" "$U/api/status"
[ "$(status "$TMP/u.h")" = 401 ] && [ "$(acao u)" = "$O" ]
check on_401_acao $? "no credentials: $(status "$TMP/u.h"), ACAO '$(acao u)'"
hd n -u admin:pw -H "Origin: $O" "$U/api/cams/99"
[ "$(status "$TMP/n.h")" = 404 ] && [ "$(acao n)" = "$O" ]
check on_error_acao $? "/api/cams/99: $(status "$TMP/n.h"), ACAO '$(acao n)'"
hd s -H "Origin: $O" --max-time 1 "$U/stream"
[ "$(status "$TMP/s.h")" = 200 ] && [ "$(acao s)" = "$O" ]
check on_stream_acao $? "/stream: $(status "$TMP/s.h"), ACAO '$(acao s)'"
hd f -H "Origin: $O" "$U/index.html"
[ "$(status "$TMP/f.h")" = 200 ] && [ "$(acao f)" = "$O" ]
check on_file_acao $? "/index.html: $(status "$TMP/f.h"), ACAO '$(acao f)'"
# preflight: no credentials, answered before auth
hd o -X OPTIONS -H "Origin: $O" -H "Access-Control-Request-Method: PUT" \
	-H "Access-Control-Request-Headers: content-type" "$U/api/cams/0/controls"
am=$(hdr "$TMP/o.h" Access-Control-Allow-Methods) ah=$(hdr "$TMP/o.h" Access-Control-Allow-Headers)
[ "$(status "$TMP/o.h")" = 204 ] && [ "$(acao o)" = "$O" ] && [ ! -s "$TMP/o.b" ] &&
	echo "$am" | grep -q 'PUT' && echo "$am" | grep -q 'GET' && echo "$ah" | grep -qi 'content-type'
check on_preflight_204 $? "OPTIONS: $(status "$TMP/o.h"), ACAO '$(acao o)', methods '$am', headers '$ah'"
hd o2 -X OPTIONS -H "Origin: $O" -H "Access-Control-Request-Method: GET" "$U/api/status"
[ "$(status "$TMP/o2.h")" = 204 ] && [ "$(acao o2)" = "$O" ]
check on_preflight_before_auth $? "OPTIONS /api/status (auth basic): $(status "$TMP/o2.h")"
# a method nobody routes stays refused after the preflight
hd d -X DELETE -H "Origin: $O" "$U/api/cams/0/controls"
[ "$(status "$TMP/d.h")" = 405 ]
check on_other_method_405 $? "DELETE: $(status "$TMP/d.h")"

# --- a real browser: a page on http://127.0.0.1:P1 reads http://localhost:P1 --
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
# browse NAME: runs the cross-origin page, prints its result line
cat >"$TMP/www/x.html" <<EOH
<!doctype html><pre id="r">pending</pre><script>
const X = 'http://localhost:$P1';
const out = [];
(async () => {
	for (const [name, url, opts] of [
		['get', X + '/snapshot', {}],
		['put', X + '/api/cams/0/controls', { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: '{}' }]]) {
		try {
			const r = await fetch(url, opts);
			// a custom header is readable only when exposed
			out.push(name + '=' + r.status + (r.headers.get('X-Size') ? '+xsize' : ''));
		} catch (e) {
			out.push(name + '=blocked');
		}
	}
})().finally(() => { document.getElementById('r').textContent = out.join(' '); });
</script>
EOH
browse() {
	timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/prof" \
		--virtual-time-budget=5000 --dump-dom "http://127.0.0.1:$P1/x.html" 2>"$TMP/$1.err" |
		sed -n 's/.*<pre id="r">\([^<]*\)<.*/\1/p'
}
if [ -n "$CHROME" ]; then
	# the configured origin is another site: the browser blocks the reads
	r=$(browse b1)
	[ "$r" = "get=blocked put=blocked" ]
	check browser_wrong_origin_blocked $? "fetch results: '$r'"
fi

# --- SIGHUP: "*" echoes the Origin; then CORS off again -----------------------
conf "cors_origin = *"
kill -HUP "$VPID"
for i in $(seq 30); do
	hd h -H "Origin: https://a.example" "$U/api/cams"
	[ "$(acao h)" = https://a.example ] && break
	sleep 0.1
done
[ "$(acao h)" = https://a.example ] && hdr "$TMP/h.h" Vary | grep -q Origin
check reload_star_echoes $? "ACAO '$(acao h)', Vary '$(hdr "$TMP/h.h" Vary)'"
hd h2 "$U/api/cams"
[ "$(acao h2)" = "*" ]
check star_without_origin $? "ACAO '$(acao h2)' without an Origin"
if [ -n "$CHROME" ]; then
	r=$(browse b2)
	echo "$r" | grep -qE '^get=200\+xsize put=[0-9]+$'
	check browser_star_allowed $? "fetch results: '$r'"
	err=$(grep -E 'CONSOLE|Uncaught' "$TMP/b2.err" | head -2)
	[ -z "$err" ]
	check browser_star_no_console_errors $? "$err"
fi
conf ""
kill -HUP "$VPID"
for i in $(seq 30); do
	hd h3 -H "Origin: https://a.example" "$U/api/cams"
	[ "$(anyac h3)" = 0 ] && break
	sleep 0.1
done
hd o3 -X OPTIONS -H "Origin: $O" -H "Access-Control-Request-Method: PUT" "$U/api/cams/0/controls"
[ "$(anyac h3)" = 0 ] && [ "$(status "$TMP/o3.h")" = 204 ] && [ "$(anyac o3)" = 0 ]
check reload_off_again $? "GET: $(anyac h3) Access-Control headers; OPTIONS: $(status "$TMP/o3.h")"
stop_vcapd
check on_exit_clean $? "daemon exit status not 0"
exit 0
