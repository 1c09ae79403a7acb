/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef __QOS_EXPORTER_H
#define __QOS_EXPORTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct MHD_Daemon;
struct qos_exporter_conn;

/* A scraper prefix: only addresses under one of them are served. */
struct qos_exporter_allow {
	int family;		/* AF_INET or AF_INET6 */
	uint8_t addr[16];	/* network order, IPv4 in the first 4 bytes */
	uint8_t plen;
};

#define QOS_EXPORTER_MAX_ALLOW 16

/*
 * Serve GET /metrics (the Prometheus text of every interface with qosctl
 * state in this network namespace) on @listen: "[IPV6]:PORT",
 * "IPV4:PORT" or ":PORT" / "PORT" for every address of both families.
 * With @nallow > 0, connections from elsewhere than @allow are closed
 * unanswered. Runs until SIGINT or SIGTERM.
 */
int qos_exporter_run(const char *listen, const struct qos_exporter_allow *allow, size_t nallow,
		     char *err, size_t errlen);

/* "ADDR[/LEN],...": at most QOS_EXPORTER_MAX_ALLOW prefixes. */
int qos_exporter_parse_allow(const char *s, struct qos_exporter_allow *allow, size_t *nallow,
			     char *err, size_t errlen);

/*
 * The HTTP side alone, for a command that keeps its own metrics (probe
 * send --continuous): GET /metrics answers what @write puts in the
 * stream (a non-zero return: status 500), called from the server's
 * thread. Signals are the caller's to handle: block them before the
 * start, so the server's thread inherits the mask.
 */
struct qos_exporter {
	int (*write)(FILE *f, void *arg);
	void *arg;
	const struct qos_exporter_allow *allow;	/* none: anyone */
	size_t nallow;
	struct MHD_Daemon *d;
	/* Open connections, oldest first; only the server's thread uses them. */
	struct qos_exporter_conn *head, *tail;
	unsigned int nconns;
};

int qos_exporter_start(struct qos_exporter *srv, const char *listen, char *err, size_t errlen);
void qos_exporter_stop(struct qos_exporter *srv);

#endif /* __QOS_EXPORTER_H */
