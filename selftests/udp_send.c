// SPDX-License-Identifier: GPL-2.0-only
/*
 * Send COUNT UDP datagrams to an IPv6 address with a chosen flow label and
 * Traffic Class, from a fixed source port, one per millisecond (paced so a
 * short PIP queue does not overflow).
 *
 * Usage: udp_send DST PORT COUNT FLOWLABEL [TCLASS [SPORT]]
 *
 * The label is leased through IPV6_FLOWLABEL_MGR and sent with
 * IPV6_FLOWINFO_SEND, the socket API of RFC 3697 as Linux implements it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <linux/in6.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int fail(const char *what)
{
	fprintf(stderr, "udp_send: %s: %s\n", what, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	struct timespec gap = { 0, 1000000 };
	struct in6_flowlabel_req req = {};
	struct sockaddr_in6 dst = { .sin6_family = AF_INET6 };
	struct sockaddr_in6 src = { .sin6_family = AF_INET6 };
	unsigned long count, label, i;
	int fd, on = 1, tclass = 0;
	char payload[64];

	if (argc < 5 || argc > 7) {
		fprintf(stderr, "usage: udp_send DST PORT COUNT FLOWLABEL [TCLASS [SPORT]]\n");
		return 2;
	}
	if (inet_pton(AF_INET6, argv[1], &dst.sin6_addr) != 1) {
		fprintf(stderr, "udp_send: '%s' is not an IPv6 address\n", argv[1]);
		return 2;
	}
	dst.sin6_port = htons(strtoul(argv[2], NULL, 0));
	count = strtoul(argv[3], NULL, 0);
	label = strtoul(argv[4], NULL, 0) & 0xfffff;
	if (argc > 5)
		tclass = strtoul(argv[5], NULL, 0) & 0xff;
	src.sin6_port = htons(argc > 6 ? strtoul(argv[6], NULL, 0) : 40000);

	fd = socket(AF_INET6, SOCK_DGRAM, 0);
	if (fd < 0)
		return fail("socket");
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) ||
	    bind(fd, (struct sockaddr *)&src, sizeof(src)))
		return fail("bind");
	if (setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &tclass, sizeof(tclass)))
		return fail("IPV6_TCLASS");
	if (label) {
		req.flr_dst = dst.sin6_addr;
		req.flr_label = htonl(label);
		req.flr_action = IPV6_FL_A_GET;
		req.flr_flags = IPV6_FL_F_CREATE;
		req.flr_share = IPV6_FL_S_ANY;
		if (setsockopt(fd, IPPROTO_IPV6, IPV6_FLOWLABEL_MGR, &req, sizeof(req)))
			return fail("IPV6_FLOWLABEL_MGR");
		if (setsockopt(fd, IPPROTO_IPV6, IPV6_FLOWINFO_SEND, &on, sizeof(on)))
			return fail("IPV6_FLOWINFO_SEND");
		dst.sin6_flowinfo = htonl(label);
	}
	memset(payload, 0x5a, sizeof(payload));
	for (i = 0; i < count; i++) {
		if (sendto(fd, payload, sizeof(payload), 0, (struct sockaddr *)&dst,
			   sizeof(dst)) < 0)
			return fail("sendto");
		nanosleep(&gap, NULL);
	}
	close(fd);
	return 0;
}
