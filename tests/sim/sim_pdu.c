// SPDX-License-Identifier: GPL-2.0-or-later
/* sim_pdu.c -- simboard: the boards as the outlets of one PDU behind pdudaemon's HTTP API */
/*
 * `simboard --pdu-port P` answers pdudaemon's requests on 127.0.0.1:P,
 * GET /power/control/{on|off|reboot}?hostname=H&port=N, as pdudaemon does
 * once its PDU acted: outlet N is board N (H is not checked; a reboot is
 * off then on, its delay not waited), 200 when done, 500 "Invalid request"
 * otherwise.  libmicrohttpd runs in simboard's own epoll loop.  A lab of
 * hundreds of boards switches them through one such daemon, not a process
 * per switch: bench-multihost measures labd's claims, not fork and exec.
 */
#include "sim.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include <microhttpd.h>

#define PDU_PATH "/power/control/"

static struct MHD_Daemon *pdu;
static int pdu_tag = TAG_PDU;

static enum MHD_Result pdu_reply(struct MHD_Connection *c, unsigned int status,
				 const char *text)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* The ctl command for @url and outlet @port ("power sim3 on"), or -EINVAL. */
static int pdu_command(const char *url, const char *port, char *line, size_t size)
{
	const char *verb = url + strlen(PDU_PATH);
	struct board *b;
	char *end;
	long n;

	if (strncmp(url, PDU_PATH, strlen(PDU_PATH)) || !port)
		return -EINVAL;
	if (strcmp(verb, "on") && strcmp(verb, "off") && strcmp(verb, "reboot"))
		return -EINVAL;
	n = strtol(port, &end, 10);
	b = end != port && !*end ? sim_board_at((int)n) : NULL;
	if (!b)
		return -EINVAL;
	snprintf(line, size, "power %s %s", b->name, !strcmp(verb, "reboot") ? "reset" : verb);
	return 0;
}

static enum MHD_Result pdu_request(void *cls, struct MHD_Connection *c, const char *url,
				   const char *method, const char *version,
				   const char *upload_data, size_t *upload_size, void **state)
{
	const char *port = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "port");
	char line[128], reply[512];

	if (!*state) {
		*state = &pdu_tag;	/* headers in: the answer on the next call */
		return MHD_YES;
	}
	*upload_size = 0;
	if (pdu_command(url, port, line, sizeof(line)) < 0)
		return pdu_reply(c, 500, "Invalid request");
	sim_ctl_command(line, reply, sizeof(reply));
	if (strncmp(reply, "ok", 2))
		return pdu_reply(c, 500, "Invalid request");
	return pdu_reply(c, 200, "OK");
}

int sim_pdu_start(int epfd, unsigned int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &pdu_tag };
	const union MHD_DaemonInfo *info;

	pdu = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_ERROR_LOG, (uint16_t)port, NULL, NULL,
			       pdu_request, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
			       MHD_OPTION_END);
	if (!pdu)
		return -EADDRINUSE;
	info = MHD_get_daemon_info(pdu, MHD_DAEMON_INFO_EPOLL_FD);
	if (!info || epoll_ctl(epfd, EPOLL_CTL_ADD, info->epoll_fd, &ev))
		return -EIO;
	return 0;
}

void sim_pdu_run(void)
{
	if (pdu)
		MHD_run(pdu);
}

int sim_pdu_timeout_ms(void)
{
	MHD_UNSIGNED_LONG_LONG ms;

	if (!pdu || MHD_get_timeout(pdu, &ms) != MHD_YES)
		return -1;
	return ms > 1000 ? 1000 : (int)ms;
}

void sim_pdu_stop(void)
{
	if (pdu)
		MHD_stop_daemon(pdu);
	pdu = NULL;
}
