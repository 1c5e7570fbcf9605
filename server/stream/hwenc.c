/* Hardware JPEG and H.264 encoding of an output (server/stream/hwenc.h):
 * owns each output's M2M encoder session (and, for H.264, the parameter
 * sets it sent last), publishes what it returns as the output's frames, and
 * takes the output back to the CPU path when the device fails.
 * Also the public vc_streams_* calls about hardware encoders. */
#define LOG_PREFIX "stream:"
#include "server/stream/hwenc.h"

#include <errno.h>
#include <linux/videodev2.h>
#include <stdlib.h>
#include <string.h>

#include "common/h264.h"
#include "common/h264enc.h"
#include "common/log.h"
#include "common/m2m.h"
#include "server/capture/m2m_discover.h"
#include "server/encode/m2m_enc.h"

struct hwenc {
	struct output *o;
	struct vc_m2m_enc *enc;
	char path[64];
	uint64_t gen;              /* hub generation the session was set up for */
	struct vc_m2m_enc_params p;
	uint64_t copies;           /* the session's copy count already added to the totals */
	int64_t submit_us;         /* last submit, for process_ms */
	struct h264_ps *ps;        /* H.264: the encoder's last SPS/PPS */
	int no_force_key;          /* H.264: FORCE_KEY_FRAME refused (logged once) */
};

static int is_h264(const struct output *o)
{
	return o->plan.out.fourcc == V4L2_PIX_FMT_H264;
}

static const char *codec_name(const struct output *o)
{
	return is_h264(o) ? "H.264" : "JPEG";
}

void vc_streams_set_m2m(struct vc_streams *s, const struct vc_m2m_list *l,
			const struct vc_m2m_enc_io *io)
{
	s->m2m = l;
	s->m2m_io = io;
}

void vc_streams_hwenc_stats(const struct vc_streams *s, struct vc_hwenc_stats *st)
{
	*st = s->hw;
}

const char *vc_streams_hwenc_active(const struct vc_streams *s, size_t cam)
{
	if (cam >= s->n_hubs)
		return NULL;
	for (const struct output *o = s->hubs[cam]->outputs; o; o = o->next)
		if (hwenc_path(o))
			return hwenc_path(o);
	return NULL;
}

const char *hwenc_path(const struct output *o)
{
	return o->hw && o->hw->enc ? o->hw->path : NULL;
}

/* Only "raw of the camera's mode -> JPEG or H.264 of the same size": the encoder
 * neither scales nor rotates here. A CONVERT step is the CPU encoder's own
 * need (e.g. YUYV through the converter); the hardware takes the camera's
 * format as it is, when its OUTPUT queue lists it (pick()). */
static int eligible(const struct output *o, const struct vc_frame *f)
{
	const struct vc_output *out = &o->plan.out;
	const unsigned other = VC_STEP_PASSTHROUGH | VC_STEP_DECODE | VC_STEP_SCALE |
			       VC_STEP_ROTATE | VC_STEP_JPEG_XFORM;

	return (o->plan.steps & VC_STEP_ENCODE) && !(o->plan.steps & other) &&
	       (out->fourcc == V4L2_PIX_FMT_MJPEG || out->fourcc == V4L2_PIX_FMT_JPEG ||
		out->fourcc == V4L2_PIX_FMT_H264) &&
	       f->fmt && f->fmt->family != VC_FAM_COMPRESSED && f->fmt->family != VC_FAM_BAYER &&
	       out->width == f->geom.width && out->height == f->geom.height;
}

/* The device the camera's `encoder` setting picks for o's codec and the
 * camera's fourcc, unless it failed lately. */
static const char *pick(const struct vc_streams *s, const struct output *o, uint32_t fourcc)
{
	const struct hub *h = o->hub;
	const char *why = "";

	if (!s->m2m || !h->cam)
		return NULL;
	int k = vc_m2m_pick_role(s->m2m->nodes, s->m2m->n, vc_cam_get_config(h->cam)->encoder,
				 fourcc, is_h264(o) ? VC_M2M_H264_ENC : VC_M2M_JPEG_ENC, &why);
	if (k < 0)
		return NULL;
	const char *path = s->m2m->nodes[k].path;
	if (!strcmp(path, s->hw_bad) && now_us() < s->hw_bad_until_us)
		return NULL;
	return path;
}

