/* The pixel-format table and everything computed from it: lookup by fourcc,
 * V4L2 name or fourcc text, and frame geometry (strides, plane sizes,
 * sizeimage) following V4L2's rules. One const row per fourcc; a fact about a
 * format lives in its row, never in code that tests which format it is. */
#include "common/fmt.h"

#include <errno.h>
#include <libyuv/video_common.h>
#include <linux/videodev2.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define N VC_NONE
#define MAX_DIM 16384u

/* Compressed frames have no geometry; their buffer bound is 6 bytes per pixel
 * of the 16-aligned picture (TurboJPEG's tjBufSize() worst case: 4:4:4, all
 * coefficients escaped) plus 64 KiB for headers, tables and APPn markers. */
#define JPEG_BYTES_PER_PX 6u
#define JPEG_HEADROOM 65536u

/* Everything that is not a packed-YUV row has no byte offsets. */
#define NO_OFFS                                                               \
	.y_off = { N, N, N, N, N, N, N, N }, .u_off = { N, N }, .v_off = { N, N }, .a_off = N

#define B(shift, depth) { shift, depth }

/* Packed RGB: one pixel in a little-endian (or big-endian when be) word of
 * `bytes` bytes; r/g/b/a are {shift, depth} bit fields of that word. */
#define RGB(fcc, nm, ds, bytes, be, dp, r_, g_, b_, a_, alpha, yuv)           \
	.fourcc = fcc, .name = nm, .desc = ds, .family = VC_FAM_RGB,          \
	.layout = VC_LAYOUT_PACKED_RGB, .mem_planes = 1, .color_planes = 1,   \
	.group_px = 1, .group_bytes = { bytes, 0, 0 }, .depth = dp,           \
	.big_endian = be, .r = r_, .g = g_, .b = b_, .a = a_,                 \
	.has_alpha = alpha, .libyuv_fourcc = yuv, NO_OFFS

/* Packed YUV: offsets are given beside each row. */
#define PYUV(fcc, nm, ds, px, bytes, lw, alpha, yuv)                          \
	.fourcc = fcc, .name = nm, .desc = ds, .family = VC_FAM_YUV,          \
	.layout = VC_LAYOUT_PACKED_YUV, .mem_planes = 1, .color_planes = 1,   \
	.log2_chroma_w = lw, .group_px = px, .group_bytes = { bytes, 0, 0 },  \
	.depth = 8, .has_alpha = alpha, .libyuv_fourcc = yuv

/* Planar Y, Cb, Cr (Cr first when swap): one byte per sample per plane. */
#define PLANAR(fcc, nm, ds, mem, lw, lh, swap, yuv)                           \
	.fourcc = fcc, .name = nm, .desc = ds, .family = VC_FAM_YUV,          \
	.layout = VC_LAYOUT_PLANAR_YUV, .mem_planes = mem, .color_planes = 3, \
	.log2_chroma_w = lw, .log2_chroma_h = lh, .group_px = 1,              \
	.group_bytes = { 1, 1, 1 }, .depth = 8, .swap_uv = swap,              \
	.libyuv_fourcc = yuv, NO_OFFS

/* Y plane, then one plane of interleaved CbCr (CrCb when swap) pairs. */
#define SEMI(fcc, nm, ds, mem, lw, lh, swap, yuv)                             \
	.fourcc = fcc, .name = nm, .desc = ds, .family = VC_FAM_YUV,          \
	.layout = VC_LAYOUT_SEMIPLANAR, .mem_planes = mem, .color_planes = 2, \
	.log2_chroma_w = lw, .log2_chroma_h = lh, .group_px = 1,              \
	.group_bytes = { 1, 2, 0 }, .depth = 8, .swap_uv = swap,              \
	.libyuv_fourcc = yuv, NO_OFFS

#define GREY(fcc, nm, ds, px, bytes, dp, pack, be, yuv)                       \
	.fourcc = fcc, .name = nm, .desc = ds, .family = VC_FAM_GREY,         \
	.layout = VC_LAYOUT_GREY, .mem_planes = 1, .color_planes = 1,         \
	.group_px = px, .group_bytes = { bytes, 0, 0 }, .depth = dp,          \
	.packing = pack, .big_endian = be, .libyuv_fourcc = yuv, NO_OFFS

/* Raw Bayer; libyuv dropped its Bayer readers, so never a libyuv fourcc. */
#define BAYER(fcc, nm, ds, px, bytes, dp, pack, order)                        \
	.fourcc = fcc, .name = nm, .desc = ds, .family = VC_FAM_BAYER,        \
	.layout = VC_LAYOUT_BAYER, .mem_planes = 1, .color_planes = 1,        \
	.group_px = px, .group_bytes = { bytes, 0, 0 }, .depth = dp,          \
	.packing = pack, .cfa = order, NO_OFFS
/* Bayer rows by packing: each packing's group (pixels, bytes, depth) stated
 * once, so the four CFA orders of a packing cannot disagree. */
