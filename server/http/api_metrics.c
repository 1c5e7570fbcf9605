/* /metrics in the Prometheus text format (see api_metrics.h). The body is
 * built in a growable text buffer (struct buf) and handed to MHD, which
 * frees it. The JSON API is server/http/api.c. */
#define LOG_PREFIX "api:"
#include "server/http/api_metrics.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/fmt.h"
#include "common/memstat.h"
#include "server/loop.h"

struct buf {
	char *p;
	size_t len, cap;
	int oom;
};

static void bprintf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bprintf(struct buf *b, const char *fmt, ...)
{
	va_list ap;

	if (b->oom)
		return;
	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		int n = vsnprintf(b->p ? b->p + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = 1;
			return;
		}
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = (b->cap + (size_t)n + 1) * 2;
		char *np = realloc(b->p, cap);
		if (!np) {
			b->oom = 1;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
}

/* ---- Prometheus text format ---- */

/* The exposition format wants every family in one group (HELP, TYPE, then
 * all its samples), so each family walks the cameras/outputs/clients once. */
struct prom_family {
	const char *name, *type, *help;
};

static const struct prom_family cap_fam[] = {
	{ "vcapd_capture_fps", "gauge", "Measured capture rate." },
	{ "vcapd_capture_frames_total", "counter", "Frames captured." },
	{ "vcapd_capture_dropped_total", "counter", "Frames the driver dropped (sequence gaps)." },
	{ "vcapd_capture_errors_total", "counter", "Error-flagged buffers." },
	{ "vcapd_capture_restarts_total", "counter", "Device recoveries." },
	{ "vcapd_capture_state", "gauge", "Device state (1 for the current state)." },
};
static const struct prom_family out_fam[] = {
	{ "vcapd_output_clients", "gauge", "Clients of this output." },
	{ "vcapd_output_frames_total", "counter", "Frames this output produced." },
	{ "vcapd_output_fps", "gauge", "Rate this output produces frames at." },
	{ "vcapd_output_process_seconds", "gauge", "Average convert/encode time per frame." },
};
static const struct prom_family cli_fam[] = {
	{ "vcapd_client_frames_total", "counter", "Frames sent to this client." },
	{ "vcapd_client_skipped_frames_total", "counter", "Frames a slow client did not get." },
	{ "vcapd_client_bytes_total", "counter", "Bytes sent to this client." },
	{ "vcapd_client_fps", "gauge", "Rate this client receives frames at." },
};

static void prom_head(struct buf *b, const struct prom_family *f)
{
	bprintf(b, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help, f->name, f->type);
}

struct prom_ctx {
	struct buf *b;
	const char *cam;
	int what; /* index into out_fam / cli_fam */
};

static void prom_output_cb(void *opaque, const struct vc_output_info *oi)
{
	struct prom_ctx *p = opaque;
	char fcc[16], lbl[160], v[32];

	snprintf(lbl, sizeof(lbl), "cam=\"%s\",format=\"%s\",width=\"%u\",height=\"%u\",quality=\"%u\"",
		 p->cam, vc_fourcc_str(oi->out.fourcc, fcc), oi->out.width, oi->out.height,
		 oi->out.quality);
	switch (p->what) {
	case 0: snprintf(v, sizeof(v), "%u", oi->clients); break;
	case 1: snprintf(v, sizeof(v), "%" PRIu64, oi->produced); break;
	case 2: snprintf(v, sizeof(v), "%.2f", oi->fps); break;
	default: snprintf(v, sizeof(v), "%.6f", oi->process_ms / 1000.0); break;
	}
	bprintf(p->b, "%s{%s} %s\n", out_fam[p->what].name, lbl, v);
}

static void prom_client_cb(void *opaque, const struct vc_client_info *ci)
{
	struct prom_ctx *p = opaque;
	char fcc[16], lbl[200], v[32];

	snprintf(lbl, sizeof(lbl), "cam=\"%s\",peer=\"%s\",kind=\"%s\",format=\"%s\",size=\"%ux%u\"",
		 p->cam, ci->peer, ci->raw ? "raw" : "mjpeg", vc_fourcc_str(ci->out.fourcc, fcc),
		 ci->out.width, ci->out.height);
	switch (p->what) {
	case 0: snprintf(v, sizeof(v), "%" PRIu64, ci->frames); break;
	case 1: snprintf(v, sizeof(v), "%" PRIu64, ci->skipped); break;
	case 2: snprintf(v, sizeof(v), "%" PRIu64, ci->bytes); break;
	default: snprintf(v, sizeof(v), "%.2f", ci->fps); break;
	}
	bprintf(p->b, "%s{%s} %s\n", cli_fam[p->what].name, lbl, v);
}

/* One family of the outputs (clients = 0) or the clients, every camera. */
static void prom_per_cam(struct vc_streams *s, struct buf *b, int clients, int what)
{
	prom_head(b, clients ? &cli_fam[what] : &out_fam[what]);
	for (size_t i = 0; i < vc_streams_n_cams(s); i++) {
		struct prom_ctx p = { b, vc_cam_id(vc_streams_cam(s, i)), what };

		if (clients)
			vc_streams_clients(s, i, prom_client_cb, &p);
		else
			vc_streams_outputs(s, i, prom_output_cb, &p);
	}
}

/* Hardware JPEG encoders (server/stream/hwenc.c), all cameras together. */
static void prom_hwenc(const struct vc_streams *s, struct buf *b)
{
	static const struct prom_family f[] = {
		{ "vcapd_encoder_hw_frames_total", "counter", "Frames (JPEG, H.264) made by hardware (M2M) encoders." },
		{ "vcapd_encoder_copies_total", "counter",
		  "Frames copied into a hardware encoder's buffer (0 when fed by DMABUF)." },
		{ "vcapd_encoder_fallbacks_total", "counter",
		  "Times a failed hardware encoder sent an output back to the CPU encoder." },
		{ "vcapd_encoder_sessions_total", "counter", "Hardware encoder sessions opened." },
	};
	struct vc_hwenc_stats st;

	vc_streams_hwenc_stats(s, &st);
	const uint64_t v[] = { st.frames, st.copies, st.fallbacks, st.sessions };
	for (size_t k = 0; k < sizeof(f) / sizeof(f[0]); k++) {
		prom_head(b, &f[k]);
		bprintf(b, "%s %" PRIu64 "\n", f[k].name, v[k]);
	}
}

/* The loop's turns as a histogram of CPU seconds (server/loop.h). */
static void prom_loop(const struct vc_loop_stats *st, struct buf *b)
{
	const char *nm = "vcapd_loop_turn_cpu_seconds";

	bprintf(b, "# HELP %s CPU time of each event loop turn, on the loop thread's own clock "
		   "(time the host gave other processes does not count); turns over 0.025 s ran "
		   "work that belongs on a worker.\n# TYPE %s histogram\n", nm, nm);
	for (int k = 0; k < VC_LOOP_BUCKETS; k++)
		bprintf(b, "%s_bucket{le=\"%g\"} %" PRIu64 "\n", nm, vc_loop_bucket_us[k] / 1e6, st->le[k]);
	bprintf(b, "%s_bucket{le=\"+Inf\"} %" PRIu64 "\n%s_sum %.6f\n%s_count %" PRIu64 "\n", nm,
		st->turns, nm, (double)st->sum_us / 1e6, nm, st->turns);
	bprintf(b, "# HELP vcapd_loop_turn_cpu_max_seconds The longest loop turn so far, CPU time.\n"
		   "# TYPE vcapd_loop_turn_cpu_max_seconds gauge\nvcapd_loop_turn_cpu_max_seconds %.6f\n",
		(double)st->max_us / 1e6);
}

enum MHD_Result vc_api_metrics(struct vc_streams *s, struct vc_http *http,
			       const struct vc_loop_stats *loop, struct vc_http_req *r)
{
	struct buf b = { 0 };
	size_t n = vc_streams_n_cams(s);

	bprintf(&b, "# HELP vcapd_connections Open HTTP connections.\n"
		    "# TYPE vcapd_connections gauge\nvcapd_connections %u\n",
		vc_http_connections(http));
	bprintf(&b, "# HELP vcapd_memory_bytes Buffers held: frames (outputs, snapshots, "
		    "pipelines), converter scratch, copies of capture buffers, kept H.264 GOPs, "
		    "stream parts held for clients (these five are what frame_memory limits), "
		    "the test pattern's buffers (device).\n"
		    "# TYPE vcapd_memory_bytes gauge\n");
	for (int k = 0; k < VC_MEM_KINDS; k++)
		bprintf(&b, "vcapd_memory_bytes{kind=\"%s\"} %zu\n",
			vc_mem_kind_name((enum vc_mem_kind)k), vc_mem_held((enum vc_mem_kind)k));
	for (size_t k = 0; k < sizeof(cap_fam) / sizeof(cap_fam[0]); k++) {
		prom_head(&b, &cap_fam[k]);
		for (size_t i = 0; i < n; i++) {
			struct vc_cam *cam = vc_streams_cam(s, i);
			struct vc_cam_stats st;
			const char *id = vc_cam_id(cam);
			const char *nm = cap_fam[k].name;

			vc_cam_get_stats(cam, &st);
			switch (k) {
			case 0: bprintf(&b, "%s{cam=\"%s\"} %.2f\n", nm, id, st.fps); break;
			case 1: bprintf(&b, "%s{cam=\"%s\"} %" PRIu64 "\n", nm, id, st.frames); break;
			case 2: bprintf(&b, "%s{cam=\"%s\"} %" PRIu64 "\n", nm, id, st.dropped); break;
			case 3: bprintf(&b, "%s{cam=\"%s\"} %" PRIu64 "\n", nm, id, st.errors); break;
			case 4: bprintf(&b, "%s{cam=\"%s\"} %" PRIu64 "\n", nm, id, st.restarts); break;
			default:
				for (int v = VC_CAM_ABSENT; v <= VC_CAM_ERROR; v++)
					bprintf(&b, "%s{cam=\"%s\",state=\"%s\"} %d\n", nm, id,
						vc_cam_state_name((enum vc_cam_state)v),
						(int)vc_cam_get_state(cam) == v);
				break;
			}
		}
	}
	for (int k = 0; k < (int)(sizeof(out_fam) / sizeof(out_fam[0])); k++)
		prom_per_cam(s, &b, 0, k);
	for (int k = 0; k < (int)(sizeof(cli_fam) / sizeof(cli_fam[0])); k++)
		prom_per_cam(s, &b, 1, k);
	prom_hwenc(s, &b);
	if (loop)
		prom_loop(loop, &b);
	if (b.oom || !b.p) {
		free(b.p);
		return vc_http_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	}
	return vc_http_send_owned(r, MHD_HTTP_OK, "text/plain; version=0.0.4", b.p, b.len);
}

