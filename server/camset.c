/* The camera set of the daemon (see camset.h): which cameras exist and
 * where they come from. Cameras are added, reopened in place and removed at
 * run time: from the command line, the config's [camera] sections (again on
 * SIGHUP), discovery and hotplug; config control lines are applied whenever
 * a camera's source (re)opens. Loop thread only. */
#define LOG_PREFIX "vcapd:"
#include "server/camset.h"

#include <errno.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/conf_keys.h"
#include "common/log.h"
#include "server/capture/controls.h"
#include "server/capture/discover.h"
#include "server/capture/m2m_discover.h"
#include "server/capture/v4l2src.h"
#include "server/opsconf.h"

/* Where a camera comes from: decides what a reload or a hotplug does to it
 * and which config section its control lines come from. */
enum cam_kind {
	CAM_FLAG,  /* --device (controls: a [camera] naming the same device) */
	CAM_CONF,  /* a [camera] section, by id; reloads add/reopen/remove it */
	CAM_AUTO,  /* zero config: discovered, or the test pattern when none */
};

/* Per camera, parallel to vc_camset.cams[]. */
struct cam_slot {
	enum cam_kind kind;
	int fallback;              /* the zero-config test pattern: a device replaces it */
	int ctl_open;              /* source was open at the last control tick */
	uint64_t ctl_restarts;
};

struct vc_camset {
	struct event_base *base;
	struct vc_cam *cams[VC_CAMSET_MAX];
	size_t n_cams;
	struct cam_slot slot[VC_CAMSET_MAX];
	struct vc_streams *streams; /* NULL until vc_camset_serve */
	const struct vc_conf *conf; /* the running config (the caller's), or NULL */
	const struct vc_cli *cli;  /* the command line (the caller's); NULL before start */
	int flags;                 /* --device given: the flags decide the cameras */
	int zeroconf;              /* cameras are discovered (no --device, no [camera]) */
	int stopping;
	/* wire: hotplug watch, and the tick that applies config control lines
	 * whenever a camera (re)opens */
	struct vc_hotplug *hotplug;
	struct event *ctl_timer;
	struct vc_m2m_list m2m;    /* M2M devices: scanned by watch and on hotplug */
	void (*changed)(void *opaque);
	void *opaque;
};

/* A camera's settings: its section (or what the flags or discovery
 * filled in the same struct), a copy of its own with the flags before any
 * --device on top, except for --device cameras (theirs are already in k).
 * 0 or -ENOMEM. */
static int cam_settings(const struct vc_camset *cs, const struct vc_conf_cam *k,
			enum cam_kind kind, struct vc_conf_cam *out)
{
	int ret = vc_conf_cam_copy(out, k);

	if (ret == 0 && kind != CAM_FLAG && cs->cli &&
	    (ret = vc_cli_apply(&cs->cli->all, out)) < 0)
		vc_conf_cam_clear(out);
	return ret;
}

/* Creates a camera from k (not kept) and serves it (once the streams
 * exist). 0 or -errno, logged. */
static int cam_add(struct vc_camset *cs, const struct vc_conf_cam *k, enum cam_kind kind)
{
	struct vc_conf_cam c;
	struct vc_cam *cam = NULL;
	int ret;

	if (cs->n_cams >= VC_CAMSET_MAX) {
		log_error("camera %s (%s): at most %d cameras", k->name, k->device, VC_CAMSET_MAX);
		return -ENOSPC;
	}
	ret = cam_settings(cs, k, kind, &c);
	if (ret == 0) {
		ret = vc_cam_new(cs->base, &c, &cam);
		vc_conf_cam_clear(&c);
	}
	if (ret == 0 && cs->streams && (ret = vc_streams_add_cam(cs->streams, cam)) < 0)
		vc_cam_free(cam);
	if (ret < 0) {
		log_error("camera %s (%s): %s", k->name, k->device, strerror(-ret));
		return ret;
	}
	cs->cams[cs->n_cams] = cam;
	cs->slot[cs->n_cams] = (struct cam_slot){ .kind = kind };
	cs->n_cams++;
	return 0;
}