#define BAYER8(fcc, nm, ds, order) BAYER(fcc, nm, ds, 1, 1, 8, VC_PACK_NONE, order)
/* dp significant bits in a 16-bit little-endian word */
#define BAYER16(fcc, nm, ds, dp, order) BAYER(fcc, nm, ds, 1, 2, dp, VC_PACK_16, order)
/* MIPI packed (bit layouts beside their rows) */
#define BAYER10P(fcc, nm, ds, order) BAYER(fcc, nm, ds, 4, 5, 10, VC_PACK_MIPI10, order)
#define BAYER12P(fcc, nm, ds, order) BAYER(fcc, nm, ds, 2, 3, 12, VC_PACK_MIPI12, order)

#define COMPRESSED(fcc, nm, ds, yuv)                                          \
	.fourcc = fcc, .name = nm, .desc = ds, .family = VC_FAM_COMPRESSED,   \
	.layout = VC_LAYOUT_COMPRESSED, .mem_planes = 1, .color_planes = 1,   \
	.libyuv_fourcc = yuv, NO_OFFS

/* libyuv names 32-bit layouts after a little-endian word read from its most
 * significant byte: its "ARGB" is memory B,G,R,A (V4L2 ABGR32). */
static const struct vc_fmt table[] = {
	/* ---- packed RGB; bits of the word, most significant first ---- */
	{ RGB(V4L2_PIX_FMT_RGB332, "RGB332", "RGB 3:3:2", 1, 0, 3, /* rrrgggbb */
	      B(5, 3), B(2, 3), B(0, 2), B(0, 0), 0, 0) },
	{ RGB(V4L2_PIX_FMT_RGB444, "RGB444", "RGB 4:4:4, 16-bit LE, 4 bits padding", 2, 0, 4,
	      /* xxxxrrrr ggggbbbb */ B(8, 4), B(4, 4), B(0, 4), B(12, 4), 0, FOURCC_R444) },
	{ RGB(V4L2_PIX_FMT_XRGB444, "XRGB444", "XRGB 4:4:4:4, 16-bit LE", 2, 0, 4,
	      /* xxxxrrrr ggggbbbb */ B(8, 4), B(4, 4), B(0, 4), B(12, 4), 0, FOURCC_R444) },
	{ RGB(V4L2_PIX_FMT_ARGB444, "ARGB444", "ARGB 4:4:4:4, 16-bit LE", 2, 0, 4,
	      /* aaaarrrr ggggbbbb */ B(8, 4), B(4, 4), B(0, 4), B(12, 4), 1, FOURCC_R444) },
	{ RGB(V4L2_PIX_FMT_RGBX444, "RGBX444", "RGBX 4:4:4:4, 16-bit LE", 2, 0, 4,
	      /* rrrrgggg bbbbxxxx */ B(12, 4), B(8, 4), B(4, 4), B(0, 4), 0, 0) },
	{ RGB(V4L2_PIX_FMT_RGBA444, "RGBA444", "RGBA 4:4:4:4, 16-bit LE", 2, 0, 4,
	      /* rrrrgggg bbbbaaaa */ B(12, 4), B(8, 4), B(4, 4), B(0, 4), 1, 0) },
	{ RGB(V4L2_PIX_FMT_XBGR444, "XBGR444", "XBGR 4:4:4:4, 16-bit LE", 2, 0, 4,
	      /* xxxxbbbb ggggrrrr */ B(0, 4), B(4, 4), B(8, 4), B(12, 4), 0, 0) },
	{ RGB(V4L2_PIX_FMT_ABGR444, "ABGR444", "ABGR 4:4:4:4, 16-bit LE", 2, 0, 4,
	      /* aaaabbbb ggggrrrr */ B(0, 4), B(4, 4), B(8, 4), B(12, 4), 1, 0) },
	{ RGB(V4L2_PIX_FMT_BGRX444, "BGRX444", "BGRX 4:4:4:4, 16-bit LE", 2, 0, 4,
	      /* bbbbgggg rrrrxxxx */ B(4, 4), B(8, 4), B(12, 4), B(0, 4), 0, 0) },
	{ RGB(V4L2_PIX_FMT_BGRA444, "BGRA444", "BGRA 4:4:4:4, 16-bit LE", 2, 0, 4,
	      /* bbbbgggg rrrraaaa */ B(4, 4), B(8, 4), B(12, 4), B(0, 4), 1, 0) },
	{ RGB(V4L2_PIX_FMT_RGB555, "RGB555", "RGB 5:5:5, 16-bit LE, 1 bit padding", 2, 0, 5,
	      /* xrrrrrgg gggbbbbb */ B(10, 5), B(5, 5), B(0, 5), B(15, 1), 0, FOURCC_RGBO) },
	{ RGB(V4L2_PIX_FMT_XRGB555, "XRGB555", "XRGB 1:5:5:5, 16-bit LE", 2, 0, 5,
	      /* xrrrrrgg gggbbbbb */ B(10, 5), B(5, 5), B(0, 5), B(15, 1), 0, FOURCC_RGBO) },
	{ RGB(V4L2_PIX_FMT_ARGB555, "ARGB555", "ARGB 1:5:5:5, 16-bit LE", 2, 0, 5,
	      /* arrrrrgg gggbbbbb */ B(10, 5), B(5, 5), B(0, 5), B(15, 1), 1, FOURCC_RGBO) },
	{ RGB(V4L2_PIX_FMT_RGBX555, "RGBX555", "RGBX 5:5:5:1, 16-bit LE", 2, 0, 5,
	      /* rrrrrggg ggbbbbbx */ B(11, 5), B(6, 5), B(1, 5), B(0, 1), 0, 0) },
	{ RGB(V4L2_PIX_FMT_RGBA555, "RGBA555", "RGBA 5:5:5:1, 16-bit LE", 2, 0, 5,
	      /* rrrrrggg ggbbbbba */ B(11, 5), B(6, 5), B(1, 5), B(0, 1), 1, 0) },
	{ RGB(V4L2_PIX_FMT_XBGR555, "XBGR555", "XBGR 1:5:5:5, 16-bit LE", 2, 0, 5,
	      /* xbbbbbgg gggrrrrr */ B(0, 5), B(5, 5), B(10, 5), B(15, 1), 0, 0) },
	{ RGB(V4L2_PIX_FMT_ABGR555, "ABGR555", "ABGR 1:5:5:5, 16-bit LE", 2, 0, 5,
	      /* abbbbbgg gggrrrrr */ B(0, 5), B(5, 5), B(10, 5), B(15, 1), 1, 0) },
	{ RGB(V4L2_PIX_FMT_BGRX555, "BGRX555", "BGRX 5:5:5:1, 16-bit LE", 2, 0, 5,
	      /* bbbbbggg ggrrrrrx */ B(1, 5), B(6, 5), B(11, 5), B(0, 1), 0, 0) },
	{ RGB(V4L2_PIX_FMT_BGRA555, "BGRA555", "BGRA 5:5:5:1, 16-bit LE", 2, 0, 5,
	      /* bbbbbggg ggrrrrra */ B(1, 5), B(6, 5), B(11, 5), B(0, 1), 1, 0) },
	{ RGB(V4L2_PIX_FMT_RGB565, "RGB565", "RGB 5:6:5, 16-bit LE", 2, 0, 6,
	      /* rrrrrggg gggbbbbb */ B(11, 5), B(5, 6), B(0, 5), B(0, 0), 0, FOURCC_RGBP) },
	{ RGB(V4L2_PIX_FMT_RGB555X, "RGB555X", "RGB 5:5:5, 16-bit BE, 1 bit padding", 2, 1, 5,
	      /* xrrrrrgg gggbbbbb */ B(10, 5), B(5, 5), B(0, 5), B(15, 1), 0, 0) },
	{ RGB(V4L2_PIX_FMT_XRGB555X, "XRGB555X", "XRGB 1:5:5:5, 16-bit BE", 2, 1, 5,
	      /* xrrrrrgg gggbbbbb */ B(10, 5), B(5, 5), B(0, 5), B(15, 1), 0, 0) },
	{ RGB(V4L2_PIX_FMT_ARGB555X, "ARGB555X", "ARGB 1:5:5:5, 16-bit BE", 2, 1, 5,
	      /* arrrrrgg gggbbbbb */ B(10, 5), B(5, 5), B(0, 5), B(15, 1), 1, 0) },
	{ RGB(V4L2_PIX_FMT_RGB565X, "RGB565X", "RGB 5:6:5, 16-bit BE", 2, 1, 6,
	      /* rrrrrggg gggbbbbb */ B(11, 5), B(5, 6), B(0, 5), B(0, 0), 0, 0) },
	/* 24/32-bit: memory order of the bytes in the description. */
	{ RGB(V4L2_PIX_FMT_BGR24, "BGR24", "B G R", 3, 0, 8,
	      B(16, 8), B(8, 8), B(0, 8), B(0, 0), 0, FOURCC_24BG) },
	{ RGB(V4L2_PIX_FMT_RGB24, "RGB24", "R G B", 3, 0, 8,
	      B(0, 8), B(8, 8), B(16, 8), B(0, 0), 0, FOURCC_RAW) },
	{ RGB(V4L2_PIX_FMT_BGR32, "BGR32", "B G R x (deprecated: alpha or padding)", 4, 0, 8,
	      B(16, 8), B(8, 8), B(0, 8), B(24, 8), 0, FOURCC_ARGB) },
	{ RGB(V4L2_PIX_FMT_ABGR32, "ABGR32", "B G R A", 4, 0, 8,
	      B(16, 8), B(8, 8), B(0, 8), B(24, 8), 1, FOURCC_ARGB) },
	{ RGB(V4L2_PIX_FMT_XBGR32, "XBGR32", "B G R x", 4, 0, 8,
	      B(16, 8), B(8, 8), B(0, 8), B(24, 8), 0, FOURCC_ARGB) },
	{ RGB(V4L2_PIX_FMT_RGB32, "RGB32", "x R G B (deprecated: alpha or padding)", 4, 0, 8,
	      B(8, 8), B(16, 8), B(24, 8), B(0, 8), 0, FOURCC_BGRA) },
	{ RGB(V4L2_PIX_FMT_ARGB32, "ARGB32", "A R G B", 4, 0, 8,
	      B(8, 8), B(16, 8), B(24, 8), B(0, 8), 1, FOURCC_BGRA) },
	{ RGB(V4L2_PIX_FMT_XRGB32, "XRGB32", "x R G B", 4, 0, 8,
	      B(8, 8), B(16, 8), B(24, 8), B(0, 8), 0, FOURCC_BGRA) },
	{ RGB(V4L2_PIX_FMT_RGBA32, "RGBA32", "R G B A", 4, 0, 8,
	      B(0, 8), B(8, 8), B(16, 8), B(24, 8), 1, FOURCC_ABGR) },
	{ RGB(V4L2_PIX_FMT_RGBX32, "RGBX32", "R G B x", 4, 0, 8,
	      B(0, 8), B(8, 8), B(16, 8), B(24, 8), 0, FOURCC_ABGR) },
	{ RGB(V4L2_PIX_FMT_BGRA32, "BGRA32", "A B G R", 4, 0, 8,
	      B(24, 8), B(16, 8), B(8, 8), B(0, 8), 1, FOURCC_RGBA) },
	{ RGB(V4L2_PIX_FMT_BGRX32, "BGRX32", "x B G R", 4, 0, 8,
	      B(24, 8), B(16, 8), B(8, 8), B(0, 8), 0, FOURCC_RGBA) },

	/* ---- packed YUV: byte offsets inside one group ---- */
	{ PYUV(V4L2_PIX_FMT_YUYV, "YUYV", "YUV 4:2:2 packed, Y0 Cb Y1 Cr", 2, 4, 1, 0, FOURCC_YUY2),
	  .y_off = { 0, 2, N, N, N, N, N, N }, .u_off = { 1, N }, .v_off = { 3, N }, .a_off = N },
	{ PYUV(V4L2_PIX_FMT_YVYU, "YVYU", "YUV 4:2:2 packed, Y0 Cr Y1 Cb", 2, 4, 1, 0, 0),
	  .y_off = { 0, 2, N, N, N, N, N, N }, .u_off = { 3, N }, .v_off = { 1, N }, .a_off = N },
	{ PYUV(V4L2_PIX_FMT_UYVY, "UYVY", "YUV 4:2:2 packed, Cb Y0 Cr Y1", 2, 4, 1, 0, FOURCC_UYVY),
	  .y_off = { 1, 3, N, N, N, N, N, N }, .u_off = { 0, N }, .v_off = { 2, N }, .a_off = N },
	{ PYUV(V4L2_PIX_FMT_VYUY, "VYUY", "YUV 4:2:2 packed, Cr Y0 Cb Y1", 2, 4, 1, 0, 0),
	  .y_off = { 1, 3, N, N, N, N, N, N }, .u_off = { 2, N }, .v_off = { 0, N }, .a_off = N },
	/* Cb0 Y0 Cr0 Y1 Cb4 Y2 Cr4 Y3 Y4 Y5 Y6 Y7 */
	{ PYUV(V4L2_PIX_FMT_Y41P, "Y41P", "YUV 4:1:1 packed, 8 pixels in 12 bytes", 8, 12, 2, 0, 0),
	  .y_off = { 1, 3, 5, 7, 8, 9, 10, 11 }, .u_off = { 0, 4 }, .v_off = { 2, 6 }, .a_off = N },
	{ PYUV(V4L2_PIX_FMT_YUV24, "YUV24", "YUV 4:4:4 packed, Y Cb Cr", 1, 3, 0, 0, 0),
	  .y_off = { 0, N, N, N, N, N, N, N }, .u_off = { 1, N }, .v_off = { 2, N }, .a_off = N },
	{ PYUV(V4L2_PIX_FMT_AYUV32, "AYUV32", "YUV 4:4:4 packed, A Y Cb Cr", 1, 4, 0, 1, 0),
	  .y_off = { 1, N, N, N, N, N, N, N }, .u_off = { 2, N }, .v_off = { 3, N }, .a_off = 0 },
	{ PYUV(V4L2_PIX_FMT_XYUV32, "XYUV32", "YUV 4:4:4 packed, x Y Cb Cr", 1, 4, 0, 0, 0),
	  .y_off = { 1, N, N, N, N, N, N, N }, .u_off = { 2, N }, .v_off = { 3, N }, .a_off = 0 },
	{ PYUV(V4L2_PIX_FMT_VUYA32, "VUYA32", "YUV 4:4:4 packed, Cr Cb Y A", 1, 4, 0, 1, 0),
	  .y_off = { 2, N, N, N, N, N, N, N }, .u_off = { 1, N }, .v_off = { 0, N }, .a_off = 3 },
	{ PYUV(V4L2_PIX_FMT_VUYX32, "VUYX32", "YUV 4:4:4 packed, Cr Cb Y x", 1, 4, 0, 0, 0),
	  .y_off = { 2, N, N, N, N, N, N, N }, .u_off = { 1, N }, .v_off = { 0, N }, .a_off = 3 },
	{ PYUV(V4L2_PIX_FMT_YUVA32, "YUVA32", "YUV 4:4:4 packed, Y Cb Cr A", 1, 4, 0, 1, 0),
	  .y_off = { 0, N, N, N, N, N, N, N }, .u_off = { 1, N }, .v_off = { 2, N }, .a_off = 3 },
	{ PYUV(V4L2_PIX_FMT_YUVX32, "YUVX32", "YUV 4:4:4 packed, Y Cb Cr x", 1, 4, 0, 0, 0),
	  .y_off = { 0, N, N, N, N, N, N, N }, .u_off = { 1, N }, .v_off = { 2, N }, .a_off = 3 },

	/* ---- planar YUV, one buffer: Y plane, then Cb, then Cr (or Cr, Cb) ---- */
	{ PLANAR(V4L2_PIX_FMT_YUV420, "YUV420", "YUV 4:2:0 planar, Y Cb Cr", 1, 1, 1, 0, FOURCC_I420) },
	{ PLANAR(V4L2_PIX_FMT_YVU420, "YVU420", "YUV 4:2:0 planar, Y Cr Cb", 1, 1, 1, 1, FOURCC_YV12) },
	{ PLANAR(V4L2_PIX_FMT_YUV422P, "YUV422P", "YUV 4:2:2 planar, Y Cb Cr", 1, 1, 0, 0, FOURCC_I422) },
	{ PLANAR(V4L2_PIX_FMT_YUV411P, "YUV411P", "YUV 4:1:1 planar, Y Cb Cr", 1, 2, 0, 0, 0) },
	{ PLANAR(V4L2_PIX_FMT_YUV410, "YUV410", "YUV 4:1:0 planar, Y Cb Cr", 1, 2, 2, 0, 0) },
	{ PLANAR(V4L2_PIX_FMT_YVU410, "YVU410", "YUV 4:1:0 planar, Y Cr Cb", 1, 2, 2, 1, 0) },
	/* ...M: one buffer per plane. libyuv's fourcc names the per-plane layout;
	 * the planes must be passed to it separately. */
	{ PLANAR(V4L2_PIX_FMT_YUV420M, "YUV420M", "YUV 4:2:0 planar, 3 buffers, Y Cb Cr", 3, 1, 1, 0,
		 FOURCC_I420) },
	{ PLANAR(V4L2_PIX_FMT_YVU420M, "YVU420M", "YUV 4:2:0 planar, 3 buffers, Y Cr Cb", 3, 1, 1, 1,
		 FOURCC_YV12) },
	{ PLANAR(V4L2_PIX_FMT_YUV422M, "YUV422M", "YUV 4:2:2 planar, 3 buffers, Y Cb Cr", 3, 1, 0, 0,
		 FOURCC_I422) },
	{ PLANAR(V4L2_PIX_FMT_YVU422M, "YVU422M", "YUV 4:2:2 planar, 3 buffers, Y Cr Cb", 3, 1, 0, 1,
		 FOURCC_YV16) },
	{ PLANAR(V4L2_PIX_FMT_YUV444M, "YUV444M", "YUV 4:4:4 planar, 3 buffers, Y Cb Cr", 3, 0, 0, 0,
		 FOURCC_I444) },
	{ PLANAR(V4L2_PIX_FMT_YVU444M, "YVU444M", "YUV 4:4:4 planar, 3 buffers, Y Cr Cb", 3, 0, 0, 1,
		 FOURCC_YV24) },

	/* ---- semi-planar: Y plane, then interleaved chroma pairs ---- */
	{ SEMI(V4L2_PIX_FMT_NV12, "NV12", "Y/CbCr 4:2:0", 1, 1, 1, 0, FOURCC_NV12) },
	{ SEMI(V4L2_PIX_FMT_NV21, "NV21", "Y/CrCb 4:2:0", 1, 1, 1, 1, FOURCC_NV21) },
	{ SEMI(V4L2_PIX_FMT_NV16, "NV16", "Y/CbCr 4:2:2", 1, 1, 0, 0, 0) },
	{ SEMI(V4L2_PIX_FMT_NV61, "NV61", "Y/CrCb 4:2:2", 1, 1, 0, 1, 0) },
	{ SEMI(V4L2_PIX_FMT_NV24, "NV24", "Y/CbCr 4:4:4", 1, 0, 0, 0, 0) },
	{ SEMI(V4L2_PIX_FMT_NV42, "NV42", "Y/CrCb 4:4:4", 1, 0, 0, 1, 0) },
	{ SEMI(V4L2_PIX_FMT_NV12M, "NV12M", "Y/CbCr 4:2:0, 2 buffers", 2, 1, 1, 0, FOURCC_NV12) },
	{ SEMI(V4L2_PIX_FMT_NV21M, "NV21M", "Y/CrCb 4:2:0, 2 buffers", 2, 1, 1, 1, FOURCC_NV21) },
	{ SEMI(V4L2_PIX_FMT_NV16M, "NV16M", "Y/CbCr 4:2:2, 2 buffers", 2, 1, 0, 0, 0) },
	{ SEMI(V4L2_PIX_FMT_NV61M, "NV61M", "Y/CrCb 4:2:2, 2 buffers", 2, 1, 0, 1, 0) },

	/* ---- greyscale ---- */
	{ GREY(V4L2_PIX_FMT_GREY, "GREY", "8-bit greyscale", 1, 1, 8, VC_PACK_NONE, 0, FOURCC_I400) },
	{ GREY(V4L2_PIX_FMT_Y10, "Y10", "10-bit greyscale in 16-bit LE", 1, 2, 10, VC_PACK_16, 0, 0) },
	{ GREY(V4L2_PIX_FMT_Y12, "Y12", "12-bit greyscale in 16-bit LE", 1, 2, 12, VC_PACK_16, 0, 0) },
	{ GREY(V4L2_PIX_FMT_Y14, "Y14", "14-bit greyscale in 16-bit LE", 1, 2, 14, VC_PACK_16, 0, 0) },
	{ GREY(V4L2_PIX_FMT_Y16, "Y16", "16-bit greyscale LE", 1, 2, 16, VC_PACK_16, 0, 0) },
	{ GREY(V4L2_PIX_FMT_Y16_BE, "Y16_BE", "16-bit greyscale BE", 1, 2, 16, VC_PACK_16, 1, 0) },
	{ GREY(V4L2_PIX_FMT_Y10P, "Y10P", "10-bit greyscale, MIPI packed", 4, 5, 10, VC_PACK_MIPI10, 0,
	       0) },

	/* ---- Bayer; the CFA order names the first two lines ---- */
	{ BAYER8(V4L2_PIX_FMT_SBGGR8, "SBGGR8", "Bayer BGGR 8-bit", VC_CFA_BGGR) },
	{ BAYER8(V4L2_PIX_FMT_SGBRG8, "SGBRG8", "Bayer GBRG 8-bit", VC_CFA_GBRG) },
	{ BAYER8(V4L2_PIX_FMT_SGRBG8, "SGRBG8", "Bayer GRBG 8-bit", VC_CFA_GRBG) },
	{ BAYER8(V4L2_PIX_FMT_SRGGB8, "SRGGB8", "Bayer RGGB 8-bit", VC_CFA_RGGB) },
	{ BAYER16(V4L2_PIX_FMT_SBGGR10, "SBGGR10", "Bayer BGGR 10-bit in 16-bit LE", 10, VC_CFA_BGGR) },
	{ BAYER16(V4L2_PIX_FMT_SGBRG10, "SGBRG10", "Bayer GBRG 10-bit in 16-bit LE", 10, VC_CFA_GBRG) },
	{ BAYER16(V4L2_PIX_FMT_SGRBG10, "SGRBG10", "Bayer GRBG 10-bit in 16-bit LE", 10, VC_CFA_GRBG) },
	{ BAYER16(V4L2_PIX_FMT_SRGGB10, "SRGGB10", "Bayer RGGB 10-bit in 16-bit LE", 10, VC_CFA_RGGB) },
	{ BAYER16(V4L2_PIX_FMT_SBGGR12, "SBGGR12", "Bayer BGGR 12-bit in 16-bit LE", 12, VC_CFA_BGGR) },
	{ BAYER16(V4L2_PIX_FMT_SGBRG12, "SGBRG12", "Bayer GBRG 12-bit in 16-bit LE", 12, VC_CFA_GBRG) },
	{ BAYER16(V4L2_PIX_FMT_SGRBG12, "SGRBG12", "Bayer GRBG 12-bit in 16-bit LE", 12, VC_CFA_GRBG) },
	{ BAYER16(V4L2_PIX_FMT_SRGGB12, "SRGGB12", "Bayer RGGB 12-bit in 16-bit LE", 12, VC_CFA_RGGB) },
	{ BAYER16(V4L2_PIX_FMT_SBGGR14, "SBGGR14", "Bayer BGGR 14-bit in 16-bit LE", 14, VC_CFA_BGGR) },
	{ BAYER16(V4L2_PIX_FMT_SGBRG14, "SGBRG14", "Bayer GBRG 14-bit in 16-bit LE", 14, VC_CFA_GBRG) },
	{ BAYER16(V4L2_PIX_FMT_SGRBG14, "SGRBG14", "Bayer GRBG 14-bit in 16-bit LE", 14, VC_CFA_GRBG) },
	{ BAYER16(V4L2_PIX_FMT_SRGGB14, "SRGGB14", "Bayer RGGB 14-bit in 16-bit LE", 14, VC_CFA_RGGB) },
	{ BAYER16(V4L2_PIX_FMT_SBGGR16, "SBGGR16", "Bayer BGGR 16-bit LE", 16, VC_CFA_BGGR) },
	{ BAYER16(V4L2_PIX_FMT_SGBRG16, "SGBRG16", "Bayer GBRG 16-bit LE", 16, VC_CFA_GBRG) },
	{ BAYER16(V4L2_PIX_FMT_SGRBG16, "SGRBG16", "Bayer GRBG 16-bit LE", 16, VC_CFA_GRBG) },
	{ BAYER16(V4L2_PIX_FMT_SRGGB16, "SRGGB16", "Bayer RGGB 16-bit LE", 16, VC_CFA_RGGB) },
	/* MIPI RAW10: P0[9:2] P1[9:2] P2[9:2] P3[9:2] P3[1:0]P2[1:0]P1[1:0]P0[1:0] */
	{ BAYER10P(V4L2_PIX_FMT_SBGGR10P, "SBGGR10P", "Bayer BGGR 10-bit MIPI packed", VC_CFA_BGGR) },
	{ BAYER10P(V4L2_PIX_FMT_SGBRG10P, "SGBRG10P", "Bayer GBRG 10-bit MIPI packed", VC_CFA_GBRG) },
	{ BAYER10P(V4L2_PIX_FMT_SGRBG10P, "SGRBG10P", "Bayer GRBG 10-bit MIPI packed", VC_CFA_GRBG) },
	{ BAYER10P(V4L2_PIX_FMT_SRGGB10P, "SRGGB10P", "Bayer RGGB 10-bit MIPI packed", VC_CFA_RGGB) },
	/* MIPI RAW12: P0[11:4] P1[11:4] P1[3:0]P0[3:0] */
	{ BAYER12P(V4L2_PIX_FMT_SBGGR12P, "SBGGR12P", "Bayer BGGR 12-bit MIPI packed", VC_CFA_BGGR) },
	{ BAYER12P(V4L2_PIX_FMT_SGBRG12P, "SGBRG12P", "Bayer GBRG 12-bit MIPI packed", VC_CFA_GBRG) },
	{ BAYER12P(V4L2_PIX_FMT_SGRBG12P, "SGRBG12P", "Bayer GRBG 12-bit MIPI packed", VC_CFA_GRBG) },
	{ BAYER12P(V4L2_PIX_FMT_SRGGB12P, "SRGGB12P", "Bayer RGGB 12-bit MIPI packed", VC_CFA_RGGB) },

	/* ---- compressed ---- */
	{ COMPRESSED(V4L2_PIX_FMT_MJPEG, "MJPEG", "Motion-JPEG", FOURCC_MJPG) },
	{ COMPRESSED(V4L2_PIX_FMT_JPEG, "JPEG", "JFIF JPEG", FOURCC_MJPG) },
};

