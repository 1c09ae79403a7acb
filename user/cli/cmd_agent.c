// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * qosctl agent [--router NAME]: the router's domain agent, in the
 * foreground (domain/agent_loop.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "cli/cli.h"
#include "domain/agent.h"
#include "domain/etcd.h"
#include "lib/names.h"
#include "lib/util.h"

int do_agent(int argc, char **argv)
{
	struct qos_etcd_tls tls = { opt.etcd_ca, opt.etcd_cert, opt.etcd_key };
	struct qos_agent_opts o = {
		.root = QOS_DOMAIN_ROOT,
		.endpoints = opt.etcd,
		.tls = &tls,
		.timeout_ms = opt.etcd_timeout_ms,
	};
	char host[HOST_NAME_MAX + 1], err[512];

	if (argc) {
		qos_err("agent: unexpected argument '%s' (see 'qosctl help agent')", argv[0]);
		return -EINVAL;
	}
	o.router = opt.router;
	if (!o.router) {
		if (gethostname(host, sizeof(host))) {
			qos_err("agent: no --router and no host name");
			return -EINVAL;
		}
		o.router = host;
	}
	if (!qos_name_ok(o.router, QOS_NAME_MAX)) {
		qos_err("agent: router '%s': not a name (%s)", o.router, QOS_NAME_CHARS);
		return -EINVAL;
	}
	if (qos_agent_run(&o, err, sizeof(err))) {
		qos_err("agent: %s", err);
		return -1;
	}
	return 0;
}
