/* The test-pattern source (vc_src_test in server/capture/source.h): moving colour
 * bars, a frame counter and the stream time, in any raw format of the table
 * that the converter can write, or MJPEG, or (when the path names it) H.264.
 * Every frame is a pure function of (format, size, frame interval, sequence
 * number), so tests can render the frame they expect and compare bytes.
 * H.264 too: an IDR at every multiple of one second worth of frames (30 at
 * 30 fps), each GOP encoded by a fresh encoder from its IDR, and frames the
 * source skipped (a late reader) encoded anyway and dropped, so frame seq
 * is the same bytes however the frames before it were taken; buffers of an
 * IDR carry VC_SRC_BUF_KEYFRAME, as a V4L2 driver's V4L2_BUF_FLAG_KEYFRAME.
 *
 * Path: "test" or "test:" followed by ':'-separated options in any order:
 *   WxH (size), WxH@FPS or @FPS (rate), a format name or fourcc (YUYV, NV12,
 *   RGB3, MJPG...), "still" (a frozen picture: frame 0, rendered once),
 *   "only" (the caps list just that one format and set_mode keeps it, like
 *   a YUYV-only webcam, so clients wanting MJPEG get an encode).
 *   "H264" as the format: the source starts in its H.264 mode and lists
 *   H.264 (every size and rate) besides the raw formats and MJPEG, like a
 *   UVC H.264 webcam (with "only": H.264 alone); without it H.264 is not
 *   offered, so H.264 clients of other test paths are served by encoding.
 *   SPS and PPS come before every IDR, or with "ps_once" before frame 0's
 *   only (a camera that sends them once, at stream start). "bitrate=N"
 *   (bits/s, or 2000k, 20M; 10k..100M) is its encoder's target (default:
 *   the software encoder's, so the SPS equals the one vcapd's own encoder
 *   writes at that size and rate; 20M at 640x480 gives another level, as
 *   a real camera's SPS differs). "noise" (raw formats and MJPEG only):
 *   fresh noise (luma -16..15, a pure function of seq) over every frame,
 *   content an encoder cannot predict from the frame before (rate control
 *   tests).
 * Default 640x480@30 YUYV, e.g. "test:1280x720@30:YUYV:only". */
#ifndef VC_TESTSRC_H
#define VC_TESTSRC_H

#include <stddef.h>
#include <stdint.h>

#include "common/caps.h"

struct vc_testsrc_opts {
	struct vc_mode mode;
	int still;
	int only; /* offer mode.fourcc alone */
	int h264; /* offer H.264 (the path's format is H264) */
	int ps_once; /* H.264: SPS/PPS with frame 0 only */
	uint32_t bitrate; /* H.264: the encoder's target, 0 = default */
	int noise; /* fresh noise on every frame: content hard to compress */
};

/* Parses a "test[:...]" path. Returns 0, or -EINVAL (not a test path, bad
 * option, unknown or unsupported format) with the reason in why[why_len]
 * (NULL: no reason wanted; "" on success). */
int vc_testsrc_parse(const char *path, struct vc_testsrc_opts *o, char *why, size_t why_len);

/* Renders frame `seq` of mode m into the memory planes mem[] laid out as
 * vc_fmt_geometry(fmt, w, h, 0) says (fmt: vc_capture_fmt(m->fourcc));
 * bytesused[] receives the valid bytes (MJPEG and H.264: the length in
 * mem[0], capacity cap[0]). H.264 is what a source with SPS/PPS before
 * every IDR gives (no ps_once), encoded from the start of seq's GOP (up to
 * a second of encodes). Thread-safe (own scratch); slow: for tests. 0 or
 * -errno. */
int vc_testsrc_render(const struct vc_mode *m, uint64_t seq, uint8_t *const mem[3],
		      const size_t cap[3], size_t bytesused[3]);

/* Frames first .. first+n-1 of o->mode as the source opened with options o
 * gives them (H.264: its bitrate and ps_once; still aside), in order, to cb
 * (mem and used valid during the call; a non-zero return stops and is
 * returned). One encoder runs through the frames of an H.264 GOP: for
 * tools that need many frames. 0 or -errno. */
typedef int (*vc_testsrc_frame_cb)(void *opaque, uint64_t seq, uint8_t *const mem[3],
				   const size_t used[3]);
int vc_testsrc_render_run(const struct vc_testsrc_opts *o, uint64_t first, uint64_t n,
			  vc_testsrc_frame_cb cb, void *opaque);

#endif
