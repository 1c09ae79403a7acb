// SPDX-License-Identifier: GPL-2.0-only
/*
 * Classification rules end to end below the CLI: rules parsed and installed
 * by the same library qosctl uses (user/rules.c), packets through the
 * programs with bpf_prog_test_run_opts(). Covers IPv6 flow label exact and
 * masked, the IPv6 3-tuple, IPv4 and IPv6 prefixes, family-less protocol
 * rules, every overlap rule (priority, then specificity, then age), 6in4 and
 * tagged frames, DSCP rewrite (checksum, ECN and flow label), per-rule hit
 * counters, live changes without reloading, re-applies that keep 3- and
 * 5-tuple rules of both families, the limits, profile [rule]
 * sections, and a million rules. Ports: TCP, UDP, ICMP and ICMPv6 in both
 * families, range edges, IPv4 options, IPv6 extension headers, first and
 * later fragments, tags and 6in4. Rules with a policer of their own.
 */
#include "cpus.h"	/* first: _GNU_SOURCE */
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "pkt.h"
#include "qos_test.h"
#include "kernel/rulemap.h"

enum shape { V4, V6, V6_VLAN, V4_QINQ, V6IN4 };

struct pspec {
	enum shape shape;
	const char *src;	/* NULL: the builder's default address */
	const char *dst;
	uint32_t fl;
	uint8_t dscp;
	uint8_t proto;
	uint16_t sport;		/* written at the start of the L4 header */
	uint16_t dport;
	uint16_t frag;		/* IPv4 frag_off / IPv6 Fragment header offset|M */
	bool ext;		/* IPv6: Hop-by-Hop, Destination Options, Routing */
};

static void build(struct pkt *p, const struct pspec *s)
{
	bool v6 = s->shape != V4 && s->shape != V4_QINQ;
	uint8_t tos = s->dscp << 2 | 1;	/* ECT(1) */
	size_t l3, l4;
	uint8_t *a;

	pkt_init(p);
	pkt_eth(p);
	if (s->shape == V4_QINQ)
		pkt_vlan(p, ETH_P_8021AD, 5);
	if (s->shape == V6_VLAN || s->shape == V4_QINQ)
		pkt_vlan(p, ETH_P_8021Q, 6);
	l3 = p->len;
	if (s->shape == V6IN4)
		pkt_ipv4(p, 0, IPPROTO_IPV6, 0);
	if (v6) {
		struct ipv6hdr *ip6 = pkt_ipv6(p, tos, s->fl, s->proto);

		a = (uint8_t *)&ip6->saddr;
		if (s->ext) {
			pkt_ipv6_ext(p, IPPROTO_HOPOPTS, 8, 0);
			pkt_ipv6_ext(p, IPPROTO_DSTOPTS, 16, 0);
			pkt_ipv6_ext(p, IPPROTO_ROUTING, 24, 0);
		}
		if (s->frag)
			pkt_ipv6_ext(p, IPPROTO_FRAGMENT, 8, s->frag);
	} else {
		struct iphdr *ip = pkt_ipv4(p, tos, s->proto, 8);

		a = (uint8_t *)&ip->saddr;
		ip->frag_off = htons(s->frag);
	}
	if (s->src)
		inet_pton(v6 ? AF_INET6 : AF_INET, s->src, a);
	if (s->dst)
		inet_pton(v6 ? AF_INET6 : AF_INET, s->dst, a + (v6 ? 16 : 4));
	l4 = p->len;
	pkt_payload(p, 40);
	if (s->sport || s->dport) {
		uint16_t ports[2] = { htons(s->sport), htons(s->dport) };

		memcpy(p->buf + l4, ports, sizeof(ports));
	}
	pkt_end(p, l3);
}

/* "KEY VALUE ..." into a rule, as qosctl's command line would. */
static int rule_parse(const char *words, const struct qos_profile *prof, struct qos_rule *r)
{
	char buf[512], err[256], *k, *v, *save = NULL;
	const struct qos_class_spec *cl;
	const char *key;

	qos_rule_init(r);
	snprintf(buf, sizeof(buf), "%s", words);
	for (k = strtok_r(buf, " ", &save); k; k = strtok_r(NULL, " ", &save)) {
		v = strtok_r(NULL, " ", &save);
		if (!v || qos_rule_set(r, k, v, err, sizeof(err))) {
			fprintf(stderr, "%s: %s: %s\n", words, k, v ? err : "no value");
			return -EINVAL;
		}
	}
	if (qos_rule_check(r, &key, err, sizeof(err))) {
		fprintf(stderr, "%s: %s: %s\n", words, key, err);
		return -EINVAL;
	}
	cl = qos_profile_class(prof, r->class_name);
	if (!cl)
		return -ENOENT;
	r->class_id = cl->id;
	if (r->police_act.type == QOS_PA_DEMOTE) {
		cl = qos_profile_class(prof, r->police_demote);
		if (!cl)
			return -ENOENT;
		r->police_act.arg = cl->id;
	}
	return 0;
}

FIXTURE(rules)
{
	struct qos *skel;
	struct qos_profile prof;
	struct qos_cfg cfg;
	struct qos_rule_maps m;
	struct qos_rules cur;
	int prog[QOS_DIR_MAX];
};

static void fixture_init(struct __test_metadata *_metadata, FIXTURE_DATA(rules) *self,
			 uint32_t entries)
{
	self->skel = qos_test_load(entries);
	ASSERT_NE(NULL, self->skel) TH_LOG("loading the BPF object: %s", strerror(errno));
	self->prog[QOS_DIR_INGRESS] = bpf_program__fd(self->skel->progs.qos_ingress);
	self->prog[QOS_DIR_EGRESS] = bpf_program__fd(self->skel->progs.qos_egress);
	ASSERT_EQ(0, qos_test_profile(self->skel, "pip-20pct", &self->prof, &self->cfg));
	self->m = qos_test_rule_maps(self->skel);
}

FIXTURE_SETUP(rules)
{
	fixture_init(_metadata, self, 0);
}

FIXTURE_TEARDOWN(rules)
{
	qos_rules_free(&self->cur);
	qos_profile_free(&self->prof);
	qos__destroy(self->skel);
}

/* Install @next over the current rules as the installer does: stage the
 * entries, swap in a configuration with the new shapes, retire the rest. */
static int apply_set(FIXTURE_DATA(rules) *self, struct qos_rules *next, char *err, size_t len)
{
	int ret;

	ret = qos_rules_stage(&self->m, &self->cur, next, &self->cfg.rs, &self->cfg.rules, err,
			      len);
	ret = ret ?: qos_test_cfg_put(self->skel, &self->cfg);
	if (!ret)
		qos_rules_retire(&self->m, &self->cur, next);
	return ret;
}

/* Make @next the installed rule set; @next becomes the current one. */
static int commit(FIXTURE_DATA(rules) *self, struct qos_rules *next)
{
	char err[512];
	int ret;

	ret = apply_set(self, next, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "commit: %s\n", err);
		return ret;
	}
	qos_rules_free(&self->cur);
	self->cur = *next;
	memset(next, 0, sizeof(*next));
	return 0;
}

static int install(FIXTURE_DATA(rules) *self, const char *const *words, size_t n)
{
	struct qos_rules next = {};
	struct qos_rule r;
	size_t i;
	int ret = 0;

	for (i = 0; i < self->cur.n && !ret; i++)
		ret = qos_rules_add(&next, &self->cur.r[i]);
	for (i = 0; i < n && !ret; i++) {
		ret = rule_parse(words[i], &self->prof, &r);
		ret = ret ?: qos_rules_add(&next, &r);
	}
	ret = ret ?: commit(self, &next);
	qos_rules_free(&next);
	return ret;
}

static const struct qos_rule *rule_named(FIXTURE_DATA(rules) *self, const char *name)
{
	size_t i;

	for (i = 0; i < self->cur.n; i++)
		if (!strcmp(self->cur.r[i].name, name))
			return &self->cur.r[i];
	return NULL;
}

static uint64_t hits(FIXTURE_DATA(rules) *self, const char *name)
{
	const struct qos_rule *r = rule_named(self, name);

	return r ? qos_test_rule_hits(&self->m, r->id).packets : UINT64_MAX;
}

/* Ingress class of @s (from the mark). */
static uint32_t classify(FIXTURE_DATA(rules) *self, const struct pspec *s)
{
	static struct run_result r;
	static struct pkt p;

	build(&p, s);
	pkt_run(self->prog[QOS_DIR_INGRESS], &p, 0, &r);
	if (r.err || r.retval != TC_ACT_UNSPEC)
		return UINT32_MAX;
	return (r.ctx.mark & MARK_MASK) >> MARK_SHIFT;
}

