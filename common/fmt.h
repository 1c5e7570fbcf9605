/* The pixel-format table: one const row per V4L2 fourcc holding every fact
 * about the format as data. Geometry, converter choice, "sendable as-is" and
 * JPEG input colour space are all computed from the row; no code anywhere
 * switches on a fourcc or infers meaning from a name string. */
#ifndef VC_FMT_H
#define VC_FMT_H

#include <stddef.h>
#include <stdint.h>

enum vc_fmt_family {
	VC_FAM_YUV = 1,
	VC_FAM_RGB,
	VC_FAM_BAYER,
	VC_FAM_GREY,
	VC_FAM_COMPRESSED,
};

/* Memory layout class: converters are picked by (source layout, destination
 * layout), never per format pair. */
enum vc_fmt_layout {
	VC_LAYOUT_PACKED_YUV = 1, /* YUYV UYVY YVYU VYUY Y41P AYUV...: byte offsets in a pixel group */
	VC_LAYOUT_PLANAR_YUV,     /* YU12 YV12 422P YUV9 YVU9 444P, and the ...M variants */
	VC_LAYOUT_SEMIPLANAR,     /* NV12 NV21 NV16 NV61 NV24 NV42, and the ...M variants */
	VC_LAYOUT_PACKED_RGB,     /* any bit-field RGB in a 1..4-byte word */
	VC_LAYOUT_GREY,           /* GREY Y10 Y12 Y16 Y16_BE */
	VC_LAYOUT_BAYER,          /* 8-bit, 16-bit containers, MIPI-packed */
	VC_LAYOUT_COMPRESSED,     /* JPEG MJPEG */
};

enum vc_cfa {
	VC_CFA_NONE = 0,
	VC_CFA_BGGR, /* first line B G B G, second G R G R */
	VC_CFA_GBRG,
	VC_CFA_GRBG,
	VC_CFA_RGGB,
};

/* How samples deeper than 8 bits sit in memory. */
enum vc_packing {
	VC_PACK_NONE = 0, /* one sample per byte, or bit fields (packed RGB) */
	VC_PACK_16,       /* one sample in the low bits of a 16-bit word (byte order: big_endian) */
	VC_PACK_MIPI10,   /* 4 pixels in 5 bytes: 4 high bytes then one byte of 4x2 low bits */
	VC_PACK_MIPI12,   /* 2 pixels in 3 bytes: 2 high bytes then one byte of 2x4 low bits */
};

#define VC_NONE 0xff /* "no such byte offset" in the packed-YUV offsets */

struct vc_bits {
	uint8_t shift; /* bit position of the field's lowest bit in the word */
	uint8_t depth; /* width in bits; 0 = absent */
};

struct vc_fmt {
	uint32_t fourcc;
	const char *name; /* V4L2 macro name without V4L2_PIX_FMT_: "YUYV", "RGB24", "NV12M" */
	const char *desc; /* human text, e.g. "YUV 4:2:2 packed, Y0 Cb Y1 Cr" */
	uint8_t family;   /* enum vc_fmt_family */
	uint8_t layout;   /* enum vc_fmt_layout */
	uint8_t mem_planes;   /* separate buffers per frame: 1, or 2/3 for the ...M formats */
	uint8_t color_planes; /* 1 packed, 2 semi-planar, 3 planar */
	uint8_t log2_chroma_w; /* chroma subsampling: 4:2:0 = 1,1; 4:2:2 = 1,0; */
	uint8_t log2_chroma_h; /* 4:1:1 = 2,0; 4:1:0 = 2,2; 4:4:4 = 0,0 */
	uint8_t group_px;      /* pixels per group on plane 0 (YUYV 2, Y41P 8, MIPI10 4, else 1) */
	/* bytes per group per colour plane. Chroma planes count one chroma
	 * sample position as their group: 1 for planar, 2 (Cb+Cr) for semi-planar. */
	uint8_t group_bytes[3];
	uint8_t depth;       /* significant bits per colour sample (8, 10, 12, 16); 0 for compressed */
	uint8_t swap_uv;     /* planar/semi-planar: Cr before Cb (YV12, NV21, ...) */
	uint8_t big_endian;  /* multi-byte words are big-endian (RGB555X, Y16_BE) */
	uint8_t cfa;         /* enum vc_cfa, Bayer rows only */
	uint8_t packing;     /* enum vc_packing */
	/* Packed YUV: byte offsets of each sample inside a group, VC_NONE when absent. */
	uint8_t y_off[8], u_off[2], v_off[2], a_off;
	/* Packed RGB: bit fields inside the group_bytes[0]-byte word (little-endian
	 * unless big_endian). a.depth > 0 means alpha or padding bits. */
	struct vc_bits r, g, b, a;
	uint8_t has_alpha;        /* a holds real alpha, not padding */
	uint32_t libyuv_fourcc;   /* libyuv FOURCC_* naming the same layout, 0 if none */
};

/* Geometry of one frame, from a row plus width/height (+ driver stride). */
struct vc_plane_geom {
	uint32_t stride; /* bytes per line */
	uint32_t lines;  /* lines in this plane */
	size_t offset;   /* offset from the start of its memory plane */
	size_t size;     /* stride * lines */
	uint8_t mem;     /* which memory plane holds it */
};

struct vc_geom {
	uint32_t width, height;
	uint8_t color_planes, mem_planes;
	struct vc_plane_geom plane[3];
	size_t mem_size[3]; /* bytes per memory plane (sizeimage of each) */
	size_t sizeimage;   /* sum of mem_size */
};

/* Number of rows and row i (NULL when out of range); for tests and the API. */
size_t vc_fmt_count(void);
const struct vc_fmt *vc_fmt_at(size_t i);

/* Row for a fourcc; NULL when the table does not know it. */
const struct vc_fmt *vc_fmt_by_fourcc(uint32_t fourcc);

/* Row for a V4L2 name ("YUYV", "RGB24", "MJPEG") or fourcc text ("RGB3",
 * "YU12", "MJPG", "Y10 " or "Y10"), case-insensitive; NULL when unknown. */
const struct vc_fmt *vc_fmt_find(const char *name);

/* Fourcc as printable text ("YUYV", "Y16 -BE"); buf of 16 bytes; returns buf. */
const char *vc_fourcc_str(uint32_t fourcc, char buf[16]);

/* Fills *g for width x height. bytesperline is the driver's stride of plane 0
 * (0 = the minimum); a larger one is honoured and the other planes' strides
 * follow V4L2's rules (chroma stride scales with the luma stride). Compressed
 * formats get sizeimage = a worst-case bound. Returns 0, or -EINVAL for zero or
 * absurd sizes (> 16384 per side) or a stride below the minimum. */
int vc_fmt_geometry(const struct vc_fmt *f, uint32_t width, uint32_t height,
		    uint32_t bytesperline, struct vc_geom *g);

/* Minimum bytes per line of plane 0. */
uint32_t vc_fmt_min_stride(const struct vc_fmt *f, uint32_t width);

/* Whether frames of this row can be sent to a client byte for byte (raw or
 * compressed), i.e. it is a format a client may ask for. */
int vc_fmt_is_raw(const struct vc_fmt *f);

#endif
