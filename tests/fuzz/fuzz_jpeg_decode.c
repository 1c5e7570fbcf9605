/* Camera JPEG decoding and lossless transforms (common/jpeg_dec.c,
 * jpeg_xform.c) through the system libturbojpeg. The first byte picks the
 * scale (1, 1/2, 1/4, 1/8), the destination format and the transform; the
 * rest is the frame. Destinations are exact-size allocations with a canary
 * so an overrun shows; frames larger than 1024x1024 are skipped (memory,
 * speed: the decoder's cost is linear in pixels and libFuzzer would mostly
 * measure that). */
#include "tests/fuzz/fuzz.h"

#include "common/fmt.h"
#include "common/image.h"
#include "common/jpeg.h"
#include "common/log.h"

static struct vc_jpeg *jpeg; /* one per process, reused like a worker's */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	vc_log_level = -1;
	jpeg = vc_jpeg_new();
	FUZZ_ASSERT(jpeg);
	return 0;
}

static const char *const fmts[8] = { "YU12", "422P", "GREY", "RGB24",
				     "YUYV", "NV12", "BGR4", "YV12" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vc_jpeg_info info;

	if (size < 1)
		return 0;
	int denom = 1 << (data[0] & 3);
	const struct vc_fmt *f = vc_fmt_find(fmts[(data[0] >> 2) & 7]);
	int rot = 90 * ((data[0] >> 5) & 3), flip = (data[0] >> 7) ? 1 : 0;

	data++;
	size--;
	uint8_t *in = malloc(size ? size : 1); /* exact: ASan sees over-reads */
	FUZZ_ASSERT(in && f);
	memcpy(in, data, size);
	if (vc_jpeg_parse(in, size, &info) != 0 || (uint64_t)info.width * info.height > 1 << 20) {
		free(in);
		return 0;
	}
	uint32_t w = vc_jpeg_scaled(info.width, denom), h = vc_jpeg_scaled(info.height, denom);
	struct vc_geom g;
	struct vc_image img;
	uint8_t *mem[3] = { NULL, NULL, NULL };

	/* one allocation per plane (vc_image_from_geom would place them in
	 * one block, where an overrun of a plane lands in the next) */
	if (vc_fmt_geometry(f, w, h, 0, &g) < 0) { /* wider than the format table allows */
		free(in);
		return 0;
	}
	memset(&img, 0, sizeof(img));
	img.fmt = f;
	img.width = w;
	img.height = h;
	for (int i = 0; i < g.color_planes; i++) {
		mem[i] = malloc(g.plane[i].size + 16);
		FUZZ_ASSERT(mem[i]);
		memset(mem[i] + g.plane[i].size, 0xA5, 16);
		img.plane[i] = mem[i];
		img.stride[i] = g.plane[i].stride;
		img.plane_size[i] = g.plane[i].size;
	}
	vc_jpeg_decode(jpeg, in, size, denom, &img);
	for (int i = 0; i < g.color_planes; i++) {
		for (int k = 0; k < 16; k++)
			FUZZ_ASSERT(mem[i][g.plane[i].size + (size_t)k] == 0xA5);
		free(mem[i]);
	}
	size_t cap = vc_jpeg_bound(info.width, info.height), ol;
	uint8_t *out = cap ? malloc(cap) : NULL;
	uint32_t ow, oh;

	if (out && vc_jpeg_transform(jpeg, in, size, rot, flip, out, cap, &ol, &ow, &oh) == 0) {
		struct vc_jpeg_info oi;

		FUZZ_ASSERT(ol <= cap && vc_jpeg_parse(out, ol, &oi) == 0);
		FUZZ_ASSERT(oi.width == ow && oi.height == oh);
		FUZZ_ASSERT(rot % 180 ? ow <= info.height && oh <= info.width
				      : ow <= info.width && oh <= info.height);
	}
	free(out);
	free(in);
	return 0;
}
