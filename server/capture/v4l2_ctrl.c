/* Controls of a V4L2 device through libv4l2 (which adds its own software
 * controls for emulated formats): QUERY_EXT_CTRL (QUERYCTRL on old
 * drivers), QUERYMENU, and one-control G/S_EXT_CTRLS (G/S_CTRL on old
 * drivers). Values are widened to int64. */
#define LOG_PREFIX "v4l2: "
#include "common/log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "server/capture/v4l2_int.h"
#include "server/capture/v4l2src.h"

int v4l2_ctrl_query(struct vc_src *s, uint32_t id, struct vc_src_ctrl *c)
{
	struct v4l2src *d = (struct v4l2src *)s;
	struct v4l2_query_ext_ctrl q;
	int e = v4l2_query(d, VIDIOC_QUERY_EXT_CTRL, &q, sizeof(q), id);
	if (e == -ENOTTY) { /* an old driver: QUERYCTRL, read as the extended answer */
		struct v4l2_queryctrl o;
		e = v4l2_query(d, VIDIOC_QUERYCTRL, &o, sizeof(o), id);
		q.id = o.id;
		q.type = o.type;
		memcpy(q.name, o.name, sizeof(o.name));
		q.minimum = o.minimum;
		q.maximum = o.maximum;
		q.step = (uint64_t)o.step;
		q.default_value = o.default_value;
		q.flags = o.flags;
	}
	if (e < 0)
		return v4l2_gone(e);
	memset(c, 0, sizeof(*c));
	c->id = q.id;
	c->type = q.type;
	vc_v4l2_name(c->name, sizeof(c->name), q.name, sizeof(q.name));
	c->min = q.minimum;
	c->max = q.maximum;
	c->step = (int64_t)q.step;
	c->def = q.default_value;
	c->flags = q.flags;
	return 0;
}

int v4l2_ctrl_menu(struct vc_src *s, uint32_t id, uint32_t index, char name[32])
{
	struct v4l2src *d = (struct v4l2src *)s;
	struct vc_src_ctrl c;
	struct v4l2_querymenu m;
	int e = v4l2_ctrl_query(s, id, &c);
	if (e < 0)
		return e;
	memset(&m, 0, sizeof(m));
	m.id = id;
	m.index = index;
	e = v4l2_xioctl(d, VIDIOC_QUERYMENU, &m);
	if (e < 0)
		return v4l2_gone(e);
	if (c.type == V4L2_CTRL_TYPE_INTEGER_MENU)
		snprintf(name, 32, "%" PRId64, (int64_t)m.value);
	else
		vc_v4l2_name(name, 32, m.name, sizeof(m.name));
	return 0;
}

static int is64(uint32_t type)
{
	return type == V4L2_CTRL_TYPE_INTEGER64;
}

/* G_EXT_CTRLS / S_EXT_CTRLS of the current value of one control. */
static int one_ext_ctrl(struct v4l2src *d, unsigned long req, struct v4l2_ext_control *ec)
{
	struct v4l2_ext_controls ecs;
	memset(&ecs, 0, sizeof(ecs));
	ecs.which = V4L2_CTRL_WHICH_CUR_VAL;
	ecs.count = 1;
	ecs.controls = ec;
	return v4l2_xioctl(d, req, &ecs);
}

int v4l2_ctrl_get(struct vc_src *s, uint32_t id, int64_t *value)
{
	struct v4l2src *d = (struct v4l2src *)s;
	struct vc_src_ctrl c;
	int e = v4l2_ctrl_query(s, id, &c);
	if (e < 0)
		return e;
	if (c.flags & V4L2_CTRL_FLAG_WRITE_ONLY || c.type == V4L2_CTRL_TYPE_BUTTON ||
	    c.type == V4L2_CTRL_TYPE_CTRL_CLASS)
		return -EACCES;
	struct v4l2_ext_control ec = { .id = id };
	e = one_ext_ctrl(d, VIDIOC_G_EXT_CTRLS, &ec);
	if (e == 0) {
		*value = is64(c.type) ? ec.value64 : ec.value;
		return 0;
	}
	if (is64(c.type) || v4l2_gone(e) == -ENODEV)
		return v4l2_gone(e);
	struct v4l2_control oc = {.id = id};
	e = v4l2_xioctl(d, VIDIOC_G_CTRL, &oc);
	if (e < 0)
		return v4l2_gone(e);
	*value = oc.value;
	return 0;
}

int v4l2_ctrl_set(struct vc_src *s, uint32_t id, int64_t value)
{
	struct v4l2src *d = (struct v4l2src *)s;
	struct vc_src_ctrl c;
	int e = v4l2_ctrl_query(s, id, &c);
	if (e < 0)
		return e;
	if (c.flags & (V4L2_CTRL_FLAG_READ_ONLY | V4L2_CTRL_FLAG_DISABLED) ||
	    c.type == V4L2_CTRL_TYPE_CTRL_CLASS)
		return -EACCES;
	if (!is64(c.type) && (value < INT32_MIN || value > INT32_MAX))
		return -ERANGE;
	struct v4l2_ext_control ec = { .id = id };
	if (is64(c.type))
		ec.value64 = value;
	else
		ec.value = (int32_t)value;
	e = one_ext_ctrl(d, VIDIOC_S_EXT_CTRLS, &ec);
	if (e == 0)
		return 0;
	if (is64(c.type) || e == -ERANGE || v4l2_gone(e) == -ENODEV)
		return v4l2_gone(e);
	struct v4l2_control oc = {.id = id, .value = (int32_t)value};
	e = v4l2_xioctl(d, VIDIOC_S_CTRL, &oc);
	if (e < 0)
		log_debug("%s: set control %s = %" PRId64 ": %s", d->path, c.name, value,
			  strerror(-e));
	return v4l2_gone(e);
}
