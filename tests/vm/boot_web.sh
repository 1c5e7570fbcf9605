#!/bin/sh
# The web page against a real driver, ONE vivid-vm boot: vcapd runs in the
# guest on vivid's capture node (forwarded to the host), headless Chromium on
# the host works the page through a same-origin driver frame: the card shows
# the device, every control of /api/cams/<id>/controls has its widget (slider,
# checkbox, menu with all entries, button, number field; class headings;
# read-only ones disabled), a slider, a checkbox and a menu changed in the
# page reach the driver (read back through the API), a value the driver
# changes by itself follows in place, the live picture moves,
# no console errors, and the daemon exits 0. Host port 18983.
cd "$(dirname "$0")/../.." || exit 2
VCAPD=${VCAPD:-${VCAP_BUILD:-build}/vcapd}

if [ "${1:-}" = "--guest" ]; then
	# runs vcapd until the host creates $2/stop (guest /tmp is the host's)
	d=$2
	"$VCAPD" --config "$d/v.conf" >"$d/vcapd.log" 2>&1 &
	vp=$!
	while [ ! -e "$d/stop" ] && kill -0 $vp 2>/dev/null; do sleep 0.2; done
	kill $vp 2>/dev/null
	wait $vp
	echo $? >"$d/rc"
	exit 0
fi

T=web_vm
. tests/integ/lib/common.sh
VM=../shared/vm/vivid-vm
P=18983
U=http://127.0.0.1:$P
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
if [ ! -x "$VM" ]; then
	skip boot "no $VM"; exit 0
fi
if [ -z "$CHROME" ]; then
	skip boot "no chromium installed"; exit 0
