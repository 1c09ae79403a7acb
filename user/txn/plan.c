// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Plans: a profile resolved against the link rate and the running kernel's
 * qdiscs, or the state of a device read back. No side effects.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <linux/pkt_sched.h>

#include "kernel/policer.h"
#include "kernel/qdisc.h"
#include "kernel/rulemap.h"
#include "model/perr.h"
#include "model/reserve.h"
#include "lib/util.h"
#include "txn/plan.h"

/* The qdisc part of @meta (classids, resolved rates, leaves this kernel
 * has and their limits). */
static int tree_plan(const struct qos_profile *p, const struct qos_class_plan *plan,
		     uint64_t link_bps, uint32_t mtu, struct qos_meta *meta, char *err,
		     size_t errlen)
{
	bool tree = p->sched != QOS_SCHED_NONE;
	int have_htb = 0, have_fq_codel = 0, have_prio = 0, have_tbf = 0;
	unsigned int i;

	if (tree) {
		have_htb = qos_qdisc_available("htb");
		have_fq_codel = qos_qdisc_available("fq_codel");
		have_prio = qos_qdisc_available("prio");
		have_tbf = qos_qdisc_available("tbf");
	}
	if (have_htb < 0) {
		snprintf(err, errlen,
			 "cannot probe the kernel's qdiscs in a scratch network namespace: %s",
			 strerror(-have_htb));
		return have_htb;
	}
	if (tree && !have_htb) {
		snprintf(err, errlen, "the kernel lacks the HTB qdisc (CONFIG_NET_SCH_HTB)");
		return -EOPNOTSUPP;
	}
	if (p->sched == QOS_SCHED_PRIO && !have_prio) {
		snprintf(err, errlen,
			 "%s: scheduler prio: this kernel lacks the PRIO qdisc (sch_prio, CONFIG_NET_SCH_PRIO)",
			 p->path);
		return -EOPNOTSUPP;
	}
	if (p->sched != QOS_SCHED_HTB && tree && !have_tbf) {
		snprintf(err, errlen,
			 "%s: scheduler %s: this kernel lacks the TBF qdisc (sch_tbf, CONFIG_NET_SCH_TBF)",
			 p->path, qos_sched_name(p->sched));
		return -EOPNOTSUPP;
	}

	meta->sched = p->sched;
	meta->qdisc_handle = tree ? p->handle_major << 16 : 0;
	meta->rate_bps = link_bps;
	meta->mtu = mtu;
	meta->nclasses = p->nclasses;
	meta->default_class = qos_profile_class(p, p->default_class)->id;
	for (i = 0; i < p->nclasses; i++) {
		const struct qos_class_spec *cl = plan[i].spec;
		struct qos_meta_class *mc = &meta->classes[i];

		memset(mc, 0, sizeof(*mc));
		snprintf(mc->name, sizeof(mc->name), "%s", cl->name);
		mc->id = cl->id;
		if (!tree)
			continue;
		mc->classid = qos_profile_classid(p, cl);
		mc->rate_bps = plan[i].rate_bps;
		mc->ceil_bps = plan[i].ceil_bps;
		mc->prio = cl->prio;
		/* maxburst counts full frames: the device's. */
		mc->burst = cl->maxburst ? cl->maxburst * qos_meta_frame(meta) : cl->burst;
		mc->leaf = cl->leaf;
		if (mc->leaf == QOS_LEAF_AUTO)
			mc->leaf = have_fq_codel ? QOS_LEAF_FQ_CODEL : QOS_LEAF_BFIFO;
		if (mc->leaf == QOS_LEAF_FQ_CODEL && !have_fq_codel) {
			snprintf(err, errlen,
				 "%s: class %s asks for leaf fq_codel, which this kernel lacks (CONFIG_NET_SCH_FQ_CODEL)",
				 p->path, cl->name);
			return -EOPNOTSUPP;
		}
		switch (mc->leaf) {
		case QOS_LEAF_PFIFO:
			mc->leaf_limit = cl->limit ? cl->limit : QOS_PFIFO_DEFAULT;
			break;
		case QOS_LEAF_BFIFO:
			/* Bytes that drain in leaf-delay at the class ceiling. */
			mc->leaf_limit = cl->limit ? cl->limit :
				qos_clamp_u32(mc->ceil_bps / 8 * p->leaf_delay_ns / 1000000000ULL,
					      2 * qos_meta_frame(meta), UINT32_MAX);
			break;
		default:
			mc->leaf_limit = cl->limit;
			break;
		}
	}
	return 0;
}

