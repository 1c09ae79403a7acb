// SPDX-License-Identifier: GPL-2.0-only
/*
 * Every parse path of bpf/lib/parse.h, through both programs, with crafted
 * packets: VLAN and QinQ, IPv4 options and fragments, each IPv6 extension
 * header and chains of them, IPv6-in-IPv4, and malformed packets (truncated
 * at every byte, bad IHL, bad lengths, extension-header chains that break
 * the rules or the walk's bound). Then a randomized run of random and mutated
 * packets: nothing is ever dropped or modified, and classified + unparsed
 * counters add up to exactly the packets run.
 *
 * The configuration is tc-profiles/pip-20pct plus one rule, "protocol UDP ->
 * LBE", installed straight into the maps: it makes the ingress program walk
 * IPv6 extension headers, and the class tells whether the walk reached UDP
 * (LBE), stopped elsewhere (BE, or PIP from DSCP 46), or gave up (unparsed).
 * The ports test adds "UDP destination port 42405 -> PIP" ahead of it: the
 * payload's 0xa5 bytes are where the ports are, so every UDP packet whose
 * ports the parser reaches moves to PIP, and a later fragment, which has no
 * ports, stays with the protocol rule.
 */
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <stdlib.h>
#include <time.h>

#include "kselftest_harness.h"
#include "pkt.h"
#include "qos_test.h"

#define UDP_CLASS	CLS_LBE
#define RULE_ID		7

/* Install "proto 17 -> UDP_CLASS" for both families, by hand: this test is
 * about the parser, not qosctl's rule manager. */
static int install_udp_rule(struct qos *skel, struct qos_cfg *cfg)
{
	struct qos_rule_maps m = qos_test_rule_maps(skel);
	struct qos_rule_val val = { .rank = RULE_ID, .id = RULE_ID, .class_id = UDP_CLASS };
	struct qos_rule_set set = { .n = { 1, 1 } };
	uint32_t t;

	for (t = 0; t < QOS_TABLE_MAX; t++) {
		struct qos_rule_key key = { .table = t, .proto = IPPROTO_UDP,
					    .mask = QOS_RULE_M_PROTO };
		struct qos_rule_shape *s = &set.shape[t][0];

		s->table = t;
		s->proto_mask = 0xff;
		s->mask = QOS_RULE_M_PROTO;
		s->min_rank = val.rank;
		if (qos_rule_entry_put(&m, &key, &val))
			return -errno;
	}
	cfg->rs = set;
	cfg->rules = QOS_RULES_V4 | QOS_RULES_V6 | QOS_RULES_L4;
	return qos_test_cfg_put(skel, cfg);
}

#define PORT_CLASS	CLS_PIP
#define PORT_RULE_ID	8
#define PORT		0xa5a5	/* what pkt_payload() writes */

/* Add "proto 17 dport PORT -> PORT_CLASS", ranked ahead of the UDP rule,
 * as the first shape of both families. */
static int install_port_rule(struct qos *skel, struct qos_cfg *cfg)
{
	struct qos_rule_maps m = qos_test_rule_maps(skel);
	struct qos_rule_val val = { .rank = 1, .id = PORT_RULE_ID, .class_id = PORT_CLASS };
	uint32_t t, mask = QOS_RULE_M_PROTO | 16U << QOS_RULE_M_DPORT_SHIFT;

	for (t = 0; t < QOS_TABLE_MAX; t++) {
		struct qos_rule_key key = { .table = t, .proto = IPPROTO_UDP, .mask = mask,
					    .dport = htons(PORT) };
		struct qos_rule_shape *s = cfg->rs.shape[t];

		s[1] = s[0];
		s[0].mask = mask;
		s[0].dport_mask = 0xffff;
		s[0].min_rank = val.rank;
		cfg->rs.n[t] = 2;
		if (qos_rule_entry_put(&m, &key, &val))
			return -errno;
	}
	cfg->rules |= QOS_RULES_PORTS;
	return qos_test_cfg_put(skel, cfg);
}

