/* Config parser: good files, every error path with its line number, the
 * printer's round trip (print -> parse -> print is a fixed point), the
 * shipped example conf/vcapd.conf, and the key table row by row. */
#include <errno.h>
#include <linux/videodev2.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "common/conf.h"
#include "common/conf_keys.h"
#include "common/fmt.h"
#include "common/negotiate.h"

static char tmpdir[] = "/tmp/test_conf.XXXXXX";
static char cert[256], key[256], secret[256], shortsecret[256];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static struct vc_conf *parse_ok(int line, const char *text)
{
	char err[2048];
	struct vc_conf *c = NULL;
	int r = vc_conf_parse(text, strlen(text), "t.conf", &c, err, sizeof(err));
	CHECK_AT(line, r == 0 && c, "parse failed (%d): %s", r, err);
	return r == 0 ? c : NULL;
}

static void good_full(void)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "# comment\n"
		 "; another\n"
		 "\n"
		 "[server]\n"
		 "listen = 127.0.0.1:8080\n"
		 "  listen=[::1]:9090  \n"
		 "listen = :80\n"
		 "log_level = debug\n"
		 "web_root = /srv/web#1\n"
		 "max_clients = 100\n"
		 "max_clients_per_ip = 8\n"
		 "client_timeout = 7\n"
		 "tls_cert = %s\n"
		 "tls_key = %s\n"
		 "cors_origin = https://example.org\n"
		 "realm = my cams\n"
		 "user = alice:$6$salt$hash\n"
		 "user = bob:$y$j9T$abc$def\n"
		 "auth_view = basic,token\n"
		 "auth_control = basic\n"
		 "auth_status = none\n"
		 "token_secret_file = %s\n"
		 "token_ttl = 600\n"
		 "\n"
		 "[camera front]\n"
		 "device = /dev/v4l/by-id/usb-cam-video-index0\n"
		 "format = mjpeg\n"
		 "width = 1280\n"
		 "height = 720\n"
		 "fps = 30000/1001\n"
		 "input = 1\n"
		 "std = pal-bg\n"
		 "dv_timings = 1920x1080i59.94\n"
		 "buffers = 6\n"
		 "idle_stop_ms = never\n"
		 "stall_timeout_ms = 2500\n"
		 "quality = 92\n"
		 "rotate = 270\n"
		 "flip = VH\n"
		 "placeholder = yes\n"
		 "encoder = /dev/video31\n"
		 "control = brightness=128\n"
		 "control = power_line_frequency = 50 Hz\n"
		 "[camera back-2]\n"
		 "device = test:320x240@15:NV12\n"
		 "idle_stop_ms = 0\n",
		 cert, key, secret);
	struct vc_conf *c = parse_ok(__LINE__, text);
	if (!c)
		return;
	CHECK(c->n_listen == 3 && strcmp(c->listen[1], "[::1]:9090") == 0, "listen");
	CHECK(c->log_level == 3, "log_level %d", c->log_level);
	CHECK(strcmp(c->web_root, "/srv/web#1") == 0, "'#' inside a value kept");
	CHECK(c->max_clients == 100 && c->max_clients_per_ip == 8 && c->client_timeout == 7,
	      "limits");
	CHECK(c->n_users == 2 && strcmp(c->users[1].name, "bob") == 0 &&
	      strcmp(c->users[1].hash, "$y$j9T$abc$def") == 0, "users");
	CHECK(c->auth[VC_CLASS_VIEW] == (VC_AUTH_BASIC | VC_AUTH_TOKEN) &&
	      c->auth[VC_CLASS_CONTROL] == VC_AUTH_BASIC && c->auth[VC_CLASS_STATUS] == 0, "auth");
	CHECK(c->token_secret_len == 32 && memcmp(c->token_secret, "0123456789abcdef0123456789abcdef", 32) == 0,
	      "secret from file, newline stripped (%zu)", c->token_secret_len);
	CHECK(c->token_ttl_s == 600, "ttl");
	CHECK(c->n_cams == 2, "cams %zu", c->n_cams);
	const struct vc_conf_cam *f = vc_conf_find_cam(c, "front");
	CHECK(f && f->mode.fourcc == vc_fmt_find("MJPEG")->fourcc, "format");
	CHECK(f && f->mode.width == 1280 && f->mode.height == 720, "size");
	CHECK(f && f->mode.ival.num == 1001 && f->mode.ival.den == 30000, "fps -> interval");
	CHECK(f && f->input == 1 && f->buffers == 6 && f->idle_stop_ms == -1 && f->stall_timeout_ms == 2500,
	      "cam ints");
	CHECK(f && f->n_ctrls == 2 && strcmp(f->ctrls[1].name, "power_line_frequency") == 0 &&
	      strcmp(f->ctrls[1].value, "50 Hz") == 0, "controls");
	CHECK(f && f->std == V4L2_STD_PAL_BG, "std");
	CHECK(f && f->dv.width == 1920 && f->dv.height == 1080 && f->dv.interlaced &&
	      f->dv.fps_milli == 59940, "dv_timings %ux%u %d %u", f ? f->dv.width : 0,
	      f ? f->dv.height : 0, f ? f->dv.interlaced : 0, f ? f->dv.fps_milli : 0);
	CHECK(f && f->quality == 92 && f->rotate == 270 && f->flip == 3 && f->placeholder == 1,
	      "serving defaults");
	const struct vc_conf_cam *b = vc_conf_find_cam(c, "back-2");
	CHECK(b && b->idle_stop_ms == 0 && b->input == -1 && b->mode.fourcc == 0, "defaults in back-2");
	CHECK(b && !b->quality && !b->rotate && !b->flip && !b->placeholder, "serving defaults unset");
	CHECK(f && f->encoder && !strcmp(f->encoder, "/dev/video31"), "encoder path");
	CHECK(b && !b->encoder, "encoder unset = auto");
	CHECK(b && b->std == 0 && b->dv.width == 0, "std/dv_timings default: leave, detect");
	CHECK(!vc_conf_find_cam(c, "nope"), "find unknown");
	vc_conf_free(c);
}