static const char *const table_rules[] = {
	"name fl-exact flowlabel 0x12345 class pip",
	"name fl-masked flowlabel 0x54000/0xff000 class lbe",
	"name v6-3tuple src 2001:db8:a::/48 dst 2001:db8:b::1/128 flowlabel 0x777 class pip",
	"name v6-src src 2001:db8:c::/64 class lbe",
	"name v6-dst dst 2001:db8:d::/56 class pip",
	"name v4-src src 10.9.0.0/16 class lbe",
	"name v4-dst dst 192.0.2.0/24 class pip",
	"name v4-both src 10.8.0.0/16 dst 10.7.0.0/16 class lbe",
	/* priority decides */
	"name ovl-wide src 2001:db8:e::/48 priority 50 class lbe",
	"name ovl-narrow src 2001:db8:e:1::/64 priority 60 class pip",
	/* same priority: the longer match */
	"name spec-short src 2001:db8:f::/48 class lbe",
	"name spec-long src 2001:db8:f::/48 flowlabel 0xabc class pip",
	/* same priority and length: the older rule */
	"name age-old src 2001:db8:10::/64 class lbe",
	"name age-new dst 2001:db8:11::/64 class pip",
	"name v4-prio src 10.6.0.0/16 priority 10 class pip",
	"name v4-long src 10.6.1.0/24 class lbe",
	/* no family: both */
	"name any-udp proto udp priority 1000 class lbe",
};

static const struct rcase {
	const char *name;
	struct pspec pkt;
	uint32_t cls;
	const char *rule;	/* the rule that must hit, NULL for none */
	uint32_t fam;
} table_cases[] = {
	{ "flow label exact", { V6, .fl = 0x12345, .proto = 6 }, CLS_PIP, "fl-exact", 1 },
	{ "flow label off by one", { V6, .fl = 0x12344, .proto = 6 }, CLS_BE, NULL, 1 },
	{ "flow label masked", { V6, .fl = 0x54abc, .proto = 6 }, CLS_LBE, "fl-masked", 1 },
	{ "flow label outside mask", { V6, .fl = 0x55abc, .proto = 6 }, CLS_BE, NULL, 1 },
	{ "3-tuple", { V6, "2001:db8:a:5::9", "2001:db8:b::1", 0x777, .proto = 6 }, CLS_PIP,
	  "v6-3tuple", 1 },
	{ "3-tuple, other label", { V6, "2001:db8:a:5::9", "2001:db8:b::1", 0x778, .proto = 6 },
	  CLS_BE, NULL, 1 },
	{ "3-tuple, other dst", { V6, "2001:db8:a:5::9", "2001:db8:b::2", 0x777, .proto = 6 },
	  CLS_BE, NULL, 1 },
	{ "3-tuple, tagged", { V6_VLAN, "2001:db8:a::1", "2001:db8:b::1", 0x777, .proto = 6 },
	  CLS_PIP, "v6-3tuple", 1 },
	{ "ipv6 src prefix", { V6, "2001:db8:c::5", .proto = 6 }, CLS_LBE, "v6-src", 1 },
	{ "ipv6 src outside", { V6, "2001:db8:c:1::5", .proto = 6 }, CLS_BE, NULL, 1 },
	{ "ipv6 dst prefix", { V6, NULL, "2001:db8:d:ff::1", .proto = 6 }, CLS_PIP, "v6-dst", 1 },
	{ "ipv6 dst outside", { V6, NULL, "2001:db8:d:100::1", .proto = 6 }, CLS_BE, NULL, 1 },
	{ "rule before dscp", { V6, "2001:db8:c::5", .dscp = 46, .proto = 6 }, CLS_LBE, "v6-src",
	  1 },
	{ "dscp without rule", { V6, .dscp = 46, .proto = 6 }, CLS_PIP, NULL, 1 },
	{ "ipv4 src prefix", { V4, "10.9.3.4", .proto = 6 }, CLS_LBE, "v4-src", 0 },
	{ "ipv4 dst prefix", { V4_QINQ, NULL, "192.0.2.77", .proto = 6 }, CLS_PIP, "v4-dst", 0 },
	{ "ipv4 src and dst", { V4, "10.8.1.1", "10.7.1.1", .proto = 6 }, CLS_LBE, "v4-both", 0 },
	{ "ipv4 src, other dst", { V4, "10.8.1.1", .proto = 6 }, CLS_BE, NULL, 0 },
	{ "priority beats length", { V6, "2001:db8:e:1::1", .proto = 6 }, CLS_LBE, "ovl-wide", 1 },
	{ "length at equal priority", { V6, "2001:db8:f::1", .fl = 0xabc, .proto = 6 }, CLS_PIP,
	  "spec-long", 1 },
	{ "shorter when longer misses", { V6, "2001:db8:f::1", .fl = 0xabd, .proto = 6 },
	  CLS_LBE, "spec-short", 1 },
	{ "age at equal priority and length",
	  { V6, "2001:db8:10::1", "2001:db8:11::1", .proto = 6 }, CLS_LBE, "age-old", 1 },
	{ "ipv4 priority beats length", { V4, "10.6.1.1", .proto = 6 }, CLS_PIP, "v4-prio", 0 },
	{ "protocol, ipv4", { V4, .proto = 17 }, CLS_LBE, "any-udp", 0 },
	{ "protocol, ipv6", { V6, .proto = 17 }, CLS_LBE, "any-udp", 1 },
	{ "protocol loses to priority", { V6, .fl = 0x12345, .proto = 17 }, CLS_PIP, "fl-exact",
	  1 },
	{ "6in4 flow label", { V6IN4, .fl = 0x12345, .proto = 6 }, CLS_PIP, "fl-exact", 2 },
	{ "6in4 3-tuple", { V6IN4, "2001:db8:a::7", "2001:db8:b::1", 0x777, .proto = 6 }, CLS_PIP,
	  "v6-3tuple", 2 },
};

/* Install @words, run @cases: the class of each, then the exact hits of
 * every rule and the exact per-class, per-family counters. */
static void run_cases(struct __test_metadata *_metadata, FIXTURE_DATA(rules) *self,
		      const char *const *words, size_t nwords, const struct rcase *cases,
		      size_t ncases, uint32_t flags)
{
	uint64_t want[QOS_MAX_CLASSES][QOS_FAM_MAX] = {};
	uint64_t *want_hits = calloc(nwords, sizeof(*want_hits));
	size_t i, j;
	int c, f;

	ASSERT_NE(NULL, want_hits);
	ASSERT_EQ(0, install(self, words, nwords));
	ASSERT_EQ(nwords, self->cur.n);
	EXPECT_EQ(flags, self->cfg.rules);

	for (i = 0; i < ncases; i++) {
		const struct rcase *rc = &cases[i];

		EXPECT_EQ(rc->cls, classify(self, &rc->pkt)) TH_LOG("%s", rc->name);
		want[rc->cls][rc->fam]++;
		for (j = 0; rc->rule && j < nwords; j++)
			if (!strcmp(self->cur.r[j].name, rc->rule))
				want_hits[j]++;
	}
	for (j = 0; j < nwords; j++) {
		EXPECT_EQ(want_hits[j], hits(self, self->cur.r[j].name))
			TH_LOG("hits of %s", self->cur.r[j].name);
	}
	for (c = 0; c < QOS_MAX_CLASSES; c++) {
		for (f = 0; f < QOS_FAM_MAX; f++) {
			EXPECT_EQ(want[c][f], qos_test_class_pkts(self->skel, 0, c, f))
				TH_LOG("class %d family %d", c, f);
		}
	}
	free(want_hits);
}

TEST_F(rules, table)
{
	run_cases(_metadata, self, table_rules, ARRAY_SIZE(table_rules), table_cases,
		  ARRAY_SIZE(table_cases), QOS_RULES_V4 | QOS_RULES_V6 | QOS_RULES_L4);
}

static const char *const port_rules[] = {
	"name tcp80 proto tcp dport 80 class pip",
	"name udp-rng proto udp dport 1000-2000 class lbe",
	/* a later fragment has no ports, but a protocol */
	"name udp-all proto udp priority 1000 class pip",
	/* priority over udp-rng, IPv6 only */
	"name v6-sport src 2001:db8:a::/48 proto udp sport 5000-5003 priority 50 class pip",
	"name v4-443 src 10.8.0.0/16 proto tcp sport 1024-65535 dport 443 class lbe",
	"name icmp proto icmp class lbe",
	"name icmp6 proto ipv6-icmp class lbe",
};

#define UDP_(sp, dp)	.proto = IPPROTO_UDP, .sport = sp, .dport = dp
#define TCP_(sp, dp)	.proto = IPPROTO_TCP, .sport = sp, .dport = dp
#define V6_FRAG_LATER	(185 << 3 | 1)
#define V4_FRAG_LATER	0x2000 | 185
#define FRAG_FIRST_V6	1
#define FRAG_FIRST_V4	0x2000

