/* The configuration file: an ini-like text with one [server] section and one
 * [camera NAME] section per camera. Parsing is strict: an unknown section or
 * key, a bad value or a duplicate is an error reported as "file:line: message",
 * so a typo never silently falls back to a default. The parsed result is plain
 * data (no loop, no devices); a camera runs on its section's struct
 * vc_conf_cam itself (server/capture/capture.h), the daemon maps the rest
 * onto auth and http settings, and compares two configs on reload.
 *
 * Syntax: "key = value" lines; '#' or ';' starts a comment line (only at the
 * start of a line, so values may contain '#'); blank lines ignored; keys are
 * case-sensitive lower case. Repeatable keys: listen, user, control,
 * allowed_hosts, trusted_proxies. */
#ifndef VC_CONF_H
#define VC_CONF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/caps.h"

/* Authentication policy of one endpoint class: a bitmask; 0 = open. A request
 * passes when it satisfies any of the set methods. */
enum {
	VC_AUTH_BASIC = 1 << 0, /* HTTP Basic against the "user" entries */
	VC_AUTH_TOKEN = 1 << 1, /* ?token= signed, expiring URL token */
};

/* Endpoint classes with their own policy. */
enum vc_auth_class {
	VC_CLASS_VIEW = 0, /* stream, snapshot, raw (and the compatibility URLs) */
	VC_CLASS_CONTROL,  /* control writes, config */
	VC_CLASS_STATUS,   /* /api/status, /api/cams, /metrics, /state */
	VC_CLASS_COUNT
};

struct vc_conf_user {
	char *name;
	char *hash; /* crypt(3) hash: "$y$...", "$6$...", "$2b$..." */
};

struct vc_conf_ctrl {
	char *name;  /* V4L2 control name as the API lists it ("brightness") */
	char *value; /* integer, or menu item name; resolved when applied */
};

struct vc_conf_cam {
	char *name;            /* section name, the camera id in URLs */
	char *device;          /* path, by-id path, or a test source spec */
	struct vc_mode mode;   /* preferred mode; zero fields = choose */
	int input;             /* -1 = leave */
	uint64_t std;          /* TV standard, V4L2_STD_* bits ("std = PAL"); 0 = leave */
	struct vc_conf_dv {    /* DV timings ("dv_timings = 1280x720p60"); width 0 = detect */
		uint32_t width, height;
		uint32_t fps_milli;  /* frames (fields when interlaced) per 1000 s */
		int interlaced;
	} dv;
	unsigned buffers;      /* 0 = default */
	int idle_stop_ms;      /* -2 = unset (capture default), -1 = never */
	int idle_close;        /* after the idle stop, close the device: VC_IDLE_CLOSE_* */
	int stall_timeout_ms;  /* 0 = default */
	/* What a client gets when its URL leaves it out (the serving layer
	 * applies them; the device never sees them): */
	uint8_t quality;       /* JPEG quality 1-100; 0 = unset (80) */
	uint16_t rotate;       /* 0, 90, 180 or 270 */
	uint8_t flip;          /* 1 = horizontal, 2 = vertical (VC_FLIP_H/VC_FLIP_V) */
	int placeholder;       /* /snapshot of an absent camera: 1 = placeholder
				* picture, 0 = 503 (the default); streams always get it */
	char *encoder;         /* "cpu", or an M2M device path; NULL = auto (the default).
				* The hardware JPEG/H.264 encoder (server/stream/hwenc.c) */
	size_t n_ctrls;
	struct vc_conf_ctrl *ctrls;
	int line;              /* line of the section header, for messages */
};

/* idle_close: closing an idle camera lets the kernel suspend it (uvcvideo
 * keeps a USB camera powered while any handle is open); a capture card may
 * lose its signal lock, so only USB cameras by default. */
enum { VC_IDLE_CLOSE_USB = 0, VC_IDLE_CLOSE_NEVER = 1, VC_IDLE_CLOSE_ALWAYS = 2 };

struct vc_conf {
	char *file;            /* name used in messages */
	size_t n_listen;
	char **listen;         /* "127.0.0.1:8080", "[::1]:8080", "0.0.0.0:80" */
	int log_level;         /* enum vc_log_level, -1 = unset */
	char *web_root;
	int max_clients;       /* 0 = unset */
	int max_clients_per_ip;
	int client_timeout;    /* s a connection may make no progress; 0 = unset (30) */
	int header_timeout;    /* s to send a whole request head; 0 = unset (5) */
	char *tls_cert, *tls_key; /* both or neither */
	char *tls_priorities;  /* GnuTLS priority string; NULL = TLS 1.2 and 1.3 (http.h) */
	char *cors_origin;     /* NULL = CORS off */
	char *realm;           /* Basic realm; NULL = "vcapd" */
	char *rtsp;            /* RTSP listener: PORT, ADDR:PORT or off; NULL = 8554 on
				* the HTTP addresses (server/rtsp/) */
	int rtsp_timeout_s;    /* RTSP session timeout */
	char *rtsp_digest;     /* "user:HA1[,user:HA1...]": RTSP Digest secrets,
				* HA1 = md5(user:vcapd:password) */
	size_t n_users;
	struct vc_conf_user *users;
	unsigned auth[VC_CLASS_COUNT]; /* policy bitmask per class */
	int auth_set;          /* any auth_* key present */
	/* Classes whose auth_* key the file sets (bit 1 << class). An unset
	 * auth_control takes the union of the other classes' policies, so
	 * protecting view or status never leaves control writes open; an unset
	 * or inherited-open control is refused from non-loopback peers. */
	unsigned auth_explicit;
	/* Host header names accepted besides IP literals, localhost, the
	 * machine's name and the listen hosts (DNS rebinding guard); "*" = any. */
	size_t n_hosts;
	char **hosts;
	/* trusted_proxies: addresses and CIDRs (common/fwd.h syntax) whose
	 * forwarding headers name the client; empty = none trusted. */
	size_t n_proxies;
	char **proxies;
	/* Memory budget of the stream fan-out; 0 = unset (defaults in the
	 * stream layer). */
	int max_outputs;       /* distinct pictures served at once per camera */
	int frame_memory_mb;   /* MiB of output frames held over all cameras */
	int max_outputs_per_ip; /* distinct pictures one client address may make per camera */
	int client_hold_s;     /* s a stream client may take to send one frame */
	uint32_t max_width, max_height; /* largest picture a client may ask for */
	uint8_t *token_secret; /* HMAC key; NULL = none (tokens refused) */
	size_t token_secret_len;
	char *token_secret_file; /* where it came from, for printing */
	int token_ttl_s;       /* default lifetime of minted tokens; 0 = unset */
	size_t n_cams;
	struct vc_conf_cam *cams;
};