/* A refused `queues`, named where it was given. */
static int queues_fail(const struct qos_profile *p, uint32_t cli, const char *why, char *err,
		       size_t errlen)
{
	if (cli == QOS_QUEUES_PROFILE)
		qos_profile_errf(err, errlen, p, p->queues_line, "queues", "%s", why);
	else if (cli == QOS_QUEUES_AUTO)
		snprintf(err, errlen, "queues auto: %s", why);
	else
		snprintf(err, errlen, "queues %u: %s", cli, why);
	return -EINVAL;
}

/*
 * Multi-queue trees: @cli (QOS_QUEUES_PROFILE: the profile's) resolved on a
 * device of @txqs TX queues. More than one makes an mq root with an HTB per
 * queue; the meta keeps the link's rates, each queue's tree takes 1/N of
 * them (qos_queue_class()), and the classids are queue 0's.
 */
static int queues_plan(const struct qos_profile *p, uint32_t cli, uint32_t txqs,
		       struct qos_cfg *cfg, char *err, size_t errlen)
{
	struct qos_meta *m = &cfg->meta;
	uint32_t n = cli != QOS_QUEUES_PROFILE ? cli : p->queues;
	char why[160];
	unsigned int i;

	if (n == QOS_QUEUES_AUTO)
		n = txqs ?: 1;
	if (n == 1)
		return 0;
	if (n > QOS_MAX_QUEUES)
		snprintf(why, sizeof(why),
			 "the device has %u TX queues; qosctl builds trees for %u at most", n,
			 QOS_MAX_QUEUES);
	else if (n > txqs)
		snprintf(why, sizeof(why), "the device has %u TX queue%s, not %u", txqs,
			 txqs == 1 ? "" : "s", n);
	else if (p->sched != QOS_SCHED_HTB)
		snprintf(why, sizeof(why),
			 "a tree per TX queue is built for scheduler htb only, not %s",
			 qos_sched_name(p->sched));
	else if (p->handle_major >= QOS_QUEUE_MAJOR(0))
		snprintf(why, sizeof(why),
			 "handle 0x%x: the per-queue trees take majors 0x100 and up; give the "
			 "profile a handle below 0x100", p->handle_major);
	else
		why[0] = 0;
	if (why[0])
		return queues_fail(p, cli, why, err, errlen);
	m->queues = n;
	cfg->queues = n;
	for (i = 0; i < m->nclasses; i++) {
		struct qos_meta_class *mc = &m->classes[i];

		mc->classid = QOS_QUEUE_MAJOR(0) << 16 | TC_H_MIN(mc->classid);
		cfg->classid[mc->id] = mc->classid;
	}
	return 0;
}

/* The link layer of the profile, then of the command line, over the
 * default (what tc counts, Ethernet). */
static int ll_plan(const struct qos_profile *p, const struct qos_ll_spec *cli,
		   uint64_t link_bps, struct qos_meta *meta, char *err, size_t errlen)
{
	qos_ll_apply(&p->ll, meta);
	if (cli)
		qos_ll_apply(cli, meta);
	if (p->sched == QOS_SCHED_NONE || meta->linklayer != QOS_LL_ATM ||
	    link_bps <= QOS_LL_ATM_MAX_BPS)
		return 0;
	/* Above that rate the kernel would silently shape as Ethernet. */
	if (cli && (cli->preset >= 0 || (cli->set & QOS_LL_F_LINKLAYER)))
		snprintf(err, errlen,
			 "linklayer atm: the kernel applies ATM cell framing at rates up to 100mbit only");
	else
		qos_profile_errf(err, errlen, p, p->ll.line, "linklayer",
				 "atm: the kernel applies ATM cell framing at rates up to 100mbit only");
	return -EINVAL;
}

