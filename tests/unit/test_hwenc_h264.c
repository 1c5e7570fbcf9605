/* H.264 outputs on an M2M hardware H.264 encoder (server/stream/hwenc.c),
 * with the fake of fake_m2m.h playing bcm2835-codec's /dev/video11: it
 * encodes with common/h264enc.c, so what comes back is real H.264. Checked:
 * the output's bitrate=/gop= reach the device as controls (with repeat
 * sequence header, profile, level), a joining client asks for a key frame,
 * key flags match the IDRs, every IDR served has SPS/PPS before it (also
 * from an encoder that sends them once, or in a buffer of their own, or
 * sets no key flags, or lacks the key-frame control), and on a device error
 * the output goes on with the software encoder while a client keeps
 * decoding (libopenh264's decoder, PSNR against the pictures fed). Clients
 * are simulated by the rules client.c follows (h264_out_may_take). */
#include <errno.h>
#include <event2/event.h>
#include <linux/videodev2.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <wels/codec_api.h>

#include "check.h"
#include "hwenc_fixture.h"
#include "server/capture/m2m_discover.h"
#include "server/stream/hwenc.h"
#include "server/stream/serve_int.h"

#define W 640
#define H 480

static struct output *output(struct fixture *fx, uint32_t bitrate, uint16_t gop)
{
	struct vc_request req = { .fourcc = V4L2_PIX_FMT_H264, .width = W, .height = H,
				  .bitrate = bitrate, .gop = gop };
	struct vc_plan p;

	if (vc_negotiate_plan(&fx->h->target, &req, &p) < 0)
		return NULL;
	struct output *o = output_for_plan(fx->h, &req, &p);
	if (o)
		o->idle_since_us = INT64_MAX / 2; /* no user holds it: keep the gc off */
	return o;
}

/* The luma of picture n: gradients that move, so P pictures have work. */
static uint8_t luma(uint32_t x, uint32_t y, uint64_t n)
{
	int sq = x - (n * 8) % W < 64 && y >= 160 && y < 224;

	return sq ? 235 : (uint8_t)(16 + (x + y + n * 3) % 200);
}

/* A simulated client: what client.c sends it (h264_out_may_take), decoded. */
struct sim {
	struct client c;
	ISVCDecoder *dec;
	int got, keys, decoded, errors;
	int first_key;       /* its first frame was an IDR */
	int ps_missing;      /* IDRs it got without SPS and PPS before the slice */
	double worst_psnr;
};

static int sim_join(struct sim *sm, struct output *o)
{
	SDecodingParam dp;

	memset(sm, 0, sizeof(*sm));
	sm->c.h264 = H264_ANNEXB;
	sm->worst_psnr = 99;
	sm->c.sent_n = o->latest_n;
	if (WelsCreateDecoder(&sm->dec) != 0)
		return -1;
	memset(&dp, 0, sizeof(dp));
	dp.sVideoProperty.eVideoBsType = VIDEO_BITSTREAM_AVC;
	if ((*sm->dec)->Initialize(sm->dec, &dp) != 0)
		return -1;
	h264_out_join(o, &sm->c);
	return 0;
}

static void sim_take(struct sim *sm, const struct output *o)
{
	const struct vc_frame *f = o->latest;
	uint8_t *dst[3] = { 0 };
	SBufferInfo bi;
	struct vc_h264_au au;

	if (!f || o->latest_n == sm->c.sent_n || !h264_out_may_take(&sm->c, o))
		return;
	sm->c.sent_n = o->latest_n;
	sm->c.need_key = 0;
	vc_h264_scan(f->mem[0], f->bytesused[0], &au);
	if (!sm->got++)
		sm->first_key = f->key && au.idr;
	sm->keys += f->key;
	if (f->key && (!au.sps || !au.pps || au.sps > au.pps))
		sm->ps_missing++;
	memset(&bi, 0, sizeof(bi));
	if ((*sm->dec)->DecodeFrameNoDelay(sm->dec, f->mem[0], (int)f->bytesused[0], dst, &bi) !=
		    dsErrorFree || bi.iBufferStatus != 1 || bi.UsrData.sSystemBuffer.iWidth != W ||
	    bi.UsrData.sSystemBuffer.iHeight != H) {
		sm->errors++;
		return;
	}
	sm->decoded++;
	double se = 0;
	int stride = bi.UsrData.sSystemBuffer.iStride[0];
	for (uint32_t y = 0; y < H; y++)
		for (uint32_t x = 0; x < W; x++) {
			int d = luma(x, y, f->seq) - dst[0][(size_t)y * stride + x];
			se += d * d;
		}
	se /= (double)W * H;
	double psnr = se == 0 ? 99 : 10 * log10(255.0 * 255.0 / se);
	if (psnr < sm->worst_psnr)
		sm->worst_psnr = psnr;
}

