/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Constants shared by the BPF programs and qosctl: sizes, the enums that
 * index counters and tables, and the flag bits of the structures in
 * qos_shared.h. Numbers only, no layout.
 */
#ifndef __QOS_CONSTS_H
#define __QOS_CONSTS_H

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

/* IPv6-in-IPv4 (protocol 41) is counted apart, so an operator can see how
 * much IPv6 still arrives tunnelled; enum qos_tunnel_dscp says which of its
 * headers classifies it. */
enum qos_family {
	QOS_FAM_IPV4,
	QOS_FAM_IPV6,
	QOS_FAM_IPV6IN4,
	QOS_FAM_MAX,
};

/* qos_cfg.tunnel_dscp: the DSCP of 6in4 (Documentation/classifier.rst). */
enum qos_tunnel_dscp {
	QOS_TUNNEL_AUTO,	/* outer, or the inner one when the outer is 0 */
	QOS_TUNNEL_OUTER,	/* the forwarded header's, always */
	QOS_TUNNEL_INNER,	/* the inner Traffic Class when it parsed */
	QOS_TUNNEL_MAX,
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
	QOS_UNP_BAD_LEN,	/* IPv4 total / IPv6 payload length disagrees with the packet */
	QOS_UNP_BAD_EXT,	/* IPv6 extension header where it may not be (Hop-by-Hop not first) */
	QOS_UNP_EXT_CHAIN,	/* more IPv6 extension headers than the walk follows */
	/* Not a parse failure: ingress could not hand the packet to the IFB
	 * of download shaping, so it passed unshaped. Counted here because it
	 * is the same kind of fact: a packet the policy did not treat. */
	QOS_UNP_NO_REDIRECT,
	QOS_UNP_MAX,
};

#define QOS_REMARK_F		0x80

/* Multi-queue trees: the HTB of TX queue q has major (q + 1) << 8, its
 * leaves (q + 1) << 8 | 0x10 + class id (Documentation/design.rst). */
#define QOS_MAX_QUEUES		64
#define QOS_QUEUE_MAJOR(q)	(((q) + 1) << 8)

/* Classification rules (layout and search: qos_shared.h). */
#define QOS_RULES_DEFAULT	65536	/* rule table size when the profile names none */
/*
 * Largest rule table a profile may ask for: the smallest power of two that
 * holds 2^20 rules (ids start at 1), the 1M flow-label rules the classifier
 * is measured with. Each rule id given costs 16 bytes of hit counters per
 * possible CPU, allocated as rules are installed; Documentation/profiles.rst
 * has the figures.
 */
#define QOS_RULES_MAX		(1U << 21)
#define QOS_RULE_SHAPES_MAX	16	/* per family */
#define QOS_RULE_NAME_LEN	16
#define QOS_FLOWLABEL_MASK	0xfffffU

/* qos_cfg.rules */
#define QOS_RULES_V4		(1U << 1)	/* IPv4 shapes exist (<< QOS_TABLE_IPV4) */
#define QOS_RULES_V6		(1U << 2)	/* IPv6 shapes exist (<< QOS_TABLE_IPV6) */
#define QOS_RULES_L4		(1U << 3)	/* a shape compares the upper-layer protocol */
#define QOS_RULES_PORTS		(1U << 4)	/* a shape compares a port */
#define QOS_RULES_RESERVE	(1U << 5)	/* reservations: egress looks up every packet */

/*
 * qos_rule_key.mask: flow-label bits compared (0-19), the source and
 * destination port prefix lengths (0-16, bits 20-24 and 25-29), and whether
 * proto is compared. Everything that makes a shape is in the key, so equal
 * masked values of two shapes never collide.
 */
#define QOS_RULE_M_SPORT_SHIFT	20
#define QOS_RULE_M_DPORT_SHIFT	25
#define QOS_RULE_M_PORT_LEN	0x1fU
#define QOS_RULE_M_PROTO	(1U << 31)
/* Blocks (entries) one rule may expand into per family: source blocks
 * times destination blocks. */
#define QOS_RULE_BLOCKS_MAX	64

#define QOS_RULE_F_SET_DSCP	(1U << 0)	/* rewrite the DSCP to .dscp */
#define QOS_RULE_F_PROFILE	(1U << 1)	/* installed by apply, replaced by the next */
/* A reservation (qosctl reserve): matched and policed at egress only, and
 * with QOS_RULE_F_SET_DSCP remarked there if its policer passes it. */
#define QOS_RULE_F_RESERVE	(1U << 2)

/* qos_cfg.flags */
#define QOS_CFG_F_WASH	(1U << 0)	/* egress: DSCP 0 unless the class remarks */

/* Policer ids: 0 none, class policers below this, rules' own from it on
 * (qos_shared.h, struct qos_policer). */
#define QOS_POLICER_RULE_FIRST	QOS_MAX_CLASSES

/* What a policer does with a packet of one colour. */
enum qos_police_act {
	QOS_PA_PASS,
	QOS_PA_DROP,
	QOS_PA_REMARK,		/* arg: the new DSCP */
	QOS_PA_DEMOTE,		/* arg: the class id to move the packet to */
	QOS_PA_MAX,
};

#define QOS_POLICE_F_AWARE	(1U << 0)	/* colour-aware: colour from DSCP */

#endif /* __QOS_CONSTS_H */
