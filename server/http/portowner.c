/* Who holds a TCP port (see portowner.h). */
#include "server/http/portowner.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Inodes of the listening sockets on port in one of proc/net/tcp{,6}. */
static size_t listen_inodes(const char *proc, const char *file, unsigned port,
			    unsigned long *ino, size_t max, size_t n)
{
	char path[256], line[512];

	snprintf(path, sizeof(path), "%s/net/%s", proc, file);
	FILE *f = fopen(path, "r");
	if (!f)
		return n;
	/* "  0: 0100007F:1F90 00000000:0000 0A ... uid timeout inode" */
	while (n < max && fgets(line, sizeof(line), f)) {
		char local[64];
		unsigned st, lport;
		unsigned long inode;

		if (sscanf(line, " %*d: %63s %*s %x %*s %*s %*s %*s %*s %lu", local, &st, &inode) != 3)
			continue;
		char *colon = strrchr(local, ':');
		if (!colon || sscanf(colon + 1, "%x", &lport) != 1)
			continue;
		if (st == 0x0A && lport == port && inode) /* TCP_LISTEN */
			ino[n++] = inode;
	}
	fclose(f);
	return n;
}

/* 1 when process pid has one of the sockets open. */
static int has_socket(const char *proc, const char *pid, const unsigned long *ino, size_t n)
{
	char path[300], link[64];
	DIR *d;
	struct dirent *e;
	int found = 0;

	snprintf(path, sizeof(path), "%s/%s/fd", proc, pid);
	if (!(d = opendir(path)))
		return 0;
	while (!found && (e = readdir(d))) {
		char fd[600];
		unsigned long x;

		snprintf(fd, sizeof(fd), "%s/%s", path, e->d_name);
		ssize_t l = readlink(fd, link, sizeof(link) - 1);
		if (l <= 0)
			continue;
		link[l] = '\0';
		if (sscanf(link, "socket:[%lu]", &x) != 1)
			continue;
		for (size_t i = 0; i < n; i++)
			if (ino[i] == x)
				found = 1;
	}
	closedir(d);
	return found;
}

int vc_port_owner(const char *proc, unsigned port, char *name, size_t n)
{
	unsigned long ino[16];
	size_t ni = listen_inodes(proc, "tcp", port, ino, 16, 0);
	DIR *d;
	struct dirent *e;
	int pid = -EACCES;

	ni = listen_inodes(proc, "tcp6", port, ino, 16, ni);
	if (!ni)
		return -ENOENT;
	if (!(d = opendir(proc)))
		return -EACCES;
	while (pid < 0 && (e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]) || !has_socket(proc, e->d_name, ino, ni))
			continue;
		char path[300];
		snprintf(path, sizeof(path), "%s/%s/comm", proc, e->d_name);
		FILE *f = fopen(path, "r");
		if (n)
			name[0] = '\0';
		if (f) {
			if (n && fgets(name, (int)n, f))
				name[strcspn(name, "\n")] = '\0';
			fclose(f);
		}
		pid = atoi(e->d_name);
	}
	closedir(d);
	return pid;
}

const char *vc_port_owner_streamer(const char *comm)
{
	/* process names (comm: 15 characters at most) of streamers that
	 * OctoPi, MainsailOS/crowsnest and others start on port 8080 */
	static const struct {
		const char *comm, *what;
	} known[] = {
		{ "ustreamer", "µStreamer (OctoPi's or crowsnest's webcam streamer)" },
		{ "mjpg_streamer", "mjpg-streamer (OctoPi's webcam streamer)" },
		{ "camera-streamer", "camera-streamer (crowsnest's or OctoPi's streamer)" },
		{ "crowsnest", "crowsnest (MainsailOS's webcam service)" },
		{ "go2rtc", "go2rtc" },
		{ "motion", "motion" },
		{ "vcapd", "another vcapd" },
	};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(comm, known[i].comm))
			return known[i].what;
	return NULL;
}

void vc_port_owner_advice(const char *proc, unsigned port, char *out, size_t n)
{
	char comm[64] = "";
	int pid = vc_port_owner(proc, port, comm, sizeof(comm));
	const char *streamer = pid > 0 ? vc_port_owner_streamer(comm) : NULL;

	if (pid == (int)getpid())
		snprintf(out, n, "port %u: vcapd listens there already (two listen addresses "
			 "overlap, e.g. 0.0.0.0:%u and 127.0.0.1:%u)", port, port, port);
	else if (streamer)
		snprintf(out, n, "port %u is held by %s, pid %d: stop it (%s) or give vcapd "
			 "another port (--listen or listen = 0.0.0.0:8081)", port, streamer, pid,
			 !strcmp(comm, "vcapd") ? "sudo systemctl stop vcapd, or end the one run by hand"
			 : "OctoPi: sudo systemctl disable --now webcamd; MainsailOS: sudo systemctl "
			   "disable --now crowsnest");
	else if (pid > 0)
		snprintf(out, n, "port %u is held by '%s', pid %d: stop it or give vcapd another "
			 "port (--listen or listen = 0.0.0.0:8081)", port, comm, pid);
	else
		snprintf(out, n, "port %u is taken by a process we cannot see (`sudo ss -ltnp "
			 "'sport = :%u'` names it): stop it or give vcapd another port "
			 "(--listen or listen = 0.0.0.0:8081)", port, port);
}
