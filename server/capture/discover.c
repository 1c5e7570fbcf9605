/* V4L2 capture device discovery, stable names (by-id/by-path links) and
 * the inotify hotplug watch of server/capture/discover.h. */
#define LOG_PREFIX "discover: "
#include "common/log.h"

#include <dirent.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/videodev2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "server/capture/discover.h"
#include "server/capture/v4l2src.h"

/* "video12" -> 12; -1 for any other name. */
static int video_index(const char *name)
{
	if (strncmp(name, "video", 5) != 0 || !name[5])
		return -1;
	long v = 0;
	for (const char *p = name + 5; *p; p++) {
		if (*p < '0' || *p > '9' || v > 100000)
			return -1;
		v = v * 10 + (*p - '0');
	}
	return (int)v;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* The link in dir (a by-id or by-path directory) resolving to node_real,
 * into out (n bytes): "-index0" first, else the smallest name. */
static void find_link(const char *dir, const char *node_real, int prefer_index0, char *out,
		      size_t n)
{
	DIR *d = opendir(dir);
	char best[NAME_MAX + 1] = "";
	int best_index0 = 0;
	struct dirent *e;

	out[0] = 0;
	if (!d)
		return;
	while ((e = readdir(d))) {
		char p[PATH_MAX], real[PATH_MAX];
		if (e->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) >= sizeof(p))
			continue;
		if (!realpath(p, real) || strcmp(real, node_real) != 0)
			continue;
		int i0 = prefer_index0 && ends_with(e->d_name, "-index0");
		if (!best[0] || (i0 && !best_index0) ||
		    (i0 == best_index0 && strcmp(e->d_name, best) < 0)) {
			snprintf(best, sizeof(best), "%s", e->d_name);
			best_index0 = i0;
		}
	}
	closedir(d);
	if (best[0] && (size_t)snprintf(out, n, "%s/%s", dir, best) >= n)
		out[0] = 0;
}

int vc_discover_names(const char *dev_dir, const char *node, struct vc_dev_info *info)
{
	char real[PATH_MAX], dir[PATH_MAX];
	if (!realpath(node, real))
		return -errno;
	snprintf(dir, sizeof(dir), "%s/v4l/by-id", dev_dir);
	find_link(dir, real, 1, info->by_id, sizeof(info->by_id));
	snprintf(dir, sizeof(dir), "%s/v4l/by-path", dev_dir);
	find_link(dir, real, 1, info->by_path, sizeof(info->by_path));
	const char *s = info->by_id[0] ? info->by_id : info->by_path[0] ? info->by_path : node;
	snprintf(info->stable, sizeof(info->stable), "%s", s);
	return 0;
}

int vc_discover_resolve(const char *path, char *node, size_t n)
{
	char real[PATH_MAX];
	if (!realpath(path, real))
		return -errno;
	if (strlen(real) >= n)
		return -ENAMETOOLONG;
	memcpy(node, real, strlen(real) + 1);
	return 0;
}