fi
W=$TMP/www
mkdir -p "$W"
cp web/* tests/integ/lib/drive.js "$W/"
cat >"$TMP/v.conf" <<EOC
[server]
listen = 0.0.0.0:8080
web_root = $W
# Chromium on the host reaches the guest through QEMU's user network, so the
# daemon sees 10.0.2.2, not loopback: unauthenticated control PUTs from a
# non-loopback peer need auth_control = none written out (issue 14 default).
auth_control = none
[camera v]
device = /dev/video0
EOC
cat >"$W/drive.html" <<'EOH'
<!doctype html>
<html><body style="margin:0">
<iframe id="f" src="index.html" style="border:0;display:block" width="1000" height="1400"></iframe>
<pre id="result">pending</pre>
<script src="drive.js"></script>
<script>
'use strict';
const doc = () => document.getElementById('f').contentDocument;
const api = async () => (await (await fetch('/api/cams/v/controls')).json()).controls;
const WANT = { 1: 'range', 2: 'checkbox', 3: 'select', 4: 'button', 5: 'number', 8: 'number', 9: 'select' };
async function run() {
	const card = await until(() => doc().querySelector('[data-cam="v"]'), 20000);
	lines.push('title ' + card.querySelector('.cam-title').textContent);
	lines.push('moves ' + await pictureMoves(card.querySelector('img.live'), 'v', 20000));
	await until(() => card.querySelector('.controls [data-key]'), 20000);
	const list = await api();
	const bad = [];
	let n = 0, classes = 0;
	for (const c of list) {
		if (c.type === 6) {
			classes++;
			continue;
		}
		if (c.type === 7 || (c.flags & 0x100) || c.type >= 0x100)
			continue;
		n++;
		const e = card.querySelector('.controls [data-key="' + c.key + '"]');
		const got = !e ? 'none' : e.tagName === 'SELECT' ? 'select' : e.tagName === 'BUTTON' ? 'button' : e.type;
		const ro = (c.flags & 0x5) !== 0;
		if (got !== WANT[c.type])
			bad.push(c.key + ':' + got + '!=' + WANT[c.type]);
		else if (ro !== e.disabled)
			bad.push(c.key + ':disabled=' + e.disabled);
		else if ((c.type === 3 || c.type === 9) && e.options.length !== c.menu.length)
			bad.push(c.key + ':' + e.options.length + '/' + c.menu.length + 'entries');
		// the value shown, unless the driver changes it by itself (read-only, volatile)
		else if (c.type === 1 && !(c.flags & 0xc4) && c.value !== undefined && Number(e.value) !== c.value)
			bad.push(c.key + ':shows' + e.value + '!=' + c.value);
	}
	const h3 = card.querySelectorAll('.controls h3.ctrl-class').length;
	lines.push('controls ' + n + ' classes ' + classes + ' headings ' + h3 + ' bad ' + (bad.join(',') || 'none'));
	// change a control in the page; the answer re-renders the list
	async function change(key, act) {
		const e = card.querySelector('.controls [data-key="' + key + '"]');
		if (!e)
			return 'nowidget';
		const before = (list.find(c => c.key === key) || {}).value;
		act(e);
		await until(() => card.querySelector('.controls [data-key="' + key + '"]') !== e, 20000);
		const now = (await api()).find(c => c.key === key);
		lines.push('set ' + key + ' ' + before + ' ' + (now ? now.value : 'gone'));
	}
	await change('brightness', e => { e.value = '200'; e.dispatchEvent(new Event('change')); });
	await change('show_border', e => e.click());
	await change('test_pattern', e => { e.value = '1'; e.dispatchEvent(new Event('change')); });
	// a value the driver changes by itself (vivid counts in a read-only
	// control) follows in place, without a re-render
	const roKey = 'read_only_integer_32_bits';
	const ro = card.querySelector('.controls [data-key="' + roKey + '"]');
	const shown = () => ro ? ro.nextElementSibling.textContent : 'none';
	const ro0 = shown();
	for (let i = 0; i < 40 && ro && shown() === ro0; i++) {
		await (await fetch('/snapshot?cam=v&max_age_ms=0&t=r' + i)).arrayBuffer();
		await sleep(500);
	}
	lines.push('volatile ' + ro0 + ' ' + shown() + ' ' +
		(ro && ro === card.querySelector('.controls [data-key="' + roKey + '"]') ? 'inplace' : 'rerendered'));
	const err = card.querySelector('.answer.error');
	lines.push('answer ' + (err ? err.textContent : 'ok'));
}
run().catch(e => lines.push('exception ' + e)).finally(() => {
	document.getElementById('result').textContent = lines.join('\n') + '\ndone';
});
</script>
</body></html>
EOH

"$VM" --host-tmp --fwd $P:8080 --timeout 300 --vivid "node_types=0x1" -- \
	sh tests/vm/boot_web.sh --guest "$TMP" >"$TMP/vm.log" 2>&1 &
VMPID=$!
PIDS="$PIDS $VMPID"
up=1
for i in $(seq 240); do
	curl -s -o /dev/null --max-time 2 "$U/api/status" && { up=0; break; }
	kill -0 $VMPID 2>/dev/null || break
	sleep 0.5
done
if [ $up != 0 ]; then
	fail boot "vcapd in the guest did not answer on $P: $(tail -5 "$TMP/vm.log") $(tail -5 "$TMP/vcapd.log" 2>/dev/null)"
	touch "$TMP/stop"; wait $VMPID; exit 1
fi
timeout 180 "$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$TMP/prof" \
	--enable-logging=stderr --v=0 --window-size=1000,1500 --virtual-time-budget=120000 \
	--dump-dom "$U/drive.html" >"$TMP/drive.html" 2>"$TMP/drive.err"
R=$(sed -n '/<pre id="result">/,/<\/pre>/p' "$TMP/drive.html" | sed 's/<[^>]*>//g; s/&amp;/\&/g')
[ -n "$VERBOSE" ] && echo "$R"
echo "$R" | grep -q '^done$'
check driver_ran $? "driver page did not finish: $(echo "$R" | tr '\n' ';')"
# titled by the V4L2 card name (vivid's), the path and id beside it
echo "$R" | grep -q '^title vivid — /dev/video0 · cam v$'
check card_shows_device $? "$(echo "$R" | grep '^title' || echo 'no card')"
# vivid has > 40 settable controls in 3 classes
c=$(echo "$R" | sed -n 's/^controls \([0-9]*\) classes \([0-9]*\) headings \([0-9]*\) bad none$/\1 \2 \3/p')
# shellcheck disable=SC2086
set -- $c
[ $# = 3 ] && [ "$1" -ge 40 ] && [ "$2" -ge 3 ] && [ "$2" = "$3" ]
check control_widgets $? "$(echo "$R" | grep '^controls' || echo 'no controls line')"
echo "$R" | grep -q '^set brightness 128 200$'
check slider_sets_brightness $? "$(echo "$R" | grep '^set brightness' || echo none)"
echo "$R" | grep -qE '^set show_border (0 1|1 0)$'
check checkbox_sets_show_border $? "$(echo "$R" | grep '^set show_border' || echo none)"
echo "$R" | grep -qE '^set test_pattern [02-9][0-9]* 1$'
check menu_sets_test_pattern $? "$(echo "$R" | grep '^set test_pattern' || echo none)"
v=$(echo "$R" | sed -n 's/^volatile \(-*[0-9]*\) \(-*[0-9]*\) inplace$/\1 \2/p')
# shellcheck disable=SC2086
set -- $v
[ $# = 2 ] && [ "$1" != "$2" ]
check readonly_value_follows $? "$(echo "$R" | grep '^volatile' || echo none)"
echo "$R" | grep -q '^answer ok$'
check no_control_error $? "$(echo "$R" | grep '^answer')"
nd=$(echo "$R" | sed -n 's/^moves \([0-9]*\) of \([0-9]*\)$/\1 \2/p')
# shellcheck disable=SC2086
set -- $nd
[ $# = 2 ] && [ "$1" -gt $(($2 / 1000)) ]
check live_moves $? "pixels changed in the page: $(echo "$R" | grep '^moves' || echo none)"
err=$(grep -E 'CONSOLE|Uncaught' "$TMP/drive.err" | grep -F "127.0.0.1" | head -3)
[ -z "$err" ]
check no_console_errors $? "$err"

touch "$TMP/stop"
for i in $(seq 60); do kill -0 $VMPID 2>/dev/null || break; sleep 0.5; done
wait $VMPID
rc=$(cat "$TMP/rc" 2>/dev/null)
[ "$rc" = 0 ] && ! grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error' "$TMP/vcapd.log"
check daemon_exit_clean $? "vcapd in the guest: exit '$rc' $(grep -E 'Sanitizer|runtime error' "$TMP/vcapd.log" | head -2)"
exit 0