/* Stops serving camera i (its streams end) and closes it. */
static void cam_remove(struct vc_camset *cs, size_t i)
{
	if (cs->streams)
		vc_streams_remove_cam(cs->streams, cs->cams[i]);
	vc_cam_free(cs->cams[i]);
	memmove(&cs->cams[i], &cs->cams[i + 1], (cs->n_cams - i - 1) * sizeof(cs->cams[0]));
	memmove(&cs->slot[i], &cs->slot[i + 1], (cs->n_cams - i - 1) * sizeof(cs->slot[0]));
	cs->n_cams--;
}

/* Reopens camera i with new settings in the same place: its clients stay
 * connected. The old device is closed before the new one opens (vc_cam_new
 * opens from the loop). */
static int cam_replace(struct vc_camset *cs, size_t i, const struct vc_conf_cam *k)
{
	struct vc_conf_cam c;
	struct vc_cam *cam = NULL;
	int ret = cam_settings(cs, k, CAM_CONF, &c); /* only config cameras are replaced */

	if (ret == 0) {
		ret = vc_cam_new(cs->base, &c, &cam);
		vc_conf_cam_clear(&c);
	}
	if (ret == 0 && (ret = vc_streams_replace_cam(cs->streams, cs->cams[i], cam)) < 0)
		vc_cam_free(cam);
	if (ret < 0) {
		log_error("camera %s (%s): %s; the old settings stay", k->name, k->device,
			  strerror(-ret));
		return ret;
	}
	vc_cam_free(cs->cams[i]);
	cs->cams[i] = cam;
	cs->slot[i].ctl_open = 0;
	return 0;
}

/* 1 when a camera already serves the device d (same path or link, or a
 * path that resolves to d's node). */
static int cam_serving(const struct vc_camset *cs, const struct vc_dev_info *d)
{
	for (size_t i = 0; i < cs->n_cams; i++) {
		const char *p = vc_cam_path(cs->cams[i]);
		char node[64];

		if (!strcmp(p, d->stable) || !strcmp(p, d->path) ||
		    (vc_discover_resolve(p, node, sizeof(node)) == 0 && !strcmp(node, d->path)))
			return 1;
	}
	return 0;
}

/* The lowest number no camera uses as its id: ids of discovered cameras
 * stay those of a start with the same devices. */
static void free_id(const struct vc_camset *cs, char *id, size_t n)
{
	for (unsigned k = 0;; k++) {
		size_t i = 0;

		snprintf(id, n, "%u", k);
		while (i < cs->n_cams && strcmp(vc_cam_id(cs->cams[i]), id))
			i++;
		if (i == cs->n_cams)
			return;
	}
}

/* Zero config: serves every capture node discover finds that no camera
 * serves yet, named by its by-id/by-path link; the test pattern when there
 * is no camera at all, which makes way for the first device that appears.
 * Unplugged cameras stay listed (ABSENT): they may come back. */
static void discover_add(struct vc_camset *cs, const char *why)
{
	struct vc_dev_info *l = NULL;
	size_t n = 0, fresh = 0;

	if (vc_discover_list(&l, &n) < 0)
		n = 0;
	for (size_t i = 0; i < n; i++)
		fresh += !cam_serving(cs, &l[i]);
	for (size_t i = 0; fresh && i < cs->n_cams; i++)
		if (cs->slot[i].fallback) {
			log_info("%s: a device appeared: the test pattern (camera %s) makes way", why,
				 vc_cam_id(cs->cams[i]));
			cam_remove(cs, i);
			break;
		}
	for (size_t i = 0; i < n; i++) {
		char id[24];
		struct vc_conf_cam k; /* borrows id and the path: cam_add copies */

		if (cam_serving(cs, &l[i]))
			continue;
		free_id(cs, id, sizeof(id));
		vc_conf_cam_init(&k);
		k.name = id;
		k.device = l[i].stable;
		if (cam_add(cs, &k, CAM_AUTO) == 0)
			log_info("%s: serving %s (%s, %s) as camera %s", why, l[i].stable, l[i].path,
				 l[i].card, id);
	}
	free(l);
	if (!cs->n_cams) {
		char id[] = "0", path[] = "test";
		struct vc_conf_cam k; /* borrows id and path: cam_add copies */

		vc_conf_cam_init(&k);
		k.name = id;
		k.device = path;
		log_info("%s and no V4L2 capture device found: serving the test pattern", why);
		if (cam_add(cs, &k, CAM_AUTO) == 0)
			cs->slot[cs->n_cams - 1].fallback = 1;
	}
}

