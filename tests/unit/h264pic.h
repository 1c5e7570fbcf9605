/* A moving I420 test picture for the H.264 tests: diagonal gradients that
 * shift by frame number and a bright square that walks across, so motion
 * prediction has work to do and every frame differs. */
#ifndef VC_TEST_H264PIC_H
#define VC_TEST_H264PIC_H

#include <stdint.h>
#include <stdlib.h>

struct h264pic {
	uint32_t w, h, stride[3];
	uint8_t *plane[3];
};

static inline int h264pic_new(struct h264pic *p, uint32_t w, uint32_t h)
{
	p->w = w;
	p->h = h;
	p->stride[0] = w;
	p->stride[1] = p->stride[2] = w / 2;
	p->plane[0] = malloc((size_t)w * h * 3 / 2);
	p->plane[1] = p->plane[0] ? p->plane[0] + (size_t)w * h : NULL;
	p->plane[2] = p->plane[1] ? p->plane[1] + (size_t)w * h / 4 : NULL;
	return p->plane[0] ? 0 : -1;
}

static inline void h264pic_draw(struct h264pic *p, unsigned n)
{
	for (uint32_t y = 0; y < p->h; y++)
		for (uint32_t x = 0; x < p->w; x++) {
			int sq = x - n * 4 % p->w < 48 && y >= p->h / 3 && y < p->h / 3 + 48;

			p->plane[0][y * p->w + x] = sq ? 235 : (uint8_t)(16 + (x + y + n * 2) % 200);
		}
	for (uint32_t y = 0; y < p->h / 2; y++)
		for (uint32_t x = 0; x < p->w / 2; x++) {
			p->plane[1][y * p->w / 2 + x] = (uint8_t)(64 + (x * 2 + n) % 128);
			p->plane[2][y * p->w / 2 + x] = (uint8_t)(64 + (y * 2 + n) % 128);
		}
}

static inline void h264pic_free(struct h264pic *p)
{
	free(p->plane[0]);
}

#endif
