/* The configuration reference (vcapd --print-config-reference), written
 * from the key rows themselves so the document cannot drift from the
 * parser: conf/README.md holds this output between its markers, and
 * tests/unit/test_conf_ref.c fails when the two differ. */
#include "common/conf_keys.h"

static const char *apply_text(unsigned char apply)
{
	switch (apply) {
	case VC_CONF_LIVE:
		return "at once";
	case VC_CONF_RESTART:
		return "at a restart";
	default:
		return "camera reopened";
	}
}

/* The default the row itself knows (INT: def, ENUM: def's first name);
 * other defaults are the code's and are said in conf/vcapd.conf. */
static void print_default(const struct vc_conf_key *k, FILE *f)
{
	if (k->type == VC_CONF_T_INT && k->def != k->unset) {
		if (k->word && k->def == k->word_value)
			fprintf(f, "`%s`", k->word);
		else
			fprintf(f, "`%ld`", k->def);
		return;
	}
	if (k->type == VC_CONF_T_ENUM)
		for (const struct vc_conf_name *n = k->names; n->name; n++)
			if (n->value == k->def) {
				fprintf(f, "`%s`", n->name);
				return;
			}
	fputs("see the example file", f);
}

static void print_table(FILE *f, int camera)
{
	size_t n;
	const struct vc_conf_key *t = vc_conf_keys(camera, &n);

	fputs("| key | value | default | example | repeatable | a reload applies it |\n", f);
	fputs("|---|---|---|---|---|---|\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct vc_conf_key *k = &t[i];

		fprintf(f, "| `%s` | %s | ", k->name, k->range ? k->range : "see the example file");
		print_default(k, f);
		fprintf(f, " | `%s = %s` | %s | %s |\n", k->name, k->example ? k->example : "",
			k->repeatable ? "yes" : "no", apply_text(k->apply));
	}
}

void vc_conf_reference(FILE *f)
{
	fputs("### [server]\n\n", f);
	print_table(f, 0);
	fputs("\n### [camera NAME]\n\n", f);
	print_table(f, 1);
}
