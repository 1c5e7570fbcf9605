/* Calls into common/negotiate.h. Until negotiate.c is on main the symbols
 * are weak and a minimal stand-in answers (same format/size = passthrough,
 * else convert/scale/encode from the current mode; the mode is never
 * changed); once linked, negotiate.c answers everything. */
#ifndef VC_STREAM_NEG_H
#define VC_STREAM_NEG_H

#include "common/negotiate.h"

int vc_sneg_plan(const struct vc_mode *mode, const struct vc_request *req, struct vc_plan *plan);
int vc_sneg_mode(const struct vc_caps *caps, const struct vc_mode *cur,
		 const struct vc_request *reqs, size_t n, struct vc_mode *out);
int vc_sneg_equal(const struct vc_output *a, const struct vc_output *b);
const char *vc_sneg_steps(unsigned steps, uint8_t denom, char *buf, size_t len);

#endif
