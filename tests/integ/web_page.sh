#!/bin/sh
# The web page at / (issue 5): static files with their types and cache
# headers, no way out of the web root (.., encoded .., hidden files,
# symlinks), and the page itself in headless Chromium: both cameras with
# their pickers filled from /api/cams, a picker change that takes effect
# (and a refused one that does not), the live view moving (frames compared
# in the page) and on screen (two screenshots), the iOS snapshot-polling
# fallback, and no console errors. A driver page (drive.html, written here
# into a test web root) works the real page in a same-origin frame.
# Ports: picked by the daemon (port 0).
cd "$(dirname "$0")/../.." || exit 2
T=web_page
. tests/integ/lib/common.sh
CAMS="--device test:640x480@30:YUYV --device test:320x240@15:MJPEG"
code() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@"; }

# Daemon A: the default web root (web/ beside the build tree).
# shellcheck disable=SC2086
if ! start_vcapd_any $CAMS; then
	fail start "daemon did not start"; exit 1
fi
A=http://127.0.0.1:$VPORT

# --- static files: type, caching, exact bytes ---------------------------------
for f in /:index.html:text/html /index.html:index.html:text/html \
	/app.js:app.js:text/javascript /style.css:style.css:text/css; do
	url=${f%%:*} rest=${f#*:} file=${rest%%:*} want=${rest#*:}
	n=$(echo "$url" | tr -c 'a-z\n' _)
	curl -s -D "$TMP/h" -o "$TMP/b" "$A$url"
	ct=$(hdr "$TMP/h" Content-Type) cc=$(hdr "$TMP/h" Cache-Control) ns=$(hdr "$TMP/h" X-Content-Type-Options)
	[ "$(status "$TMP/h")" = 200 ] && case $ct in "$want"*) true ;; *) false ;; esac
	check "type$n" $? "$url: status $(status "$TMP/h"), Content-Type '$ct' (want $want)"
	[ "$cc" = no-cache ] && [ "$ns" = nosniff ]
	check "cache$n" $? "$url: Cache-Control '$cc' (want no-cache), X-Content-Type-Options '$ns'"
	cmp -s "$TMP/b" "web/$file"
	check "body$n" $? "$url differs from web/$file"
