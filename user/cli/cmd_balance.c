// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * qosctl balance dev IFACE [period MS]: share a multi-queue tree's rates
 * among its queues by demand, in the foreground (kernel/balance.c).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "cli/cli.h"
#include "kernel/balance.h"
#include "lib/util.h"
#include "out/balance.h"

static void on_signal(int sig)
{
	(void)sig;
	qos_balance_stop = 1;
}

static uint64_t cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

static int parse_period(const char *s, unsigned int *ms)
{
	uint32_t v = QOS_BAL_PERIOD_MS;

	if (s && (qos_parse_u32(s, &v) || v < QOS_BAL_PERIOD_MIN || v > QOS_BAL_PERIOD_MAX)) {
		qos_err("balance: period '%s': not a number of milliseconds (%u-%u)", s,
			QOS_BAL_PERIOD_MIN, QOS_BAL_PERIOD_MAX);
		return -EINVAL;
	}
	*ms = v;
	return 0;
}

int do_balance(int argc, char **argv)
{
	static struct qos_balancer b;
	struct sigaction sa = { .sa_handler = on_signal };
	struct qos_dev dev;
	unsigned int period;
	struct args a;
	char err[512];
	int ret;

	if (parse_kv(argc, argv, &a) || need_dev(&a) || parse_period(a.period, &period))
		return -EINVAL;
	ret = qos_dev_open(&dev, a.dev, QOS_DEV_LOCK, err, sizeof(err));
	if (ret) {
		qos_err("balance: %s", err);
		return -1;
	}
	/* No SA_RESTART: a signal ends the sleep between two periods. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	ret = qos_balance_start(&b, &dev, period, err, sizeof(err));
	if (!ret) {
		qos_balance_print_start(stdout, &b, opt.json);
		ret = qos_balance_run(&b, err, sizeof(err));
	}
	if (ret)
		qos_err("balance: %s", err);
	if (qos_balance_end(&b, err, sizeof(err))) {
		qos_err("balance: %s", err);
		ret = ret ?: -1;
	}
	if (!ret)
		ret = qos_balance_print_end(stdout, &b, cpu_ns(), opt.json);
	qos_dev_close(&dev);
	return ret ? -1 : 0;
}
