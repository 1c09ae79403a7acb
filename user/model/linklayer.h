/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Link-layer overhead: what the link adds to each packet beyond what tc
 * counts (skb->len: the Ethernet frame without FCS), the smallest length
 * it charges, and its framing. Given by the overhead, mpu and linklayer
 * keys of a profile and of `qosctl apply`; see Documentation/profiles.rst,
 * "Link-layer overhead", for the presets and where their numbers come from.
 */
#ifndef __QOS_MODEL_LINKLAYER_H
#define __QOS_MODEL_LINKLAYER_H

#include <stddef.h>
#include <stdint.h>

#include "../bpf/qos_common.h"

#define QOS_LL_OVERHEAD_MAX	256
#define QOS_LL_MPU_MAX		256
/* The kernel recognises ATM framing in a rate table only up to 100 Mbit/s
 * (__detect_linklayer() in net/sched/sch_api.c); above, it takes Ethernet. */
#define QOS_LL_ATM_MAX_BPS	100000000ULL

enum { QOS_LL_F_OVERHEAD = 1, QOS_LL_F_MPU = 2, QOS_LL_F_LINKLAYER = 4 };

/* The keys as given in one place (a profile, or the command line). */
struct qos_ll_spec {
	int preset;		/* index of the preset named by overhead, or -1 */
	unsigned int set;	/* QOS_LL_F_* given as numbers or names */
	uint32_t overhead;
	uint32_t mpu;
	uint32_t linklayer;	/* enum qos_linklayer */
	int line;		/* of the last key, for errors */
};

void qos_ll_spec_init(struct qos_ll_spec *s);

/*
 * Take KEY = @v when @key is overhead, mpu or linklayer: 0, or -EINVAL
 * with the reason in @why; -ENOENT for any other key.
 */
int qos_ll_parse(struct qos_ll_spec *s, const char *key, const char *v, char *why,
		 size_t len);

/* Put what @s gives into @meta: a preset first, then the keys given
 * as numbers or names, so that "overhead docsis mpu 0" means what it says. */
void qos_ll_apply(const struct qos_ll_spec *s, struct qos_meta *meta);

const char *qos_linklayer_name(uint32_t ll);

/* The rate a shaper is given for @bps on a link of @meta's framing: PTM's
 * 64b/65b coding sends 65 bytes for every 64, which the kernel's rate
 * specs cannot express, so the rate carries it. */
uint64_t qos_ll_rate(const struct qos_meta *meta, uint64_t bps);

/* The presets, for help and completion: NULL after the last. */
const char *qos_ll_preset_name(unsigned int i);

#endif /* __QOS_MODEL_LINKLAYER_H */
