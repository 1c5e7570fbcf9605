/* What a device answered, learned into its capability list (common/caps.h):
 * a webcam that answers 1280x720 with 640x480 loses 1280x720 from that
 * format; one that runs 30 fps as 333/10000 s has that interval listed
 * instead of 1/30; a fallback to another listed interval drops the asked
 * one; stepwise formats, other formats, the last size and an ask the list
 * never had are left alone. */
#include <stdlib.h>

#include "check.h"
#include "common/caps.h"

#define MJPG 0x47504a4du /* 'MJPG' */
#define YUYV 0x56595559u /* 'YUYV' */

/* a camera like tests/vm/boot_uvc.sh's quirky one: MJPEG 640x480 at
 * 30/15, 1280x720 at 30, YUYV 640x480 at 30; and a stepwise format */
static void fill(struct vc_caps *c)
{
	struct vc_caps_size m[] = {
		{ 640, 480, 2, { { 1, 30 }, { 1, 15 } } },
		{ 1280, 720, 1, { { 1, 30 } } },
	};
	struct vc_caps_size y[] = { { 640, 480, 1, { { 1, 30 } } } };

	c->n_fmts = 3;
	c->fmts = calloc(3, sizeof(*c->fmts));
	c->fmts[0] = (struct vc_caps_fmt){ .fourcc = MJPG, .n_sizes = 2, .sizes = malloc(sizeof(m)) };
	memcpy(c->fmts[0].sizes, m, sizeof(m));
	c->fmts[1] = (struct vc_caps_fmt){ .fourcc = YUYV, .n_sizes = 1, .sizes = malloc(sizeof(y)) };
	memcpy(c->fmts[1].sizes, y, sizeof(y));
	c->fmts[2] = (struct vc_caps_fmt){ .fourcc = 0x32315559u, .stepwise = 1, .min_w = 16,
					   .max_w = 1920, .step_w = 2, .min_h = 16, .max_h = 1080,
					   .step_h = 2 };
}

static struct vc_mode mode(uint32_t fourcc, uint32_t w, uint32_t h, uint32_t num, uint32_t den)
{
	return (struct vc_mode){ fourcc, w, h, { num, den } };
}

static void size_answered_with_another(void)
{
	struct vc_caps c = { 0 };
	struct vc_mode hd = mode(MJPG, 1280, 720, 1, 30), vga = mode(MJPG, 640, 480, 333, 10000);

	fill(&c);
	CHECK(vc_caps_has_mode(&c, &hd), "1280x720 listed before");
	CHECK(vc_caps_take_answer(&c, &hd, &vga) == VC_CAPS_SIZE_TAKEN, "size taken");
	CHECK(!vc_caps_has_mode(&c, &hd) && c.fmts[0].n_sizes == 1 &&
		      c.fmts[0].sizes[0].width == 640 && c.fmts[0].sizes[0].n_ivals == 2,
	      "only 640x480 left, its intervals kept: %zu sizes", c.fmts[0].n_sizes);
	/* the last size of a format stays: the device gave something */
	struct vc_mode qvga = mode(MJPG, 320, 240, 1, 30), vga30 = mode(MJPG, 640, 480, 1, 30);
	CHECK(vc_caps_take_answer(&c, &vga30, &qvga) == 0 && c.fmts[0].n_sizes == 1,
	      "the last size kept");
	/* YUYV untouched, another fourcc in the answer learns nothing */
	struct vc_mode y = mode(YUYV, 640, 480, 1, 30);
	CHECK(vc_caps_take_answer(&c, &y, &vga) == 0 && vc_caps_has_mode(&c, &y), "other fourcc");
	vc_caps_clear(&c);
}

