/* Inputs of a V4L2 device (ENUMINPUT/G_INPUT/S_INPUT), the TV standards of
 * analog inputs (ENUMSTD/G_STD/S_STD/QUERYSTD) and the DV timings of HDMI
 * inputs (ENUM/G/S/QUERY_DV_TIMINGS), and the source-change subscription
 * that tells capture.c when the timings changed. */
#define LOG_PREFIX "v4l2: "
#include "common/log.h"

#include <errno.h>
#include <string.h>

#include "server/capture/v4l2_int.h"
#include "server/capture/v4l2src.h"

/* A V4L2 source is known by its own input_enum op: this part then needs
 * nothing from the file that holds the ops table (it calls down only). */
static struct v4l2src *dev_of(struct vc_src *s)
{
	return (s && s->ops->input_enum == v4l2_input_enum) ? (struct v4l2src *)s : NULL;
}

int v4l2_input_enum(struct vc_src *s, uint32_t index, struct vc_src_input *in)
{
	struct v4l2src *d = (struct v4l2src *)s;
	struct v4l2_input vi;
	int e = v4l2_query(d, VIDIOC_ENUMINPUT, &vi, sizeof(vi), index);
	if (e < 0)
		return v4l2_gone(e);
	memset(in, 0, sizeof(*in));
	in->index = vi.index;
	vc_v4l2_name(in->name, sizeof(in->name), vi.name, sizeof(vi.name));
	in->type = vi.type;
	in->capabilities = vi.capabilities;
	in->std = vi.std;
	in->status = vi.status;
	return 0;
}

int v4l2_input_get(struct vc_src *s, uint32_t *index)
{
	struct v4l2src *d = (struct v4l2src *)s;
	int i = 0;
	int e = v4l2_xioctl(d, VIDIOC_G_INPUT, &i);
	if (e == -ENOTTY || e == -EINVAL) { /* single-input devices may lack it */
		*index = 0;
		return 0;
	}
	if (e < 0)
		return v4l2_gone(e);
	*index = (uint32_t)i;
	return 0;
}

void v4l2_subscribe(struct v4l2src *d)
{
	struct v4l2_event_subscription sub;
	uint32_t input = 0;
	if (d->events) {
		memset(&sub, 0, sizeof(sub));
		sub.type = V4L2_EVENT_ALL;
		v4l2_xioctl(d, VIDIOC_UNSUBSCRIBE_EVENT, &sub);
		d->events = 0;
	}
	v4l2_input_get(&d->base, &input);
	memset(&sub, 0, sizeof(sub));
	sub.type = V4L2_EVENT_SOURCE_CHANGE;
	sub.id = input; /* source-change ids are input indexes */
	if (v4l2_xioctl(d, VIDIOC_SUBSCRIBE_EVENT, &sub) == 0)
		d->events = 1;
	memset(&sub, 0, sizeof(sub));
	sub.type = V4L2_EVENT_EOS;
	if (v4l2_xioctl(d, VIDIOC_SUBSCRIBE_EVENT, &sub) == 0)
		d->events = 1;
}

static void dv_decode(const struct v4l2_dv_timings *t, struct vc_v4l2_dv *out)
{
	const struct v4l2_bt_timings *bt = &t->bt;
	memset(out, 0, sizeof(*out));
	out->raw = *t;
	out->width = bt->width;
	out->height = bt->height;
	out->interlaced = bt->interlaced != 0;
	out->pixelclock = bt->pixelclock;
	uint64_t htot = (uint64_t)bt->width + bt->hfrontporch + bt->hsync + bt->hbackporch;
	uint64_t vtot = (uint64_t)bt->height + bt->vfrontporch + bt->vsync + bt->vbackporch;
	if (bt->interlaced)
		vtot += bt->il_vfrontporch + bt->il_vsync + bt->il_vbackporch;
	if (htot && vtot) {
		uint64_t fps = bt->pixelclock * 1000 / (htot * vtot);
		if (bt->interlaced)
			fps *= 2; /* the field rate counts here: 1080i60 is 60 fields/s */
		out->fps_milli = (uint32_t)fps;
	}
}

int v4l2_sync_signal(struct v4l2src *d)
{
	struct v4l2_input vi;
	uint32_t idx = 0;
	int e;

	if (d->streaming)
		return -EBUSY;
	v4l2_input_get(&d->base, &idx);
	if (v4l2_query(d, VIDIOC_ENUMINPUT, &vi, sizeof(vi), idx) < 0)
		return 0;
	if ((vi.capabilities & V4L2_IN_CAP_DV_TIMINGS) && d->dv_chosen) {
		return 0; /* chosen timings win over what the input detects */
	} else if (vi.capabilities & V4L2_IN_CAP_DV_TIMINGS) {
		struct v4l2_dv_timings now, want;
		e = v4l2_query(d, VIDIOC_QUERY_DV_TIMINGS, &want, sizeof(want), 0);
		if (e < 0) {
			log_debug("%s: input %u: no DV signal: %s", d->path, idx, strerror(-e));
			return e;
		}
		if (v4l2_query(d, VIDIOC_G_DV_TIMINGS, &now, sizeof(now), 0) == 0 &&
		    memcmp(&now.bt, &want.bt, sizeof(want.bt)) == 0)
			return 0;
		e = v4l2_xioctl(d, VIDIOC_S_DV_TIMINGS, &want);
		if (e < 0) {
			log_warn("%s: VIDIOC_S_DV_TIMINGS %ux%u: %s", d->path, want.bt.width,
				 want.bt.height, strerror(-e));
			return v4l2_gone(e);
		}
		v4l2_drop_own_source_changes(d);
		log_info("%s: input %u: DV timings %ux%u%s", d->path, idx, want.bt.width,
			 want.bt.height, want.bt.interlaced ? "i" : "p");
	} else if (vi.capabilities & V4L2_IN_CAP_STD) {
		v4l2_std_id cur = 0;
		if (v4l2_xioctl(d, VIDIOC_G_STD, &cur) == 0 && (cur & vi.std))
			return 0;
		v4l2_std_id det = vi.std;
		if (v4l2_xioctl(d, VIDIOC_QUERYSTD, &det) < 0 || !(det & vi.std))
			det = vi.std;
		e = v4l2_xioctl(d, VIDIOC_S_STD, &det);
		if (e < 0)
			return v4l2_gone(e);
		v4l2_drop_own_source_changes(d);
	}
	return 0;
}

