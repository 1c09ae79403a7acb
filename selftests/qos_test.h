/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers shared by the BPF selftests: load the programs configured from a
 * real profile, and read the counters back summed over CPUs.
 */
#ifndef __QOS_SELFTEST_QOS_TEST_H
#define __QOS_SELFTEST_QOS_TEST_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel/bpfobj.h"
#include "kernel/rulemap.h"
#include "model/profile.h"
#include "qos.skel.h"

/* The shipped profiles' class numbers (tc-profiles/pip-20pct). */
#define CLS_PIP		2
#define CLS_BE		3
#define CLS_LBE		4
#define MARK_SHIFT	16
#define MARK_MASK	0x000f0000U

/* Open and load the object, sized as qosctl sizes it: @rule_entries sizes
 * the rule tables (0: the default size), the hit counters a row per CPU. */
static inline struct qos *qos_test_load(uint32_t rule_entries)
{
	struct qos *skel = qos__open();

	if (!skel)
		return NULL;
	if (qos_rule_maps_size(skel, rule_entries ? rule_entries : QOS_RULES_DEFAULT)) {
		qos__destroy(skel);
		return NULL;
	}
	if (qos__load(skel)) {
		qos__destroy(skel);
		return NULL;
	}
	return skel;
}

/* Make @cfg the configuration the programs of @skel read. */
/* The rule maps of @skel, as qosctl's rule manager takes them. */
static inline struct qos_rule_maps qos_test_rule_maps(struct qos *skel)
{
	struct qos_rule_maps m = {
		.rules = bpf_map__fd(skel->maps.qos_rules),
		.stats = bpf_map__fd(skel->maps.qos_rule_stats),
		.capacity = bpf_map__max_entries(skel->maps.qos_rules),
		.policers = bpf_map__fd(skel->maps.qos_rule_pols),
		.rules4 = bpf_map__fd(skel->maps.qos_rules4),
	};

	return m;
}

/* The inactive slot written and flipped to, as qosctl does; no grace
 * period: nothing runs the programs between two test runs. */
static inline int qos_test_cfg_put(struct qos *skel, const struct qos_cfg *cfg)
{
	int slots = bpf_map__fd(skel->maps.qos_cfg_slots), gen = bpf_map__fd(skel->maps.qos_cfg_gen);
	uint32_t zero = 0, g, slot;

	if (bpf_map_lookup_elem(gen, &zero, &g))
		return -errno;
	g = g + 1 ?: 2;
	slot = g & 1;
	if (bpf_map_update_elem(slots, &slot, cfg, BPF_ANY) ||
	    bpf_map_update_elem(gen, &zero, &g, BPF_ANY))
		return -errno;
	return 0;
}

/* Write the configuration of tc-profiles/@name into the loaded object. */
static inline int qos_test_profile(struct qos *skel, const char *name, struct qos_profile *prof,
				   struct qos_cfg *cfg)
{
	char path[512], err[512];

	snprintf(path, sizeof(path), "%s/tc-profiles/%s", QOS_SRCDIR, name);
	if (qos_profile_load(path, prof, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return -EINVAL;
	}
	qos_profile_fill_cfg(prof, cfg);
	return qos_test_cfg_put(skel, cfg);
}

/* Sum a per-CPU struct qos_ctr entry. */
static inline struct qos_ctr qos_test_ctr(int map_fd, uint32_t key)
{
	int ncpu = libbpf_num_possible_cpus();
	struct qos_ctr vals[ncpu], sum = {};
	int i;

	if (bpf_map_lookup_elem(map_fd, &key, vals))
		return (struct qos_ctr){ UINT64_MAX, UINT64_MAX };
	for (i = 0; i < ncpu; i++) {
		sum.packets += vals[i].packets;
		sum.bytes += vals[i].bytes;
	}
	return sum;
}

/* The hit counters of rule @id, summed over CPUs; all ones on an error. */
static inline struct qos_ctr qos_test_rule_hits(const struct qos_rule_maps *m, uint32_t id)
{
	struct qos_ctr sum;

	if (qos_rule_hits(m, id, &sum))
		return (struct qos_ctr){ UINT64_MAX, UINT64_MAX };
	return sum;
}

/* Class policer @idx's counter of @fam and @color in @map_fd
 * (qos_police_stats), summed over CPUs; all ones if it has none. */
static inline struct qos_ctr qos_test_police_ctr(int map_fd, uint32_t idx, uint32_t fam,
						 uint32_t color)
{
	int ncpu = libbpf_num_possible_cpus();
	struct qos_police_ctrs vals[ncpu];
	struct qos_ctr sum = {};
	int i;

	if (bpf_map_lookup_elem(map_fd, &idx, vals))
		return (struct qos_ctr){ UINT64_MAX, UINT64_MAX };
	for (i = 0; i < ncpu; i++) {
		sum.packets += vals[i].c[fam][color].packets;
		sum.bytes += vals[i].c[fam][color].bytes;
	}
	return sum;
}

static inline uint64_t qos_test_class_pkts(struct qos *skel, uint32_t dir, uint32_t cls,
					   uint32_t fam)
{
	uint64_t n = 0;
	int v;

	for (v = 0; v < QOS_V_MAX; v++)
		n += qos_test_ctr(bpf_map__fd(skel->maps.qos_stats),
				  qos_stats_key(dir, cls, fam, v)).packets;
	return n;
}

static inline uint64_t qos_test_unparsed_pkts(struct qos *skel, uint32_t dir, uint32_t reason)
{
	return qos_test_ctr(bpf_map__fd(skel->maps.qos_unparsed),
			    qos_unparsed_key(dir, reason)).packets;
}

/* Every packet a direction counted: classified, in any class, family and
 * verdict, plus unparsed for any reason. */
static inline uint64_t qos_test_total(struct qos *skel, uint32_t dir)
{
	uint64_t n = 0;
	uint32_t c, f, r;

	for (c = 0; c < QOS_MAX_CLASSES; c++)
		for (f = 0; f < QOS_FAM_MAX; f++)
			n += qos_test_class_pkts(skel, dir, c, f);
	for (r = 0; r < QOS_UNP_MAX; r++)
		n += qos_test_unparsed_pkts(skel, dir, r);
	return n;
}

#endif /* __QOS_SELFTEST_QOS_TEST_H */
