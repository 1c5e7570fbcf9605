// vcapd web page: one card per camera from /api/cams (titled by the V4L2
// card name); pickers checked with /api/try before switching; the view's
// URLs to copy into other programs; controls from /api/cams/<id>/controls;
// stats from /api/status every 2 s; H.264 in a <video> where the browser
// and the daemon can (MJPEG otherwise, or when it fails); the measured
// latency. Plain script, no build step.
'use strict';

const QUALITIES = [30, 50, 70, 80, 90, 95];
// '' = the camera's default (its config or command line), else the URL asks
const ROTATIONS = [['', 'default'], ['0', '0°'], ['90', '90°'], ['180', '180°'], ['270', '270°']];
const FLIPS = [['', 'default'], ['none', 'none'], ['h', 'horizontal'], ['v', 'vertical'], ['hv', 'both']];
const COMMON_SIZES = [[160, 120], [320, 240], [640, 360], [640, 480], [800, 600],
	[1280, 720], [1920, 1080]];
// The format menu: these first (in this order, where the camera has them),
// the rest (tens of raw pixel formats) behind the "more" box.
const COMMON_FORMATS = ['MJPEG', 'H264', 'JPEG', 'YUYV', 'NV12', 'YUV420', 'RGB24'];
const FORMAT_LABELS = { MJPEG: 'MJPEG (live)', H264: 'H.264 (live video)', JPEG: 'JPEG (snapshot)',
	YUV420: 'I420 (raw)', RGB24: 'RGB (raw)' };
// MJPEG <img> watchdog: checked every WATCH_MS, no picture this many
// times in a row while a snapshot loads: snapshot polling instead.
const WATCH_MS = 2000, WATCH_STUCK = 3;
const CTRL = { INTEGER: 1, BOOLEAN: 2, MENU: 3, BUTTON: 4, INTEGER64: 5, CLASS: 6, STRING: 7,
	BITMASK: 8, INTEGER_MENU: 9 };
const FLAG_DISABLED = 0x1, FLAG_READ_ONLY = 0x4, FLAG_INACTIVE = 0x10, FLAG_VOLATILE = 0x80,
	FLAG_WRITE_ONLY = 0x40, FLAG_HAS_PAYLOAD = 0x100;

// H.264 as the daemon's software encoder writes it (Constrained Baseline 3.1)
const AVC = 'video/mp4; codecs="avc1.42E01F"';
// MediaSource where it takes AVC, else ManagedMediaSource (iPhone Safari
// has only that one). A plain <video src=/stream.mp4> (an endless
// progressive MP4) does not play on iOS; where neither exists (iOS before
// 17.1) the browser's own HLS player gets <video src=/stream.m3u8>, which
// lags a few segments (seconds) behind: used only there.
const MSE = ['MediaSource', 'ManagedMediaSource'].map(name => ({ name, C: window[name] }))
	.find(m => typeof m.C === 'function' && m.C.isTypeSupported && m.C.isTypeSupported(AVC)) || null;
const HLS = !MSE && document.createElement('video').canPlayType('application/vnd.apple.mpegurl') !== '';
const CAN_H264 = MSE !== null || HLS;
const STALL_MS = 5000; // no new picture in the <video> for this long: a new stream or MJPEG
const H264_RESTARTS = 3; // ended or stalled streams in a row restarted before MJPEG instead

const cards = new Map(); // cam id -> card state
// A ?token= in the page's own URL (a shared link for a kiosk or a dashboard
// that cannot send a password) goes with every request the page makes.
const TOKEN = new URLSearchParams(location.search).get('token');

function withToken(url) {
	if (!TOKEN || /[?&]token=/.test(url))
		return url;
	return url + (url.includes('?') ? '&' : '?') + 'token=' + encodeURIComponent(TOKEN);
}

async function getJSON(url, opts) {
	const r = await fetch(withToken(url), opts);
	let body = null;
	try { body = await r.json(); } catch (e) { body = null; }
	if (!r.ok) {
		const e = new Error((body && body.error) || (r.status + ' ' + r.statusText));
		e.status = r.status;
		throw e;
	}
	return body;
}

