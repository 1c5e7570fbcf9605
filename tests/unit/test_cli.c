/* server/cli.c: argv tables -> struct vc_cli. The per-camera flags
 * (--resolution, --fps, --format, --quality, --rotate, --flip) bind to the
 * --device before them, or to every camera before the first --device; bad
 * values are refused with the config key's message; vc_cli_apply/_device
 * put what was given (and only that) into a camera's settings. */
#include <linux/videodev2.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "common/conf.h"
#include "common/log.h"
#include "common/negotiate.h"
#include "server/cli.h"

/* Runs vc_cli_parse on a NULL-terminated list; stderr goes to msg. */
static int parse(struct vc_cli *o, char *msg, size_t msglen, const char *const *args)
{
	char *argv[32];
	int argc = 0, r, saved = dup(2);
	FILE *tf = tmpfile();

	argv[argc++] = (char *)"vcapd";
	while (*args && argc < 31)
		argv[argc++] = (char *)*args++;
	argv[argc] = NULL;
	memset(o, 0xff, sizeof(*o)); /* a field parse leaves unset shows up */
	fflush(stderr);
	if (tf)
		dup2(fileno(tf), 2);
	r = vc_cli_parse(argc, argv, o);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	msg[0] = '\0';
	if (tf) {
		size_t n;

		rewind(tf);
		n = fread(msg, 1, msglen - 1, tf);
		msg[n] = '\0';
		fclose(tf);
	}
	return r;
}

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void plain(void)
{
	struct vc_cli o;
	char msg[512];
	int r = parse(&o, msg, sizeof(msg),
		      ARGS("--device", "test", "--listen", ":1", "--device", "/dev/video0",
			   "--config", "x.conf"));

	CHECK(r == 0, "rc %d: %s", r, msg);
	CHECK(o.n_devices == 2 && !strcmp(o.devices[0], "test") &&
	      !strcmp(o.devices[1], "/dev/video0"), "devices");
	CHECK(o.n_listen == 1 && !strcmp(o.listen[0], ":1") && !strcmp(o.config, "x.conf"), "listen, config");
	CHECK(o.log_level == -1 && !o.check_config && !o.make_token && !o.routes,
	      "unset: log_level %d", o.log_level);
	CHECK(!o.all.n && !o.dev[0].n && !o.dev[1].n, "no camera flags");
	r = parse(&o, msg, sizeof(msg), ARGS("--log-level", "debug", "--check-config"));
	CHECK(r == 0 && o.log_level == VC_LOG_DEBUG && o.check_config && !o.n_devices, "log level");
	r = parse(&o, msg, sizeof(msg), ARGS("--routes"));
	CHECK(r == 0 && o.routes && !o.check_config, "--routes");
	vc_log_level = VC_LOG_INFO;
}

static void per_camera(void)
{
	struct vc_cli o;
	char msg[512];
	int r = parse(&o, msg, sizeof(msg),
		      ARGS("--quality", "70", "--rotate", "180", "--device", "test:640x480@30:YUYV",
			   "--resolution", "640x360", "--fps", "15", "--device", "/dev/video2",
			   "--format", "mjpeg", "--rotate", "0", "--flip", "hv", "--desired-fps",
			   "30000/1001"));

	CHECK(r == 0, "rc %d: %s", r, msg);
	/* each group alone onto a camera: what its flags set, and only that */
	struct vc_conf_cam k;
	vc_conf_cam_init(&k);
	CHECK(vc_cli_apply(&o.all, &k) == 0 && k.quality == 70 && k.rotate == 180 && !k.flip &&
	      !k.mode.fourcc && !k.mode.width && !k.mode.ival.den && k.idle_stop_ms == -2,
	      "before --device: every camera (%zu keys)", o.all.n);
	vc_conf_cam_clear(&k);
	CHECK(vc_cli_apply(&o.dev[0], &k) == 0 && k.mode.width == 640 && k.mode.height == 360 &&
	      k.mode.ival.num == 1 && k.mode.ival.den == 15 && !k.quality && !k.rotate,
	      "first device: %ux%u", k.mode.width, k.mode.height);
	vc_conf_cam_clear(&k);
	k.rotate = 90;
	CHECK(vc_cli_apply(&o.dev[1], &k) == 0 && k.mode.fourcc == V4L2_PIX_FMT_MJPEG &&
	      k.rotate == 0 && k.flip == (VC_FLIP_H | VC_FLIP_V) && k.mode.ival.num == 1001 &&
	      k.mode.ival.den == 30000 && !k.mode.width && !k.quality, "second device (%zu keys)",
	      o.dev[1].n);
	vc_conf_cam_clear(&k);

	/* --device 0: the flags before any --device, then its own */
	k.idle_stop_ms = 1234;
	CHECK(vc_cli_device(&o, 0, &k) == 0, "device 0");
	CHECK(k.device && !strcmp(k.device, "test:640x480@30:YUYV") && k.mode.width == 640 &&
	      k.mode.height == 360 && k.mode.ival.den == 15 && !k.mode.fourcc, "device 0 mode");
	CHECK(k.quality == 70 && k.rotate == 180 && !k.flip && k.idle_stop_ms == 1234,
	      "device 0: every camera's quality/rotate, other fields untouched");
	vc_conf_cam_clear(&k);
	/* --device 1: its own --rotate 0 wins over the one before */
	k.rotate = 90;
	CHECK(vc_cli_device(&o, 1, &k) == 0, "device 1");
	CHECK(k.rotate == 0 && k.flip == 3 && k.quality == 70 &&
	      k.mode.fourcc == V4L2_PIX_FMT_MJPEG && !k.mode.width, "device 1");
	vc_conf_cam_clear(&k);
	/* apply: only what was given (a config camera keeps its own size) */
	k.mode.width = 1920;
	k.mode.height = 1080;
	k.quality = 95;
	vc_cli_apply(&o.all, &k);
	CHECK(k.mode.width == 1920 && k.mode.height == 1080 && k.quality == 70 && k.rotate == 180,
	      "apply: given fields override, others stay");
	vc_conf_cam_clear(&k);
	/* a repeated flag replaces its value (one key kept, the last wins) */
	int r2 = parse(&o, msg, sizeof(msg), ARGS("--fps", "10", "--resolution", "320x240",
						  "--fps", "25", "--resolution", "64x48"));
	CHECK(r2 == 0 && o.all.n == 3, "repeated flags: rc %d, %zu keys", r2, o.all.n);
	CHECK(vc_cli_apply(&o.all, &k) == 0 && k.mode.ival.den == 25 && k.mode.width == 64 &&
	      k.mode.height == 48, "repeated flags: the last wins");
	vc_conf_cam_clear(&k);
}

