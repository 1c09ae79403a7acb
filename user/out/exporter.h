/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef __QOS_EXPORTER_H
#define __QOS_EXPORTER_H

#include <stddef.h>
#include <stdio.h>

struct MHD_Daemon;

/*
 * Serve GET /metrics (the Prometheus text of every interface with qosctl
 * state in this network namespace) on @listen: "[IPV6]:PORT",
 * "IPV4:PORT" or ":PORT" / "PORT" for every address of both families.
 * Runs until SIGINT or SIGTERM.
 */
int qos_exporter_run(const char *listen, char *err, size_t errlen);

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
	struct MHD_Daemon *d;
};

int qos_exporter_start(struct qos_exporter *srv, const char *listen, char *err, size_t errlen);
void qos_exporter_stop(struct qos_exporter *srv);

#endif /* __QOS_EXPORTER_H */