static void good_empty(void)
{
	struct vc_conf *c = parse_ok(__LINE__, "");
	if (c) {
		CHECK(c->n_listen == 0 && c->n_cams == 0 && c->log_level == -1 && !c->auth_set, "empty");
		/* printing walks empty lists (users NULL, n_users 0); clang's UBSan
		 * flags NULL + 0 there (tests/fuzz/corpus/conf/empty), gcc's does not */
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		CHECK(f && vc_conf_print(c, f, 0) == 0, "empty prints");
		if (f)
			fclose(f);
		free(buf);
		vc_conf_free(c);
	}
	c = parse_ok(__LINE__, "[server]\r\nlisten = 0.0.0.0:8080\r\n[camera a]\r\ndevice = test"); /* CRLF, no final NL */
	if (c) {
		CHECK(c->n_listen == 1 && strcmp(c->listen[0], "0.0.0.0:8080") == 0, "crlf listen");
		CHECK(c->n_cams == 1 && strcmp(c->cams[0].device, "test") == 0, "no final newline");
		vc_conf_free(c);
	}
}

/* Every error: the text, the line the message must name, a substring. */
struct bad {
	int src_line;
	const char *text;
	int line; /* 0 = message without a line */
	const char *msg;
};

static const struct bad bads[] = {
	{ __LINE__, "listen = :80\n", 1, "outside a section" },
	{ __LINE__, "[server]\nbogus = 1\n", 2, "unknown key 'bogus' in [server]" },
	{ __LINE__, "[server]\ndevice = /dev/video0\n", 2, "belongs in a [camera NAME] section" },
	{ __LINE__, "[camera a]\ndevice = x\nlisten = :80\n", 3, "belongs in [server]" },
	{ __LINE__, "[camera a]\ndevice = x\nfoo = 1\n", 3, "unknown key 'foo' in a [camera] section" },
	{ __LINE__, "[servers]\nlisten = :80\n", 1, "unknown section [servers]" },
	{ __LINE__, "[server\n", 1, "malformed section header" },
	{ __LINE__, "[server] x\n", 1, "malformed section header" },
	{ __LINE__, "[server]\nlisten\n", 2, "expected 'key = value'" },
	{ __LINE__, "[server]\nlisten =\n", 2, "listen: empty value" },
	{ __LINE__, "[server]\nlisten = 8080\n", 2, "listen: '8080' is not HOST:PORT" },
	{ __LINE__, "[server]\nlisten = ::1:8080\n", 2, "is not HOST:PORT" },
	{ __LINE__, "[server]\nlisten = [::1]8080\n", 2, "is not HOST:PORT" },
	{ __LINE__, "[server]\nlisten = host:65536\n", 2, "is not HOST:PORT" },
	{ __LINE__, "[server]\nlog_level = loud\n", 2, "log_level: 'loud'" },
	{ __LINE__, "[server]\nlog_level = info\nlog_level = debug\n", 3, "set twice in this section (first on line 2)" },
	{ __LINE__, "[server]\nweb_root = www\n", 2, "must be an absolute path" },
	{ __LINE__, "[server]\nmax_clients = 0\n", 2, "max_clients: '0'" },
	{ __LINE__, "[server]\nmax_clients = 10 # ten\n", 2, "max_clients: '10 # ten'" },
	{ __LINE__, "[server]\nmax_clients_per_ip = -1\n", 2, "max_clients_per_ip" },
	{ __LINE__, "[server]\n\nclient_timeout = 0\n", 3, "client_timeout: '0' is not seconds" },
	{ __LINE__, "[server]\nclient_timeout = 3601\n", 2, "client_timeout" },
	{ __LINE__, "[server]\ntls_cert = /nonexistent/cert.pem\n", 2, "tls_cert: cannot read '/nonexistent/cert.pem'" },
	{ __LINE__, "[server]\ntls_key = /nonexistent/key.pem\n", 2, "tls_key: cannot read" },
	{ __LINE__, "[server]\ncors_origin = example.org\n", 2, "cors_origin: 'example.org'" },
	{ __LINE__, "[server]\ntls_priorities = NORMAL; rm -rf\n", 2, "tls_priorities: 'NORMAL; rm -rf'" },
	{ __LINE__, "[server]\nrealm = a\"b\n", 2, "realm:" },
	{ __LINE__, "[server]\nuser = alice\n", 2, "user: 'alice' is not NAME:HASH" },
	{ __LINE__, "[server]\nuser = :$6$x$y\n", 2, "is not NAME:HASH" },
	{ __LINE__, "[server]\nuser = alice:secret\n", 2, "password of 'alice' must be a crypt(3) hash" },
	{ __LINE__, "[server]\nuser = a:$6$x$y\nuser = a:$6$x$z\n", 3, "user: 'a' is defined twice" },
	{ __LINE__, "[server]\nauth_view = password\n", 2, "auth_view: 'password'" },
	{ __LINE__, "[server]\nauth_status = basic,\n", 2, "auth_status:" },
	{ __LINE__, "[server]\nauth_status = ,token\n", 2, "auth_status:" },
	{ __LINE__, "[server]\nauth_status = basic,,token\n", 2, "auth_status:" },
	{ __LINE__, "[server]\nauth_control = basic\n", 2, "auth_control: uses basic but no 'user'" },
	{ __LINE__, "[server]\n\nauth_view = token\n", 3, "auth_view: uses token but neither token_secret" },
	{ __LINE__, "[server]\ntoken_secret = short\n", 2, "token_secret: too short (5 bytes" },
	{ __LINE__, "[server]\ntoken_secret_file = /nonexistent/k\n", 2, "token_secret_file: cannot read" },
	{ __LINE__, "[server]\ntoken_secret = 0123456789abcdef\ntoken_secret_file = /x\n", 3,
	  "already set on line 2" },
	{ __LINE__, "[server]\ntoken_ttl = 0\n", 2, "token_ttl: '0'" },
	{ __LINE__, "[camera]\ndevice = x\n", 1, "unknown section [camera]" },
	{ __LINE__, "[camera a b]\ndevice = x\n", 1, "a camera name is" },
	{ __LINE__, "[camera a/b]\ndevice = x\n", 1, "a camera name is" },
	{ __LINE__, "[camera a]\ndevice = x\n[camera a]\ndevice = y\n", 3, "defined twice (first on line 1)" },
	{ __LINE__, "[camera a]\nformat = YUYV\n", 1, "[camera a]: 'device' is missing" },
	{ __LINE__, "[camera a]\ndevice = x\nformat = NOPE\n", 3, "format: unknown pixel format 'NOPE'" },
	{ __LINE__, "[camera a]\ndevice = x\nwidth = 640\n", 1, "set both width and height" },
	{ __LINE__, "[camera a]\ndevice = x\nwidth = 0\nheight = 1\n", 3, "width: '0'" },
	{ __LINE__, "[camera a]\ndevice = x\nheight = 99999\nwidth = 1\n", 3, "height: '99999'" },
	{ __LINE__, "[camera a]\ndevice = x\nfps = 0\n", 3, "fps: '0'" },
	{ __LINE__, "[camera a]\ndevice = x\nfps = 30/0\n", 3, "fps: '30/0'" },
	{ __LINE__, "[camera a]\ndevice = x\nfps = 30fps\n", 3, "fps: '30fps'" },
	{ __LINE__, "[camera a]\ndevice = x\ninput = -1\n", 3, "input: '-1'" },
	{ __LINE__, "[camera a]\ndevice = x\nbuffers = 1\n", 3, "buffers: '1'" },
	{ __LINE__, "[camera a]\ndevice = x\nstd = PALX\n", 3, "std: 'PALX' is not a TV standard" },
	{ __LINE__, "[camera a]\ndevice = x\ndv_timings = 1280x720\n", 3, "dv_timings: '1280x720'" },
	{ __LINE__, "[camera a]\ndevice = x\ndv_timings = 1280x720p\n", 3, "dv_timings: '1280x720p'" },
	{ __LINE__, "[camera a]\ndevice = x\ndv_timings = 1280x720p60.\n", 3, "dv_timings: '1280x720p60.'" },
	{ __LINE__, "[camera a]\ndevice = x\ndv_timings = 1280x720p59.9401\n", 3, "dv_timings: '1280x720p59.9401'" },
	{ __LINE__, "[camera a]\ndevice = x\ndv_timings = 0x720p60\n", 3, "dv_timings: '0x720p60'" },
	{ __LINE__, "[camera a]\ndevice = x\nidle_stop_ms = soon\n", 3, "idle_stop_ms: 'soon'" },
	{ __LINE__, "[camera a]\ndevice = x\nstall_timeout_ms = 5\n", 3, "stall_timeout_ms: '5'" },
	{ __LINE__, "[camera a]\ndevice = x\ncontrol = brightness\n", 3, "control: 'brightness' is not NAME=VALUE" },
	{ __LINE__, "[camera a]\ndevice = x\ncontrol = brightness=\n", 3, "is not NAME=VALUE" },
	{ __LINE__, "[camera a]\ndevice = x\ncontrol = Bright=1\n", 3, "'Bright' is not a control name" },
	{ __LINE__, "[camera a]\ndevice = x\ncontrol = b=1\ncontrol = b=2\n", 4, "control: 'b' is set twice" },
	{ __LINE__, "[camera a]\ndevice = x\ndevice = y\n", 3, "device: set twice" },
	{ __LINE__, "[camera a]\ndevice = x\nquality = 0\n", 3, "quality: '0' is not a JPEG quality 1-100" },
	{ __LINE__, "[camera a]\ndevice = x\nquality = 101\n", 3, "quality: '101'" },
	{ __LINE__, "[camera a]\ndevice = x\nrotate = 45\n", 3, "rotate: '45' is not 0, 90, 180 or 270" },
	{ __LINE__, "[camera a]\ndevice = x\nrotate = 360\n", 3, "rotate: '360'" },
	{ __LINE__, "[camera a]\ndevice = x\nflip = x\n", 3, "flip: 'x' is not none, h, v or hv" },
	{ __LINE__, "[camera a]\ndevice = x\nplaceholder = maybe\n", 3, "placeholder: 'maybe' is not yes or no" },
	{ __LINE__, "[camera a]\ndevice = x\nencoder = gpu\n", 3, "encoder: 'gpu' is not auto, cpu or a device path like /dev/video31" },
	{ __LINE__, "[camera a]\ndevice = x\nencoder = video31\n", 3, "encoder: 'video31'" },
	{ __LINE__, "[camera a]\ndevice = x\nencoder = CPU\n", 3, "encoder: 'CPU'" },
	{ __LINE__, "[camera a]\ndevice = x\nencoder = /dev/v4l/by-id/0123456789012345678901234567890123456789012345678901234567\n", 3, "encoder: '/dev/v4l/by-id/0123" },
	{ __LINE__, "[camera a]\ndevice = x\nencoder = cpu\nencoder = auto\n", 4, "encoder: set twice" },
	{ __LINE__, "[server]\nx\0y = 1\n", 2, "NUL byte" },
};

