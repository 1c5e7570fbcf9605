/* What only a V4L2 source has, beyond the ops of server/capture/source.h: device
 * identity, TV standards and DV timings. Every function takes a source
 * opened with vc_src_v4l2 and answers -EINVAL for any other source.
 * Loop thread only, like the ops. */
#ifndef VC_V4L2SRC_H
#define VC_V4L2SRC_H

#include <linux/videodev2.h>
#include <stddef.h>
#include <stdint.h>

#include "server/capture/source.h"

struct vc_v4l2_info {
	char driver[16], card[32], bus[32]; /* QUERYCAP strings */
	uint32_t device_caps;               /* V4L2_CAP_* of this node */
	int mplane;                         /* streams through the multi-planar API */
};

int vc_v4l2_info(struct vc_src *s, struct vc_v4l2_info *out);

/* Copies a V4L2 name field (a fixed __u8[N], NUL-terminated only when
 * shorter than N) into dst of n bytes: cut to fit, always terminated. */
void vc_v4l2_name(char *dst, size_t n, const void *src, size_t srcn);

/* An analog TV standard (ENUMSTD). */
struct vc_v4l2_std {
	uint64_t id;                 /* v4l2_std_id bits */
	char name[24];               /* "NTSC-M", "PAL-BG" ... */
	struct vc_fract frameperiod; /* 1001/30000 for NTSC */
	uint32_t framelines;         /* 525 / 625 */
};

/* Standards of the current input; -EINVAL past the end (or none: a DV or
 * camera input). */
int vc_v4l2_std_enum(struct vc_src *s, uint32_t index, struct vc_v4l2_std *out);
int vc_v4l2_std_get(struct vc_src *s, uint64_t *std);
/* S_STD; only while stopped (the frame size follows the standard: re-read
 * caps and format after). */
int vc_v4l2_std_set(struct vc_src *s, uint64_t std);

/* DV timings of an HDMI-like input, decoded for printing; raw holds what the
 * driver gave, for vc_v4l2_dv_set(). */
struct vc_v4l2_dv {
	uint32_t width, height;
	int interlaced;
	uint64_t pixelclock;    /* Hz */
	uint32_t fps_milli;     /* frames per 1000 s: 60000 = 60 fps, 59940 = 59.94 */
	struct v4l2_dv_timings raw;
};

/* ENUM_DV_TIMINGS of the current input; -EINVAL past the end / no DV. */
int vc_v4l2_dv_enum(struct vc_src *s, uint32_t index, struct vc_v4l2_dv *out);
/* G_DV_TIMINGS. */
int vc_v4l2_dv_get(struct vc_src *s, struct vc_v4l2_dv *out);
/* QUERY_DV_TIMINGS: what the input receives now. -ENOLINK no signal,
 * -ENOLCK unstable, -ERANGE out of range. */
int vc_v4l2_dv_query(struct vc_src *s, struct vc_v4l2_dv *out);
/* S_DV_TIMINGS with dv->raw; only while stopped. */
int vc_v4l2_dv_set(struct vc_src *s, const struct vc_v4l2_dv *dv);

/* For a camera (server/capture/capture.h) on a V4L2 device: the TV standard or the
 * DV timings of input `input`, set now (when that input is the current one)
 * and again before streaming each time the device is reopened (unplug and
 * replug, driver reload, restart after an error). A later choice of the same
 * kind replaces the earlier one. Chosen DV timings win over the ones the
 * input detects. 0 or -errno as vc_cam_reconfigure_keep(). */
struct vc_cam;
#define VC_V4L2_ANY_INPUT UINT32_MAX /* whichever input has standards / DV timings */
int vc_v4l2_cam_std(struct vc_cam *cam, uint32_t input, uint64_t std);
int vc_v4l2_cam_dv(struct vc_cam *cam, uint32_t input, const struct vc_v4l2_dv *dv);

/* The std and dv_timings lines of a [camera] section (common/conf.h) for
 * cam, kept like the two above on the section's input (any input when it
 * has none); dv_timings are looked up by size, scan and rate on each open.
 * Errors are logged; 0 or the first -errno. */
struct vc_conf_cam;
int vc_v4l2_cam_conf(struct vc_cam *cam, const struct vc_conf_cam *k);

/* The current input's offered DV timings of want's size and scan nearest in
 * rate, within 1 fps (60 picks 60.00 over 59.94): 0, or -ENOENT. */
struct vc_conf_dv;
int vc_v4l2_dv_find(struct vc_src *src, const struct vc_conf_dv *want, struct vc_v4l2_dv *out);

/* JSON for /api/cams. One standard (current: G_STD is exactly its id) or
 * one DV timings as an object into dst of n bytes; snprintf's answer, or
 * -ENOMEM. */
int vc_v4l2_std_json(char *dst, size_t n, const struct vc_v4l2_std *s, int current);
int vc_v4l2_dv_json(char *dst, size_t n, const struct vc_v4l2_dv *dv);
/* Members "card"/"driver"/"bus" (vc_v4l2_info_write), "tv_std":{current, standards[]} (when the current input has
 * standards) and "dv_timings":{current, detected, offered[] (at most 64),
 * offered_truncated} (when it has DV timings), written into the object j
 * has open. Nothing for a NULL or non-V4L2 source. */
struct vc_json;
void vc_v4l2_json(struct vc_src *src, struct vc_json *j);
/* The device's identity as members "card", "driver", "bus" (QUERYCAP) into
 * the object j has open; vc_v4l2_json writes them first. The web page titles
 * a camera by its card name. */
void vc_v4l2_info_write(struct vc_json *j, const struct vc_v4l2_info *in);

#endif
