// SPDX-License-Identifier: GPL-2.0-only
/*
 * Classification by the ingress and egress programs, with crafted packets
 * through bpf_prog_test_run_opts(): class in the mark (other mark bits
 * kept), qdisc class in skb->priority, per-family counters, packets that
 * cannot be parsed passed untouched and counted by reason.
 *
 * The configuration is the real tc-profiles/pip-20pct, parsed by the same
 * code qosctl uses; the expected classes below are written out from the
 * service model (PIP = DSCP 46, 47, 40; LBE = 8; BE the rest), not derived
 * from the configuration under test.
 */
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <stdio.h>
#include <stdlib.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kselftest_harness.h"
#include "pkt.h"
#include "qos_test.h"

#define CLS_PIP		2
#define CLS_BE		3
#define CLS_LBE		4
#define MARK_MASK	0x000f0000U	/* the profiles' default mark-mask */
#define MARK_SHIFT	16
#define OTHER_BITS	0xa5a0f00fU	/* fwmark bits of other users */

static uint32_t expected_class(uint8_t dscp)
{
	if (dscp == 46 || dscp == 47 || dscp == 40)
		return CLS_PIP;
	if (dscp == 8)
		return CLS_LBE;
	return CLS_BE;
}

static uint32_t classid(uint32_t cls)
{
	return 0x10000 | (0x10 + cls);
}

enum shape {
	SHAPE_V4,
	SHAPE_V6,
	SHAPE_V4_VLAN,
	SHAPE_V6_VLAN,
	SHAPE_V6_QINQ,
	SHAPE_V4_OPTIONS,
	SHAPE_6IN4,
	SHAPE_MAX,
};

static const char *const shape_names[SHAPE_MAX] = {
	"ipv4", "ipv6", "ipv4-vlan", "ipv6-vlan", "ipv6-qinq", "ipv4-options", "6in4",
};

static int shape_family(enum shape s)
{
	switch (s) {
	case SHAPE_V6:
	case SHAPE_V6_VLAN:
	case SHAPE_V6_QINQ:
		return QOS_FAM_IPV6;
	case SHAPE_6IN4:
		return QOS_FAM_IPV6IN4;
	default:
		return QOS_FAM_IPV4;
	}
}

/* A UDP-sized packet of @shape whose classified header carries @dscp (for
 * 6in4 the outer IPv4 header, by tunnel-dscp auto; the inner one gets a
 * different DSCP so a wrong choice shows, and is used only for outer DSCP
 * 0, when it carries 1: best effort too). */
static void build(struct pkt *p, enum shape s, uint8_t dscp)
{
	uint8_t tos = dscp << 2 | 0x1;	/* ECN ECT(1): must not disturb the DSCP */
	size_t l3;

	pkt_init(p);
	pkt_eth(p);
	if (s == SHAPE_V4_VLAN || s == SHAPE_V6_VLAN)
		pkt_vlan(p, ETH_P_8021Q, 100);
	if (s == SHAPE_V6_QINQ) {
		pkt_vlan(p, ETH_P_8021AD, 200);
		pkt_vlan(p, ETH_P_8021Q, 100);
	}
	l3 = p->len;
	switch (s) {
	case SHAPE_V4:
	case SHAPE_V4_VLAN:
		pkt_ipv4(p, tos, IPPROTO_UDP, 0);
		break;
	case SHAPE_V4_OPTIONS:
		pkt_ipv4(p, tos, IPPROTO_UDP, 12);
		break;
	case SHAPE_6IN4:
		pkt_ipv4(p, tos, IPPROTO_IPV6, 0);
		pkt_ipv6(p, ((dscp + 1) & 63) << 2, 0x12345, IPPROTO_UDP);
		break;
	default:
		pkt_ipv6(p, tos, 0x12345, IPPROTO_UDP);
		break;
	}
	pkt_payload(p, 8 + 32);
	pkt_end(p, l3);
}

FIXTURE(classify)
{
	struct qos *skel;
	int ingress, egress;
};

FIXTURE_SETUP(classify)
{
	static struct qos_profile prof;
	struct qos_cfg cfg;
	char err[512];

	self->skel = qos__open_and_load();
	ASSERT_NE(NULL, self->skel) TH_LOG("loading the BPF object: %s", strerror(errno));
	self->ingress = bpf_program__fd(self->skel->progs.qos_ingress);
	self->egress = bpf_program__fd(self->skel->progs.qos_egress);

	ASSERT_EQ(0, qos_profile_load(QOS_SRCDIR "/tc-profiles/pip-20pct", &prof, err,
				      sizeof(err))) TH_LOG("%s", err);
	qos_profile_fill_cfg(&prof, &cfg);
	ASSERT_EQ(MARK_MASK, cfg.mark_mask);
	ASSERT_EQ(0, qos_test_cfg_put(self->skel, &cfg));
}