/*
 * Download shaping: the same classes, resolved at @ingress_bps, as the tree
 * of the IFB (plan->cfg.ifb), with the link layer and MTU of the device.
 * The IFB itself is the installer's to find or create.
 */
static int ifb_plan(const struct qos_profile *p, uint64_t ingress_bps, bool from_cli,
		    const struct qos_ll_spec *ll, uint32_t mtu, struct qos_plan *plan, char *err,
		    size_t errlen)
{
	struct qos_class_plan cp[QOS_MAX_CLASSES];
	struct qos_meta *m = &plan->cfg.ifb;
	char why[400], r[32];
	unsigned int i;
	int ret;

	if (p->sched == QOS_SCHED_NONE && from_cli) {
		snprintf(err, errlen, "ingress-rate: profile %s has no qdisc tree (scheduler none)",
			 p->name);
		return -EINVAL;
	}
	if (p->sched == QOS_SCHED_NONE)
		return qos_profile_errf(err, errlen, p, p->ingress_line, "ingress-rate",
					"the profile has no qdisc tree (scheduler none)");
	/* Class errors name their own file, line and key. */
	ret = qos_profile_resolve(p, ingress_bps, mtu, cp, why, sizeof(why));
	ret = ret ?: tree_plan(p, cp, ingress_bps, mtu, m, why, sizeof(why));
	ret = ret ?: ll_plan(p, ll, ingress_bps, m, why, sizeof(why));
	if (ret) {
		snprintf(err, errlen, "ingress-rate %s: %s",
			 qos_fmt_rate(ingress_bps, r, sizeof(r)), why);
		return ret;
	}
	/* The ingress program hands the IFB its own tree's classid, which
	 * a tree per TX queue at egress does not change. */
	for (i = 0; i < m->nclasses; i++)
		plan->cfg.ifb_classid[m->classes[i].id] = m->classes[i].classid;
	m->version = QOS_META_VERSION;
	m->flags = QOS_META_F_ROOT;
	snprintf(m->profile, sizeof(m->profile), "%s", p->name);
	return 0;
}

/*
 * The reservation class's queue holds every burst admission lets in at
 * once, whatever the packets' sizes, and nothing longer than the delay
 * bound: a bfifo of the bound's worth of bytes at the class's ceiling
 * (Documentation/reservations.rst, "Admission"). A profile's fq_codel
 * leaf is left as it is.
 */
static void reserve_queue(struct qos_meta *m, unsigned int i)
{
	struct qos_meta_class *mc = &m->classes[i];
	struct qos_resv_class c = qos_resv_class_of(m);

	if (mc->leaf != QOS_LEAF_PFIFO && mc->leaf != QOS_LEAF_BFIFO)
		return;
	mc->leaf = QOS_LEAF_BFIFO;
	mc->leaf_limit = qos_clamp_u32(qos_resv_queue_bytes(&c), 2 * c.max_pkt, UINT32_MAX);
}

int qos_plan_profile(const char *name, uint64_t link_bps, uint64_t ingress_bps,
		     const struct qos_ll_spec *ll, uint32_t mtu, uint32_t queues, uint32_t txqs,
		     struct qos_plan *plan, char *err, size_t errlen)
{
	struct qos_class_plan cp[QOS_MAX_CLASSES];
	static struct qos_profile p;
	unsigned int i;
	int ret;