static const struct rcase port_cases[] = {
	{ "tcp dport, ipv4", { V4, TCP_(40000, 80) }, CLS_PIP, "tcp80", 0 },
	{ "tcp dport, ipv6", { V6, TCP_(40000, 80) }, CLS_PIP, "tcp80", 1 },
	{ "tcp other dport, ipv4", { V4, TCP_(40000, 81) }, CLS_BE, NULL, 0 },
	{ "tcp other dport, ipv6", { V6, TCP_(40000, 81) }, CLS_BE, NULL, 1 },
	{ "tcp sport is not dport", { V6, TCP_(80, 1) }, CLS_BE, NULL, 1 },
	{ "udp dport 80 is not tcp", { V4, UDP_(1, 80) }, CLS_PIP, "udp-all", 0 },
	/* range edges, both families */
	{ "below range, ipv4", { V4, UDP_(1, 999) }, CLS_PIP, "udp-all", 0 },
	{ "range low edge, ipv4", { V4, UDP_(1, 1000) }, CLS_LBE, "udp-rng", 0 },
	{ "range block edge 1023, ipv4", { V4, UDP_(1, 1023) }, CLS_LBE, "udp-rng", 0 },
	{ "range block edge 1024, ipv4", { V4, UDP_(1, 1024) }, CLS_LBE, "udp-rng", 0 },
	{ "range high edge, ipv4", { V4, UDP_(1, 2000) }, CLS_LBE, "udp-rng", 0 },
	{ "above range, ipv4", { V4, UDP_(1, 2001) }, CLS_PIP, "udp-all", 0 },
	{ "below range, ipv6", { V6, UDP_(1, 999) }, CLS_PIP, "udp-all", 1 },
	{ "range low edge, ipv6", { V6, UDP_(1, 1000) }, CLS_LBE, "udp-rng", 1 },
	{ "range middle, ipv6", { V6, UDP_(1, 1536) }, CLS_LBE, "udp-rng", 1 },
	{ "range high edge, ipv6", { V6, UDP_(1, 2000) }, CLS_LBE, "udp-rng", 1 },
	{ "above range, ipv6", { V6, UDP_(1, 2001) }, CLS_PIP, "udp-all", 1 },
	/* sport range with a prefix, IPv6 only; priority over udp-rng */
	{ "v6 sport range low", { V6, "2001:db8:a::1", UDP_(5000, 1500) }, CLS_PIP, "v6-sport",
	  1 },
	{ "v6 sport range high", { V6, "2001:db8:a::1", UDP_(5003, 1500) }, CLS_PIP, "v6-sport",
	  1 },
	{ "v6 sport past range", { V6, "2001:db8:a::1", UDP_(5004, 1500) }, CLS_LBE, "udp-rng",
	  1 },
	{ "v6 sport, other src", { V6, "2001:db8:b::1", UDP_(5000, 1500) }, CLS_LBE, "udp-rng",
	  1 },
	{ "v6 sport rule, ipv4", { V4, UDP_(5000, 1500) }, CLS_LBE, "udp-rng", 0 },
	/* both ports and a prefix, IPv4 only */
	{ "v4 5-tuple", { V4, "10.8.1.1", TCP_(1024, 443) }, CLS_LBE, "v4-443", 0 },
	{ "v4 5-tuple top port", { V4, "10.8.1.1", TCP_(65535, 443) }, CLS_LBE, "v4-443", 0 },
	{ "v4 5-tuple, sport 1023", { V4, "10.8.1.1", TCP_(1023, 443) }, CLS_BE, NULL, 0 },
	{ "v4 5-tuple, other src", { V4, "10.9.1.1", TCP_(1024, 443) }, CLS_BE, NULL, 0 },
	/* ICMP of each family; ICMP and ICMPv6 have no ports */
	{ "icmp", { V4, .proto = IPPROTO_ICMP, .dport = 80 }, CLS_LBE, "icmp", 0 },
	{ "icmpv6", { V6, .proto = IPPROTO_ICMPV6, .dport = 80 }, CLS_LBE, "icmp6", 1 },
	/* proto is a number: a rule of no family matches it in either */
	{ "protocol 1 in ipv6", { V6, .proto = IPPROTO_ICMP }, CLS_LBE, "icmp", 1 },
	{ "icmpv6 is not icmp", { V6, .proto = IPPROTO_ICMPV6, .src = "2001:db8:a::1" }, CLS_LBE,
	  "icmp6", 1 },
	{ "protocol 2 is neither", { V4, .proto = 2 }, CLS_BE, NULL, 0 },
	/* IPv6 extension headers before the ports */
	{ "ext headers, udp range", { V6, UDP_(1, 1500), .ext = true }, CLS_LBE, "udp-rng", 1 },
	{ "ext headers, tcp", { V6, TCP_(1, 80), .ext = true }, CLS_PIP, "tcp80", 1 },
	/* fragments: the first has the ports, a later one only the protocol */
	{ "ipv4 first fragment", { V4, UDP_(1, 1500), .frag = FRAG_FIRST_V4 }, CLS_LBE,
	  "udp-rng", 0 },
	{ "ipv4 later fragment", { V4, UDP_(1, 1500), .frag = V4_FRAG_LATER }, CLS_PIP,
	  "udp-all", 0 },
	{ "ipv4 later fragment, tcp", { V4, TCP_(1, 80), .frag = V4_FRAG_LATER }, CLS_BE, NULL,
	  0 },
	{ "ipv6 first fragment", { V6, UDP_(1, 1500), .frag = FRAG_FIRST_V6 }, CLS_LBE,
	  "udp-rng", 1 },
	{ "ipv6 later fragment", { V6, UDP_(1, 1500), .frag = V6_FRAG_LATER }, CLS_PIP,
	  "udp-all", 1 },
	{ "ipv6 later fragment after ext", { V6, TCP_(1, 80), .frag = V6_FRAG_LATER, .ext = true },
	  CLS_BE, NULL, 1 },
	/* tags and 6in4 */
	{ "802.1Q, tcp", { V6_VLAN, TCP_(1, 80) }, CLS_PIP, "tcp80", 1 },
	{ "QinQ, udp range", { V4_QINQ, UDP_(1, 1000) }, CLS_LBE, "udp-rng", 0 },
	{ "6in4, udp range", { V6IN4, UDP_(1, 2000) }, CLS_LBE, "udp-rng", 2 },
	{ "6in4, sport rule", { V6IN4, "2001:db8:a::1", UDP_(5001, 1) }, CLS_PIP, "v6-sport", 2 },
};

TEST_F(rules, ports)
{
	run_cases(_metadata, self, port_rules, ARRAY_SIZE(port_rules), port_cases,
		  ARRAY_SIZE(port_cases),
		  QOS_RULES_V4 | QOS_RULES_V6 | QOS_RULES_L4 | QOS_RULES_PORTS);
}

/* The egress program classifies unmarked packets by the same rules. */
TEST_F(rules, ports_egress)
{
	static const struct pspec v4 = { V4, TCP_(1, 80) }, v6 = { V6, UDP_(1, 1999) };
	static struct run_result r;
	static struct pkt p;

	ASSERT_EQ(0, install(self, port_rules, ARRAY_SIZE(port_rules)));
	build(&p, &v4);
	pkt_run(self->prog[QOS_DIR_EGRESS], &p, 0, &r);
	EXPECT_EQ(self->cfg.classid[CLS_PIP], r.ctx.priority);
	build(&p, &v6);
	pkt_run(self->prog[QOS_DIR_EGRESS], &p, 0, &r);
	EXPECT_EQ(self->cfg.classid[CLS_LBE], r.ctx.priority);
	EXPECT_EQ(1, hits(self, "tcp80"));
	EXPECT_EQ(1, hits(self, "udp-rng"));
}

/* The rules read back from the maps are the rules installed. */
TEST_F(rules, read_back)
{
	struct qos_rules got = {};
	size_t i, j, found = 0;

	static const char *const *const sets[] = { table_rules, port_rules };
	static const size_t n[] = { ARRAY_SIZE(table_rules), ARRAY_SIZE(port_rules) };
	struct qos_rules none = {};
	size_t s;

	/* Port rules have an entry per block: each is read back once. */
	for (s = 0; s < ARRAY_SIZE(sets); s++) {
		ASSERT_EQ(0, commit(self, &none));
		ASSERT_EQ(0, install(self, sets[s], n[s]));
		ASSERT_EQ(0, qos_rules_read(&self->m, &got, true));
		ASSERT_EQ(self->cur.n, got.n);
		found = 0;
		for (i = 0; i < got.n; i++)
			for (j = 0; j < self->cur.n; j++)
				if (got.r[i].id == self->cur.r[j].id) {
					EXPECT_TRUE(qos_rule_same(&got.r[i], &self->cur.r[j]))
						TH_LOG("%s", self->cur.r[j].name);
					found++;
				}
		EXPECT_EQ(got.n, found);
		qos_rules_free(&got);
	}
}

/* set-dscp: the DSCP changes, ECN and the flow label do not, the IPv4
 * checksum stays valid, nothing else in the packet moves. */