function el(tag, props, ...kids) {
	const e = document.createElement(tag);
	Object.assign(e, props || {});
	for (const k of kids)
		e.append(k);
	return e;
}

function fillSelect(sel, items, current) {
	sel.replaceChildren(...items.map(([value, text]) => el('option', { value, textContent: text })));
	if (current !== undefined && items.some(([v]) => String(v) === String(current)))
		sel.value = String(current);
}

// "1 client", "2 clients"
function plural(n, word) {
	return n + ' ' + word + (n === 1 ? '' : 's');
}

// What a camera is called on its card: the device's own name (V4L2 card),
// else what its path says.
function camName(cam) {
	if (cam.card)
		return cam.card;
	return /(^|;)test(:|$)/.test(cam.path) ? 'Test pattern' : 'Camera ' + cam.id;
}

function setTitle(card, cam) {
	card.node.querySelector('.cam-name').textContent = camName(cam);
	card.node.querySelector('.cam-path').textContent = cam.path + ' · cam ' + cam.id;
}

function isJpeg(name) {
	return /^(mjpe?g|jpe?g)$/i.test(name);
}

function isH264(name) {
	return /^h\.?264$/i.test(name);
}

// Sizes and frame rates of the device's current format (or the first).
function modeInfo(cam) {
	const mode = cam.mode || {};
	const f = cam.formats.find(x => x.fourcc === mode.fourcc) || cam.formats[0] || { sizes: [] };
	let sizes = (f.sizes || []).map(s => [s.width, s.height]);
	if (!sizes.length && f.stepwise)
		sizes = COMMON_SIZES.filter(([w, h]) => w <= f.stepwise.max_width && h <= f.stepwise.max_height);
	const cur = (f.sizes || []).find(s => s.width === mode.width && s.height === mode.height) ||
		(f.sizes || [])[0];
	let fps = [];
	for (const [n, d] of (cur && cur.intervals) || [])
		if (n > 0)
			fps.push(Math.round(d / n * 100) / 100);
	if (!fps.length)
		fps = [30, 15, 5];
	return { sizes, fps };
}

function params(card) {
	const f = card.form;
	const p = new URLSearchParams({ cam: card.id });
	if (TOKEN)
		p.set('token', TOKEN);
	if (f.size.value)
		p.set('size', f.size.value);
	if (f.fps.value)
		p.set('fps', f.fps.value);
	if (f.quality.value)
		p.set('quality', f.quality.value);
	if (f.rotate.value)
		p.set('rotate', f.rotate.value);
	if (f.flip.value)
		p.set('flip', f.flip.value);
	return p;
}

// Absolute URLs of what the live view shows, for other programs; the
// page's token (if any) last, so it is easy to see and to cut.
function shareUrls(card) {
	const p = params(card);
	p.delete('token');
	if (TOKEN)
		p.set('token', TOKEN);
	const base = location.origin;
	card.urlStream.value = base + '/stream?' + p;
	card.urlSnapshot.value = base + '/snapshot?' + p;
}

async function copyText(input, button) {
	let ok = false;
	try {
		await navigator.clipboard.writeText(input.value);
		ok = true;
	} catch (e) {
		// no clipboard API on plain http from another host: select and copy
		input.focus();
		input.select();
		try { ok = document.execCommand('copy'); } catch (e2) { ok = false; }
	}
	button.textContent = ok ? 'Copied' : 'Press Ctrl+C';
	setTimeout(() => { button.textContent = 'Copy'; }, 1500);
}

function toggleFullscreen(card) {
	if (document.fullscreenElement)
		document.exitFullscreen().catch(() => {});
	else
		card.view.requestFullscreen().catch(e => {
			card.answer.textContent = 'fullscreen: ' + e.message;
		});
}

function setView(card) {
	const p = params(card);
	const fmt = card.form.format.value;
	const jpeg = isJpeg(fmt) || isH264(fmt); // an H.264 view's snapshot is a JPEG
	card.snap.href = (jpeg ? '/snapshot?' : '/raw?' + 'format=' + encodeURIComponent(fmt) + '&') + p;
	card.snap.download = 'cam' + card.id + (jpeg ? '.jpg' : '.' + fmt.toLowerCase());
	card.snap.textContent = jpeg ? 'Snapshot' : 'Raw frame';
	card.viewParams = p.toString();
	card.useVideo = isH264(fmt) && card.h264;
	card.h264Ends = 0;
	card.t0 = 0;
	shareUrls(card);
	if (isShown(card))
		startLive(card);
	else
		stopLive(card);
}

