/* Request guards that need no credentials: the Host header check against DNS
 * rebinding (a web page the user visits resolves its own name to 127.0.0.1
 * and reads or writes the API as a "same-origin" page: the browser still
 * sends that foreign name as Host), and the loopback test used to keep
 * unauthenticated control writes local. Plain data built from the config;
 * rebuilt on reload. */
#ifndef VC_GUARD_H
#define VC_GUARD_H

#include <stddef.h>
#include <sys/socket.h>

#include "common/conf.h"
#include "common/guard_addr.h" /* vc_guard_addr: per-address groups */

struct vc_guard;

/* c may be NULL (no config: defaults). listen: the listen addresses in use
 * ("host:port"); their host names are accepted. 0 or -ENOMEM. */
int vc_guard_new(const struct vc_conf *c, const char *const *listen, size_t n_listen,
		 struct vc_guard **out);
void vc_guard_free(struct vc_guard *g);

/* 1 when a Host header value may reach this server: NULL (HTTP/1.0), an IP
 * literal (a rebinding attack needs a name it controls), localhost and
 * *.localhost, the machine's host name (and NAME.local), a listen host name,
 * or an allowed_hosts entry ("*" = any, "*.example.org" = its subdomains).
 * The port is not compared. Case-insensitive; a trailing dot is ignored. */
int vc_guard_host_ok(const struct vc_guard *g, const char *host);

/* 1 when control writes without credentials are allowed from any peer
 * (auth_control = none written in the config), 0 when only loopback peers
 * may send them while auth_control is open. */
int vc_guard_control_open_net(const struct vc_guard *g);

/* 1 for 127.0.0.0/8, ::1 and ::ffff:127.0.0.0/104; NULL = 0. */
int vc_guard_is_loopback(const struct sockaddr *sa);

/* 1 when a listen address ("host:port") binds only loopback. */
int vc_guard_listen_is_loopback(const char *listen);

#endif