TEST_F(rules, set_dscp)
{
	static const char *const w[] = {
		"name rw4 src 10.5.0.0/16 class pip set-dscp ef",
		"name rw6 flowlabel 0xabcde class pip set-dscp 46",
		"name rw-same src 10.4.0.0/16 class lbe set-dscp cs1",
	};
	static const struct pspec v4 = { V4_QINQ, "10.5.1.1", .dscp = 10, .proto = 6 };
	static const struct pspec v6 = { V6_VLAN, .fl = 0xabcde, .dscp = 10, .proto = 6 };
	static const struct pspec in4 = { V6IN4, .fl = 0xabcde, .dscp = 0, .proto = 6 };
	static const struct pspec same = { V4, "10.4.1.1", .dscp = 8, .proto = 6 };
	static struct run_result r;
	static struct pkt p;
	struct iphdr *ip;
	size_t l3;
	uint32_t w0;

	ASSERT_EQ(0, install(self, w, ARRAY_SIZE(w)));

	build(&p, &v4);
	pkt_run(self->prog[QOS_DIR_INGRESS], &p, 0, &r);
	ASSERT_EQ(0, r.err);
	ASSERT_EQ(p.len, r.out_len);
	l3 = p.l3;
	ip = (struct iphdr *)(r.out + l3);
	EXPECT_EQ(46 << 2 | 1, ip->tos);
	EXPECT_EQ(0, ip_csum(ip, ip->ihl * 4)) TH_LOG("IPv4 checksum broken");
	ip->tos = ((struct iphdr *)(p.buf + l3))->tos;
	ip->check = ((struct iphdr *)(p.buf + l3))->check;
	EXPECT_EQ(0, memcmp(p.buf, r.out, p.len));
	EXPECT_EQ(CLS_PIP << MARK_SHIFT, r.ctx.mark);

	build(&p, &v6);
	pkt_run(self->prog[QOS_DIR_INGRESS], &p, 0, &r);
	ASSERT_EQ(0, r.err);
	memcpy(&w0, r.out + p.l3, 4);
	EXPECT_EQ(6U << 28 | (46U << 2 | 1) << 20 | 0xabcde, ntohl(w0));
	EXPECT_EQ(0, memcmp(p.buf + p.l3 + 4, r.out + p.l3 + 4, p.len - p.l3 - 4));

	/* 6in4: both headers are rewritten, the outer one with a valid
	 * checksum: the next node classifies by the outer one. */
	build(&p, &in4);
	pkt_run(self->prog[QOS_DIR_INGRESS], &p, 0, &r);
	ASSERT_EQ(0, r.err);
	EXPECT_EQ(0, pkt_undo_dscp(r.out, p.buf, ETH_HLEN, p.l3, 46));
	EXPECT_EQ(0, memcmp(p.buf, r.out, p.len));

	/* Already the target DSCP: untouched. */
	build(&p, &same);
	pkt_run(self->prog[QOS_DIR_INGRESS], &p, 0, &r);
	ASSERT_EQ(0, r.err);
	EXPECT_EQ(0, memcmp(p.buf, r.out, p.len));
	EXPECT_EQ(CLS_LBE << MARK_SHIFT, r.ctx.mark);

	EXPECT_EQ(1, hits(self, "rw4"));
	EXPECT_EQ(2, hits(self, "rw6"));
	EXPECT_EQ(1, hits(self, "rw-same"));
}

/* Rules come and go under the loaded programs: the program is never
 * replaced, each change is seen by the next packet, the two shape sets
 * alternate, and removing the last rule turns the lookup off. */
TEST_F(rules, live_changes)
{
	static const struct pspec pk = { V6, "2001:db8:c::1", .fl = 0x12345, .proto = 6 };
	static const char *const exact[] = { "name a flowlabel 0x12345 priority 20 class pip" };
	static const char *const pre[] = { "name b src 2001:db8:c::/64 priority 10 class lbe" };
	struct qos_rules none = {};
	struct bpf_prog_info info = {};
	uint32_t ilen = sizeof(info), id0;
	int i;

	ASSERT_EQ(0, bpf_obj_get_info_by_fd(self->prog[0], &info, &ilen));
	id0 = info.id;
	EXPECT_EQ(CLS_BE, classify(self, &pk));
	for (i = 0; i < 50; i++) {
		int gfd = bpf_map__fd(self->skel->maps.qos_cfg_gen);
		uint32_t zero = 0, g0 = 0, g1 = 0;

		ASSERT_EQ(0, bpf_map_lookup_elem(gfd, &zero, &g0));
		ASSERT_EQ(0, install(self, exact, 1));
		ASSERT_EQ(0, bpf_map_lookup_elem(gfd, &zero, &g1));
		EXPECT_EQ(g0 + 1, g1);
		EXPECT_EQ(CLS_PIP, classify(self, &pk));
		ASSERT_EQ(0, install(self, pre, 1));
		EXPECT_EQ(CLS_LBE, classify(self, &pk));
		ASSERT_EQ(0, commit(self, &none));
		EXPECT_EQ(0, self->cfg.rules );
		EXPECT_EQ(CLS_BE, classify(self, &pk));
	}
	/* The first call filled in counts the kernel would now write to. */
	memset(&info, 0, sizeof(info));
	ASSERT_EQ(0, bpf_obj_get_info_by_fd(self->prog[0], &info, &ilen));
	EXPECT_EQ(id0, info.id);
}

/* Deleting one rule leaves the others and their counters alone. */
TEST_F(rules, delete_keeps_others)
{
	static const struct pspec a = { V6, .fl = 0x11111, .proto = 6 };
	static const struct pspec b = { V4, "10.9.9.9", .proto = 6 };
	static const char *const w[] = { "name a flowlabel 0x11111 class pip",
					 "name b src 10.9.0.0/16 class lbe" };
	struct qos_rules next = {};

	ASSERT_EQ(0, install(self, w, 2));
	EXPECT_EQ(CLS_PIP, classify(self, &a));
	EXPECT_EQ(CLS_LBE, classify(self, &b));
	ASSERT_EQ(0, qos_rules_add(&next, rule_named(self, "b")));
	ASSERT_EQ(0, commit(self, &next));
	EXPECT_EQ(CLS_BE, classify(self, &a));
	EXPECT_EQ(CLS_LBE, classify(self, &b));
	EXPECT_EQ(2, hits(self, "b"));
	EXPECT_EQ(QOS_RULES_V4, self->cfg.rules );
}

/* Run @s through ingress @n times on CPU @cpu (unpinned if -1); the bytes
 * of each, or 0 if one was not classified as @cls. */
static uint32_t hit_on(FIXTURE_DATA(rules) *self, const struct pspec *s, int n, int cpu,
		       uint32_t cls)
{
	static struct pkt p;
	cpu_set_t set;
	int i;

	if (cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			return 0;
	}
	for (i = 0; i < n; i++)
		if (classify(self, s) != cls)
			return 0;
	build(&p, s);
	return p.len;
}

/* Rule @id's counters in CPU @cpu's row (bpf/lib/maps.h). */
static struct qos_ctr row_ctr(FIXTURE_DATA(rules) *self, int cpu, uint32_t id)
{
	uint32_t key = cpu * self->m.capacity + id;
	struct qos_ctr c = { UINT64_MAX, UINT64_MAX };

	bpf_map_lookup_elem(self->m.stats, &key, &c);
	return c;
}

/*
 * Exact packet and byte counts of an IPv4 and an IPv6 rule, hit from two
 * CPUs (where there are two): each CPU's hits in its own row, the sum in
 * qos_rule_hits(). A rule given the id a deleted rule had starts at zero.
 */
TEST_F(rules, counters_exact)
{
	static const struct pspec p4 = { V4, "10.9.3.4", .proto = 6 };
	static const struct pspec p6 = { V6, "2001:db8:c::5", .proto = 6 };
	static const struct pspec p4b = { V4, "10.5.0.1", .proto = 6 };
	static const char *const w[] = { "name v4 src 10.9.0.0/16 class lbe",
					 "name v6 src 2001:db8:c::/64 class pip" };
	static const char *const wb[] = { "name v4b src 10.5.0.0/16 class pip" };
	int cpu[2] = { qos_test_nth_cpu(0), qos_test_nth_cpu(1) };
	uint32_t len4[2], len6[2], id4, lenb;
	struct qos_rules next = {};
	cpu_set_t all;
	int c;

	ASSERT_EQ(0, sched_getaffinity(0, sizeof(all), &all));
	ASSERT_EQ(0, install(self, w, 2));
	id4 = rule_named(self, "v4")->id;
	for (c = 0; c < 2; c++) {
		len4[c] = hit_on(self, &p4, 3 + c, cpu[c], CLS_LBE);
		len6[c] = hit_on(self, &p6, 5 + c, cpu[c], CLS_PIP);
	}
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(all), &all));
	ASSERT_NE(0, len4[0] * len4[1] * len6[0] * len6[1]);
	EXPECT_EQ(3 + 4, qos_test_rule_hits(&self->m, id4).packets);
	EXPECT_EQ(3 * len4[0] + 4 * len4[1], qos_test_rule_hits(&self->m, id4).bytes);
	EXPECT_EQ(5 + 6, hits(self, "v6"));
	EXPECT_EQ(5 * len6[0] + 6 * len6[1],
		  qos_test_rule_hits(&self->m, rule_named(self, "v6")->id).bytes);
	/* Two CPUs: 3 and 4 IPv4 hits in their own rows. */
	if (cpu[1] >= 0) {
		EXPECT_EQ(3, row_ctr(self, cpu[0], id4).packets);
		EXPECT_EQ(4, row_ctr(self, cpu[1], id4).packets);
	}

	/* v4 goes; v4b takes its id, at zero, then counts its own. */
	ASSERT_EQ(0, qos_rules_add(&next, rule_named(self, "v6")));
	ASSERT_EQ(0, commit(self, &next));
	ASSERT_EQ(0, install(self, wb, 1));
	EXPECT_EQ(id4, rule_named(self, "v4b")->id);
	EXPECT_EQ(0, qos_test_rule_hits(&self->m, id4).packets);
	EXPECT_EQ(0, qos_test_rule_hits(&self->m, id4).bytes);
	lenb = hit_on(self, &p4b, 2, -1, CLS_PIP);
	ASSERT_NE(0, lenb);
	EXPECT_EQ(2, hits(self, "v4b"));
	EXPECT_EQ(2 * lenb, qos_test_rule_hits(&self->m, id4).bytes);
	EXPECT_EQ(11, hits(self, "v6"));
}

