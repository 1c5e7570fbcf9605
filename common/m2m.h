/* Memory-to-memory (M2M) V4L2 devices classified by what their queues offer:
 * a node whose OUTPUT queue (what it takes) holds raw formats and whose
 * CAPTURE queue (what it gives) holds JPEG is a JPEG encoder, whatever its
 * path or driver name. Plain data in, roles out: no device I/O here (the scan
 * is server/capture/m2m_discover.c), so the rules are unit-tested with fake
 * nodes. Whether a fourcc is raw or compressed comes from the format table
 * (common/fmt.h) and the driver's V4L2_FMT_FLAG_COMPRESSED; which codec a
 * compressed fourcc carries comes from one small table in m2m.c. */
#ifndef VC_M2M_H
#define VC_M2M_H

#include <stddef.h>
#include <stdint.h>

/* vc_m2m_node.roles: a node may play several (raw in, raw and JPEG out). */
enum {
	VC_M2M_JPEG_ENC = 1 << 0,  /* raw in, JPEG/MJPEG out */
	VC_M2M_H264_ENC = 1 << 1,  /* raw in, H.264 out */
	VC_M2M_VIDEO_ENC = 1 << 2, /* raw in, another compressed format out (FWHT, HEVC, VP8...) */
	VC_M2M_DECODER = 1 << 3,   /* compressed in, raw out */
	VC_M2M_CONVERTER = 1 << 4, /* raw in, raw out: colour conversion, scaling */
	VC_M2M_ROLE_COUNT = 5,
};

#define VC_M2M_MAX_FMTS 64

struct vc_m2m_fmt {
	uint32_t fourcc;
	uint32_t flags; /* V4L2_FMT_FLAG_* from VIDIOC_ENUM_FMT */
};

struct vc_m2m_node {
	char path[64];       /* "/dev/video11" */
	char driver[16], card[32], bus[32];
	uint32_t device_caps; /* device_caps when the driver reports them, else capabilities */
	int mplane;          /* multi-planar API (V4L2_CAP_VIDEO_M2M_MPLANE only) */
	size_t n_out, n_cap; /* formats of the OUTPUT (in) and CAPTURE (out) queues */
	struct vc_m2m_fmt out[VC_M2M_MAX_FMTS], cap[VC_M2M_MAX_FMTS];
	unsigned roles;      /* VC_M2M_* bits, from vc_m2m_classify() */
};

/* Roles of a node from its formats (device_caps must say M2M, else 0).
 * Unknown fourccs the driver does not flag compressed count as neither raw
 * nor compressed: vcapd could not feed or read them. */
unsigned vc_m2m_classify(const struct vc_m2m_node *n);

/* Name of role bit i (0 .. VC_M2M_ROLE_COUNT-1): "jpeg-encoder",
 * "h264-encoder", "video-encoder", "decoder", "converter"; NULL past the end. */
const char *vc_m2m_role_name(unsigned i);

/* 1 when the node's OUTPUT queue takes fourcc. */
int vc_m2m_takes(const struct vc_m2m_node *n, uint32_t fourcc);

/* The JPEG encoder a camera would use. setting is the camera's "encoder"
 * key: NULL or "" or "auto" = the first JPEG encoder whose OUTPUT queue takes
 * the camera's fourcc (any JPEG encoder when fourcc is 0); "cpu" = none; a
 * path = that node if it is a JPEG encoder. Returns the index in nodes, or -1
 * for the CPU, with *why (static text) saying why when -1. */
int vc_m2m_pick(const struct vc_m2m_node *nodes, size_t n, const char *setting,
		uint32_t fourcc, const char **why);

/* The same for the encoder of another role bit (VC_M2M_JPEG_ENC or
 * VC_M2M_H264_ENC): the H.264 encoder an H.264 output uses under the same
 * setting. vc_m2m_pick is this with VC_M2M_JPEG_ENC. */
int vc_m2m_pick_role(const struct vc_m2m_node *nodes, size_t n, const char *setting,
		     uint32_t fourcc, unsigned role, const char **why);

#endif
