// SPDX-License-Identifier: GPL-2.0-only
/*
 * Per-packet cost of the ingress classifier through BPF_PROG_TEST_RUN, for
 * each packet shape, with 1, 1k, 64k and 1M rules per family installed by
 * the rule manager qosctl uses. Every packet matches one rule in the middle
 * of the table, so the numbers include the hit, the hit counter and the
 * mark; the profile's policers are left out (classification only). The
 * cost of test_run itself (an empty tc program) is printed apart, and each
 * row's cost at the most rules as a multiple of it. So is L, the cost of
 * one hash lookup on a 20-byte key (a reference program less the empty
 * one, measured in the same run), and the hit cost, the cost with rules
 * less DSCP-only classification of the same packets, as a multiple of L.
 *
 * Then the same with 5-tuple rules: each rule adds proto udp, a source port
 * and the destination port range 4096-8191 (one aligned block) to its
 * addresses, and the packets carry the ports, so the data path also walks
 * to the UDP header and reads the ports.
 *
 * Then, at the largest rule count, the price of a policer on the hit
 * class (see police_var), net of the unpoliced run and as a multiple of
 * the empty program; the variants take turns batch by batch. Then the
 * same with a policer of the hit rule's own, as a reservation has (a rule
 * policer, in the qos_rule_pols hash): each variant is installed as qosctl
 * installs a rule with a policer, and measured on every shape.
 *
 * Usage: bench_classifier [-r REPEAT] [-n RUNS] [-l LEVELS]
 * Each cell is the fastest of RUNS batches of REPEAT packets: on a shared
 * machine other work only ever adds time, so the minimum is the estimate
 * least disturbed by it. -l 2 stops after the first two rule counts.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "pkt.h"
#include "qos_test.h"
#include "kernel/bpfobj.h"
#include "kernel/rulemap.h"
#include "model/profile.h"
#include "qos.skel.h"

enum { S_V4, S_V6, S_V6EXT, S_6IN4, S_VLAN, S_MAX };

static const char *const shape_names[S_MAX] = {
	"ipv4", "ipv6", "ipv6+3 ext hdrs", "6in4", "vlan ipv4",
};

static const uint32_t levels[] = { 1, 1000, 65536, 1 << 20 };
#define NLEVELS		(sizeof(levels) / sizeof(levels[0]))
#define CAPACITY	((1 << 20) * 2 + 16)

static uint32_t cls_pip, cls_lbe;
static bool ports;		/* 5-tuple rules and packets with ports */

#define SPORT		40000
#define DPORT		5000

static void add_ports(struct qos_rule *r)
{
	if (!ports)
		return;
	r->proto = IPPROTO_UDP;
	r->sport_lo = r->sport_hi = SPORT;
	r->dport_lo = 4096;
	r->dport_hi = 8191;
}

static void v4_rule(struct qos_rule *r, uint32_t i)
{
	uint32_t s = htonl(0x0a000000 | i), d = htonl(0xc0000201);

	qos_rule_init(r);
	r->family = AF_INET;
	memcpy(r->src, &s, 4);
	memcpy(r->dst, &d, 4);
	r->src_len = r->dst_len = 32;
	r->has_src = r->has_dst = true;
	r->class_id = i & 1 ? cls_lbe : cls_pip;
	add_ports(r);
}

static void v6_rule(struct qos_rule *r, uint32_t i)
{
	uint32_t s = htonl(i);

	qos_rule_init(r);
	r->family = AF_INET6;
	inet_pton(AF_INET6, "2001:db8:100::", r->src);
	memcpy(r->src + 12, &s, 4);
	inet_pton(AF_INET6, "2001:db8:200::1", r->dst);
	r->src_len = r->dst_len = 128;
	r->has_src = r->has_dst = true;
	r->flowlabel = i & QOS_FLOWLABEL_MASK;
	r->fl_mask = QOS_FLOWLABEL_MASK;
	r->class_id = i & 1 ? cls_lbe : cls_pip;
	add_ports(r);
}