/* QUERYCAP on node; 1 when it captures video, 0 when not, -errno. */
static int probe(const char *node, struct vc_dev_info *info)
{
	struct v4l2_capability cap;
	int fd = open(node, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	memset(&cap, 0, sizeof(cap));
	int r = ioctl(fd, VIDIOC_QUERYCAP, &cap);
	int e = errno;
	close(fd);
	if (r < 0)
		return -e;
	uint32_t caps = (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps
								 : cap.capabilities;
	if (!(caps & (V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_VIDEO_CAPTURE_MPLANE)))
		return 0;
	/* memory-to-memory codecs/scalers also say capture: they are not cameras */
	if (caps & (V4L2_CAP_VIDEO_M2M | V4L2_CAP_VIDEO_M2M_MPLANE | V4L2_CAP_VIDEO_OUTPUT |
		    V4L2_CAP_VIDEO_OUTPUT_MPLANE))
		return 0;
	info->device_caps = caps;
	info->mplane = !(caps & V4L2_CAP_VIDEO_CAPTURE);
	vc_v4l2_name(info->driver, sizeof(info->driver), cap.driver, sizeof(cap.driver));
	vc_v4l2_name(info->card, sizeof(info->card), cap.card, sizeof(cap.card));
	vc_v4l2_name(info->bus, sizeof(info->bus), cap.bus_info, sizeof(cap.bus_info));
	return 1;
}

struct node {
	int index;
	char name[NAME_MAX + 1];
};

static int cmp_node(const void *a, const void *b)
{
	const struct node *x = a, *y = b;
	return (x->index > y->index) - (x->index < y->index);
}

int vc_discover_list_at(const char *dev_dir, struct vc_dev_info **out, size_t *n)
{
	struct node *nodes = NULL;
	size_t n_nodes = 0;
	struct dirent *e;
	DIR *d;

	*out = NULL;
	*n = 0;
	d = opendir(dev_dir);
	if (!d) {
		log_warn("%s: %s", dev_dir, strerror(errno));
		return 0;
	}
	while ((e = readdir(d))) {
		int idx = video_index(e->d_name);
		if (idx < 0)
			continue;
		struct node *nn = realloc(nodes, (n_nodes + 1) * sizeof(*nn));
		if (!nn) {
			free(nodes);
			closedir(d);
			return -ENOMEM;
		}
		nodes = nn;
		nodes[n_nodes].index = idx;
		snprintf(nodes[n_nodes].name, sizeof(nodes[n_nodes].name), "%s", e->d_name);
		n_nodes++;
	}
	closedir(d);
	if (n_nodes)
		qsort(nodes, n_nodes, sizeof(*nodes), cmp_node);

	struct vc_dev_info *list = n_nodes ? calloc(n_nodes, sizeof(*list)) : NULL;
	if (n_nodes && !list) {
		free(nodes);
		return -ENOMEM;
	}
	size_t k = 0;
	for (size_t i = 0; i < n_nodes; i++) {
		struct vc_dev_info *info = &list[k];
		memset(info, 0, sizeof(*info));
		if ((size_t)snprintf(info->path, sizeof(info->path), "%s/%s", dev_dir,
				     nodes[i].name) >= sizeof(info->path))
			continue;
		int r = probe(info->path, info);
		if (r < 0) {
			log_info("%s: %s", info->path, strerror(-r));
			continue;
		}
		if (r == 0)
			continue;
		vc_discover_names(dev_dir, info->path, info);
		k++;
	}
	free(nodes);
	if (!k) {
		free(list);
		list = NULL;
	}
	*out = list;
	*n = k;
	return 0;
}

int vc_discover_list(struct vc_dev_info **out, size_t *n)
{
	return vc_discover_list_at("/dev", out, n);
}

/* ---- hotplug ---------------------------------------------------------- */

enum { W_DEV, W_V4L, W_BYID, W_BYPATH, W_N };

struct vc_hotplug {
	int fd;
	int wd[W_N];
	char dir[W_N][PATH_MAX];
	struct event *ev, *timer;
	vc_hotplug_cb cb;
	void *opaque;
};

/* Adds the watches that are missing (by-id appears only with the first
 * USB camera). inotify_add_watch on a watched path returns the same wd. */
static void arm(struct vc_hotplug *h)
{
	static const uint32_t mask[W_N] = {
		IN_CREATE | IN_ATTRIB | IN_MOVED_TO,
		IN_CREATE | IN_MOVED_TO,
		IN_CREATE | IN_MOVED_TO | IN_ATTRIB,
		IN_CREATE | IN_MOVED_TO | IN_ATTRIB,
	};
	for (int i = 0; i < W_N; i++) {
		if (h->wd[i] >= 0)
			continue;
		h->wd[i] = inotify_add_watch(h->fd, h->dir[i], mask[i] | IN_ONLYDIR);
		if (h->wd[i] < 0 && errno != ENOENT && errno != ENOTDIR)
			log_warn("inotify watch %s: %s", h->dir[i], strerror(errno));
	}
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct vc_hotplug *h = arg;
	(void)fd;
	(void)what;
	arm(h); /* a directory created in the burst */
	h->cb(h->opaque);
}

static void on_inotify(evutil_socket_t fd, short what, void *arg)
{
	struct vc_hotplug *h = arg;
	/* aligned for struct inotify_event, as inotify(7) asks */
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int relevant = 0;
	(void)what;

	for (;;) {
		ssize_t len = read(fd, buf, sizeof(buf));
		if (len <= 0)
			break;
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *e = (const struct inotify_event *)p;
			p += sizeof(*e) + e->len;
			if (e->mask & IN_IGNORED) { /* its directory went away */
				for (int i = 0; i < W_N; i++)
					if (h->wd[i] == e->wd)
						h->wd[i] = -1;
				continue;
			}
			if (e->mask & IN_Q_OVERFLOW) {
				relevant = 1;
				continue;
			}
			const char *name = e->len ? e->name : "";
			if (e->wd == h->wd[W_DEV])
				relevant |= video_index(name) >= 0 || strcmp(name, "v4l") == 0;
			else if (e->wd == h->wd[W_V4L] || e->wd == h->wd[W_BYID] ||
				 e->wd == h->wd[W_BYPATH])
				relevant = 1;
		}
	}
	if (relevant) {
		arm(h);
		if (!evtimer_pending(h->timer, NULL)) {
			struct timeval tv = {0, 100 * 1000};
			evtimer_add(h->timer, &tv);
		}
	}
}

int vc_hotplug_new(struct event_base *base, const char *dev_dir, vc_hotplug_cb cb,
		   void *opaque, struct vc_hotplug **out)
{
	struct vc_hotplug *h;
	int e;

	if (!dev_dir)
		dev_dir = "/dev";
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->cb = cb;
	h->opaque = opaque;
	snprintf(h->dir[W_DEV], PATH_MAX, "%s", dev_dir);
	snprintf(h->dir[W_V4L], PATH_MAX, "%s/v4l", dev_dir);
	snprintf(h->dir[W_BYID], PATH_MAX, "%s/v4l/by-id", dev_dir);
	snprintf(h->dir[W_BYPATH], PATH_MAX, "%s/v4l/by-path", dev_dir);
	for (int i = 0; i < W_N; i++)
		h->wd[i] = -1;
	h->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (h->fd < 0) {
		e = -errno;
		log_error("inotify_init1: %s", strerror(errno));
		free(h);
		return e;
	}
	arm(h);
	if (h->wd[W_DEV] < 0) {
		e = -ENOENT;
		log_error("cannot watch %s", dev_dir);
		goto fail;
	}
	h->ev = event_new(base, h->fd, EV_READ | EV_PERSIST, on_inotify, h);
	h->timer = evtimer_new(base, on_timer, h);
	if (!h->ev || !h->timer || event_add(h->ev, NULL) < 0) {
		e = -ENOMEM;
		goto fail;
	}
	*out = h;
	return 0;
fail:
	if (h->ev)
		event_free(h->ev);
	if (h->timer)
		event_free(h->timer);
	close(h->fd);
	free(h);
	return e;
}

void vc_hotplug_free(struct vc_hotplug *h)
{
	if (!h)
		return;
	event_free(h->ev);
	event_free(h->timer);
	close(h->fd);
	free(h);
}