	memset(plan, 0, sizeof(*plan));
	ret = qos_profile_load(name, &p, err, errlen);
	if (ret)
		return ret;
	qos_profile_check_mtu(&p, mtu);
	ret = qos_profile_resolve(&p, link_bps, mtu, cp, err, errlen);
	if (ret)
		goto out;
	/* fill_cfg clears the whole value, the meta in it included. */
	qos_profile_fill_cfg(&p, &plan->cfg);
	ret = tree_plan(&p, cp, link_bps, mtu, &plan->cfg.meta, err, errlen);
	ret = ret ?: ll_plan(&p, ll, link_bps, &plan->cfg.meta, err, errlen);
	ret = ret ?: queues_plan(&p, queues, txqs, &plan->cfg, err, errlen);
	if (!ret && (ingress_bps || p.ingress_bps))
		ret = ifb_plan(&p, ingress_bps ?: p.ingress_bps, ingress_bps, ll, mtu, plan, err,
			       errlen);
	if (ret)
		goto out;
	plan->cfg.meta.version = QOS_META_VERSION;
	plan->cfg.meta.rule_entries = p.rule_entries;
	plan->cfg.meta.obj_hash = qos_obj_hash();
	snprintf(plan->cfg.meta.profile, sizeof(plan->cfg.meta.profile), "%s", p.name);
	for (i = 0; i < p.nclasses; i++) {
		plan->police[cp[i].spec->id] = cp[i].police;
		if (p.reserve_class[0] && !strcmp(cp[i].spec->name, p.reserve_class)) {
			struct qos_meta *m = &plan->cfg.meta;

			m->reserve_class = cp[i].spec->id;
			m->reserve_headroom_pct = p.reserve_headroom_pct;
			m->reserve_exceed = p.reserve_exceed;
			m->reserve_ceil_bps = cp[i].ceil_bps;
			m->reserve_cap_bps = cp[i].ceil_bps / 100 * (100 - p.reserve_headroom_pct);
			m->reserve_delay_us = p.reserve_delay_ns / 1000;
			m->reserve_remark = p.reserve_remark;
			reserve_queue(m, i);
		}
	}
	plan->rule_entries = p.rule_entries;
	/* The rules move to the plan; the profile keeps none. */
	plan->rules = p.rules;
	memset(&p.rules, 0, sizeof(p.rules));
out:
	qos_profile_free(&p);
	return ret;
}

int qos_plan_keep_live(struct qos_plan *plan, const struct qos_dev *dev, char *err,
		       size_t errlen)
{
	struct qos_rule_maps m;
	struct qos_rules cur;
	char why[QOS_PROFILE_NAME_LEN + 16];
	size_t i;
	int ret;

	if (!dev->applied)
		return 0;
	m = qos_rule_maps_of(&dev->cur);
	ret = qos_rules_read(&m, &cur, false);
	if (ret) {
		snprintf(err, errlen, "dev %s: reading the rules: %s", dev->name, strerror(-ret));
		return ret;
	}
	for (i = 0; i < cur.n && !ret; i++)
		if (!cur.r[i].profile)
			ret = qos_rules_add(&plan->rules, &cur.r[i]);
	/* Unchanged profile rules keep their ids, hence their counters. */
	ret = ret ?: qos_rules_keep_ids(&cur, &plan->rules);
	qos_rules_free(&cur);
	if (ret) {
		snprintf(err, errlen, "dev %s: keeping the live rules: %s", dev->name,
			 strerror(-ret));
		return ret;
	}
	/* Reservations stay if the new profile still admits them all. */
	snprintf(why, sizeof(why), "profile %s", plan->cfg.meta.profile);
	return qos_reserve_fit(&plan->rules, &plan->cfg.meta, dev->name, why, err, errlen);
}

int qos_plan_current(const struct qos_dev *dev, struct qos_plan *plan, char *err,
		     size_t errlen)
{
	struct qos_rule_maps m;
	uint32_t id;
	int ret;

	memset(plan, 0, sizeof(*plan));
	plan->empty = !dev->applied || !dev->have_cfg;
	if (plan->empty)
		return 0;
	plan->cfg = dev->cfg;
	plan->rule_entries = dev->cur.rule_entries;
	for (id = 1; id < QOS_MAX_CLASSES; id++)
		if (bpf_map_lookup_elem(dev->cur.map[QOS_MAP_POLICERS], &id, &plan->police[id])) {
			ret = -errno;
			snprintf(err, errlen, "dev %s: reading policers: %s", dev->name,
				 strerror(-ret));
			return ret;
		}
	m = qos_rule_maps_of(&dev->cur);
	ret = qos_rules_read(&m, &plan->rules, false);
	if (ret)
		snprintf(err, errlen, "dev %s: reading the rules: %s", dev->name, strerror(-ret));
	return ret;
}

