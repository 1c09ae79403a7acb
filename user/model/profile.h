/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef __QOS_PROFILE_H
#define __QOS_PROFILE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../bpf/qos_common.h"
#include "model/linklayer.h"
#include "model/rule.h"
#include "model/policer.h"

/* A rate as written: a share of the link or an absolute rate. */
struct qos_bw {
	bool set;
	bool pct;
	double share;		/* percent, when pct */
	uint64_t bps;		/* bit/s, when !pct */
	int line;
	char text[32];		/* as written, for warnings */
};

struct qos_class_spec {
	char name[QOS_CLASS_NAME_LEN];
	int line;		/* of the [class NAME] header */
	uint32_t id;
	int id_line;
	uint32_t prio;
	struct qos_bw rate;
	struct qos_bw ceil;
	uint64_t dscp[QOS_TABLE_MAX];	/* bit n set: DSCP n maps here */
	int dscp_line[QOS_TABLE_MAX];
	enum qos_leaf leaf;
	uint32_t limit;		/* leaf queue limit: packets (pfifo) or bytes (bfifo) */
	uint64_t burst;		/* bytes; 0 = derived from the rate */
	struct qos_police_spec police;
	int prio_line;
	int burst_line;
	uint8_t remark[QOS_TABLE_MAX];	/* egress rewrite: QOS_REMARK_F | DSCP */
	int remark_line;
	/* CBQ's vocabulary, mapped onto HTB (Documentation/profiles.rst). */
	bool bounded;		/* ceil = rate */
	bool isolated;
	uint32_t maxburst;	/* packets: burst = maxburst full frames */
	int cbq_line;
	int limit_line;
};

struct qos_profile {
	char name[QOS_PROFILE_NAME_LEN];
	char path[PATH_MAX];
	char description[256];
	enum qos_sched sched;
	uint32_t mark_mask;
	uint32_t handle_major;
	uint64_t leaf_delay_ns;	/* bfifo sizing target when fq_codel is absent */
	char default_class[QOS_CLASS_NAME_LEN];
	int default_line;
	unsigned int nclasses;
	struct qos_class_spec classes[QOS_MAX_CLASSES - 1];
	uint32_t rule_entries;	/* rule table size */
	struct qos_rules rules;	/* [rule NAME] sections */
	int sched_line;
	char nd_class[QOS_CLASS_NAME_LEN];	/* IPv6 ND/RA go here */
	int nd_line;
	char nonip_class[QOS_CLASS_NAME_LEN];	/* ARP and other non-IP */
	int nonip_line;
	char ack_class[QOS_CLASS_NAME_LEN];	/* pure TCP ACKs of the default class */
	int ack_line;
	struct qos_bw priority_max;	/* bound on classes served before the default */
	bool wash;			/* egress DSCP 0 after classification */
	int wash_line;
	uint32_t tunnel_dscp;		/* enum qos_tunnel_dscp: the DSCP of 6in4 */
	char reserve_class[QOS_CLASS_NAME_LEN];	/* reservations go here */
	int reserve_line;
	uint32_t reserve_headroom_pct;	/* of its ceiling, for DSCP-only traffic */
	uint32_t reserve_exceed;	/* QOS_PA_DEMOTE (to the default) or QOS_PA_DROP */
	uint64_t reserve_delay_ns;	/* the class's per-hop delay bound */
	uint32_t reserve_remark;	/* QOS_REMARK_F | DSCP of reserved flows, 0: none */
	struct qos_ll_spec ll;		/* overhead, mpu, linklayer */
	uint32_t queues;		/* trees under mq, QOS_QUEUES_AUTO: one per TX queue */
	int queues_line;
	uint64_t ingress_bps;		/* download shaping through an IFB; 0: none */
	int ingress_line;
};

/* queues = auto: a tree per TX queue of the device. */
#define QOS_QUEUES_AUTO		0
/* No `queues` on the command line: the profile's. */
#define QOS_QUEUES_PROFILE	UINT32_MAX

/* tunnel-dscp: "auto", "outer" or "inner" into @mode (enum
 * qos_tunnel_dscp): 0, or -EINVAL; and back. */
int qos_tunnel_dscp_parse(const char *v, uint32_t *mode);
const char *qos_tunnel_dscp_name(uint32_t mode);

/* Parse "auto" or 1-QOS_MAX_QUEUES into @q: 0, or -EINVAL. */
int qos_queues_parse(const char *v, uint32_t *q);

/* Share of the reservation class's ceiling kept for its DSCP-only traffic. */
#define QOS_RESERVE_HEADROOM_DEFAULT	10
/* Its per-hop delay bound when the profile gives no reserve-delay: a
 * 16-packet queue at pip-20pct's 20 Mbit/s of a 100 Mbit/s link. */
#define QOS_RESERVE_DELAY_DEFAULT_NS	10000000ULL

/* A class with its rates resolved against the link rate. */
struct qos_class_plan {
	const struct qos_class_spec *spec;
	uint64_t rate_bps;
	uint64_t ceil_bps;
	struct qos_policer police;	/* tb.cir == 0: not policed */
};

/*
 * Parse (model/profile_read.c) and check (model/profile_check.c)
 * everything that does not depend on the link rate. On error, @err holds
 * "FILE:LINE: KEY: reason" (model/perr.h).
 */
int qos_profile_load(const char *name, struct qos_profile *p, char *err, size_t errlen);

/* Free what qos_profile_load() allocated (the rules). */
void qos_profile_free(struct qos_profile *p);

/* Resolve rates against @link_bps and check the sums (model/profile_rate.c);
 * policer bursts derived by qosctl hold a full frame at @mtu. Same error
 * form. */
int qos_profile_resolve(const struct qos_profile *p, uint64_t link_bps, uint32_t mtu,
			struct qos_class_plan *plan, char *err, size_t errlen);

/* Warn about every burst or byte queue the profile sets below a full frame
 * at @mtu (it would drop, or police as red, each such frame). */
void qos_profile_check_mtu(const struct qos_profile *p, uint32_t mtu);

/* The class named @name, NULL if none (model/profile.c). */
const struct qos_class_spec *qos_profile_class(const struct qos_profile *p,
					       const char *name);

/* The DSCP -> class tables and mark layout, as the data path reads them
 * (model/cfg.c). */
void qos_profile_fill_cfg(const struct qos_profile *p, struct qos_cfg *cfg);

/*
 * What the schedulers make of a profile (model/sched.c): the qdisc class a
 * profile class is queued in, and the scheduler-specific checks.
 */
int qos_sched_parse(const char *s, enum qos_sched *sched);
uint32_t qos_profile_classid(const struct qos_profile *p, const struct qos_class_spec *cl);
int qos_prio_band(const struct qos_profile *p, const struct qos_class_spec *cl);

#endif /* __QOS_PROFILE_H */