function stopVideo(card) {
	const v = card.video;
	clearInterval(card.stallTimer);
	if (card.abort)
		card.abort.abort(); // the MSE fetch
	card.abort = null;
	v.onerror = v.ontimeupdate = null;
	v.srcObject = null;
	if (v.hasAttribute('src')) {
		v.removeAttribute('src');
		v.load(); // closes the stream
	}
	v.hidden = true;
	delete v.dataset.stream;
}

// H.264 view: fragmented MP4 in a muted <video>. An error (the daemon
// refused it, the browser cannot decode it) or a stall falls back to MJPEG.
function startVideo(card) {
	const v = card.video, img = card.img;
	img.onload = img.onerror = null;
	img.removeAttribute('src');
	img.hidden = true;
	v.hidden = false;
	let last = Date.now();
	v.ontimeupdate = () => {
		last = Date.now();
		if (v.currentTime > 2)
			card.h264Ends = 0; // it played: a later end may restart again
	};
	v.onerror = () => fallback(card, 'error ' + (v.error ? v.error.code : '?'));
	card.stallTimer = setInterval(() => {
		if (Date.now() - last <= STALL_MS)
			return;
		// One that stood still after playing gets a new stream, like an
		// ended one: WebKitGTK's MSE, on a loaded host, stopped taking the
		// appends it was given while the stream went on. One that never
		// played cannot play: MJPEG.
		if (v.currentTime > 0 && restartVideo(card))
			return;
		fallback(card, 'no picture for ' + STALL_MS / 1000 + ' s');
	}, 1000);
	if (!MSE) { // native HLS (see HLS above)
		v.src = v.dataset.stream = withToken('/stream.m3u8?' + card.viewParams);
		setLive(card, 'h264', 'HLS');
		v.play().catch(() => {});
		return;
	}
	const url = '/stream.mp4?' + card.viewParams;
	v.dataset.stream = url; // what the <video> shows (its src is a blob:)
	setLive(card, 'h264', MSE.name);
	playMse(card, url);
	v.play().catch(() => {}); // a refused autoplay shows up as a stall
}

// The stream fetched and its bytes appended to a MediaSource: the page
// decides how far back it plays (the newest frame, not the player's
// reserve) and drops what was shown.
function playMse(card, url) {
	const v = card.video, ms = new MSE.C(), ctl = new AbortController();
	card.abort = ctl;
	// ManagedMediaSource opens only when AirPlay is off (or has a URL of its own)
	v.disableRemotePlayback = true;
	v.src = URL.createObjectURL(ms);
	ms.addEventListener('sourceopen', async () => {
		URL.revokeObjectURL(v.src);
		const sb = ms.addSourceBuffer(AVC), queue = [];
		const pump = () => {
			if (sb.updating || !queue.length || ms.readyState !== 'open')
				return;
			try {
				sb.appendBuffer(queue.shift());
			} catch (e) { // full, or the decoder gave up
				fallback(card, e.name);
			}
		};
		sb.addEventListener('updateend', () => {
			const b = sb.buffered, n = b.length;
			if (n && b.end(n - 1) - v.currentTime > 0.5) // behind the live edge: jump
				v.currentTime = Math.max(b.start(n - 1), b.end(n - 1) - 0.1);
			else if (n && v.currentTime - b.start(0) > 20)
				return sb.remove(b.start(0), v.currentTime - 5); // updateend again
			pump();
		});
		try {
			const r = await fetch(url, { signal: ctl.signal });
			if (!r.ok)
				throw new Error(r.status + ' ' + r.statusText);
			const rd = r.body.getReader();
			for (;;) {
				const { value, done } = await rd.read();
				if (done)
					throw new Error('stream ended');
				queue.push(value);
				pump();
			}
		} catch (e) {
			if (ctl.signal.aborted)
				return;
			// The daemon ends an MP4 stream when the camera's mode changes
			// (new parameter sets), as when the view's own MJPEG client has
			// just left: a new stream, a few times before giving up.
			if (e.message === 'stream ended' && restartVideo(card))
				return;
			fallback(card, e.message);
		}
	}, { once: true });
}

