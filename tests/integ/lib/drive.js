// Shared by the Chromium page drivers (tests/integ/web_page.sh,
// tests/vm/boot_web.sh): each copies this file beside its drive.html,
// which loads index.html in a same-origin frame and reports what it sees;
// tests/tools/webdrive.py puts it before webdrive_page.js's steps.
'use strict';
const lines = [];
const sleep = ms => new Promise(r => setTimeout(r, ms));
async function until(fn, ms) {
	for (let t = 0; t < ms; t += 50) {
		const v = fn();
		if (v)
			return v;
		await sleep(50);
	}
	return null;
}
// the picture now shown, as RGBA at 160x120 (a polled <img> has no
// picture for a moment while its next snapshot loads)
async function grab(img, ms) {
	await until(() => img.complete && img.naturalWidth > 0, ms);
	const c = document.createElement('canvas');
	c.width = 160;
	c.height = 120;
	const g = c.getContext('2d');
	g.drawImage(img, 0, 0, c.width, c.height);
	return g.getImageData(0, 0, c.width, c.height).data;
}
// Whether the picture of img moves within this one page view: pixels that
// changed, and of how many. Timers run on virtual time under
// --virtual-time-budget, so real time passes by fetching snapshots of cam
// (each waits for a camera frame): up to 60 frames' worth.
async function pictureMoves(img, cam, ms) {
	const a = await grab(img, ms);
	let diff = 0;
	for (let i = 0; i < 60 && diff <= a.length / 4000; i++) {
		await (await fetch('/snapshot?cam=' + cam + '&max_age_ms=0&t=' + i)).arrayBuffer();
		const b = await grab(img, ms);
		diff = 0;
		for (let j = 0; j < a.length; j += 4)
			diff += a[j] !== b[j] || a[j + 1] !== b[j + 1] || a[j + 2] !== b[j + 2];
	}
	return diff + ' of ' + a.length / 4;
}