#define TABLE_LEN (sizeof(table) / sizeof(table[0]))

size_t vc_fmt_count(void)
{
	return TABLE_LEN;
}

const struct vc_fmt *vc_fmt_at(size_t i)
{
	return i < TABLE_LEN ? &table[i] : NULL;
}

const struct vc_fmt *vc_fmt_by_fourcc(uint32_t fourcc)
{
	for (size_t i = 0; i < TABLE_LEN; i++)
		if (table[i].fourcc == fourcc)
			return &table[i];
	return NULL;
}

const char *vc_fourcc_str(uint32_t fourcc, char buf[16])
{
	for (int i = 0; i < 4; i++) {
		unsigned char c = (unsigned char)(fourcc >> (8 * i));
		if (i == 3)
			c &= 0x7f; /* bit 31 is V4L2's big-endian flag */
		buf[i] = c >= 0x20 && c < 0x7f ? (char)c : '.';
	}
	buf[4] = '\0';
	if (fourcc & (1u << 31))
		strcpy(buf + 4, "-BE");
	return buf;
}

/* Fourcc text ("YU12", "Y10", "Y10 ", "Y16 -BE") -> value; 0 when it cannot
 * be one. Short text is padded with spaces, as V4L2's own fourccs are. */
static uint32_t parse_fourcc(const char *s)
{
	size_t n = strlen(s);
	uint32_t be = 0;

	if (n > 4 && n <= 7 && strcasecmp(s + n - 3, "-BE") == 0) {
		be = 1u << 31;
		n -= 3;
	}
	if (n == 0 || n > 4)
		return 0;
	uint32_t v = 0;
	for (size_t i = 0; i < 4; i++)
		v |= (uint32_t)(unsigned char)(i < n ? s[i] : ' ') << (8 * i);
	return v | be;
}