void qos_plan_free(struct qos_plan *plan)
{
	qos_rules_free(&plan->rules);
}

bool qos_plan_needs_ingress(const struct qos_plan *plan)
{
	unsigned int id;

	/* Policing happens where traffic enters, nowhere else. */
	for (id = 1; id < QOS_MAX_CLASSES; id++)
		if (plan->police[id].tb.cir)
			return true;
	/* A rule is this device's: egress elsewhere would not know it (and
	 * a rule's own policer, a reservation's, acts at ingress only). */
	if (plan->rules.n)
		return true;
	/* Download shaping: the ingress program redirects to the IFB. */
	if (qos_plan_has_ifb(plan))
		return true;
	/* Another build's egress program may not hold every map. */
	return plan->cfg.meta.obj_hash != qos_obj_hash();
}

/* The encoding is this build's memory layout: records live in /run for the
 * life of one boot and are read back by the same qosctl, which the object
 * hash in the meta checks. */
struct plan_hdr {
	uint32_t magic;
	uint32_t size;
	uint64_t obj_hash;
	uint64_t nrules;
};

#define PLAN_MAGIC	0x716f7370	/* "qosp" */

int qos_plan_encode(const struct qos_plan *plan, void **bufp, size_t *lenp)
{
	struct plan_hdr h = {
		.magic = PLAN_MAGIC,
		.size = sizeof(*plan),
		.obj_hash = qos_obj_hash(),
		.nrules = plan->rules.n,
	};
	size_t len = sizeof(h) + sizeof(*plan) + plan->rules.n * sizeof(struct qos_rule);
	char *buf = malloc(len);

	if (!buf)
		return -ENOMEM;
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), plan, sizeof(*plan));
	if (plan->rules.n)
		memcpy(buf + sizeof(h) + sizeof(*plan), plan->rules.r,
		       plan->rules.n * sizeof(struct qos_rule));
	*bufp = buf;
	*lenp = len;
	return 0;
}

size_t qos_plan_max_len(void)
{
	return sizeof(struct plan_hdr) + sizeof(struct qos_plan) +
	       QOS_RULES_MAX * sizeof(struct qos_rule);
}

int qos_plan_decode(const void *buf, size_t len, struct qos_plan *plan)
{
	const char *b = buf;
	struct plan_hdr h;
	size_t i;
	int ret = 0;

	memset(plan, 0, sizeof(*plan));
	if (len < sizeof(h) + sizeof(*plan))
		return -EINVAL;
	memcpy(&h, b, sizeof(h));
	/* nrules bounded first: 2^58 rules of 64 bytes would wrap to 0. */
	if (h.magic != PLAN_MAGIC || h.size != sizeof(*plan) || h.obj_hash != qos_obj_hash() ||
	    h.nrules > QOS_RULES_MAX ||
	    len - sizeof(h) - sizeof(*plan) != h.nrules * sizeof(struct qos_rule))
		return -EINVAL;
	memcpy(plan, b + sizeof(h), sizeof(*plan));
	memset(&plan->rules, 0, sizeof(plan->rules));
	/* Printed with %s (syslog, errors): a crafted name must still end. */
	plan->cfg.meta.profile[sizeof(plan->cfg.meta.profile) - 1] = '\0';
	for (i = 0; i < QOS_MAX_CLASSES; i++)
		plan->cfg.meta.classes[i].name[sizeof(plan->cfg.meta.classes[i].name) - 1] = '\0';
	for (i = 0; i < h.nrules && !ret; i++) {
		struct qos_rule r;

		memcpy(&r, b + sizeof(h) + sizeof(*plan) + i * sizeof(r), sizeof(r));
		r.name[sizeof(r.name) - 1] = '\0';
		r.class_name[sizeof(r.class_name) - 1] = '\0';
		r.police_demote[sizeof(r.police_demote) - 1] = '\0';
		ret = qos_rules_add(&plan->rules, &r);
	}
	if (ret)
		qos_plan_free(plan);
	return ret;
}
