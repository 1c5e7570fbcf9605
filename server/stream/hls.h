/* Private to server/stream/: HLS sessions (issue 24). A session is one
 * reader of an H.264 output (a sink client, client_sink_new: the same
 * output, encoder, budget and mode choice as /stream.mp4) that cuts the
 * access units into fMP4 segments at IDRs (common/mp4.h: the muxer of
 * /stream.mp4), each about one GOP long, and keeps the last HLS_WINDOW of
 * them in memory (counted as "parts" in the frame_memory budget). It lives
 * while its playlist or segments are fetched: HLS_LINGER_TD target
 * durations after the last request it is freed (hls_tick). No MHD here:
 * hls_http.c answers the requests. Loop thread only. */
#ifndef VC_STREAM_HLS_H
#define VC_STREAM_HLS_H

#include <stddef.h>
#include <stdint.h>

#include "common/negotiate.h"

struct hls;
struct output;
struct sockaddr;
struct vc_streams;

/* Segments listed in the playlist; older ones answer 404. Six 1 s
 * segments: players start 3 back from the live edge and may still be
 * fetching the one before it. */
#define HLS_WINDOW 6
/* A session nobody fetched from for this many target durations is freed
 * (a player refreshes the playlist about once per target duration). */
#define HLS_LINGER_TD 3

/* The session of hub output o for the resolved request req, made (as a
 * sink client of o) when none exists. NULL on ENOMEM. */
struct hls *hls_get(struct vc_streams *s, struct output *o, const struct vc_request *req,
		    const char *peer, const struct sockaddr *addr, int dflt);
/* The existing session for cam's request req (resolved, as stream_decide
 * leaves it), or NULL. */
struct hls *hls_find(struct vc_streams *s, const void *cam, const struct vc_request *req);
/* A request for it came now: it lingers from here. */
void hls_touch(struct hls *x);
/* Number of finished segments held (0 before the first one is cut). */
unsigned hls_segments(const struct hls *x);
/* The playlist (m3u8) into buf, segment and init URIs being
 * "<base>seg=N" and "<base>init=G" (base: "stream.m4s?QUERY&"). Its
 * length, or -E2BIG when it does not fit. */
int hls_playlist(const struct hls *x, const char *base, char *buf, size_t cap);
/* Segment seq's bytes (borrowed; valid until the loop runs again), or NULL
 * when it is not in the window. */
const uint8_t *hls_segment(const struct hls *x, uint64_t seq, size_t *len);
/* Init segment generation gen (EXT-X-MAP), or NULL when it is not the
 * current one or one still referred to by the window. */
const uint8_t *hls_init(const struct hls *x, uint32_t gen, size_t *len);

/* Registers GET /stream.m3u8 and /stream.m4s (class view; hls_http.c). */
struct vc_http;
int hls_routes(struct vc_streams *s, struct vc_http *http);

/* The gc tick: frees the sessions that lapsed or whose stream ended. */
void hls_tick(struct vc_streams *s);
/* Frees every session (shutdown, vc_streams_free; before the hubs). */
void hls_free_all(struct vc_streams *s);

#endif