static int same_fourcc_nocase(uint32_t a, uint32_t b)
{
	if ((a ^ b) & (1u << 31))
		return 0;
	for (int i = 0; i < 4; i++) {
		unsigned ca = (a >> (8 * i)) & 0x7f, cb = (b >> (8 * i)) & 0x7f;
		if (ca >= 'a' && ca <= 'z')
			ca -= 'a' - 'A';
		if (cb >= 'a' && cb <= 'z')
			cb -= 'a' - 'A';
		if (ca != cb)
			return 0;
	}
	return 1;
}

/* Names other tools use for rows of the table (GStreamer/ffmpeg/libcamera),
 * tried only after every name and fourcc of the table, so they never shadow
 * a row: a client typing format=I420 or yuv420p means YUV420. */
static const struct {
	const char *alias, *name;
} aliases[] = {
	{ "I420", "YUV420" },    { "yuv420p", "YUV420" }, { "yuv422p", "YUV422P" },
	{ "yuyv422", "YUYV" },   { "uyvy422", "UYVY" },   { "YUY2", "YUYV" },
	{ "gray", "GREY" },      { "GRAY8", "GREY" },     { "Y8", "GREY" },
};

/* Exact matches win over case-insensitive ones: SGBRG10P is "pGAA" and
 * SGRBG10P is "pgAA", so "pgAA" must not find the first row that merely
 * matches without case. Names are tried before fourcc text at each stage. */