/* The frame size follows the input, its standard and its DV timings: they
 * change only while stopped, with the buffers freed (like S_FMT)... */
static int stopped(struct v4l2src *d)
{
	if (d->streaming || d->stopped_with_held)
		return -EBUSY;
	v4l2_release_buffers(d);
	return 0;
}

/* ...and the format is read again after (one outside the format table is
 * no error here: another mode is negotiated next). */
static int reread_format(struct v4l2src *d)
{
	struct vc_src_format f;
	int e = d->base.ops->get_format(&d->base, &f);
	return e == -EPROTO ? 0 : e;
}

/* S_STD / S_DV_TIMINGS: stopped, set, format re-read. */
static int set_signal(struct v4l2src *d, unsigned long req, void *arg)
{
	int e = stopped(d);
	if (e == 0)
		e = v4l2_xioctl(d, req, arg);
	if (e < 0)
		return v4l2_gone(e);
	v4l2_drop_own_source_changes(d);
	return reread_format(d);
}

int v4l2_input_set(struct vc_src *s, uint32_t index)
{
	struct v4l2src *d = (struct v4l2src *)s;
	int e = stopped(d);
	if (e < 0)
		return e;
	int i = (int)index;
	e = v4l2_xioctl(d, VIDIOC_S_INPUT, &i);
	if (e < 0) {
		if (e != -EBUSY) /* another handle's buffers: the caller retries */
			log_warn("%s: VIDIOC_S_INPUT %u: %s", d->path, index, strerror(-e));
		return v4l2_gone(e);
	}
	d->dv_chosen = 0;
	v4l2_sync_signal(d);
	v4l2_subscribe(d);
	return reread_format(d);
}

int vc_v4l2_std_enum(struct vc_src *s, uint32_t index, struct vc_v4l2_std *out)
{
	struct v4l2src *d = dev_of(s);
	struct v4l2_standard st;
	if (!d)
		return -EINVAL;
	int e = v4l2_query(d, VIDIOC_ENUMSTD, &st, sizeof(st), index);
	if (e < 0)
		return e == -ENODATA || e == -ENOTTY ? -EINVAL : v4l2_gone(e);
	memset(out, 0, sizeof(*out));
	out->id = st.id;
	vc_v4l2_name(out->name, sizeof(out->name), st.name, sizeof(st.name));
	out->frameperiod.num = st.frameperiod.numerator;
	out->frameperiod.den = st.frameperiod.denominator;
	out->framelines = st.framelines;
	return 0;
}

int vc_v4l2_std_get(struct vc_src *s, uint64_t *std)
{
	struct v4l2src *d = dev_of(s);
	v4l2_std_id id = 0;
	if (!d)
		return -EINVAL;
	int e = v4l2_xioctl(d, VIDIOC_G_STD, &id);
	if (e < 0)
		return v4l2_gone(e);
	*std = id;
	return 0;
}

int vc_v4l2_std_set(struct vc_src *s, uint64_t std)
{
	struct v4l2src *d = dev_of(s);
	if (!d)
		return -EINVAL;
	v4l2_std_id id = std;
	return set_signal(d, VIDIOC_S_STD, &id);
}

int vc_v4l2_dv_enum(struct vc_src *s, uint32_t index, struct vc_v4l2_dv *out)
{
	struct v4l2src *d = dev_of(s);
	struct v4l2_enum_dv_timings t;
	if (!d)
		return -EINVAL;
	int e = v4l2_query(d, VIDIOC_ENUM_DV_TIMINGS, &t, sizeof(t), index); /* pad 0 */
	if (e < 0)
		return e == -ENODATA || e == -ENOTTY ? -EINVAL : v4l2_gone(e);
	dv_decode(&t.timings, out);
	return 0;
}

int vc_v4l2_dv_get(struct vc_src *s, struct vc_v4l2_dv *out)
{
	struct v4l2src *d = dev_of(s);
	struct v4l2_dv_timings t;
	if (!d)
		return -EINVAL;
	int e = v4l2_query(d, VIDIOC_G_DV_TIMINGS, &t, sizeof(t), 0);
	if (e < 0)
		return v4l2_gone(e);
	dv_decode(&t, out);
	return 0;
}

int vc_v4l2_dv_query(struct vc_src *s, struct vc_v4l2_dv *out)
{
	struct v4l2src *d = dev_of(s);
	struct v4l2_dv_timings t;
	if (!d)
		return -EINVAL;
	int e = v4l2_query(d, VIDIOC_QUERY_DV_TIMINGS, &t, sizeof(t), 0);
	if (e < 0)
		return v4l2_gone(e);
	dv_decode(&t, out);
	return 0;
}

int vc_v4l2_dv_set(struct vc_src *s, const struct vc_v4l2_dv *dv)
{
	struct v4l2src *d = dev_of(s);
	if (!d)
		return -EINVAL;
	struct v4l2_dv_timings t = dv->raw;
	int e = set_signal(d, VIDIOC_S_DV_TIMINGS, &t);
	if (e == 0)
		d->dv_chosen = 1;
	return e;
}