static void sim_leave(struct sim *sm)
{
	if (sm->dec)
		WelsDestroyDecoder(sm->dec);
	sm->dec = NULL;
}

/* n captured frames of the hub's mode, 30 fps apart; after each, every
 * client in sims[] takes what it may. Published frames' key flags are
 * checked against the bitstream (mismatch counted in *bad_key). */
static void feed(struct fixture *fx, struct output *o, int n, struct sim **sims, int n_sims,
		 int *bad_key)
{
	for (int i = 0; i < n; i++) {
		uint64_t before = o->latest_n, seq = fx->seq++;
		struct vc_frame *f = vc_frame_new_fmt(vc_fmt_by_fourcc(YUYV), W, H);
		if (!f)
			return;
		uint8_t *d = vc_frame_data(f, 0);
		uint32_t bpl = f->geom.plane[0].stride;
		for (uint32_t y = 0; y < H; y++)
			for (uint32_t x = 0; x < W; x++) {
				d[(size_t)y * bpl + x * 2] = luma(x, y, seq);
				d[(size_t)y * bpl + x * 2 + 1] = 128;
			}
		f->bytesused[0] = f->geom.sizeimage;
		f->seq = seq;
		f->ts_us = 1000000 + (int64_t)seq * 33334; /* the output's rate: every one due */
		output_frame(o, f);
		vc_frame_unref(f);
		for (int k = 0; k < 200 && (o->busy || o->latest_n == before); k++)
			run_ms(fx->base, 5);
		if (o->latest && o->latest_n != before) {
			struct vc_h264_au au;
			vc_h264_scan(o->latest->mem[0], o->latest->bytesused[0], &au);
			*bad_key += !!o->latest->key != !!au.idr;
		}
		for (int k = 0; k < n_sims; k++)
			sim_take(sims[k], o);
	}
}

/* The normal case: controls as asked, IDRs every gop frames with SPS/PPS,
 * a client joining mid-stream gets a key frame at once (FORCE_KEY_FRAME). */
static void hardware_h264(void)
{
	struct fixture fx;
	struct vc_hwenc_stats st;
	struct sim a, b;
	int bad_key = 0;

	if (fixture_open(&fx, "auto", "/dev/video11", V4L2_PIX_FMT_H264) < 0) {
		CHECK(0, "fixture");
		fixture_close(&fx);
		return;
	}
	struct output *o = output(&fx, 800000, 10);
	CHECK(o && o->plan.out.fourcc == V4L2_PIX_FMT_H264 &&
	      (o->plan.steps & ~(unsigned)VC_STEP_CONVERT) == VC_STEP_ENCODE, "plan %#x",
	      o ? o->plan.steps : 0);
	if (!o || sim_join(&a, o) < 0) {
		fixture_close(&fx);
		return;
	}
	struct sim *sims[2] = { &a, &b };
	feed(&fx, o, 13, sims, 1, &bad_key);
	CHECK(hwenc_path(o) && !strcmp(hwenc_path(o), "/dev/video11"), "path %s", hwenc_path(o));
	CHECK(fx.fake.bitrate == 800000 && fx.fake.gop == 10 && fx.fake.i_period == 10 &&
	      fx.fake.repeat_hdr == 1 &&
	      fx.fake.profile == V4L2_MPEG_VIDEO_H264_PROFILE_CONSTRAINED_BASELINE &&
	      fx.fake.level == V4L2_MPEG_VIDEO_H264_LEVEL_3_0,
	      "controls: bitrate %d gop %d i-period %d repeat %d profile %d level %d",
	      fx.fake.bitrate, fx.fake.gop, fx.fake.i_period, fx.fake.repeat_hdr, fx.fake.profile,
	      fx.fake.level);
	CHECK(strstr(fx.fake.log, "S_PARM") != NULL, "no frame rate set: %.300s", fx.fake.log);
	/* IDRs at 0 and 10 */
	CHECK(a.got == 13 && a.keys == 2 && a.first_key && a.decoded == 13 && !a.errors &&
	      !a.ps_missing, "client a: got %d keys %d decoded %d errors %d ps missing %d", a.got,
	      a.keys, a.decoded, a.errors, a.ps_missing);

	/* b joins between IDRs: the encoder is asked for one now */
	int forced = fx.fake.forced;
	if (sim_join(&b, o) == 0) {
		feed(&fx, o, 7, sims, 2, &bad_key);
		CHECK(fx.fake.forced == forced + 1, "force key asked %d times", fx.fake.forced - forced);
		CHECK(b.got == 7 && b.first_key && b.decoded == 7 && !b.errors && !b.ps_missing,
		      "client b: got %d first key %d decoded %d errors %d", b.got, b.first_key,
		      b.decoded, b.errors);
	}
	CHECK(a.got == 20 && a.decoded == 20 && !a.errors && !a.ps_missing && a.worst_psnr >= 30,
	      "client a: got %d decoded %d errors %d worst PSNR %.1f", a.got, a.decoded, a.errors,
	      a.worst_psnr);
	printf("# hardware H.264 (fake, 800 kbit/s): worst luma PSNR %.1f dB over %d frames\n",
	       a.worst_psnr, a.decoded);
	vc_streams_hwenc_stats(fx.s, &st);
	CHECK(st.frames == 20 && st.sessions == 1 && st.fallbacks == 0 && fx.fake.jobs == 20 &&
	      bad_key == 0, "hw frames %llu sessions %llu fallbacks %llu jobs %d bad key flags %d",
	      (unsigned long long)st.frames, (unsigned long long)st.sessions,
	      (unsigned long long)st.fallbacks, fx.fake.jobs, bad_key);
	sim_leave(&a);
	sim_leave(&b);
	fixture_close(&fx);
	CHECK(fx.fake.opened == 0 && fx.fake.maps == 0, "%d open %d maps", fx.fake.opened, fx.fake.maps);
}