const struct vc_fmt *vc_fmt_find(const char *name)
{
	if (!name || !*name)
		return NULL;
	uint32_t fcc = parse_fourcc(name);
	for (size_t i = 0; i < TABLE_LEN; i++)
		if (strcmp(table[i].name, name) == 0)
			return &table[i];
	for (size_t i = 0; fcc && i < TABLE_LEN; i++)
		if (table[i].fourcc == fcc)
			return &table[i];
	for (size_t i = 0; i < TABLE_LEN; i++)
		if (strcasecmp(table[i].name, name) == 0)
			return &table[i];
	for (size_t i = 0; fcc && i < TABLE_LEN; i++)
		if (same_fourcc_nocase(table[i].fourcc, fcc))
			return &table[i];
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strcasecmp(aliases[i].alias, name) == 0)
			return vc_fmt_find(aliases[i].name);
	return NULL;
}

static uint32_t div_up(uint32_t a, uint32_t b)
{
	return a / b + (a % b != 0);
}

/* Minimum stride in 64 bits: callers may pass any width. */
static uint64_t min_stride64(const struct vc_fmt *f, uint32_t width)
{
	if (!f || f->layout == VC_LAYOUT_COMPRESSED || f->group_bytes[0] == 0)
		return 0;
	uint32_t gp = f->group_px ? f->group_px : 1;
	return (uint64_t)div_up(width, gp) * f->group_bytes[0];
}