/* Every bad value: exit status 2 and the message naming the flag. */
static void bad(void)
{
	static const struct {
		int line;
		const char *flag, *value, *msg;
	} v[] = {
		{ __LINE__, "--resolution", "640", "--resolution: '640' is not WxH like 1280x720" },
		{ __LINE__, "--resolution", "x480", "--resolution: 'x480' is not WxH" },
		{ __LINE__, "--resolution", "0x480", "--resolution: width: '0'" },
		{ __LINE__, "--resolution", "640x", "--resolution: height: empty value" },
		{ __LINE__, "--resolution", "640x99999", "--resolution: height: '99999'" },
		{ __LINE__, "--fps", "0", "--fps: '0' is not a rate like 30 or 30000/1001" },
		{ __LINE__, "--fps", "fast", "--fps: 'fast'" },
		{ __LINE__, "--format", "NOPE", "--format: unknown pixel format 'NOPE'" },
		{ __LINE__, "--quality", "0", "--quality: '0' is not a JPEG quality 1-100" },
		{ __LINE__, "--quality", "101", "--quality: '101'" },
		{ __LINE__, "--rotate", "45", "--rotate: '45' is not 0, 90, 180 or 270" },
		{ __LINE__, "--flip", "x", "--flip: 'x' is not none, h, v or hv" },
		{ __LINE__, "--device", "test:onyl", "--device test:onyl: bad test pattern" },
		{ __LINE__, "--log-level", "loud", "bad --log-level 'loud'" },
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct vc_cli o;
		char msg[512];
		int r = parse(&o, msg, sizeof(msg), ARGS("--device", "test", v[i].flag, v[i].value));

		CHECK_AT(v[i].line, r == 2, "rc %d", r);
		CHECK_AT(v[i].line, strstr(msg, v[i].msg) != NULL, "want '%s', got '%s'", v[i].msg, msg);
	}
	struct vc_cli o;
	char msg[512];
	CHECK(parse(&o, msg, sizeof(msg), ARGS("--bogus")) == 2 && strstr(msg, "Usage:"), "unknown flag");
	CHECK(parse(&o, msg, sizeof(msg), ARGS("stray")) == 2 && strstr(msg, "unexpected argument 'stray'"),
	      "stray argument");
	CHECK(parse(&o, msg, sizeof(msg), ARGS("--fps")) == 2, "missing value");
}

static void help(void)
{
	char buf[8192];
	size_t len = 0;
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");

	if (f) {
		vc_cli_usage(f);
		len = (size_t)ftell(f);
		fclose(f);
	}
	buf[len] = '\0';
	/* every flag the parser takes is documented */
	static const char *const flags[] = { "--device", "--listen", "--log-level", "--config",
					     "--make-token", "--check-config", "--resolution WxH",
					     "--fps N", "--desired-fps", "--format F", "--quality Q",
					     "--rotate", "--flip", "--routes",
					     "--config-optional",
					     "--default-listen", "--print-config-reference" };
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		CHECK(strstr(buf, flags[i]) != NULL, "--help lacks %s", flags[i]);
}

/* The installed service's flags: an optional config and a listen default
 * that --listen and the config's listen lines override (server/main.c). */
static void service_flags(void)
{
	struct vc_cli o;
	char msg[256];
	int r = parse(&o, msg, sizeof(msg),
		      ARGS("--config", "/etc/vcapd/vcapd.conf", "--config-optional", "--default-listen",
			   "0.0.0.0:8080", "--default-listen", "[::]:8080"));

	CHECK(r == 0 && o.config_optional == 1 && o.n_default_listen == 2 &&
	      !strcmp(o.default_listen[0], "0.0.0.0:8080") && !strcmp(o.default_listen[1], "[::]:8080") &&
	      o.n_listen == 0 && !o.print_conf_ref, "service flags: %d %s", r, msg);
	r = parse(&o, msg, sizeof(msg), ARGS("--config", "x.conf"));
	CHECK(r == 0 && o.config_optional == 0 && o.n_default_listen == 0, "no service flags");
	r = parse(&o, msg, sizeof(msg), ARGS("--print-config-reference"));
	CHECK(r == 0 && o.print_conf_ref == 1, "--print-config-reference");
}

int main(void)
{
	RUN("cli", plain);
	RUN("cli", service_flags);
	RUN("cli", per_camera);
	RUN("cli", bad);
	RUN("cli", help);
	CHECK_EXIT();
}
