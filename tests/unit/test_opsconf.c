/* server/opsconf.c's vc_ops_apply_ctrls: config "control = NAME=VALUE" lines
 * resolved against a camera's control list (key or driver name, integer,
 * boolean word, menu item name) and handed to the setter; every bad line is
 * refused (counted, never reaches the device) while the good ones apply. */
#include <errno.h>
#include <linux/videodev2.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "server/opsconf.h"

static struct { uint32_t id; int64_t value; } seen[16];
static size_t n_seen;

/* The "device": records what reached it, refuses values above max like
 * vc_cam_ctrl_set_checked does. */
static int fake_set(void *o, uint32_t id, int64_t value, int64_t *applied)
{
	const struct vc_ctrls *cs = o;
	const struct vc_ctrl *c = vc_ctrls_find(cs, id);

	if (!c || value < c->min || value > c->max)
		return -ERANGE;
	if (n_seen < 16) {
		seen[n_seen].id = id;
		seen[n_seen++].value = value;
	}
	*applied = value;
	return 0;
}

static void apply_lines(void)
{
	struct vc_ctrl_item plf[] = { { 0, "Disabled" }, { 1, "50 Hz" }, { 2, "60 Hz" } };
	struct vc_ctrl v[] = {
		{ .id = V4L2_CID_BRIGHTNESS, .type = V4L2_CTRL_TYPE_INTEGER, .name = "Brightness",
		  .key = "brightness", .min = 0, .max = 255, .step = 1 },
		{ .id = V4L2_CID_AUTO_WHITE_BALANCE, .type = V4L2_CTRL_TYPE_BOOLEAN,
		  .name = "White Balance, Automatic", .key = "white_balance_automatic", .max = 1,
		  .step = 1 },
		{ .id = V4L2_CID_POWER_LINE_FREQUENCY, .type = V4L2_CTRL_TYPE_MENU,
		  .name = "Power Line Frequency", .key = "power_line_frequency", .max = 2, .step = 1,
		  .n_items = 3, .items = plf },
		{ .id = V4L2_CID_CONTRAST, .type = V4L2_CTRL_TYPE_INTEGER, .name = "Contrast",
		  .key = "contrast", .min = 0, .max = 100, .step = 1 },
	};
	struct vc_ctrls cs = { 4, v };
	struct vc_conf_ctrl want[] = {
		{ "brightness", "200" },              /* 0: key, integer */
		{ "White Balance, Automatic", "off" }, /* 1: driver name, boolean word */
		{ "power_line_frequency", "60 hz" },  /* 2: menu item name */
		{ "sharpness", "3" },                 /* refused: no such control */
		{ "brightness", "bright" },           /* refused: not a number */
		{ "contrast", "500" },                /* refused by the device check: range */
		{ "contrast", "0x20" },               /* 3: hex integer */
	};
	int bad = vc_ops_apply_ctrls(&cs, "t", want, sizeof(want) / sizeof(want[0]), fake_set, &cs);

	CHECK(bad == 3, "refused %d, want 3", bad);
	CHECK(n_seen == 4, "device saw %zu sets, want 4", n_seen);
	CHECK(n_seen > 0 && seen[0].id == V4L2_CID_BRIGHTNESS && seen[0].value == 200, "brightness");
	CHECK(n_seen > 1 && seen[1].id == V4L2_CID_AUTO_WHITE_BALANCE && seen[1].value == 0, "awb");
	CHECK(n_seen > 2 && seen[2].id == V4L2_CID_POWER_LINE_FREQUENCY && seen[2].value == 2, "plf");
	CHECK(n_seen > 3 && seen[3].id == V4L2_CID_CONTRAST && seen[3].value == 0x20, "contrast");
}

static void empty_list(void)
{
	struct vc_ctrls cs = { 0, NULL };
	struct vc_conf_ctrl want[] = { { "brightness", "1" } };

	n_seen = 0;
	CHECK(vc_ops_apply_ctrls(&cs, "t", want, 1, fake_set, &cs) == 1, "no controls: refused");
	CHECK(n_seen == 0, "nothing set");
}

/* Which [server] keys a reload cannot apply: parsed configs, compared. */
static void restart_keys(void)
{
	static const struct {
		int line;
		const char *b; /* [server] body of the reloaded config */
		int with_listen;
		const char *want;
	} t[] = {
		{ __LINE__, "listen = 127.0.0.1:8080\nlog_level = debug\n", 1, "" },
		{ __LINE__, "listen = 127.0.0.1:8081\n", 1, "listen" },
		{ __LINE__, "listen = 127.0.0.1:8081\n", 0, "" },
		{ __LINE__, "listen = 127.0.0.1:8080\nlisten = [::1]:8080\n", 1, "listen" },
		{ __LINE__, "listen = 127.0.0.1:8080\nmax_clients = 3\nweb_root = /x\n", 1,
		  "max_clients,web_root" },
		{ __LINE__, "listen = 127.0.0.1:8080\ntls_cert = /dev/null\ntls_key = /dev/null\n", 1, "tls_cert,tls_key" },
	};
	const char *base = "[server]\nlisten = 127.0.0.1:8080\n";
	struct vc_conf *a = NULL;
	char err[512];

	CHECK(vc_conf_parse(base, strlen(base), "a", &a, err, sizeof(err)) == 0, "%s", err);
	for (size_t i = 0; a && i < sizeof(t) / sizeof(t[0]); i++) {
		char text[256], keys[160];
		struct vc_conf *b = NULL;

		memset(keys, 'x', sizeof(keys));
		snprintf(text, sizeof(text), "[server]\n%s", t[i].b);
		if (vc_conf_parse(text, strlen(text), "b", &b, err, sizeof(err)) < 0) {
			CHECK_AT(t[i].line, 0, "parse: %s", err);
			continue;
		}
		int r = vc_ops_restart_keys(a, b, t[i].with_listen, keys, sizeof(keys));
		CHECK_AT(t[i].line, r == (*t[i].want != 0) && !strcmp(keys, t[i].want),
			 "got %d '%.*s', want '%s'", r, (int)strnlen(keys, sizeof(keys)), keys, t[i].want);
		vc_conf_free(b);
	}
	vc_conf_free(a);
}

int main(void)
{
	RUN("opsconf", apply_lines);
	RUN("opsconf", empty_list);
	RUN("opsconf", restart_keys);
	CHECK_EXIT();
}