/* Hotplug: a node or by-id/by-path link appeared; an ABSENT camera whose
 * path resolves now reopens at once instead of at its next backoff, and in
 * zero-config mode a new device is served. */
static void on_hotplug(void *opaque)
{
	struct vc_camset *cs = opaque;

	if (cs->stopping)
		return;
	vc_m2m_list_rescan(&cs->m2m);
	for (size_t i = 0; i < cs->n_cams; i++) {
		char node[64];

		if (vc_cam_get_state(cs->cams[i]) != VC_CAM_ABSENT ||
		    vc_discover_resolve(vc_cam_path(cs->cams[i]), node, sizeof(node)) < 0)
			continue;
		log_info("hotplug: %s is back as %s: reopening camera %s", vc_cam_path(cs->cams[i]),
			 node, vc_cam_id(cs->cams[i]));
		vc_cam_poke(cs->cams[i]);
	}
	if (cs->zeroconf) {
		discover_add(cs, "hotplug");
		if (cs->changed)
			cs->changed(cs->opaque);
	}
}

/* How many of c's [camera] sections are served: the first VC_CAMSET_MAX. */
static size_t conf_cams(const struct vc_conf *c)
{
	if (!c)
		return 0;
	if (c->n_cams > VC_CAMSET_MAX)
		log_warn("%zu cameras configured, serving the first %d", c->n_cams, VC_CAMSET_MAX);
	return c->n_cams > VC_CAMSET_MAX ? VC_CAMSET_MAX : c->n_cams;
}

/* SIGHUP, camera part (before cs->conf becomes nc): [camera] sections that
 * went are removed, changed ones reopened in place (only their control lines
 * changed: set again, no reopen), new ones added; unchanged ones are not
 * touched (no gap). With --device the flags keep
 * deciding the cameras; their control lines apply again. */
static void reload_cams(struct vc_camset *cs, const struct vc_conf *nc)
{
	size_t n = conf_cams(nc);

	if (cs->flags) {
		for (size_t i = 0; i < cs->n_cams; i++)
			cs->slot[i].ctl_open = 0;
		return;
	}
	for (size_t i = cs->n_cams; i-- > 0;) {
		const char *id = vc_cam_id(cs->cams[i]);
		const struct vc_conf_cam *ko = cs->conf ? vc_conf_find_cam(cs->conf, id) : NULL;
		const struct vc_conf_cam *kn = vc_conf_find_cam(nc, id);

		if (cs->slot[i].kind != CAM_CONF)
			continue;
		if (!kn || (size_t)(kn - nc->cams) >= n) {
			log_info("reload: camera %s removed", id);
			cam_remove(cs, i);
		} else if (!ko || !vc_conf_cam_same_open(ko, kn)) {
			log_info("reload: camera %s changed: reopening it", id);
			if (cam_replace(cs, i, kn) == 0)
				vc_v4l2_cam_conf(cs->cams[i], kn); /* std, dv_timings */
		} else if (!vc_conf_cam_equal(ko, kn)) {
			/* controls need no reopen: the next control tick sets the
			 * new lines (from nc, cs->conf by then) while it streams */
			log_info("reload: camera %s: control lines changed: applying them", id);
			cs->slot[i].ctl_open = 0;
		}
	}
	if (n && cs->zeroconf) {
		log_info("reload: [camera] sections now decide the cameras (no more discovery)");
		cs->zeroconf = 0;
		for (size_t i = cs->n_cams; i-- > 0;)
			if (cs->slot[i].kind == CAM_AUTO)
				cam_remove(cs, i);
	}
	for (size_t j = 0; j < n; j++) {
		size_t i = 0;

		while (i < cs->n_cams && strcmp(vc_cam_id(cs->cams[i]), nc->cams[j].name))
			i++;
		if (i < cs->n_cams)
			continue;
		if (cam_add(cs, &nc->cams[j], CAM_CONF) == 0) {
			vc_v4l2_cam_conf(cs->cams[cs->n_cams - 1], &nc->cams[j]); /* std, dv_timings */
			log_info("reload: camera %s added (%s)", nc->cams[j].name, nc->cams[j].device);
		}
	}
	if (!n && !cs->zeroconf) {
		cs->zeroconf = 1;
		discover_add(cs, "reload: no [camera] left");
	}
}

