/* The V4L2 source's lowest layer (see v4l2_int.h): the ioctl with its
 * retry and "device gone" errors, the query idiom, and driver name fields.
 * Every other v4l2_*.c part calls down into this one; it calls none of
 * them. */
#include <errno.h>
#include <libv4l2.h>
#include <stddef.h>
#include <string.h>

#include "server/capture/v4l2_int.h"
#include "server/capture/v4l2src.h"

int v4l2_xioctl(struct v4l2src *d, unsigned long req, void *arg)
{
	int r;
	do {
		r = v4l2_ioctl(d->fd, req, arg);
	} while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : 0;
}

int v4l2_gone(int err)
{
	return (err == -ENODEV || err == -EIO || err == -ENXIO) ? -ENODEV : err;
}

/* The structs v4l2_query() serves: each starts with the one field it sets. */
_Static_assert(offsetof(struct v4l2_format, type) == 0, "type first");
_Static_assert(offsetof(struct v4l2_streamparm, type) == 0, "type first");
_Static_assert(offsetof(struct v4l2_query_ext_ctrl, id) == 0, "id first");
_Static_assert(offsetof(struct v4l2_queryctrl, id) == 0, "id first");
_Static_assert(offsetof(struct v4l2_input, index) == 0, "index first");
_Static_assert(offsetof(struct v4l2_standard, index) == 0, "index first");
_Static_assert(offsetof(struct v4l2_enum_dv_timings, index) == 0, "index first");
_Static_assert(offsetof(struct v4l2_dv_timings, type) == 0, "type first");

int v4l2_query(struct v4l2src *d, unsigned long req, void *arg, size_t size, uint32_t first)
{
	memset(arg, 0, size);
	memcpy(arg, &first, sizeof(first));
	return v4l2_xioctl(d, req, arg);
}

void vc_v4l2_name(char *dst, size_t n, const void *src, size_t srcn)
{
	size_t l = strnlen(src, srcn);
	if (l >= n)
		l = n - 1;
	memcpy(dst, src, l);
	dst[l] = 0;
}
