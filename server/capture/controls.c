/* Control enumeration and get/set over the ctrl_* ops of a source, into
 * plain data (server/capture/controls.h). */
#define LOG_PREFIX "ctrl: "
#include "common/log.h"

#include <ctype.h>
#include <errno.h>
#include <linux/videodev2.h>
#include <stdlib.h>
#include <string.h>

#include "server/capture/capture.h"
#include "server/capture/controls.h"

#define MAX_CTRLS 1024

/* Where the controls come from: a source's ops or a camera's vc_cam_ctrl_*
 * (which forward to its current source). NULL members = not supported. */
struct io {
	void *o;
	int (*query)(void *o, uint32_t id, struct vc_src_ctrl *c);
	int (*menu)(void *o, uint32_t id, uint32_t index, char name[32]);
	int (*get)(void *o, uint32_t id, int64_t *value);
	int (*set)(void *o, uint32_t id, int64_t value);
};

static int src_query(void *o, uint32_t id, struct vc_src_ctrl *c)
{
	struct vc_src *s = o;
	return s->ops->ctrl_query(s, id, c);
}

static int src_menu(void *o, uint32_t id, uint32_t index, char name[32])
{
	struct vc_src *s = o;
	return s->ops->ctrl_menu(s, id, index, name);
}

static int src_get(void *o, uint32_t id, int64_t *value)
{
	struct vc_src *s = o;
	return s->ops->ctrl_get(s, id, value);
}

static int src_set(void *o, uint32_t id, int64_t value)
{
	struct vc_src *s = o;
	return s->ops->ctrl_set(s, id, value);
}

static struct io src_io(struct vc_src *s)
{
	struct io io = {.o = s};
	io.query = s->ops->ctrl_query ? src_query : NULL;
	io.menu = s->ops->ctrl_menu ? src_menu : NULL;
	io.get = s->ops->ctrl_get ? src_get : NULL;
	io.set = s->ops->ctrl_set ? src_set : NULL;
	return io;
}

static int cam_query(void *o, uint32_t id, struct vc_src_ctrl *c)
{
	return vc_cam_ctrl_query(o, id, c);
}

static int cam_menu(void *o, uint32_t id, uint32_t index, char name[32])
{
	return vc_cam_ctrl_menu(o, id, index, name);
}

static int cam_get(void *o, uint32_t id, int64_t *value)
{
	return vc_cam_ctrl_get(o, id, value);
}

static int cam_set(void *o, uint32_t id, int64_t value)
{
	return vc_cam_ctrl_set(o, id, value);
}

static struct io cam_io(struct vc_cam *cam)
{
	struct io io = {.o = cam, .query = cam_query, .menu = cam_menu, .get = cam_get,
			.set = cam_set};
	return io;
}
#define MAX_ITEMS 256

static void make_key(const char *name, char key[32])
{
	size_t k = 0;
	int sep = 0;
	for (const char *p = name; *p && k < 31; p++) {
		unsigned char ch = (unsigned char)*p;
		if (isalnum(ch)) {
			if (sep && k > 0 && k < 30)
				key[k++] = '_';
			sep = 0;
			key[k++] = (char)tolower(ch);
		} else {
			sep = 1;
		}
	}
	key[k] = 0;
}

/* Only controls whose value fits an int64 are listed. */
static int listable(uint32_t type)
{
	switch (type) {
	case V4L2_CTRL_TYPE_INTEGER:
	case V4L2_CTRL_TYPE_BOOLEAN:
	case V4L2_CTRL_TYPE_MENU:
	case V4L2_CTRL_TYPE_BUTTON:
	case V4L2_CTRL_TYPE_INTEGER64:
	case V4L2_CTRL_TYPE_BITMASK:
	case V4L2_CTRL_TYPE_INTEGER_MENU:
	case V4L2_CTRL_TYPE_U8:
	case V4L2_CTRL_TYPE_U16:
	case V4L2_CTRL_TYPE_U32:
		return 1;
	default:
		return 0;
	}
}

static int is_menu(uint32_t type)
{
	return type == V4L2_CTRL_TYPE_MENU || type == V4L2_CTRL_TYPE_INTEGER_MENU;
}

const char *vc_ctrl_type_name(uint32_t type)
{
	static const struct {
		uint32_t type;
		const char *name;
	} names[] = {
		{V4L2_CTRL_TYPE_INTEGER, "int"},       {V4L2_CTRL_TYPE_BOOLEAN, "bool"},
		{V4L2_CTRL_TYPE_MENU, "menu"},         {V4L2_CTRL_TYPE_BUTTON, "button"},
		{V4L2_CTRL_TYPE_INTEGER64, "int64"},   {V4L2_CTRL_TYPE_BITMASK, "bitmask"},
		{V4L2_CTRL_TYPE_INTEGER_MENU, "intmenu"}, {V4L2_CTRL_TYPE_U8, "u8"},
		{V4L2_CTRL_TYPE_U16, "u16"},           {V4L2_CTRL_TYPE_U32, "u32"},
		{V4L2_CTRL_TYPE_STRING, "string"},
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].type == type)
			return names[i].name;
	return "other";
}

static int load_items(const struct io *io, struct vc_ctrl *c)
{
	if (!is_menu(c->type) || !io->menu || c->min < 0 || c->max < c->min)
		return 0;
	int64_t n = c->max - c->min + 1;
	if (n > MAX_ITEMS)
		n = MAX_ITEMS;
	c->items = calloc((size_t)n, sizeof(*c->items));
	if (!c->items)
		return -ENOMEM;
	for (int64_t i = c->min; i < c->min + n; i++) {
		char name[32];
		int e = io->menu(io->o, c->id, (uint32_t)i, name);
		if (e == -ENODEV)
			return e;
		if (e < 0)
			continue; /* a skipped item (the driver's menu_skip_mask) */
		c->items[c->n_items].index = i;
		memcpy(c->items[c->n_items].name, name, sizeof(name));
		c->items[c->n_items].name[31] = 0;
		c->n_items++;
	}
	return 0;
}

