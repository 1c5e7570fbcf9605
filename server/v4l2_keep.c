/* The TV standard and the DV timings chosen for a camera (from the config or
 * the API), kept by the capture layer and set again each time the V4L2
 * device is reopened (unplug and replug, a driver reload, a restart after an
 * error) before it streams: a device forgets them when it goes away, and a
 * PAL tuner that comes back as NTSC would deliver the wrong frame size. */
#include <errno.h>
#include <string.h>

#include "server/capture.h"
#include "server/v4l2src.h"

struct kept_std {
	uint32_t input;
	uint64_t std;
};

struct kept_dv {
	uint32_t input;
	struct vc_v4l2_dv dv;
};

/* A choice applies to the input it was made for only: a standard means
 * nothing to an HDMI input, another input's timings would be wrong. */
static int on_input(struct vc_src *src, uint32_t input)
{
	uint32_t cur = 0;
	return src->ops->input_get && src->ops->input_get(src, &cur) == 0 && cur == input;
}

static int apply_std(struct vc_src *src, const void *arg)
{
	struct kept_std k;
	memcpy(&k, arg, sizeof(k));
	return on_input(src, k.input) ? vc_v4l2_std_set(src, k.std) : 0;
}

static int apply_dv(struct vc_src *src, const void *arg)
{
	struct kept_dv k;
	memcpy(&k, arg, sizeof(k));
	return on_input(src, k.input) ? vc_v4l2_dv_set(src, &k.dv) : 0;
}

int vc_v4l2_cam_std(struct vc_cam *cam, uint32_t input, uint64_t std)
{
	struct kept_std k = { .input = input, .std = std };
	return vc_cam_reconfigure_keep(cam, apply_std, &k, sizeof(k));
}

int vc_v4l2_cam_dv(struct vc_cam *cam, uint32_t input, const struct vc_v4l2_dv *dv)
{
	struct kept_dv k = { .input = input, .dv = *dv };
	_Static_assert(sizeof(k) <= VC_CAM_RECONF_ARG_MAX, "DV timings fit a kept choice");
	return vc_cam_reconfigure_keep(cam, apply_dv, &k, sizeof(k));
}
