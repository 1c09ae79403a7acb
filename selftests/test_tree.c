// SPDX-License-Identifier: GPL-2.0-only
/*
 * Tree geometry (user/model/tree.c) and the trees the scheduler kinds walk
 * (user/kernel/sched_*.c), without touching the kernel's qdiscs: every
 * number the installer sends and the dry run prints, asserted exactly.
 *
 * Each node is written as the tc command that would make it, so the
 * expected trees read like `qosctl apply --dry-run`.
 */
#include <stdio.h>
#include <string.h>

#include <linux/pkt_sched.h>

#include "kselftest_harness.h"
#include "kernel/qdisc.h"
#include "kernel/sched.h"
#include "model/balance.h"
#include "model/profile.h"
#include "model/tree.h"
#include "txn/plan.h"

#define LINES_MAX	32

struct tree_text {
	unsigned int n;
	char line[LINES_MAX][256];
};

static void put_arg(char *s, size_t len, const struct qos_tc_arg *a)
{
	size_t o = strlen(s);
	unsigned int i;

	switch (a->unit) {
	case QOS_TU_HEX:
		snprintf(s + o, len - o, " %s %llx", a->key, (unsigned long long)a->v);
		break;
	case QOS_TU_BIT:
		snprintf(s + o, len - o, " %s %llubit", a->key, (unsigned long long)a->v);
		break;
	case QOS_TU_BYTES:
		snprintf(s + o, len - o, " %s %llub", a->key, (unsigned long long)a->v);
		break;
	case QOS_TU_WORD:
		snprintf(s + o, len - o, " %s %s", a->key, a->s);
		break;
	case QOS_TU_REPEAT:
		snprintf(s + o, len - o, " %s", a->key);
		for (i = 0; i < a->n; i++) {
			o = strlen(s);
			snprintf(s + o, len - o, " %llu", (unsigned long long)a->v);
		}
		break;
	default:
		snprintf(s + o, len - o, " %s %llu", a->key, (unsigned long long)a->v);
	}
}

static int text_node(const struct qos_meta *meta, const struct qos_tc_node *n, void *ctx)
{
	struct tree_text *t = ctx;
	char *s = t->line[t->n], a[16], b[16];
	unsigned int i;

	if (t->n >= LINES_MAX)
		return -1;
	snprintf(s, sizeof(t->line[0]), "%s %s %s %s%s%s %s",
		 n->flags & QOS_TCN_CLASS ? "class" : "qdisc",
		 n->parent == TC_H_ROOT ? "root" : "parent",
		 n->parent == TC_H_ROOT ? "" : qos_tc_handle_str(n->parent, a, sizeof(a)),
		 n->flags & QOS_TCN_CLASS ? "classid " : "handle ",
		 qos_tc_handle_str(n->handle, b, sizeof(b)),
		 n->flags & QOS_TCN_FRESH ? " (fresh)" : "", n->kind);
	for (i = 0; i < n->nargs; i++)
		put_arg(s, sizeof(t->line[0]), &n->args[i]);
	t->n++;
	return 0;
}

static int walk(const struct qos_meta *meta, struct tree_text *t)
{
	memset(t, 0, sizeof(*t));
	return qos_sched_ops(meta->sched)->walk(meta, text_node, t);
}

/* The planner's meta, at @link_bps on a device of MTU 1500 with one TX
 * queue. */
static int plan(const char *name, uint64_t link_bps, struct qos_plan *pl, char *err,
		size_t len)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/tc-profiles/%s", QOS_SRCDIR, name);
	return qos_plan_profile(path, link_bps, 0, NULL, 1500, 1, 1, pl, err, len);
}

/* What a leaf left to the kernel's choice (leaf = auto) becomes here. */
static void auto_leaf(char *buf, size_t len, const char *where, const char *bfifo_limit)
{
	if (qos_qdisc_available("fq_codel") > 0)
		snprintf(buf, len, "%s fq_codel", where);
	else
		snprintf(buf, len, "%s bfifo limit %s", where, bfifo_limit);
}

static void check_lines(struct __test_metadata *_metadata, const struct tree_text *t,
			const char *const *want, unsigned int n)
{
	unsigned int i;

	ASSERT_EQ(n, t->n);
	for (i = 0; i < n; i++)
		EXPECT_STREQ(want[i], t->line[i]);
}

/*
 * pip-20pct at @link_bps: the HTB tree (@want, its be and lbe leaves left
 * out) and be's and lbe's leaf, a bfifo of @bfifo where the kernel lacks
 * fq_codel.
 */
