/* The config keys, one row each (common/conf_server.c, common/conf_cam.c;
 * read, printed and compared by common/conf_keys.c): name, section, type,
 * range, where the value lives, its default and when a change applies. The
 * parser (common/conf.c), the printer, the equality checks and the list of
 * keys that need a restart all read the rows; a key is added by adding a
 * row. Defaults live here and nowhere else: the daemon reads them for
 * cameras a config does not describe (--device, discovery) too. */
#ifndef VC_CONF_KEYS_H
#define VC_CONF_KEYS_H

#include <stddef.h>
#include <stdio.h>

#include "common/conf.h"

#define VC_CONF_DEF_IDLE_STOP_MS 5000    /* stop capturing this long after the last client */
#define VC_CONF_DEF_STALL_TIMEOUT_MS 5000 /* no frame this long: restart the device */
#define VC_CONF_DEF_BUFFERS 4            /* V4L2 buffers requested */
#define VC_CONF_DEF_MAX_CLIENTS 256
#define VC_CONF_DEF_MAX_CLIENTS_PER_IP 64
#define VC_CONF_DEF_CLIENT_TIMEOUT_S 30
#define VC_CONF_DEF_HEADER_TIMEOUT_S 5
#define VC_CONF_DEF_TOKEN_TTL_S 3600     /* lifetime of a --make-token token */
#define VC_CONF_DEF_MAX_OUTPUTS 8        /* distinct pictures per camera (memory budget) */
#define VC_CONF_DEF_FRAME_MEMORY_MB 64   /* estimated bytes of all outputs' frames */
#define VC_CONF_DEF_MAX_OUTPUTS_PER_IP 4 /* of max_outputs, per client address (IPv6: /64) */
#define VC_CONF_DEF_CLIENT_HOLD_S 5      /* a stream client sends one frame within this */
#define VC_CONF_DEF_RTSP_TIMEOUT_S 60    /* RTSP session without a request or RTCP report */

/* How a key's value is read, printed and compared. */
enum vc_conf_type {
	VC_CONF_T_INT,   /* an integer field in lo..hi (multiple of step), or the row's word */
	VC_CONF_T_ENUM,  /* an integer field named by one of the row's names */
	VC_CONF_T_STR,   /* a char * field (NULL = unset), checked by the row */
	VC_CONF_T_OTHER, /* lists, levels, policies, rates: the row's functions */
};

/* When a changed value takes effect on SIGHUP. */
enum vc_conf_apply {
	VC_CONF_LIVE,    /* at once */
	VC_CONF_RESTART, /* only at a restart (binds sockets, loads certificates, sizes the server) */
	VC_CONF_REOPEN,  /* the camera is reopened in place (its clients stay) */
};

struct vc_conf_pstate; /* the parser's state (common/conf.c) */

/* A name an ENUM value takes; a row's list ends with a NULL name. The
 * printer writes the first name of a value, the parser takes any (any
 * case). */
struct vc_conf_name {
	const char *name;
	long value;
};

struct vc_conf_key {
	const char *name;
	unsigned char camera;     /* 1: a [camera NAME] key, 0: a [server] key */
	unsigned char type;       /* enum vc_conf_type */
	unsigned char apply;      /* enum vc_conf_apply */
	unsigned char repeatable; /* may appear on several lines */
	size_t off;               /* the field in struct vc_conf or vc_conf_cam */
	size_t size;              /* INT, ENUM: the field's width (1, 2 or 4 bytes); OTHER
				   * without equal(): its size, compared as bytes */
	long lo, hi;              /* INT: the accepted range */
	long step;                /* INT: values are lo + a multiple of step (0: any) */
	long unset;               /* INT, ENUM: the value of a key no line sets (not printed) */
	long def;                 /* INT, ENUM: what the daemon uses when unset */
	const struct vc_conf_name *names; /* ENUM: the names */
	const char *word;         /* INT: a word accepted besides numbers ("never")... */
	long word_value;          /* ...and the value it stands for */
	const char *range;        /* INT, ENUM: what the value must be, for messages */
	const char *example;      /* a valid value, for documentation and tests */
	/* STR: extra check; 0, or -1 with the message (after "name: ") in why. */
	int (*check)(const char *v, char *why, size_t n);
	/* When set, in place of the type's own handling (OTHER rows always have
	 * both): parse one line (0, or -ENOMEM; bad values are reported through
	 * vc_conf_bad), print the value's lines. OTHER rows compare the field's
	 * bytes at off (size long), or with size 0 what they print. */
	int (*parse)(struct vc_conf_pstate *st, const struct vc_conf_key *k, void *base, int line,
		     const char *v);
	void (*print)(const struct vc_conf_key *k, const void *base, FILE *f, int redact);
};

/* The [server] (camera 0) or [camera] rows, in the order the printer
 * writes them. */
const struct vc_conf_key *vc_conf_keys(int camera, size_t *n);

/* The row called name in the [server] (camera 0) or [camera] table, or NULL. */
const struct vc_conf_key *vc_conf_key_find(const char *name, int camera);

/* Sets an INT row's field in base to the row's "unset" value (other rows:
 * nothing; their unset is 0 or NULL). */
void vc_conf_key_init(const struct vc_conf_key *k, void *base);

/* One key's value: parsed from a line into base (a struct vc_conf or
 * vc_conf_cam), printed as "name = value" lines, compared. */
int vc_conf_key_parse(struct vc_conf_pstate *st, const struct vc_conf_key *k, void *base, int line,
		      const char *v);
void vc_conf_key_print(const struct vc_conf_key *k, const void *base, FILE *f, int redact);
int vc_conf_key_equal(const struct vc_conf_key *k, const void *a, const void *b);

/* Writes the reference of every key (Markdown tables: value, default,
 * example, repeatable, how a reload applies it), from the rows alone;
 * conf/README.md holds it (common/conf_ref.c). */
void vc_conf_reference(FILE *f);

/* For the rows' parse functions (common/conf.c): reports a bad value on
 * line (printf-formatted message); the line a token secret was set on (0 =
 * none yet), shared by token_secret and token_secret_file. */
void vc_conf_bad(struct vc_conf_pstate *st, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int *vc_conf_pstate_secret_line(struct vc_conf_pstate *st);

/* For the tables: the rows themselves, and string helpers (a copy of v
 * replaces *dst: 0 or -ENOMEM; both NULL or the same text: 1). */
extern const struct vc_conf_key vc_conf_server_keys[];
extern const size_t vc_conf_n_server_keys;
extern const struct vc_conf_key vc_conf_cam_keys[];
extern const size_t vc_conf_n_cam_keys;
int vc_conf_set_str(char **dst, const char *v);
int vc_conf_str_eq(const char *a, const char *b);
/* s without leading blanks and trailing blanks/CR (in place). */
char *vc_conf_trim(char *s);
/* A decimal integer in lo..hi, the whole text: 0, or -EINVAL. */
int vc_conf_parse_long(const char *v, long lo, long hi, long *out);

#endif
