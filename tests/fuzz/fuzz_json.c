/* JSON request bodies (common/json.c parser): any body parses or gives an
 * error with a position inside it; what parses holds C strings without NUL
 * and raw spans inside the input, and writing the members back with the
 * JSON writer and parsing that again gives the same members. */
#include "tests/fuzz/fuzz.h"

#include "common/json.h"
#include "common/log.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	vc_log_level = -1;
	return 0;
}

static void write_back(const struct vc_json_object *o, const char *text, struct vc_json *w)
{
	vc_json_obj_begin(w);
	for (size_t i = 0; i < o->n; i++) {
		const struct vc_json_member *m = &o->m[i];
		char *raw;

		vc_json_key(w, m->name);
		switch (m->type) {
		case VC_JSON_NULL: vc_json_null(w); break;
		case VC_JSON_BOOL: vc_json_bool(w, m->b); break;
		case VC_JSON_STRING: vc_json_string(w, m->str); break;
		default: /* numbers, nested values: their text as it was */
			raw = strndup(text + m->raw_off, m->raw_len);
			FUZZ_ASSERT(raw);
			vc_json_raw(w, raw);
			free(raw);
		}
	}
	vc_json_obj_end(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* not NUL-terminated on purpose: the parser takes a length */
	char *text = malloc(size ? size : 1);
	struct vc_json_object o, o2;
	struct vc_json_perr e;
	struct vc_json w;

	FUZZ_ASSERT(text);
	memcpy(text, data, size);
	if (vc_json_parse_object(text, size, &o, &e) != 0) {
		FUZZ_ASSERT(e.pos <= size && memchr(e.msg, '\0', sizeof(e.msg)));
		free(text);
		return 0;
	}
	FUZZ_ASSERT(o.n <= VC_JSON_MAX_MEMBERS);
	for (size_t i = 0; i < o.n; i++) {
		const struct vc_json_member *m = &o.m[i];

		FUZZ_ASSERT(m->name && strlen(m->name) <= VC_JSON_MAX_NAME);
		FUZZ_ASSERT(m->raw_off <= size && m->raw_len <= size - m->raw_off);
		FUZZ_ASSERT(m->type >= VC_JSON_NULL && m->type <= VC_JSON_ARRAY);
		if (m->type == VC_JSON_STRING)
			FUZZ_ASSERT(m->str && strlen(m->str) <= VC_JSON_MAX_STRING);
		for (size_t k = 0; k < i; k++)
			FUZZ_ASSERT(strcmp(o.m[k].name, m->name) != 0);
	}
	vc_json_init(&w);
	write_back(&o, text, &w);
	FUZZ_ASSERT(vc_json_error(&w) == 0);
	FUZZ_ASSERT(vc_json_parse_object(vc_json_str_get(&w), vc_json_len(&w), &o2, &e) == 0);
	FUZZ_ASSERT(o2.n == o.n);
	for (size_t i = 0; i < o.n; i++) {
		FUZZ_ASSERT(strcmp(o.m[i].name, o2.m[i].name) == 0 && o.m[i].type == o2.m[i].type);
		if (o.m[i].type == VC_JSON_STRING)
			FUZZ_ASSERT(strcmp(o.m[i].str, o2.m[i].str) == 0);
		if (o.m[i].type == VC_JSON_BOOL)
			FUZZ_ASSERT(o.m[i].b == o2.m[i].b);
	}
	vc_json_object_free(&o2);
	vc_json_free(&w);
	vc_json_object_free(&o);
	free(text);
	return 0;
}