static void check_pip20(struct __test_metadata *_metadata, uint64_t link_bps,
			const char *const *want, const char *bfifo)
{
	static struct qos_plan pl;
	const char *lines[8];
	struct tree_text t;
	char err[512], be[128], lbe[128];

	ASSERT_EQ(0, plan("pip-20pct", link_bps, &pl, err, sizeof(err))) TH_LOG("%s", err);
	auto_leaf(be, sizeof(be), "qdisc parent 1:13 handle 13:", bfifo);
	auto_leaf(lbe, sizeof(lbe), "qdisc parent 1:14 handle 14:", bfifo);
	memcpy(lines, want, 5 * sizeof(*want));
	lines[5] = be;
	lines[6] = want[5];
	lines[7] = lbe;
	ASSERT_EQ(0, walk(&pl.cfg.meta, &t));
	check_lines(_metadata, &t, lines, ARRAY_SIZE(lines));
	qos_plan_free(&pl);
}

/*
 * pip-20pct at 100 Mbit/s: PIP capped at 20 Mbit/s; every bucket 1 ms at
 * its rate plus a frame of 1514 bytes; quanta a tenth of a second at the
 * rate, clamped to [1514, 200000]. Its PIP leaf is the reservation queue
 * (reserve-class pip): bytes, not 16 packets.
 */
TEST(pip20_100mbit)
{
	const char *want[] = {
		"qdisc root  handle 1: (fresh) htb default 13 r2q 10",
		"class parent 1: classid 1:1 htb rate 100000000bit ceil 100000000bit prio 0 quantum 200000 burst 14014b cburst 14014b",
		"class parent 1:1 classid 1:12 htb rate 20000000bit ceil 20000000bit prio 0 quantum 200000 burst 4014b cburst 4014b",
		"qdisc parent 1:12 handle 12: bfifo limit 25000b",
		"class parent 1:1 classid 1:13 htb rate 79000000bit ceil 100000000bit prio 1 quantum 200000 burst 11389b cburst 14014b",
		"class parent 1:1 classid 1:14 htb rate 1000000bit ceil 100000000bit prio 2 quantum 12500 burst 1639b cburst 14014b",
	};

	check_pip20(_metadata, 100000000, want, "250000b");
}

TEST(pip20_1gbit)
{
	const char *want[] = {
		"qdisc root  handle 1: (fresh) htb default 13 r2q 10",
		"class parent 1: classid 1:1 htb rate 1000000000bit ceil 1000000000bit prio 0 quantum 200000 burst 126514b cburst 126514b",
		"class parent 1:1 classid 1:12 htb rate 200000000bit ceil 200000000bit prio 0 quantum 200000 burst 26514b cburst 26514b",
		"qdisc parent 1:12 handle 12: bfifo limit 250000b",
		"class parent 1:1 classid 1:13 htb rate 790000000bit ceil 1000000000bit prio 1 quantum 200000 burst 100264b cburst 126514b",
		"class parent 1:1 classid 1:14 htb rate 10000000bit ceil 1000000000bit prio 2 quantum 125000 burst 2764b cburst 126514b",
	};

	check_pip20(_metadata, 1000000000, want, "2500000b");
}

/* The geometry functions on their own, at the edges of their clamps. */
TEST(geometry)
{
	struct qos_meta meta = { .mtu = 9000 };
	struct qos_meta_class mc = { .id = 2, .leaf = QOS_LEAF_PFIFO, .ceil_bps = 20000000 };

	EXPECT_EQ(1514, qos_htb_quantum(1000));		/* floor: one frame */
	EXPECT_EQ(12500, qos_htb_quantum(1000000));
	EXPECT_EQ(200000, qos_htb_quantum(16000000));	/* HTB's ceiling */
	EXPECT_EQ(9014, qos_meta_frame(&meta));
	EXPECT_EQ(1514, qos_tree_burst(1514, 0, 0));
	EXPECT_EQ(1639, qos_tree_burst(1514, 1000000, 0));
	EXPECT_EQ(10240, qos_tree_burst(1514, 1000000, 10240));	/* the profile's */
	EXPECT_EQ(5 * 9014, qos_class_burst(5, 10240, 9014));	/* CBQ maxburst */
	EXPECT_EQ(10240, qos_class_burst(0, 10240, 9014));
	EXPECT_EQ(16, qos_leaf_limit(QOS_LEAF_PFIFO, 0, 20000000, 20000000, 1514));
	EXPECT_EQ(50000, qos_leaf_limit(QOS_LEAF_BFIFO, 0, 20000000, 20000000, 1514));
	EXPECT_EQ(3028, qos_leaf_limit(QOS_LEAF_BFIFO, 0, 64000, 20000000, 1514));
	EXPECT_EQ(0, qos_leaf_limit(QOS_LEAF_FQ_CODEL, 0, 20000000, 20000000, 1514));
	EXPECT_EQ(0x120000, qos_leaf_handle(&mc));
	EXPECT_EQ(0x220000, qos_tbf_handle(&mc));
	/* A TBF holds its bucket and a frame more: 2500 + 1514 + 1514. */
	EXPECT_EQ(5528, qos_tbf_limit(1514, &mc));
}

