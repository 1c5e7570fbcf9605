/* A small JSON writer (growable buffer, commas and nesting tracked for the
 * caller; common/json_write.c) and a strict parser (common/json_parse.c) for small request bodies (PUT controls: one
 * object of name -> number / bool / string / null). Neither touches locale:
 * numbers are printed and read with '.' as the decimal point, which holds
 * because the daemon never calls setlocale(). */
#ifndef VC_JSON_H
#define VC_JSON_H

#include <stddef.h>
#include <stdint.h>

#define VC_JSON_MAX_DEPTH 32 /* writer nesting; deeper opens set -EINVAL */

/* Writer state. Zero-initialise (or vc_json_init) before use. Errors are
 * sticky: after the first one every call is a no-op and vc_json_error()
 * tells which (-ENOMEM, or -EINVAL for misuse such as a value where a key
 * is due, an unbalanced end or too deep a nesting). */
struct vc_json {
	char *buf;
	size_t len, cap;
	int err;
	unsigned depth;
	uint8_t in_obj[VC_JSON_MAX_DEPTH];  /* level is an object (1) or array (0) */
	uint8_t count[VC_JSON_MAX_DEPTH];   /* level has a member already (comma due) */
	uint8_t want_value;                 /* a key was written, its value is due */
};

void vc_json_init(struct vc_json *j);
void vc_json_free(struct vc_json *j); /* frees the buffer; j can be reused after init */

/* 0 or the first error (sticky). */
int vc_json_error(const struct vc_json *j);

/* The text so far, NUL-terminated (never NULL: "" when empty or on error). */
const char *vc_json_str_get(const struct vc_json *j);
size_t vc_json_len(const struct vc_json *j);

/* Takes the buffer (heap, NUL-terminated, caller frees) when the document is
 * complete (depth 0) and no error occurred; resets j. Returns NULL otherwise
 * (j still owns its buffer then). *len may be NULL. */
char *vc_json_take(struct vc_json *j, size_t *len);

void vc_json_obj_begin(struct vc_json *j);
void vc_json_obj_end(struct vc_json *j);
void vc_json_arr_begin(struct vc_json *j);
void vc_json_arr_end(struct vc_json *j);

/* Inside an object: the next member's name (escaped like any string). */
void vc_json_key(struct vc_json *j, const char *key);

/* Values. Strings are escaped ("\\", "\"", control characters as \n, \t, ...
 * or \u00XX); valid UTF-8 passes through as is, each byte of an invalid
 * sequence becomes U+FFFD, so the output is always valid JSON. NULL -> null.
 * Non-finite doubles are written as null (JSON has no NaN/Infinity). */
void vc_json_string(struct vc_json *j, const char *s);
void vc_json_string_n(struct vc_json *j, const char *s, size_t n);
void vc_json_int(struct vc_json *j, int64_t v);
void vc_json_uint(struct vc_json *j, uint64_t v);
void vc_json_double(struct vc_json *j, double v);
/* A number with exactly decimals (0..9) digits after the point, as printf's
 * "%.*f" rounds it (rates and durations read better so: 29.97, 0.456).
 * Non-finite -> null; decimals outside 0..9 set -EINVAL. */
void vc_json_fixed(struct vc_json *j, double v, int decimals);
void vc_json_bool(struct vc_json *j, int v);
void vc_json_null(struct vc_json *j);
/* A value that is already valid JSON text, inserted verbatim (not checked). */
void vc_json_raw(struct vc_json *j, const char *text);

/* key + value in one call. */
void vc_json_kstr(struct vc_json *j, const char *key, const char *v);
void vc_json_kint(struct vc_json *j, const char *key, int64_t v);
void vc_json_kuint(struct vc_json *j, const char *key, uint64_t v);
void vc_json_kdouble(struct vc_json *j, const char *key, double v);
void vc_json_kbool(struct vc_json *j, const char *key, int v);
void vc_json_kfixed(struct vc_json *j, const char *key, double v, int decimals);

/* Ends a complete top-level document with "\n" (HTTP bodies end a line so
 * that a terminal shows them whole). Anywhere else it sets -EINVAL; after
 * it no further value is allowed. */
void vc_json_newline(struct vc_json *j);

/* ---- parser ---- */

/* Limits of vc_json_parse_object(): bodies beyond them are rejected with a
 * message, never truncated. */
#define VC_JSON_MAX_INPUT 65536
#define VC_JSON_MAX_MEMBERS 256
#define VC_JSON_MAX_NAME 128   /* bytes of a decoded member name */
#define VC_JSON_MAX_STRING 4096 /* bytes of a decoded string value */
#define VC_JSON_MAX_NEST 8     /* nesting depth of skipped object/array values */

enum vc_json_type {
	VC_JSON_NULL = 1,
	VC_JSON_BOOL,
	VC_JSON_NUMBER,
	VC_JSON_STRING,
	VC_JSON_OBJECT, /* nested: validated, kept as raw text (raw_off/raw_len) */
	VC_JSON_ARRAY,  /* likewise */
};

struct vc_json_member {
	char *name;        /* decoded, NUL-terminated, no embedded NUL */
	uint8_t type;      /* enum vc_json_type */
	uint8_t is_int;    /* NUMBER written without fraction/exponent and within int64 */
	int b;             /* BOOL */
	double num;        /* NUMBER */
	int64_t i;         /* NUMBER when is_int */
	char *str;         /* STRING: decoded, NUL-terminated, no embedded NUL */
	size_t raw_off, raw_len; /* where the value's text sits in the input */
};

struct vc_json_object {
	size_t n;
	struct vc_json_member *m;
};

struct vc_json_perr {
	size_t pos;      /* byte offset of the error in the input */
	char msg[96];    /* what was wrong, for a 400 body */
};

/* Parses exactly one JSON object (surrounding whitespace allowed) of at most
 * VC_JSON_MAX_INPUT bytes. Strict RFC 8259: no comments, no trailing commas,
 * no single quotes, no leading zeros/plus signs, no raw control characters in
 * strings, valid UTF-8 only, no lone surrogates; also rejected: duplicate
 * names and "\u0000" (names and strings are C strings).
 * Returns 0 and *out (free with vc_json_object_free), or -EINVAL with *err
 * filled and *out empty, or -ENOMEM. err may be NULL. */
int vc_json_parse_object(const char *text, size_t len, struct vc_json_object *out,
			 struct vc_json_perr *err);

void vc_json_object_free(struct vc_json_object *o);

/* The member called name, or NULL. */
const struct vc_json_member *vc_json_object_get(const struct vc_json_object *o,
						const char *name);

#endif