struct ext {
	uint8_t type;
	uint8_t len;
	uint16_t frag;		/* Fragment header offset field */
};

/* A packet, and what the programs must make of it. */
struct pcase {
	const char *name;
	uint8_t tags;		/* 0, 1 (802.1Q), 2 (802.1ad + 802.1Q) */
	uint8_t l3;		/* 4, 6, or 46 for IPv6 in IPv4 */
	uint8_t opt;		/* (outer) IPv4 option bytes */
	uint16_t frag;		/* (outer) IPv4 frag_off, host order */
	uint8_t dscp;
	uint8_t proto;		/* upper-layer protocol */
	uint8_t next;		/* extension headers in ext[] */
	struct ext ext[24];
	void (*mutate)(struct pkt *p);
	uint32_t reason;	/* QOS_UNP_NONE: classified as cls/fam */
	uint32_t cls;
	uint32_t fam;
};

#define HBH(n)		{ IPPROTO_HOPOPTS, n, 0 }
#define RT(n)		{ IPPROTO_ROUTING, n, 0 }
#define DST(n)		{ IPPROTO_DSTOPTS, n, 0 }
#define AH(n)		{ IPPROTO_AH, n, 0 }
#define FRAG(f)		{ IPPROTO_FRAGMENT, 8, f }
#define DST8		DST(8)
#define V4		QOS_FAM_IPV4
#define V6		QOS_FAM_IPV6
#define V6IN4		QOS_FAM_IPV6IN4
#define UDP		IPPROTO_UDP
#define TCP		IPPROTO_TCP

static void build(struct pkt *p, const struct pcase *c)
{
	size_t l3;
	int i;

	pkt_init(p);
	pkt_eth(p);
	if (c->tags >= 2)
		pkt_vlan(p, ETH_P_8021AD, 200);
	if (c->tags >= 1)
		pkt_vlan(p, ETH_P_8021Q, 100);
	l3 = p->len;
	if (c->l3 != 6) {
		struct iphdr *ip = pkt_ipv4(p, c->dscp << 2, c->l3 == 4 ? c->proto : IPPROTO_IPV6,
					    c->opt);

		ip->frag_off = htons(c->frag);
	}
	/* A later fragment of 6in4 carries no inner header. */
	if (c->l3 == 6 || (c->l3 == 46 && !(c->frag & 0x1fff))) {
		pkt_ipv6(p, c->dscp << 2, 0x12345, c->proto);
		for (i = 0; i < c->next; i++)
			pkt_ipv6_ext(p, c->ext[i].type, c->ext[i].len, c->ext[i].frag);
	}
	pkt_payload(p, 8 + 32);
	pkt_end(p, l3);
	if (c->mutate)
		c->mutate(p);
}

/* Offset of the first IP header of a built packet. */
static size_t l3_of(const struct pkt *p)
{
	size_t off = 12;

	while (p->buf[off] == 0x81 || p->buf[off] == 0x88)
		off += 4;
	return off + 2;
}

static struct iphdr *ip4_of(struct pkt *p)
{
	return (struct iphdr *)(p->buf + l3_of(p));
}

static struct ipv6hdr *ip6_of(struct pkt *p)
{
	return (struct ipv6hdr *)(p->buf + p->l3);
}

static void ihl_0(struct pkt *p)
{
	ip4_of(p)->ihl = 0;
}

static void tot_below_ihl(struct pkt *p)
{
	ip4_of(p)->tot_len = htons(16);
}

static void tot_below_options(struct pkt *p)
{
	ip4_of(p)->tot_len = htons(40);	/* IHL says 60 */
}

static void tot_past_frame(struct pkt *p)
{
	struct iphdr *ip = ip4_of(p);

	ip->tot_len = htons(ntohs(ip->tot_len) + 1);
}

static void tot_zero(struct pkt *p)
{
	ip4_of(p)->tot_len = 0;
}

static void plen_past_frame(struct pkt *p)
{
	struct ipv6hdr *ip6 = ip6_of(p);

	ip6->payload_len = htons(ntohs(ip6->payload_len) + 1);
}