/* Two TX queues: an mq root, each queue's HTB at half of every rate. */
TEST(pip20_two_queues)
{
	static struct qos_plan pl;
	struct qos_meta_class q1;
	struct tree_text t;
	char err[512];

	ASSERT_EQ(0, plan("pip-20pct", 100000000, &pl, err, sizeof(err))) TH_LOG("%s", err);
	pl.cfg.meta.queues = 2;
	q1 = qos_queue_class(&pl.cfg.meta, &pl.cfg.meta.classes[0], 1);
	EXPECT_EQ(0x2000012, q1.classid);
	EXPECT_EQ(10000000, q1.rate_bps);
	EXPECT_EQ(12500, q1.leaf_limit);
	EXPECT_EQ(0x2120000, qos_queue_leaf_handle(&pl.cfg.meta, &q1, 1));
	EXPECT_STREQ("mq", qos_root_kind(&pl.cfg.meta));
	ASSERT_EQ(0, walk(&pl.cfg.meta, &t));
	ASSERT_EQ(1 + 2 * 8, t.n);
	EXPECT_STREQ("qdisc root  handle 1: (fresh) mq", t.line[0]);
	EXPECT_STREQ("qdisc parent 1:2 handle 200: (fresh) htb default 13 r2q 10", t.line[9]);
	EXPECT_STREQ("class parent 200:1 classid 200:12 htb rate 10000000bit ceil 10000000bit prio 0 quantum 125000 burst 2764b cburst 2764b",
		     t.line[11]);
	EXPECT_STREQ("qdisc parent 200:12 handle 212: bfifo limit 12500b", t.line[12]);
	qos_plan_free(&pl);
}

TEST(waterfill)
{
	uint64_t want[3] = { 10, UINT64_MAX, UINT64_MAX }, out[3];

	EXPECT_EQ(0, qos_waterfill(100, 3, want, 0, out));
	EXPECT_EQ(10, out[0]);
	EXPECT_EQ(45, out[1]);
	EXPECT_EQ(45, out[2]);
	/* Satisfied with some to spare: what is left is returned. */
	want[1] = 20;
	want[2] = 0;
	EXPECT_EQ(65, qos_waterfill(100, 3, want, 5, out));
	EXPECT_EQ(10, out[0]);
	EXPECT_EQ(20, out[1]);
	EXPECT_EQ(5, out[2]);
	/* An uneven remainder goes a unit each to the first. */
	want[0] = want[1] = want[2] = UINT64_MAX;
	EXPECT_EQ(0, qos_waterfill(101, 3, want, 0, out));
	EXPECT_EQ(34, out[0]);
	EXPECT_EQ(34, out[1]);
	EXPECT_EQ(33, out[2]);
}

static int class_index(const struct qos_meta *m, const char *name)
{
	unsigned int i;

	for (i = 0; i < m->nclasses; i++)
		if (!strcmp(m->classes[i].name, name))
			return i;
	return -1;
}

/* The sums the balancer must keep, whatever the demand. */
static void check_sums(struct __test_metadata *_metadata, const struct qos_meta *m,
		       const struct qos_bal_share *sh)
{
	uint64_t link = 0, rate[QOS_MAX_CLASSES] = {}, ceil[QOS_MAX_CLASSES] = {};
	unsigned int q, i;

	for (q = 0; q < sh->nqueues; q++) {
		uint64_t in_queue = 0;

		link += sh->q[q].link_bps;
		for (i = 0; i < m->nclasses; i++) {
			in_queue += sh->q[q].rate_bps[i];
			rate[i] += sh->q[q].rate_bps[i];
			ceil[i] += sh->q[q].ceil_bps[i];
			EXPECT_LE(sh->q[q].rate_bps[i], sh->q[q].ceil_bps[i]);
			EXPECT_LE(sh->q[q].ceil_bps[i], sh->q[q].link_bps);
		}
		EXPECT_LE(in_queue, sh->q[q].link_bps);
	}
	EXPECT_EQ(m->rate_bps, link);
	for (i = 0; i < m->nclasses; i++) {
		EXPECT_LE(rate[i], m->classes[i].rate_bps);
		if (m->classes[i].ceil_bps < m->rate_bps)
			EXPECT_LE(ceil[i], m->classes[i].ceil_bps);
	}
}