/* A UDP packet of @shape that matches rule @i of its family. */
static void build(struct pkt *p, int shape, uint32_t i)
{
	struct qos_rule r;
	size_t l3, l4;

	pkt_init(p);
	pkt_eth(p);
	if (shape == S_VLAN)
		pkt_vlan(p, ETH_P_8021Q, 100);
	l3 = p->len;
	if (shape == S_V4 || shape == S_VLAN) {
		struct iphdr *ip = pkt_ipv4(p, 0, IPPROTO_UDP, 0);

		v4_rule(&r, i);
		memcpy(&ip->saddr, r.src, 4);
		memcpy(&ip->daddr, r.dst, 4);
	} else {
		struct ipv6hdr *ip6;

		if (shape == S_6IN4)
			pkt_ipv4(p, 0, IPPROTO_IPV6, 0);
		v6_rule(&r, i);
		ip6 = pkt_ipv6(p, 0, r.flowlabel, IPPROTO_UDP);
		memcpy(&ip6->saddr, r.src, 16);
		memcpy(&ip6->daddr, r.dst, 16);
		if (shape == S_V6EXT) {
			pkt_ipv6_ext(p, IPPROTO_HOPOPTS, 8, 0);
			pkt_ipv6_ext(p, IPPROTO_DSTOPTS, 8, 0);
			pkt_ipv6_ext(p, IPPROTO_ROUTING, 24, 0);
		}
	}
	l4 = p->len;
	pkt_payload(p, 8 + 64);
	if (ports) {
		uint16_t pp[2] = { htons(SPORT), htons(DPORT) };

		memcpy(p->buf + l4, pp, sizeof(pp));
	}
	pkt_end(p, l3);
}

/* ns per packet of one batch of @repeat runs. The batch is timed here:
 * test_run's own duration is rounded to whole ns. */
static double batch(int prog, const struct pkt *p, uint32_t repeat, uint32_t *cls)
{
	struct __sk_buff ctx = {};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = p->buf, .data_size_in = p->len,
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .ctx_out = &ctx,
		    .ctx_size_out = sizeof(ctx), .repeat = repeat);
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	if (bpf_prog_test_run_opts(prog, &opts) || (int)opts.retval != TC_ACT_UNSPEC) {
		fprintf(stderr, "bench: test_run failed: %s\n", strerror(errno));
		exit(1);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (cls)
		*cls = (ctx.mark >> 16) & 0xf;
	return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / repeat;
}

/* The fastest of @runs batches per shape, the shapes taking turns so that
 * a burst of other work on the machine does not land on one shape only. */
static void measure(int prog, struct pkt *pkts, uint32_t repeat, int runs, double *ns,
		    uint32_t *cls)
{
	int r, s;

	for (s = 0; s < S_MAX; s++)
		ns[s] = 1e9;
	for (r = 0; r < runs; r++) {
		for (s = 0; s < S_MAX; s++) {
			double t = batch(prog, &pkts[s], repeat, cls ? &cls[s] : NULL);

			if (t < ns[s])
				ns[s] = t;
		}
	}
}

/* A tc program that only returns: what test_run costs by itself. */
static int empty_prog(void)
{
	static const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = TC_ACT_UNSPEC },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "empty", "GPL", insns, 2, NULL);
}

/*
 * The reference for one lookup: the empty program plus exactly one
 * bpf_map_lookup_elem() on a hash with a 20-byte key (as qos_rules4's,
 * created as it is, without preallocation), the key present. Its cost less
 * the empty program's is L, the unit the rule hit is priced in.
 */
static const uint32_t ref_key[5] = { 0x00002020, 0, 0, 0x0100000a, 0x010200c0 };

#define ST_KEY(i) { .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = BPF_REG_10,	\
		    .off = -20 + 4 * (i), .imm = (int32_t)ref_key[i] }

/* The program: the key on the stack, one lookup in @map_fd, TC_ACT_SHOT on
 * a miss (which batch() reports). */
