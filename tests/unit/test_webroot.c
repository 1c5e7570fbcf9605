/* Web root path resolution (server/http/webroot.c): a table of paths against a
 * tree made here with symlinks in and out, hidden names, a FIFO and a
 * directory named index.html; then every path of up to three components
 * from a small alphabet: whatever opens must be one of the regular files
 * inside the root (device+inode), never a file outside; no fd leaks. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "server/http/webroot.h"

static char base[64], root[96];

static void put(const char *rel, const char *text)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", base, rel);
	FILE *f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void mk(const char *rel)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", base, rel);
	mkdir(p, 0755);
}

static void ln(const char *target, const char *rel)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", base, rel);
	if (symlink(target, p) < 0)
		perror(p);
}

static int setup(void)
{
	snprintf(base, sizeof(base), "/tmp/vc_webroot.XXXXXX");
	if (!mkdtemp(base))
		return -1;
	snprintf(root, sizeof(root), "%s/root", base);
	mk("root");
	mk("root/sub");
	mk("root/sub/deep");
	mk("root/emptydir");
	mk("root/.hdir");
	mk("root/sub2");
	mk("root/sub2/index.html");
	mk("outdir");
	put("root/index.html", "I");
	put("root/a.js", "A");
	put("root/style.CSS", "C");
	put("root/sub/index.html", "SI");
	put("root/sub/f.txt", "F");
	put("root/sub/deep/g.txt", "G");
	put("root/.hidden", "H");
	put("root/.hdir/x.txt", "X");
	put("outside.txt", "OUT");
	put("outdir/secret.txt", "SECRET");
	ln("a.js", "root/link_in");
	ln("../outside.txt", "root/link_out");
	ln("../outdir", "root/linkdir");
	ln("/etc/passwd", "root/abs");
	ln("..", "root/up");
	ln("../../outside.txt", "root/sub/back");
	char p[256];
	snprintf(p, sizeof(p), "%s/root/fifo", base);
	return mkfifo(p, 0644);
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* Reads what vc_webroot_open returns for url: the content, or "" with *err. */
static void get(int dfd, const char *url, char *out, size_t len, int *err, const char **ctype)
{
	off_t size = -1;
	*ctype = NULL;
	out[0] = '\0';
	int fd = vc_webroot_open(dfd, url, ctype, &size);
	*err = fd < 0 ? fd : 0;
	if (fd < 0)
		return;
	ssize_t n = read(fd, out, len - 1);
	out[n > 0 ? n : 0] = '\0';
	if (n != size)
		*err = -EIO;
	close(fd);
}

static void table(void)
{
	static const struct {
		int line;
		const char *url, *want; /* want = content, or NULL when refused */
		int err;                /* refusal: -ENOENT or -EACCES */
		const char *ctype;
	} rows[] = {
		{ __LINE__, "/", "I", 0, "text/html" },
		{ __LINE__, "/index.html", "I", 0, "text/html" },
		{ __LINE__, "/a.js", "A", 0, "text/javascript" },
		{ __LINE__, "/style.CSS", "C", 0, "text/css" },
		{ __LINE__, "/sub", "SI", 0, "text/html" },
		{ __LINE__, "/sub/", "SI", 0, "text/html" },
		{ __LINE__, "/sub/f.txt", "F", 0, "text/plain" },
		{ __LINE__, "/sub/deep/g.txt", "G", 0, "text/plain" },
		{ __LINE__, "/emptydir/", NULL, -ENOENT, NULL },
		{ __LINE__, "/sub2/", NULL, -ENOENT, NULL },         /* index.html is a dir */
		{ __LINE__, "/nope", NULL, -ENOENT, NULL },
		{ __LINE__, "/a.js/x", NULL, -ENOENT, NULL },        /* a file is no dir */
		{ __LINE__, "/a.js/", NULL, -ENOENT, NULL },
		{ __LINE__, "/sub/f.txt/", NULL, -ENOENT, NULL },
		{ __LINE__, "/fifo", NULL, -ENOENT, NULL },
		{ __LINE__, "/..", NULL, -EACCES, NULL },
		{ __LINE__, "/../outside.txt", NULL, -EACCES, NULL },
		{ __LINE__, "/sub/../../outside.txt", NULL, -EACCES, NULL },
		{ __LINE__, "/sub/..", NULL, -EACCES, NULL },
		{ __LINE__, "/./a.js", NULL, -EACCES, NULL },
		{ __LINE__, "//a.js", NULL, -EACCES, NULL },
		{ __LINE__, "/sub//f.txt", NULL, -EACCES, NULL },
		{ __LINE__, "/.hidden", NULL, -EACCES, NULL },
		{ __LINE__, "/.hdir/x.txt", NULL, -EACCES, NULL },
		{ __LINE__, "/sub\\..\\..\\outside.txt", NULL, -EACCES, NULL },
		{ __LINE__, "/link_in", NULL, -EACCES, NULL },       /* even inside */
		{ __LINE__, "/link_out", NULL, -EACCES, NULL },
		{ __LINE__, "/linkdir/secret.txt", NULL, -EACCES, NULL },
		{ __LINE__, "/abs", NULL, -EACCES, NULL },
		{ __LINE__, "/up/outside.txt", NULL, -EACCES, NULL },
		{ __LINE__, "/sub/back", NULL, -EACCES, NULL },
		{ __LINE__, "a.js", NULL, -EACCES, NULL },           /* not absolute */
		{ __LINE__, "/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q", NULL, -ENOENT, NULL },
	};
	int dfd = open(root, O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0, "open %s", root);
	int fds = open_fds();
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char got[64];
		int err;
		const char *ct;
		get(dfd, rows[i].url, got, sizeof(got), &err, &ct);
		if (rows[i].want) {
			CHECK_AT(rows[i].line, err == 0 && strcmp(got, rows[i].want) == 0,
				 "%s: err %d, got '%s'", rows[i].url, err, got);
			CHECK_AT(rows[i].line, ct && strncmp(ct, rows[i].ctype, strlen(rows[i].ctype)) == 0,
				 "%s: type %s", rows[i].url, ct ? ct : "(none)");
		} else {
			CHECK_AT(rows[i].line, err == rows[i].err, "%s: err %d (want %d), got '%s'",
				 rows[i].url, err, rows[i].err, got);
		}
	}
	/* a long path is refused, not overflowed */
	char lng[3000];
	memset(lng, 'a', sizeof(lng) - 1);
	lng[0] = '/';
	lng[sizeof(lng) - 1] = '\0';
	const char *ct;
	off_t sz;
	CHECK(vc_webroot_open(dfd, lng, &ct, &sz) < 0, "a 3000-byte path opened");
	CHECK(open_fds() == fds, "fds %d -> %d", fds, open_fds());
	close(dfd);
}