// A new H.264 stream for the view, H264_RESTARTS times in a row at most
// (a view that plays resets the count); false when they are used up.
function restartVideo(card) {
	if ((card.h264Ends = (card.h264Ends || 0) + 1) > H264_RESTARTS)
		return false;
	card.node.dataset.h264Restarts = (+card.node.dataset.h264Restarts || 0) + 1;
	clearInterval(card.stallTimer);
	card.pollTimer = setTimeout(() => startLive(card), 200);
	return true;
}

function fallback(card, why) {
	card.useVideo = false;
	card.answer.textContent = 'H.264 did not play (' + why + '): MJPEG instead';
	card.answer.classList.add('error');
	startLive(card);
}

// What the live view is, for the stats line and for tests: 'mjpeg' (the
// stream in <img>), 'poll' (snapshots, and why) or 'h264' (and through what).
function setLive(card, kind, how) {
	card.node.dataset.live = kind;
	card.liveText = kind === 'poll' ? 'snapshot polling: ' + how :
		kind === 'h264' ? 'H.264 via ' + how : 'MJPEG stream';
}

// Snapshot polling only where the MJPEG <img> is seen not to work: it
// shows no picture for WATCH_STUCK checks while a snapshot of the same view
// loads (or its error event fires: startLive). None of Chromium, Firefox
// ESR, WebKitGTK needs it (web/README.md). A still picture is not judged:
// Firefox's canvas gets the same old part of a multipart <img> while the
// <img> shows the stream moving, so a page cannot see what it shows.
function watchImg(card) {
	let empty = 0;
	card.watchTimer = setInterval(() => {
		empty = card.img.naturalWidth > 0 ? 0 : empty + 1;
		if (empty < WATCH_STUCK)
			return;
		clearInterval(card.watchTimer);
		const probe = new Image();
		probe.onload = () => {
			card.polling = 'no picture from the stream for ' + WATCH_MS * WATCH_STUCK / 1000 + ' s';
			startLive(card);
		};
		probe.onerror = () => watchImg(card); // the camera is away: no proof
		probe.src = '/snapshot?' + card.viewParams + '&max_age_ms=1000&w=' + Date.now();
	}, WATCH_MS);
}

function startLive(card) {
	card.stopped = false;
	clearTimeout(card.pollTimer);
	clearInterval(card.watchTimer);
	stopVideo(card);
	if (card.useVideo)
		return startVideo(card);
	const img = card.img;
	img.hidden = false;
	if (card.polling) {
		setLive(card, 'poll', card.polling);
		const next = () => {
			img.onload = () => { card.pollTimer = setTimeout(next, 200); };
			img.onerror = () => { card.pollTimer = setTimeout(next, 2000); };
			img.src = '/snapshot?' + card.viewParams + '&max_age_ms=100&t=' + Date.now();
		};
		next();
		return;
	}
	img.onerror = () => {
		// The stream failed: either the camera is away (try again soon) or
		// this browser cannot show MJPEG in <img> (a snapshot works): poll.
		const probe = new Image();
		probe.onload = () => {
			card.polling = 'the stream failed';
			startLive(card);
		};
		probe.onerror = () => {
			card.retries = (card.retries || 0) + 1;
			card.pollTimer = setTimeout(() => startLive(card), 2000);
		};
		probe.src = '/snapshot?' + card.viewParams + '&max_age_ms=1000&t=' + Date.now();
	};
	img.onload = null;
	// a retry needs a new URL or the browser keeps its failed answer
	img.src = '/stream?' + card.viewParams + (card.retries ? '&retry=' + card.retries : '');
	setLive(card, 'mjpeg');
	watchImg(card);
}