static int lookup_prog_load(int map_fd)
{
	const struct bpf_insn insns[] = {
		ST_KEY(0), ST_KEY(1), ST_KEY(2), ST_KEY(3), ST_KEY(4),
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_2,
		  .src_reg = BPF_REG_10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_2, .imm = -20 },
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1,
		  .src_reg = BPF_PSEUDO_MAP_FD, .imm = map_fd },
		{ 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_1,
		  .src_reg = BPF_REG_0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = TC_ACT_UNSPEC },
		{ .code = BPF_JMP | BPF_JNE | BPF_K, .dst_reg = BPF_REG_1, .off = 1 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = TC_ACT_SHOT },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "lookup_ref", "GPL", insns,
			     sizeof(insns) / sizeof(insns[0]), NULL);
}

static int lookup_prog(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, mopts, .map_flags = BPF_F_NO_PREALLOC);
	uint64_t val = 0;
	int fd, prog;

	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "lookup_ref", sizeof(ref_key), sizeof(val),
			    CAPACITY, &mopts);
	if (fd < 0)
		return -1;
	prog = bpf_map_update_elem(fd, ref_key, &val, BPF_NOEXIST) ? -1 : lookup_prog_load(fd);
	/* The program holds the map. */
	close(fd);
	return prog;
}

/* The empty program and the one-lookup reference, taking turns batch by
 * batch; each stays the fastest it has been across calls. */
static void measure_refs(int empty, int ref, const struct pkt *p, uint32_t repeat, int runs,
			 double *empty_ns, double *ref_ns)
{
	int r;

	for (r = 0; r < runs; r++) {
		double e = batch(empty, p, repeat, NULL), l = batch(ref, p, repeat, NULL);

		if (e < *empty_ns)
			*empty_ns = e;
		if (l < *ref_ns)
			*ref_ns = l;
	}
}

/* A rule hit's cost over DSCP-only (@none: the same packets, no rules), as
 * a multiple of L, per shape and rule count, and its spread over the rule
 * counts: (most - least) / least. */
static int print_hit_cost(const char *title, double none[S_MAX], double ns[NLEVELS][S_MAX],
			  int nlevels, double l)
{
	int s, c, ok = 1;

	printf("%s: hit over DSCP-only, x L\n%-18s", title, "rules per family");
	for (c = 0; c < nlevels; c++)
		printf(" %9u", levels[c]);
	printf(" %10s\n", "spread");
	for (s = 0; s < S_MAX; s++) {
		double lo = 1e9, hi = 0;

		printf("%-18s", shape_names[s]);
		for (c = 0; c < nlevels; c++) {
			double x = (ns[c][s] - none[s]) / l;

			printf(" %9.2f", x);
			lo = x < lo ? x : lo;
			hi = x > hi ? x : hi;
		}
		printf(" %+9.1f%%\n", (hi - lo) / lo * 100);
		if (s == S_V4 || s == S_V6)
			ok &= hi <= 1.5 && hi - lo <= 0.1 * lo;
	}
	printf("\n");
	return ok;
}

/* L, and the hit costs of exact (@ns over @none) and 5-tuple rules (@pns
 * over @pnone) in it, against the targets. */
static void print_hits(double empty_ns, double ref_ns, double none[S_MAX],
		       double ns[NLEVELS][S_MAX], double pnone[S_MAX], double pns[NLEVELS][S_MAX],
		       int nlevels)
{
	double l = ref_ns - empty_ns;
	int ok = 1;

	printf("\none lookup (hash, 20-byte key present): %.1f ns; empty program %.1f ns;\n"
	       "L = lookup - empty = %.1f ns\n\n", ref_ns, empty_ns, l);
	ok &= print_hit_cost("exact rules", none, ns, nlevels, l);
	ok &= print_hit_cost("5-tuple rules", pnone, pns, nlevels, l);
	printf("targets: hit <= 1.5 L, ipv4 and ipv6, spread over rule counts <= 10%%: %s\n",
	       ok ? "met" : "NOT met");
}

