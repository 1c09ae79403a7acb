/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Re-balancing a multi-queue tree (queues N, model/tree.h): from what each
 * TX queue's classes sent in the last period and whether they were held
 * back, the rates every queue's HTB gets for the next one, so that the
 * link, each class's rate and each capped class's ceiling are shared
 * among the queues by demand (max-min water-filling) and always add up to
 * the profile's. Plain arithmetic; qosctl balance (kernel/balance.c) runs
 * it. Documentation/design.rst, "Multi-queue trees: re-balancing".
 */
#ifndef __QOS_MODEL_BALANCE_H
#define __QOS_MODEL_BALANCE_H

#include <stdbool.h>
#include <stdint.h>

#include "../bpf/qos_common.h"

/* A queue idle for a period keeps 1/QOS_BAL_MIN_DIV of its static share
 * (rate/N) of every class, so a flow starting there is served at once. */
#define QOS_BAL_MIN_DIV		16
/* A class not held back may grow by a quarter per period. */
#define QOS_BAL_HEADROOM_NUM	5
#define QOS_BAL_HEADROOM_DEN	4

/* What one class of one queue's tree did in the last period. */
struct qos_bal_demand {
	uint64_t bps;		/* sent, over the period */
	bool busy;		/* held back: a backlog, drops or overlimits */
};

/* The rates of one queue's tree. */
struct qos_bal_queue {
	uint64_t link_bps;			/* M:1 of the queue, rate = ceil */
	uint64_t rate_bps[QOS_MAX_CLASSES];	/* per class of meta->classes[] */
	uint64_t ceil_bps[QOS_MAX_CLASSES];
};

struct qos_bal_share {
	unsigned int nqueues;
	struct qos_bal_queue q[QOS_MAX_QUEUES];
};

/* The input: d[q][i] for queue q and class meta->classes[i]. */
typedef struct qos_bal_demand qos_bal_demands_t[QOS_MAX_QUEUES][QOS_MAX_CLASSES];

/*
 * Share the rates of @meta (queues > 1) among its queues by @d into @out.
 * Guarantees: per class, the queues' rates add up to at most the class's
 * rate, its ceilings (a class capped below the link) to at most its
 * ceiling; every queue's class rates add up to at most its link rate, and
 * the queues' link rates add up to exactly the link's.
 */
void qos_balance(const struct qos_meta *meta, const qos_bal_demands_t d,
		 struct qos_bal_share *out);
/* The static split, every rate at 1/N: what runs without qosctl balance. */
void qos_balance_static(const struct qos_meta *meta, struct qos_bal_share *out);

/*
 * Max-min fair shares of @total among @n claimants asking @want[i]
 * (UINT64_MAX: as much as there is), each given @min first (or an equal
 * part of @total if that is less). Returns what nobody asked for.
 */
uint64_t qos_waterfill(uint64_t total, unsigned int n, const uint64_t *want, uint64_t min,
		       uint64_t *out);

#endif /* __QOS_MODEL_BALANCE_H */
