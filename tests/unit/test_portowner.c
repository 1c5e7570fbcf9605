/* server/http/portowner.c: the process listening on a port is found
 * through /proc (this test's own listening socket), a free port is
 * -ENOENT, known streamers are named, and the advice line says what to do. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "server/http/portowner.h"

/* A listening IPv4 socket on a free loopback port: fd, port in *port. */
static int listen_any(unsigned *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sl) < 0 || listen(fd, 1) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

static void finds_self(void)
{
	unsigned port = 0;
	char name[64] = "", line[400];
	int fd = listen_any(&port);

	CHECK(fd >= 0, "cannot listen: %s", strerror(errno));
	if (fd < 0)
		return;
	int pid = vc_port_owner("/proc", port, name, sizeof(name));
	/* under qemu-user (VC_TEST_EMULATED) the kernel's name of this
	 * process is the emulator's, e.g. qemu-aarch64 */
	const char *emu = getenv("VC_TEST_EMULATED");
	int named = !strcmp(name, "test_portowner") ||
		    (emu && *emu && strcmp(emu, "0") && !strncmp(name, "qemu-", 5));
	CHECK(pid == (int)getpid() && named, "owner of %u: %d '%s'", port, pid, name);
	vc_port_owner_advice("/proc", port, line, sizeof(line));
	CHECK(strstr(line, "vcapd listens there already") != NULL, "advice for ourselves: %s", line);
	close(fd);
	/* closed: nobody listens there any more */
	pid = vc_port_owner("/proc", port, name, sizeof(name));
	CHECK(pid == -ENOENT, "closed port %u: %d", port, pid);
	vc_port_owner_advice("/proc", port, line, sizeof(line));
	CHECK(strstr(line, "ss -ltnp") != NULL, "advice without an owner: %s", line);
}

/* A /proc without the owner's fd links (another user's, ProtectProc): the
 * socket is seen in net/tcp, its process is not. */
static void hidden_owner(void)
{
	char dir[] = "/tmp/portowner.XXXXXX", path[300], name[64];

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/net", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/net/tcp", dir);
	FILE *f = fopen(path, "w");
	if (f) {
		fputs("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt"
		      "   uid  timeout inode\n"
		      "   0: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000"
		      "   109        0 424242 1 0000000000000000 100 0 0 10 0\n", f);
		fclose(f);
	}
	CHECK(vc_port_owner(dir, 8080, name, sizeof(name)) == -EACCES, "hidden owner of 8080");
	CHECK(vc_port_owner(dir, 8081, name, sizeof(name)) == -ENOENT, "8081 free");
	unlink(path);
	snprintf(path, sizeof(path), "%s/net", dir);
	rmdir(path);
	rmdir(dir);
}

static void streamers(void)
{
	CHECK(vc_port_owner_streamer("ustreamer") && strstr(vc_port_owner_streamer("ustreamer"), "µStreamer"),
	      "ustreamer");
	CHECK(vc_port_owner_streamer("mjpg_streamer") != NULL, "mjpg_streamer");
	CHECK(vc_port_owner_streamer("camera-streamer") != NULL, "camera-streamer");
	CHECK(vc_port_owner_streamer("crowsnest") != NULL, "crowsnest");
	CHECK(vc_port_owner_streamer("nginx") == NULL, "nginx is no streamer");
}

int main(void)
{
	RUN("portowner", finds_self);
	RUN("portowner", hidden_owner);
	RUN("portowner", streamers);
	CHECK_EXIT();
}
