/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef __QOS_EXPORTER_H
#define __QOS_EXPORTER_H

#include <stddef.h>

/*
 * Serve GET /metrics (the Prometheus text of every interface with qosctl
 * state in this network namespace) on @listen: "[IPV6]:PORT",
 * "IPV4:PORT" or ":PORT" / "PORT" for every address of both families.
 * Runs until SIGINT or SIGTERM.
 */
int qos_exporter_run(const char *listen, char *err, size_t errlen);

#endif /* __QOS_EXPORTER_H */