/* Profile rules as a re-apply sees them: @words parsed, marked profile. */
static int profile_list(FIXTURE_DATA(rules) *self, const char *const *words, size_t n,
			struct qos_rules *l)
{
	struct qos_rule r;
	size_t i;
	int ret = 0;

	for (i = 0; i < n && !ret; i++) {
		ret = rule_parse(words[i], &self->prof, &r);
		r.profile = true;
		ret = ret ?: qos_rules_add(l, &r);
	}
	return ret;
}

/*
 * A re-apply keeps the ids (and counters) of unchanged rules; a rule whose
 * match stays but whose name or class changes replaces the old one without
 * losing the entry both write; reverting puts the old one back.
 */
TEST_F(rules, reapply_same_match)
{
	static const struct pspec pk = { V6, .fl = 0x11111, .proto = 6 };
	static const struct pspec pk4 = { V4, "10.9.9.9", .proto = 6 };
	static const char *const v1[] = { "name a flowlabel 0x11111 class pip",
					  "name b src 10.9.0.0/16 class lbe" };
	static const char *const v2[] = { "name a2 flowlabel 0x11111 class lbe",
					  "name b src 10.9.0.0/16 class lbe" };
	struct qos_rules next = {}, old = {};
	uint32_t id_a, id_b;
	char err[512];
	size_t i;

	ASSERT_EQ(0, profile_list(self, v1, 2, &next));
	ASSERT_EQ(0, commit(self, &next));
	id_a = rule_named(self, "a")->id;
	id_b = rule_named(self, "b")->id;
	EXPECT_EQ(CLS_PIP, classify(self, &pk));
	EXPECT_EQ(CLS_LBE, classify(self, &pk4));

	/* The same list again: same ids, counters kept. */
	ASSERT_EQ(0, profile_list(self, v1, 2, &next));
	ASSERT_EQ(0, qos_rules_keep_ids(&self->cur, &next));
	EXPECT_EQ(id_a, next.r[0].id);
	EXPECT_EQ(id_b, next.r[1].id);
	ASSERT_EQ(0, commit(self, &next));
	EXPECT_EQ(1, hits(self, "a"));
	EXPECT_EQ(1, hits(self, "b"));

	/* a renamed and re-classed: a new id, the entry is a2's; b unchanged. */
	for (i = 0; i < self->cur.n; i++)
		ASSERT_EQ(0, qos_rules_add(&old, &self->cur.r[i]));
	ASSERT_EQ(0, profile_list(self, v2, 2, &next));
	ASSERT_EQ(0, qos_rules_keep_ids(&self->cur, &next));
	EXPECT_EQ(0, next.r[0].id);
	EXPECT_EQ(id_b, next.r[1].id);
	ASSERT_EQ(0, commit(self, &next));
	EXPECT_NE(id_a, rule_named(self, "a2")->id);
	EXPECT_EQ(CLS_LBE, classify(self, &pk));
	EXPECT_EQ(CLS_LBE, classify(self, &pk4));
	EXPECT_EQ(1, hits(self, "a2"));
	EXPECT_EQ(2, hits(self, "b"));

	/* Apply's rollback: a is back with its class. */
	ASSERT_EQ(0, apply_set(self, &old, err, sizeof(err)));
	EXPECT_EQ(CLS_PIP, classify(self, &pk));
	EXPECT_EQ(1, hits(self, "a2"));	/* counted nothing more */
	EXPECT_EQ(CLS_LBE, classify(self, &pk4));
	qos_rules_free(&self->cur);
	self->cur = old;
	EXPECT_EQ(2, hits(self, "a"));
}

/* One 3-tuple and one 5-tuple rule per family, and the packets that hit
 * them (reapply_keeps_tuples). */
static const char *const tuples[] = {
	"name t3-6 src 2001:db8:a::/48 dst 2001:db8:b::1/128 flowlabel 0x777 class pip",
	"name t5-6 src 2001:db8:5::/48 proto udp dport 4000-4100 class lbe",
	"name t3-4 src 10.9.0.0/16 dst 192.0.2.1/32 class pip",
	"name t5-4 src 10.5.0.0/16 proto udp dport 4000-4100 class lbe",
	/* only in the re-apply: a shape of its own in each family */
	"name new-6 src 2001:db8:9900::/40 class pip",
	"name new-4 src 10.96.0.0/12 class pip",
};

static const struct pspec tuple_pkts[] = {
	{ V6, "2001:db8:a:5::9", "2001:db8:b::1", 0x777, .proto = 6 },
	{ V6, "2001:db8:5::1", .proto = 17, .dport = 4050 },
	{ V4, "10.9.3.4", "192.0.2.1", .proto = 6 },
	{ V4, "10.5.0.1", .proto = 17, .dport = 4050 },
};

/* Hit tuple rule @i @n times; the bytes of each, 0 if one missed. */
static uint32_t hit_tuple(FIXTURE_DATA(rules) *self, size_t i, int n)
{
	return hit_on(self, &tuple_pkts[i], n, -1, i & 1 ? CLS_LBE : CLS_PIP);
}

/*
 * A re-apply that keeps the 3-tuple and 5-tuple rules of both families,
 * and adds a shape to each, keeps their ids, their entries and their
 * counters: exact packets and bytes across it, and every rule still hits.
 */
TEST_F(rules, reapply_keeps_tuples)
{
	struct qos_rules next = {};
	uint32_t id[4], len[4];
	size_t i;

	ASSERT_EQ(0, profile_list(self, tuples, 4, &next));
	ASSERT_EQ(0, commit(self, &next));
	for (i = 0; i < 4; i++) {
		id[i] = self->cur.r[i].id;
		len[i] = hit_tuple(self, i, 2 + i);
		ASSERT_NE(0, len[i]) TH_LOG("%s before", tuples[i]);
	}

	ASSERT_EQ(0, profile_list(self, tuples, ARRAY_SIZE(tuples), &next));
	ASSERT_EQ(0, qos_rules_keep_ids(&self->cur, &next));
	for (i = 0; i < 4; i++)
		EXPECT_EQ(id[i], next.r[i].id) TH_LOG("%s", tuples[i]);
	ASSERT_EQ(0, commit(self, &next));
	EXPECT_EQ(QOS_RULES_V4 | QOS_RULES_V6 | QOS_RULES_L4 | QOS_RULES_PORTS, self->cfg.rules);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(len[i], hit_tuple(self, i, 3)) TH_LOG("%s after", tuples[i]);
		EXPECT_EQ(2 + i + 3, qos_test_rule_hits(&self->m, id[i]).packets)
			TH_LOG("%s", tuples[i]);
		EXPECT_EQ((2 + i + 3) * len[i], qos_test_rule_hits(&self->m, id[i]).bytes)
			TH_LOG("%s", tuples[i]);
	}
}

