// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * qosctl show and stats: read one stats model, render it as a table, JSON,
 * Prometheus text or a watch.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "kernel/stats.h"
#include "lib/util.h"
#include "out/prom.h"
#include "out/report.h"
#include "out/watch.h"
#include "probe/sla_state.h"
#include "txn/txn.h"

/* With @sla, also the SLA verdicts the probes publish for the device. */
static int read_report(int argc, char **argv, const char *cmd, struct qos_report *r,
		       struct pstate_sla **sla, int *nsla)
{
	struct qos_dev dev;
	struct args a = {};
	char err[512];
	int ret;

	if (parse_kv(argc, argv, &a) || need_dev(&a))
		return -EINVAL;
	ret = qos_txn_open_read(&dev, a.dev, err, sizeof(err));
	ret = ret ?: qos_report_read(&dev, r, err, sizeof(err));
	if (!ret)
		r->confirm_left = qos_txn_pending(&dev);
	if (!ret && sla) {
		*nsla = pstate_read(dev.netns, dev.ifindex, sla, err, sizeof(err));
		/* The device's own state is shown whatever the probes' is. */
		if (*nsla < 0) {
			qos_warn("%s", err);
			*nsla = 0;
		}
	}
	qos_dev_close(&dev);
	if (ret) {
		qos_err("%s: %s", cmd, err);
		return -1;
	}
	return 0;
}

int do_show(int argc, char **argv)
{
	static struct qos_report r;
	struct pstate_sla *sla = NULL;
	int nsla = 0;
	int err = read_report(argc, argv, "show", &r, &sla, &nsla);

	if (!err)
		qos_report_show(stdout, &r, sla, nsla, opt.json);
	free(sla);
	return err;
}

static int stats_prometheus(const char *dev)
{
	static struct qos_report one;
	const struct qos_report *rp[1] = { &one };
	struct qos_report *all = NULL;
	const struct qos_report **allp;
	char err[512];
	int i, n;

	if (dev) {
		if (qos_report_read_name(dev, &one, err, sizeof(err))) {
			qos_err("stats: %s", err);
			return -1;
		}
		qos_prom_write(stdout, rp, 1);
		return 0;
	}
	n = qos_report_read_all(&all);
	if (n < 0) {
		qos_err("stats: reading qosctl state: %s", strerror(-n));
		return n;
	}
	allp = calloc(n ?: 1, sizeof(*allp));
	if (!allp) {
		free(all);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		allp[i] = &all[i];
	qos_prom_write(stdout, allp, n);
	free(allp);
	free(all);
	return 0;
}

/* The options of stats that go together, and the view they ask for. */
static int stats_view(unsigned int *view)
{
	if (opt.prometheus && (opt.json || opt.watch || opt.stats || opt.wide ||
			       opt.per_family)) {
		qos_err("stats: --prometheus excludes -j, -s, --wide, --per-family and --watch");
		return -EINVAL;
	}
	if (opt.wide && opt.per_family) {
		qos_err("stats: --wide and --per-family exclude each other");
		return -EINVAL;
	}
	if (opt.watch && opt.stats) {
		qos_err("stats: --watch shows rates, -s does not apply");
		return -EINVAL;
	}
	if (opt.count && !opt.watch) {
		qos_err("stats: --count goes with --watch");
		return -EINVAL;
	}
	*view = (opt.stats ? QOS_STATS_DETAILS : 0) | (opt.wide ? QOS_STATS_WIDE : 0) |
		(opt.per_family ? QOS_STATS_FAMILY : 0);
	return 0;
}

int do_stats(int argc, char **argv)
{
	static struct qos_report r;
	struct args a = {};
	unsigned int view;
	char err[512];
	int ret;

	if (stats_view(&view))
		return -EINVAL;
	if (opt.prometheus) {
		if (parse_kv(argc, argv, &a))
			return -EINVAL;
		return stats_prometheus(a.dev);
	}
	if (opt.watch) {
		if (parse_kv(argc, argv, &a) || need_dev(&a))
			return -EINVAL;
		ret = qos_stats_watch(a.dev, opt.watch, opt.count, opt.json, view, stdout, err,
				      sizeof(err));
		if (ret)
			qos_err("stats: %s", err);
		return ret;
	}
	ret = read_report(argc, argv, "stats", &r, NULL, NULL);
	if (!ret)
		qos_report_stats(stdout, &r, opt.json, view);
	return ret;
}
