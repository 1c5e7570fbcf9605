/* Writes the JPEG seeds of tests/fuzz/corpus/jpeg (no argument after the
 * directory) and jpeg_decode (a selector byte first: scale, destination,
 * transform). Not built by make; the seeds are committed:
 *   cc -o /tmp/mkseeds tests/fuzz/mkseeds.c -lturbojpeg -ljpeg
 *   /tmp/mkseeds tests/fuzz/corpus/jpeg; /tmp/mkseeds tests/fuzz/corpus/jpeg_decode 1 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>
#include <turbojpeg.h>
static void save(const char *dir, const char *name, int sel, const unsigned char *b, unsigned long n) {
	char p[256]; snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "wb"); if (sel >= 0) fputc(sel, f); fwrite(b, 1, n, f); fclose(f);
}
static void tj(const char *dir, const char *name, int sel, int w, int h, int ss, int flags) {
	tjhandle c = tjInitCompress(); unsigned char *rgb = malloc(w*h*3), *jp = NULL; unsigned long jl = 0;
	for (int i = 0; i < w*h*3; i++) rgb[i] = (unsigned char)(i * 37 + (i / (w*3)) * 11);
	int pf = ss == TJSAMP_GRAY ? TJPF_GRAY : TJPF_RGB;
	if (tjCompress2(c, rgb, w, 0, h, pf, &jp, &jl, ss, 75, flags)) { fprintf(stderr, "%s\n", tjGetErrorStr2(c)); exit(1); }
	save(dir, name, sel, jp, jl); tjFree(jp); free(rgb); tjDestroy(c);
}
/* libjpeg with a restart interval */
static void rst(const char *dir, const char *name, int sel) {
	struct jpeg_compress_struct c; struct jpeg_error_mgr e; unsigned char *out = NULL; unsigned long ol = 0;
	c.err = jpeg_std_error(&e); jpeg_create_compress(&c); jpeg_mem_dest(&c, &out, &ol);
	c.image_width = 32; c.image_height = 16; c.input_components = 3; c.in_color_space = JCS_RGB;
	jpeg_set_defaults(&c); jpeg_set_quality(&c, 60, TRUE); c.restart_interval = 1;
	jpeg_start_compress(&c, TRUE); unsigned char row[32*3];
	for (int y = 0; y < 16; y++) { for (int i = 0; i < 96; i++) row[i] = (unsigned char)(i*5+y*9); JSAMPROW r = row; jpeg_write_scanlines(&c, &r, 1); }
	jpeg_finish_compress(&c); save(dir, name, sel, out, ol); free(out); jpeg_destroy_compress(&c);
}
int main(int argc, char **argv) {
	const char *dir = argv[1]; int sel = argc > 2 ? atoi(argv[2]) : -1;
	#define SEL(x) (sel < 0 ? -1 : (x))
	tj(dir, "gray_8x8.jpg", SEL(0x08), 8, 8, TJSAMP_GRAY, 0);
	tj(dir, "420_16x16.jpg", SEL(0x00), 16, 16, TJSAMP_420, 0);
	tj(dir, "420_17x9.jpg", SEL(0x23), 17, 9, TJSAMP_420, 0);
	tj(dir, "422_24x8.jpg", SEL(0x45), 24, 8, TJSAMP_422, 0);
	tj(dir, "444_8x16.jpg", SEL(0x8e), 8, 16, TJSAMP_444, 0);
	tj(dir, "440_8x16.jpg", SEL(0x12), 8, 16, TJSAMP_440, 0);
	tj(dir, "411_40x8.jpg", SEL(0x63), 40, 8, TJSAMP_411, 0);
	tj(dir, "420_prog_16x16.jpg", SEL(0x21), 16, 16, TJSAMP_420, TJFLAG_PROGRESSIVE);
	tj(dir, "gray_prog_24x8.jpg", SEL(0xa7), 24, 8, TJSAMP_GRAY, TJFLAG_PROGRESSIVE);
	rst(dir, "rst_32x16.jpg", SEL(0x1f));
	return 0;
}