void vc_camset_reload(struct vc_camset *cs, const struct vc_conf *nc)
{
	reload_cams(cs, nc);
	cs->conf = nc; /* the control tick reads its lines from now on */
}

/* The [camera] section whose control lines apply to camera i: its own for a
 * config camera; for --device, a section naming the same device (same text,
 * or the same node once links are resolved). */
static const struct vc_conf_cam *cam_section(const struct vc_camset *cs, size_t i)
{
	const char *p = vc_cam_path(cs->cams[i]);
	char node[64], kn[64];

	if (!cs->conf || cs->slot[i].kind == CAM_AUTO)
		return NULL;
	if (cs->slot[i].kind == CAM_CONF)
		return vc_conf_find_cam(cs->conf, vc_cam_id(cs->cams[i]));
	for (size_t j = 0; j < cs->conf->n_cams; j++)
		if (!strcmp(cs->conf->cams[j].device, p))
			return &cs->conf->cams[j];
	if (vc_discover_resolve(p, node, sizeof(node)) < 0)
		return NULL;
	for (size_t j = 0; j < cs->conf->n_cams; j++)
		if (vc_discover_resolve(cs->conf->cams[j].device, kn, sizeof(kn)) == 0 &&
		    !strcmp(kn, node))
			return &cs->conf->cams[j];
	return NULL;
}

static int cam_ctrl_set(void *o, uint32_t id, int64_t value, int64_t *applied)
{
	return vc_cam_ctrl_set_checked(o, id, value, applied);
}

/* Config control lines apply whenever a camera's source (re)opens: the
 * capture layer reports opens only to the stream hub's callback, so this
 * polls for "source open now, was not (or restarted since)". */
static void on_ctl_tick(evutil_socket_t fd, short what, void *arg)
{
	struct vc_camset *cs = arg;

	(void)fd;
	(void)what;
	for (size_t i = 0; cs->conf && i < cs->n_cams; i++) {
		struct vc_cam *cam = cs->cams[i];
		struct cam_slot *sl = &cs->slot[i];
		struct vc_cam_stats st;
		struct vc_ctrls ctrls;

		if (!vc_cam_source(cam)) {
			sl->ctl_open = 0;
			continue;
		}
		vc_cam_get_stats(cam, &st);
		if (sl->ctl_open && st.restarts == sl->ctl_restarts)
			continue;
		sl->ctl_open = 1;
		sl->ctl_restarts = st.restarts;
		const struct vc_conf_cam *k = cam_section(cs, i);
		if (!k || !k->n_ctrls)
			continue;
		if (sl->kind == CAM_FLAG)
			log_info("--device %s: control lines of [camera %s]", vc_cam_path(cam), k->name);
		if (vc_cam_ctrls_load(cam, &ctrls) < 0)
			continue; /* gone again: the next open retries */
		vc_ops_apply_ctrls(&ctrls, k->name, k->ctrls, k->n_ctrls, cam_ctrl_set, cam);
		vc_ctrls_clear(&ctrls);
	}
}

