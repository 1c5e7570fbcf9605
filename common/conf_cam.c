/* The [camera NAME] keys, one row each (see conf_keys.h), in the
 * printer's order, and the functions of those whose values are formats,
 * rates, TV standards, DV timings or control lines; the names of TV
 * standards and the text of DV timings the API uses too (conf.h). */
#include "common/conf_keys.h"

#include <errno.h>
#include <linux/videodev2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/fmt.h"
#include "common/negotiate.h"

#define CAM(field) offsetof(struct vc_conf_cam, field)
/* An INT or ENUM row's field: where, and how wide (1, 2 or 4 bytes) */
#define CAM_INT(field) CAM(field), .size = sizeof(((struct vc_conf_cam *)0)->field)
#define OTHER(p, pr) .parse = p, .print = pr

/* TV standard names as V4L2 spells them (v4l2-ctl --list-standards). */
static const struct {
	const char *name;
	uint64_t id;
} std_names[] = {
	{ "NTSC", V4L2_STD_NTSC }, { "NTSC-M", V4L2_STD_NTSC_M },
	{ "NTSC-M-JP", V4L2_STD_NTSC_M_JP }, { "NTSC-M-KR", V4L2_STD_NTSC_M_KR },
	{ "NTSC-443", V4L2_STD_NTSC_443 }, { "PAL", V4L2_STD_PAL },
	{ "PAL-BG", V4L2_STD_PAL_BG }, { "PAL-B", V4L2_STD_PAL_B }, { "PAL-G", V4L2_STD_PAL_G },
	{ "PAL-H", V4L2_STD_PAL_H }, { "PAL-I", V4L2_STD_PAL_I }, { "PAL-DK", V4L2_STD_PAL_DK },
	{ "PAL-D", V4L2_STD_PAL_D }, { "PAL-K", V4L2_STD_PAL_K }, { "PAL-M", V4L2_STD_PAL_M },
	{ "PAL-N", V4L2_STD_PAL_N }, { "PAL-Nc", V4L2_STD_PAL_Nc }, { "PAL-60", V4L2_STD_PAL_60 },
	{ "SECAM", V4L2_STD_SECAM }, { "SECAM-B", V4L2_STD_SECAM_B },
	{ "SECAM-G", V4L2_STD_SECAM_G }, { "SECAM-H", V4L2_STD_SECAM_H },
	{ "SECAM-DK", V4L2_STD_SECAM_DK }, { "SECAM-L", V4L2_STD_SECAM_L },
	{ "SECAM-LC", V4L2_STD_SECAM_LC },
};

const char *vc_conf_std_name(uint64_t std)
{
	for (size_t i = 0; i < sizeof(std_names) / sizeof(std_names[0]); i++)
		if (std_names[i].id == std)
			return std_names[i].name;
	return NULL;
}

int vc_conf_std_parse(const char *name, uint64_t *std)
{
	for (size_t i = 0; i < sizeof(std_names) / sizeof(std_names[0]); i++)
		if (strcasecmp(std_names[i].name, name) == 0) {
			*std = std_names[i].id;
			return 0;
		}
	return -EINVAL;
}

/* "detect" or WxH, 'p' or 'i', a rate with up to 3 decimals: 1920x1080p59.94. */
int vc_conf_dv_parse(const char *v, struct vc_conf_dv *out)
{
	struct vc_conf_dv dv = { 0 };
	unsigned long w, h, fps, milli = 0, scale = 100;
	char *end;

	if (strcmp(v, "detect") == 0) {
		*out = dv;
		return 0;
	}
	errno = 0;
	w = strtoul(v, &end, 10);
	if (errno || end == v || *end != 'x' || v[0] == '-')
		goto bad;
	v = end + 1;
	h = strtoul(v, &end, 10);
	if (errno || end == v || (*end != 'p' && *end != 'i') || v[0] == '-')
		goto bad;
	dv.interlaced = *end == 'i';
	v = end + 1;
	fps = strtoul(v, &end, 10);
	if (errno || end == v || v[0] == '-')
		goto bad;
	if (*end == '.') {
		for (end++; *end >= '0' && *end <= '9' && scale; end++, scale /= 10)
			milli += (unsigned long)(*end - '0') * scale;
		if (end[-1] == '.')
			goto bad;
	}
	if (*end || !w || !h || w > 16384 || h > 16384 || !fps || fps > 1000)
		goto bad;
	dv.width = (uint32_t)w;
	dv.height = (uint32_t)h;
	dv.fps_milli = (uint32_t)(fps * 1000 + milli);
	*out = dv;
	return 0;
bad:
	return -EINVAL;
}