/* pip-20pct at 100 Mbit/s on 2 queues, shared by demand. */
TEST(balance_pip20)
{
	static struct qos_plan pl;
	static qos_bal_demands_t d;
	static struct qos_bal_share sh;
	const struct qos_meta *m;
	char err[512];
	int pip, be, lbe;

	ASSERT_EQ(0, plan("pip-20pct", 100000000, &pl, err, sizeof(err))) TH_LOG("%s", err);
	pl.cfg.meta.queues = 2;
	m = &pl.cfg.meta;
	pip = class_index(m, "pip"), be = class_index(m, "be"), lbe = class_index(m, "lbe");
	ASSERT_LE(0, pip < be ? pip : be);
	ASSERT_LE(0, lbe);

	/* Idle: the link evenly, each class its minimum (1/16 of rate/N). */
	qos_balance(m, (const struct qos_bal_demand(*)[QOS_MAX_CLASSES])d, &sh);
	check_sums(_metadata, m, &sh);
	EXPECT_EQ(50000000, sh.q[0].link_bps);
	EXPECT_EQ(625000, sh.q[1].rate_bps[pip]);
	EXPECT_EQ(625000, sh.q[1].ceil_bps[pip]);

	/* One flow held back in queue 0: the link but the idle queue's minima. */
	d[0][be] = (struct qos_bal_demand){ .bps = 49000000, .busy = true };
	qos_balance(m, (const struct qos_bal_demand(*)[QOS_MAX_CLASSES])d, &sh);
	check_sums(_metadata, m, &sh);
	EXPECT_EQ(100000000 - 625000 - 2468750 - 31250, sh.q[0].link_bps);
	EXPECT_EQ(sh.q[0].link_bps, sh.q[0].ceil_bps[be]);

	/* PIP held back in both queues: its cap evenly, 20 Mbit/s in all. */
	d[0][pip] = d[1][pip] = (struct qos_bal_demand){ .bps = 10000000, .busy = true };
	qos_balance(m, (const struct qos_bal_demand(*)[QOS_MAX_CLASSES])d, &sh);
	check_sums(_metadata, m, &sh);
	EXPECT_EQ(10000000, sh.q[0].ceil_bps[pip]);
	EXPECT_EQ(10000000, sh.q[1].ceil_bps[pip]);

	/* PIP in one queue only, sending 4 Mbit/s: a quarter more, the
	 * rest to the other queue that is held back. */
	d[0][pip] = (struct qos_bal_demand){ .bps = 4000000 };
	qos_balance(m, (const struct qos_bal_demand(*)[QOS_MAX_CLASSES])d, &sh);
	check_sums(_metadata, m, &sh);
	EXPECT_EQ(5000000 + 625000, sh.q[0].ceil_bps[pip]);
	EXPECT_EQ(20000000 - 5625000, sh.q[1].ceil_bps[pip]);

	/* LBE held back in queue 1 under BE in both: LBE's floor is the
	 * link's, less queue 0's minimum. */
	memset(d, 0, sizeof(d));
	d[0][be] = d[1][be] = (struct qos_bal_demand){ .bps = 49000000, .busy = true };
	d[1][lbe] = (struct qos_bal_demand){ .bps = 500000, .busy = true };
	qos_balance(m, (const struct qos_bal_demand(*)[QOS_MAX_CLASSES])d, &sh);
	check_sums(_metadata, m, &sh);
	EXPECT_EQ(1000000 - 31250, sh.q[1].rate_bps[lbe]);

	/* LBE alone in queue 1 while BE is held back in queue 0: what is
	 * left of the link goes to BE first, as in a single tree; queue 1
	 * keeps LBE's floor and the idle classes' minima. */
	memset(d, 0, sizeof(d));
	d[0][be] = (struct qos_bal_demand){ .bps = 90000000, .busy = true };
	d[1][lbe] = (struct qos_bal_demand){ .bps = 4000000, .busy = true };
	qos_balance(m, (const struct qos_bal_demand(*)[QOS_MAX_CLASSES])d, &sh);
	check_sums(_metadata, m, &sh);
	EXPECT_EQ(625000 + 2468750 + 968750, sh.q[1].link_bps);

	/* The static split is the tree's own. */
	qos_balance_static(m, &sh);
	check_sums(_metadata, m, &sh);
	EXPECT_EQ(50000000, sh.q[1].link_bps);
	EXPECT_EQ(39500000, sh.q[1].rate_bps[be]);
	qos_plan_free(&pl);
}

