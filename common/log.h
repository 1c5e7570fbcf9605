/* Logging: one module, four levels, a short prefix per .c file.
 * The macro checks the level before evaluating its arguments, so a debug
 * line costs one comparison when debug is off. */
#ifndef VC_LOG_H
#define VC_LOG_H

#include <stdarg.h>

enum vc_log_level { VC_LOG_ERROR = 0, VC_LOG_WARN, VC_LOG_INFO, VC_LOG_DEBUG };

/* The process-wide level, set once from the command line or config (and on
 * reload); read by every module. Global because a log level is one per process
 * by nature and passing it everywhere would clutter every signature. */
extern int vc_log_level;

/* Under systemd (JOURNAL_STREAM set) lines get "<N>" priority prefixes instead
 * of timestamps; call once at start. When stderr is a pipe it is reopened
 * non-blocking (a description of our own; a socket, like the journal's, is
 * written with MSG_DONTWAIT): a slow reader costs dropped lines, counted
 * and reported, never a stalled event loop. */
void vc_log_init(void);

/* Parses "error", "warn", "info", "debug"; returns the level or -1. */
int vc_log_parse_level(const char *s);

void vc_log_write(int level, const char *prefix, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Rate limiting for lines a client can cause (a refused request, a bad
 * Host): one vc_log_site per call site (a static made by vc_log_lim),
 * keyed further by client address. In each VC_LOG_LIMIT_WINDOW_S window a
 * site passes at most VC_LOG_LIMIT_SITE lines, and at most
 * VC_LOG_LIMIT_ADDR of them from one address (so one flooder cannot hide
 * the others); the rest are counted and summarised in one line when the
 * window ends: "KIND: N more in the last 10 s (last from ADDR)". */
#define VC_LOG_LIMIT_WINDOW_S 10
#define VC_LOG_LIMIT_SITE 5
#define VC_LOG_LIMIT_ADDR 3
#define VC_LOG_LIMIT_NADDR 8

/* Fields past kind and level belong to log.c (under its mutex). */
struct vc_log_site {
	const char *kind;   /* names the line in the summary */
	int level;
	const char *prefix; /* the caller's LOG_PREFIX, for the summary */
	int linked;         /* on the list vc_log_tick walks */
	struct vc_log_site *next;
	long long win_ms;   /* window start (monotonic ms), while passed + suppressed > 0 */
	unsigned passed, suppressed;
	char last[48];      /* address of the last suppressed line */
	struct {
		char addr[48];
		unsigned n;
	} a[VC_LOG_LIMIT_NADDR];
};

/* Writes the line when site's budget allows (addr: the client, "host:port"
 * or "[v6]:port", the port is ignored; NULL = none), counts it otherwise.
 * Thread-safe. vc_log_limited_at takes the monotonic time in ms (tests). */
void vc_log_limited(struct vc_log_site *site, const char *prefix, const char *addr,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void vc_log_limited_at(struct vc_log_site *site, long long now_ms, const char *prefix,
		       const char *addr, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Ends the windows that are over: writes each site's summary line, and the
 * count of lines dropped because stderr was not writable. The daemon calls
 * it about once a second; a quiet log needs it to say how much was cut. */
void vc_log_tick(void);
void vc_log_tick_at(long long now_ms);
/* Ends every window now (at exit): what was held back is told. */
void vc_log_flush(void);

/* Lines not written because the output (a socket or pipe, written without
 * blocking) was full, since the start. */
unsigned long vc_log_dropped(void);

/* Each .c defines LOG_PREFIX ("dev:", "http:") before including this. */
#ifndef LOG_PREFIX
#define LOG_PREFIX ""
#endif

#define vc_log(level, ...)                                                    \
	do {                                                                  \
		if ((level) <= vc_log_level)                                  \
			vc_log_write((level), LOG_PREFIX, __VA_ARGS__);       \
	} while (0)
/* A rate-limited line of one kind (a string naming it) from addr. */
#define vc_log_lim(lvl, kind_, addr, ...)                                     \
	do {                                                                  \
		/* one per call site: its window and counts live here */      \
		static struct vc_log_site site_ = { .kind = (kind_), .level = (lvl) }; \
		if ((lvl) <= vc_log_level)                                    \
			vc_log_limited(&site_, LOG_PREFIX, (addr), __VA_ARGS__); \
	} while (0)
#define log_error(...) vc_log(VC_LOG_ERROR, __VA_ARGS__)
#define log_warn(...) vc_log(VC_LOG_WARN, __VA_ARGS__)
#define log_info(...) vc_log(VC_LOG_INFO, __VA_ARGS__)
#define log_debug(...) vc_log(VC_LOG_DEBUG, __VA_ARGS__)
#define log_warn_lim(kind, addr, ...) vc_log_lim(VC_LOG_WARN, kind, addr, __VA_ARGS__)
#define log_info_lim(kind, addr, ...) vc_log_lim(VC_LOG_INFO, kind, addr, __VA_ARGS__)

#endif
