/* Controls of a capture source as plain data the JSON API prints: every
 * control (class headers, strings and compound controls left out) with its
 * range, default, current value and menu items, plus get/set by id with the
 * range checked before the device sees it. Works on any source through the
 * ctrl_* ops of server/capture/source.h (a source without them has no controls), or
 * on a camera (vc_cam_ctrls_load: what the HTTP API uses).
 * Loop thread only, like the ops. */
#ifndef VC_CONTROLS_H
#define VC_CONTROLS_H

#include <stddef.h>
#include <stdint.h>

#include "server/capture/source.h"

struct vc_ctrl_item {
	int64_t index;     /* menu index (what get/set use) */
	char name[32];     /* menu text; for integer menus the value as decimal text */
};

struct vc_ctrl {
	uint32_t id;       /* V4L2_CID_* */
	uint32_t type;     /* enum v4l2_ctrl_type */
	uint32_t flags;    /* V4L2_CTRL_FLAG_* */
	char name[32];     /* as the driver names it: "Brightness" */
	char key[32];      /* the name as an identifier: "brightness", "white_balance_automatic" */
	int64_t min, max, step, def;
	int64_t value;     /* current value when has_value */
	int has_value;     /* 0 for buttons, write-only and unreadable controls */
	size_t n_items;    /* menus and integer menus */
	struct vc_ctrl_item *items;
};

struct vc_ctrls {
	size_t n;
	struct vc_ctrl *v;
};

/* Enumerates every control of s into *out (caller-owned, released with
 * vc_ctrls_clear()). A source without controls gives n = 0. Returns 0 or
 * -errno (-ENODEV: the device is gone); on failure *out is empty. */
int vc_ctrls_load(struct vc_src *s, struct vc_ctrls *out);
void vc_ctrls_clear(struct vc_ctrls *c);

/* Lookups in a loaded list; NULL when absent. */
const struct vc_ctrl *vc_ctrls_find(const struct vc_ctrls *c, uint32_t id);
const struct vc_ctrl *vc_ctrls_find_key(const struct vc_ctrls *c, const char *key);

/* Reads the current value. -EACCES for write-only controls and buttons. */
int vc_ctrl_get(struct vc_src *s, uint32_t id, int64_t *value);

/* Sets a control after checking it: -EACCES read-only/inactive-grabbed,
 * -ERANGE outside min..max, -EINVAL not a menu item or off the step grid.
 * On success *applied (may be NULL) gets the value read back (drivers may
 * adjust it). */
int vc_ctrl_set(struct vc_src *s, uint32_t id, int64_t value, int64_t *applied);

/* The same for a camera (server/capture/capture.h), through vc_cam_ctrl_*, i.e.
 * its current source: -ENODEV while the camera has no open source; a
 * source without controls gives an empty list. Loop thread only. */
struct vc_cam;
int vc_cam_ctrls_load(struct vc_cam *cam, struct vc_ctrls *out);
int vc_cam_ctrl_set_checked(struct vc_cam *cam, uint32_t id, int64_t value, int64_t *applied);

/* "int", "bool", "menu", "button", "int64", "bitmask", "intmenu", "u8", ...:
 * the type as the API prints it. */
const char *vc_ctrl_type_name(uint32_t type);

#endif