/* The device failed: close the session (deferred when inside its callback),
 * leave the device alone for a while, CPU from now on. Logged once until the
 * device works again (on_done logs that), not per output or per retry.
 * H.264: the CPU encoder's next picture must be an IDR (its own last
 * pictures are not what the clients decoded since), and clients wait for it
 * (h264_out_may_take: the frames in flight are lost). */
static void fallback(struct hwenc *hw, int err)
{
	struct output *o = hw->o;
	struct vc_streams *s = o->hub->s;
	const char *cam = o->hub->cam ? vc_cam_id(o->hub->cam) : "?";

	if (strcmp(s->hw_bad, hw->path))
		log_warn("cam %s: hardware %s encoder %s failed (%s): encoding on the CPU, "
			 "trying it again in %d s", cam, codec_name(o), hw->path, strerror(-err),
			 HWENC_RETRY_S);
	else
		log_debug("cam %s: hardware %s encoder %s failed too (%s)", cam, codec_name(o),
			  hw->path, strerror(-err));
	if (is_h264(o)) {
		if (o->pipe)
			vc_pipeline_force_key(o->pipe);
		for (struct client *c = o->clients; c; c = c->next)
			c->need_key = 1;
	}
	snprintf(s->hw_bad, sizeof(s->hw_bad), "%s", hw->path);
	s->hw_bad_until_us = now_us() + HWENC_RETRY_S * 1000000LL;
	s->hw.fallbacks++;
	vc_m2m_enc_close(hw->enc);
	hw->enc = NULL;
}

/* The coded bytes as the output's frame, a new reference (NULL on ENOMEM):
 * a JPEG; or an H.264 access unit, an IDR with the encoder's last SPS/PPS
 * put before it when it came without them (h264_ps_complete). */
static struct vc_frame *coded_frame(struct hwenc *hw, const struct vc_m2m_enc_out *out)
{
	int h264 = is_h264(hw->o);
	const struct vc_fmt *fmt = h264 ? vc_h264_fmt() : vc_fmt_by_fourcc(V4L2_PIX_FMT_MJPEG);
	struct vc_frame *f = vc_frame_new(out->len);
	struct vc_geom g;

	if (!f)
		return NULL;
	memcpy(vc_frame_data(f, 0), out->data, out->len);
	f->fmt = fmt;
	f->bytesused[0] = out->len;
	f->seq = out->seq;
	f->ts_us = out->ts_us;
	if (!h264) {
		if (vc_fmt_geometry(fmt, hw->p.width, hw->p.height, 0, &g) < 0) {
			vc_frame_unref(f);
			return NULL;
		}
		g.sizeimage = g.mem_size[0] = out->len;
		f->geom = g;
		return f;
	}
	f->geom.width = hw->p.width;
	f->geom.height = hw->p.height;
	f->key = (uint8_t)out->keyframe;
	h264_ps_update(&hw->ps, f);
	struct vc_frame *done = h264_ps_complete(hw->ps, f);
	vc_frame_unref(f);
	return done;
}

static void on_done(void *opaque, int err, const struct vc_m2m_enc_out *out, void *tag)
{
	struct hwenc *hw = opaque;
	struct output *o = hw->o;
	struct vc_streams *s = o->hub->s;

	(void)tag;
	if (err) {
		/* a skipped or error-flagged frame is lost; a failed device
		 * takes the output back to the CPU */
		if (hw->enc && vc_m2m_enc_error(hw->enc))
			fallback(hw, vc_m2m_enc_error(hw->enc));
		return;
	}
	struct vc_frame *f = coded_frame(hw, out);
	if (!f)
		return;
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	f->ts_real_us = (int64_t)rt.tv_sec * 1000000 + rt.tv_nsec / 1000 - (now_us() - out->ts_us);
	double ms = (double)(now_us() - hw->submit_us) / 1000.0;
	o->process_ms = o->process_ms ? o->process_ms * 0.9 + ms * 0.1 : ms;
	s->hw.frames++;
	if (!strcmp(s->hw_bad, hw->path)) { /* the recovery, logged once */
		log_info("hardware %s encoder %s works again", codec_name(o), hw->path);
		s->hw_bad[0] = 0;
	}
	s->publish(o, f, 0, 0);
	s->kick(s->http);
}

