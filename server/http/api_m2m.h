/* The JSON of /api/status about memory-to-memory devices: the "m2m" array
 * (server/capture/m2m_discover.h) and each camera's "encoder" (which JPEG
 * encoder it would use). Written with common/json's writer. */
#ifndef VC_API_M2M_H
#define VC_API_M2M_H

#include <stdint.h>

#include "common/json.h"
#include "server/capture/m2m_discover.h"

/* An array, one object per node: path, card, driver, bus, api, roles and
 * the fourccs of each queue. l NULL = []. */
void vc_api_m2m_json(struct vc_json *j, const struct vc_m2m_list *l);

/* An object: the camera's setting ("auto", "cpu" or a path; "" = auto), the
 * JPEG encoder it would use ("cpu" or a node path), why not a hardware one,
 * the same for H.264 outputs (h264_would_use, h264_reason), and
 * the one in use: `active`, the device an output of the camera encodes with
 * now (NULL = "cpu": no output encodes in hardware, e.g. none only encodes at
 * the camera's size, or the device failed). fourcc is the camera's current
 * format, 0 when unknown. */
void vc_api_encoder_json(struct vc_json *j, const struct vc_m2m_list *l, const char *setting,
			 uint32_t fourcc, const char *active);

#endif
