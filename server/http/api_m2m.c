/* /api/status: the M2M devices and each camera's encoder
 * (server/http/api_m2m.h). */
#include "server/http/api_m2m.h"

#include "common/fmt.h"

static void fourccs(struct vc_json *j, const char *key, const struct vc_m2m_fmt *f, size_t n)
{
	char fcc[16];

	vc_json_key(j, key);
	vc_json_arr_begin(j);
	for (size_t i = 0; i < n && i < VC_M2M_MAX_FMTS; i++)
		vc_json_string(j, vc_fourcc_str(f[i].fourcc, fcc));
	vc_json_arr_end(j);
}

void vc_api_m2m_json(struct vc_json *j, const struct vc_m2m_list *l)
{
	vc_json_arr_begin(j);
	for (size_t i = 0; l && i < l->n; i++) {
		const struct vc_m2m_node *m = &l->nodes[i];

		vc_json_obj_begin(j);
		vc_json_kstr(j, "path", m->path);
		vc_json_kstr(j, "card", m->card);
		vc_json_kstr(j, "driver", m->driver);
		vc_json_kstr(j, "bus", m->bus);
		vc_json_kstr(j, "api", m->mplane ? "multi-planar" : "single-planar");
		vc_json_key(j, "roles");
		vc_json_arr_begin(j);
		for (unsigned r = 0; r < VC_M2M_ROLE_COUNT; r++)
			if (m->roles & (1u << r))
				vc_json_string(j, vc_m2m_role_name(r));
		vc_json_arr_end(j);
		/* V4L2's names: OUTPUT is what the device takes, CAPTURE what it gives */
		fourccs(j, "output_formats", m->out, m->n_out);
		fourccs(j, "capture_formats", m->cap, m->n_cap);
		vc_json_obj_end(j);
	}
	vc_json_arr_end(j);
}

void vc_api_encoder_json(struct vc_json *j, const struct vc_m2m_list *l, const char *setting,
			 uint32_t fourcc, const char *active)
{
	const char *why = "";
	int k = vc_m2m_pick(l ? l->nodes : NULL, l ? l->n : 0, setting, fourcc, &why);

	vc_json_obj_begin(j);
	vc_json_kstr(j, "setting", setting && setting[0] ? setting : "auto");
	vc_json_kstr(j, "would_use", k >= 0 ? l->nodes[k].path : "cpu");
	vc_json_kstr(j, "reason", why);
	/* H.264 outputs pick under the same setting (server/stream/hwenc.c) */
	k = vc_m2m_pick_role(l ? l->nodes : NULL, l ? l->n : 0, setting, fourcc, VC_M2M_H264_ENC,
			     &why);
	vc_json_kstr(j, "h264_would_use", k >= 0 ? l->nodes[k].path : "cpu");
	vc_json_kstr(j, "h264_reason", why);
	vc_json_kstr(j, "active", active ? active : "cpu");
	vc_json_obj_end(j);
}
