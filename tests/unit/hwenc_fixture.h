/* The serving layer with a fake M2M encoder (fake_m2m.h) for the hardware
 * encoding tests (test_hwenc: JPEG at /dev/video31, test_hwenc_h264: H.264
 * at /dev/video11): a YUYV-only test camera whose streams know that one
 * device, frames fed to outputs directly (no HTTP, no client sockets). */
#ifndef VC_TEST_HWENC_FIXTURE_H
#define VC_TEST_HWENC_FIXTURE_H

#include <event2/event.h>
#include <linux/videodev2.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fake_m2m.h"
#include "server/capture/m2m_discover.h"
#include "server/stream/stream.h"
#include "server/stream/stream_int.h"

#define YUYV V4L2_PIX_FMT_YUYV

static inline void run_ms(struct event_base *b, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	event_base_loopexit(b, &tv);
	event_base_dispatch(b);
}

struct fixture {
	struct event_base *base;
	struct vc_cam *cam;
	struct vc_streams *s;
	struct hub *h;
	struct fake fake;
	struct vc_m2m_enc_io io;
	struct vc_m2m_list list;
	struct vc_m2m_node node;
	uint64_t seq;             /* the next frame's sequence number (tests that count) */
};

/* The camera with `encoder` set, its streams knowing the fake as `path`,
 * encoding YUYV to `coded` (V4L2_PIX_FMT_JPEG or _H264: the fake then
 * encodes real H.264; fx->fake may be configured after this, before the
 * first frame). 0 once the camera runs YUYV, else -1. */
static inline int fixture_open(struct fixture *fx, const char *encoder, const char *path,
			       uint32_t coded)
{
	struct vc_conf_cam cfg = { .name = (char *)"t", .device = (char *)"test:640x480@30:YUYV:only", .input = -1,
				     .idle_stop_ms = 1000 };

	memset(fx, 0, sizeof(*fx));
	cfg.encoder = (char *)encoder; /* vc_cam_new copies it */
	fake_init(&fx->fake, 1, &fx->io);
	fx->fake.h264 = coded == V4L2_PIX_FMT_H264;
	snprintf(fx->node.path, sizeof(fx->node.path), "%s", path);
	fx->node.device_caps = V4L2_CAP_VIDEO_M2M_MPLANE | V4L2_CAP_STREAMING;
	fx->node.mplane = 1;
	fx->node.n_out = 1;
	fx->node.out[0].fourcc = YUYV;
	fx->node.n_cap = 1;
	fx->node.cap[0] = (struct vc_m2m_fmt){ coded, V4L2_FMT_FLAG_COMPRESSED };
	fx->node.roles = vc_m2m_classify(&fx->node);
	fx->list.nodes = &fx->node;
	fx->list.n = 1;
	fx->base = event_base_new();
	if (!fx->base || vc_cam_new(fx->base, &cfg, &fx->cam) < 0 ||
	    vc_streams_new(fx->base, NULL, &fx->cam, 1, &fx->s) < 0)
		return -1;
	vc_streams_set_m2m(fx->s, &fx->list, &fx->io);
	fx->h = hub_for(fx->s, fx->cam);
	for (int i = 0; fx->h && i < 100 && !fx->h->target.fourcc; i++)
		run_ms(fx->base, 20);
	return fx->h && fx->h->target.fourcc == YUYV ? 0 : -1;
}

static inline void fixture_close(struct fixture *fx)
{
	while (fx->h && fx->h->outputs)
		output_free(fx->h->outputs);
	vc_streams_free(fx->s);
	vc_cam_free(fx->cam);
	if (fx->base)
		event_base_free(fx->base);
	fake_free(&fx->fake);
}

#endif