static void plen_8(struct pkt *p)
{
	ip6_of(p)->payload_len = htons(8);
}

static void plen_zero(struct pkt *p)
{
	ip6_of(p)->payload_len = 0;
}

/* Ethernet padding after the IP packet: the length field rules. */
static void pad_frame(struct pkt *p)
{
	memset(pkt_put(p, 16), 0, 16);
}

/* Padded frame, and an inner IPv6 that claims the padding too: past its
 * outer packet, though not past the frame. */
static void inner_past_outer(struct pkt *p)
{
	struct ipv6hdr *ip6 = ip6_of(p);

	pad_frame(p);
	ip6->payload_len = htons(ntohs(ip6->payload_len) + 8);
}

static void inner_past_frame(struct pkt *p)
{
	plen_past_frame(p);
}

static void inner_version_4(struct pkt *p)
{
	p->buf[p->l3] = 0x45;
}

/* The last extension header (AH) claims 1 KiB. */
static void ah_huge(struct pkt *p)
{
	p->buf[p->nexthdr + 1] = 255;
}

static void mpls(struct pkt *p)
{
	pkt_ethertype(p, 0x8847);
}

static const struct pcase cases[] = {
	/* IPv4 */
	{ "ipv4 udp", 0, 4, .proto = UDP, .cls = UDP_CLASS, .fam = V4 },
	{ "ipv4 tcp", 0, 4, .proto = TCP, .cls = CLS_BE, .fam = V4 },
	{ "ipv4 tcp ef", 0, 4, .dscp = 46, .proto = TCP, .cls = CLS_PIP, .fam = V4 },
	{ "ipv4 icmp", 0, 4, .proto = IPPROTO_ICMP, .cls = CLS_BE, .fam = V4 },
	{ "ipv4 vlan", 1, 4, .proto = UDP, .cls = UDP_CLASS, .fam = V4 },
	{ "ipv4 qinq", 2, 4, .proto = UDP, .cls = UDP_CLASS, .fam = V4 },
	{ "ipv4 options 4", 0, 4, 4, .proto = UDP, .cls = UDP_CLASS, .fam = V4 },
	{ "ipv4 options 40", 2, 4, 40, .proto = UDP, .cls = UDP_CLASS, .fam = V4 },
	{ "ipv4 first fragment", 0, 4, .frag = 0x2000, .proto = UDP, .cls = UDP_CLASS,
	  .fam = V4 },
	{ "ipv4 middle fragment", 0, 4, .frag = 0x2010, .proto = UDP, .cls = UDP_CLASS,
	  .fam = V4 },
	{ "ipv4 last fragment", 1, 4, 8, .frag = 0x0020, .proto = UDP, .cls = UDP_CLASS,
	  .fam = V4 },
	{ "ipv4 later fragment ef", 0, 4, .frag = 0x2010, .dscp = 46, .proto = TCP,
	  .cls = CLS_PIP, .fam = V4 },
	{ "ipv4 padded frame", 0, 4, .proto = UDP, .mutate = pad_frame, .cls = UDP_CLASS,
	  .fam = V4 },
	{ "ipv4 total length 0 (BIG TCP)", 0, 4, .proto = UDP, .mutate = tot_zero,
	  .cls = UDP_CLASS, .fam = V4 },

	/* IPv6 and its extension headers */
	{ "ipv6 udp", 0, 6, .proto = UDP, .cls = UDP_CLASS, .fam = V6 },
	{ "ipv6 tcp", 0, 6, .proto = TCP, .cls = CLS_BE, .fam = V6 },
	{ "ipv6 tcp ef", 0, 6, .dscp = 46, .proto = TCP, .cls = CLS_PIP, .fam = V6 },
	{ "ipv6 icmpv6", 0, 6, .proto = IPPROTO_ICMPV6, .next = 1, .ext = { DST8 },
	  .cls = CLS_BE, .fam = V6 },
	{ "ipv6 vlan", 1, 6, .proto = UDP, .cls = UDP_CLASS, .fam = V6 },
	{ "ipv6 qinq", 2, 6, .proto = UDP, .cls = UDP_CLASS, .fam = V6 },
	{ "ipv6 hop-by-hop", 0, 6, .proto = UDP, .next = 1, .ext = { HBH(8) },
	  .cls = UDP_CLASS, .fam = V6 },
	{ "ipv6 hop-by-hop 64", 0, 6, .proto = UDP, .next = 1, .ext = { HBH(64) },
	  .cls = UDP_CLASS, .fam = V6 },
	{ "ipv6 routing", 0, 6, .proto = UDP, .next = 1, .ext = { RT(24) },
	  .cls = UDP_CLASS, .fam = V6 },
	{ "ipv6 destination options", 0, 6, .proto = UDP, .next = 1, .ext = { DST8 },
	  .cls = UDP_CLASS, .fam = V6 },
	{ "ipv6 ah", 0, 6, .proto = UDP, .next = 1, .ext = { AH(12) },
	  .cls = UDP_CLASS, .fam = V6 },
	{ "ipv6 ah 24", 1, 6, .proto = UDP, .next = 1, .ext = { AH(24) },
	  .cls = UDP_CLASS, .fam = V6 },
	{ "ipv6 atomic fragment", 0, 6, .proto = UDP, .next = 1, .ext = { FRAG(0) },
	  .cls = UDP_CLASS, .fam = V6 },
	{ "ipv6 first fragment", 0, 6, .proto = UDP, .next = 1, .ext = { FRAG(1) },
	  .cls = UDP_CLASS, .fam = V6 },
	{ "ipv6 later fragment", 0, 6, .proto = UDP, .next = 1, .ext = { FRAG(0x100) },
	  .cls = UDP_CLASS, .fam = V6 },
	{ "ipv6 later fragment ef", 0, 6, .dscp = 46, .proto = TCP, .next = 1,
	  .ext = { FRAG(0x101) }, .cls = CLS_PIP, .fam = V6 },
	/* The fragmentable part starts with Destination Options: that is
	 * what a later fragment can tell. */
	{ "ipv6 later fragment, dstopts after", 0, 6, .proto = UDP, .next = 2,
	  .ext = { FRAG(0x100), DST8 }, .cls = CLS_BE, .fam = V6 },
	{ "ipv6 chain of 6", 0, 6, .proto = UDP, .next = 6,
	  .ext = { HBH(8), DST(16), RT(24), FRAG(1), AH(16), DST8 }, .cls = UDP_CLASS,
	  .fam = V6 },
	{ "ipv6 chain of 8", 2, 6, .proto = UDP, .next = 8,
	  .ext = { HBH(8), DST8, RT(8), DST8, FRAG(0), AH(12), AH(12), DST8 },
	  .cls = UDP_CLASS, .fam = V6 },
	{ "ipv6 esp", 0, 6, .proto = IPPROTO_ESP, .next = 1, .ext = { HBH(8) },
	  .cls = CLS_BE, .fam = V6 },
	{ "ipv6 no next header", 0, 6, .proto = IPPROTO_NONE, .next = 1, .ext = { DST8 },
	  .cls = CLS_BE, .fam = V6 },
	{ "ipv6 padded frame", 0, 6, .proto = UDP, .next = 1, .ext = { DST8 },
	  .mutate = pad_frame, .cls = UDP_CLASS, .fam = V6 },
	{ "ipv6 payload length 0 (jumbo, BIG TCP)", 0, 6, .proto = UDP, .next = 1,
	  .ext = { HBH(8) }, .mutate = plen_zero, .cls = UDP_CLASS, .fam = V6 },

	/* IPv6 in IPv4 */
	{ "6in4 udp", 0, 46, .proto = UDP, .cls = UDP_CLASS, .fam = V6IN4 },
	{ "6in4 ef", 0, 46, .dscp = 46, .proto = TCP, .cls = CLS_PIP, .fam = V6IN4 },
	{ "6in4 qinq, outer options", 2, 46, 20, .proto = UDP, .cls = UDP_CLASS,
	  .fam = V6IN4 },
	{ "6in4 inner chain", 1, 46, .proto = UDP, .next = 3,
	  .ext = { HBH(8), FRAG(0), DST8 }, .cls = UDP_CLASS, .fam = V6IN4 },
	{ "6in4 outer first fragment", 0, 46, .frag = 0x2000, .proto = UDP,
	  .mutate = inner_past_frame, .cls = UDP_CLASS, .fam = V6IN4 },
	{ "6in4 outer later fragment", 0, 46, .frag = 0x0040, .proto = UDP,
	  .cls = CLS_BE, .fam = V6IN4 },
	{ "6in4 outer later fragment ef", 0, 46, .frag = 0x2040, .dscp = 46,
	  .cls = CLS_PIP, .fam = V6IN4 },
	/* An inner header that does not parse: classified (and policed) by
	 * the outer one, no rule on the inner addresses or ports. */
	{ "6in4 inner version 4", 0, 46, .dscp = 46, .proto = UDP, .mutate = inner_version_4,
	  .cls = CLS_PIP, .fam = V6IN4 },
	{ "6in4 inner past outer packet", 0, 46, .proto = UDP, .mutate = inner_past_outer,
	  .cls = CLS_BE, .fam = V6IN4 },
	{ "6in4 inner past frame", 0, 46, .dscp = 46, .proto = UDP, .mutate = inner_past_frame,
	  .cls = CLS_PIP, .fam = V6IN4 },
	{ "6in4 inner chain of 9", 0, 46, .dscp = 46, .proto = UDP, .next = 9,
	  .ext = { HBH(8), DST8, DST8, DST8, DST8, DST8, DST8, DST8, DST8 },
	  .cls = CLS_PIP, .fam = V6IN4 },

	/* Malformed or unknown: passed, counted by reason */
	{ "mpls", 0, 4, .proto = UDP, .mutate = mpls, .reason = QOS_UNP_NON_IP },
	{ "ipv4 ihl 0", 0, 4, .proto = UDP, .mutate = ihl_0, .reason = QOS_UNP_BAD_HDR },
	{ "ipv4 total length below ihl", 0, 4, .proto = UDP, .mutate = tot_below_ihl,
	  .reason = QOS_UNP_BAD_LEN },
	{ "ipv4 total length below options", 0, 4, 40, .proto = UDP,
	  .mutate = tot_below_options, .reason = QOS_UNP_BAD_LEN },
	{ "ipv4 total length past frame", 0, 4, .proto = UDP, .mutate = tot_past_frame,
	  .reason = QOS_UNP_TRUNCATED },
	{ "ipv6 payload length past frame", 0, 6, .proto = UDP, .mutate = plen_past_frame,
	  .reason = QOS_UNP_TRUNCATED },
	{ "ipv6 payload length shorter than chain", 0, 6, .proto = UDP, .next = 1,
	  .ext = { HBH(16) }, .mutate = plen_8, .reason = QOS_UNP_BAD_LEN },
	{ "ipv6 ah past frame", 0, 6, .proto = UDP, .next = 2, .ext = { DST8, AH(12) },
	  .mutate = ah_huge, .reason = QOS_UNP_TRUNCATED },
	{ "ipv6 hop-by-hop not first", 0, 6, .proto = UDP, .next = 2,
	  .ext = { DST8, HBH(8) }, .reason = QOS_UNP_BAD_EXT },
	{ "ipv6 hop-by-hop twice", 0, 6, .proto = UDP, .next = 2,
	  .ext = { HBH(8), HBH(8) }, .reason = QOS_UNP_BAD_EXT },
	{ "ipv6 chain of 9", 0, 6, .proto = UDP, .next = 9,
	  .ext = { DST8, DST8, DST8, DST8, DST8, DST8, DST8, DST8, DST8 },
	  .reason = QOS_UNP_EXT_CHAIN },
	{ "ipv6 routing loop of 24", 0, 6, .proto = UDP, .next = 24,
	  .ext = { RT(8), RT(8), RT(8), RT(8), RT(8), RT(8), RT(8), RT(8),
		   RT(8), RT(8), RT(8), RT(8), RT(8), RT(8), RT(8), RT(8),
		   RT(8), RT(8), RT(8), RT(8), RT(8), RT(8), RT(8), RT(8) },
	  .reason = QOS_UNP_EXT_CHAIN },
};