static int p_format(struct vc_conf_pstate *st, const struct vc_conf_key *k, void *base, int line,
		    const char *v)
{
	struct vc_conf_cam *cam = base;
	const struct vc_fmt *f = vc_fmt_find(v);

	(void)k;
	if (!f)
		vc_conf_bad(st, line,
			    "format: unknown pixel format '%s' (use a V4L2 name like YUYV, MJPEG, NV12)", v);
	else
		cam->mode.fourcc = f->fourcc;
	return 0;
}

static void pr_format(const struct vc_conf_key *k, const void *base, FILE *f, int redact)
{
	uint32_t fourcc = ((const struct vc_conf_cam *)base)->mode.fourcc;
	const struct vc_fmt *row = vc_fmt_by_fourcc(fourcc);
	char fcc[16];

	(void)redact;
	if (fourcc)
		fprintf(f, "%s = %s\n", k->name, row ? row->name : vc_fourcc_str(fourcc, fcc));
}

/* fps as "30" or "30000/1001" -> frame interval (den/num inverted). */
static int parse_fps(const char *v, struct vc_fract *ival)
{
	char *end;
	unsigned long n, d = 1;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || end == v || v[0] == '-')
		return -EINVAL;
	if (*end == '/') {
		const char *ds = end + 1;
		d = strtoul(ds, &end, 10);
		if (errno || end == ds || ds[0] == '-')
			return -EINVAL;
	}
	if (*end || n == 0 || d == 0 || n > 1000000 || d > 1000000)
		return -EINVAL;
	ival->num = (uint32_t)d;
	ival->den = (uint32_t)n;
	return 0;
}

static int p_fps(struct vc_conf_pstate *st, const struct vc_conf_key *k, void *base, int line,
		 const char *v)
{
	(void)k;
	if (parse_fps(v, &((struct vc_conf_cam *)base)->mode.ival) < 0)
		vc_conf_bad(st, line, "fps: '%s' is not a rate like 30 or 30000/1001", v);
	return 0;
}

static void pr_fps(const struct vc_conf_key *k, const void *base, FILE *f, int redact)
{
	const struct vc_fract *iv = &((const struct vc_conf_cam *)base)->mode.ival;

	(void)redact;
	if (iv->num == 1)
		fprintf(f, "%s = %u\n", k->name, iv->den);
	else if (iv->num)
		fprintf(f, "%s = %u/%u\n", k->name, iv->den, iv->num);
}

static int p_std(struct vc_conf_pstate *st, const struct vc_conf_key *k, void *base, int line,
		 const char *v)
{
	(void)k;
	if (vc_conf_std_parse(v, &((struct vc_conf_cam *)base)->std) < 0)
		vc_conf_bad(st, line,
			    "std: '%s' is not a TV standard (PAL, NTSC, SECAM, PAL-BG, NTSC-M, ...)", v);
	return 0;
}

static void pr_std(const struct vc_conf_key *k, const void *base, FILE *f, int redact)
{
	uint64_t std = ((const struct vc_conf_cam *)base)->std;

	(void)redact;
	if (std)
		fprintf(f, "%s = %s\n", k->name, vc_conf_std_name(std));
}

static int p_dv(struct vc_conf_pstate *st, const struct vc_conf_key *k, void *base, int line,
		const char *v)
{
	(void)k;
	if (vc_conf_dv_parse(v, &((struct vc_conf_cam *)base)->dv) < 0)
		vc_conf_bad(st, line,
			    "dv_timings: '%s' is not 'detect' or timings like 1280x720p60, 1920x1080i59.94",
			    v);
	return 0;
}

/* "detect" (width 0) is the default and not printed. */
static void pr_dv(const struct vc_conf_key *k, const void *base, FILE *f, int redact)
{
	const struct vc_conf_dv *dv = &((const struct vc_conf_cam *)base)->dv;

	(void)redact;
	if (dv->width)
		fprintf(f, "%s = %ux%u%c%u.%03u\n", k->name, dv->width, dv->height,
			dv->interlaced ? 'i' : 'p', dv->fps_milli / 1000, dv->fps_milli % 1000);
}

/* "control = name=value"; repeatable; a later line for the same name wins
 * would hide a typo, so duplicates are errors. */
