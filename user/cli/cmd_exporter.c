// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * qosctl exporter: serve the Prometheus text over HTTP.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "lib/util.h"
#include "out/exporter.h"

int do_exporter(int argc, char **argv)
{
	struct qos_exporter_allow allow[QOS_EXPORTER_MAX_ALLOW];
	size_t nallow = 0;
	char err[512];

	if (argc >= 1 && !strcmp(argv[0], "allow")) {
		if (argc < 2) {
			qos_err("exporter: allow: expected PREFIX[,PREFIX...]");
			return -EINVAL;
		}
		if (qos_exporter_parse_allow(argv[1], allow, &nallow, err, sizeof(err))) {
			qos_err("exporter: %s", err);
			return -EINVAL;
		}
		argc -= 2;
		argv += 2;
	}
	if (argc) {
		qos_err("exporter: unexpected argument '%s'", argv[0]);
		return -EINVAL;
	}
	if (!opt.listen) {
		qos_err("exporter: missing --listen ADDR:PORT");
		return -EINVAL;
	}
	if (qos_exporter_run(opt.listen, allow, nallow, err, sizeof(err))) {
		qos_err("exporter: %s", err);
		return -1;
	}
	return 0;
}
