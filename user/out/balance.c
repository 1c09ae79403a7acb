// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * qosctl balance's output (out/balance.h).
 */
#include <errno.h>

#include "out/balance.h"
#include "out/print.h"

void qos_balance_print_start(FILE *f, const struct qos_balancer *b, bool json)
{
	if (json)
		return;
	fprintf(f, "balance dev %s: the rates of each TX queue's tree by demand every %u ms, "
		"until SIGINT or SIGTERM\n", b->dev->name, b->period_ms);
	fflush(f);
}

/* The shares last set, per queue: its link and each class's rate. */
static void share_print(struct qos_pr *p, const struct qos_balancer *b)
{
	unsigned int q, i;

	qos_pr_open_array(p, "queues");
	for (q = 0; q < b->share.nqueues; q++) {
		const struct qos_bal_queue *bq = &b->share.q[q];

		qos_pr_open_object(p, NULL);
		qos_pr_u32(p, QP_ANY, "queue", "  queue %u:", q);
		qos_pr_rate(p, QP_ANY, "link_bps", " link %s", bq->link_bps);
		qos_pr_open_array(p, "classes");
		for (i = 0; i < b->meta.nclasses && i < QOS_MAX_CLASSES; i++) {
			qos_pr_open_object(p, NULL);
			qos_pr_string(p, QP_ANY, "name", ", %s", b->meta.classes[i].name);
			qos_pr_rate(p, QP_ANY, "rate_bps", " %s", bq->rate_bps[i]);
			qos_pr_rate(p, QP_ANY, "ceil_bps", "/%s", bq->ceil_bps[i]);
			qos_pr_close_object(p);
		}
		qos_pr_close_array(p);
		qos_pr_nl(p);
		qos_pr_close_object(p);
	}
	qos_pr_close_array(p);
}

int qos_balance_print_end(FILE *f, const struct qos_balancer *b, uint64_t cpu_ns, bool json)
{
	struct qos_pr *p = qos_pr_open(f, json);
	uint64_t steps = b->periods + b->idle;

	if (!p)
		return -ENOMEM;
	qos_pr_string(p, QP_ANY, "dev", "balance dev %s:", b->dev->name);
	qos_pr_u32(p, QP_ANY, "period_ms", " every %u ms,", b->period_ms);
	qos_pr_u64(p, QP_ANY, "periods", " %llu periods balanced,", b->periods);
	qos_pr_u64(p, QP_ANY, "idle_periods", " %llu with nothing to balance,", b->idle);
	qos_pr_u64(p, QP_ANY, "class_changes", " %llu class changes\n", b->changes);
	qos_pr_time(p, QP_ANY, "step_mean_ns", "  a period's work: mean %s,",
		    steps ? b->step_ns / steps : 0);
	qos_pr_time(p, QP_ANY, "step_max_ns", " max %s;", b->step_max_ns);
	qos_pr_time(p, QP_ANY, "cpu_ns", " CPU %s in all\n", cpu_ns);
	qos_pr_text(p, "  last shares (rate/ceil):\n");
	share_print(p, b);
	qos_pr_text(p, "  on exit: the static split (1/%u of every rate) put back\n",
		    b->share.nqueues ?: 1);
	return qos_pr_close(p);
}
