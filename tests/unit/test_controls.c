/* server/capture/controls.c over a fake source whose controls cover every case the
 * enumeration must handle: classes, strings and disabled controls left out,
 * menus with a skipped item, integer menus, 64-bit values, buttons,
 * read-only controls; vc_ctrl_set's checks before the device sees a value. */
#include <errno.h>
#include <linux/videodev2.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "server/capture/controls.h"

struct fake_ctrl {
	struct vc_src_ctrl q;
	int64_t value;
	uint64_t skip_mask; /* menu items the driver skips */
};

static struct fake_ctrl ctrls[] = {
	{{V4L2_CID_USER_CLASS, V4L2_CTRL_TYPE_CTRL_CLASS, "User Controls", 0, 0, 0, 0,
	  V4L2_CTRL_FLAG_READ_ONLY | V4L2_CTRL_FLAG_WRITE_ONLY}, 0, 0},
	{{V4L2_CID_BRIGHTNESS, V4L2_CTRL_TYPE_INTEGER, "Brightness", 0, 255, 2, 128, 0}, 128, 0},
	{{V4L2_CID_AUTO_WHITE_BALANCE, V4L2_CTRL_TYPE_BOOLEAN, "White Balance, Automatic", 0, 1,
	  1, 1, 0}, 1, 0},
	{{V4L2_CID_POWER_LINE_FREQUENCY, V4L2_CTRL_TYPE_MENU, "Power Line Frequency", 0, 3, 1, 1,
	  0}, 1, 1u << 2},
	{{V4L2_CID_DO_WHITE_BALANCE, V4L2_CTRL_TYPE_BUTTON, "Do White Balance", 0, 0, 0, 0,
	  V4L2_CTRL_FLAG_WRITE_ONLY}, 0, 0},
	{{0x00980a00, V4L2_CTRL_TYPE_STRING, "A String", 0, 32, 1, 0, 0}, 0, 0},
	{{0x00980a01, V4L2_CTRL_TYPE_INTEGER_MENU, "Link Frequency", 0, 2, 1, 0, 0}, 0, 0},
	{{0x00980a02, V4L2_CTRL_TYPE_INTEGER64, "Pixel Rate", 0, (int64_t)1 << 50, 1, 0, 0}, 0, 0},
	{{0x00980a03, V4L2_CTRL_TYPE_INTEGER, "Sensor Temp", -40, 120, 1, 20,
	  V4L2_CTRL_FLAG_READ_ONLY}, 37, 0},
	{{0x00980a04, V4L2_CTRL_TYPE_INTEGER, "Gone", 0, 1, 1, 0, V4L2_CTRL_FLAG_DISABLED}, 0, 0},
};
#define N_CTRLS (sizeof(ctrls) / sizeof(ctrls[0]))
static const int64_t link_freq[] = {24000000, 48000000, 5000000000LL};
static int sets; /* ctrl_set calls that reached the "device" */

static struct fake_ctrl *find(uint32_t id)
{
	for (size_t i = 0; i < N_CTRLS; i++)
		if (ctrls[i].q.id == id)
			return &ctrls[i];
	return NULL;
}

static int f_query(struct vc_src *s, uint32_t id, struct vc_src_ctrl *c)
{
	(void)s;
	if (id & V4L2_CTRL_FLAG_NEXT_CTRL) { /* the next id above */
		uint32_t base = id & ~V4L2_CTRL_FLAG_NEXT_CTRL;
		struct fake_ctrl *best = NULL;
		for (size_t i = 0; i < N_CTRLS; i++)
			if (ctrls[i].q.id > base && (!best || ctrls[i].q.id < best->q.id))
				best = &ctrls[i];
		if (!best)
			return -EINVAL;
		*c = best->q;
		return 0;
	}
	struct fake_ctrl *f = find(id);
	if (!f)
		return -EINVAL;
	*c = f->q;
	return 0;
}

static int f_menu(struct vc_src *s, uint32_t id, uint32_t index, char name[32])
{
	struct fake_ctrl *f = find(id);
	(void)s;
	if (!f || index < f->q.min || index > f->q.max || (f->skip_mask >> index & 1))
		return -EINVAL;
	if (f->q.type == V4L2_CTRL_TYPE_INTEGER_MENU)
		snprintf(name, 32, "%lld", (long long)link_freq[index]);
	else
		snprintf(name, 32, "Item %u", index);
	return 0;
}

static int f_get(struct vc_src *s, uint32_t id, int64_t *v)
{
	struct fake_ctrl *f = find(id);
	(void)s;
	if (!f)
		return -EINVAL;
	*v = f->value;
	return 0;
}

static int f_set(struct vc_src *s, uint32_t id, int64_t v)
{
	struct fake_ctrl *f = find(id);
	(void)s;
	if (!f)
		return -EINVAL;
	sets++;
	f->value = v;
	return 0;
}

static const struct vc_src_ops fake_ops = {
	.name = "fake",
	.ctrl_query = f_query,
	.ctrl_menu = f_menu,
	.ctrl_get = f_get,
	.ctrl_set = f_set,
};
static const struct vc_src_ops bare_ops = {.name = "bare"};

