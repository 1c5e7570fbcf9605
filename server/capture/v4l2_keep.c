/* The TV standard and the DV timings chosen for a camera (from the config or
 * the API), kept by the capture layer and set again each time the V4L2
 * device is reopened (unplug and replug, a driver reload, a restart after an
 * error) before it streams: a device forgets them when it goes away, and a
 * PAL tuner that comes back as NTSC would deliver the wrong frame size. */
#define LOG_PREFIX "v4l2: "
#include "common/log.h"

#include <errno.h>
#include <string.h>

#include "common/conf.h"
#include "server/capture/capture.h"
#include "server/capture/v4l2src.h"

struct kept_std {
	uint32_t input;
	uint64_t std;
};

/* The DV timings of one input, exact (from the API) or found by size and
 * rate on each open (a config line). One kept choice for both: the later
 * replaces the earlier, rather than both being set on every open. */
struct kept_dv {
	uint32_t input;
	int exact;
	struct vc_v4l2_dv dv;     /* exact */
	struct vc_conf_dv want;   /* else */
};

/* A choice applies to the input it was made for only (a standard means
 * nothing to an HDMI input, another input's timings would be wrong), or
 * with VC_V4L2_ANY_INPUT to whichever input has the capability cap. */
static int on_input(struct vc_src *src, uint32_t input, uint32_t cap)
{
	struct vc_src_input in;
	uint32_t cur = 0;
	if (!src->ops->input_get || src->ops->input_get(src, &cur) < 0)
		return 0;
	if (input != VC_V4L2_ANY_INPUT)
		return cur == input;
	return src->ops->input_enum && src->ops->input_enum(src, cur, &in) == 0 &&
	       (in.capabilities & cap);
}

static int apply_std(struct vc_src *src, const void *arg)
{
	struct kept_std k;
	memcpy(&k, arg, sizeof(k));
	return on_input(src, k.input, V4L2_IN_CAP_STD) ? vc_v4l2_std_set(src, k.std) : 0;
}

/* The offered timings of the wanted size and scan whose rate is nearest to
 * the wanted one, within 1 fps: 60 picks 60.00 over 59.94, and finds VESA
 * 800x600 at 60 (really 60.32 Hz). */
int vc_v4l2_dv_find(struct vc_src *src, const struct vc_conf_dv *want, struct vc_v4l2_dv *out)
{
	struct vc_v4l2_dv dv;
	uint32_t best_d = 1001;

	for (uint32_t i = 0; vc_v4l2_dv_enum(src, i, &dv) == 0; i++) {
		uint32_t d = dv.fps_milli > want->fps_milli ? dv.fps_milli - want->fps_milli
							     : want->fps_milli - dv.fps_milli;
		if (dv.width == want->width && dv.height == want->height &&
		    dv.interlaced == want->interlaced && d < best_d) {
			*out = dv;
			best_d = d;
		}
	}
	return best_d <= 1000 ? 0 : -ENOENT;
}

static int apply_dv(struct vc_src *src, const void *arg)
{
	struct kept_dv k;
	struct vc_v4l2_dv best;
	memcpy(&k, arg, sizeof(k));
	if (!on_input(src, k.input, V4L2_IN_CAP_DV_TIMINGS))
		return 0;
	if (k.exact)
		return vc_v4l2_dv_set(src, &k.dv);
	if (vc_v4l2_dv_find(src, &k.want, &best) == 0)
		return vc_v4l2_dv_set(src, &best);
	log_warn("DV timings %ux%u%c%u.%03u: not offered by the input", k.want.width,
		 k.want.height, k.want.interlaced ? 'i' : 'p', k.want.fps_milli / 1000,
		 k.want.fps_milli % 1000);
	return -EINVAL;
}

int vc_v4l2_cam_std(struct vc_cam *cam, uint32_t input, uint64_t std)
{
	struct kept_std k = { .input = input, .std = std };
	return vc_cam_reconfigure_keep(cam, apply_std, &k, sizeof(k));
}

int vc_v4l2_cam_dv(struct vc_cam *cam, uint32_t input, const struct vc_v4l2_dv *dv)
{
	struct kept_dv k = { .input = input, .exact = 1, .dv = *dv };
	_Static_assert(sizeof(k) <= VC_CAM_RECONF_ARG_MAX, "DV timings fit a kept choice");
	return vc_cam_reconfigure_keep(cam, apply_dv, &k, sizeof(k));
}

int vc_v4l2_cam_conf(struct vc_cam *cam, const struct vc_conf_cam *k)
{
	uint32_t input = k->input >= 0 ? (uint32_t)k->input : VC_V4L2_ANY_INPUT;
	int e = 0;
	if (k->std && (e = vc_v4l2_cam_std(cam, input, k->std)) < 0)
		log_error("[camera %s]: std = %s: %s", k->name, vc_conf_std_name(k->std),
			  strerror(-e));
	if (k->dv.width) {
		struct kept_dv w = { .input = input, .want = k->dv };
		int ed = vc_cam_reconfigure_keep(cam, apply_dv, &w, sizeof(w));
		if (ed < 0)
			log_error("[camera %s]: dv_timings: %s", k->name, strerror(-ed));
		e = e < 0 ? e : ed;
	}
	return e;
}