/*
 * prio-3band at 100 Mbit/s, planned by the model alone (the host may
 * lack sch_prio): a band per class in priority order, PIP's capped by a
 * TBF, the priomap sending everything else to be's band (1).
 */
TEST(prio_3band)
{
	static struct qos_profile p;
	struct qos_class_plan cp[QOS_MAX_CLASSES];
	struct qos_meta meta = { .sched = QOS_SCHED_PRIO, .rate_bps = 100000000, .mtu = 1500 };
	struct tree_text t;
	char err[512], path[512];
	unsigned int i;
	const char *want[] = {
		"qdisc root  handle 1: prio bands 3 priomap 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1",
		"qdisc parent 1:1 handle 22: tbf rate 20000000bit burst 4014b limit 5528b",
		"qdisc parent 22:1 handle 12: pfifo limit 16",
		"qdisc parent 1:2 handle 13: bfifo limit 250000b",
		"qdisc parent 1:3 handle 14: bfifo limit 250000b",
	};

	snprintf(path, sizeof(path), "%s/tc-profiles/prio-3band", QOS_SRCDIR);
	ASSERT_EQ(0, qos_profile_load(path, &p, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, qos_profile_resolve(&p, meta.rate_bps, meta.mtu, cp, err, sizeof(err)))
		TH_LOG("%s", err);
	meta.qdisc_handle = p.handle_major << 16;
	meta.nclasses = p.nclasses;
	meta.default_class = qos_profile_class(&p, p.default_class)->id;
	for (i = 0; i < p.nclasses; i++) {
		meta.classes[i].id = cp[i].spec->id;
		qos_tree_class(&p, &cp[i], &meta, cp[i].spec->leaf == QOS_LEAF_AUTO ?
			       QOS_LEAF_BFIFO : cp[i].spec->leaf, &meta.classes[i]);
	}
	EXPECT_EQ(1, qos_prio_default_band(&meta));
	ASSERT_EQ(0, walk(&meta, &t));
	check_lines(_metadata, &t, want, ARRAY_SIZE(want));
	qos_profile_free(&p);
}

/* tbf-shaper: the whole link one TBF, its bfifo leaf on 1:1, the
 * profile's burst and limit kept. */
TEST(tbf_shaper)
{
	static struct qos_plan pl;
	struct tree_text t;
	char err[512];
	const char *want[] = {
		"qdisc root  handle 1: tbf rate 100000000bit burst 10240b limit 131072b",
		"qdisc parent 1:1 handle 13: bfifo limit 131072b",
	};

	ASSERT_EQ(0, plan("tbf-shaper", 100000000, &pl, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, walk(&pl.cfg.meta, &t));
	check_lines(_metadata, &t, want, ARRAY_SIZE(want));
	/* At 1 Gbit/s only the rate changes. */
	qos_plan_free(&pl);
	ASSERT_EQ(0, plan("tbf-shaper", 1000000000, &pl, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, walk(&pl.cfg.meta, &t));
	EXPECT_STREQ("qdisc root  handle 1: tbf rate 1000000000bit burst 10240b limit 131072b",
		     t.line[0]);
	qos_plan_free(&pl);
}

/* ATM framing on a shaper: its options after the rates, as tc takes them. */
TEST(linklayer_options)
{
	struct qos_meta meta = { .overhead = 10, .mpu = 64, .linklayer = QOS_LL_ATM };
	struct qos_tc_node n;

	qos_tc_node_init(&n, "tbf", 0, TC_H_ROOT, 0x10000);
	qos_tc_shaper(&n, &meta);
	EXPECT_TRUE(n.flags & QOS_TCN_SHAPER);
	ASSERT_EQ(3, n.nargs);
	EXPECT_EQ(10, qos_tc_arg(&n, "overhead"));
	EXPECT_EQ(64, qos_tc_arg(&n, "mpu"));
	EXPECT_STREQ("atm", n.args[2].s);
	meta = (struct qos_meta){};
	qos_tc_node_init(&n, "tbf", 0, TC_H_ROOT, 0x10000);
	qos_tc_shaper(&n, &meta);
	EXPECT_EQ(0, n.nargs);
}

TEST_HARNESS_MAIN
