/* Helpers over the plain-data capability lists. */
#include "common/caps.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

void vc_caps_clear(struct vc_caps *c)
{
	for (size_t i = 0; i < c->n_fmts; i++)
		free(c->fmts[i].sizes);
	free(c->fmts);
	memset(c, 0, sizeof(*c));
}

const struct vc_caps_fmt *vc_caps_find(const struct vc_caps *c, uint32_t fourcc)
{
	for (size_t i = 0; i < c->n_fmts; i++)
		if (c->fmts[i].fourcc == fourcc)
			return &c->fmts[i];
	return NULL;
}

static int ival_known(struct vc_fract f)
{
	return f.num && f.den;
}

static int ival_eq(struct vc_fract a, struct vc_fract b)
{
	return (uint64_t)a.num * b.den == (uint64_t)b.num * a.den;
}

static struct vc_caps_size *size_of(const struct vc_caps_fmt *f, uint32_t w, uint32_t h)
{
	for (size_t i = 0; i < f->n_sizes; i++)
		if (f->sizes[i].width == w && f->sizes[i].height == h)
			return &f->sizes[i];
	return NULL;
}

static ptrdiff_t ival_index(const struct vc_caps_size *s, struct vc_fract iv)
{
	for (size_t i = 0; i < s->n_ivals; i++)
		if (ival_eq(s->ival[i], iv))
			return (ptrdiff_t)i;
	return -1;
}

int vc_caps_has_mode(const struct vc_caps *c, const struct vc_mode *m)
{
	const struct vc_caps_fmt *f = vc_caps_find(c, m->fourcc);
	const struct vc_caps_size *s;

	if (!f)
		return 0;
	if (f->stepwise)
		return m->width >= f->min_w && m->width <= f->max_w && m->height >= f->min_h &&
		       m->height <= f->max_h;
	s = size_of(f, m->width, m->height);
	if (!s)
		return 0;
	return !s->n_ivals || !ival_known(m->ival) || ival_index(s, m->ival) >= 0;
}

/* the list stays fastest first */
static void ivals_sort(struct vc_caps_size *s)
{
	for (size_t i = 1; i < s->n_ivals; i++)
		for (size_t j = i; j > 0; j--) {
			struct vc_fract a = s->ival[j - 1], b = s->ival[j];

			if ((uint64_t)a.num * b.den <= (uint64_t)b.num * a.den)
				break;
			s->ival[j - 1] = b;
			s->ival[j] = a;
		}
}

unsigned vc_caps_take_answer(struct vc_caps *c, const struct vc_mode *asked,
			     const struct vc_mode *got)
{
	struct vc_caps_fmt *f = (struct vc_caps_fmt *)vc_caps_find(c, asked->fourcc);
	struct vc_caps_size *s;
	ptrdiff_t i;

	if (!f || f->stepwise || got->fourcc != asked->fourcc)
		return 0;
	s = size_of(f, asked->width, asked->height);
	if (!s)
		return 0;
	if (got->width != asked->width || got->height != asked->height) {
		if (f->n_sizes < 2)
			return 0;
		memmove(s, s + 1, (size_t)(f->sizes + f->n_sizes - (s + 1)) * sizeof(*s));
		f->n_sizes--;
		return VC_CAPS_SIZE_TAKEN;
	}
	if (!ival_known(asked->ival) || !ival_known(got->ival) || ival_eq(asked->ival, got->ival))
		return 0;
	i = ival_index(s, asked->ival);
	if (i < 0)
		return 0;
	if (ival_index(s, got->ival) < 0) {
		s->ival[i] = got->ival; /* rounded: the rate it runs instead */
		ivals_sort(s);
		return VC_CAPS_IVAL_TAKEN | VC_CAPS_IVAL_ADDED;
	}
	if (s->n_ivals < 2)
		return 0;
	memmove(&s->ival[i], &s->ival[i + 1], (s->n_ivals - (size_t)i - 1) * sizeof(s->ival[0]));
	s->n_ivals--;
	return VC_CAPS_IVAL_TAKEN;
}
