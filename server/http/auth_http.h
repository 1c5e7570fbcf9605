/* The HTTP side of authentication: which endpoint class a request belongs
 * to, and the gate (vc_http_set_gate) that enforces the class policy with
 * 401 + WWW-Authenticate. */
#ifndef VC_AUTH_HTTP_H
#define VC_AUTH_HTTP_H

#include <microhttpd.h>

#include "server/http/auth.h"
#include "server/http/http.h"

/* The class of a request, or -1 for open resources (the web page's static
 * files). Any method other than GET/HEAD is control. action: the "action"
 * query argument (mjpg-streamer URLs on "/"), or NULL. */
int vc_auth_classify(const char *method, const char *url, const char *action);

/* vc_http_gate_fn; opaque is a struct vc_auth ** so a reload can swap the
 * auth object in place (NULL *opaque = everything open). */
int vc_auth_gate(void *opaque, struct vc_http_req *r, enum MHD_Result *res);

#endif
