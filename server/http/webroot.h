/* Static files of the web page (web/): GET/HEAD of "/" (index.html) and
 * "/<file>" under one root directory. Paths are resolved component by
 * component with openat(O_NOFOLLOW) from a directory fd opened once, so
 * "..", absolute paths and symlinks (inside or out) never leave the root;
 * hidden names (".x") are refused. Register after every other route: it
 * takes the "/" prefix as the fallback. */
#ifndef VC_WEBROOT_H
#define VC_WEBROOT_H

#include <stddef.h>
#include <sys/types.h>

struct vc_http;

/* root: the configured web_root, or NULL for the default: the web/ of the
 * build tree (binary in build/ or build/asan/) or <prefix>/share/vcapd/web
 * beside an installed <prefix>/bin/vcapd. A missing root is logged and the
 * page answers 404; it is not an error. 0 or -errno. */
int vc_webroot_routes(struct vc_http *http, const char *root);

/* Opens url (percent-decoded, starting with '/') below the directory dirfd:
 * returns an fd of a regular file (for a directory: its index.html), its
 * size and its Content-Type, or -ENOENT (missing, not a regular file (never
 * opened: FIFOs, devices), a file named with a trailing "/", too
 * deep) / -EACCES (refused: "..", ".", hidden names, "//", backslashes,
 * any symlink on the way). Exposed for tests. */
int vc_webroot_open(int dirfd, const char *url, const char **ctype, off_t *size);

/* The Content-Type for a file name (by extension); octet-stream otherwise. */
const char *vc_webroot_ctype(const char *name);

#endif
