// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz-http.c -- labd's HTTP API as a client reaches it: the input is sent
 * as it is over a TCP connection to a labd (libmicrohttpd, routing,
 * authentication, every handler) running in this process on a lab of one
 * simulated board, and the answer read back.  The lab's state (jobs,
 * reservations) grows with the inputs, as a real labd's does.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/diag.h"
#include "core/log.h"
#include "core/loop.h"
#include "daemon.h"
#include "fuzz.h"

#define STEP_USEC 1000
#define INPUT_BUDGET_USEC (300 * 1000)	/* to send, then to read the answer */
#define QUIET_USEC (20 * 1000)		/* no more answer coming */

static struct daemon *d;
static struct loop *loop;
static int port;

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	FUZZ_ASSERT(f && fputs(text, f) >= 0 && fclose(f) == 0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct daemon_options opts = { .listen = "127.0.0.1:0" };
	const char *top = getenv("LABD_TOP");
	char dir[] = "/tmp/fuzz-http.XXXXXX", path[512], cmd[1024];
	struct diag diag = DIAG_INIT;

	FUZZ_ASSERT(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/devices", dir);
	FUZZ_ASSERT(mkdir(path, 0700) == 0);
	snprintf(cmd, sizeof(cmd), "cp %s/devices/sim.conf %s/devices/00-types.conf",
		 top ? top : ".", dir);
	FUZZ_ASSERT(system(cmd) == 0);
	snprintf(path, sizeof(path), "%s/devices/10-sim-01.conf", dir);
	write_file(path, "device = { name = \"sim-01\"; type = \"sim-uboot\";\n"
			 "  console = { driver = \"pty\"; path = \"/dev/null\"; };\n"
			 "  power = { driver = \"command\"; on = \"true\"; off = \"true\"; }; };\n");
	snprintf(path, sizeof(path), "%s/labd.conf", dir);
	write_file(path, "lab_name = \"fuzz\";\nstate_dir = \"state\";\ndevices_dir = \"devices\";\n"
			 "http = { tokens = [ \"fuzz-token\" ]; };\n");
	opts.config_path = strdup(path);
	log_set_level(LOG_LEVEL_ERROR);
	FUZZ_ASSERT(daemon_new(&opts, &d, &diag) == 0);
	diag_release(&diag);
	loop = daemon_loop(d);
	port = daemon_api_port(d);
	FUZZ_ASSERT(port > 0);
	return 0;
}

static int connect_api(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	FUZZ_ASSERT(fd >= 0);
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t sent = 0;
	uint64_t waited = 0, quiet;
	char buf[65536];
	ssize_t n;
	int fd = connect_api();

	if (fd < 0)
		return 0;
	/* send, while labd runs */
	while (sent < size && waited < INPUT_BUDGET_USEC) {
		n = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
		if (n > 0)
			sent += (size_t)n;
		else if (n < 0 && errno != EAGAIN && errno != ENOTCONN)
			break;
		loop_run_once(loop, STEP_USEC);
		waited += STEP_USEC;
	}
	shutdown(fd, SHUT_WR);
	/*
	 * Read the answer until labd closes, or falls silent for QUIET_USEC
	 * (libmicrohttpd keeps a half-closed keep-alive connection open).
	 */
	for (waited = quiet = 0; waited < INPUT_BUDGET_USEC && quiet < QUIET_USEC;
	     waited += STEP_USEC) {
		loop_run_once(loop, STEP_USEC);
		n = recv(fd, buf, sizeof(buf), 0);
		if (n == 0 || (n < 0 && errno != EAGAIN))
			break;
		quiet = n > 0 ? 0 : quiet + STEP_USEC;
	}
	if (getenv("FUZZ_DEBUG"))
		fprintf(stderr, "sent %zu/%zu, answer after %llu usec\n", sent, size,
			(unsigned long long)waited);
	close(fd);
	/* let labd see the close and free the connection */
	for (waited = 0; waited < 5 * STEP_USEC; waited += STEP_USEC)
		loop_run_once(loop, STEP_USEC);
	return 0;
}