TEST_F(rules, limits)
{
	static const char *const dup[] = { "name x src 10.1.0.0/16 class pip",
					   "name y src 10.1.0.0/16 priority 5 class lbe" };
	struct qos_rules next = {};
	struct qos_rule r;
	char words[128], err[256];
	const char *key;
	int i;

	EXPECT_EQ(-EEXIST, install(self, dup, 2));
	EXPECT_EQ(0, self->cur.n);

	/* 17 distinct IPv4 source prefix lengths: one shape too many. */
	for (i = 0; i < QOS_RULE_SHAPES_MAX + 1; i++) {
		snprintf(words, sizeof(words), "src 10.0.0.0/%d class pip", 8 + i);
		ASSERT_EQ(0, rule_parse(words, &self->prof, &r));
		ASSERT_EQ(0, qos_rules_add(&next, &r));
	}
	EXPECT_EQ(-E2BIG, apply_set(self, &next, err, sizeof(err)));
	TH_LOG("%s", err);
	qos_rules_free(&next);

	/* Bad input, each with its reason. */
	qos_rule_init(&r);
	EXPECT_EQ(-EINVAL, qos_rule_set(&r, "src", "10.1.2.3/8", err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "host bits"));
	EXPECT_EQ(-EINVAL, qos_rule_set(&r, "flowlabel", "0x100000", err, sizeof(err)));
	EXPECT_EQ(-EINVAL, qos_rule_set(&r, "flowlabel", "0x123/0xf00", err, sizeof(err)));
	EXPECT_EQ(-EINVAL, qos_rule_set(&r, "src", "2001:db8::/129", err, sizeof(err)));
	EXPECT_EQ(-EINVAL, qos_rule_set(&r, "priority", "70000", err, sizeof(err)));
	EXPECT_EQ(-EINVAL, qos_rule_set(&r, "proto", "300", err, sizeof(err)));
	EXPECT_EQ(-ENOENT, qos_rule_set(&r, "port", "80", err, sizeof(err)));
	EXPECT_EQ(-EINVAL, qos_rule_set(&r, "sport", "65536", err, sizeof(err)));
	EXPECT_EQ(-EINVAL, qos_rule_set(&r, "dport", "2000-1000", err, sizeof(err)));
	EXPECT_EQ(-EINVAL, qos_rule_set(&r, "dport", "80-", err, sizeof(err)));
	EXPECT_EQ(-EINVAL, qos_rule_set(&r, "dport", "-80", err, sizeof(err)));
	EXPECT_EQ(-EINVAL, qos_rule_set(&r, "dport", "http", err, sizeof(err)));
	EXPECT_EQ(-EINVAL, qos_rule_set(&r, "police", "20%", err, sizeof(err)));
	EXPECT_EQ(-EINVAL, qos_rule_set(&r, "police", "999bit", err, sizeof(err)));
	EXPECT_EQ(-EINVAL, qos_rule_set(&r, "burst", "0", err, sizeof(err)));
	EXPECT_EQ(-EINVAL, qos_rule_set(&r, "action", "pass", err, sizeof(err)));
	EXPECT_EQ(-EINVAL, qos_rule_set(&r, "action", "remark:ff", err, sizeof(err)));
	ASSERT_EQ(0, qos_rule_set(&r, "src", "10.0.0.0/8", err, sizeof(err)));
	EXPECT_EQ(-EINVAL, qos_rule_set(&r, "dst", "2001:db8::/32", err, sizeof(err)));
	EXPECT_EQ(-EINVAL, qos_rule_set(&r, "flowlabel", "5", err, sizeof(err)));
	EXPECT_EQ(-EINVAL, qos_rule_check(&r, &key, err, sizeof(err)));
	EXPECT_STREQ("class", key);

	/* Ports need a protocol with ports. */
	ASSERT_EQ(0, qos_rule_set(&r, "class", "pip", err, sizeof(err)));
	ASSERT_EQ(0, qos_rule_set(&r, "dport", "80", err, sizeof(err)));
	EXPECT_EQ(-EINVAL, qos_rule_check(&r, &key, err, sizeof(err)));
	EXPECT_STREQ("dport", key);
	ASSERT_EQ(0, qos_rule_set(&r, "proto", "icmp", err, sizeof(err)));
	EXPECT_EQ(-EINVAL, qos_rule_check(&r, &key, err, sizeof(err)));
	ASSERT_EQ(0, qos_rule_set(&r, "proto", "sctp", err, sizeof(err)));
	EXPECT_EQ(0, qos_rule_check(&r, &key, err, sizeof(err)));
	/* 1-65534 is 30 blocks; with a second range, past the limit. */
	ASSERT_EQ(0, qos_rule_set(&r, "sport", "1-65534", err, sizeof(err)));
	EXPECT_EQ(0, qos_rule_check(&r, &key, err, sizeof(err)));
	ASSERT_EQ(0, qos_rule_set(&r, "dport", "1-4", err, sizeof(err)));
	EXPECT_EQ(-E2BIG, qos_rule_check(&r, &key, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "90 aligned blocks")) TH_LOG("%s", err);
	/* 0-65535 is any port. */
	ASSERT_EQ(0, qos_rule_set(&r, "sport", "0-65535", err, sizeof(err)));
	ASSERT_EQ(0, qos_rule_set(&r, "dport", "0-65535", err, sizeof(err)));
	ASSERT_EQ(0, qos_rule_set(&r, "proto", "icmp", err, sizeof(err)));
	EXPECT_EQ(0, qos_rule_check(&r, &key, err, sizeof(err)));
}

/* Packets of @s through ingress @n times: how many the program dropped. */
static uint32_t run_n(FIXTURE_DATA(rules) *self, const struct pspec *s, uint32_t n,
		      uint32_t *cls)
{
	static struct run_result r;
	static struct pkt p;
	uint32_t i, shot = 0;

	build(&p, s);
	for (i = 0; i < n; i++) {
		pkt_run(self->prog[QOS_DIR_INGRESS], &p, 0, &r);
		if (r.retval == TC_ACT_SHOT)
			shot++;
		else
			cls[(r.ctx.mark & MARK_MASK) >> MARK_SHIFT]++;
	}
	return shot;
}

static uint64_t police_pkts(FIXTURE_DATA(rules) *self, uint32_t idx, uint32_t fam, uint32_t c)
{
	struct qos_rule_policer rp;

	if (idx < QOS_POLICER_RULE_FIRST)
		return qos_test_police_ctr(bpf_map__fd(self->skel->maps.qos_police_stats), idx, fam,
					   c).packets;
	if (bpf_map_lookup_elem(self->m.policers, &idx, &rp))
		return UINT64_MAX;
	return rp.ctrs.c[fam][c].packets;
}

/*
 * A rule's own policer: a burst of exactly two frames passes two packets
 * (1 kbit/s refills a frame in about a second, far longer than the test),
 * the rest get the rule's action; the class's policer (PIP's, in
 * pip-20pct) is not used; each family its own rule and policer. Deleting
 * a rule deletes its policer and counters: rule policers hold memory only
 * while they exist.
 */
TEST_F(rules, police)
{
	static const struct pspec v4 = { V4, TCP_(1, 7000) }, v6 = { V6, TCP_(1, 7000) };
	static struct pkt p4, p6;
	uint32_t cls[QOS_MAX_CLASSES] = {}, i4, i6;
	char w[3][160];
	const char *words[3] = { w[0], w[1], w[2] };
	struct qos_rules got = {}, next = {};
	struct qos_rule_policer pol;
	size_t i;

	build(&p4, &v4);
	build(&p6, &v6);
	snprintf(w[0], sizeof(w[0]),
		 "name p4 src 10.1.1.1 proto tcp dport 7000 class pip police 1kbit burst %zu",
		 2 * p4.len);
	snprintf(w[1], sizeof(w[1]),
		 "name p6 src 2001:db8:1::1 proto tcp dport 7000 class pip police 1kbit burst %zu action demote:lbe",
		 2 * p6.len);
	snprintf(w[2], sizeof(w[2]), "name p6r flowlabel 0x777 class be police 10mbit");
	ASSERT_EQ(0, install(self, words, 3));
	i4 = rule_named(self, "p4")->policer;
	i6 = rule_named(self, "p6")->policer;
	EXPECT_EQ(QOS_POLICER_RULE_FIRST, i4);
	EXPECT_EQ(QOS_POLICER_RULE_FIRST + 1, i6);
	EXPECT_EQ(QOS_POLICER_RULE_FIRST + 2, rule_named(self, "p6r")->policer);

	EXPECT_EQ(8, run_n(self, &v4, 10, cls));
	EXPECT_EQ(2, cls[CLS_PIP]);
	EXPECT_EQ(2, police_pkts(self, i4, QOS_FAM_IPV4, TB_GREEN));
	EXPECT_EQ(8, police_pkts(self, i4, QOS_FAM_IPV4, TB_RED));
	/* Counted in the rule's class, by verdict. */
	EXPECT_EQ(2, qos_test_ctr(bpf_map__fd(self->skel->maps.qos_stats),
				  qos_stats_key(0, CLS_PIP, QOS_FAM_IPV4, QOS_V_PASS)).packets);
	EXPECT_EQ(8, qos_test_ctr(bpf_map__fd(self->skel->maps.qos_stats),
				  qos_stats_key(0, CLS_PIP, QOS_FAM_IPV4, QOS_V_DROP)).packets);

	memset(cls, 0, sizeof(cls));
	EXPECT_EQ(0, run_n(self, &v6, 10, cls));
	EXPECT_EQ(2, cls[CLS_PIP]);
	EXPECT_EQ(8, cls[CLS_LBE]);
	EXPECT_EQ(2, police_pkts(self, i6, QOS_FAM_IPV6, TB_GREEN));
	EXPECT_EQ(8, police_pkts(self, i6, QOS_FAM_IPV6, TB_RED));
	EXPECT_EQ(0, police_pkts(self, i4, QOS_FAM_IPV6, TB_GREEN));
	EXPECT_EQ(0, police_pkts(self, CLS_PIP, QOS_FAM_IPV6, TB_GREEN));
	EXPECT_EQ(10, hits(self, "p4"));
	EXPECT_EQ(10, hits(self, "p6"));

	/* Read back as installed, auto burst included. */
	ASSERT_EQ(0, qos_rules_read(&self->m, &got, false));
	for (i = 0; i < got.n; i++) {
		EXPECT_TRUE(qos_rule_same(&got.r[i], rule_named(self, got.r[i].name)))
			TH_LOG("%s", got.r[i].name);
	}
	qos_rules_free(&got);

	/* p4 deleted: its policer and counters are gone, p6's are kept,
	 * buckets and all. */
	ASSERT_EQ(0, qos_rules_add(&next, rule_named(self, "p6")));
	ASSERT_EQ(0, commit(self, &next));
	EXPECT_EQ(-ENOENT, bpf_map_lookup_elem(self->m.policers, &i4, &pol));
	EXPECT_EQ(UINT64_MAX, police_pkts(self, i4, QOS_FAM_IPV4, TB_GREEN));
	ASSERT_EQ(0, bpf_map_lookup_elem(self->m.policers, &i6, &pol));
	EXPECT_NE(0, pol.pol.tb.cir);
	memset(cls, 0, sizeof(cls));
	EXPECT_EQ(0, run_n(self, &v6, 1, cls));
	EXPECT_EQ(1, cls[CLS_LBE]);
	/* Now unpoliced, as PIP's policer has room for it. */
	memset(cls, 0, sizeof(cls));
	EXPECT_EQ(0, run_n(self, &v4, 1, cls));
	EXPECT_EQ(1, cls[CLS_BE]);
}