static void params_for(const struct output *o, const struct vc_frame *f, struct vc_m2m_enc_params *p)
{
	memset(p, 0, sizeof(*p));
	p->in_fourcc = f->fmt->fourcc;
	p->width = f->geom.width;
	p->height = f->geom.height;
	p->bytesperline = f->geom.plane[0].stride;
	p->coded_fourcc = is_h264(o) ? V4L2_PIX_FMT_H264 : V4L2_PIX_FMT_JPEG;
	/* a lent capture buffer comes with its dmabuf fds: the encoder reads
	 * it in place when it can import it (else the session copies) */
	p->feed = VC_M2M_FEED_AUTO;
	p->dmabuf_ok = f->n_dmabuf && f->n_dmabuf == f->geom.mem_planes;
	for (int i = 0; i < f->geom.mem_planes && i < 3; i++)
		p->src_len[i] = f->geom.mem_size[i];
	if (is_h264(o)) {
		/* the software encoder's defaults (common/h264enc.h), so the
		 * stream does not change character when one replaces the other */
		uint32_t fps = o->plan.fps ? o->plan.fps : 30;
		p->bitrate = (int)(o->plan.out.bitrate ? o->plan.out.bitrate
				   : vc_h264enc_default_bitrate(p->width, p->height, fps));
		p->gop = o->plan.out.gop ? o->plan.out.gop : (int)(2 * fps);
		p->fps_num = fps;
		p->fps_den = 1;
	} else {
		p->quality = o->plan.out.quality ? o->plan.out.quality : 80;
	}
	p->n_output = 2;
	p->n_capture = 4;
	p->timeout_ms = 2000;
}

static int same_picture(const struct vc_m2m_enc_params *a, const struct vc_m2m_enc_params *b)
{
	return a->in_fourcc == b->in_fourcc && a->width == b->width && a->height == b->height &&
	       a->bytesperline == b->bytesperline && a->quality == b->quality &&
	       a->coded_fourcc == b->coded_fourcc && a->bitrate == b->bitrate && a->gop == b->gop &&
	       a->fps_num == b->fps_num;
}

/* A session for o in the mode of f: opened, or restarted after a mode
 * change. 0, or -errno (the caller uses the CPU). */
static int ensure_session(struct output *o, const struct vc_frame *f, const char *path)
{
	struct vc_streams *s = o->hub->s;
	struct hwenc *hw = o->hw;
	struct vc_m2m_enc_params p;

	params_for(o, f, &p);
	if (!hw) {
		if (!(hw = calloc(1, sizeof(*hw))))
			return -ENOMEM;
		hw->o = o;
		o->hw = hw;
	}
	if (hw->enc && strcmp(hw->path, path) == 0) {
		/* the same picture: keep the session, whether this frame has
		 * fds or not (a copied frame goes to the CPU under DMABUF) */
		if (hw->gen == o->hub->gen && same_picture(&p, &hw->p))
			return 0;
		hw->gen = o->hub->gen;
		hw->p = p; /* the session's counters run on across a restart */
		return vc_m2m_enc_restart(hw->enc, &p);
	}
	vc_m2m_enc_close(hw->enc);
	hw->enc = NULL;
	snprintf(hw->path, sizeof(hw->path), "%s", path);
	struct vc_m2m_enc_cb cb = { on_done, NULL, hw };
	int r = vc_m2m_enc_open(s->base, s->m2m_io, path, &p, &cb, &hw->enc);
	if (r < 0)
		return r;
	hw->gen = o->hub->gen;
	hw->p = p;
	hw->copies = 0;
	hw->no_force_key = 0;
	h264_ps_release(&hw->ps); /* another encoder: its own parameter sets */
	s->hw.sessions++;
	struct vc_m2m_enc_stats st;
	vc_m2m_enc_get_stats(hw->enc, &st);
	char what[64];
	if (is_h264(o))
		snprintf(what, sizeof(what), "H.264 %ux%u %d kbit/s gop %d", p.width, p.height,
			 p.bitrate / 1000, p.gop);
	else
		snprintf(what, sizeof(what), "JPEG %ux%u q%d", p.width, p.height, p.quality);
	/* a retry of a failed device stays quiet until it works (on_done) */
	vc_log(strcmp(s->hw_bad, path) ? VC_LOG_INFO : VC_LOG_DEBUG,
	       "cam %s: %s encoded by %s (%s API, fed by %s)",
	       o->hub->cam ? vc_cam_id(o->hub->cam) : "?", what, path,
	       st.mplane ? "multi-planar" : "single-planar", st.dmabuf ? "DMABUF" : "MMAP + copy");
	return 0;
}

