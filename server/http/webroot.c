/* Static web page files. No realpath()/prefix check: every component is
 * opened with openat(O_NOFOLLOW) relative to the previous directory fd, so
 * there is no window between checking and opening a path. */
#define LOG_PREFIX "web: "
#include "server/http/webroot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "server/http/http.h"

#define MAX_PATH_LEN 1024
#define MAX_DEPTH 16

struct webroot {
	int dirfd;        /* the root directory, -1 = none */
	char path[PATH_MAX];
};

/* One per process: the routes keep a pointer to it for the server's life. */
static struct webroot the_root = { .dirfd = -1 };

static const struct { const char *ext, *type; } ctypes[] = {
	{ "html", "text/html; charset=utf-8" },
	{ "htm", "text/html; charset=utf-8" },
	{ "js", "text/javascript; charset=utf-8" },
	{ "mjs", "text/javascript; charset=utf-8" },
	{ "css", "text/css; charset=utf-8" },
	{ "json", "application/json" },
	{ "txt", "text/plain; charset=utf-8" },
	{ "svg", "image/svg+xml" },
	{ "png", "image/png" },
	{ "jpg", "image/jpeg" },
	{ "jpeg", "image/jpeg" },
	{ "gif", "image/gif" },
	{ "webp", "image/webp" },
	{ "ico", "image/x-icon" },
	{ "wasm", "application/wasm" },
	{ "webmanifest", "application/manifest+json" },
};

const char *vc_webroot_ctype(const char *name)
{
	const char *dot = strrchr(name, '.');
	const char *slash = strrchr(name, '/');

	if (dot && (!slash || dot > slash))
		for (size_t i = 0; i < sizeof(ctypes) / sizeof(ctypes[0]); i++)
			if (strcasecmp(dot + 1, ctypes[i].ext) == 0)
				return ctypes[i].type;
	return "application/octet-stream";
}

int vc_webroot_open(int dirfd, const char *url, const char **ctype, off_t *size)
{
	char buf[MAX_PATH_LEN + sizeof("index.html")];
	char *comps[MAX_DEPTH + 1];
	size_t n = 0, len = strlen(url);
	/* a trailing '/': the last component must be a directory */
	int dir_only = len > 1 && url[len - 1] == '/';

	if (url[0] != '/' || len > MAX_PATH_LEN)
		return -EACCES;
	memcpy(buf, url, len + 1);
	/* split on '/', rejecting ".", "..", dot files and backslashes */
	for (char *s = buf + 1, *end; *s || n == 0; s = end) {
		end = strchr(s, '/');
		if (end)
			*end++ = '\0';
		else
			end = s + strlen(s);
		if (*s == '\0') {
			if (*end == '\0')
				break;          /* trailing slash */
			return -EACCES;         /* "//" */
		}
		if (s[0] == '.' || strchr(s, '\\'))
			return -EACCES;
		if (n == MAX_DEPTH)
			return -ENOENT;
		comps[n++] = s;
	}
	int dfd = dup(dirfd);
	if (dfd < 0)
		return -errno;
	static char index_name[] = "index.html";
	size_t i = 0;
	for (;;) {
		const char *c = i < n ? comps[i] : index_name;
		struct stat st;

		/* look before opening: a FIFO or device node is never opened */
		if (fstatat(dfd, c, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))) {
			close(dfd);
			return -ENOENT;
		}
		int fd = openat(dfd, c, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		int err = errno;

		close(dfd);
		if (fd < 0)
			return err == ELOOP ? -EACCES : -ENOENT;
		if (fstat(fd, &st) < 0) {
			close(fd);
			return -ENOENT;
		}
		if (S_ISDIR(st.st_mode)) {
			if (i >= n) {           /* index.html is a directory */
				close(fd);
				return -ENOENT;
			}
			dfd = fd;
			i++;
			continue;
		}
		if (!S_ISREG(st.st_mode) || i + 1 < n || (dir_only && i + 1 == n)) {
			close(fd);
			return -ENOENT;
		}
		/* the type now: c points into this function's buffer */
		*ctype = vc_webroot_ctype(c);
		*size = st.st_size;
		return fd;
	}
}

static enum MHD_Result h_file(void *opaque, struct vc_http_req *r)
{
	const struct webroot *w = opaque;
	const char *ctype = NULL;
	off_t size = 0;

	if (w->dirfd < 0)
		return vc_http_error(r, MHD_HTTP_NOT_FOUND, "no page at %s (no web root)", r->url);
	int fd = vc_webroot_open(w->dirfd, r->url, &ctype, &size);
	/* Refused names (.., hidden files, symlinks) answer like missing ones:
	 * a client learns nothing about what lies outside the served tree. */
	if (fd < 0)
		return vc_http_error(r, MHD_HTTP_NOT_FOUND, "no such path");
	int flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	struct MHD_Response *resp = MHD_create_response_from_fd((uint64_t)size, fd);
	if (!resp) {
		close(fd);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	/* the page changes with the binary; a short cache keeps reloads fresh */
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	return vc_http_queue(r, MHD_HTTP_OK, resp);
}

static int has_index(const char *dir)
{
	char p[PATH_MAX];
	struct stat st;

	if ((size_t)snprintf(p, sizeof(p), "%s/index.html", dir) >= sizeof(p))
		return 0;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The default root, found from the binary's own location, so neither the
 * build tree nor an install (any PREFIX) needs a compiled-in path. */
static int default_root(char *out, size_t len)
{
	static const char *const rel[] = { "../share/vcapd/web", "../web", "../../web" };
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return -ENOENT;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		char cand[PATH_MAX];
		if ((size_t)snprintf(cand, sizeof(cand), "%s/%s", exe, rel[i]) >= sizeof(cand))
			continue;
		if (has_index(cand) && realpath(cand, out) && strlen(out) < len)
			return 0;
	}
	return -ENOENT;
}

int vc_webroot_routes(struct vc_http *http, const char *root)
{
	struct webroot *w = &the_root;

	if (w->dirfd >= 0)
		close(w->dirfd);
	w->dirfd = -1;
	if (root) {
		snprintf(w->path, sizeof(w->path), "%s", root);
	} else if (default_root(w->path, sizeof(w->path)) < 0) {
		log_warn("no web root found beside the binary; the page is off (set web_root)");
		w->path[0] = '\0';
	}
	if (w->path[0]) {
		w->dirfd = open(w->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (w->dirfd < 0)
			log_warn("web root %s: %s; the page is off", w->path, strerror(errno));
		else
			log_info("web root %s", w->path);
	}
	/* The page is open in every auth mode (its requests ask for the
	 * password); "/index.html" exact so compat's "/" (no action=) can
	 * delegate to it. */
	static const struct vc_http_route_def t[] = {
		{ "GET", "/index.html", 0, VC_HTTP_PUBLIC, h_file },
		{ "GET", "/", 1, VC_HTTP_PUBLIC, h_file },
	};

	return vc_http_routes(http, t, sizeof(t) / sizeof(t[0]), w);
}