async function apply(card) {
	const fmt = card.form.format.value;
	const p = params(card);
	p.set('format', fmt);
	card.answer.classList.remove('error');
	try {
		const a = await getJSON('/api/try?' + p);
		const o = a.plan.output;
		let text = 'delivered ' + o.fourcc_name + ' ' + o.width + 'x' + o.height +
			(a.plan.fps ? ' @' + a.plan.fps + ' fps' : '') + ', steps: ' + a.plan.steps +
			', device ' + a.device_mode.fourcc_name + ' ' + a.device_mode.width + 'x' +
			a.device_mode.height;
		if (a.plan.adjusted && a.plan.adjusted.length)
			text += ', adjusted: ' + a.plan.adjusted.join(', ');
		if (a.endpoint === '/stream.h264')
			text += card.h264 ? ' (live view: H.264 video)' : ' (this browser cannot play it: MJPEG)';
		else if (a.endpoint !== '/stream')
			text += ' (raw: the live view stays MJPEG)';
		card.answer.textContent = text;
		setView(card);
	} catch (e) {
		card.answer.textContent = 'not switched: ' + e.message;
		card.answer.classList.add('error');
	}
}

// Values the device changes by itself (volatile: auto gain/exposure;
// read-only: status counters) are refreshed in place with the stats, so
// nothing the user is touching is re-rendered.
async function refreshControls(card) {
	if (!card.changing)
		return;
	const r = await getJSON('/api/cams/' + encodeURIComponent(card.id) + '/controls');
	for (const c of r.controls) {
		if (!card.changing.has(c.key) || c.value === undefined)
			continue;
		const input = card.controls.querySelector('[data-key="' + CSS.escape(c.key) + '"]');
		if (!input || input === document.activeElement)
			continue;
		if (input.type === 'checkbox')
			input.checked = !!c.value;
		else
			input.value = c.value;
		const out = input.nextElementSibling;
		if (out && out.tagName === 'OUTPUT')
			out.textContent = c.value;
	}
}

function renderControls(card, list) {
	const box = card.controls;
	const changing = list.filter(c => (c.flags & (FLAG_VOLATILE | FLAG_READ_ONLY)) &&
		!(c.flags & FLAG_WRITE_ONLY) && c.type !== CTRL.CLASS);
	card.changing = changing.length ? new Set(changing.map(c => c.key)) : null;
	box.replaceChildren();
	if (!list.length) {
		box.append(el('p', { textContent: 'No controls.' }));
		return;
	}
	for (const c of list) {
		if (c.type === CTRL.CLASS) { // a group title, not a control
			box.append(el('h3', { className: 'ctrl-class', textContent: c.name }));
			continue;
		}
		// strings and arrays have no single number to set through the API
		if (c.type === CTRL.STRING || (c.flags & FLAG_HAS_PAYLOAD) || c.type >= 0x100)
			continue;
		const ro = (c.flags & (FLAG_DISABLED | FLAG_READ_ONLY)) !== 0;
		const wo = (c.flags & FLAG_WRITE_ONLY) !== 0;
		const out = el('output', { textContent: c.value !== undefined && !wo ? c.value : '' });
		let input;
		if (c.type === CTRL.MENU || c.type === CTRL.INTEGER_MENU) {
			input = el('select');
			fillSelect(input, (c.menu || []).map(m => [m.index, m.name]), c.value);
		} else if (c.type === CTRL.BOOLEAN) {
			input = el('input', { type: 'checkbox', checked: !!c.value });
		} else if (c.type === CTRL.BUTTON) {
			input = el('button', { type: 'button', textContent: c.name });
		} else if (c.type === CTRL.INTEGER64 || c.type === CTRL.BITMASK) {
			// ranges too wide for a slider: a number field
			input = el('input', { type: 'number', min: c.min, max: c.max, step: c.step || 1,
				value: c.value !== undefined ? c.value : c.default });
		} else {
			input = el('input', { type: 'range', min: c.min, max: c.max, step: c.step || 1,
				value: c.value !== undefined ? c.value : c.default });
			input.oninput = () => { out.textContent = input.value; };
		}
		input.disabled = ro;
		input.dataset.key = c.key;
		if (c.flags & FLAG_INACTIVE)
			input.title = 'inactive';
		const send = () => {
			let v;
			if (c.type === CTRL.BOOLEAN)
				v = input.checked ? 1 : 0;
			else if (c.type === CTRL.BUTTON)
				v = 1;
			else
				v = Number(input.value);
			setControl(card, c.key, v);
		};
		if (c.type === CTRL.BUTTON)
			input.onclick = send;
		else
			input.onchange = send;
		box.append(el('label', {}, el('span', { textContent: c.name }), input, out));
	}
}

