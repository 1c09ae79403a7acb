/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Structures shared by the BPF programs and qosctl: the values and keys of
 * the maps a device's programs hold, and the configuration they read.
 *
 * Everything in here is ABI between the two sides. Maps are shared with a
 * running pair of programs only when they come from the same object
 * (qosctl compares the object's hash), so a changed structure never meets
 * an older map.
 */
#ifndef __QOS_SHARED_H
#define __QOS_SHARED_H

#include <linux/bpf.h>
#include <linux/types.h>
#include "lib/tb.h"
#include "qos_consts.h"
#include "qos_meta.h"

struct qos_ctr {
	__u64 packets;
	__u64 bytes;
};

/* Index of a class counter in the per-CPU qos_stats array. */
#define QOS_STATS_ENTRIES	(QOS_DIR_MAX * QOS_MAX_CLASSES * QOS_FAM_MAX * QOS_V_MAX)
static inline __u32 qos_stats_key(__u32 dir, __u32 cls, __u32 fam, __u32 verdict)
{
	return ((dir * QOS_MAX_CLASSES + cls) * QOS_FAM_MAX + fam) * QOS_V_MAX + verdict;
}

#define QOS_UNPARSED_ENTRIES	(QOS_DIR_MAX * QOS_UNP_MAX)
static inline __u32 qos_unparsed_key(__u32 dir, __u32 reason)
{
	return dir * QOS_UNP_MAX + reason;
}

/*
 * Classification rules, looked up before the DSCP table. See
 * Documentation/classifier.rst for the model.
 *
 * Tuple-space search: every rule has a shape (family, source and destination
 * prefix lengths, flow-label mask, protocol compared or not, source and
 * destination port prefix lengths) and lives in one hash table under its key
 * masked by that shape. A port range is cut into aligned power-of-two blocks,
 * one entry each: a range costs entries and shapes, never a scan. A packet costs one hash
 * lookup per shape in use, however many rules share a shape. The shapes of
 * each family sit in a struct qos_rule_set, sorted so that the lookup can stop
 * early; the set is part of struct qos_cfg and changes with it, whole.
 */
struct qos_rule_key {
	__u8 table;		/* enum qos_table */
	__u8 src_len;		/* prefix lengths of the shape */
	__u8 dst_len;
	__u8 proto;		/* upper-layer protocol, 0 unless QOS_RULE_M_PROTO */
	__u32 mask;		/* see QOS_RULE_M_* */
	__u32 flowlabel;	/* host order, & mask */
	__be16 sport;		/* & port prefix; 0 when ports are not compared */
	__be16 dport;
	__be32 src[4];		/* & prefix; IPv4 in src[0] */
	__be32 dst[4];
};

/*
 * The key of IPv4 entries, in their own table (qos_rules4): the fields of
 * qos_rule_key an IPv4 shape can make other than zero, in 20 bytes
 * against 48. The kernel hashes and compares the whole key at every probe,
 * and the shorter key takes a quarter off an IPv4 probe (performance.rst,
 * "Rule keys and LPM tries"). IPv6 keeps qos_rule_key.
 */
struct qos_rule_key4 {
	__u8 src_len;
	__u8 dst_len;
	__u8 proto;
	__u8 pad;
	__u32 mask;
	__be16 sport;
	__be16 dport;
	__be32 src;
	__be32 dst;
};

/*
 * rank orders overlapping rules: the lowest matching rank wins. qosctl
 * computes it as priority << 40 | (511 - specificity) << 24 | id, so a lower
 * priority number wins, then the longer match (prefix bits + flow-label mask
 * bits + 8 for a protocol + port bits), then the older rule id: always one
 * winner. The port ranges are the rule's whole ranges, whichever block an
 * entry holds, so that qosctl reads a rule back from any of its entries.
 */
struct qos_rule_val {
	__u64 rank;
	__u32 id;		/* index in qos_rule_stats */
	__u8 class_id;
	__u8 flags;		/* QOS_RULE_F_* */
	__u8 dscp;		/* new DSCP with QOS_RULE_F_SET_DSCP */
	__u8 pad;
	__u32 policer;		/* per-rule policer index, 0 = none */
	__u16 sport_lo;		/* host order; 0-65535: any */
	__u16 sport_hi;
	__u16 dport_lo;
	__u16 dport_hi;
	__u32 pad2;
	__u64 expires_ns;	/* CLOCK_BOOTTIME; from then on the rule matches
				 * nothing. 0: never */
	char name[QOS_RULE_NAME_LEN];
};

/* Rule ids are below QOS_RULES_MAX: they must not spill into the specificity. */
_Static_assert(QOS_RULES_MAX <= 1U << 24, "rule ids overflow the rank");

struct qos_rule_shape {
	__u8 table;
	__u8 src_len;
	__u8 dst_len;
	__u8 proto_mask;	/* 0xff when the protocol is compared */
	__u32 mask;		/* as qos_rule_key.mask */
	__be16 sport_mask;	/* the port prefix lengths as masks */
	__be16 dport_mask;
	__u32 pad;
	__be32 src[4];		/* the prefix lengths as address masks */
	__be32 dst[4];
	__u64 min_rank;		/* lowest rank of the shape's rules */
};

struct qos_rule_set {
	__u32 n[QOS_TABLE_MAX];
	__u32 pad[2];
	struct qos_rule_shape shape[QOS_TABLE_MAX][QOS_RULE_SHAPES_MAX];
};

/*
 * The configuration of one device: what the data path reads once per packet
 * (everything before meta) and what qosctl installed (meta and ifb, never
 * read by the data path). The data-path part, QOS_CFG_DP_SIZE bytes, is never
 * written where a program may read it: qosctl writes the inactive one of
 * two slots (qos_cfg_slots), only once a grace period has ended since a
 * program could last read it, then flips the generation in qos_cfg_gen
 * (see Documentation/design.rst, "Two slots"), so a packet sees one
 * configuration whole, old or new. A change that leaves the data-path part
 * as it is flips nothing. The meta and ifb live in the qos_meta map (struct
 * qos_meta_rec), which only qosctl reads and writes.
 *
 * mark_mask/mark_shift: where the class travels in skb->mark, so that other
 * fwmark users keep their bits. classid[]: the qdisc class (major:minor, as
 * in skb->priority) a class is queued in on this interface's egress.
 */
struct qos_cfg {
	__u32 mark_mask;
	__u32 mark_shift;
	__u32 default_class;
	__u32 flags;		/* QOS_CFG_F_* */
	__u32 classid[QOS_MAX_CLASSES];
	__u8 dscp_class[QOS_TABLE_MAX][QOS_DSCP_MAX];
	__u32 rules;		/* QOS_RULES_*: which rule tables to look up */
	/* Policer of each class in qos_policers, 0 = not policed. */
	__u16 class_policer[QOS_MAX_CLASSES];
	/* Routing and neighbour traffic that must survive congestion: the
	 * class of IPv6 ND/RA (ICMPv6 133-137) and, at egress, of frames that
	 * are not IP (ARP). 0 leaves them to the DSCP table / qdisc default. */
	__u32 nd_class;
	__u32 nonip_class;
	/* Pure TCP ACKs of the default class, 0 = none (an asymmetric link's
	 * upstream). */
	__u32 ack_class;
	/* TX queues with a tree of their own under an mq root, 0 or 1 for one
	 * tree: egress picks a queue by the flow hash and queues in the tree
	 * of that queue, whose classids are classid[] + (queue << 24). */
	__u32 queues;
	__u32 tunnel_dscp;	/* enum qos_tunnel_dscp */
	/* Egress rewrite per family and class (a domain border downgrading
	 * PIP): QOS_REMARK_F | DSCP, 0 = leave the DSCP as it is. */
	__u8 egress_remark[QOS_TABLE_MAX][QOS_MAX_CLASSES];
	struct qos_rule_set rs;		/* rule shapes; qos_cfg.rules says which families */
	/* Download shaping: the IFB ingress redirects every packet it does
	 * not drop to (0 = none), with skb->priority = ifb_classid[class],
	 * the class of the IFB's own tree (0: the priority is left as it
	 * is). */
	__u32 ifb_ifindex;
	__u32 ifb_pad;
	__u32 ifb_classid[QOS_MAX_CLASSES];
	struct qos_meta meta;
	/* The IFB's tree, as meta is the egress tree's: rate_bps 0 = no
	 * download shaping. Never read by the data path. */
	struct qos_meta ifb;
};

/* The bytes of struct qos_cfg the programs read: a slot's value. */
#define QOS_CFG_DP_SIZE	__builtin_offsetof(struct qos_cfg, meta)

/*
 * The meta of struct qos_cfg, in the one entry of the qos_meta array: bound
 * to the programs, never read by them. qosctl writes and reads it whole with
 * BPF_F_LOCK, so that a reader without the device lock (show, the exporter)
 * never sees half of a write.
 */
struct qos_meta_rec {
	struct bpf_spin_lock lock;
	__u32 pad;
	struct qos_meta meta;
	struct qos_meta ifb;
};

/*
 * Policers (Documentation/policing.rst): token buckets, one struct
 * qos_policer each. Index 0 is "no policer"; index N for
 * 1 <= N < QOS_POLICER_RULE_FIRST is the policer of class id N, set by the
 * profile, in the qos_policers array; QOS_POLICER_RULE_FIRST and up are
 * rules' own policers, in the qos_rule_pols hash, which holds as many as
 * the rule table has rules and takes memory only for those that exist.
 */
struct qos_police_action {
	__u8 type;		/* enum qos_police_act */
	__u8 arg;
};

/*
 * One policer. No lock: the data path updates the words of st with
 * compare-and-swap and only reads the rest; qosctl writes whole values
 * (Documentation/policing.rst, Reconfiguration).
 */
struct qos_policer {
	__u32 flags;
	__u32 pad0;
	struct tb_params tb;
	struct tb_state st;
	__u64 pre_yellow;	/* colour-aware: DSCPs that arrive yellow */
	__u64 pre_red;		/* ... and red; any other DSCP arrives green */
	struct qos_police_action act[TB_COLOR_MAX];
	__u16 pad;
};

/* The counters of one policer: packets and wire bytes per family and
 * colour. */
struct qos_police_ctrs {
	struct qos_ctr c[QOS_FAM_MAX][TB_COLOR_MAX];
};

/*
 * A rule's policer with its counters, one element of the qos_rule_pols
 * hash. The counters are shared by every CPU and added to atomically, not
 * per CPU: every packet already writes the policer's buckets with a
 * compare-and-swap, so per-CPU counters would save no contention, and
 * they would cost 144 bytes per policer per CPU (Documentation/policing.rst,
 * Maps).
 */
struct qos_rule_policer {
	struct qos_policer pol;
	struct qos_police_ctrs ctrs;
};

#endif /* __QOS_SHARED_H */
