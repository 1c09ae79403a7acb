/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Structures and constants shared by the BPF programs and qosctl.
 *
 * Everything in here is ABI between the two sides and is also the layout
 * of the maps pinned under /sys/fs/bpf/qosctl/<ifname>/: change a structure
 * and an older pinned map will be refused by libbpf at load time, which is
 * what we want.
 */
#ifndef __QOS_COMMON_H
#define __QOS_COMMON_H

#include <linux/types.h>

/* Class 0 means "no class": the mark carries no class, leave skb->priority. */
#define QOS_MAX_CLASSES		16
#define QOS_CLASS_NONE		0
#define QOS_CLASS_NAME_LEN	16
#define QOS_PROFILE_NAME_LEN	64

/* DSCP is 6 bits; one table per L3 family. */
#define QOS_DSCP_MAX		64

enum qos_table {
	QOS_TABLE_IPV4,		/* IPv4 DSCP */
	QOS_TABLE_IPV6,		/* IPv6 Traffic Class, DSCP bits */
	QOS_TABLE_MAX,
};

/* IPv6-in-IPv4 (protocol 41) is classified on the inner header but counted
 * apart, so an operator can see how much IPv6 still arrives tunnelled. */
enum qos_family {
	QOS_FAM_IPV4,
	QOS_FAM_IPV6,
	QOS_FAM_IPV6IN4,
	QOS_FAM_MAX,
};

enum qos_dir {
	QOS_DIR_INGRESS,
	QOS_DIR_EGRESS,
	QOS_DIR_MAX,
};

enum qos_verdict {
	QOS_V_PASS,
	QOS_V_DROP,
	QOS_V_REMARK,
	QOS_V_DEMOTE,
	QOS_V_MAX,
};

/* Why a packet could not be classified. Such packets always pass. */
enum qos_unparsed {
	QOS_UNP_NONE,		/* parsed: not an unparsed reason */
	QOS_UNP_NON_IP,		/* ARP, LLDP, MPLS, ... */
	QOS_UNP_TRUNCATED,	/* shorter than the headers it announces */
	QOS_UNP_BAD_HDR,	/* wrong IP version, IHL < 5, ... */
	QOS_UNP_MAX,
};

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
 * Data-path configuration: a single entry read once per packet.
 *
 * mark_mask/mark_shift: where the class travels in skb->mark, so that other
 * fwmark users keep their bits. classid[]: the qdisc class (major:minor, as
 * in skb->priority) a class is queued in on this interface's egress.
 */
struct qos_cfg {
	__u32 mark_mask;
	__u32 mark_shift;
	__u32 default_class;
	__u32 flags;
	__u32 classid[QOS_MAX_CLASSES];
	__u8 dscp_class[QOS_TABLE_MAX][QOS_DSCP_MAX];
	/* Routing and neighbour traffic that must survive congestion: the
	 * class of IPv6 ND/RA (ICMPv6 133-137) and, at egress, of frames that
	 * are not IP (ARP). 0 leaves them to the DSCP table / qdisc default. */
	__u32 nd_class;
	__u32 nonip_class;
	/* Egress rewrite per family and class (a domain border downgrading
	 * PIP): QOS_REMARK_F | DSCP, 0 = leave the DSCP as it is. */
	__u8 egress_remark[QOS_TABLE_MAX][QOS_MAX_CLASSES];
};

#define QOS_REMARK_F		0x80

/*
 * What qosctl installed, kept in a pinned map so that every later qosctl
 * process (show, stats, remove) knows it without a state file. Never read
 * by the data path.
 */
enum qos_sched {
	QOS_SCHED_HTB,
	QOS_SCHED_PRIO,
	QOS_SCHED_TBF,
};

enum qos_leaf {
	QOS_LEAF_AUTO,
	QOS_LEAF_PFIFO,
	QOS_LEAF_BFIFO,
	QOS_LEAF_FQ_CODEL,
};

#define QOS_META_VERSION	1
#define QOS_META_F_CLSACT	(1U << 0)	/* qosctl created the clsact qdisc */
#define QOS_META_F_ROOT		(1U << 1)	/* qosctl owns the root qdisc */

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
	__u32 prog_id[QOS_DIR_MAX];
	__u32 pad;
	__u64 rate_bps;		/* link rate the profile was applied at */
	char profile[QOS_PROFILE_NAME_LEN];
	struct qos_meta_class classes[QOS_MAX_CLASSES];
};

#endif /* __QOS_COMMON_H */
