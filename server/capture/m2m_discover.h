/* Finding memory-to-memory (M2M) devices: every /dev/video* node whose
 * device_caps say VIDEO_M2M or VIDEO_M2M_MPLANE, with the formats of both
 * queues (VIDIOC_ENUM_FMT) and its roles (common/m2m.h). Device I/O goes
 * through a small open/ioctl/close table so a test feeds fake nodes.
 *
 * Only discovery: server/encode/m2m_enc.c drives an encoder, and
 * server/stream/hwenc.c picks one per camera from this list; /api/status
 * lists them and the encoder each camera uses. */
#ifndef VC_M2M_DISCOVER_H
#define VC_M2M_DISCOVER_H

#include <stddef.h>

#include "common/m2m.h"

struct vc_m2m_io {
	int (*open)(void *opaque, const char *path);                    /* fd, or -errno */
	int (*ioctl)(void *opaque, int fd, unsigned long req, void *arg); /* 0, or -errno */
	void (*close)(void *opaque, int fd);
	void *opaque;
};

/* The real device's I/O (opaque unused): open O_RDWR | O_NONBLOCK, ioctl
 * retried on EINTR, both -errno on failure; also the encoder session's
 * (server/encode/m2m_enc.c). */
int vc_m2m_sys_open(void *opaque, const char *path);
int vc_m2m_sys_ioctl(void *opaque, int fd, unsigned long req, void *arg);
void vc_m2m_sys_close(void *opaque, int fd);

/* QUERYCAP and ENUM_FMT on both queues of path into *out (zeroed first),
 * roles classified. io NULL = the real device. Returns 1 for an M2M node, 0
 * for any other node, or -errno from open/QUERYCAP. */
int vc_m2m_probe(const struct vc_m2m_io *io, const char *path, struct vc_m2m_node *out);

/* Every M2M node among dev_dir's video* entries (dev_dir NULL = "/dev"),
 * ordered by number. *out is malloc'ed (free()), NULL with *n 0 when none.
 * Nodes that cannot be opened are skipped with a log line. Returns 0 or
 * -ENOMEM. */
int vc_m2m_scan(const struct vc_m2m_io *io, const char *dev_dir, struct vc_m2m_node **out,
		size_t *n);

/* The daemon's current list, rescanned at start and on hotplug. Loop thread
 * only. */
struct vc_m2m_list {
	struct vc_m2m_node *nodes;
	size_t n;
	int scanned; /* a scan has run: the first one logs even an empty list */
};

/* Replaces l's nodes by a fresh scan of /dev; on failure l is kept.
 * Logs each node found (once per change of the list). Returns 0 or -ENOMEM. */
int vc_m2m_list_rescan(struct vc_m2m_list *l);
void vc_m2m_list_clear(struct vc_m2m_list *l);

#endif
