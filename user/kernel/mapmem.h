/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Kernel memory of the maps an apply creates (kernel/mapmem.c). */
#ifndef __QOS_KERNEL_MAPMEM_H
#define __QOS_KERNEL_MAPMEM_H

#include <stdint.h>

/* Kernel memory of the maps an apply of a profile creates on one interface. */
struct qos_profile_mem {
	uint64_t rule_hash;	/* qos_rules with every entry in use */
	uint64_t rule_stats;	/* rule hit counters, a row per CPU id (all at creation) */
	uint64_t rule_police;	/* rule policers with their counters, every rule policed */
	uint64_t counters;	/* per-CPU class, unparsed and class policer counters */
	uint64_t other;		/* configuration (with the rule shapes), class policers */
};

/*
 * Estimate, in bytes, the kernel memory an apply takes on one interface
 * with a rule table of @rule_entries, @ncpus possible CPUs
 * (libbpf_num_possible_cpus(): per-CPU maps take a copy on each) and @rows
 * rows of hit counters (qos_cpu_rows(): the highest possible CPU id + 1):
 * its maps, the rule hash full and every rule policed (as reservations
 * are). Fills @mem with the parts when not NULL.
 */
uint64_t qos_mem_bytes(uint32_t rule_entries, int ncpus, int rows,
		       struct qos_profile_mem *mem);

#endif /* __QOS_KERNEL_MAPMEM_H */