static void enumerate(void)
{
	struct vc_src s = {.ops = &fake_ops};
	struct vc_ctrls cs;
	memset(&cs, 0xff, sizeof(cs));
	CHECK(vc_ctrls_load(&s, &cs) == 0, "load");
	/* class, string and disabled are left out */
	CHECK(cs.n == 7, "%zu controls", cs.n);
	CHECK(!vc_ctrls_find(&cs, V4L2_CID_USER_CLASS), "class listed");
	CHECK(!vc_ctrls_find(&cs, 0x00980a00), "string listed");
	CHECK(!vc_ctrls_find(&cs, 0x00980a04), "disabled listed");

	const struct vc_ctrl *b = vc_ctrls_find_key(&cs, "brightness");
	CHECK(b && b->id == V4L2_CID_BRIGHTNESS && b->has_value && b->value == 128 &&
	      b->step == 2 && strcmp(vc_ctrl_type_name(b->type), "int") == 0, "brightness");
	const struct vc_ctrl *wb = vc_ctrls_find_key(&cs, "white_balance_automatic");
	CHECK(wb && wb->type == V4L2_CTRL_TYPE_BOOLEAN, "key of 'White Balance, Automatic'");
	const struct vc_ctrl *m = vc_ctrls_find(&cs, V4L2_CID_POWER_LINE_FREQUENCY);
	CHECK(m && m->n_items == 3 && m->items[0].index == 0 && m->items[2].index == 3 &&
	      strcmp(m->items[2].name, "Item 3") == 0, "menu with item 2 skipped: %zu items",
	      m ? m->n_items : 0);
	const struct vc_ctrl *im = vc_ctrls_find_key(&cs, "link_frequency");
	CHECK(im && im->n_items == 3 && strcmp(im->items[2].name, "5000000000") == 0 &&
	      strcmp(vc_ctrl_type_name(im->type), "intmenu") == 0, "integer menu");
	const struct vc_ctrl *bt = vc_ctrls_find_key(&cs, "do_white_balance");
	CHECK(bt && !bt->has_value, "button has no value");
	const struct vc_ctrl *ro = vc_ctrls_find_key(&cs, "sensor_temp");
	CHECK(ro && ro->has_value && ro->value == 37 && ro->min == -40, "read-only value");
	vc_ctrls_clear(&cs);
	CHECK(cs.n == 0 && cs.v == NULL, "clear");

	struct vc_src bare = {.ops = &bare_ops};
	CHECK(vc_ctrls_load(&bare, &cs) == 0 && cs.n == 0, "source without controls");
	int64_t v;
	CHECK(vc_ctrl_set(&bare, V4L2_CID_BRIGHTNESS, 1, NULL) == -ENOTTY, "set without controls");
	CHECK(vc_ctrl_get(&bare, V4L2_CID_BRIGHTNESS, &v) == -ENOTTY, "get without controls");
}

static const struct {
	int line;
	uint32_t id;
	int64_t value;
	int ret;
} set_vectors[] = {
	{__LINE__, V4L2_CID_BRIGHTNESS, 130, 0},
	{__LINE__, V4L2_CID_BRIGHTNESS, 131, -EINVAL},  /* off the step grid */
	{__LINE__, V4L2_CID_BRIGHTNESS, 256, -ERANGE},
	{__LINE__, V4L2_CID_BRIGHTNESS, -2, -ERANGE},
	{__LINE__, V4L2_CID_POWER_LINE_FREQUENCY, 3, 0},
	{__LINE__, V4L2_CID_POWER_LINE_FREQUENCY, 2, -EINVAL}, /* skipped item */
	{__LINE__, V4L2_CID_POWER_LINE_FREQUENCY, 4, -ERANGE},
	{__LINE__, 0x00980a02, (int64_t)1 << 40, 0},         /* beyond 32 bits */
	{__LINE__, 0x00980a03, 40, -EACCES},                 /* read-only */
	{__LINE__, 0x00980a04, 1, -EACCES},                  /* disabled */
	{__LINE__, V4L2_CID_USER_CLASS, 0, -EACCES},
	{__LINE__, 0x00980a00, 0, -EACCES},                  /* string: not through int64 */
	{__LINE__, V4L2_CID_DO_WHITE_BALANCE, 0, 0},
	{__LINE__, 0x12345678, 0, -EINVAL},                  /* unknown id */
};

static void set_checks(void)
{
	struct vc_src s = {.ops = &fake_ops};
	for (size_t i = 0; i < sizeof(set_vectors) / sizeof(set_vectors[0]); i++) {
		int before = sets;
		int64_t applied = -999;
		int r = vc_ctrl_set(&s, set_vectors[i].id, set_vectors[i].value, &applied);
		CHECK_AT(set_vectors[i].line, r == set_vectors[i].ret, "ret %d want %d", r,
			 set_vectors[i].ret);
		/* a refused value never reaches the device */
		CHECK_AT(set_vectors[i].line, (r == 0) == (sets == before + 1), "device saw %d sets",
			 sets - before);
		if (r == 0 && set_vectors[i].id != V4L2_CID_DO_WHITE_BALANCE)
			CHECK_AT(set_vectors[i].line, applied == set_vectors[i].value,
				 "applied %lld", (long long)applied);
	}
	int64_t v = 0;
	CHECK(vc_ctrl_get(&s, 0x00980a02, &v) == 0 && v == (int64_t)1 << 40, "int64 kept: %lld",
	      (long long)v);
}

int main(void)
{
	RUN("controls", enumerate);
	RUN("controls", set_checks);
	CHECK_EXIT();
}