/* The regular files inside the root, walked without following symlinks
 * and without hidden names: the only things a request may ever open. */
static struct { dev_t dev; ino_t ino; } inside[64];
static size_t n_inside;

static void walk(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d))) {
		char p[512];
		struct stat st;
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (lstat(p, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode))
			walk(p);
		else if (S_ISREG(st.st_mode) && n_inside < 64)
			inside[n_inside++].dev = st.st_dev, inside[n_inside - 1].ino = st.st_ino;
	}
	closedir(d);
}

static void every_path(void)
{
	static const char *const alpha[] = {
		"", ".", "..", "a.js", "sub", "deep", "f.txt", "g.txt", "link_in", "link_out",
		"linkdir", "secret.txt", "abs", "up", "back", "outside.txt", ".hidden", ".hdir",
		"x.txt", "index.html", "emptydir", "sub2", "root", "fifo", "outdir",
	};
	const size_t na = sizeof(alpha) / sizeof(alpha[0]);
	int dfd = open(root, O_RDONLY | O_DIRECTORY);
	int fds = open_fds();
	size_t opened = 0, refused = 0, escaped = 0;

	n_inside = 0;
	walk(root);
	CHECK(n_inside == 6, "%zu regular files inside", n_inside);
	/* every sequence of 1..3 components, with and without a trailing '/' */
	for (size_t depth = 1; depth <= 3; depth++) {
		size_t total = 1;
		for (size_t k = 0; k < depth; k++)
			total *= na;
		for (size_t code = 0; code < total; code++) {
			char url[256] = "";
			size_t c = code, o = 0;
			for (size_t k = 0; k < depth; k++, c /= na)
				o += (size_t)snprintf(url + o, sizeof(url) - o, "/%s", alpha[c % na]);
			for (int slash = 0; slash < 2; slash++) {
				if (slash)
					snprintf(url + o, sizeof(url) - o, "/");
				const char *ct;
				off_t sz;
				int fd = vc_webroot_open(dfd, url, &ct, &sz);
				struct stat st;
				if (fd < 0) {
					refused++;
					continue;
				}
				opened++;
				int ok = 0;
				if (fstat(fd, &st) == 0)
					for (size_t i = 0; i < n_inside; i++)
						ok |= inside[i].dev == st.st_dev && inside[i].ino == st.st_ino;
				if (!ok && escaped++ < 5)
					CHECK(0, "%s opened a file that is not inside the root", url);
				close(fd);
			}
		}
	}
	CHECK(escaped == 0, "%zu paths escaped", escaped);
	/* both outcomes happen: the walk really exercises the resolver */
	CHECK(opened >= 9 && refused > 10000, "opened %zu, refused %zu", opened, refused);
	CHECK(open_fds() == fds, "fds %d -> %d", fds, open_fds());
	close(dfd);
}

static void ctypes(void)
{
	static const struct { int line; const char *name, *want; } rows[] = {
		{ __LINE__, "index.html", "text/html; charset=utf-8" },
		{ __LINE__, "A.HTM", "text/html; charset=utf-8" },
		{ __LINE__, "app.js", "text/javascript; charset=utf-8" },
		{ __LINE__, "s.css", "text/css; charset=utf-8" },
		{ __LINE__, "i.svg", "image/svg+xml" },
		{ __LINE__, "p.png", "image/png" },
		{ __LINE__, "x.tar.gz", "application/octet-stream" },
		{ __LINE__, "noext", "application/octet-stream" },
		{ __LINE__, "dir.js/file", "application/octet-stream" },
		{ __LINE__, "trailingdot.", "application/octet-stream" },
		{ __LINE__, "", "application/octet-stream" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		CHECK_AT(rows[i].line, strcmp(vc_webroot_ctype(rows[i].name), rows[i].want) == 0,
			 "%s -> %s", rows[i].name, vc_webroot_ctype(rows[i].name));
}

int main(void)
{
	if (setup() < 0) {
		printf("webroot.setup: FAIL cannot make the test tree in /tmp\n");
		return 1;
	}
	RUN("webroot", table);
	RUN("webroot", every_path);
	RUN("webroot", ctypes);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", base);
	CHECK_EXIT();
}