/*
 * Policer variants on the hit class. 100 Gbit/s is far above what one CPU
 * offers here, so every packet is green; 1 kbit/s makes every packet but
 * the first ones red (red passes, so the verdict stays TC_ACT_UNSPEC).
 * The burst decides the clock (tb_params_clock()): jiffies for a bucket of
 * ten ticks or more (500 MB at 100 Gbit/s is 40 ms, a frame at 1 kbit/s
 * 12 s), CLOCK_MONOTONIC below (the auto burst at 100 Gbit/s is 10 ms).
 */
enum { P_NONE, P_GREEN_TICK, P_RED_TICK, P_GREEN_EXACT, P_RED_EXACT, P_MAX };

static const struct {
	const char *name;
	uint64_t rate, burst;	/* bit/s, bytes (0 = auto) */
} police_var[P_MAX] = {
	[P_NONE] = { "hit class, no policer" },
	[P_GREEN_TICK] = { "green, jiffies", 100000000000ULL, 500000000 },
	[P_RED_TICK] = { "red, jiffies", 1000, 1514 },
	[P_GREEN_EXACT] = { "green, ktime", 100000000000ULL, 0 },
	[P_RED_EXACT] = { "red, ktime", 1000, 1 },
};

/* Police class @cls as variant @v with a full bucket; P_NONE leaves the
 * class unpoliced. */
static int set_police(struct qos *skel, int pol_fd, struct qos_cfg *cfg, uint32_t cls, int v)
{
	uint64_t rate = police_var[v].rate, burst = police_var[v].burst;
	struct qos_policer pol = {};
	struct timespec ts;

	if (!burst && rate)
		burst = tb_auto_burst(rate, 1514);
	if (v != P_NONE && tb_params_init(&pol.tb, TB_SRTCM, rate, burst, 0, 0))
		return -EINVAL;
	/* The clock qosctl would choose. */
	clock_getres(CLOCK_MONOTONIC_COARSE, &ts);
	if (v != P_NONE)
		tb_params_clock(&pol.tb, ts.tv_nsec);
	tb_state_init(&pol.tb, &pol.st, 0);
	cfg->class_policer[cls] = v == P_NONE ? 0 : cls;
	if (bpf_map_update_elem(pol_fd, &cls, &pol, 0))
		return -errno;
	return qos_test_cfg_put(skel, cfg);
}

/* The fastest of @runs batches per variant and shape, variants and shapes
 * taking turns. */
static int measure_police(int prog, struct qos *skel, int pol_fd, struct qos_cfg *cfg,
			  uint32_t cls, struct pkt *pkts, uint32_t repeat, int runs, double ns[P_MAX][S_MAX])
{
	int r, v, s;

	for (v = 0; v < P_MAX; v++)
		for (s = 0; s < S_MAX; s++)
			ns[v][s] = 1e9;
	for (r = 0; r < runs; r++) {
		for (v = 0; v < P_MAX; v++) {
			for (s = 0; s < S_MAX; s++) {
				double t;

				if (set_police(skel, pol_fd, cfg, cls, v))
					return -1;
				t = batch(prog, &pkts[s], repeat, NULL);
				if (t < ns[v][s])
					ns[v][s] = t;
			}
		}
	}
	return set_police(skel, pol_fd, cfg, cls, P_NONE);
}

/* The rules @i of @cur (IPv4 and IPv6) replaced, as qosctl replaces a
 * rule, by ones policed as variant @v, red passing; P_NONE: unpoliced. */
static int police_rules(struct qos *skel, struct qos_rule_maps *m, struct qos_rules *cur,
			struct qos_cfg *cfg, uint32_t i, int v)
{
	const struct qos_police_action pass = { QOS_PA_PASS, 0 };
	struct qos_rules next = {};
	char err[512];
	size_t k;
	int ret = 0;

	for (k = 0; k < cur->n && !ret; k++) {
		struct qos_rule r = cur->r[k];

		if (k / 2 == i) {
			r.id = r.policer = 0;
			r.police_bps = police_var[v].rate;
			r.police_burst = police_var[v].burst;
			r.police_act = pass;
		}
		ret = qos_rules_add(&next, &r);
	}
	ret = ret ?: qos_rules_stage(m, cur, &next, &cfg->rs, &cfg->rules, err, sizeof(err));
	ret = ret ?: qos_test_cfg_put(skel, cfg);
	if (ret) {
		qos_rules_free(&next);
		return ret;
	}
	qos_rules_retire(m, cur, &next);
	qos_rules_free(cur);
	*cur = next;
	return 0;
}

