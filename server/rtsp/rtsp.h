/* The RTSP server (RFC 2326) on the daemon's event loop: OPTIONS, DESCRIBE,
 * SETUP (RTP/AVP/TCP interleaved, RTP/AVP over UDP unicast), PLAY, PAUSE,
 * TEARDOWN, GET_PARAMETER; one H.264 stream per session from the stream
 * core (rtsp_source.h). rtsp://HOST:PORT/CAMERA?size=..&fps=..&bitrate=..
 * Loop thread only. */
#ifndef VC_RTSP_SERVER_H
#define VC_RTSP_SERVER_H

struct event_base;
struct vc_streams;
struct vc_rtsp;
struct vc_auth;
struct vc_conf;

/* timeout_s: a session without a request or RTCP report for this long is
 * ended (0: 60). auth, conf: where the daemon keeps the current ones
 * (rtsp_auth.h). */
int vc_rtsp_new(struct event_base *base, struct vc_streams *s, unsigned timeout_s,
		struct vc_auth *const *auth, struct vc_conf *const *conf, struct vc_rtsp **out);
/* Listens on addr ("127.0.0.1:8554", "[::]:8554", ":8554"; port 0 = any,
 * the log line says which): 0 or a negative errno (logged). */
int vc_rtsp_listen(struct vc_rtsp *r, const char *addr);
/* Ends every session and stops listening (before vc_streams_free). */
void vc_rtsp_free(struct vc_rtsp *r);

#endif