/* Other encoders: no key flag, SPS/PPS only at the start (no repeat
 * sequence header control) or in a buffer of their own, no I-period,
 * profile, level or force-key controls. The stream served stays the same:
 * key flags from the bitstream, SPS/PPS before each IDR; a joining client
 * waits for the GOP's IDR. */
static void quirky_encoders(void)
{
	static const struct {
		int line;
		unsigned lacks;
		int no_key_flag, hdr_apart;
	} t[] = {
		{ __LINE__, LACK_REPEAT | LACK_FORCE_KEY | LACK_I_PERIOD | LACK_PROFILE | LACK_LEVEL, 1, 0 },
		{ __LINE__, LACK_FORCE_KEY | LACK_BITRATE | LACK_GOP, 0, 1 },
		{ __LINE__, LACK_REPEAT, 1, 1 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct fixture fx;
		struct vc_hwenc_stats st;
		struct sim a, b;
		int bad_key = 0;

		if (fixture_open(&fx, "auto", "/dev/video11", V4L2_PIX_FMT_H264) < 0) {
			CHECK_AT(t[i].line, 0, "fixture");
			fixture_close(&fx);
			continue;
		}
		fx.fake.lacks = t[i].lacks;
		fx.fake.no_key_flag = t[i].no_key_flag;
		fx.fake.hdr_apart = t[i].hdr_apart;
		struct output *o = output(&fx, 0, 8);
		struct sim *sims[2] = { &a, &b };
		if (!o || sim_join(&a, o) < 0) {
			CHECK_AT(t[i].line, 0, "output");
			fixture_close(&fx);
			continue;
		}
		feed(&fx, o, 11, sims, 1, &bad_key);
		int joined = sim_join(&b, o);
		feed(&fx, o, 11, sims, 2, &bad_key);
		vc_streams_hwenc_stats(fx.s, &st);
		int force_ok = !(t[i].lacks & LACK_FORCE_KEY);
		CHECK_AT(t[i].line, st.frames == 22 && st.fallbacks == 0 && hwenc_path(o) && bad_key == 0,
			 "hw frames %llu fallbacks %llu bad key flags %d", (unsigned long long)st.frames,
			 (unsigned long long)st.fallbacks, bad_key);
		CHECK_AT(t[i].line, fx.fake.idrs_sent == (force_ok ? 4 : 3),
			 "IDRs %d (gop 8, forced %d)", fx.fake.idrs_sent, fx.fake.forced);
		CHECK_AT(t[i].line, a.got == 22 && a.decoded == 22 && !a.errors && !a.ps_missing &&
				    a.keys == fx.fake.idrs_sent,
			 "client a: got %d decoded %d errors %d ps missing %d keys %d", a.got,
			 a.decoded, a.errors, a.ps_missing, a.keys);
		/* b joined after frame 11: at once (forced) or at 16 (gop) */
		int want_b = force_ok ? 11 : 6;
		CHECK_AT(t[i].line, joined == 0 && b.got == want_b && b.first_key &&
				    b.decoded == want_b && !b.errors && !b.ps_missing,
			 "client b: got %d (want %d) decoded %d errors %d ps missing %d", b.got,
			 want_b, b.decoded, b.errors, b.ps_missing);
		sim_leave(&a);
		sim_leave(&b);
		fixture_close(&fx);
		CHECK_AT(t[i].line, fx.fake.opened == 0 && fx.fake.maps == 0, "%d open %d maps",
			 fx.fake.opened, fx.fake.maps);
	}
}

/* A sim's client listed among o's clients, as a connected one is (its
 * socket -1 and not suspended: waking it does nothing). */
static void sim_attach(struct sim *sm, struct output *o)
{
	sm->c.wake = (struct stream_wake){ client_on_event, &sm->c };
	DLIST_PUSH(o->clients, &sm->c);
	o->n_clients++;
}

static void sim_detach(struct sim *sm, struct output *o)
{
	DLIST_UNLINK(o->clients, &sm->c);
	o->n_clients--;
}

/* The device fails mid-stream: the output goes on with libopenh264, the
 * client is kept and decodes on (it waits for the software encoder's first
 * picture, an IDR), the fallback is counted once. When the device is back,
 * the output returns to it only once no MP4 client watches the CPU's
 * stream (the device's SPS would end it); the Annex-B client decodes on
 * across that switch too. */
static void fallback_keeps_client(void)
{
	struct fixture fx;
	struct vc_hwenc_stats st;
	struct sim a, m;
	int bad_key = 0;

	if (fixture_open(&fx, "auto", "/dev/video11", V4L2_PIX_FMT_H264) < 0) {
		CHECK(0, "fixture");
		fixture_close(&fx);
		return;
	}
	struct output *o = output(&fx, 0, 30);
	struct sim *sims[1] = { &a };
	if (!o || sim_join(&a, o) < 0 || sim_join(&m, o) < 0) {
		fixture_close(&fx);
		return;
	}
	m.c.h264 = H264_MP4; /* never takes a frame here: only its presence counts */
	sim_attach(&a, o);
	feed(&fx, o, 6, sims, 1, &bad_key);
	CHECK(a.decoded == 6 && hwenc_path(o), "before: decoded %d", a.decoded);
	fx.fake.fail_req = VIDIOC_QBUF;
	fx.fake.fail_type = V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE;
	fx.fake.fail_err = ENODEV;
	fx.fake.fail_after = 0;
	uint64_t before = o->latest_n;
	int keys = a.keys;
	feed(&fx, o, 10, sims, 1, &bad_key);
	vc_streams_hwenc_stats(fx.s, &st);
	CHECK(st.fallbacks == 1 && !hwenc_path(o) && st.frames == 6 && o->latest_n == before + 10,
	      "fallbacks %llu path %s hw frames %llu published after %llu",
	      (unsigned long long)st.fallbacks, hwenc_path(o), (unsigned long long)st.frames,
	      (unsigned long long)(o->latest_n - before));
	CHECK(a.got == 16 && a.decoded == 16 && !a.errors && !a.ps_missing && a.keys == keys + 1 &&
	      a.worst_psnr >= 30 && bad_key == 0,
	      "client: got %d decoded %d errors %d keys %d worst PSNR %.1f bad key flags %d", a.got,
	      a.decoded, a.errors, a.keys - keys, a.worst_psnr, bad_key);

	/* the device is back and its retry time has come: not while an MP4
	 * client watches, then at once */
	fx.fake.fail_req = 0;
	fx.s->hw_bad_until_us = 0;
	sim_attach(&m, o);
	feed(&fx, o, 3, sims, 1, &bad_key);
	vc_streams_hwenc_stats(fx.s, &st);
	CHECK(st.sessions == 1 && !hwenc_path(o), "with an MP4 client: sessions %llu path %s",
	      (unsigned long long)st.sessions, hwenc_path(o));
	sim_detach(&m, o);
	feed(&fx, o, 5, sims, 1, &bad_key);
	vc_streams_hwenc_stats(fx.s, &st);
	CHECK(st.sessions == 2 && hwenc_path(o) && st.frames == 11, "without: sessions %llu path %s "
	      "hw frames %llu", (unsigned long long)st.sessions, hwenc_path(o),
	      (unsigned long long)st.frames);
	CHECK(a.got == 24 && a.decoded == 24 && !a.errors && !a.ps_missing && bad_key == 0,
	      "client after the way back: got %d decoded %d errors %d", a.got, a.decoded, a.errors);
	sim_detach(&a, o);
	sim_leave(&a);
	sim_leave(&m);
	fixture_close(&fx);
	CHECK(fx.fake.opened == 0 && fx.fake.maps == 0, "%d open %d maps", fx.fake.opened, fx.fake.maps);
}

int main(void)
{
	RUN("hwenc_h264", hardware_h264);
	RUN("hwenc_h264", quirky_encoders);
	RUN("hwenc_h264", fallback_keeps_client);
	CHECK_EXIT();
}
