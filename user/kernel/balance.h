/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * qosctl balance: the loop that re-balances a multi-queue tree's HTB rates
 * by each queue's demand (model/balance.h) at a short period. It reads the
 * classes' counters with one netlink dump per period and changes only HTB
 * class rates (RTM_NEWTCLASS, in place); the device is its network
 * namespace and ifindex, its lock is taken for each period's change, and
 * its presence is the held file "<netns>-<ifindex>.balance" in
 * /run/qosctl, which show reads. Documentation/design.rst, "Multi-queue
 * trees: re-balancing".
 */
#ifndef __QOS_KERNEL_BALANCE_H
#define __QOS_KERNEL_BALANCE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "kernel/dev.h"
#include "kernel/qdisc.h"
#include "model/balance.h"

#define QOS_BAL_SUFFIX		"balance"
#define QOS_BAL_PERIOD_MS	100	/* the default period */
#define QOS_BAL_PERIOD_MIN	10
#define QOS_BAL_PERIOD_MAX	10000

/* One class of one queue's tree, as the kernel had it. */
struct qos_bal_cls {
	struct qos_class_stats st;
	uint64_t rate_Bps;	/* HTB's rate and ceil, bytes per second */
	uint64_t ceil_Bps;
	bool present;
};

/* [q][i]: class meta->classes[i] of queue q; i == nclasses: its M:1. */
struct qos_bal_sample {
	uint64_t t_ns;
	struct qos_bal_cls c[QOS_MAX_QUEUES][QOS_MAX_CLASSES + 1];
};

struct qos_balancer {
	struct qos_dev *dev;
	struct nl_sock *sk;
	unsigned int period_ms;
	int hold_fd;			/* the held status file */
	bool have;			/* meta and s[cur] are a sample of it */
	struct qos_meta meta;
	unsigned int cur;
	struct qos_bal_sample s[2];
	struct qos_bal_share share;	/* the last shares set */
	/* What it did, for its summary. */
	uint64_t periods;		/* periods in which it balanced */
	uint64_t idle;			/* periods with nothing to balance */
	uint64_t changes;		/* classes changed */
	uint64_t step_ns;		/* time spent in periods, summed */
	uint64_t step_max_ns;
};

/* Volatile: the signal handler of the command sets it. */
extern volatile sig_atomic_t qos_balance_stop;

/*
 * Start balancing @dev (opened by the caller, not locked): refused if
 * another qosctl balance runs for it. Then qos_balance_run() until
 * qos_balance_stop, and qos_balance_end(), which puts back the static
 * split (every rate at 1/N) and releases the status file.
 */
int qos_balance_start(struct qos_balancer *b, struct qos_dev *dev, unsigned int period_ms,
		      char *err, size_t errlen);
int qos_balance_run(struct qos_balancer *b, char *err, size_t errlen);
/* One period: read, share, change. */
int qos_balance_step(struct qos_balancer *b, char *err, size_t errlen);
int qos_balance_end(struct qos_balancer *b, char *err, size_t errlen);

/* The pid and period of the qosctl balance running for @dev, 0 if none. */
int qos_balance_running(const struct qos_dev *dev, unsigned int *period_ms);

#endif /* __QOS_KERNEL_BALANCE_H */