static void interval_rounded(void)
{
	struct vc_caps c = { 0 };
	struct vc_mode a30 = mode(MJPG, 640, 480, 1, 30), g30 = mode(MJPG, 640, 480, 333, 10000);
	struct vc_mode a15 = mode(MJPG, 640, 480, 1, 15), g15 = mode(MJPG, 640, 480, 667, 10000);

	fill(&c);
	CHECK(vc_caps_take_answer(&c, &a30, &g30) == (VC_CAPS_IVAL_TAKEN | VC_CAPS_IVAL_ADDED),
	      "30 rounded");
	CHECK(vc_caps_take_answer(&c, &a15, &g15) == (VC_CAPS_IVAL_TAKEN | VC_CAPS_IVAL_ADDED),
	      "15 rounded");
	const struct vc_caps_size *s = &c.fmts[0].sizes[0];
	CHECK(s->n_ivals == 2 && s->ival[0].num == 333 && s->ival[1].num == 667,
	      "the rates it runs, fastest first: %u/%u %u/%u", s->ival[0].num, s->ival[0].den,
	      s->ival[1].num, s->ival[1].den);
	CHECK(vc_caps_has_mode(&c, &g30) && !vc_caps_has_mode(&c, &a30), "has the answer");
	/* asked again for what it runs: nothing to learn */
	CHECK(vc_caps_take_answer(&c, &g30, &g30) == 0, "same answer");
	/* equal fractions are the same interval */
	struct vc_mode e = mode(MJPG, 1280, 720, 1000, 30000);
	struct vc_mode hd = mode(MJPG, 1280, 720, 1, 30);
	CHECK(vc_caps_take_answer(&c, &hd, &e) == 0, "1000/30000 is 1/30");
	/* unknown intervals (a driver without S_PARM) learn nothing */
	struct vc_mode u = mode(MJPG, 1280, 720, 0, 0);
	CHECK(vc_caps_take_answer(&c, &hd, &u) == 0 && vc_caps_has_mode(&c, &hd), "unknown");
	vc_caps_clear(&c);
}

static void fallback_to_listed_interval(void)
{
	struct vc_caps c = { 0 };
	struct vc_mode a30 = mode(MJPG, 640, 480, 1, 30), g15 = mode(MJPG, 640, 480, 1, 15);

	fill(&c);
	CHECK(vc_caps_take_answer(&c, &a30, &g15) == VC_CAPS_IVAL_TAKEN, "30 dropped");
	const struct vc_caps_size *s = &c.fmts[0].sizes[0];
	CHECK(s->n_ivals == 1 && s->ival[0].den == 15, "15 left: %zu", s->n_ivals);
	/* the last interval stays */
	struct vc_mode a15 = g15, g10 = mode(MJPG, 640, 480, 1, 10);
	CHECK(vc_caps_take_answer(&c, &a15, &g10) == (VC_CAPS_IVAL_TAKEN | VC_CAPS_IVAL_ADDED) &&
		      s->n_ivals == 1 && s->ival[0].den == 10,
	      "a rounded last interval is replaced, never removed");
	vc_caps_clear(&c);
}

static void stepwise_and_unlisted_left_alone(void)
{
	struct vc_caps c = { 0 };
	struct vc_mode a = mode(0x32315559u, 1000, 600, 1, 30), g = mode(0x32315559u, 992, 600, 1, 30);
	struct vc_mode nope = mode(MJPG, 800, 600, 1, 30), vga = mode(MJPG, 640, 480, 1, 30);

	fill(&c);
	CHECK(vc_caps_has_mode(&c, &a) && vc_caps_take_answer(&c, &a, &g) == 0,
	      "stepwise: the driver rounds sizes to its steps, nothing to learn");
	CHECK(vc_caps_take_answer(&c, &nope, &vga) == 0 && c.fmts[0].n_sizes == 2, "never listed");
	vc_caps_clear(&c);
}

int main(void)
{
	RUN("caps", size_answered_with_another);
	RUN("caps", interval_rounded);
	RUN("caps", fallback_to_listed_interval);
	RUN("caps", stepwise_and_unlisted_left_alone);
	CHECK_EXIT();
}