FIXTURE_TEARDOWN(classify)
{
	qos__destroy(self->skel);
}

static uint64_t count(struct qos *skel, uint32_t dir, uint32_t cls, uint32_t fam,
		      uint64_t *bytes)
{
	int ncpu = libbpf_num_possible_cpus();
	struct qos_ctr vals[ncpu];
	uint32_t key = qos_stats_key(dir, cls, fam, QOS_V_PASS);
	uint64_t pkts = 0;
	int i;

	*bytes = 0;
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.qos_stats), &key, vals))
		return UINT64_MAX;
	for (i = 0; i < ncpu; i++) {
		pkts += vals[i].packets;
		*bytes += vals[i].bytes;
	}
	return pkts;
}

static uint64_t unparsed(struct qos *skel, uint32_t dir, uint32_t reason)
{
	int ncpu = libbpf_num_possible_cpus();
	struct qos_ctr vals[ncpu];
	uint32_t key = qos_unparsed_key(dir, reason);
	uint64_t pkts = 0;
	int i;

	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.qos_unparsed), &key, vals))
		return UINT64_MAX;
	for (i = 0; i < ncpu; i++)
		pkts += vals[i].packets;
	return pkts;
}

/* Every DSCP, every packet shape, both programs: class, mark, priority,
 * bytes unchanged, and the counters add up exactly. */
TEST_F(classify, every_dscp_every_shape)
{
	uint64_t want_pkts[QOS_MAX_CLASSES][QOS_FAM_MAX] = {};
	uint64_t want_bytes[QOS_MAX_CLASSES][QOS_FAM_MAX] = {};
	static struct run_result r;
	static struct pkt p;
	int s, d, c, f;

	for (s = 0; s < SHAPE_MAX; s++) {
		for (d = 0; d < 64; d++) {
			uint32_t cls = expected_class(d);
			int fam = shape_family(s);

			build(&p, s, d);
			pkt_run(self->ingress, &p, OTHER_BITS, &r);
			ASSERT_EQ(0, r.err);
			EXPECT_EQ(TC_ACT_UNSPEC, r.retval);
			EXPECT_EQ((OTHER_BITS & ~MARK_MASK) | cls << MARK_SHIFT, r.ctx.mark)
				TH_LOG("%s dscp %d", shape_names[s], d);
			ASSERT_EQ(p.len, r.out_len);
			EXPECT_EQ(0, memcmp(p.buf, r.out, p.len))
				TH_LOG("%s dscp %d: packet modified", shape_names[s], d);

			/* Unmarked at egress: classified there. */
			pkt_run(self->egress, &p, OTHER_BITS & ~MARK_MASK, &r);
			ASSERT_EQ(0, r.err);
			EXPECT_EQ(TC_ACT_UNSPEC, r.retval);
			EXPECT_EQ(classid(cls), r.ctx.priority)
				TH_LOG("%s dscp %d", shape_names[s], d);
			EXPECT_EQ(OTHER_BITS & ~MARK_MASK, r.ctx.mark);

			want_pkts[cls][fam]++;
			want_bytes[cls][fam] += p.len;
		}
	}
	for (c = 0; c < QOS_MAX_CLASSES; c++) {
		for (f = 0; f < QOS_FAM_MAX; f++) {
			uint64_t bytes;

			EXPECT_EQ(want_pkts[c][f], count(self->skel, QOS_DIR_INGRESS, c, f, &bytes))
				TH_LOG("ingress class %d family %d", c, f);
			EXPECT_EQ(want_bytes[c][f], bytes);
			EXPECT_EQ(want_pkts[c][f], count(self->skel, QOS_DIR_EGRESS, c, f, &bytes))
				TH_LOG("egress class %d family %d", c, f);
			EXPECT_EQ(want_bytes[c][f], bytes);
		}
	}
}

/* The class decided at ingress wins over the DSCP at egress: a PIP-marked
 * packet that ingress put in LBE (as a policer's demotion would) is queued
 * in LBE. */
TEST_F(classify, egress_follows_mark)
{
	static struct run_result r;
	static struct pkt p;
	uint64_t bytes;

	build(&p, SHAPE_V6, 46);
	pkt_run(self->egress, &p, OTHER_BITS | CLS_LBE << MARK_SHIFT, &r);
	ASSERT_EQ(0, r.err);
	EXPECT_EQ(classid(CLS_LBE), r.ctx.priority);
	EXPECT_EQ(1, count(self->skel, QOS_DIR_EGRESS, CLS_LBE, QOS_FAM_IPV6, &bytes));
	EXPECT_EQ(0, count(self->skel, QOS_DIR_EGRESS, CLS_PIP, QOS_FAM_IPV6, &bytes));

	build(&p, SHAPE_V4, 0);
	pkt_run(self->egress, &p, CLS_PIP << MARK_SHIFT, &r);
	EXPECT_EQ(classid(CLS_PIP), r.ctx.priority);
	EXPECT_EQ(1, count(self->skel, QOS_DIR_EGRESS, CLS_PIP, QOS_FAM_IPV4, &bytes));
}

