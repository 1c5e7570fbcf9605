/* Helpers over the plain-data capability lists. */
#include "common/caps.h"

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