FIXTURE(parse)
{
	struct qos *skel;
	struct qos_cfg cfg;
	int prog[QOS_DIR_MAX];
};

FIXTURE_SETUP(parse)
{
	static struct qos_profile prof;

	self->skel = qos_test_load(0);
	ASSERT_NE(NULL, self->skel) TH_LOG("loading the BPF object: %s", strerror(errno));
	self->prog[QOS_DIR_INGRESS] = bpf_program__fd(self->skel->progs.qos_ingress);
	self->prog[QOS_DIR_EGRESS] = bpf_program__fd(self->skel->progs.qos_egress);
	ASSERT_EQ(0, qos_test_profile(self->skel, "pip-20pct", &prof, &self->cfg));
	ASSERT_EQ(0, install_udp_rule(self->skel, &self->cfg));
}

FIXTURE_TEARDOWN(parse)
{
	qos__destroy(self->skel);
}

/* A fragment other than the first: it carries no L4 header. */
static bool later_fragment(const struct pcase *pc)
{
	int i;

	if (pc->l3 != 6 && (pc->frag & 0x1fff))
		return true;
	for (i = 0; i < pc->next; i++)
		if (pc->ext[i].type == IPPROTO_FRAGMENT && (pc->ext[i].frag & 0xfff8))
			return true;
	return false;
}

