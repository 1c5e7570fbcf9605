/* Web-root path resolution (server/http/webroot.c): whatever the decoded
 * URL, vc_webroot_open returns an error or a regular file inside the root,
 * never the file outside it that a symlink, ".." or an absolute path would
 * reach, and it leaks no descriptor. The tree is made once per process in
 * a temporary directory:
 *   TMP/secret                    outside the root
 *   TMP/root/index.html, a.js, .hidden, sub/index.html, sub/b.css,
 *   sub/deep/c.txt, link -> ../secret, sublink -> sub, abs -> TMP/secret,
 *   fifo (a FIFO: must never be opened) */
#include "tests/fuzz/fuzz.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "server/http/webroot.h"

static char tmp[64];
static int rootfd = -1;
/* Inodes of the regular files inside the root (the only ones that may be
 * returned) and of the secret outside. Set once by LLVMFuzzerInitialize. */
static ino_t inside[8];
static size_t n_inside;
static ino_t secret_ino;

static void put(const char *rel, const char *text)
{
	char p[160];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", tmp, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	FUZZ_ASSERT(fd >= 0);
	FUZZ_ASSERT(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
}

static void cleanup(void)
{
	static const char *const rel[] = {
		"root/sub/deep/c.txt", "root/sub/b.css", "root/sub/index.html", "root/index.html",
		"root/a.js", "root/.hidden", "root/link", "root/sublink", "root/abs", "root/fifo",
		"secret",
	};
	char p[160];

	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", tmp, rel[i]);
		unlink(p);
	}
	static const char *const dirs[] = { "root/sub/deep", "root/sub", "root", "" };
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", tmp, dirs[i]);
		rmdir(p);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const files[] = { "root/index.html", "root/a.js", "root/sub/index.html",
					     "root/sub/b.css", "root/sub/deep/c.txt" };
	char p[160], q[160];
	struct stat st;

	(void)argc;
	(void)argv;
	vc_log_level = -1;
	snprintf(tmp, sizeof(tmp), "/tmp/fuzz_webroot.XXXXXX");
	FUZZ_ASSERT(mkdtemp(tmp));
	atexit(cleanup);
	snprintf(p, sizeof(p), "%s/root/sub/deep", tmp);
	snprintf(q, sizeof(q), "%s/root", tmp);
	FUZZ_ASSERT(mkdir(q, 0755) == 0);
	snprintf(q, sizeof(q), "%s/root/sub", tmp);
	FUZZ_ASSERT(mkdir(q, 0755) == 0 && mkdir(p, 0755) == 0);
	put("secret", "secret");
	put("root/.hidden", "hidden");
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		put(files[i], files[i]);
		snprintf(p, sizeof(p), "%s/%s", tmp, files[i]);
		FUZZ_ASSERT(stat(p, &st) == 0);
		inside[n_inside++] = st.st_ino;
	}
	snprintf(p, sizeof(p), "%s/secret", tmp);
	FUZZ_ASSERT(stat(p, &st) == 0);
	secret_ino = st.st_ino;
	snprintf(q, sizeof(q), "%s/root/abs", tmp);
	FUZZ_ASSERT(symlink(p, q) == 0);
	snprintf(q, sizeof(q), "%s/root/link", tmp);
	FUZZ_ASSERT(symlink("../secret", q) == 0);
	snprintf(q, sizeof(q), "%s/root/sublink", tmp);
	FUZZ_ASSERT(symlink("sub", q) == 0);
	snprintf(q, sizeof(q), "%s/root/fifo", tmp);
	FUZZ_ASSERT(mkfifo(q, 0644) == 0);
	snprintf(q, sizeof(q), "%s/root", tmp);
	rootfd = open(q, O_RDONLY | O_DIRECTORY);
	FUZZ_ASSERT(rootfd >= 0);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *url = fuzz_cstr(data, size);
	const char *ctype = NULL;
	off_t fsize = -1;
	struct stat st;
	int fd = vc_webroot_open(rootfd, url, &ctype, &fsize);

	if (fd >= 0) {
		int known = 0;

		FUZZ_ASSERT(fstat(fd, &st) == 0 && S_ISREG(st.st_mode));
		FUZZ_ASSERT(st.st_ino != secret_ino);
		for (size_t i = 0; i < n_inside; i++)
			known |= st.st_ino == inside[i];
		FUZZ_ASSERT(known);
		FUZZ_ASSERT(ctype && fsize == st.st_size);
		FUZZ_ASSERT(close(fd) == 0);
	} else {
		FUZZ_ASSERT(fd == -ENOENT || fd == -EACCES);
	}
	/* no descriptor left behind: the next one open() hands out is the
	 * lowest free, which stays the same */
	int probe = dup(0);
	static int first_probe = -1;

	if (first_probe < 0)
		first_probe = probe;
	FUZZ_ASSERT(probe == first_probe);
	close(probe);
	free(url);
	return 0;
}