async function setControl(card, key, value) {
	try {
		const r = await getJSON('/api/cams/' + encodeURIComponent(card.id) + '/controls',
			{ method: 'PUT', body: JSON.stringify({ [key]: value }) });
		renderControls(card, r.controls);
	} catch (e) {
		card.answer.textContent = 'control ' + key + ': ' + e.message;
		card.answer.classList.add('error');
	}
}

function addCard(cam) {
	const node = document.getElementById('cam-tpl').content.firstElementChild.cloneNode(true);
	const card = {
		id: cam.id, node, form: node.querySelector('form'), img: node.querySelector('img.live'),
		snap: node.querySelector('a.snap'), answer: node.querySelector('.answer'),
		view: node.querySelector('.view'), video: node.querySelector('video.live-video'),
		latency: node.querySelector('.latency'), urlStream: node.querySelector('.url-stream'),
		urlSnapshot: node.querySelector('.url-snapshot'),
		stats: node.querySelector('.stats'), controls: node.querySelector('.controls'),
		polling: '', pollTimer: 0, watchTimer: 0, viewParams: ''
	};
	node.dataset.cam = cam.id;
	node.toggleAttribute('data-current', !cards.size);
	setTitle(card, cam);
	fillPickers(card, cam);
	fillSelect(card.form.quality, [['', 'default'], ...QUALITIES.map(q => [q, q])], '');
	fillSelect(card.form.rotate, ROTATIONS, '');
	fillSelect(card.form.flip, FLIPS, '');
	const fs = node.querySelector('button.fullscreen');
	fs.hidden = !document.fullscreenEnabled; // iOS, or a frame that does not allow it
	fs.onclick = () => toggleFullscreen(card);
	card.img.ondblclick = card.video.ondblclick = () => toggleFullscreen(card);
	for (const b of node.querySelectorAll('.urls button.copy'))
		b.onclick = () => copyText(b.previousElementSibling, b);
	card.form.onsubmit = ev => { ev.preventDefault(); apply(card); };
	card.form.more.onchange = () => fillFormats(card);
	cards.set(cam.id, card);
	document.getElementById('cams').append(node);
	setView(card);
	loadControls(card);
	probeH264(card);
}

// H.264 is offered when this browser plays it and the daemon can serve it
// for this camera (from an H.264 camera or an encoder). A 503 or 429 from
// /api/try is the budget now (it says the same as the stream would): the
// camera can do H.264, so it is offered, and the view falls back to MJPEG
// with the reason if there is still no room when it is picked.
async function probeH264(card) {
	if (!CAN_H264)
		return;
	try {
		await getJSON('/api/try?' + new URLSearchParams({ cam: card.id, format: 'h264' }));
		card.h264 = true;
	} catch (e) {
		card.h264 = e.status === 503 || e.status === 429; // else not for this camera: MJPEG only
	}
	if (card.h264)
		fillFormats(card);
}

// The format menu: the common formats first, the camera's other raw
// formats in a "More formats" group while the "more" box is ticked (or
// one of them is the current choice).
function fillFormats(card) {
	const sel = card.form.format, cur = sel.value || 'MJPEG', raw = card.rawFormats || [];
	const have = n => n === 'MJPEG' || n === 'JPEG' || (n === 'H264' ? card.h264 : raw.includes(n));
	const opt = n => new Option(FORMAT_LABELS[n] || n + ' (raw)', n);
	const rest = raw.filter(n => !COMMON_FORMATS.includes(n));
	if (rest.includes(cur))
		card.form.more.checked = true;
	const kids = COMMON_FORMATS.filter(have).map(opt);
	if (card.form.more.checked && rest.length)
		kids.push(el('optgroup', { label: 'More formats' }, ...rest.map(opt)));
	sel.replaceChildren(...kids);
	sel.value = [...sel.options].some(o => o.value === cur) ? cur : 'MJPEG';
	card.form.more.parentNode.hidden = !rest.length;
}