/* Whether an H.264 output may go from the CPU encoder to the device now:
 * not while a CPU picture is being encoded (it would be published after
 * the device's first IDR, with references the clients' decoders no longer
 * hold), and not while the CPU's stream has MP4 clients (the device's SPS
 * differs, which ends them: after a fallback they stay on the CPU until
 * they leave). A fresh output (no CPU pipeline yet) always may. */
static int cpu_to_hw_ok(const struct output *o)
{
	if (o->busy)
		return 0;
	if (!o->pipe)
		return 1;
	for (const struct client *c = o->clients; c; c = c->next)
		if (c->h264 == H264_MP4)
			return 0;
	return 1;
}

int hwenc_frame(struct output *o, struct vc_frame *f)
{
	struct vc_streams *s = o->hub->s;

	if (!eligible(o, f)) {
		hwenc_free(o); /* re-planned away from a plain encode */
		return 0;
	}
	if (is_h264(o) && !(o->hw && o->hw->enc) && !cpu_to_hw_ok(o))
		return 0;
	const char *path = pick(s, o, f->fmt->fourcc);
	if (!path) {
		if (o->hw && o->hw->enc)
			hwenc_free(o); /* setting changed to cpu, or the device failed */
		return 0;
	}
	int r = ensure_session(o, f, path);
	if (r < 0) {
		if (o->hw) {
			snprintf(o->hw->path, sizeof(o->hw->path), "%s", path);
			fallback(o->hw, r);
		}
		return 0;
	}
	struct vc_m2m_enc_in in = { f, { -1, -1, -1 }, NULL };
	for (int i = 0; i < f->n_dmabuf && i < 3; i++)
		in.dmabuf_fd[i] = f->dmabuf[i];
	o->hw->submit_us = now_us();
	r = vc_m2m_enc_submit(o->hw->enc, &in);
	if (r == -EBUSY) { /* the encoder has two frames already: drop this one */
		o->busy_drops++;
		return 1;
	}
	if (r < 0 && !vc_m2m_enc_error(o->hw->enc))
		return 0; /* this frame does not fit the session (-EINVAL): CPU, session kept */
	if (r < 0) {
		fallback(o->hw, r);
		return 0; /* this very frame goes to the CPU */
	}
	struct vc_m2m_enc_stats st;
	vc_m2m_enc_get_stats(o->hw->enc, &st);
	s->hw.copies += st.copies - o->hw->copies;
	o->hw->copies = st.copies;
	s->hw.dmabuf = st.dmabuf;
	return 1;
}

void hwenc_force_key(struct output *o)
{
	struct hwenc *hw = o->hw;

	if (!hw || !hw->enc || vc_m2m_enc_error(hw->enc))
		return;
	int r = vc_m2m_enc_force_key(hw->enc);
	/* without the control the client waits for the end of the GOP */
	if (r < 0 && !hw->no_force_key) {
		log_debug("%s: no key frame on request (%s): clients join at the next IDR",
			  hw->path, strerror(-r));
		hw->no_force_key = 1;
	}
}

void hwenc_free(struct output *o)
{
	if (!o->hw)
		return;
	vc_m2m_enc_close(o->hw->enc);
	h264_ps_release(&o->hw->ps);
	free(o->hw);
	o->hw = NULL;
}
