// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The stats model: everything `show`, `stats`, the Prometheus text and the
 * exporter render, read from what runs on a device (its maps, found
 * through its programs) and from the kernel's statistics of the qdisc
 * tree (each class, and the root qdisc).
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/pkt_sched.h>

#include "kernel/qdisc.h"
#include "kernel/balance.h"
#include "kernel/stats.h"
#include "lib/names.h"

const char *const qos_family_names[QOS_FAM_MAX] = { "ipv4", "ipv6", "ipv6in4" };
const char *const qos_dir_names[QOS_DIR_MAX] = { "ingress", "egress" };
const char *const qos_verdict_names[QOS_V_MAX] = { "pass", "drop", "remark", "demote" };
const char *const qos_unparsed_names[QOS_UNP_MAX] = { "none", "non_ip", "truncated",
						      "bad_header", "bad_length", "bad_ext_header",
						      "ext_chain_too_long", "redirect_failed" };

const char *qos_report_class_name(const struct qos_report *r, uint32_t id)
{
	unsigned int c;

	for (c = 0; c < r->meta.nclasses && c < QOS_MAX_CLASSES; c++)
		if (r->cls[c].mc.id == id)
			return r->cls[c].mc.name;
	return "";
}

/* The class in every queue's tree, and their sum. */
static int queue_stats(struct nl_sock *sk, int ifindex, const struct qos_meta *meta,
		       struct qos_report_class *rc)
{
	struct qos_class_stats *t = &rc->q;
	unsigned int q;
	int ret;

	memset(t, 0, sizeof(*t));
	for (q = 0; q < qos_meta_queues(meta) && q < QOS_MAX_QUEUES; q++) {
		struct qos_meta_class qc = qos_queue_class(meta, &rc->mc, q);
		struct qos_class_stats *s = &rc->qq[q];

		ret = qos_tree_class_stats(sk, ifindex, meta, &qc, s);
		if (ret)
			return ret;
		t->bytes += s->bytes;
		t->packets += s->packets;
		t->drops += s->drops;
		t->overlimits += s->overlimits;
		t->requeues += s->requeues;
		t->backlog_bytes += s->backlog_bytes;
		t->backlog_packets += s->backlog_packets;
	}
	return 0;
}

/* The queue of class @mc in the tree @meta on @ifindex. */
static bool read_q(struct nl_sock *sk, int ifindex, const struct qos_meta *meta,
		   const struct qos_meta_class *mc, struct qos_class_stats *st)
{
	return !qos_tree_class_stats(sk, ifindex, meta, mc, st);
}

/*
 * A name read from the kernel, for every writer of the report: qosctl
 * checks names where they enter, but the maps are anyone's with
 * CAP_SYS_ADMIN, so one that is not a name (or not terminated) is shown
 * escaped, cut to fit, rather than as raw bytes.
 */
static void report_name(char *name, size_t len)
{
	char esc[QOS_ESC_LEN];

	name[len - 1] = '\0';
	if (!name[0] || qos_name_ok(name, len - 1))
		return;
	qos_esc(name, esc, len);
	memcpy(name, esc, len);
}

static int read_class(const struct qos_dev *dev, struct nl_sock *sk, struct qos_report *r,
		      unsigned int i)
{
	const struct qos_progs *m = &dev->cur;
	struct qos_report_class *rc = &r->cls[i];
	uint32_t id = r->meta.classes[i].id;
	unsigned int d, f, v, t, c;
	int ret;

	rc->mc = r->meta.classes[i];
	report_name(rc->mc.name, sizeof(rc->mc.name));
	for (d = 0; d < QOS_DIR_MAX; d++)
		for (f = 0; f < QOS_FAM_MAX; f++)
			for (v = 0; v < QOS_V_MAX; v++) {
				ret = qos_ctr_read(m->map[QOS_MAP_STATS], qos_stats_key(d, id, f, v),
						   &rc->ctr[d][f][v]);
				if (ret)
					return ret;
			}
	for (t = 0; t < QOS_TABLE_MAX; t++)
		for (c = 0; c < QOS_DSCP_MAX; c++)
			if (r->cfg.dscp_class[t][c] == id)
				rc->dscp[t] |= 1ULL << c;
	if (sk && qos_meta_queues(&r->meta) > 1)
		rc->have_q = !queue_stats(sk, dev->ifindex, &r->meta, rc);
	else if (sk)
		rc->have_q = read_q(sk, dev->ifindex, &r->meta, &rc->mc, &rc->q);
	if (sk && r->ifb[0])
		rc->have_iq = read_q(sk, r->cfg.ifb_ifindex, &r->cfg.ifb, &r->cfg.ifb.classes[i],
				     &rc->iq);
	if (r->cfg.class_policer[id])
		return qos_police_read(m, r->cfg.class_policer[id], &rc->police);
	return 0;
}