/* measure_police() with a policer of the hit rules' own. */
static int measure_rule_police(int prog, struct qos *skel, struct qos_rule_maps *m,
			       struct qos_rules *cur, struct qos_cfg *cfg, uint32_t hit,
			       struct pkt *pkts, uint32_t repeat, int runs, double ns[P_MAX][S_MAX])
{
	int r, v, s;

	for (v = 0; v < P_MAX; v++)
		for (s = 0; s < S_MAX; s++)
			ns[v][s] = 1e9;
	for (r = 0; r < runs; r++) {
		for (v = 0; v < P_MAX; v++) {
			if (police_rules(skel, m, cur, cfg, hit, v))
				return -1;
			for (s = 0; s < S_MAX; s++) {
				double t = batch(prog, &pkts[s], repeat, NULL);

				if (t < ns[v][s])
					ns[v][s] = t;
			}
		}
	}
	return police_rules(skel, m, cur, cfg, hit, P_NONE);
}

static int grow(struct qos *skel, struct qos_rule_maps *m, struct qos_rules *cur,
		struct qos_cfg *cfg, uint32_t n)
{
	struct qos_rules next = {};
	struct qos_rule r;
	char err[512];
	uint32_t i;
	int ret = 0;

	for (i = 0; i < cur->n && !ret; i++)
		ret = qos_rules_add(&next, &cur->r[i]);
	for (i = cur->n / 2; i < n && !ret; i++) {
		v4_rule(&r, i);
		ret = qos_rules_add(&next, &r);
		v6_rule(&r, i);
		ret = ret ?: qos_rules_add(&next, &r);
	}
	ret = ret ?: qos_rules_stage(m, cur, &next, &cfg->rs, &cfg->rules, err, sizeof(err));
	if (!ret && qos_test_cfg_put(skel, cfg))
		ret = -EIO;
	if (ret) {
		fprintf(stderr, "bench: installing rules: %s\n", err);
		qos_rules_free(&next);
		return ret;
	}
	qos_rules_retire(m, cur, &next);
	qos_rules_free(cur);
	*cur = next;
	return 0;
}

/* One table: ns per packet per shape and rule count, growth, the ratio of
 * the most rules to the empty program, IPv6 against IPv4. */
static int print_table(const char *title, double none[S_MAX], double ns[NLEVELS][S_MAX],
		       int nlevels, double empty)
{
	int s, c, ok = 1;

	printf("%s\n%-18s %9s", title, "rules per family", "none");
	for (c = 0; c < nlevels; c++)
		printf(" %9u", levels[c]);
	printf(" %10s %9s\n", "growth", "x empty");
	for (s = 0; s < S_MAX; s++) {
		double g = (ns[nlevels - 1][s] / ns[0][s] - 1) * 100;

		printf("%-18s %9.1f", shape_names[s], none[s]);
		for (c = 0; c < nlevels; c++) {
			printf(" %9.1f", ns[c][s]);
			ok &= ns[c][s] < 40;
		}
		printf(" %+9.1f%% %9.2f\n", g, ns[nlevels - 1][s] / empty);
		ok &= g < 15;
	}
	printf("%-18s %9.2f", "ipv6/ipv4", none[S_V6] / none[S_V4]);
	for (c = 0; c < nlevels; c++) {
		printf(" %9.2f", ns[c][S_V6] / ns[c][S_V4]);
		ok &= ns[c][S_V6] / ns[c][S_V4] <= 1.15;
	}
	printf("\n\n");
	return ok;
}