void vc_ctrls_clear(struct vc_ctrls *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].items);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

static int load(const struct io *io, struct vc_ctrls *out)
{
	struct vc_src_ctrl q;
	uint32_t id = 0;
	int e = 0;

	memset(out, 0, sizeof(*out));
	if (!io->query)
		return 0;
	for (size_t guard = 0; guard < MAX_CTRLS; guard++) {
		e = io->query(io->o, id | V4L2_CTRL_FLAG_NEXT_CTRL, &q);
		if (e == -EINVAL || e == -ENOTTY) {
			e = 0;
			break;
		}
		if (e < 0)
			goto fail;
		if (q.id <= id && guard > 0) /* a driver that does not advance */
			break;
		id = q.id;
		if (q.type == V4L2_CTRL_TYPE_CTRL_CLASS || !listable(q.type) ||
		    (q.flags & V4L2_CTRL_FLAG_DISABLED))
			continue;
		struct vc_ctrl *nv = realloc(out->v, (out->n + 1) * sizeof(*nv));
		if (!nv) {
			e = -ENOMEM;
			goto fail;
		}
		out->v = nv;
		struct vc_ctrl *c = &out->v[out->n++];
		memset(c, 0, sizeof(*c));
		c->id = q.id;
		c->type = q.type;
		c->flags = q.flags;
		memcpy(c->name, q.name, sizeof(c->name));
		c->name[31] = 0;
		make_key(c->name, c->key);
		c->min = q.min;
		c->max = q.max;
		c->step = q.step;
		c->def = q.def;
		if ((e = load_items(io, c)) < 0)
			goto fail;
		if (q.type != V4L2_CTRL_TYPE_BUTTON && !(q.flags & V4L2_CTRL_FLAG_WRITE_ONLY) &&
		    io->get) {
			e = io->get(io->o, c->id, &c->value);
			if (e == -ENODEV)
				goto fail;
			c->has_value = e == 0;
			e = 0;
		}
	}
	return 0;
fail:
	if (e != -ENODEV) /* a camera without its device: the caller says so */
		log_warn("enumerating controls: %s", strerror(-e));
	vc_ctrls_clear(out);
	return e;
}

int vc_ctrls_load(struct vc_src *s, struct vc_ctrls *out)
{
	struct io io = src_io(s);
	return load(&io, out);
}

int vc_cam_ctrls_load(struct vc_cam *cam, struct vc_ctrls *out)
{
	struct io io = cam_io(cam);
	int e = load(&io, out);
	return e == -ENOTTY ? 0 : e; /* a source without controls: an empty list */
}

const struct vc_ctrl *vc_ctrls_find(const struct vc_ctrls *c, uint32_t id)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].id == id)
			return &c->v[i];
	return NULL;
}

const struct vc_ctrl *vc_ctrls_find_key(const struct vc_ctrls *c, const char *key)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->v[i].key, key) == 0)
			return &c->v[i];
	return NULL;
}

int vc_ctrl_get(struct vc_src *s, uint32_t id, int64_t *value)
{
	if (!s->ops->ctrl_get)
		return -ENOTTY;
	return s->ops->ctrl_get(s, id, value);
}

static int set_checked(const struct io *io, uint32_t id, int64_t value, int64_t *applied)
{
	struct vc_src_ctrl q;
	char name[32];
	int e;

	if (!io->query || !io->set)
		return -ENOTTY;
	e = io->query(io->o, id, &q);
	if (e < 0)
		return e;
	if (q.flags & (V4L2_CTRL_FLAG_READ_ONLY | V4L2_CTRL_FLAG_DISABLED) ||
	    q.type == V4L2_CTRL_TYPE_CTRL_CLASS || !listable(q.type))
		return -EACCES;
	if (q.type != V4L2_CTRL_TYPE_BUTTON && q.type != V4L2_CTRL_TYPE_BITMASK &&
	    (value < q.min || value > q.max))
		return -ERANGE;
	if (q.type == V4L2_CTRL_TYPE_BITMASK && (value & ~q.max))
		return -ERANGE;
	if (is_menu(q.type) && io->menu && io->menu(io->o, id, (uint32_t)value, name) < 0)
		return -EINVAL;
	if ((q.type == V4L2_CTRL_TYPE_INTEGER || q.type == V4L2_CTRL_TYPE_INTEGER64) &&
	    q.step > 1 && (value - q.min) % q.step)
		return -EINVAL;
	e = io->set(io->o, id, value);
	if (e < 0) {
		log_info("set %s = %lld: %s", q.name, (long long)value, strerror(-e));
		return e;
	}
	if (applied) {
		*applied = value;
		if (q.type != V4L2_CTRL_TYPE_BUTTON && !(q.flags & V4L2_CTRL_FLAG_WRITE_ONLY) &&
		    io->get && io->get(io->o, id, applied) < 0)
			*applied = value;
	}
	return 0;
}

int vc_ctrl_set(struct vc_src *s, uint32_t id, int64_t value, int64_t *applied)
{
	struct io io = src_io(s);
	return set_checked(&io, id, value, applied);
}

int vc_cam_ctrl_set_checked(struct vc_cam *cam, uint32_t id, int64_t value, int64_t *applied)
{
	struct io io = cam_io(cam);
	return set_checked(&io, id, value, applied);
}
