/* Finding V4L2 capture devices and naming them stably: the list of
 * /dev/video* nodes that capture video (device_caps VIDEO_CAPTURE or
 * VIDEO_CAPTURE_MPLANE; metadata, output and codec nodes are left out), each
 * with the /dev/v4l/by-id or by-path link that names it across reboots, and
 * a hotplug watch (inotify on /dev and /dev/v4l/by-id|by-path) that tells the
 * loop when a node appears, so an ABSENT camera is retried at once instead
 * of at its next backoff. */
#ifndef VC_DISCOVER_H
#define VC_DISCOVER_H

#include <stddef.h>
#include <stdint.h>

struct event_base;

struct vc_dev_info {
	char path[64];       /* "/dev/video0" */
	char stable[320];    /* by-id link if one points here, else by-path, else path */
	char by_id[320];     /* "" when none */
	char by_path[320];   /* "" when none */
	char driver[16], card[32], bus[32];
	uint32_t device_caps;
	int mplane;          /* capture through the multi-planar API only */
};

/* Every capture node under /dev, ordered by number. *out is malloc'ed
 * (free()), *n its length (0 with *out NULL when there is none). Nodes that
 * cannot be opened (busy is fine: QUERYCAP works on a busy device; no
 * permission is not) are skipped with a log line. Returns 0 or -ENOMEM. */
int vc_discover_list(struct vc_dev_info **out, size_t *n);

/* The same under another root (tests): dev_dir holds video* nodes and
 * v4l/by-id, v4l/by-path. */
int vc_discover_list_at(const char *dev_dir, struct vc_dev_info **out, size_t *n);

/* Fills by_id/by_path/stable for node (e.g. "/dev/video0"): the links under
 * dev_dir/v4l/by-id and by-path that resolve to it. by-id links ending in
 * "-index0" win over other indexes of the same device. Returns 0, or -ENOENT
 * when node does not exist. */
int vc_discover_names(const char *dev_dir, const char *node, struct vc_dev_info *info);

/* Resolves a configured path (a node or a by-id/by-path link) to its node:
 * "/dev/v4l/by-id/usb-X-video-index0" -> "/dev/video2". -ENOENT when the
 * link or node is absent now (a camera unplugged), -ENAMETOOLONG. */
int vc_discover_resolve(const char *path, char *node, size_t n);

/* Hotplug watch. cb(opaque) runs on the loop thread once per burst of
 * changes (udev creates a node, its links and fixes its mode within a few
 * milliseconds: they are coalesced over ~100 ms), whenever a video node or a
 * by-id/by-path link appears or changes its attributes. Removal is not
 * reported: the device's fd tells its user (ENODEV). */
struct vc_hotplug;
typedef void (*vc_hotplug_cb)(void *opaque);

/* dev_dir NULL = "/dev". -errno from inotify (e.g. -EMFILE), or -ENOENT
 * when dev_dir does not exist. */
int vc_hotplug_new(struct event_base *base, const char *dev_dir, vc_hotplug_cb cb,
		   void *opaque, struct vc_hotplug **out);
void vc_hotplug_free(struct vc_hotplug *h); /* NULL is a no-op */

#endif
