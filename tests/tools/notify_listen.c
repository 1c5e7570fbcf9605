/* notify_listen PATH SECONDS: stands in for systemd's notify socket in tests
 * (ops). Binds a datagram socket at PATH, prints each message on one line
 * (newlines inside a message shown as '|'), exits after STOPPING=1 or when
 * SECONDS pass without a message. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char buf[4096];

	if (argc != 3 || strlen(argv[1]) >= sizeof(a.sun_path)) {
		fprintf(stderr, "usage: notify_listen PATH SECONDS\n");
		return 2;
	}
	strcpy(a.sun_path, argv[1]);
	unlink(argv[1]);
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("notify_listen: bind");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, atoi(argv[2]) * 1000) <= 0)
			break;
		ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
		if (n < 0)
			break;
		buf[n] = '\0';
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] == '\n')
				buf[i] = '|';
		printf("%s\n", buf);
		if (strstr(buf, "STOPPING=1"))
			break;
	}
	unlink(argv[1]);
	return 0;
}