/*
 * Each case through both programs: class in the mark (ingress) and in
 * skb->priority (egress, unmarked), the packet unchanged, and exact
 * counters per class, family and unparsed reason, and of each rule. With
 * @ports, a UDP packet with ports goes to the port rule.
 */
static void run_table(struct __test_metadata *_metadata, FIXTURE_DATA(parse) *self, bool ports)
{
	uint64_t want[QOS_MAX_CLASSES][QOS_FAM_MAX] = {}, want_unp[QOS_UNP_MAX] = {};
	struct qos_rule_maps m = qos_test_rule_maps(self->skel);
	uint64_t want_hits = 0, want_port_hits = 0;
	static struct run_result r;
	static struct pkt p;
	size_t i;
	int d, c, f;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct pcase pcv = cases[i], *pc = &pcv;

		if (ports && !pc->reason && pc->cls == UDP_CLASS && !later_fragment(pc)) {
			pc->cls = PORT_CLASS;
			want_port_hits += 2;
		}

		build(&p, pc);
		for (d = 0; d < QOS_DIR_MAX; d++) {
			pkt_run(self->prog[d], &p, 0, &r);
			ASSERT_EQ(0, r.err) TH_LOG("%s: %s", pc->name, strerror(-r.err));
			EXPECT_EQ(TC_ACT_UNSPEC, r.retval) TH_LOG("%s", pc->name);
			ASSERT_EQ(p.len, r.out_len) TH_LOG("%s", pc->name);
			EXPECT_EQ(0, memcmp(p.buf, r.out, p.len)) TH_LOG("%s: modified", pc->name);
			if (pc->reason) {
				/* Unparsed: egress queues it in the default class. */
				EXPECT_EQ(0, r.ctx.mark) TH_LOG("%s", pc->name);
				EXPECT_EQ(d == QOS_DIR_EGRESS ? 0x10010 + CLS_BE : 0, r.ctx.priority)
					TH_LOG("%s", pc->name);
			} else if (d == QOS_DIR_INGRESS) {
				EXPECT_EQ(pc->cls << MARK_SHIFT, r.ctx.mark) TH_LOG("%s", pc->name);
			} else {
				EXPECT_EQ(0x10010 + pc->cls, r.ctx.priority) TH_LOG("%s", pc->name);
			}
		}
		if (pc->reason)
			want_unp[pc->reason]++;
		else
			want[pc->cls][pc->fam]++;
		if (!pc->reason && pc->cls == UDP_CLASS)
			want_hits += 2;
	}
	for (d = 0; d < QOS_DIR_MAX; d++) {
		for (c = 0; c < QOS_MAX_CLASSES; c++) {
			for (f = 0; f < QOS_FAM_MAX; f++) {
				EXPECT_EQ(want[c][f], qos_test_class_pkts(self->skel, d, c, f))
					TH_LOG("dir %d class %d family %d", d, c, f);
			}
		}
		for (c = 0; c < QOS_UNP_MAX; c++) {
			EXPECT_EQ(want_unp[c], qos_test_unparsed_pkts(self->skel, d, c))
				TH_LOG("dir %d unparsed reason %d", d, c);
		}
	}
	EXPECT_EQ(want_hits, qos_test_rule_hits(&m, RULE_ID).packets);
	/* Without the port rule, its id's counters stay at zero. */
	EXPECT_EQ(want_port_hits, qos_test_rule_hits(&m, PORT_RULE_ID).packets);
}

