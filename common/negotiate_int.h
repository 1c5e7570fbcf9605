/* Internal to negotiate*.c: small helpers the plan (negotiate.c) and the
 * device-mode choice (negotiate_mode.c) share. Not for other modules. */
#ifndef VC_NEGOTIATE_INT_H
#define VC_NEGOTIATE_INT_H

#include <stdint.h>

#include "common/fmt.h"
#include "common/negotiate.h"

static inline int is_compressed(const struct vc_fmt *f)
{
	return f->family == VC_FAM_COMPRESSED;
}

static inline uint32_t round_div(uint64_t a, uint64_t b)
{
	return (uint32_t)((a + b / 2) / b);
}

/* An interval the device reported (0/0 = the device did not say). */
static inline int ival_known(struct vc_fract iv)
{
	return iv.num && iv.den;
}

/* Delivered fps of an interval, rounded; 0 when unknown. */
static inline uint32_t ival_fps(struct vc_fract iv)
{
	if (!ival_known(iv))
		return 0;
	return round_div(iv.den, iv.num);
}

/* vc_negotiate_plan without counting it (vc_negotiate_plans): the mode
 * choice plans every request against every candidate mode. */
int negotiate_plan(const struct vc_mode *mode, const struct vc_request *req,
		   struct vc_plan *plan);

#endif