static void errors(void)
{
	char tmpl[512];
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		const struct bad *b = &bads[i];
		char err[1024], want[300];
		struct vc_conf *c = (struct vc_conf *)0x1;
		size_t len = strlen(b->text);
		if (strstr(b->msg, "NUL"))
			len = 15; /* the text holds a NUL */
		memset(err, 0xff, sizeof(err));
		int r = vc_conf_parse(b->text, len, "t.conf", &c, err, sizeof(err));
		CHECK_AT(b->src_line, r == -EINVAL, "returned %d", r);
		CHECK_AT(b->src_line, c == (struct vc_conf *)0x1, "out written on error");
		if (b->line)
			snprintf(want, sizeof(want), "t.conf:%d: ", b->line);
		else
			snprintf(want, sizeof(want), "t.conf: ");
		CHECK_AT(b->src_line, strncmp(err, want, strlen(want)) == 0, "want prefix '%s', got '%s'", want, err);
		CHECK_AT(b->src_line, strstr(err, b->msg) != NULL, "want '%s', got '%s'", b->msg, err);
	}
	/* Several errors: all reported, in order, each on its own line. */
	const char *multi = "[server]\nlisten = x\nfoo = 1\n[camera c]\nfps = 0\n";
	char err[1024];
	struct vc_conf *c = NULL;
	int r = vc_conf_parse(multi, strlen(multi), "m.conf", &c, err, sizeof(err));
	CHECK(r == -EINVAL && strstr(err, "m.conf:2: listen") && strstr(err, "\nm.conf:3: unknown key") &&
	      strstr(err, "\nm.conf:5: fps") && strstr(err, "\nm.conf:4: [camera c]: 'device' is missing"),
	      "multi: %s", err);
	/* A tiny error buffer truncates but stays a string. */
	char small[16];
	r = vc_conf_parse(multi, strlen(multi), "m.conf", &c, small, sizeof(small));
	CHECK(r == -EINVAL && strlen(small) < sizeof(small), "truncated");
	/* tls_cert without key; a too short secret file. */
	snprintf(tmpl, sizeof(tmpl), "[server]\ntls_cert = %s\n", cert);
	r = vc_conf_parse(tmpl, strlen(tmpl), "t.conf", &c, err, sizeof(err));
	CHECK(r == -EINVAL && strstr(err, "t.conf:2: tls_cert and tls_key must be set together"), "%s", err);
	snprintf(tmpl, sizeof(tmpl), "[server]\n\ntoken_secret_file = %s\n", shortsecret);
	r = vc_conf_parse(tmpl, strlen(tmpl), "t.conf", &c, err, sizeof(err));
	CHECK(r == -EINVAL && strstr(err, "t.conf:3: token_secret_file:") && strstr(err, "fewer than 16"), "%s", err);
	/* Load: a missing file names itself. */
	r = vc_conf_load("/nonexistent/vcapd.conf", &c, err, sizeof(err));
	CHECK(r == -ENOENT && strstr(err, "/nonexistent/vcapd.conf: No such file"), "load missing: %d %s", r, err);
}