/* Keys in map @fd. */
static uint32_t map_count(int fd)
{
	uint32_t key, next, n = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		n++;
	}
	return n;
}

/*
 * Rule policers scale with the rule table: 4096 rules, IPv4 and IPv6 in
 * turn, each with a policer of its own (the fixed array of before held
 * 1008), and the last of each family polices its packets as the first
 * rule's does. Each policer is one element of the hash, and the class
 * policers' counters are untouched.
 */
TEST_F(rules, police_many)
{
	enum { N = 4096 };
	static const struct pspec v4 = { .shape = V4, .src = "10.1.15.255", TCP_(1, 7000) };
	static const struct pspec v6 = { .shape = V6, .src = "2001:db8:1::fff", TCP_(1, 7000) };
	static char w[N][96];
	static const char *words[N];
	uint32_t cls[QOS_MAX_CLASSES] = {};
	static struct pkt p4, p6;
	const struct qos_rule *r4, *r6;
	uint32_t i;

	build(&p4, &v4);
	build(&p6, &v6);
	for (i = 0; i < N; i++) {
		if (i % 2)
			snprintf(w[i], sizeof(w[i]),
				 "name m%u src 2001:db8:1::%x class pip police 1kbit burst %zu", i,
				 i / 2 * 2 + 1, 2 * p6.len);
		else
			snprintf(w[i], sizeof(w[i]),
				 "name m%u src 10.1.%u.%u class pip police 1kbit burst %zu", i,
				 i / 2 / 128, i / 2 % 128 * 2 + 1, 2 * p4.len);
		words[i] = w[i];
	}
	/* The last of each family: 10.1.15.255, 2001:db8:1::fff. */
	ASSERT_EQ(0, install(self, words, N));
	EXPECT_EQ(N, map_count(self->m.policers));
	r4 = rule_named(self, "m4094");
	r6 = rule_named(self, "m4095");
	ASSERT_NE(NULL, r4);
	ASSERT_NE(NULL, r6);
	EXPECT_EQ(QOS_POLICER_RULE_FIRST + N - 2, r4->policer);
	EXPECT_EQ(QOS_POLICER_RULE_FIRST + N - 1, r6->policer);

	EXPECT_EQ(8, run_n(self, &v4, 10, cls));
	EXPECT_EQ(8, run_n(self, &v6, 10, cls));
	EXPECT_EQ(4, cls[CLS_PIP]);
	EXPECT_EQ(2, police_pkts(self, r4->policer, QOS_FAM_IPV4, TB_GREEN));
	EXPECT_EQ(8, police_pkts(self, r4->policer, QOS_FAM_IPV4, TB_RED));
	EXPECT_EQ(2, police_pkts(self, r6->policer, QOS_FAM_IPV6, TB_GREEN));
	EXPECT_EQ(8, police_pkts(self, r6->policer, QOS_FAM_IPV6, TB_RED));
	EXPECT_EQ(0, police_pkts(self, r6->policer, QOS_FAM_IPV4, TB_GREEN));
	for (i = 1; i < QOS_POLICER_RULE_FIRST; i++)
		EXPECT_EQ(0, police_pkts(self, i, QOS_FAM_IPV4, TB_RED));
}

/* Reservations of @words: rules of pip, policed at a burst of two frames
 * of @p4 / @p6 at 1 kbit/s, remarked EF, the excess demoted or dropped. */
static int install_resv(FIXTURE_DATA(rules) *self, const struct pkt *p4, const struct pkt *p6,
			uint8_t exceed)
{
	struct qos_rules next = {};
	struct qos_rule r;
	char w[160];
	int ret;

	snprintf(w, sizeof(w), "name v4 src 10.1.1.1 proto udp dport 7000 class pip police 1kbit "
		 "burst %zu set-dscp ef", 2 * p4->len);
	ret = rule_parse(w, &self->prof, &r);
	r.reserve = true;
	r.police_act = (struct qos_police_action){ exceed, exceed == QOS_PA_DEMOTE ? CLS_BE : 0 };
	ret = ret ?: qos_rules_add(&next, &r);
	snprintf(w, sizeof(w), "name v6 flowlabel 0x12345 class pip police 1kbit burst %zu "
		 "set-dscp ef", 2 * p6->len);
	ret = ret ?: rule_parse(w, &self->prof, &r);
	r.reserve = true;
	r.police_act = (struct qos_police_action){ exceed, exceed == QOS_PA_DEMOTE ? CLS_BE : 0 };
	ret = ret ?: qos_rules_add(&next, &r);
	ret = ret ?: commit(self, &next);
	qos_rules_free(&next);
	return ret;
}

/* The DSCP of the packet egress let out of @p. */
static uint8_t out_dscp(const struct pkt *p, const struct run_result *r)
{
	if (p->buf[p->l3] >> 4 == 4)
		return r->out[p->l3 + 1] >> 2;
	return ((r->out[p->l3] & 0x0f) << 4 | r->out[p->l3 + 1] >> 4) >> 2;
}

/*
 * Reservations are enforced at egress, where their class's queue is,
 * whatever the mark says (BE from another interface's ingress, or none):
 * policed at their own token bucket (two frames at 1 kbit/s: the first two
 * packets conform), the conforming packets queued in PIP and remarked EF,
 * the excess demoted to BE with its DSCP untouched, or dropped. Ingress
 * does not look at them. IPv4 by address and port, IPv6 by flow label.
 */
TEST_F(rules, reserve_egress)
{
	static const struct pspec v4 = { V4, "10.1.1.1", UDP_(1, 7000) };
	static const struct pspec v6 = { V6, .fl = 0x12345, UDP_(1, 7000) };
	const struct pspec *spec[] = { &v4, &v6 };
	static struct run_result r;
	static struct pkt p[2];
	uint32_t mark, f, i, idx;

	build(&p[0], &v4);
	build(&p[1], &v6);
	ASSERT_EQ(0, install_resv(self, &p[0], &p[1], QOS_PA_DEMOTE));
	EXPECT_TRUE(self->cfg.rules & QOS_RULES_RESERVE);
	for (f = 0; f < 2; f++) {
		EXPECT_EQ(CLS_BE, classify(self, spec[f]));
		idx = rule_named(self, f ? "v6" : "v4")->policer;
		for (i = 0; i < 6; i++) {
			mark = i & 1 ? CLS_BE << MARK_SHIFT : 0;
			pkt_run(self->prog[QOS_DIR_EGRESS], &p[f], mark, &r);
			ASSERT_EQ(0, r.err);
			EXPECT_EQ(TC_ACT_UNSPEC, r.retval);
			EXPECT_EQ(self->cfg.classid[i < 2 ? CLS_PIP : CLS_BE], r.ctx.priority)
				TH_LOG("family %u packet %u", f, i);
			EXPECT_EQ(i < 2 ? 46 : 0, out_dscp(&p[f], &r))
				TH_LOG("family %u packet %u", f, i);
		}
		EXPECT_EQ(2, police_pkts(self, idx, f, TB_GREEN));
		EXPECT_EQ(4, police_pkts(self, idx, f, TB_RED));
		EXPECT_EQ(6, hits(self, f ? "v6" : "v4"));
		EXPECT_EQ(2, qos_test_ctr(bpf_map__fd(self->skel->maps.qos_stats),
					  qos_stats_key(QOS_DIR_EGRESS, CLS_PIP, f,
							QOS_V_REMARK)).packets);
		EXPECT_EQ(4, qos_test_ctr(bpf_map__fd(self->skel->maps.qos_stats),
					  qos_stats_key(QOS_DIR_EGRESS, CLS_PIP, f,
							QOS_V_DEMOTE)).packets);
	}

	/* reserve-exceed = drop: the excess is shot at egress. */
	ASSERT_EQ(0, install_resv(self, &p[0], &p[1], QOS_PA_DROP));
	for (f = 0; f < 2; f++) {
		for (i = 0; i < 3; i++) {
			pkt_run(self->prog[QOS_DIR_EGRESS], &p[f], CLS_BE << MARK_SHIFT, &r);
			EXPECT_EQ(i < 2 ? TC_ACT_UNSPEC : TC_ACT_SHOT, r.retval)
				TH_LOG("family %u packet %u", f, i);
		}
	}
}

/* Port ranges are aligned blocks: the shapes they take count against the
 * limit, and two ranges that share a block are refused. */