TEST_F(parse, table)
{
	run_table(_metadata, self, false);
}

/* The same packets with a port rule: the ports are found after VLAN tags,
 * IPv4 options and IPv6 extension headers, in first fragments and 6in4, and
 * neither in later fragments nor in TCP or ICMP. */
TEST_F(parse, ports)
{
	ASSERT_EQ(0, install_port_rule(self->skel, &self->cfg));
	run_table(_metadata, self, true);
}

/* Without a protocol rule the extension headers are not walked: a chain
 * the walk would refuse is classified on its Traffic Class. */
TEST_F(parse, no_walk_without_protocol_rules)
{
	static struct pcase pc = { "chain of 9, ef", 0, 6, .dscp = 46, .proto = UDP, .next = 9,
				   .ext = { DST8, DST8, DST8, DST8, DST8, DST8, DST8, DST8, DST8 } };
	static struct run_result r;
	static struct pkt p;

	self->cfg.rules = 0;
	ASSERT_EQ(0, qos_test_cfg_put(self->skel, &self->cfg));
	build(&p, &pc);
	pkt_run(self->prog[QOS_DIR_INGRESS], &p, 0, &r);
	ASSERT_EQ(0, r.err);
	EXPECT_EQ(CLS_PIP << MARK_SHIFT, r.ctx.mark);
	EXPECT_EQ(0, qos_test_unparsed_pkts(self->skel, QOS_DIR_INGRESS, QOS_UNP_EXT_CHAIN));
}