static char *print_str(const struct vc_conf *c, int redact)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	vc_conf_print(c, f, redact);
	fclose(f);
	return buf;
}

static void roundtrip(void)
{
	char text[2048]; /* key and cert paths: up to 255 bytes each */
	snprintf(text, sizeof(text),
		 "[camera z]\ndevice = /dev/video3\nfps = 15\nwidth = 320\nheight = 240\nformat = YU12\n"
		 "encoder = auto\n"
		 "control = exposure_auto=1\ncontrol = gain = 7\nidle_stop_ms = 100\n"
		 "[server]\nlisten = [::]:1\nuser = u:$6$a$b\ntoken_secret = 0123456789abcdefXYZ\n"
		 "auth_control = token\nmax_clients = 3\ncors_origin = *\nlog_level = warn\n"
		 "tls_key = %s\ntls_cert = %s\ntls_priorities = NORMAL:-VERS-ALL:+VERS-TLS1.3\n"
		 "[camera y]\ndevice = test\nfps = 60000/1001\ninput = 0\nbuffers = 2\nstall_timeout_ms = 100\n"
		 "std = NTSC\ndv_timings = 1280x720p60\n"
		 "quality = 70\nrotate = 90\nflip = v\nplaceholder = on\n"
		 "idle_stop_ms = never\nencoder = cpu\n",
		 key, cert);
	struct vc_conf *c = parse_ok(__LINE__, text);
	if (!c)
		return;
	char *p1 = print_str(c, 0);
	struct vc_conf *c2 = p1 ? parse_ok(__LINE__, p1) : NULL;
	char *p2 = c2 ? print_str(c2, 0) : NULL;
	CHECK(p1 && p2 && strcmp(p1, "") != 0, "printed");
	CHECK(p1 && strstr(p1, "\ntls_priorities = NORMAL:-VERS-ALL:+VERS-TLS1.3\n"), "tls_priorities printed");
	/* The first line names the source file; compare from the second. */
	CHECK(p1 && p2 && strcmp(strchr(p1, '\n'), strchr(p2, '\n')) == 0, "fixed point:\n%s\n---\n%s", p1 ? p1 : "", p2 ? p2 : "");
	for (size_t i = 0; c2 && i < c->n_cams; i++)
		CHECK(vc_conf_cam_equal(&c->cams[i], &c2->cams[i]), "cam %zu equal after round trip", i);
	CHECK(p1 && strstr(p1, "format = YUV420\n") && strstr(p1, "fps = 60000/1001\n") &&
	      strstr(p1, "control = gain=7\n") && strstr(p1, "idle_stop_ms = never\n") &&
	      strstr(p1, "std = NTSC\n") && strstr(p1, "dv_timings = 1280x720p60.000\n") &&
	      strstr(p1, "quality = 70\nrotate = 90\nflip = v\nplaceholder = yes\nencoder = cpu\n") &&
	      !strstr(p1, "encoder = auto") && !c->cams[0].encoder &&
	      strstr(p1, "auth_view = none\nauth_control = token\nauth_status = none\n"),
	      "printed values:\n%s", p1 ? p1 : "");
	char *pr = print_str(c, 1);
	CHECK(pr && !strstr(pr, "0123456789abcdefXYZ") && strstr(pr, "token_secret = <19 bytes, redacted>"),
	      "redacted:\n%s", pr ? pr : "");
	/* cam_equal sees each field. */
	if (c2) {
		struct vc_conf_cam *z = &c2->cams[0];
		z->mode.width++;
		CHECK(!vc_conf_cam_equal(&c->cams[0], z), "width change seen");
		z->mode.width--;
		free(z->ctrls[1].value);
		z->ctrls[1].value = strdup("8");
		CHECK(!vc_conf_cam_equal(&c->cams[0], z), "control change seen");
		CHECK(vc_conf_cam_same_open(&c->cams[0], z), "a control change alone: same open");
		z->mode.width++;
		CHECK(!vc_conf_cam_same_open(&c->cams[0], z), "width change: not the same open");
		z->mode.width--;
		struct vc_conf_cam *y = &c2->cams[1];
		y->std = V4L2_STD_PAL;
		CHECK(!vc_conf_cam_equal(&c->cams[1], y), "std change seen");
		CHECK(!vc_conf_cam_same_open(&c->cams[1], y), "std change: not the same open");
		y->std = V4L2_STD_NTSC;
		y->dv.fps_milli = 59940;
		CHECK(!vc_conf_cam_equal(&c->cams[1], y), "dv_timings change seen");
		y->dv = c->cams[1].dv;
		CHECK(vc_conf_cam_equal(&c->cams[1], y), "dv_timings back");
		y->rotate = 180;
		CHECK(!vc_conf_cam_same_open(&c->cams[1], y), "rotate change: the camera is replaced");
		y->rotate = 90;
		y->placeholder = 0;
		CHECK(!vc_conf_cam_same_open(&c->cams[1], y), "placeholder change seen");
		y->placeholder = 1;
		free(y->encoder);
		y->encoder = strdup("/dev/video11");
		CHECK(!vc_conf_cam_same_open(&c->cams[1], y), "encoder change seen");
		free(y->encoder);
		y->encoder = NULL;
		CHECK(!vc_conf_cam_same_open(&c->cams[1], y), "encoder cpu -> auto seen");
		CHECK(!vc_conf_cam_equal(&c->cams[0], &c2->cams[1]), "different cams");
	}
	free(p1);
	free(p2);
	free(pr);
	vc_conf_free(c);
	vc_conf_free(c2);
}

