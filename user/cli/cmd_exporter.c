// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * qosctl exporter: serve the Prometheus text over HTTP.
 */
#include <errno.h>
#include <stdio.h>

#include "cli/cli.h"
#include "lib/util.h"
#include "out/exporter.h"

int do_exporter(int argc, char **argv)
{
	char err[512];

	if (argc) {
		qos_err("exporter: unexpected argument '%s'", argv[0]);
		return -EINVAL;
	}
	if (!opt.listen) {
		qos_err("exporter: missing --listen ADDR:PORT");
		return -EINVAL;
	}
	if (qos_exporter_run(opt.listen, err, sizeof(err))) {
		qos_err("exporter: %s", err);
		return -1;
	}
	return 0;
}

