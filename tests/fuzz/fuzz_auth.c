/* Authorization headers and URL tokens (server/http/auth.c): input is
 * "<class byte><Authorization value>\n<token>". Nothing crashes, and a
 * request is let in only with the one password or a token minted here
 * (any spelling base64 allows): a parser slip that lets a forged header
 * or token through aborts. The password hash is md5crypt so a guess costs
 * microseconds, not the tens of milliseconds yescrypt would. */
#include "tests/fuzz/fuzz.h"

#include <errno.h>
#include <strings.h>

#include "common/conf.h"
#include "common/log.h"
#include "server/http/auth.h"

#define NOW 1700000000 /* fixed: tokens minted below expire in 2100 */

static struct vc_auth *auth; /* one per process, like the daemon's */
static char tokens[3][160]; /* a valid token per class */

static const char conf_text[] =
	"[server]\n"
	"auth_view = basic,token\n"
	"auth_control = basic\n"
	"auth_status = token\n"
	"user = admin:$1$saltsalt$9xy1btjgzLYfb7hivXtC//\n" /* password "secret" */
	"token_secret = fuzz-secret-of-at-least-32-bytes!!\n";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const scopes[] = { "view", "control", "status" };
	struct vc_conf *c;
	char err[512];

	(void)argc;
	(void)argv;
	vc_log_level = -1;
	if (vc_conf_parse(conf_text, sizeof(conf_text) - 1, "fuzz", &c, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		abort();
	}
	FUZZ_ASSERT(vc_auth_new(c, &auth) == 0);
	vc_conf_free(c);
	for (int i = 0; i < 3; i++)
		FUZZ_ASSERT(vc_auth_token_make(auth, scopes[i], 4102444800, tokens[i],
					       sizeof(tokens[i])) == 0);
	return 0;
}

/* s with base64's variants folded (both alphabets, no padding). */
static void fold(const char *s, size_t n, char *out, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 1 < cap; i++) {
		char ch = s[i] == '+' ? '-' : s[i] == '/' ? '_' : s[i];

		if (ch != '=')
			out[o++] = ch;
	}
	out[o] = '\0';
}

/* Whether hdr carries admin:secret ("Basic", spaces, base64 of it). */
static int right_password(const char *hdr)
{
	char f[512];

	if (strncasecmp(hdr, "Basic ", 6) != 0)
		return 0;
	hdr += 6;
	while (*hdr == ' ')
		hdr++;
	size_t n = strlen(hdr);

	while (n && hdr[n - 1] == ' ')
		n--;
	fold(hdr, n, f, sizeof(f));
	return strcmp(f, "YWRtaW46c2VjcmV0") == 0;
}

/* Whether tok is one minted for a class policy cl accepts. */
static int right_token(const char *tok, int cl)
{
	char f[512], m[512];

	fold(tok, strlen(tok), f, sizeof(f));
	fold(tokens[cl], strlen(tokens[cl]), m, sizeof(m));
	return strcmp(f, m) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int cl = data[0] % 3;
	int no_hdr = data[0] & 0x10, no_tok = data[0] & 0x20;
	char *s = fuzz_cstr(data + 1, size - 1);
	char *tok = strchr(s, '\n');
	const char *user = NULL;

	if (tok)
		*tok++ = '\0';
	int r = vc_auth_check(auth, (enum vc_auth_class)cl, no_hdr ? NULL : s,
			      no_tok ? NULL : tok, NOW, &user);

	if (r == 0) {
		FUZZ_ASSERT(user);
		if (strcmp(user, "admin") == 0)
			FUZZ_ASSERT(!no_hdr && right_password(s));
		else
			FUZZ_ASSERT(strcmp(user, "token") == 0 && tok && !no_tok &&
				    right_token(tok, cl));
	} else {
		FUZZ_ASSERT(r == -EACCES);
	}
	/* base64 both ways: what decodes re-encodes to a string that decodes
	 * to the same bytes */
	uint8_t bin[256], bin2[256];
	char enc[400];
	size_t n = strlen(s);
	int bn = vc_auth_b64_decode(s, n, bin, sizeof(bin));

	if (bn >= 0) {
		FUZZ_ASSERT(vc_auth_b64url_encode(bin, (size_t)bn, enc, sizeof(enc)) >= 0);
		FUZZ_ASSERT(vc_auth_b64_decode(enc, strlen(enc), bin2, sizeof(bin2)) == bn);
		FUZZ_ASSERT(memcmp(bin, bin2, (size_t)bn) == 0);
	}
	free(s);
	return 0;
}