// Format/size/fps choices from the camera's list. A camera that is absent
// has none yet: the stats poll fills them in once it is there.
function fillPickers(card, cam) {
	card.rawFormats = [];
	for (const f of cam.formats)
		if (!card.rawFormats.includes(f.fourcc_name) && !isJpeg(f.fourcc_name) && !isH264(f.fourcc_name))
			card.rawFormats.push(f.fourcc_name);
	fillFormats(card);
	const mi = modeInfo(cam);
	fillSelect(card.form.size, [['', cam.mode ? 'device (' + cam.mode.width + 'x' + cam.mode.height + ')' : 'device'],
		...mi.sizes.map(([w, h]) => [w + 'x' + h, w + 'x' + h])], '');
	fillSelect(card.form.fps, [['', 'device'], ...mi.fps.map(f => [f, f])], '');
	card.needsInfo = !cam.formats.length;
	if (card.needsInfo === false && card.h264 === false)
		probeH264(card); // the camera came: ask again
}

function loadControls(card) {
	getJSON('/api/cams/' + encodeURIComponent(card.id) + '/controls')
		.then(r => renderControls(card, r.controls))
		.catch(e => { card.controls.textContent = 'controls: ' + e.message; });
}

async function refreshInfo(card) {
	const cam = await getJSON('/api/cams/' + encodeURIComponent(card.id));
	if (!cam.formats.length)
		return;
	setTitle(card, cam);
	fillPickers(card, cam);
	loadControls(card);
}

// Latency, capture to this browser: the server stamps frames with its wall
// clock, the browser reads its own, so the figure is only as good as the two
// clocks agree (same machine, or NTP). H.264: the shown frame's capture time
// is the MP4 timeline's origin (mp4_t0_ms of the output in /api/status)
// plus the video's currentTime, at most its last buffered frame's. MJPEG:
// an <img> cannot read the parts' X-Timestamp, so a snapshot of the same
// output (waiting for its next frame) is fetched and its X-Timestamp
// compared on arrival.
async function measureLatency(card, cam) {
	let text = '';
	if (card.useVideo) {
		const v = card.video;
		const o = (cam.outputs || []).find(x => x.mp4_t0_ms && x.plan.output.fourcc === 'H264' &&
			x.plan.output.width === v.videoWidth && x.plan.output.height === v.videoHeight &&
			!x.plan.output.bitrate && !x.plan.output.gop);
		if (!o || v.readyState < 2)
			return;
		const n = v.buffered.length;
		const end = n ? v.buffered.end(n - 1) : v.currentTime;
		// a starved player's clock runs on past its data (seen 136 ms over
		// TLS) while its last frame stays on screen: the frame shown
		// started no later than that last one, which the daemon writes
		// 1.5 frame intervals long (the next one's time not known yet:
		// vc_mp4_live_duration in common/mp4.h, keep the two alike)
		const frame = 1 / (o.fps > 1 ? o.fps : 30);
		const shown = Math.min(v.currentTime, end - 1.5 * frame);
		const ms = Date.now() - (o.mp4_t0_ms + shown * 1000);
		const buf = (end - v.currentTime) * 1000;
		text = 'H.264 latency ≈ ' + Math.round(ms) + ' ms (capture → shown, the player holds ' +
			Math.round(buf) + ' ms)';
	} else if (card.viewParams) {
		const r = await fetch('/snapshot?' + card.viewParams + '&max_age_ms=0&lat=' + Date.now());
		await r.arrayBuffer();
		const ts = parseFloat(r.headers.get('X-Timestamp'));
		if (!r.ok || !(ts > 0))
			return;
		text = 'MJPEG latency ≈ ' + Math.round(Date.now() - ts * 1000) +
			' ms (capture → this browser, a snapshot of the same stream)';
	}
	card.latency.textContent = text;
}

function fmtBytes(n) {
	return n > 1 << 20 ? (n / (1 << 20)).toFixed(1) + ' MiB' : n > 1024 ? (n / 1024).toFixed(0) + ' KiB' : n + ' B';
}

