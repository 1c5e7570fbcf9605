/* Writes the JPEG seeds of tests/fuzz/corpus/jpeg (no selector) and
 * jpeg_decode (a selector byte first: scale, destination, transform): small
 * frames of every subsampling, progressive ones and one with restart
 * markers. Not built by make; the seeds are committed:
 *   cc -o /tmp/mkseeds tests/fuzz/mkseeds.c -lturbojpeg -ljpeg
 *   /tmp/mkseeds tests/fuzz/corpus/jpeg
 *   /tmp/mkseeds tests/fuzz/corpus/jpeg_decode 1 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <turbojpeg.h>

static const char *dir;
static int with_selector;

static void save(const char *name, int sel, const unsigned char *b, unsigned long n)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "wb");
	if (!f) {
		perror(p);
		exit(1);
	}
	if (with_selector)
		fputc(sel, f);
	fwrite(b, 1, n, f);
	fclose(f);
}

/* A w x h frame of a gradient through TurboJPEG. */
static void tj(const char *name, int sel, int w, int h, int ss, int flags)
{
	tjhandle c = tjInitCompress();
	unsigned char *rgb = malloc((size_t)w * h * 3), *jp = NULL;
	unsigned long jl = 0;
	int pf = ss == TJSAMP_GRAY ? TJPF_GRAY : TJPF_RGB;

	for (int i = 0; i < w * h * 3; i++)
		rgb[i] = (unsigned char)(i * 37 + (i / (w * 3)) * 11);
	if (tjCompress2(c, rgb, w, 0, h, pf, &jp, &jl, ss, 75, flags) < 0) {
		fprintf(stderr, "%s: %s\n", name, tjGetErrorStr2(c));
		exit(1);
	}
	save(name, sel, jp, jl);
	tjFree(jp);
	free(rgb);
	tjDestroy(c);
}

/* 32x16 with a restart marker after every MCU, through libjpeg. */
static void restarts(const char *name, int sel)
{
	struct jpeg_compress_struct c;
	struct jpeg_error_mgr e;
	unsigned char *out = NULL, row[32 * 3];
	unsigned long ol = 0;

	c.err = jpeg_std_error(&e);
	jpeg_create_compress(&c);
	jpeg_mem_dest(&c, &out, &ol);
	c.image_width = 32;
	c.image_height = 16;
	c.input_components = 3;
	c.in_color_space = JCS_RGB;
	jpeg_set_defaults(&c);
	jpeg_set_quality(&c, 60, TRUE);
	c.restart_interval = 1;
	jpeg_start_compress(&c, TRUE);
	for (int y = 0; y < 16; y++) {
		JSAMPROW r = row;

		for (int i = 0; i < 32 * 3; i++)
			row[i] = (unsigned char)(i * 5 + y * 9);
		jpeg_write_scanlines(&c, &r, 1);
	}
	jpeg_finish_compress(&c);
	save(name, sel, out, ol);
	free(out);
	jpeg_destroy_compress(&c);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: mkseeds DIR [1 = selector byte first]\n");
		return 2;
	}
	dir = argv[1];
	with_selector = argc > 2;
	tj("gray_8x8.jpg", 0x08, 8, 8, TJSAMP_GRAY, 0);
	tj("420_16x16.jpg", 0x00, 16, 16, TJSAMP_420, 0);
	tj("420_17x9.jpg", 0x23, 17, 9, TJSAMP_420, 0);
	tj("422_24x8.jpg", 0x45, 24, 8, TJSAMP_422, 0);
	tj("444_8x16.jpg", 0x8e, 8, 16, TJSAMP_444, 0);
	tj("440_8x16.jpg", 0x12, 8, 16, TJSAMP_440, 0);
	tj("411_40x8.jpg", 0x63, 40, 8, TJSAMP_411, 0);
	tj("420_prog_16x16.jpg", 0x21, 16, 16, TJSAMP_420, TJFLAG_PROGRESSIVE);
	tj("gray_prog_24x8.jpg", 0xa7, 24, 8, TJSAMP_GRAY, TJFLAG_PROGRESSIVE);
	restarts("rst_32x16.jpg", 0x1f);
	return 0;
}
