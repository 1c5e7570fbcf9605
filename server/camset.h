/* The camera set: which cameras the daemon serves and where each comes
 * from (--device, a [camera] section, discovery). It adds, reopens in place
 * and removes cameras at run time: a SIGHUP's new [camera] sections, a
 * device plugged in (zero config), the test pattern making way for a real
 * camera; and it applies a config's control lines whenever a camera's
 * source (re)opens. server/main.c keeps the command line and the signals.
 * Loop thread only. */
#ifndef VC_CAMSET_H
#define VC_CAMSET_H

#include <stddef.h>

#include "common/conf.h"
#include "server/capture/capture.h"
#include "server/cli.h"
#include "server/stream/stream.h"

#define VC_CAMSET_MAX VC_CLI_MAX_CAMS /* cameras at most (as many as --device) */

struct event_base;
struct vc_camset;

/* An empty set on base. conf is the config the daemon runs with (NULL:
 * none); the caller owns it and keeps it alive, and passes the next one to
 * vc_camset_reload. 0 or -ENOMEM. */
int vc_camset_new(struct event_base *base, const struct vc_conf *conf, struct vc_camset **out);

/* The cameras at start: one per --device in cli (ids "0".."n-1", with their
 * per-camera flags; std, dv_timings and control lines of a [camera] naming
 * the same device), else the config's [camera] sections, else every capture
 * device found (or the test pattern); flags before the first --device apply
 * to every camera, also ones added later. cli stays the caller's and must
 * outlive cs. 0 or -errno (logged). */
int vc_camset_start(struct vc_camset *cs, const struct vc_cli *cli);

/* The cameras, and where their count lives: both stay valid while cs
 * lives, and follow adds and removes (the compatibility routes read them). */
struct vc_cam *const *vc_camset_cams(const struct vc_camset *cs, const size_t **n);

/* From now on cameras added, replaced or removed are served (or no longer)
 * by s. */
void vc_camset_serve(struct vc_camset *cs, struct vc_streams *s);

/* Starts the hotplug watch (a failure is logged: cameras then retry on
 * their backoff) and, with a config, the control-line tick. changed(opaque)
 * runs when hotplug changed the set. 0 or -ENOMEM. */
int vc_camset_watch(struct vc_camset *cs, void (*changed)(void *opaque), void *opaque);

/* SIGHUP's camera part, before the caller frees the old config: [camera]
 * sections that went are removed, changed ones reopened in place (only
 * their control lines changed: set again, no reopen), new ones added,
 * unchanged ones untouched; with --device the flags keep deciding. nc is
 * the running config afterwards. */
void vc_camset_reload(struct vc_camset *cs, const struct vc_conf *nc);

/* The memory-to-memory devices found (scanned by vc_camset_watch and again
 * on each hotplug event; a removal alone is not seen until the next event).
 * The pointer stays valid until vc_camset_free; the contents change on
 * rescan. Loop thread only. */
struct vc_m2m_list;
const struct vc_m2m_list *vc_camset_m2m(const struct vc_camset *cs);

/* The daemon is stopping: hotplug no longer adds or reopens cameras. */
void vc_camset_stopping(struct vc_camset *cs);

/* Closes every camera; after the streams are freed. NULL is a no-op. */
void vc_camset_free(struct vc_camset *cs);

#endif
