/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Classification rules: parsing, the tuple-space layout the BPF side reads
 * (see qos_common.h), and installing rule sets hitlessly into the pinned
 * maps of an interface.
 */
#ifndef __QOS_RULES_H
#define __QOS_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../bpf/qos_common.h"

#define QOS_RULE_PRIO_DEFAULT	100

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
	uint32_t prio;			/* lower wins */
	char class_name[QOS_CLASS_NAME_LEN];
	uint32_t class_id;
	int dscp;			/* -1: leave the DSCP */
	bool profile;			/* installed by apply, replaced by the next one */
	int line;			/* of its [rule NAME] section, for errors */
	struct qos_ctr hits;
};

/* Every rule of an interface, or of a profile. */
struct qos_rules {
	struct qos_rule *r;
	size_t n;
	size_t cap;
};

/* File descriptors of the rule maps, and of qos_cfg whose .rules field
 * switches between the two shape sets. */
struct qos_rule_maps {
	int rules;
	int stats;
	int sets;
	int cfg;
	uint32_t capacity;		/* max_entries of the rule table */
};

void qos_rule_init(struct qos_rule *r);

/*
 * Set one field from a "KEY VALUE" pair: src, dst, flowlabel, proto,
 * priority, class, set-dscp, name. On error @err says why (without the key).
 */
int qos_rule_set(struct qos_rule *r, const char *key, const char *val, char *err, size_t errlen);

/* A class is named and src/dst/flowlabel agree on a family. */
int qos_rule_check(const struct qos_rule *r, char *err, size_t errlen);

/* Same match (src, dst, flow label, protocol), and for qos_rule_same also
 * the same priority, name and actions. */
bool qos_rule_same_match(const struct qos_rule *a, const struct qos_rule *b);
bool qos_rule_same(const struct qos_rule *a, const struct qos_rule *b);

/*
 * Give each profile rule of @next that has no id the id of the identical
 * (qos_rule_same) profile rule of @cur, so a re-apply keeps ids and hit
 * counters of unchanged rules. O((n + m) log n).
 */
int qos_rules_keep_ids(const struct qos_rules *cur, struct qos_rules *next);

/* "src 2001:db8::/32 flowlabel 0x12345/0xfffff proto udp" into @buf. */
const char *qos_rule_fmt_match(const struct qos_rule *r, char *buf, size_t len);

int qos_rules_add(struct qos_rules *l, const struct qos_rule *r);
void qos_rules_free(struct qos_rules *l);

/*
 * No two rules with the same match, at most QOS_RULE_SHAPES_MAX shapes per
 * family, fewer rules than @capacity. On error @err names the rule and *bad
 * (if not NULL) is its index.
 */
int qos_rules_validate(const struct qos_rules *l, uint32_t capacity, size_t *bad, char *err,
		       size_t errlen);

/* The maps pinned in @pin_dir; fds of a loaded object for tests. */
int qos_rule_maps_open(const char *pin_dir, struct qos_rule_maps *m);
void qos_rule_maps_close(struct qos_rule_maps *m);
/* max_entries of the rule table pinned in @pin_dir, 0 if none. */
uint32_t qos_rule_pinned_capacity(const char *pin_dir);

/* Every installed rule; with @hits, their hit counters summed over CPUs. */
int qos_rules_read(const struct qos_rule_maps *m, struct qos_rules *l, bool hits);

/*
 * Replace the installed rules @cur by @next without a moment where a packet
 * sees neither: add the entries of rules new in @next (assigning ids to
 * those with id 0 and zeroing their counters), write the spare shape set,
 * switch *rules (the qos_cfg.rules the data path reads; written to the map
 * too with @write_cfg), then delete the entries of rules gone from @next.
 */
int qos_rules_commit(const struct qos_rule_maps *m, const struct qos_rules *cur,
		     struct qos_rules *next, uint32_t *rules, bool write_cfg, char *err,
		     size_t errlen);

/*
 * Put back the rule entries of @cur after a commit of @next, for a caller
 * that restores the previous qos_cfg itself (apply's rollback): the shape
 * set @cur used was not touched by the commit.
 */
void qos_rules_revert(const struct qos_rule_maps *m, const struct qos_rules *cur,
		      const struct qos_rules *next);

/* `qosctl rule add|del|list dev IFACE ...` */
int qos_rule_cmd_add(const char *dev, int argc, char **argv, char *err, size_t errlen);
int qos_rule_cmd_del(const char *dev, int argc, char **argv, char *err, size_t errlen);
int qos_rule_cmd_list(FILE *f, const char *dev, bool json, char *err, size_t errlen);

#endif /* __QOS_RULES_H */