int vc_camset_new(struct event_base *base, const struct vc_conf *conf, struct vc_camset **out)
{
	struct vc_camset *cs = calloc(1, sizeof(*cs));

	if (!cs)
		return -ENOMEM;
	cs->base = base;
	cs->conf = conf;
	*out = cs;
	return 0;
}

int vc_camset_start(struct vc_camset *cs, const struct vc_cli *cli)
{
	const struct vc_conf *conf = cs->conf;
	size_t n_devices = cli->n_devices, n_ccs = 0;

	cs->cli = cli;
	cs->flags = n_devices > 0;
	if (!n_devices)
		n_ccs = conf_cams(conf);
	for (size_t i = 0; i < n_devices; i++) {
		char id[24];
		struct vc_conf_cam dk;
		int ret;

		snprintf(id, sizeof(id), "%zu", i);
		vc_conf_cam_init(&dk);
		ret = vc_conf_set_str(&dk.name, id);
		if (ret == 0)
			ret = vc_cli_device(cli, i, &dk); /* path, --resolution, --fps... */
		if (ret == 0)
			ret = cam_add(cs, &dk, CAM_FLAG);
		else
			log_error("--device %s: %s", cli->devices[i], strerror(-ret));
		vc_conf_cam_clear(&dk);
		if (ret < 0)
			return ret;
		const struct vc_conf_cam *k = cam_section(cs, cs->n_cams - 1);
		if (k)
			vc_v4l2_cam_conf(cs->cams[cs->n_cams - 1], k); /* std, dv_timings */
	}
	for (size_t i = 0; i < n_ccs; i++) {
		int ret = cam_add(cs, &conf->cams[i], CAM_CONF);
		if (ret < 0)
			return ret;
		vc_v4l2_cam_conf(cs->cams[cs->n_cams - 1], &conf->cams[i]); /* std, dv_timings */
	}
	if (!n_devices && !n_ccs) {
		cs->zeroconf = 1;
		discover_add(cs, "no --device or [camera]");
	}
	return 0;
}

struct vc_cam *const *vc_camset_cams(const struct vc_camset *cs, const size_t **n)
{
	*n = &cs->n_cams;
	return cs->cams;
}

void vc_camset_serve(struct vc_camset *cs, struct vc_streams *s)
{
	cs->streams = s;
}

int vc_camset_watch(struct vc_camset *cs, void (*changed)(void *opaque), void *opaque)
{
	cs->changed = changed;
	cs->opaque = opaque;
	vc_m2m_list_rescan(&cs->m2m);
	int ret = vc_hotplug_new(cs->base, NULL, on_hotplug, cs, &cs->hotplug);
	if (ret < 0)
		log_warn("no hotplug watch on /dev (%s): unplugged cameras retry on their backoff",
			 strerror(-ret));
	if (cs->conf) { /* control lines can only come from a config */
		struct timeval tv = { 0, 250000 };

		cs->ctl_timer = event_new(cs->base, -1, EV_PERSIST, on_ctl_tick, cs);
		if (!cs->ctl_timer || evtimer_add(cs->ctl_timer, &tv) < 0)
			return -ENOMEM;
	}
	return 0;
}

const struct vc_m2m_list *vc_camset_m2m(const struct vc_camset *cs)
{
	return &cs->m2m;
}

void vc_camset_stopping(struct vc_camset *cs)
{
	cs->stopping = 1;
}

void vc_camset_free(struct vc_camset *cs)
{
	if (!cs)
		return;
	for (size_t i = 0; i < cs->n_cams; i++)
		vc_cam_free(cs->cams[i]);
	if (cs->ctl_timer)
		event_free(cs->ctl_timer);
	vc_hotplug_free(cs->hotplug);
	vc_m2m_list_clear(&cs->m2m);
	free(cs);
}