done
curl -s -I -o /dev/null -D "$TMP/h" "$A/app.js"
[ "$(status "$TMP/h")" = 200 ] && [ "$(hdr "$TMP/h" Content-Length)" = "$(wc -c <web/app.js | tr -d ' ')" ]
check head_length $? "HEAD /app.js: $(status "$TMP/h"), length '$(hdr "$TMP/h" Content-Length)'"
[ "$(code "$A/nosuch.js")" = 404 ]
check missing_404 $? "/nosuch.js: $(code "$A/nosuch.js")"
# the API is still the API, not a file
[ "$(curl -s -D - -o /dev/null "$A/api/cams" | tr -d '\r' | sed -n 's/^Content-Type: //Ip')" = application/json ]
check api_not_shadowed $? "/api/cams lost its JSON type"
# the issue asks for a small page
sz=$(cat web/* | wc -c)
[ "$sz" -lt 65536 ]
check page_small $? "web/ holds $sz bytes"

# --- traversal out of the default root (Makefile is web/../Makefile) ------------
mk_head=$(head -1 Makefile)
for p in /../Makefile /%2e%2e/Makefile /%2E%2E/Makefile /.%2e/Makefile /..%2fMakefile \
	/..%5cMakefile /%2e%2e%2fMakefile /..//Makefile //etc/passwd /%2fetc%2fpasswd \
	/../../../../../../etc/passwd /web/../../Makefile /.git/HEAD /..; do
	n=$(echo "$p" | tr -c 'a-zA-Z0-9\n' _)
	c=$(curl -s --path-as-is -o "$TMP/b" -w '%{http_code}' "$A$p")
	[ "$c" = 404 ] && ! grep -qF "$mk_head" "$TMP/b" && ! grep -q '^root:' "$TMP/b"
	check "traversal$n" $? "$p answered $c: $(head -c 80 "$TMP/b")"
done

# --- the page in Chromium -----------------------------------------------------
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
if [ -z "$CHROME" ]; then
	skip page "no chromium installed"; exit 0
fi
# chrome LOG ARGS...: headless run; stderr (console lines) to LOG
chrome() {
	_log=$1; shift
	timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$TMP/prof" --enable-logging=stderr --v=0 "$@" 2>"$_log"
}
# console LOG: the page's console/exception lines (the page logs nothing
# when all is well, so every one of them is a failure)
console() { grep -E 'CONSOLE|Uncaught' "$1" | grep -F "127.0.0.1" | head -3; }

chrome "$TMP/dom.err" --virtual-time-budget=3000 --dump-dom "$A/" >"$TMP/dom.html"
sed 's/></>\n</g' "$TMP/dom.html" >"$TMP/dom.txt"
ncard=$(grep -c '<section class="cam" data-cam=' "$TMP/dom.txt")
[ "$ncard" = 2 ] && grep -q 'data-cam="0"' "$TMP/dom.txt" && grep -q 'data-cam="1"' "$TMP/dom.txt"
check page_both_cams $? "$ncard camera cards in the DOM"
# titled by the device's name (the test pattern's: "Test pattern"), the path beside it
grep -q '<span class="cam-name">Test pattern</span> — <span class="cam-path">test:640x480@30:YUYV · cam 0<' "$TMP/dom.txt" &&
	grep -q '<span class="cam-name">Test pattern</span> — <span class="cam-path">test:320x240@15:MJPEG · cam 1<' "$TMP/dom.txt"
check page_cam_titles $? "titles: $(grep -o '<span class="cam-name">.*' "$TMP/dom.txt" | sed 's/<[^>]*>//g' | tr '\n' ';')"
# rotate/flip pickers (the API takes them), the fullscreen button, the URLs
# box (the template holds one of each too: 3 = 2 cards + the template)
tr -d '\n' <"$TMP/dom.html" >"$TMP/dom1.txt"
n1=$(grep -o '<select name="rotate"><option value="">default</option><option value="0">0°</option><option value="90">90°</option><option value="180">180°</option><option value="270">270°</option></select>' "$TMP/dom1.txt" | wc -l)
n2=$(grep -o '<select name="flip"><option value="">default</option><option value="none">none</option><option value="h">horizontal</option><option value="v">vertical</option><option value="hv">both</option></select>' "$TMP/dom1.txt" | wc -l)
[ "$n1" = 2 ] && [ "$n2" = 2 ]
check page_rotate_flip_pickers $? "$n1 rotate, $n2 flip pickers filled: $(grep -o '<select name="rotate">.\{0,120\}' "$TMP/dom1.txt" | head -1)"
[ "$(grep -c '<button type="button" class="fullscreen"' "$TMP/dom.txt")" = 3 ] &&
	[ "$(grep -c '<input class="url-stream" readonly' "$TMP/dom.txt")" = 3 ]
check page_fullscreen_and_urls $? "$(grep -c 'class="fullscreen"' "$TMP/dom.txt") fullscreen buttons, $(grep -c 'url-stream' "$TMP/dom.txt") URL boxes"
grep -qE '<span id="status">vcapd [^<]*, up [0-9]+ s, (1 connection|[02-9][0-9]* connections|1[0-9]+ connections)<' "$TMP/dom.txt"
check page_status_plural $? "$(grep -o '<span id="status">[^<]*' "$TMP/dom.txt")"
grep -q 'src="/stream?cam=0"' "$TMP/dom.txt" && grep -q 'src="/stream?cam=1"' "$TMP/dom.txt"
check page_live_imgs $? "live views: $(grep -o '<img class="live"[^>]*' "$TMP/dom.txt" | tr '\n' ';')"
grep -q '<span id="status">vcapd ' "$TMP/dom.txt" && [ "$(grep -c '<p class="stats">[a-z]*, [A-Z0-9]* [0-9]*x[0-9]*, capture' "$TMP/dom.txt")" = 2 ]
check page_status_filled $? "status/stats lines not filled from /api/status"
err=$(grep -E 'Cannot list cameras|not switched|status: |controls: |answer error' "$TMP/dom.txt" | head -2)
[ -z "$err" ]
check page_no_error_text $? "$err"
err=$(console "$TMP/dom.err")
[ -z "$err" ]
check page_no_console_errors $? "$err"
stop_vcapd
check exit_clean_a $? "daemon A exit status not 0"

# Daemon B: a web root made here (config web_root) with traps around it.
W=$TMP/www
mkdir -p "$W/sub" "$TMP/outside"
cp web/* tests/integ/lib/drive.js "$W/"
echo secret-outside >"$TMP/outside/out.txt"
echo secret-hidden >"$W/.hidden"
mkdir "$W/.git" && echo secret-git >"$W/.git/HEAD"
echo inside-sub >"$W/sub/in.txt"
ln -s "$TMP/outside/out.txt" "$W/link.txt"
ln -s "$TMP/outside" "$W/linkdir"
ln -s sub/in.txt "$W/inlink.txt"
ln -s / "$W/root"
cat >"$TMP/v.conf" <<EOC
[server]
web_root = $W
EOC
# The driver page loads index.html in a same-origin frame, compares the
# pickers with /api/cams, changes a picker and reports what it sees.
cat >"$W/drive.html" <<'EOH'
<!doctype html>
<html><body style="margin:0">
<iframe id="f" src="index.html" style="border:0;display:block" width="1000" height="1400" allow="fullscreen"></iframe>
<pre id="result">pending</pre>
<script src="drive.js"></script>
<script>
'use strict';
const opts = sel => [...sel.options].map(o => o.value);
function missing(want, have) {
	const m = want.filter(x => !have.includes(String(x)));
	return m.length ? 'missing ' + m.join(',') : 'ok';
}
async function run() {
	// the frame's document is replaced when index.html arrives: read it afresh
	const doc = () => document.getElementById('f').contentDocument;
	const api = await (await fetch('/api/cams')).json();
	lines.push('api ' + api.cams.length);
	for (const cam of api.cams) {
		const card = await until(() => doc().querySelector('[data-cam="' + cam.id + '"]'), 3000);
		if (!card) {
			lines.push('cam ' + cam.id + ' nocard');
			continue;
		}
		const f = card.querySelector('form');
		// the raw formats beyond the common ones are behind "more"
		if (!f.more.checked)
			f.more.click();
		const fmt = cam.formats.find(x => x.fourcc === cam.mode.fourcc);
		const names = cam.formats.map(x => x.fourcc_name).filter(n => !/^(MJPE?G|JPE?G)$/i.test(n));
		const sizes = fmt.sizes.map(s => s.width + 'x' + s.height);
		const cur = fmt.sizes.find(s => s.width === cam.mode.width && s.height === cam.mode.height);
		const fps = cur.intervals.map(([n, dd]) => String(Math.round(dd / n * 100) / 100));
		lines.push('cam ' + cam.id + ' formats ' + missing(['MJPEG', ...names], opts(f.format)) +
			' sizes ' + missing(sizes, opts(f.size)) + ' fps ' + missing(fps, opts(f.fps)) +
			' quality ' + (f.quality.options.length > 2 ? 'ok' : 'empty') +
			' nsizes ' + sizes.length + ' nfps ' + fps.length);
		const img = card.querySelector('img.live');
		await until(() => img.naturalWidth > 0, 3000);
		const r = img.getBoundingClientRect();
		lines.push('moves ' + cam.id + ' ' + await pictureMoves(img, cam.id, 3000));
		lines.push('rect ' + cam.id + ' ' + Math.round(r.width) + ':' + Math.round(r.height) + ':' +
			Math.round(r.left) + ':' + Math.round(r.top) + ' natural ' + img.naturalWidth + 'x' + img.naturalHeight);
	}
	// change cam 0's size to 160x120: checked with /api/try, then the live view follows
	const card = doc().querySelector('[data-cam="0"]');
	const img = card.querySelector('img.live');
	card.querySelector('select[name=size]').value = '160x120';
	card.querySelector('button[type=submit]').click();
	await until(() => card.querySelector('.answer').textContent, 3000);
	lines.push('answer ' + card.querySelector('.answer').textContent);
	await until(() => img.naturalWidth === 160, 3000);
	lines.push('after ' + img.naturalWidth + 'x' + img.naturalHeight + ' ' + img.getAttribute('src'));
	// a size the camera cannot give is refused and the view stays
	const sel = card.querySelector('select[name=size]');
	sel.append(new Option('bad', '99999x99999'));
	sel.value = '99999x99999';
	card.querySelector('button[type=submit]').click();
	await until(() => card.querySelector('.answer.error'), 3000);
	lines.push('refused ' + (card.querySelector('.answer.error') ? 'yes' : 'no') + ' ' + img.getAttribute('src'));
	// the snapshot link downloads the applied choice, then a raw format's frame
	const snap = card.querySelector('a.snap');
	let r = await fetch(snap.href);
	let body = await r.arrayBuffer();
	lines.push('snap ' + r.status + ' ' + r.headers.get('content-type') + ' ' + r.headers.get('x-size') +
		' ' + snap.download + ' ' + (new Uint8Array(body)[0] === 0xff ? 'jpeg' : 'nojpeg'));
	card.querySelector('select[name=format]').value = 'YUYV';
	sel.value = '160x120';
	card.querySelector('button[type=submit]').click();
	await until(() => /^delivered YUYV/.test(card.querySelector('.answer').textContent), 3000);
	r = await fetch(snap.href);
	body = await r.arrayBuffer();
	lines.push('raw ' + r.status + ' ' + r.headers.get('x-format') + ' ' + r.headers.get('x-width') + 'x' +
		r.headers.get('x-height') + ' ' + body.byteLength + ' ' + snap.download + ' ' + snap.textContent);
	// live stats from /api/status (polled every 2 s of page time; real time
	// passes while snapshots are fetched)
	const stats = card.querySelector('.stats');
	const filled = t => /capture [1-9]/.test(t) && (/snapshot polling/.test(t) || /[1-9][0-9]* clients, sent [1-9]/.test(t));
	for (let i = 0; i < 40 && !filled(stats.textContent); i++) {
		await (await fetch('/snapshot?cam=1&max_age_ms=0&t=' + i)).arrayBuffer();
		await sleep(500);
	}
	lines.push('stats ' + stats.textContent);
	// a hidden tab closes its streams, a visible one reopens them (the
	// server's list of MJPEG clients per camera)
	const fd = doc();
	let hidden = false;
	Object.defineProperty(fd, 'hidden', { configurable: true, get: () => hidden });
	Object.defineProperty(fd, 'visibilityState', { configurable: true, get: () => hidden ? 'hidden' : 'visible' });
	const streams = async () => (await (await fetch('/api/status')).json()).cams
		.map(c => (c.clients || []).filter(x => x.kind === 'mjpeg').length).join(',');
	async function waitStreams(want) {
		let got = await streams();
		for (let i = 0; i < 40 && got !== want; i++) {
			await (await fetch('/snapshot?cam=1&max_age_ms=0&v=' + i)).arrayBuffer();
			got = await streams();
		}
		return got;
	}
	hidden = true;
	fd.dispatchEvent(new Event('visibilitychange'));
	const h = await waitStreams('0,0');
	hidden = false;
	fd.dispatchEvent(new Event('visibilitychange'));
	lines.push('hidden ' + h + ' visible ' + await waitStreams('1,1'));
	// snapshot polling (broken.html): count the pictures that arrive in 1.5 s
	let loads = 0;
	img.addEventListener('load', () => loads++);
	await sleep(1500);
	lines.push('loads ' + loads + ' src ' + img.getAttribute('src').replace(/&t=\d+/, ''));
	// plural forms as the page writes them
	const w = document.getElementById('f').contentWindow;
	lines.push('plural ' + [0, 1, 2].map(n => w.plural(n, 'client')).join('|'));
	// rotate and flip: checked with /api/try, then the live view turns
	// (the device's size, on its side: portrait)
	card.querySelector('select[name=format]').value = 'MJPEG';
	card.querySelector('select[name=size]').value = '';
	card.querySelector('select[name=rotate]').value = '90';
	card.querySelector('select[name=flip]').value = 'h';
	card.querySelector('button[type=submit]').click();
	await until(() => img.naturalHeight > img.naturalWidth, 5000);
	lines.push('rotated ' + (img.naturalHeight > img.naturalWidth ? 'portrait' : 'landscape') + ' ' +
		img.naturalWidth + 'x' + img.naturalHeight + ' ' + img.getAttribute('src').replace(/&t=\d+/, ''));
	// the URLs to copy: absolute, the view's settings, and they work (the
	// snapshot portrait too; its width may differ from the stream's by the
	// few pixels a lossless JPEG rotation trims)
	const us = card.querySelector('.url-stream').value, un = card.querySelector('.url-snapshot').value;
	lines.push('urls ' + us.replace(location.origin, 'ORIGIN') + ' ' + un.replace(location.origin, 'ORIGIN'));
	r = await fetch(un);
	await r.arrayBuffer();
	lines.push('urlsnap ' + r.status + ' ' + r.headers.get('x-size') + ' view ' + img.naturalWidth + 'x' +
		img.naturalHeight);
	const copy = card.querySelector('.urls button.copy');
	copy.click();
	await until(() => copy.textContent !== 'Copy', 3000);
	lines.push('copy ' + copy.textContent);
	// fullscreen: the button asks for the view (headless Chromium has no
	// user gesture to grant it, so the request is recorded here)
	const fsb = card.querySelector('button.fullscreen');
	const view = card.querySelector('.view');
	let asked = null;
	view.requestFullscreen = function () { asked = this; return Promise.resolve(); };
	fsb.click();
	lines.push('fullscreen ' + (fsb.hidden ? 'hidden' : 'shown') + ' ' +
		(asked === view ? 'view' : asked ? asked.className : 'none'));
}
run().catch(e => lines.push('exception ' + e)).finally(() => {
	document.getElementById('result').textContent = lines.join('\n') + '\ndone';
});
</script>
</body></html>
EOH
# shellcheck disable=SC2086
if ! start_vcapd_any --config "$TMP/v.conf" $CAMS; then
	fail start_b "daemon did not start"; exit 1
fi
B=http://127.0.0.1:$VPORT
grep -q "web root $W" "$VLOG"
check web_root_option $? "log does not name the configured web root: $(grep 'web' "$VLOG")"
# positive controls: a file in a subdirectory is served, the outside file exists
[ "$(curl -s "$B/sub/in.txt")" = inside-sub ] && [ "$(code "$B/sub/in.txt")" = 200 ] && [ -s "$TMP/outside/out.txt" ]
check subdir_served $? "/sub/in.txt: $(code "$B/sub/in.txt")"
for p in /link.txt /linkdir/out.txt /inlink.txt /root/etc/passwd /.hidden /%2ehidden /.git/HEAD \
	/sub/../link.txt /sub/%2e%2e/.hidden /sub/../../outside/out.txt; do
	n=$(echo "$p" | tr -c 'a-zA-Z0-9\n' _)
	c=$(curl -s --path-as-is -o "$TMP/b" -w '%{http_code}' "$B$p")
	[ "$c" = 404 ] && ! grep -q 'secret\|^root:' "$TMP/b"
	check "escape$n" $? "$p answered $c: $(head -c 80 "$TMP/b")"
done

chrome "$TMP/drive.err" --window-size=1000,1500 --virtual-time-budget=25000 --dump-dom "$B/drive.html" >"$TMP/drive.html"
R=$(sed -n '/<pre id="result">/,/<\/pre>/p' "$TMP/drive.html" | sed 's/<[^>]*>//g; s/&amp;/\&/g')
[ -n "$VERBOSE" ] && echo "$R"
echo "$R" | grep -q '^done$'
check driver_ran $? "driver page did not finish: $(echo "$R" | tr '\n' ';')"
for id in 0 1; do
	nd=$(echo "$R" | sed -n "s/^moves $id \([0-9]*\) of \([0-9]*\)$/\1 \2/p")
	# shellcheck disable=SC2086
	set -- $nd
	[ $# = 2 ] && [ "$1" -gt $(($2 / 1000)) ]
	check "live_moves_cam$id" $? "pixels changed in 1 s in the page: $(echo "$R" | grep "^moves $id" || echo none)"
	echo "$R" | grep -qE "^cam $id formats ok sizes ok fps ok quality ok nsizes [1-9][0-9]* nfps [1-9]"
	check "pickers_from_api_cam$id" $? "$(echo "$R" | grep "^cam $id" || echo "no line for cam $id")"
done
echo "$R" | grep -q '^answer delivered MJPEG 160x120' &&
	echo "$R" | grep -q '^after 160x120 /stream?cam=0&size=160x120$'
check picker_takes_effect $? "$(echo "$R" | grep -E '^(answer|after)' | tr '\n' ';')"
echo "$R" | grep -q '^refused yes /stream?cam=0&size=160x120$'
check picker_refusal_keeps_view $? "$(echo "$R" | grep '^refused')"
echo "$R" | grep -q '^snap 200 image/jpeg 160x120 cam0.jpg jpeg$'
check snapshot_link $? "$(echo "$R" | grep '^snap' || echo none)"
echo "$R" | grep -q '^raw 200 YUYV 160x120 38400 cam0.yuyv Raw frame$'
check raw_format_link $? "$(echo "$R" | grep '^raw' || echo none)"
echo "$R" | grep -q '^hidden 0,0 visible 1,1$'
check hidden_tab_closes_streams $? "MJPEG clients per camera: $(echo "$R" | grep '^hidden' || echo none)"
echo "$R" | grep -qE '^stats streaming, [A-Z0-9]+ [0-9]+x[0-9]+, capture [1-9][0-9.]* fps, dropped [0-9]+, (1 client|[2-9] clients|[1-9][0-9]+ clients), sent [0-9.]+ [KM]iB \(MJPEG stream\)$'
check live_stats $? "$(echo "$R" | grep '^stats' || echo none)"
echo "$R" | grep -q '^plural 0 clients|1 client|2 clients$'
check plural_forms $? "$(echo "$R" | grep '^plural' || echo none)"
echo "$R" | grep -qE '^rotated portrait [0-9]+x[0-9]+ /stream\?cam=0&rotate=90&flip=h$'
check rotate_flip_pickers $? "$(echo "$R" | grep '^rotated' || echo none)"
echo "$R" | grep -q '^urls ORIGIN/stream?cam=0&rotate=90&flip=h ORIGIN/snapshot?cam=0&rotate=90&flip=h$' &&
	echo "$R" | sed -n 's/^urlsnap 200 \([0-9]*\)x\([0-9]*\) view .*/\1 \2/p' | awk '{ exit !($1 > 0 && $2 > $1) }'
check share_urls $? "$(echo "$R" | grep -E '^url' | tr '\n' ';')"
echo "$R" | grep -qE '^copy (Copied|Press Ctrl\+C)$'
check copy_button $? "$(echo "$R" | grep '^copy' || echo none)"
echo "$R" | grep -q '^fullscreen shown view$'
check fullscreen_button $? "$(echo "$R" | grep '^fullscreen' || echo none)"
err=$(console "$TMP/drive.err")
[ -z "$err" ]
check driver_no_console_errors $? "$err"

# Two screenshots of the page ~1 s apart: the picture of each camera is on
# screen (not the black view) and differs (two page loads, so a still
# picture would pass that one: live_moves above is the streaming proof).
# Rects from the driver (same viewport: its frame is 1000x1400 at 0,0).
# A viewer per camera stays connected across both loads: without one, each
# camera goes back to its default mode between them (issue 13's policy) and
# the test pattern starts counting from frame 0 again, so two loads could
# show the same early frame.
curl -s -m 30 -o /dev/null "$B/stream?cam=0" & H0=$!
curl -s -m 30 -o /dev/null "$B/stream?cam=1" & H1=$!
sleep 0.5
for n in a b; do
	chrome "$TMP/shot-$n.err" --window-size=1000,1400 --virtual-time-budget=1500 --screenshot="$TMP/$n.png" "$B/"
	[ $n = a ] && sleep 1
done
kill $H0 $H1 2>/dev/null
wait $H0 $H1 2>/dev/null
for id in 0 1; do
	rect=$(echo "$R" | sed -n "s/^rect $id \([0-9:]*\) natural [1-9].*/\1/p")
	if [ -z "$rect" ] || [ ! -s "$TMP/a.png" ] || [ ! -s "$TMP/b.png" ]; then
		fail "shot_cam$id" "no picture rect ($(echo "$R" | grep "^rect $id")) or no screenshot"
		continue
	fi
	for n in a b; do
		ffmpeg -v error -i "$TMP/$n.png" -vf "crop=$rect" -pix_fmt gray -f rawvideo "$TMP/$n$id.raw" 2>>"$TMP/ff.err"
		ffmpeg -v error -i "$TMP/$n.png" -vf "crop=$rect,signalstats,metadata=print:file=$TMP/$n$id.st" -f null - 2>>"$TMP/ff.err"
	done
	st=$(sed -n 's/.*YMIN=\([0-9]*\).*/\1/p; s/.*YMAX=\([0-9]*\).*/\1/p' "$TMP/a$id.st" "$TMP/b$id.st" | tr '\n' ' ')
	# shellcheck disable=SC2086
	set -- $st
	[ $# = 4 ] && [ $(($2 - $1)) -gt 100 ] && [ $(($4 - $3)) -gt 100 ]
	check "shot_not_blank_cam$id" $? "luma range in the view $rect: '$st' $(head -c 200 "$TMP/ff.err")"
	[ -s "$TMP/a$id.raw" ] && ! cmp -s "$TMP/a$id.raw" "$TMP/b$id.raw"
	check "shot_differs_cam$id" $? "the view $rect is identical in two screenshots 1 s apart"
done
err=$(cat "$TMP/shot-a.err" "$TMP/shot-b.err" | grep -E 'CONSOLE|Uncaught' | grep -F 127.0.0.1 | head -3)
[ -z "$err" ]
check shots_no_console_errors $? "$err"

# An iPhone's user agent no longer decides anything (issue 23): the page
# shows the MJPEG stream in <img> as for any browser.
IOS='Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1'
chrome "$TMP/ios.err" --user-agent="$IOS" --virtual-time-budget=3000 --dump-dom "$B/" | sed 's/></>\n</g' >"$TMP/ios.txt"
grep -q 'src="/stream?cam=0"' "$TMP/ios.txt" && grep -q 'src="/stream?cam=1"' "$TMP/ios.txt" && ! grep -q 'snapshot polling' "$TMP/ios.txt"
check ios_ua_mjpeg_img $? "live views: $(grep -o '<img class="live"[^>]*' "$TMP/ios.txt" | tr '\n' ';')"
# Where the MJPEG <img> fails (here made to: broken.html sends the page's
# /stream URLs to /stream-broken, a 404) the page polls /snapshot instead.
sed 's|<script src="app.js">|<script src="broken.js"></script>&|' web/index.html >"$W/broken.html"
cat >"$W/broken.js" <<'EOJ'
'use strict';
const d = Object.getOwnPropertyDescriptor(HTMLImageElement.prototype, 'src');
Object.defineProperty(HTMLImageElement.prototype, 'src', { get() { return d.get.call(this); },
	set(v) { d.set.call(this, String(v).replace(/^\/stream\?/, '/stream-broken?')); } });
EOJ
sed 's|src="index.html"|src="broken.html"|' "$W/drive.html" >"$W/drive-broken.html"
chrome "$TMP/poll.err" --window-size=1000,1500 --virtual-time-budget=25000 --dump-dom "$B/drive-broken.html" >"$TMP/poll.html"
R=$(sed -n '/<pre id="result">/,/<\/pre>/p' "$TMP/poll.html" | sed 's/<[^>]*>//g; s/&amp;/\&/g')
[ -n "$VERBOSE" ] && echo "$R"
nl=$(echo "$R" | sed -n 's/^loads \([0-9]*\) src \/snapshot?cam=0&size=160x120&max_age_ms=100$/\1/p')
[ -n "$nl" ] && [ "$nl" -ge 3 ] && echo "$R" | grep -q '^after 160x120 /snapshot?cam=0&size=160x120' &&
	echo "$R" | grep -q '^stats .*(snapshot polling: the stream failed)$'
check poll_when_img_fails $? "$(echo "$R" | grep -E '^(after|loads|stats)' | tr '\n' ';')"
err=$(grep -E 'CONSOLE|Uncaught' "$TMP/poll.err" | grep -F 127.0.0.1 | grep -v 'stream-broken' | head -3)
[ -z "$err" ]
check poll_no_console_errors $? "$err"

# The stream clients Chromium opened have gone once it quit
n=$(clients_after_quit "$B")
check browser_clients_released "$([ "$n" = 0 ]; echo $?)" "$n clients left (polled up to 3 s after the browser quit)"
stop_vcapd
check exit_clean_b $? "daemon B exit status not 0"

# Daemon D: a camera absent when the page loads (its first 5 opens fail,
# ~8 s with the backoff) gets its card showing the server's placeholder
# picture (its stream answers 200 while the camera is away), then the live
# picture on the same stream (no retry, no snapshot polling), pickers and
# controls once it appears. Real time passes in the driver while it fetches
# snapshots of the other camera.
cat >"$W/absent.html" <<'EOH'
<!doctype html>
<html><body style="margin:0">
<iframe id="f" src="index.html" width="1000" height="1400"></iframe>
<pre id="result">pending</pre>
<script>
'use strict';
const doc = () => document.getElementById('f').contentDocument;
const state = async () => (await (await fetch('/api/cams/0')).json()).state;
(async () => {
	const out = [];
	let img = null;
	for (let i = 0; i < 100 && !img; i++) {
		await (await fetch('/snapshot?cam=1&max_age_ms=0&w=' + i)).arrayBuffer();
		await new Promise(r => setTimeout(r, 100));
		img = doc() && doc().querySelector('[data-cam="0"] img.live');
	}
	for (let i = 0; i < 100 && !(img.naturalWidth > 0); i++) {
		await (await fetch('/snapshot?cam=1&max_age_ms=0&u=' + i)).arrayBuffer();
		await new Promise(r => setTimeout(r, 100));
	}
	out.push('first ' + await state() + ' ' + img.naturalWidth + ' ' + img.getAttribute('src'));
	// the placeholder already has the camera's configured size (320x240):
	// live is the camera streaming with the same <img> still on /stream
	for (let i = 0; i < 400; i++) {
		if (img.naturalWidth === 320 && /^\/stream/.test(img.getAttribute('src')) &&
		    await state() === 'streaming')
			break;
		await (await fetch('/snapshot?cam=1&max_age_ms=0&v=' + i)).arrayBuffer();
		await new Promise(r => setTimeout(r, 100));
	}
	out.push('then ' + await state() + ' ' + img.naturalWidth + ' ' + img.getAttribute('src').replace(/&retry=\d+/, '&retry=N'));
	// the pickers and controls are filled in once the camera is there
	const card = doc().querySelector('[data-cam="0"]');
	const sizes = () => card.querySelector('select[name=size]').options.length;
	for (let i = 0; i < 100 && !(sizes() > 1 && !/controls: /.test(card.querySelector('.controls').textContent)); i++) {
		await (await fetch('/snapshot?cam=1&max_age_ms=0&p=' + i)).arrayBuffer();
		await new Promise(r => setTimeout(r, 100));
	}
	out.push('pickers ' + (sizes() > 1 ? 'filled' : 'empty') + ' controls ' + card.querySelector('.controls').textContent);
	document.getElementById('result').textContent = out.join('\n');
})().catch(e => { document.getElementById('result').textContent = 'exception ' + e; });
</script>
</body></html>
EOH
# shellcheck disable=SC2086
if start_vcapd_any --config "$TMP/v.conf" --device "fault:open=5;test:320x240@15:MJPEG" --device test:160x120@15:MJPEG; then
	chrome "$TMP/ab.err" --virtual-time-budget=120000 --dump-dom "http://127.0.0.1:$VPORT/absent.html" >"$TMP/ab.html"
	R=$(sed -n '/<pre id="result">/,/<\/pre>/{p;/<\/pre>/q;}' "$TMP/ab.html" | sed 's/<[^>]*>//g; s/&amp;/\&/g')
	[ -n "$VERBOSE" ] && echo "$R"
	echo "$R" | grep -q '^first absent 320 /stream?cam=0$' && echo "$R" | grep -q '^then streaming 320 /stream?cam=0$' &&
		echo "$R" | grep -q '^pickers filled controls No controls.$'
	check absent_cam_streams_later $? "$(echo "$R" | tr '\n' ';')"
	stop_vcapd
	check exit_clean_d $? "daemon D exit status not 0"
else
	fail start_d "daemon did not start"
fi

# Daemon C: authentication on; the page opened with ?token= (a kiosk link)
# passes the token on to the API, the stream and snapshots.
if ! command -v openssl >/dev/null; then
	skip token_page "openssl missing (DEPS_TEST)"; exit 0
fi
cat >"$TMP/c.conf" <<EOC
[server]
user = admin:$(openssl passwd -6 pw)
token_secret = 0123456789abcdef-webpage
auth_view = basic,token
auth_status = basic,token
auth_control = basic,token
EOC
TOK=$("$VCAPD" --config "$TMP/c.conf" --make-token view,status,control:600)
# shellcheck disable=SC2086
if [ -z "$TOK" ] || ! start_vcapd_any --config "$TMP/c.conf" $CAMS; then
	fail start_c "no token ('$TOK') or daemon did not start"; exit 1
fi
C=http://127.0.0.1:$VPORT
# without the token the API and the stream are refused (a browser would
# ask for a password: nothing to dump), so the page works only by passing it
c1=$(code "$C/api/cams") c2=$(code --max-time 1 "$C/stream?cam=0") c3=$(code "$C/api/cams?token=$TOK")
[ "$c1" = 401 ] && [ "$c2" = 401 ] && [ "$c3" = 200 ]
check token_page_needs_auth $? "/api/cams $c1, /stream $c2 without a token; /api/cams $c3 with it"
chrome "$TMP/t1.err" --virtual-time-budget=3000 --dump-dom "$C/?token=$TOK" | sed 's/></>\n</g' >"$TMP/t1.txt"
[ "$(grep -c '<section class="cam" data-cam=' "$TMP/t1.txt")" = 2 ] &&
	grep -q "src=\"/stream?cam=0&amp;token=$TOK\"" "$TMP/t1.txt" &&
	grep -q '<span id="status">vcapd ' "$TMP/t1.txt" && ! grep -qE 'Cannot list|status: |controls: ' "$TMP/t1.txt"
check token_page_works $? "with ?token=: $(grep -oE '<img class="live"[^>]*|Cannot list[^<]*|status: [^<]*|controls: [^<]*' "$TMP/t1.txt" | head -3 | tr '\n' ';')"
sleep 0.3
n=$(curl -s -u admin:pw "$C/api/status" | grep -o '"frames":[1-9]' | wc -l)
[ "$n" -ge 1 ]
check token_page_streamed $? "no camera delivered frames to the token page"
err=$(console "$TMP/t1.err")
[ -z "$err" ]
check token_page_no_console_errors $? "$err"
stop_vcapd
check exit_clean_c $? "daemon C exit status not 0"
exit 0
