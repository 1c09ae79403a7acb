/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Classification rules as data: parsing, checks and printing (model/rule.c),
 * and the tuple-space layout the BPF side reads (model/tuplespace.c, see
 * qos_common.h). kernel/rulemap.h installs them.
 */
#ifndef __QOS_MODEL_RULE_H
#define __QOS_MODEL_RULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../bpf/qos_common.h"

#define QOS_RULE_PRIO_DEFAULT	100
/* struct qos_rule_val.rank: priority, then specificity, then id. */
#define QOS_RANK_PRIO_SHIFT	40

/* A rule as the operator writes it. */
struct qos_rule {
	uint32_t id;			/* 0 until installed */
	char name[QOS_RULE_NAME_LEN];
	int family;			/* AF_UNSPEC (both families), AF_INET, AF_INET6 */
	uint8_t src[16];		/* network order, IPv4 in the first 4 bytes */
	uint8_t dst[16];
	uint8_t src_len;		/* 0 with has_src false: any */
	uint8_t dst_len;
	bool has_src;
	bool has_dst;
	uint32_t flowlabel;
	uint32_t fl_mask;		/* 0: any flow label */
	int proto;			/* -1: any protocol */
	uint16_t sport_lo;		/* source port range, 0-65535: any */
	uint16_t sport_hi;
	uint16_t dport_lo;		/* destination port range */
	uint16_t dport_hi;
	int port_line;			/* of the last sport/dport key, for errors */
	uint32_t prio;			/* lower wins */
	char class_name[QOS_CLASS_NAME_LEN];
	uint32_t class_id;
	int dscp;			/* -1: leave the DSCP */
	/* A policer of the rule's own (Documentation/policing.rst): a
	 * two-colour srTCM, conform passes, exceed does police_act. */
	uint64_t police_bps;		/* 0: none, the class's policer applies */
	uint64_t police_burst;		/* bytes; 0: auto */
	struct qos_police_action police_act;
	char police_demote[QOS_CLASS_NAME_LEN];	/* demote target, for police_act.arg */
	uint32_t policer;		/* index in qos_policers, given at install */
	int police_line;		/* of the police key, for errors */
	bool profile;			/* installed by apply, replaced by the next one */
	bool reserve;			/* a reservation (qosctl reserve) */
	uint64_t expires_ns;		/* CLOCK_BOOTTIME, 0: never */
	int line;			/* of its [rule NAME] section, for errors */
	struct qos_ctr hits;
};

/* Every rule of an interface, or of a profile. */
struct qos_rules {
	struct qos_rule *r;
	size_t n;
	size_t cap;
};

void qos_rule_init(struct qos_rule *r);

/*
 * "ADDR[/LEN]", IPv4 or IPv6, host bits clear: the address in network
 * order (IPv4 in the first 4 bytes). -EINVAL not an address, -ERANGE a
 * bad length, -EDOM host bits set.
 */
int qos_parse_prefix(const char *s, int *family, uint8_t addr[16], uint8_t *plen);

/*
 * Set one field from a "KEY VALUE" pair: src, dst, flowlabel, proto, sport,
 * dport, priority, class, set-dscp, name, police, burst, action. On error
 * @err says why (without the key).
 */
int qos_rule_set(struct qos_rule *r, const char *key, const char *val, char *err, size_t errlen);

/*
 * A class is named; ports come with a protocol that has them, and their
 * ranges cut into at most QOS_RULE_BLOCKS_MAX entries; burst and action
 * come with police. On error *@key is the key at fault.
 */
int qos_rule_check(const struct qos_rule *r, const char **key, char *err, size_t errlen);

/*
 * Cut [lo, hi] into the fewest aligned power-of-two blocks (the way a range
 * becomes CIDR prefixes): at most 2 per block size, 30 for 16 bits. @val
 * and @len (the block's prefix length, 0-16) get them; returns how many.
 */
unsigned int qos_port_blocks(uint16_t lo, uint16_t hi, uint16_t val[32], uint8_t len[32]);

/* "src 2001:db8::/32 flowlabel 0x12345/0xfffff proto udp dport 1000-2000"
 * into @buf. */
const char *qos_rule_fmt_match(const struct qos_rule *r, char *buf, size_t len);

int qos_rules_add(struct qos_rules *l, const struct qos_rule *r);
void qos_rules_free(struct qos_rules *l);

/* The tuple-space compiler (model/tuplespace.c). */

/* Same match (src, dst, flow label, protocol, ports), and for qos_rule_same
 * also the same priority, name and actions. */
bool qos_rule_same_match(const struct qos_rule *a, const struct qos_rule *b);
bool qos_rule_same(const struct qos_rule *a, const struct qos_rule *b);

/*
 * Give each profile rule of @next that has no id the id of the identical
 * (qos_rule_same) profile rule of @cur, so a re-apply keeps ids and hit
 * counters of unchanged rules. O((n + m) log n).
 */
int qos_rules_keep_ids(const struct qos_rules *cur, struct qos_rules *next);

/*
 * No two rules with the same match, at most QOS_RULE_SHAPES_MAX shapes per
 * family, fewer rules than @capacity. On error @err names the rule and *bad
 * (if not NULL) is its index.
 */
int qos_rules_validate(const struct qos_rules *l, uint32_t capacity, size_t *bad, char *err,
		       size_t errlen);

/* Rule tables (1U << enum qos_table) a rule has entries in. */
unsigned int qos_rule_tables(const struct qos_rule *r);
/*
 * The map keys of @r in table @t, one per pair of aligned source and
 * destination port blocks, into @k (room for QOS_RULE_BLOCKS_MAX). Returns
 * how many, which may exceed QOS_RULE_BLOCKS_MAX (nothing is written then);
 * qos_rule_check() refuses such a rule.
 */
unsigned int qos_rule_keys(const struct qos_rule *r, unsigned int t, struct qos_rule_key *k);
void qos_rule_val(const struct qos_rule *r, struct qos_rule_val *v);
uint64_t qos_rule_rank(const struct qos_rule *r);

/* The shapes of @l per table, sorted by the lowest rank among their rules,
 * and the qos_cfg.rules bits that say which tables to look up. */
int qos_rules_shapes(const struct qos_rules *l, struct qos_rule_set *sh, size_t *bad, char *err,
		     size_t errlen);
uint32_t qos_rules_flags(const struct qos_rule_set *sh);

#endif /* __QOS_MODEL_RULE_H */