static int p_control(struct vc_conf_pstate *st, const struct vc_conf_key *k, void *base, int line,
		     const char *v)
{
	const char *eq = strchr(v, '=');
	struct vc_conf_cam *cam = base;
	char name[64];

	(void)k;
	if (!eq || eq == v) {
		vc_conf_bad(st, line, "control: '%s' is not NAME=VALUE", v);
		return 0;
	}
	size_t nl = (size_t)(eq - v);
	while (nl && (v[nl - 1] == ' ' || v[nl - 1] == '\t'))
		nl--;
	const char *val = eq + 1;
	while (*val == ' ' || *val == '\t')
		val++;
	if (nl >= sizeof(name) || !*val) {
		vc_conf_bad(st, line, "control: '%s' is not NAME=VALUE", v);
		return 0;
	}
	memcpy(name, v, nl);
	name[nl] = '\0';
	for (size_t i = 0; i < nl; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') ||
		      name[i] == '_')) {
			vc_conf_bad(st, line, "control: '%s' is not a control name (lower case, digits, _)",
				    name);
			return 0;
		}
	for (size_t i = 0; i < cam->n_ctrls; i++)
		if (strcmp(cam->ctrls[i].name, name) == 0) {
			vc_conf_bad(st, line, "control: '%s' is set twice", name);
			return 0;
		}
	struct vc_conf_ctrl *a = realloc(cam->ctrls, (cam->n_ctrls + 1) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	cam->ctrls = a;
	a[cam->n_ctrls].name = strdup(name);
	a[cam->n_ctrls].value = strdup(val);
	cam->n_ctrls++;
	if (!a[cam->n_ctrls - 1].name || !a[cam->n_ctrls - 1].value)
		return -ENOMEM;
	return 0;
}

static void pr_control(const struct vc_conf_key *k, const void *base, FILE *f, int redact)
{
	const struct vc_conf_cam *cam = base;

	(void)redact;
	for (size_t j = 0; j < cam->n_ctrls; j++)
		fprintf(f, "%s = %s=%s\n", k->name, cam->ctrls[j].name, cam->ctrls[j].value);
}

static const struct vc_conf_name flips[] = {
	{ "none", 0 }, { "h", VC_FLIP_H }, { "v", VC_FLIP_V }, { "hv", VC_FLIP_H | VC_FLIP_V },
	{ "vh", VC_FLIP_H | VC_FLIP_V }, { NULL, 0 },
};

static const struct vc_conf_name idle_closes[] = {
	{ "usb", VC_IDLE_CLOSE_USB }, { "never", VC_IDLE_CLOSE_NEVER },
	{ "always", VC_IDLE_CLOSE_ALWAYS }, { NULL, 0 },
};

static const struct vc_conf_name yes_no[] = {
	{ "yes", 1 }, { "no", 0 }, { "true", 1 }, { "false", 0 }, { "on", 1 }, { "off", 0 },
	{ "1", 1 }, { "0", 0 }, { NULL, 0 },
};

/* "encoder = auto | cpu | /dev/videoN". auto is the default and leaves the
 * field NULL (not printed); a path is kept as written: the device may be
 * absent now and appear later. */
static int p_encoder(struct vc_conf_pstate *st, const struct vc_conf_key *k, void *base, int line,
		     const char *v)
{
	struct vc_conf_cam *cam = base;
	char *dup = NULL;

	(void)k;
	if (strcmp(v, "auto") != 0) {
		if (strcmp(v, "cpu") != 0 &&
		    (strncmp(v, "/dev/", 5) != 0 || strlen(v) >= 64 || strpbrk(v, " \t"))) {
			vc_conf_bad(st, line,
				    "encoder: '%s' is not auto, cpu or a device path like /dev/video31", v);
			return 0;
		}
		if (!(dup = strdup(v)))
			return -ENOMEM;
	}
	free(cam->encoder);
	cam->encoder = dup;
	return 0;
}

static void pr_encoder(const struct vc_conf_key *k, const void *base, FILE *f, int redact)
{
	const struct vc_conf_cam *cam = base;

	(void)redact;
	if (cam->encoder)
		fprintf(f, "%s = %s\n", k->name, cam->encoder);
}