/* Cut every packet shape at every byte from the end of the Ethernet header
 * to one short of its length: always truncated, never dropped, never
 * classified. The shapes carry a tag because bpf_prog_test_run refuses an
 * untagged IP frame shorter than its IP header (the stack does hand such
 * frames to tc); the parser path is the same. */
TEST_F(parse, truncated_everywhere)
{
	static const struct pcase bases[] = {
		{ "ipv4 options", 1, 4, 12, .proto = UDP },
		{ "ipv4 qinq", 2, 4, .proto = TCP },
		{ "ipv6 chain of 6", 1, 6, .proto = UDP, .next = 6,
		  .ext = { HBH(8), DST(16), RT(24), FRAG(1), AH(16), DST8 } },
		{ "ipv6 qinq", 2, 6, .proto = UDP },
		{ "6in4 inner chain", 1, 46, 4, .proto = UDP, .next = 3,
		  .ext = { HBH(8), FRAG(0), AH(12) } },
	};
	static struct run_result r;
	static struct pkt p, cut;
	uint64_t runs = 0;
	size_t i, len;
	int d;

	for (i = 0; i < ARRAY_SIZE(bases); i++) {
		build(&p, &bases[i]);
		for (len = ETH_HLEN; len < p.len; len++) {
			cut = p;
			cut.len = len;
			for (d = 0; d < QOS_DIR_MAX; d++) {
				pkt_run(self->prog[d], &cut, 0, &r);
				ASSERT_EQ(0, r.err) TH_LOG("%s cut at %zu", bases[i].name, len);
				EXPECT_EQ(TC_ACT_UNSPEC, r.retval);
				EXPECT_EQ(0, r.ctx.mark) TH_LOG("%s cut at %zu", bases[i].name, len);
				EXPECT_EQ(d == QOS_DIR_EGRESS ? 0x10010 + CLS_BE : 0, r.ctx.priority);
			}
			runs++;
		}
	}
	for (d = 0; d < QOS_DIR_MAX; d++) {
		EXPECT_EQ(runs, qos_test_unparsed_pkts(self->skel, d, QOS_UNP_TRUNCATED));
		EXPECT_EQ(runs, qos_test_total(self->skel, d));
	}
}

