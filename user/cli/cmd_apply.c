// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * qosctl apply, remove, confirm: the commands that change a device, each
 * one transaction on one device handle.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "kernel/qdisc.h"
#include "lib/util.h"
#include "out/dryrun.h"
#include "txn/plan.h"
#include "txn/txn.h"

static int dry_run(const char *profile, const char *dev, uint64_t bps)
{
	struct qos_root_info ri = {};
	struct nl_sock *sk = NULL;
	struct qos_plan plan;
	char err[512];
	int ifindex;

	ifindex = if_nametoindex(dev);
	if (!ifindex) {
		qos_err("apply: dev %s: no such device", dev);
		return -ENODEV;
	}
	if (qos_plan_profile(profile, bps, &plan, err, sizeof(err))) {
		qos_err("apply: %s", err);
		return -1;
	}
	if (!qos_nl_open(&sk))
		qos_root_info(sk, ifindex, &ri);
	qos_nl_close(sk);
	qos_dry_run(stdout, dev, profile, bps, &plan, ri.clsact);
	qos_plan_free(&plan);
	return 0;
}

int do_apply(int argc, char **argv)
{
	struct qos_dev dev;
	struct args a = {};
	char err[512];
	uint64_t bps;
	int ret;

	if (argc < 1) {
		qos_err("apply: missing PROFILE");
		return -EINVAL;
	}
	if (parse_kv(argc - 1, argv + 1, &a, ARG_DEV | ARG_RATE) || need_dev(&a) ||
	    parse_link_rate(a.rate, &bps))
		return -EINVAL;
	if (opt.dry_run && opt.confirm) {
		qos_err("apply: --dry-run and --confirm exclude each other");
		return -EINVAL;
	}
	if (opt.dry_run)
		return dry_run(argv[0], a.dev, bps);
	ret = qos_txn_open(&dev, a.dev, 0, err, sizeof(err));
	if (!ret) {
		ret = qos_txn_apply(&dev, argv[0], bps, opt.confirm, err, sizeof(err));
		qos_txn_close(&dev);
	}
	if (ret) {
		qos_err("apply: %s", err);
		return -1;
	}
	if (opt.confirm)
		printf("dev %s: applied; rolls back in %us unless 'qosctl confirm dev %s'\n",
		       a.dev, opt.confirm, a.dev);
	return 0;
}

int do_remove(int argc, char **argv)
{
	struct qos_dev dev;
	struct args a = {};
	char err[512];
	int ret;

	if (parse_kv(argc, argv, &a, ARG_DEV) || need_dev(&a))
		return -EINVAL;
	ret = qos_txn_open(&dev, a.dev, opt.force ? QOS_DEV_BROKEN : 0, err, sizeof(err));
	if (!ret) {
		ret = qos_txn_remove(&dev, opt.force, err, sizeof(err));
		qos_txn_close(&dev);
	}
	if (ret) {
		qos_err("remove: %s", err);
		return -1;
	}
	return 0;
}

int do_confirm(int argc, char **argv)
{
	struct qos_dev dev;
	struct args a = {};
	char err[512];
	int ret;

	if (parse_kv(argc, argv, &a, ARG_DEV) || need_dev(&a))
		return -EINVAL;
	ret = qos_txn_open(&dev, a.dev, 0, err, sizeof(err));
	if (ret) {
		qos_err("confirm: %s", err);
		return ret;
	}
	ret = qos_txn_confirm(&dev, err, sizeof(err));
	qos_txn_close(&dev);
	if (!ret) {
		qos_err("confirm: dev %s: no apply is waiting for confirmation", a.dev);
		return -ENOENT;
	}
	printf("dev %s: confirmed\n", a.dev);
	return 0;
}