async function pollStatus() {
	const st = document.getElementById('status');
	try {
		const s = await getJSON('/api/status');
		st.textContent = 'vcapd ' + s.version + ', up ' + Math.round(s.uptime_s) + ' s, ' +
			plural(s.connections, 'connection');
		for (const c of s.cams) {
			const card = cards.get(c.id);
			if (!card)
				continue;
			const m = c.mode || {};
			let bytes = 0;
			for (const cl of c.clients || [])
				bytes += cl.bytes || 0;
			card.stats.textContent = c.state + ', ' + (m.fourcc_name || '?') + ' ' + m.width + 'x' +
				m.height + ', capture ' + c.stats.fps.toFixed(1) + ' fps, dropped ' + c.stats.dropped +
				', ' + plural((c.clients || []).length, 'client') + ', sent ' + fmtBytes(bytes) +
				' (' + card.liveText + ')';
			refreshControls(card).catch(() => {}); // a failed refresh keeps the last values
			if (!card.stopped)
				measureLatency(card, c).catch(() => {}); // the last figure stays
			if (card.needsInfo && c.mode)
				refreshInfo(card).catch(() => {});
		}
	} catch (e) {
		st.textContent = 'status: ' + e.message;
	}
}

// A hidden tab closes its streams (a Pi's CPU and uplink matter more than a
// picture nobody sees); showing it again reopens them.
// So does a card not on screen (another camera's tab on a phone).
function stopLive(card) {
	clearTimeout(card.pollTimer);
	clearInterval(card.watchTimer);
	stopVideo(card);
	card.img.onload = card.img.onerror = null;
	card.img.removeAttribute('src');
	card.stopped = true;
}

function isShown(card) {
	return !document.hidden && card.node.getClientRects().length > 0;
}

// A card out of view (a phone's width shows one) is looked at again every
// second while the page is visible: the media-query event that restarts it
// never comes when the width narrowed and widened again between two
// renderings (seen in WebKitGTK on a loaded machine, after a tab click had
// stopped the card the narrow layout hid).
let shownTimer = 0;

function syncShown() {
	let out = 0;
	for (const card of cards.values()) {
		const shown = isShown(card);
		if (!shown && !card.stopped)
			stopLive(card);
		else if (shown && card.stopped)
			startLive(card);
		out += !shown;
	}
	clearTimeout(shownTimer);
	if (out && !document.hidden)
		shownTimer = setTimeout(syncShown, 1000);
}

document.addEventListener('visibilitychange', syncShown);
// the width where style.css shows one card at a time
window.matchMedia('(max-width: 600px)').addEventListener('change', syncShown);

// Several cameras: a grid (style.css); on a phone's width one card at a
// time, the one picked in these tabs.
function showCam(id) {
	for (const [cid, c] of cards)
		c.node.toggleAttribute('data-current', cid === id);
	for (const b of document.querySelectorAll('#camtabs button'))
		b.setAttribute('aria-pressed', String(b.dataset.tab === String(id)));
	syncShown();
}

function buildTabs(cams) {
	const nav = document.getElementById('camtabs');
	nav.replaceChildren(...cams.map(cam => {
		const b = el('button', { type: 'button', textContent: camName(cam) + ' (' + cam.id + ')' });
		b.dataset.tab = cam.id;
		b.onclick = () => showCam(cam.id);
		return b;
	}));
	nav.hidden = cams.length < 2;
	document.getElementById('cams').classList.toggle('tabbed', cams.length > 1);
	if (cams.length)
		showCam(cams[0].id);
}

async function main() {
	const list = document.getElementById('cams');
	try {
		const r = await getJSON('/api/cams');
		document.getElementById('nocams').remove();
		if (!r.cams.length)
			list.append(el('p', { textContent: 'No cameras.' }));
		// tabs first: on a phone only the first card opens its stream
		list.classList.toggle('tabbed', r.cams.length > 1);
		for (const cam of r.cams)
			addCard(cam);
		buildTabs(r.cams);
	} catch (e) {
		document.getElementById('nocams').textContent = 'Cannot list cameras: ' + e.message;
	}
	pollStatus();
	setInterval(pollStatus, 2000);
}

main();
