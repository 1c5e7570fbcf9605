/* The test-pattern source (vc_src_test in server/capture/source.h): moving colour
 * bars, a frame counter and the stream time, in any raw format of the table
 * that the converter can write, or MJPEG. Every frame is a pure function of
 * (format, size, frame interval, sequence number), so tests can render the
 * frame they expect and compare bytes.
 *
 * Path: "test" or "test:" followed by ':'-separated options in any order:
 *   WxH (size), WxH@FPS or @FPS (rate), a format name or fourcc (YUYV, NV12,
 *   RGB3, MJPG...), "still" (a frozen picture: frame 0, rendered once),
 *   "only" (the caps list just that one format and set_mode keeps it, like
 *   a YUYV-only webcam, so clients wanting MJPEG get an encode).
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
};

/* Parses a "test[:...]" path. Returns 0, or -EINVAL (not a test path, bad
 * option, unknown or unsupported format) with the reason in why[why_len]
 * (NULL: no reason wanted; "" on success). */
int vc_testsrc_parse(const char *path, struct vc_testsrc_opts *o, char *why, size_t why_len);

/* Renders frame `seq` of mode m (still: always frame 0) into the memory
 * planes mem[] laid out as vc_fmt_geometry(fmt, w, h, 0) says; bytesused[]
 * receives the valid bytes (MJPEG: the JPEG length in mem[0], capacity
 * cap[0]). Thread-safe (own scratch); slow: for tests. 0 or -errno. */
int vc_testsrc_render(const struct vc_mode *m, uint64_t seq, uint8_t *const mem[3],
		      const size_t cap[3], size_t bytesused[3]);

#endif
