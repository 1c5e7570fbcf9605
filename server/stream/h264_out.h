/* H.264 outputs of the fan-out: what an output whose plan delivers H.264
 * (plan.out.fourcc V4L2_PIX_FMT_H264) keeps beside the encoded frames
 * (output.latest: one Annex-B access unit, `key` on IDRs), and the rules
 * its stream clients follow. Transport-neutral at the frame level: the
 * Annex-B access units are what any other sender (RTP, WebRTC) would take;
 * only the MP4 fragments here are specific to /stream.mp4.
 * Loop thread only. */
#ifndef VC_H264_OUT_H
#define VC_H264_OUT_H

#include <stddef.h>
#include <stdint.h>

struct output;
struct client;
struct hub;
struct vc_frame;
struct vc_part;
struct h264_ps;

/* How a client receives an H.264 output (client.h264). */
enum h264_kind {
	H264_NONE = 0,
	H264_ANNEXB, /* /stream.h264: the access units back to back */
	H264_MP4,    /* /stream.mp4: init segment, then one moof+mdat per frame */
};

/* Whether the output delivers H.264. */
int h264_out_is(const struct output *o);

/* Whether frame f (of the hub's mode) is to be encoded, by the output's
 * rate (plan.fps below the camera's: frames in between are skipped before
 * the encoder, so every client gets a stream it can decode). Always for
 * passthrough: a camera's own stream is never thinned. Forces the IDR
 * joiners wait for on f when the last forced one is a second older (on
 * the capture clock). */
int h264_out_due(struct output *o, const struct vc_frame *f);

/* IDRs forced on o's encoder for joiners so far. */
uint64_t h264_out_forced(const struct output *o);

/* Passthrough (an H.264 camera's own stream): what o publishes for the
 * captured access unit f, a new reference: f itself, or for an IDR without
 * SPS/PPS (many UVC cameras send them once) a copy with the last ones the
 * camera sent inserted before its first slice, every NAL unit of f byte for
 * byte (as it came when the camera has sent none yet; the kept ones are
 * the hub's h264_ps, updated by hub_on_frame). NULL on ENOMEM, and for the pictures after a
 * hole in the camera's sequence numbers up to its next IDR (they may refer
 * to the lost one: nothing is published for them). */
struct vc_frame *h264_out_pass(struct output *o, struct vc_frame *f);

/* The same memory for any H.264 stream (a camera's, kept per hub; a
 * hardware encoder's, kept per session): update keeps f's SPS/PPS in *ps
 * (made at the first call) and says whether both are known, i.e. an IDR
 * can be decoded (0 on ENOMEM too); complete
 * returns what to publish for f, a new reference: f itself, or, for an IDR
 * lacking them, a copy with the kept ones inserted before its first slice
 * (every NAL unit of f byte for byte; NULL on ENOMEM); release frees *ps. */
int h264_ps_update(struct h264_ps **ps, const struct vc_frame *f);
struct vc_frame *h264_ps_complete(const struct h264_ps *ps, struct vc_frame *f);
void h264_ps_release(struct h264_ps **ps);


/* o published a new latest frame: on an IDR, the parameter sets are read
 * and a new MP4 init segment made when they changed (MP4 clients holding
 * the old one are ended: their decoder's configuration is gone). */
void h264_out_published(struct output *o);

/* A client starts. Passthrough with a kept GOP (the access units since the
 * camera's last IDR, copies: h264_out_published keeps them, bounded by
 * common/gop.h): it is sent them from the IDR on at once, then goes on
 * live with the frame after (h264_out_kept). Otherwise it waits for an
 * IDR, and an encoder is asked for one on its next frame instead of at the
 * end of its GOP, at most one a second per output (h264_out_due): a later
 * joiner waits for that one (issue 22: joins must not raise the viewers'
 * bitrate). */
void h264_out_join(struct output *o, struct client *c);

/* c was moved to output `to` (merge/split after a mode change): an Annex-B
 * client joins it (from its next IDR; the SPS comes in-band), an MP4
 * client's stream ends (its init segment describes the old encoder). */
void h264_out_moved(struct output *to, struct client *c);

/* A joined client catching up on the kept GOP: the kept frame it sends
 * next (borrowed; *n = its number), the one after the frame it sent last,
 * or the kept IDR when a newer GOP began meanwhile. NULL when it is live:
 * it sends o's latest then, under h264_out_may_take's rule. */
struct vc_frame *h264_out_kept(const struct client *c, const struct output *o, uint64_t *n);

/* Whether c may send a frame now: a kept one (h264_out_kept), o's latest
 * when it is an IDR (for MP4 once the init segment exists), or the latest
 * when it is the frame right after the one c sent last. A client that
 * missed a frame (slow, or joined without a kept GOP) waits for the next
 * IDR, so it never gets a picture whose reference it lacks. */
int h264_out_may_take(const struct client *c, const struct output *o);

/* The part c sends for o's latest frame (kept NULL), a new reference: the
 * MP4 fragment shared by all (made once per frame; the init segment before
 * it, in a part of c's own, when c has not had it yet); or for the kept
 * frame `kept` number n, a fragment of c's own with its capture time.
 * NULL on ENOMEM. Sets c's init_gen. */
struct vc_part *h264_out_mp4_part(struct output *o, struct client *c,
				  const struct vc_frame *kept, uint64_t n);

/* Wall-clock time (CLOCK_REALTIME, us) of MP4 decode time 0: a player's
 * currentTime plus this is the shown frame's capture time. 0 = none yet. */
int64_t h264_out_t0_real_us(const struct output *o);

/* o's frames of the old mode are dropped (mode change, camera replaced):
 * so is its kept GOP (a joiner must not get the old mode's pictures). */
void h264_out_drop(struct output *o);

void h264_out_free(struct output *o);

#endif