TEST_F(rules, port_limits)
{
	static const char *const share[] = { "name a proto tcp dport 0-1535 class pip",
					     "name b proto tcp dport 0-1023 priority 5 class lbe" };
	static const char *const apart[] = { "name a proto tcp dport 0-1535 class pip",
					     "name b proto tcp dport 0-1022 priority 5 class lbe" };
	/* 1-65534: blocks of 2^0 to 2^14 ports, 15 shapes; port 0 takes one of
	 * them, dport 7 the 16th, a protocol-only rule would be the 17th. */
	static const char *const wide[] = { "name w proto udp sport 1-65534 class pip",
					    "name z proto udp sport 0 class lbe",
					    "name y proto udp dport 7 class lbe",
					    "name x proto udp priority 7 class lbe" };
	static const struct pspec p1535 = { V4, TCP_(1, 1535) }, p1000 = { V6, TCP_(1, 1000) };
	char err[512];
	struct qos_rules next = {};
	struct qos_rule r;
	size_t i;

	EXPECT_EQ(-EEXIST, install(self, share, 2));
	EXPECT_EQ(0, self->cur.n);
	ASSERT_EQ(0, install(self, apart, 2));
	EXPECT_EQ(CLS_PIP, classify(self, &p1535));
	EXPECT_EQ(CLS_LBE, classify(self, &p1000));
	ASSERT_EQ(0, commit(self, &next));

	for (i = 0; i < ARRAY_SIZE(wide); i++) {
		ASSERT_EQ(0, rule_parse(wide[i], &self->prof, &r));
		ASSERT_EQ(0, qos_rules_add(&next, &r));
	}
	EXPECT_EQ(-E2BIG, apply_set(self, &next, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "rule x: more than 16 IPv4 rule shapes")) TH_LOG("%s", err);
	next.n = 3;
	EXPECT_EQ(0, commit(self, &next));
	EXPECT_EQ(16, self->cfg.rs.n[QOS_TABLE_IPV4]);
	qos_rules_free(&next);
}

TEST(table_full)
{
	FIXTURE_DATA(rules) s = {}, *self = &s;
	struct qos_rules next = {};
	struct qos_rule r;
	char words[64], err[256];
	int i;

	fixture_init(_metadata, self, 16);
	for (i = 0; i < 16; i++) {
		snprintf(words, sizeof(words), "flowlabel %d class pip", i + 1);
		ASSERT_EQ(0, rule_parse(words, &self->prof, &r));
		ASSERT_EQ(0, qos_rules_add(&next, &r));
	}
	/* Ids start at 1: 15 fit. */
	EXPECT_EQ(-ENOSPC, apply_set(self, &next, err, sizeof(err)));
	next.n = 15;
	EXPECT_EQ(0, commit(self, &next));
	qos_rules_free(&next);
	qos_rules_free(&self->cur);
	qos_profile_free(&self->prof);
	qos__destroy(self->skel);
}

/* [rule NAME] sections of a profile: parsed, classes resolved, errors with
 * file, line and key. */
TEST(profile_rules)
{
	static const char good[] =
		"[profile]\ndefault = be\nrules = 1024\n"
		"[class pip]\nid = 2\nrate = 20%\n"
		"[class be]\nid = 3\nrate = 79%\n"
		"[rule voice]\nflowlabel = 0x12345\nsrc = 2001:db8::/32\nclass = pip\n"
		"set-dscp = ef\npriority = 10\n"
		"[rule bulk]\nsrc = 10.0.0.0/8\nclass = be\n"
		"[rule web]\nproto = tcp\ndport = 80-81\nsport = 1024\nclass = pip\n";
	static const struct {
		const char *text;
		const char *want;	/* in the error */
	} bad[] = {
		{ "[rule a]\nflowlabel = 0x123456\nclass = pip\n", ":10: flowlabel:" },
		{ "[rule a]\nsrc = 10.0.0.0/8\nclass = nope\n", ":10: class:" },
		{ "[rule a]\nsrc = 10.0.0.0/8\n", ":10: class:" },
		{ "[rule a]\nsrc = 10.0.0.0/8\nclass = pip\n[rule b]\nsrc = 10.0.0.0/8\nclass = be\n",
		  "same match" },
		{ "[rule a]\nport = 80\n", ":10: port:" },
		{ "[rule a]\nproto = tcp\ndport = 70000\n", ":11: dport:" },
		{ "[rule a]\nclass = pip\npolice = 1mbit\naction = demote:nope\n",
		  ":11: action: [rule a]: no class named 'nope'" },
		{ "[rule a]\nclass = pip\nburst = 10kb\n", ":10: burst: [rule a]: burst and action need police" },
		{ "[rule a]\nclass = pip\nsport = 80\n", ":11: sport: [rule a]: ports need proto" },
		{ "[rule a]\nclass = pip\nproto = udp\nsport = 1-65534\ndport = 1-4\n",
		  ":13: dport: [rule a]: sport 1-65534 and dport 1-4 cut into 90" },
	};
	static struct qos_profile p;
	char path[] = "/tmp/qos-profile-XXXXXX", err[512];
	size_t i;
	FILE *f;
	int fd;

	fd = mkstemp(path);
	ASSERT_GE(fd, 0);
	f = fdopen(fd, "w");
	fputs(good, f);
	fclose(f);
	EXPECT_EQ(0, qos_profile_load(path, &p, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(1024, p.rule_entries);
	ASSERT_EQ(3, p.rules.n);
	EXPECT_STREQ("voice", p.rules.r[0].name);
	EXPECT_EQ(2, p.rules.r[0].class_id);
	EXPECT_EQ(46, p.rules.r[0].dscp);
	EXPECT_EQ(10, p.rules.r[0].prio);
	EXPECT_EQ(0x12345, p.rules.r[0].flowlabel);
	EXPECT_TRUE(p.rules.r[0].profile);
	EXPECT_EQ(3, p.rules.r[1].class_id);
	EXPECT_EQ(80, p.rules.r[2].dport_lo);
	EXPECT_EQ(81, p.rules.r[2].dport_hi);
	EXPECT_EQ(1024, p.rules.r[2].sport_lo);
	EXPECT_EQ(1024, p.rules.r[2].sport_hi);
	qos_profile_free(&p);

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		f = fopen(path, "w");
		fprintf(f, "[profile]\ndefault = be\n[class pip]\nid = 2\nrate = 20%%\n"
			   "[class be]\nid = 3\nrate = 79%%\n%s", bad[i].text);
		fclose(f);
		EXPECT_EQ(-EINVAL, qos_profile_load(path, &p, err, sizeof(err)));
		EXPECT_NE(NULL, strstr(err, bad[i].want)) TH_LOG("case %zu: %s", i, err);
		qos_profile_free(&p);
	}
	unlink(path);
}

#define MILLION		(1U << 20)

/* 2^20 exact 3-tuple rules, plus a prefix rule: installed, each sampled
 * rule classifies, and a miss falls through to the prefix and the DSCP.
 * Installing them takes ~5 s here and minutes in a VM under software
 * emulation: this test alone gets a longer timeout than the harness's 30 s
 * (TEST() reads TEST_TIMEOUT_DEFAULT where it is expanded). */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 600
TEST(million_rules)
{
	FIXTURE_DATA(rules) s = {}, *self = &s;
	struct qos_rules next = {};
	struct pspec pk = { V6, .proto = 6 };
	char src[64], dst[64], words[256];
	struct qos_rule r;
	struct timespec t0, t1;
	uint32_t i;

	fixture_init(_metadata, self, MILLION + 2);
	next.r = calloc(MILLION + 1, sizeof(*next.r));
	ASSERT_NE(NULL, next.r);
	next.cap = MILLION + 1;
	for (i = 0; i < MILLION; i++) {
		snprintf(words, sizeof(words),
			 "src 2001:db8:100::%x:%x/128 dst 2001:db8:200::1/128 flowlabel %u class %s",
			 i >> 16, i & 0xffff, i & 0xfffff, i & 1 ? "lbe" : "pip");
		ASSERT_EQ(0, rule_parse(words, &self->prof, &r));
		next.r[next.n++] = r;
	}
	ASSERT_EQ(0, rule_parse("src 2001:db8:100::/48 priority 200 class lbe", &self->prof, &r));
	next.r[next.n++] = r;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, commit(self, &next));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	TH_LOG("%u rules installed in %.1f s", MILLION + 1,
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);

	for (i = 0; i < MILLION; i += 9973) {
		snprintf(src, sizeof(src), "2001:db8:100::%x:%x", i >> 16, i & 0xffff);
		snprintf(dst, sizeof(dst), "2001:db8:200::1");
		pk.src = src;
		pk.dst = dst;
		pk.fl = i & 0xfffff;
		EXPECT_EQ(i & 1 ? CLS_LBE : CLS_PIP, classify(self, &pk)) TH_LOG("rule %u", i);
		pk.fl = (i + 1) & 0xfffff;
		EXPECT_EQ(CLS_LBE, classify(self, &pk)) TH_LOG("rule %u, other label", i);
	}
	pk.src = "2001:db8:101::1";
	pk.dscp = 46;
	EXPECT_EQ(CLS_PIP, classify(self, &pk));
	qos_rules_free(&next);
	qos_rules_free(&self->cur);
	qos_profile_free(&self->prof);
	qos__destroy(self->skel);
}
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 30

TEST_HARNESS_MAIN
