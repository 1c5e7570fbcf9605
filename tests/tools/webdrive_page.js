// Run in vcapd's web page by tests/tools/webdrive.py (WebDriver "execute
// async script": the step's name, then the callback), after
// tests/integ/lib/drive.js (sleep, until). Each step reports what the page
// shows as one JSON object; the checks are in webdrive.py.
const [step, done] = arguments;
const card = (d, id) => d.querySelector('[data-cam="' + id + '"]');
const submit = c => c.querySelector('button[type=submit]').click();
const visible = e => e.getBoundingClientRect().width > 0;
// new H.264 streams the page gave card c's view (web/app.js restartVideo)
const restartsOf = c => +c.dataset.h264Restarts || 0;
// "frames the daemon sent to the page's MP4 stream / the video's time,
// readyState, buffered ranges": who stopped when a video stands still
async function playerNow(v) {
	const sent = [];
	try {
		for (const cam of (await (await fetch('/api/status')).json()).cams || [])
			for (const cl of cam.clients || [])
				if (cl.kind === 'mp4')
					sent.push(cl.frames);
	} catch (e) {
		sent.push('?');
	}
	const b = v.buffered, n = b.length;
	return sent.join(',') + '/' + v.currentTime.toFixed(2) + ' ' + v.readyState + ' ' +
		(n ? b.start(0).toFixed(2) + '-' + b.end(n - 1).toFixed(2) + ' in ' + n : 'none');
}
const steps = {
	// both cameras' live views: what each is (mjpeg/poll/h264) once it shows
	async live() {
		await until(() => document.querySelectorAll('section.cam').length === 2, 10000);
		const cams = [];
		for (const c of document.querySelectorAll('section.cam')) {
			const img = c.querySelector('img.live');
			await until(() => img.naturalWidth > 0 && c.dataset.live, 10000);
			cams.push({ id: c.dataset.cam, live: c.dataset.live, natural: img.naturalWidth,
				src: img.getAttribute('src') });
		}
		return { cams };
	},
	// the page's own watchdog has had time to judge the <img> (> 3 prints
	// 2 s apart) and the stats line says what the view is
	async still_mjpeg() {
		const c = card(document, 0), stats = c.querySelector('.stats');
		await until(() => performance.now() > 9000 && /\)$/.test(stats.textContent), 15000);
		return { live: c.dataset.live, stats: stats.textContent, age_ms: Math.round(performance.now()) };
	},
	// where cam 0's live view is in the viewport (scrolled to the top)
	async rect() {
		window.scrollTo(0, 0);
		await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
		const r = card(document, 0).querySelector('img.live').getBoundingClientRect();
		return { x: r.left, y: r.top, w: r.width, h: r.height, vw: window.innerWidth };
	},
	async formats() {
		const c = card(document, 0), sel = c.querySelector('select[name=format]');
		const more = c.querySelector('input[name=more]');
		await until(() => [...sel.options].some(o => o.value === 'H264'), 3000);
		const common = [...sel.children].filter(o => o.tagName === 'OPTION').map(o => o.value);
		const unticked = sel.options.length;
		more.click();
		const group = sel.querySelector('optgroup');
		const api = await (await fetch('/api/cams/0')).json();
		const have = [...sel.options].map(o => o.value);
		const missing = api.formats.map(f => f.fourcc_name).filter(n => !have.includes(n));
		more.click(); // back as it was
		return { common, unticked_n: unticked, more_group: group ? group.label : null,
			more_n: group ? group.children.length : 0, api_missing: missing,
			after_untick_n: sel.options.length, more_shown: visible(more) };
	},
	async picker() {
		const c = card(document, 0), img = c.querySelector('img.live');
		c.querySelector('select[name=size]').value = '160x120';
		submit(c);
		await until(() => img.naturalWidth === 160 && /size=160x120/.test(img.getAttribute('src')), 5000);
		return { natural: img.naturalWidth + 'x' + img.naturalHeight, src: img.getAttribute('src'),
			live: c.dataset.live, answer: c.querySelector('.answer').textContent };
	},
	// after webdrive.py clicked the fullscreen button
	async fullscreen() {
		const fe = await until(() => document.fullscreenElement, 3000);
		const r = { in: fe ? (fe.classList.contains('view') ? 'view' : fe.className || fe.tagName) : 'none' };
		if (fe)
			await document.exitFullscreen().catch(e => { r.exit = String(e); });
		await until(() => !document.fullscreenElement, 3000);
		r.out = document.fullscreenElement ? 'still' : 'none';
		return r;
	},
	// the page in a 1280 px frame (both cards side by side), then a 390 px
	// one (one card, tabs to switch)
	async layout() {
		const f = document.createElement('iframe');
		f.width = 1280;
		f.height = 900;
		f.src = '/';
		document.body.append(f);
		const d = () => f.contentDocument;
		await until(() => d() && d().querySelectorAll('section.cam img.live[src]').length === 2 &&
			[...d().querySelectorAll('img.live')].every(i => i.naturalWidth > 0), 10000);
		const rects = [...d().querySelectorAll('section.cam')].map(e => e.getBoundingClientRect());
		const r = { rects: rects.map(x => [x.left, x.top, x.width, x.height].map(Math.round).join(':')) };
		r.wide = rects.length === 2 && Math.abs(rects[0].top - rects[1].top) < 2 && rects[1].left > rects[0].right &&
			rects[1].right <= 1280 ? 'side by side' : 'not side by side';
		f.width = 390;
		await sleep(300);
		const shown = () => [...d().querySelectorAll('section.cam')].filter(visible).map(e => e.dataset.cam);
		const tabs = [...d().querySelectorAll('#camtabs button')].filter(visible);
		const w = d().querySelector('section.cam[data-current]');
		r.narrow = 'cam ' + shown().join(',') + ' only, tabs ' + tabs.length;
		r.narrow_card_width = w ? Math.round(w.getBoundingClientRect().width) : 0;
		r.narrow_scroll_width = d().documentElement.scrollWidth;
		const t1 = d().querySelector('#camtabs button[data-tab="1"]');
		if (t1)
			t1.click();
		await sleep(100);
		r.switched = 'cam ' + shown().join(',') + ' only';
		// the card not shown has closed its stream; wide again, it reopens
		// (the page looks again each second: 5 s for a loaded machine)
		const srcs = () => [...d().querySelectorAll('section.cam img.live')]
			.map(i => (i.getAttribute('src') || 'none').replace(/\?.*/, '')).join(',');
		r.narrow_srcs = srcs();
		f.width = 1280;
		await until(() => srcs() === '/stream,/stream', 5000);
		r.wide_srcs = srcs();
		f.remove();
		return r;
	},
	// H.264 on cam 0 at 320x240 where the page offers it: does it play
	async h264() {
		const mse = {};
		for (const n of ['MediaSource', 'ManagedMediaSource'])
			mse[n] = typeof window[n] === 'function' && window[n].isTypeSupported('video/mp4; codecs="avc1.42E01F"');
		await until(() => card(document, 0), 10000);
		const c = card(document, 0), sel = c.querySelector('select[name=format]');
		const v = c.querySelector('video.live-video'), stats = c.querySelector('.stats');
		const opt = await until(() => [...sel.options].find(o => o.value === 'H264'), 4000);
		const r = { mse, offered: !!opt };
		if (!opt) {
			await until(() => c.dataset.live, 5000);
			r.live = c.dataset.live;
			return r;
		}
		sel.value = 'H264';
		c.querySelector('select[name=size]').value = '320x240';
		submit(c);
		const playing = () => (!v.hidden && v.readyState >= 2 && v.currentTime > 0) ||
			/MJPEG instead/.test(c.querySelector('.answer').textContent);
		await until(playing, 15000);
		// the camera's mode may still follow the view's change (the page
		// then restarts the stream): judged once it settled
		await sleep(1000);
		await until(playing, 5000);
		// at least 2 s, up to 14 s until 1 s of video has played (beside a
		// busy host WebKitGTK's player once stood 2 s at its data's end
		// while the daemon sent 36 frames; one that stands 5 s gets a new
		// stream from the page, counted in restarts, its time from the
		// first sample after); what the player and the daemon did
		// meanwhile, each 500 ms, kept for a failure's message
		const q0 = v.getVideoPlaybackQuality ? v.getVideoPlaybackQuality().totalVideoFrames : -1;
		const n0 = restartsOf(c);
		const end = Date.now() + 14000, start = Date.now();
		let played = 0, prev = v.currentTime, nPrev = n0, tPrev = Date.now();
		r.series = [];
		while (Date.now() < end && (Date.now() - start < 2000 || played < 1)) {
			await sleep(500);
			// a step beyond the time between samples (and the page's
			// jumps to the live edge) is a new stream's timeline, not play
			const now = v.currentTime, n = restartsOf(c), dt = (Date.now() - tPrev) / 1000;
			if (n === nPrev && now >= prev && now - prev <= dt + 0.6)
				played += now - prev;
			prev = now;
			nPrev = n;
			tPrev = Date.now();
			r.series.push(await playerNow(v) + (n > n0 ? ' r' + (n - n0) : ''));
		}
		r.advanced = Math.round(played * 100) / 100;
		r.restarts = restartsOf(c) - n0;
		r.frames = v.getVideoPlaybackQuality ? v.getVideoPlaybackQuality().totalVideoFrames - q0 : -1;
		r.size = v.videoWidth + 'x' + v.videoHeight;
		r.live = c.dataset.live;
		await until(() => /\(H\.264 via [^)]*\)$/.test(stats.textContent), 4000);
		r.how = (/\((H\.264 via [^)]*)\)$/.exec(stats.textContent) || [])[1] || stats.textContent;
		r.answer = c.querySelector('.answer').textContent;
		return r;
	},
	// cam 0's H.264 view (playing, from h264) with its player made to take
	// no more of the stream, as WebKitGTK's MSE once did on a loaded host
	// while the daemon went on sending: the page gives it a new stream
	// (not MJPEG) and that plays
	async stall() {
		const c = card(document, 0), v = c.querySelector('video.live-video');
		const n0 = restartsOf(c), proto = SourceBuffer.prototype, append = proto.appendBuffer;
		// the SourceBuffers appending within 1 s from now are the stalled
		// player's; one made later (the new stream's) works
		const seen = new WeakMap(), cut = Date.now() + 1000;
		proto.appendBuffer = function (data) {
			if (!seen.has(this))
				seen.set(this, Date.now());
			if (seen.get(this) < cut)
				return;
			return append.call(this, data);
		};
		const r = {}, src0 = v.src;
		await until(() => restartsOf(c) > n0 ||
			/MJPEG instead/.test(c.querySelector('.answer').textContent), 15000);
		r.restarts = restartsOf(c) - n0;
		// judged on the new stream's player (a new blob: URL) only
		let t0 = null;
		r.after = await until(() => {
			if (c.dataset.live !== 'h264')
				return 'left H.264';
			if (v.hidden || v.src === src0 || v.readyState < 2)
				return false;
			if (t0 === null)
				t0 = v.currentTime;
			return v.currentTime > t0 + 0.5 ? 'played' : false;
		}, 10000) || 'stood';
		proto.appendBuffer = append;
		r.live = c.dataset.live;
		r.time = Math.round(v.currentTime * 100) / 100;
		r.answer = c.querySelector('.answer').textContent;
		return r;
	},
};
steps[step]().then(done, e => done({ exception: String(e) }));