uint32_t vc_fmt_min_stride(const struct vc_fmt *f, uint32_t width)
{
	uint64_t s = min_stride64(f, width);
	return s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
}

/* V4L2: a chroma plane's stride follows the luma stride (YUV420 with
 * bytesperline 704 has chroma lines of 352 bytes). Count the luma stride in
 * samples, subsample it (rounding up, so odd widths keep their last chroma
 * sample), and give each chroma sample position its group_bytes. */
static uint32_t chroma_stride(const struct vc_fmt *f, uint32_t luma_stride, int p)
{
	uint32_t samples = div_up(luma_stride, f->group_bytes[0]);
	return div_up(samples, 1u << f->log2_chroma_w) * f->group_bytes[p];
}

int vc_fmt_geometry(const struct vc_fmt *f, uint32_t width, uint32_t height,
		    uint32_t bytesperline, struct vc_geom *g)
{
	if (!g)
		return -EINVAL;
	memset(g, 0, sizeof(*g));
	if (!f || width == 0 || height == 0 || width > MAX_DIM || height > MAX_DIM)
		return -EINVAL;
	g->width = width;
	g->height = height;
	g->mem_planes = 1;
	g->color_planes = 1;
	if (f->layout == VC_LAYOUT_COMPRESSED) {
		/* No stride: bytesperline is 0 for compressed formats. */
		uint64_t bound = (uint64_t)((width + 15) & ~15u) * ((height + 15) & ~15u) *
				 JPEG_BYTES_PER_PX + JPEG_HEADROOM;
		g->plane[0].lines = height;
		g->plane[0].size = (size_t)bound;
		g->mem_size[0] = (size_t)bound;
		g->sizeimage = (size_t)bound;
		return 0;
	}
	uint64_t min = min_stride64(f, width);
	/* a malformed row (the unit test keeps the table clean), or a stride
	 * below what a line needs: refused, *g left all zero */
	if (f->color_planes < 1 || f->color_planes > 3 || f->group_bytes[0] == 0 ||
	    (f->mem_planes != 1 && f->mem_planes != f->color_planes) ||
	    (bytesperline != 0 && bytesperline < min)) {
		memset(g, 0, sizeof(*g));
		return -EINVAL;
	}
	if (bytesperline == 0)
		bytesperline = (uint32_t)min; /* <= 16384 * 12 / 8 */

	uint64_t mem[3] = { 0, 0, 0 }, total = 0;
	for (int p = 0; p < f->color_planes; p++) {
		struct vc_plane_geom *pg = &g->plane[p];
		uint32_t stride = p == 0 ? bytesperline : chroma_stride(f, bytesperline, p);
		uint32_t lines = p == 0 ? height : div_up(height, 1u << f->log2_chroma_h);
		uint64_t size = (uint64_t)stride * lines;
		int m = f->mem_planes > 1 ? p : 0;

		pg->stride = stride;
		pg->lines = lines;
		pg->mem = (uint8_t)m;
		pg->offset = (size_t)mem[m];
		pg->size = (size_t)size;
		mem[m] += size;
		total += size;
	}
	/* V4L2's sizeimage is a __u32: anything larger is no real frame (and
	 * would overflow size_t on 32-bit ARM). */
	if (total > UINT32_MAX) {
		memset(g, 0, sizeof(*g));
		return -EINVAL;
	}
	g->color_planes = f->color_planes;
	g->mem_planes = f->mem_planes;
	for (int m = 0; m < 3; m++)
		g->mem_size[m] = (size_t)mem[m];
	g->sizeimage = (size_t)total;
	return 0;
}

int vc_fmt_is_raw(const struct vc_fmt *f)
{
	/* Every row has a complete description of its bytes, so every row can
	 * be passed to a client unchanged; the function exists so that a row
	 * added without geometry (group_bytes 0 outside compressed) is not. */
	return f && (f->layout == VC_LAYOUT_COMPRESSED || f->group_bytes[0] != 0);
}
