/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Control-plane-only metadata: what qosctl installed on a device, kept in
 * its struct qos_cfg (qos_shared.h) so that every later qosctl process
 * finds it through the attached programs. The data path never reads it.
 */
#ifndef __QOS_META_H
#define __QOS_META_H

#include <linux/types.h>
#include "qos_consts.h"

enum qos_sched {
	QOS_SCHED_HTB,
	QOS_SCHED_PRIO,
	QOS_SCHED_TBF,
	QOS_SCHED_NONE,		/* programs and maps only, no qdisc tree */
};

enum qos_leaf {
	QOS_LEAF_AUTO,
	QOS_LEAF_PFIFO,
	QOS_LEAF_BFIFO,
	QOS_LEAF_FQ_CODEL,
};

/*
 * How the link frames a packet, for the rate-limited qdiscs and classes
 * (Documentation/profiles.rst, "Link-layer overhead"): the kernel's rate
 * specs know Ethernet and ATM cells; PTM's 64b/65b coding is folded into
 * the rates.
 */
enum qos_linklayer {
	QOS_LL_ETHERNET,
	QOS_LL_ATM,
	QOS_LL_PTM,
	QOS_LL_MAX,
};

#define QOS_META_VERSION	5
#define QOS_META_F_CLSACT	(1U << 0)	/* qosctl created the clsact qdisc */
#define QOS_META_F_ROOT		(1U << 1)	/* qosctl owns the root qdisc */
/* Nothing of the profile acts at ingress: the egress program runs alone. */
#define QOS_META_F_EGRESS_ONLY	(1U << 2)
/* At tcx, qosctl's programs go after the others (tcx-place last), not
 * before them; kept from one apply to the next. */
#define QOS_META_F_TCX_LAST	(1U << 3)

struct qos_meta_class {
	char name[QOS_CLASS_NAME_LEN];
	__u32 id;		/* class number carried in the mark */
	__u32 classid;		/* qdisc class major:minor */
	__u64 rate_bps;		/* guaranteed rate */
	__u64 ceil_bps;		/* maximum rate */
	__u32 prio;		/* 0 is served first */
	__u32 leaf;		/* enum qos_leaf actually installed */
	__u32 leaf_limit;	/* packets for pfifo, bytes for bfifo */
	__u32 burst;		/* bytes the class may send at ceil in one go */
};

struct qos_meta {
	__u32 version;
	__u32 ifindex;
	__u32 flags;
	__u32 sched;		/* enum qos_sched */
	__u32 qdisc_handle;	/* root qdisc handle, major in the top 16 bits */
	__u32 nclasses;
	__u32 default_class;	/* class id unclassified packets get */
	__u32 rule_entries;	/* capacity of the rule table */
	__u32 overhead;		/* bytes every shaper adds to a packet's length */
	__u32 mpu;		/* the smallest length a shaper charges */
	__u32 linklayer;	/* enum qos_linklayer */
	__u32 queues;		/* TX queues with a tree each under mq; 0 or 1: one tree */
	__u64 obj_hash;		/* of the BPF object the programs were loaded from */
	__u64 rate_bps;		/* link rate the profile was applied at */
	/* Reservations (qosctl reserve): the class they are admitted to, 0 =
	 * none; the share of its ceiling kept for traffic that is in it by
	 * DSCP alone, in percent; what their policers do beyond the rate. */
	__u32 reserve_class;
	__u32 reserve_headroom_pct;
	__u32 reserve_exceed;	/* enum qos_police_act: drop or demote */
	__u32 reserve_pad;
	__u64 reserve_ceil_bps;	/* the class's ceiling at this link rate */
	__u64 reserve_cap_bps;	/* what reservations may take of it together */
	char profile[QOS_PROFILE_NAME_LEN];
	struct qos_meta_class classes[QOS_MAX_CLASSES];
	__u32 mtu;		/* of the device when applied; 0: 1500 */
	/* Reservations: the class's per-hop delay bound (reserve-delay, µs;
	 * 0: the default) and the DSCP reserved flows are remarked to on
	 * the way out (reserve-remark: QOS_REMARK_F | DSCP, 0: none). */
	__u32 reserve_delay_us;
	__u32 reserve_remark;
};

#endif /* __QOS_META_H */