static void example_file(void)
{
	char err[2048];
	struct vc_conf *c = NULL;
	int r = vc_conf_load("conf/vcapd.conf", &c, err, sizeof(err));
	CHECK(r == 0, "conf/vcapd.conf: %d %s", r, err);
	if (r == 0) {
		/* no active listen line: the service's --default-listen (the
		 * LAN) or, by hand, 127.0.0.1:8080 applies */
		CHECK(c->n_listen == 0, "the example sets no listen (%zu)", c->n_listen);
		/* as shipped it serves the cameras it discovers: any active
		 * [camera] would turn discovery off (and once served the test
		 * pattern to whoever copied the example) */
		CHECK(c->n_cams == 0, "example has no active camera (%zu)", c->n_cams);
		vc_conf_free(c);
	}
	/* Every commented-out option of the example is valid too: uncomment
	 * them all (except the alternatives that would conflict) and parse. */
	FILE *f = fopen("conf/vcapd.conf", "r");
	char *out = NULL, line[512];
	size_t olen = 0;
	FILE *o = open_memstream(&out, &olen);
	int n_uncommented = 0;
	while (f && o && fgets(line, sizeof(line), f)) {
		if (line[0] == ';' && !strstr(line, "token_secret =") && !strstr(line, "user =") &&
		    !strstr(line, "tls_") && !strstr(line, "/dev/v4l/") && !strstr(line, "token_secret_file") &&
		    !strstr(line, "auth_")) {
			fputs(line + 1, o);
			n_uncommented++;
		} else {
			fputs(line, o);
		}
	}
	if (f)
		fclose(f);
	if (o)
		fclose(o);
	r = out ? vc_conf_parse(out, olen, "uncommented", &c, err, sizeof(err)) : -1;
	CHECK(r == 0 && n_uncommented > 15, "uncommented example (%d lines): %d %s", n_uncommented, r, err);
	if (r == 0) {
		const struct vc_conf_cam *k = vc_conf_find_cam(c, "front");
		CHECK(c->n_cams == 1 && k && k->device && !strncmp(k->device, "test:", 5) &&
		      k->rotate == 180 && k->flip == VC_FLIP_H && k->quality == 80,
		      "the commented [camera front] example is complete");
		vc_conf_free(c);
	}
	free(out);
}