/* A 6in4 packet: outer DSCP @outer, inner Traffic Class @inner; with
 * @bad_inner, an inner header of version 4 that does not parse. */
static void build_6in4(struct pkt *p, uint8_t outer, uint8_t inner, bool bad_inner)
{
	pkt_init(p);
	pkt_eth(p);
	pkt_ipv4(p, outer << 2, IPPROTO_IPV6, 0);
	pkt_ipv6(p, inner << 2 | 2, 0x12345, IPPROTO_UDP);
	pkt_payload(p, 8 + 32);
	pkt_end(p, ETH_HLEN);
	if (bad_inner)
		p->buf[p->l3] = 0x45;
}

/*
 * tunnel-dscp (RFC 2983): by default (auto) 6in4 is classified by the
 * outer DSCP it is forwarded with, and by the inner Traffic Class only when
 * the outer one is 0; outer and inner force one header. An inner header
 * that does not parse leaves the outer one in every mode. Both programs,
 * the packet unchanged, counted as ipv6in4 in the class.
 */
TEST_F(classify, tunnel_dscp)
{
	static const struct {
		uint8_t outer, inner;
		bool bad;
		uint32_t cls[QOS_TUNNEL_MAX];	/* auto, outer, inner */
	} cases[] = {
		{ 46, 0, false, { CLS_PIP, CLS_PIP, CLS_BE } },
		{ 0, 46, false, { CLS_PIP, CLS_BE, CLS_PIP } },
		{ 8, 46, false, { CLS_LBE, CLS_LBE, CLS_PIP } },
		{ 46, 0, true, { CLS_PIP, CLS_PIP, CLS_PIP } },
		{ 0, 46, true, { CLS_BE, CLS_BE, CLS_BE } },
	};
	uint64_t want[QOS_MAX_CLASSES] = {}, bytes;
	static struct qos_profile prof;
	static struct run_result r;
	static struct pkt p;
	struct qos_cfg cfg;
	char err[512];
	uint32_t m, c, cls;
	size_t i;

	ASSERT_EQ(0, qos_profile_load(QOS_SRCDIR "/tc-profiles/pip-20pct", &prof, err,
				      sizeof(err))) TH_LOG("%s", err);
	qos_profile_fill_cfg(&prof, &cfg);
	ASSERT_EQ(QOS_TUNNEL_AUTO, cfg.tunnel_dscp);
	for (m = 0; m < QOS_TUNNEL_MAX; m++) {
		cfg.tunnel_dscp = m;
		ASSERT_EQ(0, qos_test_cfg_put(self->skel, &cfg));
		for (i = 0; i < ARRAY_SIZE(cases); i++) {
			cls = cases[i].cls[m];
			build_6in4(&p, cases[i].outer, cases[i].inner, cases[i].bad);
			pkt_run(self->ingress, &p, 0, &r);
			ASSERT_EQ(0, r.err);
			EXPECT_EQ(cls << MARK_SHIFT, r.ctx.mark)
				TH_LOG("mode %u outer %u inner %u%s", m, cases[i].outer,
				       cases[i].inner, cases[i].bad ? " (bad)" : "");
			EXPECT_EQ(0, memcmp(p.buf, r.out, p.len));
			pkt_run(self->egress, &p, 0, &r);
			ASSERT_EQ(0, r.err);
			EXPECT_EQ(classid(cls), r.ctx.priority)
				TH_LOG("egress: mode %u outer %u inner %u%s", m, cases[i].outer,
				       cases[i].inner, cases[i].bad ? " (bad)" : "");
			want[cls]++;
		}
	}
	for (c = 0; c < QOS_MAX_CLASSES; c++) {
		EXPECT_EQ(want[c], count(self->skel, QOS_DIR_INGRESS, c, QOS_FAM_IPV6IN4, &bytes))
			TH_LOG("ingress class %u", c);
		EXPECT_EQ(want[c], count(self->skel, QOS_DIR_EGRESS, c, QOS_FAM_IPV6IN4, &bytes))
			TH_LOG("egress class %u", c);
	}
	for (c = 0; c < QOS_UNP_MAX; c++)
		EXPECT_EQ(0, unparsed(self->skel, QOS_DIR_INGRESS, c));
}

