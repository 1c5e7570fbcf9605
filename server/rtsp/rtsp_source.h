/* The RTSP server's one door into the stream core (server/stream/): an
 * RTSP session is a stream client of an H.264 output like /stream.h264's,
 * decided by the same stream_decide (budget, per-address shares, policy),
 * sharing the output (one encoder) with HTTP clients of the same picture
 * and following the same key-frame rules (h264_out.h). Loop thread only. */
#ifndef VC_RTSP_SOURCE_H
#define VC_RTSP_SOURCE_H

#include <stddef.h>
#include <stdint.h>

struct vc_streams;
struct vc_frame;
struct sockaddr;
struct rtsp_source;

struct rtsp_source_cbs {
	/* the parameter sets are known now (rtsp_source_ps) */
	void (*ps)(void *opaque);
	/* an access unit to send (playing only): 0, or -ENOBUFS when the
	 * client cannot take it (then it waits for the next IDR, counted) */
	int (*au)(void *opaque, const struct vc_frame *f);
	/* the stream core ended the stream (camera gone, budget, shutdown):
	 * called from a deferred event, the source may be closed there */
	void (*end)(void *opaque);
};

/* Opens a source for camera `cam` ("" = the first) with the query string of
 * the URL (NULL = none): 0, or the RTSP status it is refused with (400, 404,
 * 453 over the budget, 503) and why in err. */
int rtsp_source_open(struct vc_streams *s, const char *cam, const char *query,
		     const struct sockaddr *peer, const char *peer_name,
		     const struct rtsp_source_cbs *cbs, void *opaque, struct rtsp_source **out,
		     char *err, size_t errlen);
/* The SPS and PPS (NAL units with header) of the stream, once known: 0, or
 * -EAGAIN before the first IDR came. */
int rtsp_source_ps(const struct rtsp_source *src, const uint8_t **sps, size_t *sps_len,
		   const uint8_t **pps, size_t *pps_len);
/* Starts (from an IDR: the kept GOP or a forced one) or stops sending. */
void rtsp_source_play(struct rtsp_source *src, int on);
/* Frames sent and skipped so far. */
void rtsp_source_counts(const struct rtsp_source *src, uint64_t *frames, uint64_t *skipped);
void rtsp_source_close(struct rtsp_source *src);

#endif