/* Grow the rule table level by level, measuring every shape at each. */
static int run_levels(struct qos *skel, struct qos_rule_maps *m, struct qos_cfg *cfg, int prog,
		      struct pkt *pkts, uint32_t repeat, int runs, int nlevels,
		      double ns[NLEVELS][S_MAX], double pol[P_MAX][S_MAX], double rpol[P_MAX][S_MAX])
{
	struct qos_rules cur = {}, none = {};
	uint32_t cls[S_MAX];
	char err[512];
	int s, c;

	for (c = 0; c < nlevels; c++) {
		uint32_t hit = levels[c] / 2;

		if (grow(skel, m, &cur, cfg, levels[c]))
			return 1;
		for (s = 0; s < S_MAX; s++)
			build(&pkts[s], s, hit);
		measure(prog, pkts, repeat, runs, ns[c], cls);
		for (s = 0; s < S_MAX; s++) {
			if (cls[s] != (hit & 1 ? cls_lbe : cls_pip)) {
				fprintf(stderr, "bench: %s did not hit its rule (class %u)\n",
					shape_names[s], cls[s]);
				return 1;
			}
		}
	}
	/* With pol, a policer on the hit class, the largest table in place. */
	if (pol && measure_police(prog, skel, bpf_map__fd(skel->maps.qos_policers), cfg, cls_pip,
				  pkts, repeat, runs, pol)) {
		fprintf(stderr, "bench: installing a policer: %s\n", strerror(errno));
		return 1;
	}
	if (rpol && measure_rule_police(prog, skel, m, &cur, cfg, levels[nlevels - 1] / 2, pkts,
					repeat, runs, rpol)) {
		fprintf(stderr, "bench: installing a rule policer: %s\n", strerror(errno));
		return 1;
	}
	/* Empty the table for the next run. */
	if (qos_rules_stage(m, &cur, &none, &cfg->rs, &cfg->rules, err, sizeof(err)) ||
	    qos_test_cfg_put(skel, cfg))
		return 1;
	qos_rules_retire(m, &cur, &none);
	qos_rules_free(&cur);
	return 0;
}

/*
 * The BPF object, and in @cfg pip-20pct's configuration in it, without
 * its policers: this measures the classifier alone (the token bucket, a
 * spin lock and a clock read, is the forwarding benchmark's qosctl+police
 * row, not this one).
 */
static struct qos *load(struct qos_cfg *cfg)
{
	static struct qos_profile prof;
	struct qos *skel;
	char err[512];
	unsigned int i;

	skel = qos__open();
	if (!skel || qos_rule_maps_size(skel, CAPACITY) || qos__load(skel)) {
		fprintf(stderr, "bench: loading the BPF object: %s (root?)\n", strerror(errno));
		return NULL;
	}
	if (qos_profile_load(QOS_SRCDIR "/tc-profiles/pip-20pct", &prof, err, sizeof(err))) {
		fprintf(stderr, "bench: %s\n", err);
		qos__destroy(skel);
		return NULL;
	}
	cls_pip = qos_profile_class(&prof, "pip")->id;
	cls_lbe = qos_profile_class(&prof, "lbe")->id;
	for (i = 0; i < prof.nclasses; i++)
		prof.classes[i].police.set = false;
	qos_profile_fill_cfg(&prof, cfg);
	qos_test_cfg_put(skel, cfg);
	return skel;
}

/* The policer table: ns per packet per variant and shape, with @rules
 * rules per family, and the net cost against the unpoliced row. */
static void print_police(const char *what, double pol[P_MAX][S_MAX], unsigned int rules,
			 double empty_ns)
{
	int s, c;

	printf("\npolicer on the hit %s, %u rules per family: ns per packet, and net =\n"
	       "policed - unpoliced, also as a multiple of the empty program (%.1f ns)\n\n",
	       what, rules, empty_ns);
	printf("%-26s", "");
	for (s = 0; s < S_MAX; s++)
		printf(" %9.9s", shape_names[s]);
	printf(" %9s %9s\n", "mean net", "x empty");
	for (c = 0; c < P_MAX; c++) {
		double net = 0;

		printf("%-26s", police_var[c].name);
		for (s = 0; s < S_MAX; s++) {
			printf(" %9.1f", pol[c][s]);
			net += (pol[c][s] - pol[P_NONE][s]) / S_MAX;
		}
		if (c == P_NONE)
			printf("\n");
		else
			printf(" %9.1f %9.2f\n", net, net / empty_ns);
	}
}

