// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kernel memory of the maps bpf/lib/maps.h declares and bpfobj.c
 * creates, for `validate` and the dry run: kept next to the maps, since
 * it is their allocation in the kernel that it follows.
 */
#include <stddef.h>
#include <stdint.h>

#include "../bpf/qos_common.h"
#include "kernel/mapmem.h"

/*
 * The maps of bpf/lib/maps.h as the kernel (6.x) allocates them. An array
 * element is its value rounded up to 8 bytes; a per-CPU one is that on
 * every possible CPU plus an 8-byte pointer to it. A hash has 16-byte
 * buckets, a power of two of them; without preallocation each element is
 * a separate allocation of a 48-byte header, the key and the value each
 * rounded up to 8, and an 8-byte free-list node, from the kmalloc cache
 * that fits: 144 bytes from kmalloc-192 for a rule (bpftool's "memlock"
 * counts the 144, /proc/slabinfo shows the 192). Map headers (under 1 KiB
 * each) are left out.
 */
#define KERN_HTAB_BUCKET	16
#define KERN_HTAB_ELEM_HDR	48
#define KERN_LLIST_NODE		8
/* An mmap()able array's values are whole pages. */
#define KERN_PAGE		4096

static uint64_t round8(uint64_t n)
{
	return (n + 7) & ~7ULL;
}

/* kmalloc's size classes: powers of two from 8 bytes, and 96 and 192. */
static uint64_t kmalloc_size(uint64_t n)
{
	uint64_t s = 8;

	if (n > 64 && n <= 96)
		return 96;
	if (n > 128 && n <= 192)
		return 192;
	while (s < n)
		s <<= 1;
	return s;
}

static uint64_t array_bytes(uint64_t entries, size_t value)
{
	return entries * round8(value);
}

static uint64_t percpu_array_bytes(uint64_t entries, size_t value, int ncpus)
{
	return entries * (sizeof(void *) + round8(value) * ncpus);
}

static uint64_t buckets_bytes(uint64_t entries)
{
	uint64_t buckets = 1;

	while (buckets < entries)
		buckets <<= 1;
	return buckets * KERN_HTAB_BUCKET;
}

static uint64_t hash_bytes(uint64_t entries, size_t key, size_t value)
{
	return buckets_bytes(entries) +
	       entries * kmalloc_size(KERN_HTAB_ELEM_HDR + round8(key) + round8(value) +
				      KERN_LLIST_NODE);
}

uint64_t qos_mem_bytes(uint32_t rule_entries, int ncpus, int rows,
		       struct qos_profile_mem *mem)
{
	struct qos_profile_mem m;

	/* Two tables (IPv4 entries under a shorter key) with their entries'
	 * sum limited: the buckets of both, the elements of the larger. */
	m.rule_hash = hash_bytes(rule_entries, sizeof(struct qos_rule_key),
				 sizeof(struct qos_rule_val)) +
		      buckets_bytes(rule_entries);
	/* Hit counters: a row of the table's size per possible CPU id,
	 * holes in the possible mask included (qos_cpu_rows()). */
	m.rule_stats = array_bytes((uint64_t)rule_entries * rows, sizeof(struct qos_ctr));
	/* Every rule with a policer of its own, as a reservation has. */
	m.rule_police = hash_bytes(rule_entries, sizeof(uint32_t), sizeof(struct qos_rule_policer));
	m.counters = percpu_array_bytes(QOS_STATS_ENTRIES + QOS_UNPARSED_ENTRIES,
					sizeof(struct qos_ctr), ncpus) +
		     percpu_array_bytes(QOS_POLICER_RULE_FIRST, sizeof(struct qos_police_ctrs),
					ncpus);
	/* The configuration: its two slots, the generation (an mmap()able
	 * array: its header and its value a page each) and the meta. */
	m.other = array_bytes(2, QOS_CFG_DP_SIZE) + 2 * KERN_PAGE +
		  array_bytes(1, sizeof(struct qos_meta_rec)) +
		  array_bytes(QOS_POLICER_RULE_FIRST, sizeof(struct qos_policer));
	if (mem)
		*mem = m;
	return m.rule_hash + m.rule_stats + m.rule_police + m.counters + m.other;
}
