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
 * of timestamps; call once at start. */
void vc_log_init(void);

/* Parses "error", "warn", "info", "debug"; returns the level or -1. */
int vc_log_parse_level(const char *s);

void vc_log_write(int level, const char *prefix, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Each .c defines LOG_PREFIX ("dev:", "http:") before including this. */
#ifndef LOG_PREFIX
#define LOG_PREFIX ""
#endif

#define vc_log(level, ...)                                                    \
	do {                                                                  \
		if ((level) <= vc_log_level)                                  \
			vc_log_write((level), LOG_PREFIX, __VA_ARGS__);       \
	} while (0)
#define log_error(...) vc_log(VC_LOG_ERROR, __VA_ARGS__)
#define log_warn(...) vc_log(VC_LOG_WARN, __VA_ARGS__)
#define log_info(...) vc_log(VC_LOG_INFO, __VA_ARGS__)
#define log_debug(...) vc_log(VC_LOG_DEBUG, __VA_ARGS__)

#endif
