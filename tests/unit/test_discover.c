/* Stable names and the hotplug watch on a fake /dev in a temporary
 * directory (the device list itself needs real nodes: the vivid VM checks
 * it, tests/vm/boot_vivid.sh). */
#include <errno.h>
#include <event2/event.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "server/capture/discover.h"

static char root[256];

static void path(char *out, const char *rel)
{
	snprintf(out, PATH_MAX, "%s/%s", root, rel);
}

static void touch(const char *rel)
{
	char p[PATH_MAX];
	path(p, rel);
	FILE *f = fopen(p, "w");
	if (f)
		fclose(f);
}

static void link_to(const char *target, const char *rel)
{
	char p[PATH_MAX];
	path(p, rel);
	if (symlink(target, p) < 0)
		perror(p);
}

static void mkd(const char *rel)
{
	char p[PATH_MAX];
	path(p, rel);
	mkdir(p, 0755);
}

static void stable_names(void)
{
	struct vc_dev_info info;
	char node[PATH_MAX], want[PATH_MAX], got[PATH_MAX];

	touch("video3");
	touch("video4");
	mkd("v4l");
	mkd("v4l/by-id");
	mkd("v4l/by-path");
	link_to("../../video3", "v4l/by-id/usb-Cam_Z-video-index1");
	link_to("../../video3", "v4l/by-id/usb-Cam_A-video-index0");
	link_to("../../video4", "v4l/by-id/usb-Cam_B-video-index0");
	link_to("../../video3", "v4l/by-path/pci-0000:00:14.0-usb-0:1:1.0-video-index0");
	path(node, "video3");

	memset(&info, 0xff, sizeof(info));
	CHECK(vc_discover_names(root, node, &info) == 0, "names");
	path(want, "v4l/by-id/usb-Cam_A-video-index0");
	CHECK(strcmp(info.by_id, want) == 0, "by_id %s", info.by_id);
	CHECK(strcmp(info.stable, want) == 0, "stable %s", info.stable);
	path(want, "v4l/by-path/pci-0000:00:14.0-usb-0:1:1.0-video-index0");
	CHECK(strcmp(info.by_path, want) == 0, "by_path %s", info.by_path);

	/* no links: the node itself is the name */
	touch("video5");
	path(node, "video5");
	CHECK(vc_discover_names(root, node, &info) == 0, "names");
	CHECK(info.by_id[0] == 0 && info.by_path[0] == 0, "no links");
	CHECK(strcmp(info.stable, node) == 0, "stable %s", info.stable);

	/* resolve: link -> node; a dangling link or missing node -> -ENOENT */
	path(want, "v4l/by-id/usb-Cam_B-video-index0");
	CHECK(vc_discover_resolve(want, got, sizeof(got)) == 0, "resolve");
	CHECK(strcmp(got + strlen(got) - 7, "/video4") == 0, "resolved %s", got);
	link_to("../../video9", "v4l/by-id/usb-Gone-video-index0");
	path(want, "v4l/by-id/usb-Gone-video-index0");
	CHECK(vc_discover_resolve(want, got, sizeof(got)) == -ENOENT, "dangling");
	CHECK(vc_discover_resolve(want, got, 4) == -ENOENT, "dangling, short buffer");
	path(want, "video4");
	CHECK(vc_discover_resolve(want, got, 4) == -ENAMETOOLONG, "short buffer");
	CHECK(vc_discover_names(root, "/nonexistent/video0", &info) == -ENOENT, "missing node");

	/* regular files are not devices: the list skips them */
	struct vc_dev_info *list = (void *)1;
	size_t n = 99;
	CHECK(vc_discover_list_at(root, &list, &n) == 0 && n == 0 && list == NULL,
	      "list of non-devices: %zu", n);
}

struct hp {
	struct event_base *base;
	int calls;
};

static void on_hotplug(void *opaque)
{
	struct hp *h = opaque;
	h->calls++;
	event_base_loopbreak(h->base);
}

/* Runs the loop until a callback or ms elapse. */
static void run_for(struct hp *h, int ms)
{
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
	event_base_loopexit(h->base, &tv);
	event_base_dispatch(h->base);
}

static void hotplug(void)
{
	struct hp h = {.base = event_base_new()};
	struct vc_hotplug *w = NULL;
	char sub[PATH_MAX];

	mkd("hp");
	path(sub, "hp");
	CHECK(vc_hotplug_new(h.base, sub, on_hotplug, &h, &w) == 0, "new");
	if (!w) {
		event_base_free(h.base);
		return;
	}
	/* something that is not a video node: nothing */
	touch("hp/ttyS0");
	run_for(&h, 300);
	CHECK(h.calls == 0, "calls %d after ttyS0", h.calls);
	/* a node and its burst of changes: one call */
	touch("hp/video7");
	char p[PATH_MAX];
	path(p, "hp/video7");
	chmod(p, 0660);
	run_for(&h, 2000);
	CHECK(h.calls == 1, "calls %d after video7", h.calls);
	run_for(&h, 300);
	CHECK(h.calls == 1, "coalesced: calls %d", h.calls);
	/* the by-id directory appears with the first USB camera, then links
	 * land in it: both are seen */
	mkd("hp/v4l");
	mkd("hp/v4l/by-id");
	run_for(&h, 2000);
	CHECK(h.calls == 2, "calls %d after v4l/by-id", h.calls);
	link_to("../../video7", "hp/v4l/by-id/usb-Cam-video-index0");
	run_for(&h, 2000);
	CHECK(h.calls == 3, "calls %d after a by-id link", h.calls);
	vc_hotplug_free(w);
	vc_hotplug_free(NULL);

	CHECK(vc_hotplug_new(h.base, "/nonexistent/dev", on_hotplug, &h, &w) == -ENOENT,
	      "missing dir");
	event_base_free(h.base);
}

int main(void)
{
	snprintf(root, sizeof(root), "%s/vc-discover.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	RUN("discover", stable_names);
	RUN("discover", hotplug);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup of %s failed\n", root);
	CHECK_EXIT();
}
