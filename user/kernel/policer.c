// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Policers in the kernel. There is no lock to write under: the data path
 * changes the words of st with compare-and-swap while a map update copies
 * the whole value. A policer is therefore written only when it changes, in
 * one update of configuration and buckets together; what a packet policed
 * during the copy can see is bounded (Documentation/policing.rst,
 * Reconfiguration).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel/policer.h"
#include "model/policer.h"
#include "model/rule.h"

/* The period of jiffies: the coarse clocks advance once per tick. 0 if
 * unknown, which keeps every policer on the exact clock. */
static uint64_t tick_ns(void)
{
	struct timespec ts;

	if (clock_getres(CLOCK_MONOTONIC_COARSE, &ts) || ts.tv_sec)
		return 0;
	return ts.tv_nsec;
}

/* Everything but the buckets. */
static bool same_config(const struct qos_policer *a, const struct qos_policer *b)
{
	return !memcmp(&a->tb, &b->tb, sizeof(a->tb)) && a->flags == b->flags &&
	       a->pre_yellow == b->pre_yellow && a->pre_red == b->pre_red &&
	       !memcmp(a->act, b->act, sizeof(a->act));
}

int qos_police_install(int fd, const struct qos_policer pol[QOS_MAX_CLASSES],
		       struct qos_policer saved[QOS_MAX_CLASSES])
{
	uint64_t tick = tick_ns();
	uint32_t id;

	memset(saved, 0, sizeof(*saved) * QOS_MAX_CLASSES);
	for (id = 1; id < QOS_MAX_CLASSES; id++)
		if (bpf_map_lookup_elem(fd, &id, &saved[id]))
			return -errno;

	for (id = 1; id < QOS_MAX_CLASSES; id++) {
		struct qos_policer v = pol[id];
		const struct qos_policer *old = &saved[id];

		if (v.tb.cir)
			tb_params_clock(&v.tb, tick);
		if (v.tb.cir && old->tb.cir) {
			if (same_config(&v, old))
				continue;
			/* Keep the tokens, cut to the new sizes. Packets
			 * policed between the read above and this write are
			 * not charged: microseconds of traffic, at apply
			 * only. */
			v.st = old->st;
			tb_reconfig(&v.st, &v.tb);
		} else if (!v.tb.cir && !old->tb.cir) {
			continue;
		}
		if (bpf_map_update_elem(fd, &id, &v, 0)) {
			int err = -errno;

			qos_police_restore(fd, saved);
			return err;
		}
	}
	return 0;
}

void qos_police_restore(int fd, const struct qos_policer saved[QOS_MAX_CLASSES])
{
	uint32_t id;

	for (id = 1; id < QOS_MAX_CLASSES; id++)
		bpf_map_update_elem(fd, &id, &saved[id], 0);
}

/* A rule's policer with burst auto holds a full frame at MTU 1500: the rule
 * table is written without the device's MTU at hand. At a jumbo MTU, give
 * rule policers a burst (Documentation/policing.rst). */
#define RULE_AUTO_FRAME	1514

int qos_police_rule_write(int fd, const struct qos_rule *r)
{
	uint64_t burst = r->police_burst ?: tb_auto_burst(r->police_bps, RULE_AUTO_FRAME);
	struct qos_rule_policer rp = {};
	struct qos_policer *pol = &rp.pol;

	if (tb_params_init(&pol->tb, TB_SRTCM, r->police_bps, burst, 0, 0))
		return -ERANGE;
	tb_params_clock(&pol->tb, tick_ns());
	/* A full bucket; the first packet claims the time since. */
	tb_state_init(&pol->tb, &pol->st, 0);
	pol->act[TB_GREEN].type = QOS_PA_PASS;
	pol->act[TB_YELLOW] = pol->act[TB_RED] = r->police_act;
	if (bpf_map_update_elem(fd, &r->policer, &rp, BPF_ANY))
		return -errno;
	return 0;
}

void qos_police_rule_clear(int fd, uint32_t idx)
{
	bpf_map_delete_elem(fd, &idx);
}

int qos_police_rule_read(int fd, struct qos_rule *r)
{
	struct qos_rule_policer rp;
	const struct qos_policer *pol = &rp.pol;

	if (bpf_map_lookup_elem(fd, &r->policer, &rp))
		return -errno;
	r->police_bps = pol->tb.cir;
	r->police_burst = pol->tb.cbs / TB_NBITS_PER_BYTE;
	/* As it was given: auto, so that the rule reads back the same. */
	if (r->police_burst == tb_auto_burst(r->police_bps, RULE_AUTO_FRAME))
		r->police_burst = 0;
	r->police_act = pol->act[TB_RED];
	return 0;
}

/* Rule policer @idx and its counters, shared by the CPUs. */
static int rule_police_read(const struct qos_progs *p, uint32_t idx, struct qos_police_report *r)
{
	struct qos_rule_policer rp;

	if (bpf_map_lookup_elem(p->map[QOS_MAP_RULE_POLS], &idx, &rp))
		return -errno;
	r->pol = rp.pol;
	memcpy(r->ctr, rp.ctrs.c, sizeof(r->ctr));
	return 0;
}

int qos_police_read(const struct qos_progs *p, uint32_t idx, struct qos_police_report *r)
{
	int ncpu = libbpf_num_possible_cpus();
	struct qos_police_ctrs *vals;
	int f, c, i, err = 0;

	memset(r, 0, sizeof(*r));
	r->idx = idx;
	if (idx >= QOS_POLICER_RULE_FIRST) {
		err = rule_police_read(p, idx, r);
		r->set = !err && r->pol.tb.cir != 0;
		return err;
	}
	if (ncpu < 0)
		return ncpu;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	if (bpf_map_lookup_elem(p->map[QOS_MAP_POLICERS], &idx, &r->pol) ||
	    bpf_map_lookup_elem(p->map[QOS_MAP_POLICE_STATS], &idx, vals)) {
		err = -errno;
		goto out;
	}
	r->set = r->pol.tb.cir != 0;
	for (i = 0; i < ncpu; i++)
		for (f = 0; f < QOS_FAM_MAX; f++)
			for (c = 0; c < TB_COLOR_MAX; c++) {
				r->ctr[f][c].packets += vals[i].c[f][c].packets;
				r->ctr[f][c].bytes += vals[i].c[f][c].bytes;
			}
out:
	free(vals);
	return err;
}
