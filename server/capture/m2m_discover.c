/* M2M device scan (server/capture/m2m_discover.h): directory walk, QUERYCAP,
 * ENUM_FMT on the OUTPUT and CAPTURE queues, through struct vc_m2m_io. */
#define LOG_PREFIX "m2m:"
#include "common/log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/videodev2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "server/capture/m2m_discover.h"
#include "server/capture/v4l2src.h"

int vc_m2m_sys_open(void *opaque, const char *path)
{
	(void)opaque;
	int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int vc_m2m_sys_ioctl(void *opaque, int fd, unsigned long req, void *arg)
{
	int r;

	(void)opaque;
	do
		r = ioctl(fd, req, arg);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : 0;
}

void vc_m2m_sys_close(void *opaque, int fd)
{
	(void)opaque;
	close(fd);
}

static const struct vc_m2m_io sys_io = { vc_m2m_sys_open, vc_m2m_sys_ioctl, vc_m2m_sys_close,
					 NULL };

/* ENUM_FMT on one queue type until the driver says EINVAL (end of list). */
static size_t enum_fmts(const struct vc_m2m_io *io, int fd, uint32_t type, struct vc_m2m_fmt *out)
{
	size_t n = 0;

	for (uint32_t i = 0; n < VC_M2M_MAX_FMTS; i++) {
		struct v4l2_fmtdesc d;
		memset(&d, 0, sizeof(d));
		d.index = i;
		d.type = type;
		if (io->ioctl(io->opaque, fd, VIDIOC_ENUM_FMT, &d) < 0)
			break;
		out[n].fourcc = d.pixelformat;
		out[n].flags = d.flags;
		n++;
	}
	return n;
}

int vc_m2m_probe(const struct vc_m2m_io *io, const char *path, struct vc_m2m_node *out)
{
	struct v4l2_capability cap;

	if (!io)
		io = &sys_io;
	memset(out, 0, sizeof(*out));
	if ((size_t)snprintf(out->path, sizeof(out->path), "%s", path) >= sizeof(out->path))
		return -ENAMETOOLONG;
	int fd = io->open(io->opaque, path);
	if (fd < 0)
		return fd;
	memset(&cap, 0, sizeof(cap));
	int r = io->ioctl(io->opaque, fd, VIDIOC_QUERYCAP, &cap);
	if (r < 0) {
		io->close(io->opaque, fd);
		return r;
	}
	uint32_t caps = (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps
								 : cap.capabilities;
	if (!(caps & (V4L2_CAP_VIDEO_M2M | V4L2_CAP_VIDEO_M2M_MPLANE))) {
		io->close(io->opaque, fd);
		return 0;
	}
	out->device_caps = caps;
	/* a driver offering both APIs is driven single-planar, as the capture side does */
	out->mplane = !(caps & V4L2_CAP_VIDEO_M2M);
	vc_v4l2_name(out->driver, sizeof(out->driver), cap.driver, sizeof(cap.driver));
	vc_v4l2_name(out->card, sizeof(out->card), cap.card, sizeof(cap.card));
	vc_v4l2_name(out->bus, sizeof(out->bus), cap.bus_info, sizeof(cap.bus_info));
	out->n_out = enum_fmts(io, fd, out->mplane ? V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE
						   : V4L2_BUF_TYPE_VIDEO_OUTPUT, out->out);
	out->n_cap = enum_fmts(io, fd, out->mplane ? V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE
						   : V4L2_BUF_TYPE_VIDEO_CAPTURE, out->cap);
	io->close(io->opaque, fd);
	out->roles = vc_m2m_classify(out);
	return 1;
}

/* "video12" -> 12; -1 for any other name. */
static int video_number(const char *name)
{
	long v = 0;

	if (strncmp(name, "video", 5) != 0 || !name[5])
		return -1;
	for (const char *p = name + 5; *p; p++) {
		if (*p < '0' || *p > '9' || v > 100000)
			return -1;
		v = v * 10 + (*p - '0');
	}
	return (int)v;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* The numbers of dev_dir's video* entries, sorted. */
static int list_numbers(const char *dev_dir, int **out, size_t *n)
{
	DIR *d = opendir(dev_dir);
	struct dirent *e;
	int *v = NULL;

	*out = NULL;
	*n = 0;
	if (!d) {
		log_warn("%s: %s", dev_dir, strerror(errno));
		return 0;
	}
	while ((e = readdir(d))) {
		int k = video_number(e->d_name);
		if (k < 0)
			continue;
		int *nv = realloc(v, (*n + 1) * sizeof(*nv));
		if (!nv) {
			free(v);
			closedir(d);
			*n = 0;
			return -ENOMEM;
		}
		v = nv;
		v[(*n)++] = k;
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_int);
	*out = v;
	return 0;
}

int vc_m2m_scan(const struct vc_m2m_io *io, const char *dev_dir, struct vc_m2m_node **out,
		size_t *n)
{
	int *nums;
	size_t n_nums, k = 0;

	*out = NULL;
	*n = 0;
	if (!dev_dir)
		dev_dir = "/dev";
	if (list_numbers(dev_dir, &nums, &n_nums) < 0)
		return -ENOMEM;
	struct vc_m2m_node *list = n_nums ? calloc(n_nums, sizeof(*list)) : NULL;
	if (n_nums && !list) {
		free(nums);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n_nums; i++) {
		char path[64];
		snprintf(path, sizeof(path), "%s/video%d", dev_dir, nums[i]);
		int r = vc_m2m_probe(io, path, &list[k]);
		if (r < 0)
			log_info("%s: %s", path, strerror(-r));
		if (r > 0)
			k++;
	}
	free(nums);
	if (!k) {
		free(list);
		list = NULL;
	}
	*out = list;
	*n = k;
	return 0;
}

static void log_node(const struct vc_m2m_node *m)
{
	char roles[96] = "";
	size_t o = 0;

	for (unsigned i = 0; i < VC_M2M_ROLE_COUNT; i++)
		if (m->roles & (1u << i))
			o += (size_t)snprintf(roles + o, sizeof(roles) - o, "%s%s", o ? "," : "",
					      vc_m2m_role_name(i));
	log_info("%s: %s (%s), %s API, %zu formats in, %zu out: %s", m->path, m->card, m->driver,
		 m->mplane ? "multi-planar" : "single-planar", m->n_out, m->n_cap,
		 m->roles ? roles : "no role vcapd knows");
}

/* Same nodes, same formats: nothing to log on a hotplug that changed others. */
static int same_list(const struct vc_m2m_list *l, const struct vc_m2m_node *nodes, size_t n)
{
	return l->n == n && (!n || memcmp(l->nodes, nodes, n * sizeof(*nodes)) == 0);
}

int vc_m2m_list_rescan(struct vc_m2m_list *l)
{
	struct vc_m2m_node *nodes;
	size_t n;

	int r = vc_m2m_scan(NULL, NULL, &nodes, &n);
	if (r < 0) {
		log_warn("scan: %s (keeping the last list)", strerror(-r));
		return r;
	}
	if (!l->scanned || !same_list(l, nodes, n)) {
		for (size_t i = 0; i < n; i++)
			log_node(&nodes[i]);
		if (!n)
			log_info("no memory-to-memory device: the CPU encodes");
	}
	free(l->nodes);
	l->nodes = nodes;
	l->n = n;
	l->scanned = 1;
	return 0;
}

void vc_m2m_list_clear(struct vc_m2m_list *l)
{
	free(l->nodes);
	l->nodes = NULL;
	l->n = 0;
}
