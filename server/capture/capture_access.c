/* A camera's getters and the per-request operations on its open source:
 * controls, inputs and reconfigurations run while streaming is stopped
 * (see capture.h; the state machine is capture.c). Loop thread only. */
#include "server/capture/capture_int.h"

#include <string.h>

#include "common/fmt.h"

const struct vc_conf_cam *vc_cam_get_config(const struct vc_cam *cam)
{
	return &cam->cfg;
}

const char *vc_cam_id(const struct vc_cam *cam)
{
	return cam->id;
}

const char *vc_cam_path(const struct vc_cam *cam)
{
	return cam->path;
}

enum vc_cam_state vc_cam_get_state(const struct vc_cam *cam)
{
	return cam->state;
}

void vc_cam_get_mode(const struct vc_cam *cam, struct vc_mode *m, struct vc_geom *g)
{
	if (m)
		*m = cam->fmt.mode;
	if (g)
		*g = cam->fmt.geom;
}

int vc_cam_draining(const struct vc_cam *cam)
{
	return cam->reopen && !cam->streaming && cam->sess && cam->sess->lent > 0;
}

const struct vc_caps *vc_cam_caps(const struct vc_cam *cam)
{
	return &cam->caps;
}

void vc_cam_get_stats(const struct vc_cam *cam, struct vc_cam_stats *st)
{
	*st = cam->st;
	if (!cam->streaming)
		st->fps = 0;
}

void vc_cam_poke(struct vc_cam *cam)
{
	if (cam->sess || cam->parked)
		return;
	cam->backoff_ms = BACKOFF_MIN_MS;
	event_del(cam->retry_ev);
	event_active(cam->retry_ev, EV_TIMEOUT, 0);
}

int vc_cam_reconfigure(struct vc_cam *cam, vc_cam_reconf_fn fn, const void *arg, size_t len)
{
	if (len > sizeof(cam->reconf_arg))
		return -E2BIG;
	if (cam->reconf_fn)
		return -EBUSY;
	if (cam_wake(cam) < 0)
		return -ENODEV;
	cam->reconf_fn = fn;
	memset(cam->reconf_arg, 0, sizeof(cam->reconf_arg));
	if (len)
		memcpy(cam->reconf_arg, arg, len);
	event_active(cam->apply_ev, EV_TIMEOUT, 0);
	return 0;
}

int vc_cam_reconfigure_keep(struct vc_cam *cam, vc_cam_reconf_fn fn, const void *arg,
			    size_t len)
{
	unsigned i = 0;

	if (len > VC_CAM_RECONF_ARG_MAX)
		return -E2BIG;
	while (i < VC_CAM_KEEP_MAX && cam->keep[i].fn && cam->keep[i].fn != fn)
		i++;
	if (i == VC_CAM_KEEP_MAX)
		return -ENOSPC;
	cam_wake(cam); /* checked by the device now, not at the next viewer */
	if (cam->sess) {
		int ret = vc_cam_reconfigure(cam, fn, arg, len);
		if (ret < 0)
			return ret;
	}
	cam->keep[i].fn = fn;
	memset(cam->keep[i].arg, 0, sizeof(cam->keep[i].arg));
	if (len)
		memcpy(cam->keep[i].arg, arg, len);
	return 0;
}

struct vc_src *vc_cam_source(struct vc_cam *cam)
{
	return cam->sess ? cam->sess->src : NULL;
}

struct vc_src *vc_cam_source_wake(struct vc_cam *cam)
{
	cam_wake(cam);
	return vc_cam_source(cam);
}

int vc_cam_info(const struct vc_cam *cam, struct vc_v4l2_info *out)
{
	if (!cam->have_info)
		return -ENODEV;
	*out = cam->info;
	return 0;
}

int vc_cam_closed_idle(const struct vc_cam *cam)
{
	return cam->parked;
}

/* The current source when it has the optional op, else the error; a
 * camera closed while idle is opened for it. */
#define SRC_WITH(cam, op)                                                     \
	(cam_wake(cam) == 0 ? ((cam)->sess->src->ops->op ? 0 : -ENOTTY) : -ENODEV)

int vc_cam_ctrl_query(struct vc_cam *cam, uint32_t id, struct vc_src_ctrl *c)
{
	int ret = SRC_WITH(cam, ctrl_query);

	return ret ? ret : cam->sess->src->ops->ctrl_query(cam->sess->src, id, c);
}

int vc_cam_ctrl_menu(struct vc_cam *cam, uint32_t id, uint32_t index, char name[32])
{
	int ret = SRC_WITH(cam, ctrl_menu);

	return ret ? ret : cam->sess->src->ops->ctrl_menu(cam->sess->src, id, index, name);
}

int vc_cam_ctrl_get(struct vc_cam *cam, uint32_t id, int64_t *value)
{
	int ret = SRC_WITH(cam, ctrl_get);

	return ret ? ret : cam->sess->src->ops->ctrl_get(cam->sess->src, id, value);
}

int vc_cam_ctrl_set(struct vc_cam *cam, uint32_t id, int64_t value)
{
	int ret = SRC_WITH(cam, ctrl_set);

	if (ret)
		return ret;
	ret = cam->sess->src->ops->ctrl_set(cam->sess->src, id, value);
	if (ret < 0 && cam_is_gone(ret))
		cam_device_gone(cam, ret);
	return ret;
}

int vc_cam_input_enum(struct vc_cam *cam, uint32_t index, struct vc_src_input *in)
{
	/* a parked camera's current input is known: the mode policy asks for
	 * it on every decision, and must not wake the camera each time */
	if (cam->parked && cam->have_input && index == cam->input_idx) {
		*in = cam->input;
		return 0;
	}
	int ret = SRC_WITH(cam, input_enum);

	return ret ? ret : cam->sess->src->ops->input_enum(cam->sess->src, index, in);
}

int vc_cam_input_get(struct vc_cam *cam, uint32_t *index)
{
	if (cam->parked && cam->have_input) {
		*index = cam->input_idx;
		return 0;
	}
	int ret = SRC_WITH(cam, input_get);

	return ret ? ret : cam->sess->src->ops->input_get(cam->sess->src, index);
}

static int set_input(struct vc_src *src, const void *arg)
{
	uint32_t index;

	memcpy(&index, arg, sizeof(index));
	return src->ops->input_set(src, index);
}

int vc_cam_input_set(struct vc_cam *cam, uint32_t index)
{
	int ret = SRC_WITH(cam, input_set);

	if (ret == -ENODEV) {
		cam->cfg.input = (int)index; /* applied when the source opens */
		return 0;
	}
	if (ret)
		return ret;
	struct vc_src_input in;
	if (cam->sess->src->ops->input_enum &&
	    cam->sess->src->ops->input_enum(cam->sess->src, index, &in) < 0)
		return -EINVAL;
	ret = vc_cam_reconfigure(cam, set_input, &index, sizeof(index));
	if (ret == 0)
		cam->cfg.input = (int)index; /* and after every reopen */
	return ret;
}