/* One key at a time, as the command line's per-camera flags set them. */
static void cam_set(void)
{
	struct vc_conf_cam k;
	char err[256];

	memset(&k, 0xff, sizeof(k));
	vc_conf_cam_init(&k);
	CHECK(k.input == -1 && k.idle_stop_ms == -2 && !k.device && !k.quality && !k.n_ctrls, "init");
	CHECK(vc_conf_cam_set(&k, "width", "640", err, sizeof(err)) == 0 && k.mode.width == 640, "width");
	CHECK(vc_conf_cam_set(&k, "fps", "15", err, sizeof(err)) == 0 && k.mode.ival.num == 1 &&
	      k.mode.ival.den == 15, "fps");
	CHECK(vc_conf_cam_set(&k, "fps", "25", err, sizeof(err)) == 0 && k.mode.ival.den == 25,
	      "a repeated key replaces");
	CHECK(vc_conf_cam_set(&k, "format", "mjpeg", err, sizeof(err)) == 0 &&
	      k.mode.fourcc == V4L2_PIX_FMT_MJPEG, "format");
	CHECK(vc_conf_cam_set(&k, "flip", "h", err, sizeof(err)) == 0 && k.flip == VC_FLIP_H, "flip");
	CHECK(vc_conf_cam_set(&k, "device", "/dev/video0", err, sizeof(err)) == 0 &&
	      !strcmp(k.device, "/dev/video0"), "device");
	CHECK(vc_conf_cam_set(&k, "control", "brightness=3", err, sizeof(err)) == 0 && k.n_ctrls == 1,
	      "control");
	memset(err, 0xff, sizeof(err));
	CHECK(vc_conf_cam_set(&k, "fps", "fast", err, sizeof(err)) == -EINVAL &&
	      !strcmp(err, "fps: 'fast' is not a rate like 30 or 30000/1001") && k.mode.ival.den == 25,
	      "bad value: message without file or line, value untouched: '%s'", err);
	CHECK(vc_conf_cam_set(&k, "rotate", "45", err, sizeof(err)) == -EINVAL &&
	      !strncmp(err, "rotate: '45'", 12), "rotate: %s", err);
	CHECK(vc_conf_cam_set(&k, "encoder", "/dev/video31", err, sizeof(err)) == 0 && k.encoder &&
	      !strcmp(k.encoder, "/dev/video31"), "encoder path");
	CHECK(vc_conf_cam_set(&k, "encoder", "auto", err, sizeof(err)) == 0 && !k.encoder,
	      "encoder auto replaces the path");
	CHECK(vc_conf_cam_set(&k, "encoder", "cpu", err, sizeof(err)) == 0 && k.encoder &&
	      !strcmp(k.encoder, "cpu"), "encoder cpu");
	CHECK(vc_conf_cam_set(&k, "quality", "", err, sizeof(err)) == -EINVAL &&
	      strstr(err, "empty value"), "empty: %s", err);
	CHECK(vc_conf_cam_set(&k, "listen", ":80", err, sizeof(err)) == -ENOENT &&
	      strstr(err, "'listen' is not a camera setting"), "server key: %s", err);
	char tiny[8];
	CHECK(vc_conf_cam_set(&k, "fps", "fast", tiny, sizeof(tiny)) == -EINVAL &&
	      strlen(tiny) < sizeof(tiny), "small buffer truncates");
	vc_conf_cam_clear(&k);
	CHECK(!k.device && !k.n_ctrls && !k.ctrls && k.input == -1 && !k.mode.width, "clear");
}

/* The std and dv_timings parsers the API shares with the config. */
static void signal_parsers(void)
{
	uint64_t std = 0;
	struct vc_conf_dv dv = { 1, 2, 1, 3 };

	CHECK(vc_conf_std_parse("pal", &std) == 0 && std == V4L2_STD_PAL, "pal: %llx",
	      (unsigned long long)std);
	CHECK(vc_conf_std_parse("NTSC-M", &std) == 0 && std == V4L2_STD_NTSC_M, "NTSC-M");
	CHECK(vc_conf_std_parse("MARS", &std) < 0 && std == V4L2_STD_NTSC_M, "unknown: untouched");
	CHECK(vc_conf_dv_parse("1920x1080i59.94", &dv) == 0 && dv.width == 1920 &&
	      dv.height == 1080 && dv.interlaced && dv.fps_milli == 59940, "1080i59.94");
	CHECK(vc_conf_dv_parse("detect", &dv) == 0 && dv.width == 0, "detect");
	dv.width = 7;
	CHECK(vc_conf_dv_parse("1280x720x60", &dv) < 0 && dv.width == 7, "bad: untouched");
	CHECK(vc_conf_dv_parse("0x720p60", &dv) < 0 && vc_conf_dv_parse("1280x720p", &dv) < 0 &&
	      vc_conf_dv_parse("1280x720p60.", &dv) < 0 && vc_conf_dv_parse("", &dv) < 0,
	      "malformed timings refused");
}