int main(int argc, char **argv)
{
	static double ns[NLEVELS][S_MAX], pns[NLEVELS][S_MAX];
	double none[S_MAX], pnone[S_MAX], base[S_MAX], pol[P_MAX][S_MAX], rpol[P_MAX][S_MAX];
	struct qos_rule_maps m;
	struct qos_cfg cfg;
	struct qos *skel;
	uint32_t repeat = 1000000;
	int runs = 7, nlevels = NLEVELS, prog, empty, ref, s, c, ok = 1;
	double empty_ns = 1e9, ref_ns = 1e9;
	static struct pkt pkts[S_MAX];

	while ((c = getopt(argc, argv, "r:n:l:")) != -1) {
		if (c == 'r')
			repeat = strtoul(optarg, NULL, 0);
		else if (c == 'n')
			runs = atoi(optarg);
		else if (c == 'l')
			nlevels = atoi(optarg);
		else
			return 2;
	}
	if (runs < 1 || runs > 32 || !repeat || nlevels < 1 || nlevels > (int)NLEVELS) {
		fprintf(stderr, "usage: bench_classifier [-r REPEAT] [-n RUNS 1-32] [-l LEVELS 1-%zu]\n",
			NLEVELS);
		return 2;
	}

	skel = load(&cfg);
	if (!skel)
		return 1;
	m = qos_test_rule_maps(skel);
	prog = bpf_program__fd(skel->progs.qos_ingress);
	empty = empty_prog();
	if (empty < 0) {
		fprintf(stderr, "bench: loading an empty program: %s\n", strerror(errno));
		return 1;
	}

	ref = lookup_prog();
	if (ref < 0) {
		fprintf(stderr, "bench: loading the lookup reference: %s\n", strerror(errno));
		return 1;
	}
	for (s = 0; s < S_MAX; s++)
		build(&pkts[s], S_V4, 0);
	measure_refs(empty, ref, &pkts[0], repeat, runs, &empty_ns, &ref_ns);
	measure(empty, pkts, repeat, runs, base, NULL);
	for (s = 0; s < S_MAX; s++)
		build(&pkts[s], s, 0);
	measure(prog, pkts, repeat, runs, none, NULL);
	if (run_levels(skel, &m, &cfg, prog, pkts, repeat, runs, nlevels, ns, pol, rpol))
		return 1;
	/* 5-tuple rules: "none" is the program with the packets' ports and
	 * no rules. */
	ports = true;
	for (s = 0; s < S_MAX; s++)
		build(&pkts[s], s, 0);
	measure(prog, pkts, repeat, runs, pnone, NULL);
	if (run_levels(skel, &m, &cfg, prog, pkts, repeat, runs, nlevels, pns, NULL, NULL))
		return 1;

	build(&pkts[0], S_V4, 0);
	measure_refs(empty, ref, &pkts[0], repeat, runs, &empty_ns, &ref_ns);

	printf("qos_ingress, ns per packet through BPF_PROG_TEST_RUN (fastest of %d x %u)\n",
	       runs, repeat);
	printf("test_run overhead (empty program): %.1f ns, included below\n\n", base[0]);
	ok &= print_table("exact rules (addresses, flow label)", none, ns, nlevels, base[0]);
	ok &= print_table("5-tuple rules (addresses, flow label, udp, sport, dport 4096-8191)",
			  pnone, pns, nlevels, base[0]);
	printf("targets: < 40 ns every shape, ipv6/ipv4 <= 1.15, < 15%% growth 1 -> 1M: %s\n",
	       ok ? "met" : "NOT met");
	print_hits(empty_ns, ref_ns, none, ns, pnone, pns, nlevels);

	print_police("class", pol, levels[nlevels - 1], base[0]);
	print_police("rule (its own policer)", rpol, levels[nlevels - 1], base[0]);
	qos__destroy(skel);
	return 0;
}