/* Unconfigured (map entry still zero): nothing is touched. */
TEST(unconfigured_passes)
{
	static struct run_result r;
	static struct pkt p;
	struct qos *skel = qos__open_and_load();

	ASSERT_NE(NULL, skel);
	build(&p, SHAPE_V4, 46);
	pkt_run(bpf_program__fd(skel->progs.qos_ingress), &p, 0x1234, &r);
	EXPECT_EQ(TC_ACT_UNSPEC, r.retval);
	EXPECT_EQ(0x1234, r.ctx.mark);
	qos__destroy(skel);
}

struct bad_case {
	const char *name;
	uint32_t reason;
};

/* Not IP, or not parseable: passed unchanged, mark untouched, counted under
 * its reason in both directions; at egress queued in the default class. */
TEST_F(classify, unparsed_pass_untouched)
{
	static struct run_result r;
	static struct pkt p;
	uint64_t want[QOS_UNP_MAX] = {};
	int i, prog, dir;

	for (i = 0; i < 7; i++) {
		uint32_t reason;

		pkt_init(&p);
		pkt_eth(&p);
		switch (i) {
		case 0:	/* ARP */
			pkt_ethertype(&p, ETH_P_ARP);
			pkt_payload(&p, 28);
			reason = QOS_UNP_NON_IP;
			break;
		/* Truncated IP goes behind a tag: bpf_prog_test_run refuses an
		 * untagged IP frame shorter than its header, though the stack
		 * hands such frames to tc ingress. Same parser path. */
		case 1:	/* IPv4 cut inside its header */
			pkt_vlan(&p, ETH_P_8021Q, 7);
			pkt_ipv4(&p, 46 << 2, IPPROTO_UDP, 0);
			p.len -= 10;
			reason = QOS_UNP_TRUNCATED;
			break;
		case 2:	/* IPv6 cut inside its header */
			pkt_vlan(&p, ETH_P_8021Q, 7);
			pkt_ipv6(&p, 46 << 2, 0, IPPROTO_UDP);
			p.len -= 20;
			reason = QOS_UNP_TRUNCATED;
			break;
		case 3:	/* IHL below 5 */
			pkt_ipv4(&p, 46 << 2, IPPROTO_UDP, 0);
			pkt_payload(&p, 20);
			((struct iphdr *)(p.buf + p.l3))->ihl = 4;
			reason = QOS_UNP_BAD_HDR;
			break;
		case 4:	/* ethertype IPv4, version 6 */
			pkt_ipv6(&p, 46 << 2, 0, IPPROTO_UDP);
			pkt_ethertype(&p, ETH_P_IP);
			pkt_payload(&p, 8);
			reason = QOS_UNP_BAD_HDR;
			break;
		case 5:	/* VLAN tag cut short */
			pkt_vlan(&p, ETH_P_8021Q, 7);
			p.len -= 2;
			reason = QOS_UNP_TRUNCATED;
			break;
		default: /* three tags: deeper than the parser walks */
			pkt_vlan(&p, ETH_P_8021AD, 1);
			pkt_vlan(&p, ETH_P_8021Q, 2);
			pkt_vlan(&p, ETH_P_8021Q, 3);
			pkt_ipv4(&p, 46 << 2, IPPROTO_UDP, 0);
			pkt_payload(&p, 8);
			reason = QOS_UNP_NON_IP;
			break;
		}
		for (dir = 0; dir < QOS_DIR_MAX; dir++) {
			prog = dir == QOS_DIR_INGRESS ? self->ingress : self->egress;
			pkt_run(prog, &p, OTHER_BITS, &r);
			ASSERT_EQ(0, r.err) TH_LOG("case %d", i);
			EXPECT_EQ(TC_ACT_UNSPEC, r.retval) TH_LOG("case %d", i);
			EXPECT_EQ(OTHER_BITS, r.ctx.mark) TH_LOG("case %d", i);
			/* Egress queues them in the default class itself. */
			EXPECT_EQ(dir == QOS_DIR_EGRESS ? classid(CLS_BE) : 0, r.ctx.priority)
				TH_LOG("case %d", i);
			EXPECT_EQ(p.len, r.out_len);
			EXPECT_EQ(0, memcmp(p.buf, r.out, p.len)) TH_LOG("case %d", i);
		}
		want[reason]++;
	}
	for (i = QOS_UNP_NONE + 1; i < QOS_UNP_MAX; i++) {
		EXPECT_EQ(want[i], unparsed(self->skel, QOS_DIR_INGRESS, i)) TH_LOG("reason %d", i);
		EXPECT_EQ(want[i], unparsed(self->skel, QOS_DIR_EGRESS, i)) TH_LOG("reason %d", i);
	}
}

TEST_HARNESS_MAIN