/* Parses text (len bytes, need not be NUL-terminated). fname names the source
 * in messages. On success *out owns a new config and 0 is returned. On errors
 * returns -EINVAL and writes every error found, one "fname:line: message" per
 * line, into err (truncated to errlen); -ENOMEM when out of memory. */
int vc_conf_parse(const char *text, size_t len, const char *fname,
		  struct vc_conf **out, char *err, size_t errlen);

/* Reads and parses a file; an unreadable file is an error "path: strerror". */
int vc_conf_load(const char *path, struct vc_conf **out, char *err, size_t errlen);

void vc_conf_free(struct vc_conf *c);

/* Writes the effective config in the file syntax, so it parses back to the
 * same config. redact replaces an inline token secret by a placeholder (for
 * --check-config output, which may land in logs). Returns 0 or -errno. */
int vc_conf_print(const struct vc_conf *c, FILE *f, int redact);

/* The camera named name, or NULL. */
const struct vc_conf_cam *vc_conf_find_cam(const struct vc_conf *c, const char *name);

/* 1 when two camera sections would open the device the same way (reload keeps
 * such a camera streaming), else 0; control lines are not compared. */
int vc_conf_cam_same_open(const struct vc_conf_cam *a, const struct vc_conf_cam *b);

/* 1 when two camera sections are the same, control lines included. */
int vc_conf_cam_equal(const struct vc_conf_cam *a, const struct vc_conf_cam *b);

/* The [server] keys that differ between the running config a and a
 * reloaded b but only apply at a restart (their rows in common/conf_server.c
 * say so): a comma list into keys ("listen,tls_cert"), listen only when
 * with_listen. Returns 1 when there is any, else 0 (keys ""). */
int vc_conf_restart_keys(const struct vc_conf *a, const struct vc_conf *b, int with_listen,
			 char *keys, size_t n);

/* Splits "host:port", "[v6]:port" or ":port" (host "" = any). host gets at
 * most hostlen-1 bytes. Returns 0 or -EINVAL. */
int vc_conf_split_listen(const char *s, char *host, size_t hostlen, int *port);

/* The name "std =" takes for V4L2_STD_* bits ("PAL", "NTSC-M"), or NULL. */
const char *vc_conf_std_name(uint64_t std);
/* The V4L2_STD_* bits of a name (case-insensitive): 0, or -EINVAL. */
int vc_conf_std_parse(const char *name, uint64_t *std);
/* "detect" (width 0) or timings like 1280x720p60, 1920x1080i59.94: 0, or
 * -EINVAL with *out untouched. */
int vc_conf_dv_parse(const char *s, struct vc_conf_dv *out);

/* A camera section with every field unset (input -1, idle_stop_ms -2...). */
void vc_conf_cam_init(struct vc_conf_cam *cam);
/* Frees what a section built outside vc_conf_parse owns (name, device,
 * control lines) and leaves it as vc_conf_cam_init does. */
void vc_conf_cam_clear(struct vc_conf_cam *cam);

/* A deep copy of src into dst (its strings and control lines its own, for
 * vc_conf_cam_clear): a camera keeps its settings past the config they
 * came from. 0, or -ENOMEM with dst left as vc_conf_cam_init does. */
int vc_conf_cam_copy(struct vc_conf_cam *dst, const struct vc_conf_cam *src);

/* Sets one camera key as a config line "key = value" would, with the same
 * checks (the command line's per-camera flags go through here). Returns 0,
 * -EINVAL with a one-line message in err ("fps: 'x' is not a rate like 30"),
 * -ENOENT for a key that is not a camera key, or -ENOMEM. A repeated key
 * replaces the value (the config file refuses duplicates, flags do not). */
int vc_conf_cam_set(struct vc_conf_cam *cam, const char *key, const char *value, char *err,
		    size_t errlen);

/* Text of a policy bitmask ("none", "basic", "token", "basic,token"). */
const char *vc_conf_auth_name(unsigned policy);

#endif