#define FUZZ_PACKETS	120000

/* One random frame: a table case damaged by a few random edits, or plain
 * random bytes behind a plausible ethertype. */
static void random_packet(struct pkt *p, unsigned int *seed)
{
	static const uint16_t types[] = { ETH_P_IP, ETH_P_IPV6, ETH_P_8021Q, ETH_P_8021AD,
					  ETH_P_ARP, 0x8847 };
	int i, n;

	if (rand_r(seed) % 8 == 0) {
		pkt_init(p);
		pkt_eth(p);
		pkt_ethertype(p, types[rand_r(seed) % ARRAY_SIZE(types)]);
		n = rand_r(seed) % 200;
		for (i = 0; i < n; i++)
			*(uint8_t *)pkt_put(p, 1) = rand_r(seed);
		return;
	}
	build(p, &cases[rand_r(seed) % ARRAY_SIZE(cases)]);
	n = rand_r(seed) % 4;
	for (i = 0; i < n; i++) {
		size_t off = ETH_HLEN + rand_r(seed) % 120;

		if (off < p->len)
			p->buf[off] = rand_r(seed);
	}
	if (rand_r(seed) % 4 == 0)
		p->len = ETH_HLEN + rand_r(seed) % (p->len - ETH_HLEN + 1);
}

/* Nothing is dropped or modified, and every packet run is counted exactly
 * once, as classified or as unparsed. */
TEST_F(parse, random_packets)
{
	unsigned int seed = getenv("QOS_FUZZ_SEED") ? atoi(getenv("QOS_FUZZ_SEED")) : time(NULL);
	uint64_t runs[QOS_DIR_MAX] = {}, refused = 0;
	static struct run_result r;
	static struct pkt p;
	int i, d;

	TH_LOG("seed %u (QOS_FUZZ_SEED to repeat)", seed);
	for (i = 0; i < FUZZ_PACKETS; i++) {
		random_packet(&p, &seed);
		for (d = 0; d < QOS_DIR_MAX; d++) {
			pkt_run(self->prog[d], &p, d == QOS_DIR_EGRESS ? rand_r(&seed) : 0, &r);
			/* test_run's own check on short untagged IP frames */
			if (r.err == -EINVAL) {
				refused++;
				continue;
			}
			ASSERT_EQ(0, r.err) TH_LOG("packet %d", i);
			ASSERT_EQ(TC_ACT_UNSPEC, r.retval) TH_LOG("packet %d", i);
			ASSERT_EQ(p.len, r.out_len);
			ASSERT_EQ(0, memcmp(p.buf, r.out, p.len)) TH_LOG("packet %d modified", i);
			runs[d]++;
		}
	}
	TH_LOG("%llu/%llu runs, %llu refused by test_run", (unsigned long long)runs[0],
	       (unsigned long long)runs[1], (unsigned long long)refused);
	ASSERT_GE(runs[QOS_DIR_INGRESS], 100000);
	for (d = 0; d < QOS_DIR_MAX; d++) {
		EXPECT_EQ(runs[d], qos_test_total(self->skel, d)) TH_LOG("dir %d", d);
	}
}

TEST_HARNESS_MAIN
