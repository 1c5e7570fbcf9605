/* Who holds a TCP port: when vcapd cannot listen because the port is taken
 * (EADDRINUSE), the error names the program that listens there, and says
 * when it is a known camera streamer (OctoPi, MainsailOS and crowsnest
 * installs run one on 8080). Reads /proc only; no loop. */
#ifndef VC_PORTOWNER_H
#define VC_PORTOWNER_H

#include <stddef.h>

/* Finds the process listening on TCP port (IPv4 or IPv6) through
 * proc (normally "/proc"): net/tcp{,6} give the socket's inode, fd/ links
 * of each process the owner. Returns its pid and writes its name (comm)
 * into name; -ENOENT when no socket listens there; -EACCES when one does
 * but its process is not visible to us (another user's, ProtectProc). */
int vc_port_owner(const char *proc, unsigned port, char *name, size_t n);

/* The streamer a process name belongs to ("ustreamer" -> "µStreamer"),
 * or NULL when it is none vcapd knows. */
const char *vc_port_owner_streamer(const char *comm);

/* One line for the log after "cannot listen on ADDR: Address already in
 * use": who holds the port, and what to do about it. */
void vc_port_owner_advice(const char *proc, unsigned port, char *out, size_t n);

#endif