static void split_listen(void)
{
	static const struct {
		const char *in, *host;
		int port;
	} v[] = {
		{ "127.0.0.1:8080", "127.0.0.1", 8080 }, { "[::1]:80", "::1", 80 },
		{ ":9", "", 9 }, { "cam.local:65535", "cam.local", 65535 },
		{ "[fe80::1%eth0]:1", "fe80::1%eth0", 1 },
		{ "127.0.0.1:0", "127.0.0.1", 0 }, { "h:65536", NULL, 0 }, { "h:-1", NULL, 0 },
		{ "x", NULL, 0 }, { "[]:80", NULL, 0 }, { "a:b", NULL, 0 }, { "a:", NULL, 0 },
		{ "1:2:3", NULL, 0 },
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char host[64];
		int port = -1;
		int r = vc_conf_split_listen(v[i].in, host, sizeof(host), &port);
		if (v[i].host)
			CHECK(r == 0 && strcmp(host, v[i].host) == 0 && port == v[i].port, "%s", v[i].in);
		else
			CHECK(r == -EINVAL, "%s accepted", v[i].in);
	}
	char tiny[4];
	int port;
	CHECK(vc_conf_split_listen("longhost:1", tiny, sizeof(tiny), &port) == -EINVAL, "host too long");
	CHECK(strcmp(vc_conf_auth_name(0), "none") == 0 && strcmp(vc_conf_auth_name(3), "basic,token") == 0,
	      "auth names");
}

/* A section that holds row k's line "k = v", with what the section needs
 * besides (a camera's device, width with height, TLS files in pairs). */
static void row_text(const struct vc_conf_key *k, const char *v, char *t, size_t n)
{
	if (k->camera)
		snprintf(t, n, "[camera t]\n%s%s%s = %s\n",
			 strcmp(k->name, "device") ? "device = test\n" : "",
			 !strcmp(k->name, "width") ? "height = 720\n" :
			 !strcmp(k->name, "height") ? "width = 1280\n" : "",
			 k->name, v);
	else
		snprintf(t, n, "[server]\n%s%s = %s\n",
			 !strcmp(k->name, "tls_cert") ? "tls_key = /dev/null\n" :
			 !strcmp(k->name, "tls_key") ? "tls_cert = /dev/null\n" : "",
			 k->name, v);
}

/* The value row k's example stands for in this test (files must exist). */
static const char *row_value(const struct vc_conf_key *k)
{
	if (!strcmp(k->name, "tls_cert") || !strcmp(k->name, "tls_key"))
		return cert;
	if (!strcmp(k->name, "token_secret_file"))
		return secret;
	return k->example;
}

/* Every row: a name unique in its section, an example that parses, prints
 * as its own line and parses back equal (parse -> print -> parse); INT rows
 * accept their bounds and refuse one past them with the row's range in the
 * message, and their default is in range (or the unset value). */
static void key_table(void)
{
	size_t ns, nc;
	const struct vc_conf_key *ts = vc_conf_keys(0, &ns), *tc = vc_conf_keys(1, &nc);

	CHECK(ns > 10 && nc > 10, "%zu + %zu rows", ns, nc);
	for (size_t i = 0; i < ns + nc; i++) {
		const struct vc_conf_key *k = i < ns ? &ts[i] : &tc[i - ns];
		char text[512], line[300], err[1024];

		CHECK(vc_conf_key_find(k->name, k->camera) == k, "%s: found, once", k->name);
		CHECK(k->example && *k->example, "%s: an example", k->name);
		if (!k->example)
			continue;
		row_text(k, row_value(k), text, sizeof(text));
		struct vc_conf *c1 = parse_ok(__LINE__, text);
		char *p = c1 ? print_str(c1, 0) : NULL;
		struct vc_conf *c2 = p ? parse_ok(__LINE__, p) : NULL;
		const void *b1 = c1 && k->camera ? (const void *)c1->cams : (const void *)c1;
		const void *b2 = c2 && k->camera ? (const void *)c2->cams : (const void *)c2;
		snprintf(line, sizeof(line), "\n%s = ", k->name);
		CHECK(p && strstr(p, line), "%s: printed:\n%s", k->name, p ? p : "(none)");
		CHECK(c2 && vc_conf_key_equal(k, b1, b2), "%s: equal after parse -> print -> parse",
		      k->name);
		free(p);
		vc_conf_free(c1);
		vc_conf_free(c2);
		if (k->type != VC_CONF_T_INT)
			continue;
		CHECK(k->def == k->unset || (k->def >= k->lo && k->def <= k->hi), "%s: default %ld",
		      k->name, k->def);
		const long ok[] = { k->lo, k->hi }, bad[] = { k->lo - 1, k->hi + 1 };
		for (int j = 0; j < 2; j++) {
			char v[32];
			struct vc_conf *c = NULL;

			snprintf(v, sizeof(v), "%ld", ok[j]);
			row_text(k, v, text, sizeof(text));
			c = parse_ok(__LINE__, text);
			vc_conf_free(c);
			c = (struct vc_conf *)0x1;
			snprintf(v, sizeof(v), "%ld", bad[j]);
			row_text(k, v, text, sizeof(text));
			int r = vc_conf_parse(text, strlen(text), "t.conf", &c, err, sizeof(err));
			snprintf(line, sizeof(line), "%s: '%s' is not %s", k->name, v, k->range);
			CHECK(r == -EINVAL && c == (struct vc_conf *)0x1 && strstr(err, line),
			      "%s = %s: %d %s", k->name, v, r, err);
		}
	}
}

