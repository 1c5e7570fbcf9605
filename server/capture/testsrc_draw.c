/* Drawing of the test pattern (see testsrc_draw.h): colour bars and a
 * 5x7 pixel font, written straight into I420 planes. */
#include "server/capture/testsrc_draw.h"

#include <stdio.h>
#include <string.h>

/* 100% colour bars: white yellow cyan green magenta red blue black. */
static const uint8_t bar_y[8] = { 235, 210, 170, 145, 106, 81, 41, 16 };
static const uint8_t bar_u[8] = { 128, 16, 166, 54, 202, 90, 240, 128 };
static const uint8_t bar_v[8] = { 128, 146, 16, 34, 222, 240, 110, 128 };

/* 5x7 digits and ':' '.', one byte per row, bit 4 = leftmost column. */
static const uint8_t font[12][7] = {
	{ 0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e }, /* 0 */
	{ 0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e }, /* 1 */
	{ 0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f }, /* 2 */
	{ 0x1f, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0e }, /* 3 */
	{ 0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02 }, /* 4 */
	{ 0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e }, /* 5 */
	{ 0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e }, /* 6 */
	{ 0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08 }, /* 7 */
	{ 0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e }, /* 8 */
	{ 0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c }, /* 9 */
	{ 0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x0c, 0x00 }, /* : */
	{ 0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x0c }, /* . */
};

static int glyph_index(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	return c == ':' ? 10 : c == '.' ? 11 : -1;
}

void vc_testsrc_draw_text(const struct vc_i420_pic *pc, uint32_t x0, uint32_t y0, unsigned s, const char *txt)
{
	size_t n = strlen(txt);
	uint32_t bw = (uint32_t)(n * 6 + 1) * s, bh = 9 * s;

	for (uint32_t y = y0; y < y0 + bh && y < pc->h; y++)
		for (uint32_t x = x0; x < x0 + bw && x < pc->w; x++)
			pc->p[0][(size_t)y * pc->stride[0] + x] = 16;
	for (uint32_t y = y0 / 2; y < (y0 + bh + 1) / 2 && y < pc->ch; y++)
		for (uint32_t x = x0 / 2; x < (x0 + bw + 1) / 2 && x < pc->cw; x++) {
			pc->p[1][(size_t)y * pc->stride[1] + x] = 128;
			pc->p[2][(size_t)y * pc->stride[2] + x] = 128;
		}
	for (size_t i = 0; i < n; i++) {
		int g = glyph_index(txt[i]);

		if (g < 0)
			continue;
		for (unsigned r = 0; r < 7; r++)
			for (unsigned c = 0; c < 5; c++) {
				if (!(font[g][r] & (0x10 >> c)))
					continue;
				uint32_t px = x0 + (uint32_t)((i * 6 + 1 + c) * s);
				uint32_t py = y0 + (1 + r) * s;
				for (unsigned dy = 0; dy < s; dy++)
					for (unsigned dx = 0; dx < s; dx++)
						if (py + dy < pc->h && px + dx < pc->w)
							pc->p[0][(size_t)(py + dy) * pc->stride[0] +
								 px + dx] = 235;
			}
	}
}

void vc_testsrc_draw_frame(const struct vc_i420_pic *pc, uint64_t seq, struct vc_fract ival)
{
	uint32_t step = pc->w / 64 > 2 ? (pc->w / 64) & ~1u : 2;
	uint32_t off = (uint32_t)((seq * step) % pc->w);

	for (uint32_t x = 0; x < pc->w; x++)
		pc->p[0][x] = bar_y[(uint64_t)((x + off) % pc->w) * 8 / pc->w];
	for (uint32_t y = 1; y < pc->h; y++)
		memcpy(pc->p[0] + (size_t)y * pc->stride[0], pc->p[0], pc->w);
	for (uint32_t x = 0; x < pc->cw; x++) {
		uint32_t b = (uint32_t)((uint64_t)((2 * x + off) % pc->w) * 8 / pc->w);
		pc->p[1][x] = bar_u[b];
		pc->p[2][x] = bar_v[b];
	}
	for (uint32_t y = 1; y < pc->ch; y++) {
		memcpy(pc->p[1] + (size_t)y * pc->stride[1], pc->p[1], pc->cw);
		memcpy(pc->p[2] + (size_t)y * pc->stride[2], pc->p[2], pc->cw);
	}

	unsigned s = pc->h / 160 ? pc->h / 160 : 1;
	char txt[32];
	uint64_t ms = ival.den ? seq * ival.num * 1000 / ival.den : 0;

	snprintf(txt, sizeof(txt), "%08llu", (unsigned long long)(seq % 100000000));
	vc_testsrc_draw_text(pc, 4 * s, 4 * s, s, txt);
	snprintf(txt, sizeof(txt), "%02u:%02u:%02u.%03u", (unsigned)(ms / 3600000 % 100),
		 (unsigned)(ms / 60000 % 60), (unsigned)(ms / 1000 % 60), (unsigned)(ms % 1000));
	vc_testsrc_draw_text(pc, 4 * s, 15 * s, s, txt);
}