const struct vc_conf_key vc_conf_cam_keys[] = {
	{ .name = "device", .camera = 1, .type = VC_CONF_T_STR, .apply = VC_CONF_REOPEN,
	  .off = CAM(device), .example = "/dev/video0" },
	{ .name = "format", .camera = 1, .type = VC_CONF_T_OTHER, .apply = VC_CONF_REOPEN,
	  .example = "YUYV", .off = CAM(mode.fourcc), .size = sizeof(uint32_t),
	  OTHER(p_format, pr_format) },
	{ .name = "width", .camera = 1, .type = VC_CONF_T_INT, .apply = VC_CONF_REOPEN,
	  .off = CAM_INT(mode.width), .lo = 1, .hi = 16384, .range = "an integer 1-16384",
	  .example = "1280" },
	{ .name = "height", .camera = 1, .type = VC_CONF_T_INT, .apply = VC_CONF_REOPEN,
	  .off = CAM_INT(mode.height), .lo = 1, .hi = 16384, .range = "an integer 1-16384",
	  .example = "720" },
	{ .name = "fps", .camera = 1, .type = VC_CONF_T_OTHER, .apply = VC_CONF_REOPEN,
	  .example = "30000/1001", .off = CAM(mode.ival), .size = sizeof(struct vc_fract),
	  OTHER(p_fps, pr_fps) },
	{ .name = "input", .camera = 1, .type = VC_CONF_T_INT, .apply = VC_CONF_REOPEN,
	  .off = CAM_INT(input), .lo = 0, .hi = 255, .unset = -1, .def = -1,
	  .range = "an input index 0-255", .example = "1" },
	{ .name = "std", .camera = 1, .type = VC_CONF_T_OTHER, .apply = VC_CONF_REOPEN,
	  .example = "PAL", .off = CAM(std), .size = sizeof(uint64_t), OTHER(p_std, pr_std) },
	{ .name = "dv_timings", .camera = 1, .type = VC_CONF_T_OTHER, .apply = VC_CONF_REOPEN,
	  .example = "1280x720p60", .off = CAM(dv), .size = sizeof(struct vc_conf_dv),
	  OTHER(p_dv, pr_dv) },
	{ .name = "buffers", .camera = 1, .type = VC_CONF_T_INT, .apply = VC_CONF_REOPEN,
	  .off = CAM_INT(buffers), .lo = 2, .hi = 32, .def = VC_CONF_DEF_BUFFERS,
	  .range = "an integer 2-32", .example = "6" },
	{ .name = "idle_stop_ms", .camera = 1, .type = VC_CONF_T_INT, .apply = VC_CONF_REOPEN,
	  .off = CAM_INT(idle_stop_ms), .lo = 0, .hi = 86400000, .unset = -2,
	  .def = VC_CONF_DEF_IDLE_STOP_MS, .word = "never", .word_value = -1,
	  .range = "'never' or milliseconds 0-86400000", .example = "never" },
	{ .name = "idle_close", .camera = 1, .type = VC_CONF_T_ENUM, .apply = VC_CONF_REOPEN,
	  .off = CAM_INT(idle_close), .names = idle_closes,
	  .range = "usb, never or always", .example = "never" },
	{ .name = "stall_timeout_ms", .camera = 1, .type = VC_CONF_T_INT, .apply = VC_CONF_REOPEN,
	  .off = CAM_INT(stall_timeout_ms), .lo = 100, .hi = 600000,
	  .def = VC_CONF_DEF_STALL_TIMEOUT_MS, .range = "milliseconds 100-600000", .example = "2000" },
	/* what a client gets when its URL leaves it out (the serving layer
	 * applies them; a change replaces the camera in place) */
	{ .name = "quality", .camera = 1, .type = VC_CONF_T_INT, .apply = VC_CONF_REOPEN,
	  .off = CAM_INT(quality), .lo = 1, .hi = 100, .range = "a JPEG quality 1-100",
	  .example = "90" },
	{ .name = "rotate", .camera = 1, .type = VC_CONF_T_INT, .apply = VC_CONF_REOPEN,
	  .off = CAM_INT(rotate), .lo = 0, .hi = 270, .step = 90, .range = "0, 90, 180 or 270",
	  .example = "90" },
	{ .name = "flip", .camera = 1, .type = VC_CONF_T_ENUM, .apply = VC_CONF_REOPEN,
	  .off = CAM_INT(flip), .names = flips, .range = "none, h, v or hv", .example = "hv" },
	{ .name = "placeholder", .camera = 1, .type = VC_CONF_T_ENUM, .apply = VC_CONF_REOPEN,
	  .off = CAM_INT(placeholder), .names = yes_no, .range = "yes or no", .example = "yes" },
	/* which JPEG and H.264 encoders the camera uses (common/m2m.h vc_m2m_pick_role,
	 * server/stream/hwenc.c) */
	{ .name = "encoder", .camera = 1, .type = VC_CONF_T_OTHER, .apply = VC_CONF_REOPEN,
	  .example = "/dev/video31", OTHER(p_encoder, pr_encoder) },
	{ .name = "control", .camera = 1, .type = VC_CONF_T_OTHER, .apply = VC_CONF_LIVE,
	  .repeatable = 1, .example = "brightness=10", OTHER(p_control, pr_control) },
};
const size_t vc_conf_n_cam_keys = sizeof(vc_conf_cam_keys) / sizeof(vc_conf_cam_keys[0]);