/* The rows decide what needs a restart and what reopens a camera. */
static void key_apply(void)
{
	const char *restart[] = { "listen", "max_clients", "max_clients_per_ip", "client_timeout",
				  "header_timeout",
				  "tls_cert", "tls_key", "tls_priorities", "web_root", "rtsp",
				  "rtsp_timeout" };
	size_t n, want = 0;
	const struct vc_conf_key *t = vc_conf_keys(0, &n);

	for (size_t i = 0; i < n; i++)
		want += t[i].apply == VC_CONF_RESTART;
	CHECK(want == sizeof(restart) / sizeof(restart[0]), "%zu restart keys", want);
	for (size_t i = 0; i < sizeof(restart) / sizeof(restart[0]); i++) {
		const struct vc_conf_key *k = vc_conf_key_find(restart[i], 0);
		CHECK(k && k->apply == VC_CONF_RESTART, "%s needs a restart", restart[i]);
	}
	const struct vc_conf_key *ctl = vc_conf_key_find("control", 1);
	CHECK(ctl && ctl->apply == VC_CONF_LIVE, "control lines apply live");
	const struct vc_conf_key *idle = vc_conf_key_find("idle_stop_ms", 1);
	CHECK(idle && idle->def == VC_CONF_DEF_IDLE_STOP_MS && idle->unset == -2 && idle->word_value == -1,
	      "idle_stop_ms: default, unset, never");
}

/* token_secret_file without '/' is a systemd credential: read from
 * $CREDENTIALS_DIRECTORY (LoadCredential=), an error naming it when unset. */
static void secret_credential(void)
{
	char dir[] = "/tmp/vcap-cred.XXXXXX", path[300], err[512];
	const char *conf = "[server]\ntoken_secret_file = token.key\n";
	static const char sec[] = "0123456789abcdef0123456789abcdef\n";
	struct vc_conf *c = NULL;

	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(path, sizeof(path), "%s/token.key", dir);
	FILE *f = fopen(path, "w");
	CHECK(f && fputs(sec, f) >= 0, "write %s", path);
	if (f)
		fclose(f);
	setenv("CREDENTIALS_DIRECTORY", dir, 1);
	int r = vc_conf_parse(conf, strlen(conf), "c.conf", &c, err, sizeof(err));
	CHECK(r == 0 && c && c->token_secret_len == 32 &&
	      memcmp(c->token_secret, sec, 32) == 0, "with the credential: %d %s", r, err);
	vc_conf_free(c);
	c = NULL;
	unsetenv("CREDENTIALS_DIRECTORY");
	r = vc_conf_parse(conf, strlen(conf), "c.conf", &c, err, sizeof(err));
	CHECK(r == -EINVAL && strstr(err, "c.conf:2: token_secret_file: 'token.key' is a credential "
					  "name") && strstr(err, "CREDENTIALS_DIRECTORY"), "%d %s", r, err);
	vc_conf_free(c);
	unlink(path);
	rmdir(dir);
}

/* A camera keeps a copy of its section (server/capture/capture.c): every
 * string and control line its own, equal to the original, alive after the
 * original is cleared (a reload frees the old config). */
static void cam_copy(void)
{
	struct vc_conf_cam a, b;
	char err[256];

	vc_conf_cam_init(&a);
	CHECK(vc_conf_cam_set(&a, "device", "/dev/video0", err, sizeof(err)) == 0 &&
	      vc_conf_cam_set(&a, "encoder", "/dev/video31", err, sizeof(err)) == 0 &&
	      vc_conf_cam_set(&a, "control", "brightness=3", err, sizeof(err)) == 0 &&
	      vc_conf_cam_set(&a, "control", "contrast=4", err, sizeof(err)) == 0 &&
	      vc_conf_cam_set(&a, "quality", "70", err, sizeof(err)) == 0 &&
	      vc_conf_cam_set(&a, "std", "PAL", err, sizeof(err)) == 0, "set: %s", err);
	a.name = strdup("front");
	CHECK(vc_conf_cam_copy(&b, &a) == 0, "copy");
	CHECK(vc_conf_cam_equal(&a, &b), "the copy equals the original");
	CHECK(b.name != a.name && b.device != a.device && b.encoder != a.encoder &&
	      b.ctrls != a.ctrls && b.ctrls[1].value != a.ctrls[1].value, "every string its own");
	vc_conf_cam_clear(&a);
	CHECK(!strcmp(b.name, "front") && !strcmp(b.device, "/dev/video0") &&
	      !strcmp(b.encoder, "/dev/video31") && b.n_ctrls == 2 &&
	      !strcmp(b.ctrls[1].name, "contrast") && b.quality == 70, "alive after the original");
	vc_conf_cam_clear(&b);
	vc_conf_cam_init(&a); /* unset strings stay unset */
	CHECK(vc_conf_cam_copy(&b, &a) == 0 && !b.name && !b.device && !b.encoder && !b.ctrls &&
	      b.idle_stop_ms == -2, "empty copy");
	vc_conf_cam_clear(&b);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		printf("conf.setup: FAIL mkdtemp\n");
		return 1;
	}
	snprintf(cert, sizeof(cert), "%s/cert.pem", tmpdir);
	snprintf(key, sizeof(key), "%s/key.pem", tmpdir);
	snprintf(secret, sizeof(secret), "%s/secret", tmpdir);
	snprintf(shortsecret, sizeof(shortsecret), "%s/short", tmpdir);
	write_file(cert, "cert\n");
	write_file(key, "key\n");
	write_file(secret, "0123456789abcdef0123456789abcdef\n");
	write_file(shortsecret, "tooshort\n");

	RUN("conf", good_full);
	RUN("conf", good_empty);
	RUN("conf", errors);
	RUN("conf", secret_credential);
	RUN("conf", roundtrip);
	RUN("conf", example_file);
	RUN("conf", signal_parsers);
	RUN("conf", cam_set);
	RUN("conf", cam_copy);
	RUN("conf", split_listen);
	RUN("conf", key_table);
	RUN("conf", key_apply);

	unlink(cert);
	unlink(key);
	unlink(secret);
	unlink(shortsecret);
	rmdir(tmpdir);
	CHECK_EXIT();
}