/* The root qdisc, if it is still the one qosctl installed. */
static bool read_root(struct nl_sock *sk, int ifindex, const struct qos_meta *meta,
		      struct qos_class_stats *st)
{
	if (!(meta->flags & QOS_META_F_ROOT) || meta->sched == QOS_SCHED_NONE)
		return false;
	return !qos_qdisc_stats(sk, ifindex, TC_H_ROOT, meta->qdisc_handle, st);
}

static int rule_id_cmp(const void *a, const void *b)
{
	const struct qos_rule *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Count the rules; keep the named ones with the lowest ids, and read the
 * hit counters of those only, so a scrape costs the same however many
 * rules are installed. */
static int read_rules(const struct qos_progs *m, struct qos_report *r)
{
	struct qos_rule_maps maps = qos_rule_maps_of(m);
	struct qos_report_rule *rr;
	struct qos_rules l;
	size_t i;
	int ret;

	ret = qos_rules_read(&maps, &l, false);
	if (ret)
		return ret;
	if (l.n)
		qsort(l.r, l.n, sizeof(*l.r), rule_id_cmp);
	r->nrules = l.n;
	for (i = 0; i < l.n && !ret; i++) {
		if (!l.r[i].name[0])
			continue;
		if (r->nrules_named++ >= QOS_REPORT_RULES_MAX)
			continue;
		rr = &r->rules[r->nreport_rules++];
		rr->id = l.r[i].id;
		rr->class_id = l.r[i].class_id;
		memcpy(rr->name, l.r[i].name, sizeof(rr->name));
		report_name(rr->name, sizeof(rr->name));
		ret = qos_rule_hits(&maps, rr->id, &rr->hits);
	}
	qos_rules_free(&l);
	return ret;
}

static void ctr_add(struct qos_ctr *t, const struct qos_ctr *c)
{
	t->packets += c->packets;
	t->bytes += c->bytes;
}

static void class_sum(struct qos_report_class *rc)
{
	int d, f, v, c;

	memset(rc->fam, 0, sizeof(rc->fam));
	memset(rc->verdict, 0, sizeof(rc->verdict));
	memset(rc->total, 0, sizeof(rc->total));
	memset(rc->color, 0, sizeof(rc->color));
	for (d = 0; d < QOS_DIR_MAX; d++)
		for (f = 0; f < QOS_FAM_MAX; f++)
			for (v = 0; v < QOS_V_MAX; v++) {
				ctr_add(&rc->fam[d][f], &rc->ctr[d][f][v]);
				ctr_add(&rc->verdict[d][v], &rc->ctr[d][f][v]);
				ctr_add(&rc->total[d], &rc->ctr[d][f][v]);
			}
	for (c = 0; c < TB_COLOR_MAX; c++)
		for (f = 0; f < QOS_FAM_MAX; f++)
			ctr_add(&rc->color[c], &rc->police.ctr[f][c]);
}

void qos_report_sum(struct qos_report *r)
{
	unsigned int i;
	int d, v;

	for (i = 0; i < r->meta.nclasses && i < QOS_MAX_CLASSES; i++)
		class_sum(&r->cls[i]);
	memset(r->unparsed_total, 0, sizeof(r->unparsed_total));
	for (d = 0; d < QOS_DIR_MAX; d++)
		for (v = QOS_UNP_NONE + 1; v < QOS_UNP_MAX; v++)
			ctr_add(&r->unparsed_total[d], &r->unparsed[d][v]);
}

int qos_report_read(const struct qos_dev *dev, struct qos_report *r, char *err, size_t errlen)
{
	const struct qos_progs *m = &dev->cur;
	struct nl_sock *sk = NULL;
	unsigned int i, d, v;
	int ret = 0;

	memset(r, 0, sizeof(*r));
	r->confirm_left = -1;
	snprintf(r->dev, sizeof(r->dev), "%s", dev->name);
	if (!dev->applied) {
		snprintf(err, errlen, "dev %s: no qosctl profile applied", dev->name);
		return -ENOENT;
	}
	if (!dev->have_cfg) {
		snprintf(err, errlen, "dev %s: qosctl programs without a configuration (an apply "
			 "was killed: any qosctl command that changes the device rolls it back)",
			 dev->name);
		return -EINVAL;
	}
	r->cfg = dev->cfg;
	r->meta = dev->cfg.meta;
	memcpy(r->prog_id, m->prog_id, sizeof(r->prog_id));
	r->attach = m->attach;
	memcpy(r->tcx_pos, m->tcx_pos, sizeof(r->tcx_pos));
	memcpy(r->tcx_n, m->tcx_n, sizeof(r->tcx_n));
	if (qos_meta_queues(&r->meta) > 1)
		r->balance_pid = qos_balance_running(dev, &r->balance_period_ms);
	if (qos_nl_open(&sk))
		sk = NULL;
	/* The IFB only while it is still the one the configuration names. */
	if (r->cfg.ifb.rate_bps && r->cfg.ifb_ifindex &&
	    !if_indextoname(r->cfg.ifb_ifindex, r->ifb))
		r->ifb[0] = 0;

	for (i = 0; i < r->meta.nclasses && i < QOS_MAX_CLASSES && !ret; i++)
		ret = read_class(dev, sk, r, i);
	for (d = 0; d < QOS_DIR_MAX && !ret; d++)
		for (v = QOS_UNP_NONE + 1; v < QOS_UNP_MAX && !ret; v++)
			ret = qos_ctr_read(m->map[QOS_MAP_UNPARSED], qos_unparsed_key(d, v),
					   &r->unparsed[d][v]);
	if (!ret)
		ret = read_rules(m, r);
	if (!ret && sk)
		r->have_root = read_root(sk, dev->ifindex, &r->meta, &r->root);
	if (!ret && sk && r->ifb[0])
		r->have_iroot = read_root(sk, r->cfg.ifb_ifindex, &r->cfg.ifb, &r->iroot);
	if (ret)
		snprintf(err, errlen, "dev %s: reading counters: %s", dev->name, strerror(-ret));
	else
		qos_report_sum(r);
	qos_nl_close(sk);
	return ret;
}

int qos_report_read_all(struct qos_report **out)
{
	struct if_nameindex *ifs, *i;
	struct qos_report *r = NULL, *tmp;
	struct qos_dev dev;
	char err[512];
	int n = 0;

	*out = NULL;
	/* Every interface of this network namespace that runs qosctl. */
	ifs = if_nameindex();
	if (!ifs)
		return -errno;
	for (i = ifs; i->if_index; i++) {
		if (qos_dev_open(&dev, i->if_name, 0, err, sizeof(err)))
			continue;
		if (dev.applied && dev.have_cfg) {
			tmp = realloc(r, (n + 1) * sizeof(*r));
			if (!tmp) {
				qos_dev_close(&dev);
				free(r);
				if_freenameindex(ifs);
				return -ENOMEM;
			}
			r = tmp;
			if (!qos_report_read(&dev, &r[n], err, sizeof(err)))
				n++;
		}
		qos_dev_close(&dev);
	}
	if_freenameindex(ifs);
	*out = r;
	return n;
}

int qos_report_read_name(const char *name, struct qos_report *r, char *err, size_t errlen)
{
	struct qos_dev dev;
	int ret;

	ret = qos_dev_open(&dev, name, 0, err, errlen);
	if (ret)
		return ret;
	ret = qos_report_read(&dev, r, err, errlen);
	qos_dev_close(&dev);
	return ret;
}
