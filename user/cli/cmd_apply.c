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

static int dry_run(const char *profile, const char *name, uint64_t bps, uint64_t ingress_bps,
		   const struct qos_ll_spec *ll, uint32_t queues, enum qos_tcx_place place)
{
	struct qos_root_info ri = {};
	struct qos_plan plan;
	struct qos_dev dev;
	char err[512];
	uint32_t mtu, txqs;
	int ifindex, ret;

	ifindex = if_nametoindex(name);
	if (!ifindex) {
		qos_err("apply: dev %s: no such device", name);
		return -ENODEV;
	}
	ret = qos_link_mtu(ifindex, &mtu) ?: qos_link_txqs(ifindex, &txqs);
	if (ret) {
		qos_err("apply: dev %s: reading its MTU and TX queues: %s", name, strerror(-ret));
		return ret;
	}
	ret = qos_plan_profile(profile, bps, ingress_bps, ll, mtu, queues, txqs, &plan, err,
			       sizeof(err)) ?:
	      qos_strict_check(err, sizeof(err));
	/* What apply would keep: the live rules of what runs now (read as
	 * it is: a dry-run finishes nothing either). */
	if (!ret && !qos_dev_open(&dev, name, 0, err, sizeof(err))) {
		ret = qos_plan_keep_live(&plan, &dev, err, sizeof(err));
		qos_tcx_place_set(&dev, &plan, place);
		qos_dev_close(&dev);
	}
	if (ret) {
		qos_err("apply: %s", err);
		qos_plan_free(&plan);
		return -1;
	}
	qos_root_read(ifindex, &ri);
	qos_dry_run(stdout, name, profile, bps, &plan, ri.clsact, qos_attach_is_tcx(ifindex));
	qos_plan_free(&plan);
	return 0;
}

int do_apply(int argc, char **argv)
{
	struct qos_dev dev;
	struct args a = {};
	char err[512];
	uint64_t bps, ingress_bps = 0;
	int ret;

	if (argc < 1) {
		qos_err("apply: missing PROFILE");
		return -EINVAL;
	}
	if (parse_kv(argc - 1, argv + 1, &a) || need_dev(&a) || parse_link_rate(a.rate, &bps))
		return -EINVAL;
	if (a.ingress_rate && (qos_parse_rate(a.ingress_rate, 0, &ingress_bps) || !ingress_bps)) {
		qos_err("apply: ingress-rate '%s': not a rate (e.g. 300mbit)", a.ingress_rate);
		return -EINVAL;
	}
	if (a.ingress_rate)
		qos_rate_check("apply: ingress-rate", a.ingress_rate, ingress_bps, 0);
	if (opt.dry_run && opt.confirm) {
		qos_err("apply: --dry-run and --confirm exclude each other");
		return -EINVAL;
	}
	if (cli_check_profile("apply", argv[0]))
		return -ENOENT;
	if (opt.dry_run)
		return dry_run(argv[0], a.dev, bps, ingress_bps, &a.ll, a.queues, a.tcx_place);
	ret = qos_txn_open(&dev, a.dev, 0, err, sizeof(err));
	if (!ret) {
		ret = qos_txn_apply(&dev, argv[0], bps, ingress_bps, &a.ll, a.queues, a.tcx_place,
				    opt.confirm, err, sizeof(err));
		/* Under the lock, from what the installer read back from the
		 * kernel to verify it: what is printed is what was installed. */
		if (!ret)
			qos_print_applied(stdout, dev.name, &dev.cfg);
		qos_txn_close(&dev);
	}
	if (ret) {
		qos_err("apply: %s", err);
		return -1;
	}
	if (opt.confirm)
		printf("dev %s: rolls back in %us unless 'qosctl confirm dev %s'\n",
		       a.dev, opt.confirm, a.dev);
	return 0;
}

/* remove and confirm: one device, opened for a change, one action. */
static int on_dev(const char *cmd, int argc, char **argv, unsigned int flags,
		  int (*act)(struct qos_dev *dev, char *err, size_t errlen))
{
	struct qos_dev dev;
	struct args a = {};
	char err[512];
	int ret;

	if (parse_kv(argc, argv, &a) || need_dev(&a))
		return -EINVAL;
	ret = qos_txn_open(&dev, a.dev, flags, err, sizeof(err));
	if (!ret) {
		ret = act(&dev, err, sizeof(err));
		qos_txn_close(&dev);
	}
	if (ret < 0)
		qos_err("%s: %s", cmd, err);
	return ret;
}

static int remove_dev(struct qos_dev *dev, char *err, size_t errlen)
{
	return qos_txn_remove(dev, opt.force, err, errlen);
}

int do_remove(int argc, char **argv)
{
	return on_dev("remove", argc, argv, opt.force ? QOS_DEV_BROKEN : 0, remove_dev) ? -1 : 0;
}

/* 1 confirmed, else an error. */
static int confirm_dev(struct qos_dev *dev, char *err, size_t errlen)
{
	if (qos_txn_confirm(dev, err, errlen))
		return 1;
	snprintf(err, errlen, "dev %s: no apply is waiting for confirmation", dev->name);
	return -ENOENT;
}

int do_confirm(int argc, char **argv)
{
	int ret = on_dev("confirm", argc, argv, 0, confirm_dev);

	if (ret != 1)
		return -1;
	printf("dev %s: confirmed\n", argv[1]);
	return 0;
}
