// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the diffserv4 and border profiles ask of the data path, with
 * crafted packets through bpf_prog_test_run_opts():
 *
 * - IPv6 neighbour discovery and router advertisements (ICMPv6 133-137)
 *   go to network control whatever their Traffic Class; other ICMPv6 does
 *   not; CS6/CS7 go there by DSCP;
 * - ARP leaves in the network-control class at egress;
 * - at a border, PIP leaves with DSCP 0: IPv4 checksum still valid, ECN
 *   bits kept, IPv6 flow label kept, everything else byte for byte, and
 *   the packet counted with verdict remark in its family.
 *
 * - with download shaping, ingress hands the IFB the class of the IFB's own
 *   tree, which a tree per TX queue at egress does not change.
 *
 * And what any profile asks of the kernel's memory: the estimate `qosctl
 * validate` prints, against the kernel's own accounting of the maps.
 *
 * Expected classes are written out from the profiles' documented intent
 * (1 nc, 2 pip, 3 be, 4 lbe), not derived from the configuration.
 */
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kselftest_harness.h"
#include "txn/plan.h"
#include "pkt.h"
#include "qos_test.h"

#define CLS_NC		1
#define CLS_PIP		2
#define CLS_BE		3
#define MARK_SHIFT	16
#define IPPROTO_ICMPV6_	58

static uint32_t classid(uint32_t cls)
{
	return 0x10000 | (0x10 + cls);
}

/* @profile: a name in tc-profiles/, or a path. */
static struct qos *load(const char *profile)
{
	static struct qos_profile prof;
	struct qos_cfg cfg;
	char err[512], path[512];
	struct qos *skel;

	skel = qos__open_and_load();
	if (!skel)
		return NULL;
	if (strchr(profile, '/'))
		snprintf(path, sizeof(path), "%s", profile);
	else
		snprintf(path, sizeof(path), "%s/tc-profiles/%s", QOS_SRCDIR, profile);
	if (qos_profile_load(path, &prof, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		qos__destroy(skel);
		return NULL;
	}
	qos_profile_fill_cfg(&prof, &cfg);
	if (qos_test_cfg_put(skel, &cfg)) {
		qos__destroy(skel);
		return NULL;
	}
	return skel;
}

/* load() a profile written from @fmt with one string argument. */
static struct qos *load_text(const char *fmt, const char *arg)
{
	char path[] = "/tmp/qos-profile-XXXXXX";
	struct qos *skel;
	FILE *f;
	int fd;

	fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(path);
		return NULL;
	}
	fprintf(f, fmt, arg);
	fclose(f);
	skel = load(path);
	unlink(path);
	return skel;
}

static uint64_t count(struct qos *skel, uint32_t dir, uint32_t cls, uint32_t fam,
		      uint32_t verdict)
{
	int ncpu = libbpf_num_possible_cpus();
	struct qos_ctr vals[ncpu];
	uint32_t key = qos_stats_key(dir, cls, fam, verdict);
	uint64_t pkts = 0;
	int i;

	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.qos_stats), &key, vals))
		return UINT64_MAX;
	for (i = 0; i < ncpu; i++)
		pkts += vals[i].packets;
	return pkts;
}

static void build_icmp6(struct pkt *p, uint8_t tclass, uint8_t type)
{
	size_t l3;

	pkt_init(p);
	pkt_eth(p);
	l3 = p->len;
	pkt_ipv6(p, tclass, 0, IPPROTO_ICMPV6_);
	pkt_payload(p, 24);
	p->buf[p->l3 + sizeof(struct ipv6hdr)] = type;
	pkt_end(p, l3);
}

TEST(diffserv4_network_control)
{
	static const struct {
		uint8_t type;
		uint32_t cls;
	} icmp[] = {
		{ 133, CLS_NC }, { 134, CLS_NC }, { 135, CLS_NC }, { 136, CLS_NC },
		{ 137, CLS_NC }, { 128, CLS_BE }, { 129, CLS_BE }, { 138, CLS_BE },
		{ 132, CLS_BE },
	};
	struct qos *skel = load("diffserv4");
	static struct run_result r;
	static struct pkt p;
	size_t i, l3;

	ASSERT_NE(NULL, skel);
	for (i = 0; i < sizeof(icmp) / sizeof(icmp[0]); i++) {
		build_icmp6(&p, 0, icmp[i].type);
		pkt_run(bpf_program__fd(skel->progs.qos_egress), &p, 0, &r);
		ASSERT_EQ(0, r.err);
		EXPECT_EQ(classid(icmp[i].cls), r.ctx.priority) TH_LOG("icmpv6 type %u", icmp[i].type);
		pkt_run(bpf_program__fd(skel->progs.qos_ingress), &p, 0, &r);
		EXPECT_EQ(icmp[i].cls << MARK_SHIFT, r.ctx.mark) TH_LOG("icmpv6 type %u", icmp[i].type);
	}

	/* CS6 and CS7 by DSCP, both families. */
	for (i = 0; i < 4; i++) {
		uint8_t dscp = i & 1 ? 56 : 48;

		pkt_init(&p);
		pkt_eth(&p);
		l3 = p.len;
		if (i < 2)
			pkt_ipv4(&p, dscp << 2, IPPROTO_TCP, 0);
		else
			pkt_ipv6(&p, dscp << 2, 7, IPPROTO_TCP);
		pkt_payload(&p, 20);
		pkt_end(&p, l3);
		pkt_run(bpf_program__fd(skel->progs.qos_egress), &p, 0, &r);
		EXPECT_EQ(classid(CLS_NC), r.ctx.priority) TH_LOG("dscp %u case %zu", dscp, i);
	}

	/* ARP: not IP, yet queued in network control, and untouched. */
	pkt_init(&p);
	pkt_eth(&p);
	pkt_ethertype(&p, ETH_P_ARP);
	pkt_payload(&p, 28);
	pkt_run(bpf_program__fd(skel->progs.qos_egress), &p, 0, &r);
	ASSERT_EQ(0, r.err);
	EXPECT_EQ(classid(CLS_NC), r.ctx.priority);
	EXPECT_EQ(0, memcmp(p.buf, r.out, p.len));
	qos__destroy(skel);
}

/* The pip-20pct profile has no nd-class: ND follows its Traffic Class. */
TEST(nd_without_nd_class)
{
	struct qos *skel = load("pip-20pct");
	static struct run_result r;
	static struct pkt p;

	ASSERT_NE(NULL, skel);
	build_icmp6(&p, 46 << 2, 135);
	pkt_run(bpf_program__fd(skel->progs.qos_egress), &p, 0, &r);
	EXPECT_EQ(classid(CLS_PIP), r.ctx.priority);
	qos__destroy(skel);
}

/* build PKT: Ethernet, IPv4 or IPv6 with DSCP @dscp and ECN @ecn, UDP
 * payload; the flow label is fixed so that it can be checked kept. */
static size_t build_udp(struct pkt *p, int v6, uint8_t dscp, uint8_t ecn)
{
	size_t l3;

	pkt_init(p);
	pkt_eth(p);
	l3 = p->len;
	if (v6)
		pkt_ipv6(p, dscp << 2 | ecn, 0xabcde, IPPROTO_UDP);
	else
		pkt_ipv4(p, dscp << 2 | ecn, IPPROTO_UDP, 0);
	pkt_payload(p, 40);
	pkt_end(p, l3);
	return l3;
}

static const char wash_profile[] =
	"[profile]\nscheduler = htb\ndefault = be\nwash = %s\n"
	"[class pip]\nid = 2\ndscp = 46\npriority = 0\nrate = 20%%\nceil = 20%%\n"
	"[class be]\nid = 3\npriority = 1\nrate = 70%%\n"
	"[class lbe]\nid = 4\ndscp = 8\npriority = 2\nrate = 10%%\negress-remark = 10\n";

/*
 * wash = yes: every class leaves with DSCP 0 after it was classified (the
 * qdisc class is kept), ECN and the flow label kept, the IPv4 checksum
 * valid; a class's own egress remark wins; a packet already at 0 is not
 * rewritten nor counted as remarked; the class in the mark (set at ingress)
 * is what is queued, whatever the DSCP. wash = no leaves every DSCP alone.
 */
TEST(wash)
{
	static const struct {
		uint8_t dscp_in;
		uint32_t mark_cls;	/* class stamped at ingress, 0: none */
		uint32_t cls;
		uint8_t dscp_out[2];	/* wash = no, wash = yes */
		uint32_t verdict[2];
	} cases[] = {
		{ 46, 0, CLS_PIP, { 46, 0 }, { QOS_V_PASS, QOS_V_REMARK } },
		{ 8, 0, 4, { 10, 10 }, { QOS_V_REMARK, QOS_V_REMARK } },
		{ 0, 0, CLS_BE, { 0, 0 }, { QOS_V_PASS, QOS_V_PASS } },
		{ 26, 0, CLS_BE, { 26, 0 }, { QOS_V_PASS, QOS_V_REMARK } },
		{ 10, CLS_PIP, CLS_PIP, { 10, 0 }, { QOS_V_PASS, QOS_V_REMARK } },
	};
	static struct run_result r;
	static struct pkt p, want;
	int egress, ecn, v6, w;
	struct qos *skel;
	unsigned int i;
	uint64_t expect[QOS_MAX_CLASSES][2][QOS_V_MAX];
	size_t l3;

	for (w = 0; w < 2; w++) {
		skel = load_text(wash_profile, w ? "yes" : "no");
		ASSERT_NE(NULL, skel);
		egress = bpf_program__fd(skel->progs.qos_egress);
		memset(expect, 0, sizeof(expect));

		for (i = 0; i < ARRAY_SIZE(cases); i++) {
			for (v6 = 0; v6 < 2; v6++) {
				for (ecn = 0; ecn < 4; ecn++) {
					l3 = build_udp(&p, v6, cases[i].dscp_in, ecn);
					build_udp(&want, v6, cases[i].dscp_out[w], ecn);
					pkt_run(egress, &p, cases[i].mark_cls << MARK_SHIFT, &r);
					ASSERT_EQ(0, r.err);
					EXPECT_EQ(TC_ACT_UNSPEC, r.retval);
					EXPECT_EQ(classid(cases[i].cls), r.ctx.priority);
					ASSERT_EQ(want.len, r.out_len);
					EXPECT_EQ(0, memcmp(want.buf, r.out, want.len))
						TH_LOG("wash %d case %u %s ecn %d: not the packet with DSCP %u",
						       w, i, v6 ? "ipv6" : "ipv4", ecn,
						       cases[i].dscp_out[w]);
					if (!v6)
						EXPECT_EQ(0, ip_csum(r.out + l3, 20));
					expect[cases[i].cls][v6][cases[i].verdict[w]]++;
				}
			}
		}
		for (i = 1; i <= 4; i++)
			for (v6 = 0; v6 < 2; v6++)
				for (ecn = 0; ecn < QOS_V_MAX; ecn++)
					EXPECT_EQ(expect[i][v6][ecn],
						  count(skel, QOS_DIR_EGRESS, i,
							v6 ? QOS_FAM_IPV6 : QOS_FAM_IPV4, ecn))
						TH_LOG("wash %d class %u %s verdict %d", w, i,
						       v6 ? "ipv6" : "ipv4", ecn);
		qos__destroy(skel);
	}
}

/*
 * wash and egress-remark on 6in4: the class by tunnel-dscp, then both
 * headers rewritten (the outer IPv4 one with a valid checksum, ECN kept),
 * so that neither the next node, whichever header it reads, nor the tunnel
 * exit sees the old DSCP; an inner header that does not parse is left
 * alone and the outer one rewritten. Counted as ipv6in4.
 */
TEST(wash_6in4)
{
	static const char *const modes[] = {
		"yes", "yes\ntunnel-dscp = outer", "yes\ntunnel-dscp = inner",
	};
	static const struct {
		unsigned int mode;	/* in modes[] */
		uint8_t outer, inner;
		bool bad;
		uint32_t cls;
		uint8_t out;
	} cases[] = {
		{ 0, 46, 0, false, CLS_PIP, 0 },
		{ 0, 0, 46, false, CLS_PIP, 0 },
		{ 0, 46, 0, true, CLS_PIP, 0 },
		{ 0, 8, 46, false, 4, 10 },
		{ 1, 0, 46, false, CLS_BE, 0 },
		{ 2, 46, 0, false, CLS_BE, 0 },
		{ 2, 8, 46, false, CLS_PIP, 0 },
	};
	static struct run_result r;
	static struct pkt p;
	size_t inner = ETH_HLEN + sizeof(struct iphdr);
	uint64_t want[QOS_MAX_CLASSES];
	struct qos *skel;
	unsigned int m, i, c;

	/* One object per mode: a load takes seconds in an emulated VM. */
	for (m = 0; m < ARRAY_SIZE(modes); m++) {
		skel = load_text(wash_profile, modes[m]);
		ASSERT_NE(NULL, skel);
		memset(want, 0, sizeof(want));
		for (i = 0; i < ARRAY_SIZE(cases); i++) {
			if (cases[i].mode != m)
				continue;
			pkt_init(&p);
			pkt_eth(&p);
			pkt_ipv4(&p, cases[i].outer << 2 | 1, IPPROTO_IPV6, 0);
			pkt_ipv6(&p, cases[i].inner << 2 | 2, 0x12345, IPPROTO_UDP);
			pkt_payload(&p, 40);
			pkt_end(&p, ETH_HLEN);
			if (cases[i].bad)
				p.buf[inner] = 0x45;
			pkt_run(bpf_program__fd(skel->progs.qos_egress), &p, 0, &r);
			ASSERT_EQ(0, r.err);
			EXPECT_EQ(classid(cases[i].cls), r.ctx.priority) TH_LOG("case %u", i);
			ASSERT_EQ(p.len, r.out_len);
			EXPECT_EQ(0, pkt_undo_dscp(r.out, p.buf, ETH_HLEN, cases[i].bad ? 0 : inner,
						   cases[i].out)) TH_LOG("case %u", i);
			EXPECT_EQ(0, memcmp(p.buf, r.out, p.len)) TH_LOG("case %u", i);
			want[cases[i].cls]++;
		}
		for (c = 1; c < QOS_MAX_CLASSES; c++)
			EXPECT_EQ(want[c], count(skel, QOS_DIR_EGRESS, c, QOS_FAM_IPV6IN4,
						 QOS_V_REMARK)) TH_LOG("mode %u class %u", m, c);
		qos__destroy(skel);
	}
}

/* A TCP segment with @flags and @payload bytes over @shape: 0 IPv4, 1 IPv6,
 * 2 IPv6 with a Destination Options header, 3 IPv6 in IPv4; @frag makes
 * it a first fragment; @doff the TCP header length in words (5-15), whose
 * options are NOPs; @cut, if not 0, ends the frame that many bytes into
 * the TCP header. */
static void build_tcp(struct pkt *p, int shape, uint8_t dscp, uint8_t flags, size_t payload,
		      int frag, int doff, size_t cut)
{
	struct iphdr *ip = NULL;
	uint8_t *th;
	size_t l3;

	pkt_init(p);
	pkt_eth(p);
	l3 = p->len;
	if (shape == 0) {
		ip = pkt_ipv4(p, dscp << 2, IPPROTO_TCP, 0);
	} else {
		if (shape == 3)
			ip = pkt_ipv4(p, 0, IPPROTO_IPV6, 0);
		pkt_ipv6(p, dscp << 2, 0x12345, IPPROTO_TCP);
		if (shape == 2)
			pkt_ipv6_ext(p, IPPROTO_DSTOPTS, 8, 0);
		if (frag && shape != 3)
			pkt_ipv6_ext(p, IPPROTO_FRAGMENT, 8, 1);
	}
	if (frag && ip)
		ip->frag_off = htons(0x2000);
	th = pkt_put(p, doff * 4);
	memset(th, 0, doff * 4);
	memset(th + 20, 1, doff * 4 - 20);
	th[12] = doff << 4;
	th[13] = flags;
	pkt_payload(p, payload);
	if (cut)
		p->len = th - p->buf + cut;
	pkt_end(p, l3);
}

static const char ack_profile[] =
	"[profile]\nscheduler = htb\ndefault = be\n%s\n"
	"[class pip]\nid = 2\ndscp = 46\npriority = 0\nrate = 20%%\nceil = 20%%\n"
	"[class ack]\nid = 5\npriority = 0\nrate = 5%%\nceil = 10%%\n"
	"[class be]\nid = 3\npriority = 1\nrate = 65%%\n"
	"[class lbe]\nid = 4\ndscp = 8\npriority = 2\nrate = 10%%\n";

/*
 * ack-class: pure TCP ACKs of the default class, IPv4, IPv6 and 6in4, at
 * both hooks, but not behind an IPv6 extension header; anything else
 * about the segment (payload, SYN, FIN, RST, no ACK, a fragment, a header
 * cut short, a DSCP of another class, UDP) keeps its class. Without
 * ack-class nothing moves.
 */
TEST(ack_class)
{
	static const struct {
		const char *what;
		uint8_t dscp, flags;
		size_t payload;
		int frag, doff, udp;
		size_t cut;
		uint32_t cls;
	} cases[] = {
		{ "pure ack", 0, 0x10, 0, 0, 5, 0, 0, 5 },
		{ "ack with psh, no data", 0, 0x18, 0, 0, 5, 0, 0, 5 },
		{ "ack with sack options", 0, 0x10, 0, 0, 15, 0, 0, 5 },
		{ "ack with one byte", 0, 0x10, 1, 0, 5, 0, 0, CLS_BE },
		{ "syn-ack", 0, 0x12, 0, 0, 5, 0, 0, CLS_BE },
		{ "fin-ack", 0, 0x11, 0, 0, 5, 0, 0, CLS_BE },
		{ "rst-ack", 0, 0x14, 0, 0, 5, 0, 0, CLS_BE },
		{ "no ack flag", 0, 0x00, 0, 0, 5, 0, 0, CLS_BE },
		{ "ack in pip", 46, 0x10, 0, 0, 5, 0, 0, CLS_PIP },
		{ "ack in lbe", 8, 0x10, 0, 0, 5, 0, 0, 4 },
		{ "first fragment", 0, 0x10, 0, 1, 5, 0, 0, CLS_BE },
		{ "header cut short", 0, 0x10, 0, 0, 5, 0, 10, CLS_BE },
		{ "udp", 0, 0x10, 0, 0, 5, 1, 0, CLS_BE },
	};
	static const char *const shapes[] = { "ipv4", "ipv6", "ipv6+dstopts", "6in4" };
	static struct run_result r;
	static struct pkt p;
	int prog[2], shape, with, d;
	struct qos *skel;
	unsigned int i;
	uint32_t want;

	for (with = 0; with < 2; with++) {
		skel = load_text(ack_profile, with ? "ack-class = ack" : "");
		ASSERT_NE(NULL, skel);
		prog[0] = bpf_program__fd(skel->progs.qos_ingress);
		prog[1] = bpf_program__fd(skel->progs.qos_egress);

		for (i = 0; i < ARRAY_SIZE(cases); i++) {
			for (shape = 0; shape < 4; shape++) {
				build_tcp(&p, shape, cases[i].dscp, cases[i].flags, cases[i].payload,
					  cases[i].frag, cases[i].doff, cases[i].cut);
				if (cases[i].udp)
					p.buf[shape == 0 ? p.l3 + 9 : p.nexthdr] = IPPROTO_UDP;
				want = cases[i].cls == 5 && (!with || shape == 2) ? CLS_BE :
										    cases[i].cls;
				for (d = 0; d < 2; d++) {
					pkt_run(prog[d], &p, 0, &r);
					ASSERT_EQ(0, r.err);
					EXPECT_EQ(TC_ACT_UNSPEC, r.retval);
					if (d == 0) {
						EXPECT_EQ(want << MARK_SHIFT, r.ctx.mark)
							TH_LOG("ack-class %s: %s over %s: ingress mark 0x%x",
							       with ? "on" : "off", cases[i].what,
							       shapes[shape], r.ctx.mark);
					} else {
						EXPECT_EQ(classid(want), r.ctx.priority)
							TH_LOG("ack-class %s: %s over %s: egress priority 0x%x",
							       with ? "on" : "off", cases[i].what,
							       shapes[shape], r.ctx.priority);
					}
				}
			}
		}
		qos__destroy(skel);
	}
}

TEST(border_remark)
{
	struct qos *skel = load("border");
	static struct run_result r;
	static struct pkt p, want;
	int egress, ecn, v6;
	size_t l3;

	ASSERT_NE(NULL, skel);
	egress = bpf_program__fd(skel->progs.qos_egress);
	for (v6 = 0; v6 < 2; v6++) {
		for (ecn = 0; ecn < 4; ecn++) {
			pkt_init(&p);
			pkt_eth(&p);
			l3 = p.len;
			if (v6)
				pkt_ipv6(&p, 46 << 2 | ecn, 0xabcde, IPPROTO_UDP);
			else
				pkt_ipv4(&p, 46 << 2 | ecn, IPPROTO_UDP, 4);
			pkt_payload(&p, 40);
			pkt_end(&p, l3);

			/* The same packet built with DSCP 0 is what must leave. */
			want = p;
			if (v6) {
				pkt_init(&want);
				pkt_eth(&want);
				pkt_ipv6(&want, ecn, 0xabcde, IPPROTO_UDP);
				pkt_payload(&want, 40);
				pkt_end(&want, l3);
			} else {
				struct iphdr *ip = (struct iphdr *)(want.buf + l3);

				ip->tos = ecn;
				pkt_end(&want, l3);
			}

			pkt_run(egress, &p, 0, &r);
			ASSERT_EQ(0, r.err);
			EXPECT_EQ(TC_ACT_UNSPEC, r.retval);
			EXPECT_EQ(classid(CLS_PIP), r.ctx.priority);
			ASSERT_EQ(want.len, r.out_len);
			EXPECT_EQ(0, memcmp(want.buf, r.out, want.len))
				TH_LOG("%s ecn %d: not the packet with DSCP 0", v6 ? "ipv6" : "ipv4",
				       ecn);
			if (!v6)
				EXPECT_EQ(0, ip_csum(r.out + l3, 24));
		}
	}
	EXPECT_EQ(4, count(skel, QOS_DIR_EGRESS, CLS_PIP, QOS_FAM_IPV4, QOS_V_REMARK));
	EXPECT_EQ(4, count(skel, QOS_DIR_EGRESS, CLS_PIP, QOS_FAM_IPV6, QOS_V_REMARK));

	/* BE is not rewritten, nor counted as remarked. */
	pkt_init(&p);
	pkt_eth(&p);
	l3 = p.len;
	pkt_ipv4(&p, 10 << 2, IPPROTO_UDP, 0);
	pkt_payload(&p, 40);
	pkt_end(&p, l3);
	pkt_run(egress, &p, 0, &r);
	EXPECT_EQ(0, memcmp(p.buf, r.out, p.len));
	EXPECT_EQ(classid(CLS_BE), r.ctx.priority);
	EXPECT_EQ(1, count(skel, QOS_DIR_EGRESS, CLS_BE, QOS_FAM_IPV4, QOS_V_PASS));
	qos__destroy(skel);
}

/*
 * pip-20pct planned with a tree per TX queue (2) and download shaping:
 * egress queues PIP in queue 0's tree (major 0x100), the IFB's one tree
 * has the profile's own handle (1:), and ingress must redirect with the
 * IFB's classid, IPv4 and IPv6 alike. Run by BPF_PROG_TEST_RUN, the
 * redirect is only the verdict: nothing is sent.
 */
TEST(ifb_classid_with_queues)
{
	static struct qos_plan plan;
	static struct run_result r;
	static struct pkt p;
	struct qos *skel;
	char err[512], path[512];
	int v6;

	snprintf(path, sizeof(path), "%s/tc-profiles/pip-20pct", QOS_SRCDIR);
	ASSERT_EQ(0, qos_plan_profile(path, 1000000000, 20000000, NULL, 1500, 2, 2, &plan, err,
				      sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0x1000000 | 0x12, plan.cfg.classid[CLS_PIP]);
	ASSERT_EQ(classid(CLS_PIP), plan.cfg.ifb_classid[CLS_PIP]);
	ASSERT_EQ(0x10000, plan.cfg.ifb.qdisc_handle);
	plan.cfg.ifb_ifindex = 1;
	skel = qos__open_and_load();
	ASSERT_NE(NULL, skel);
	ASSERT_EQ(0, qos_test_cfg_put(skel, &plan.cfg));
	for (v6 = 0; v6 <= 1; v6++) {
		build_udp(&p, v6, 46, 0);
		pkt_run(bpf_program__fd(skel->progs.qos_ingress), &p, 0, &r);
		ASSERT_EQ(0, r.err);
		EXPECT_EQ(TC_ACT_REDIRECT, r.retval) TH_LOG("%s", v6 ? "ipv6" : "ipv4");
		EXPECT_EQ(classid(CLS_PIP), r.ctx.priority) TH_LOG("%s", v6 ? "ipv6" : "ipv4");
	}
	qos__destroy(skel);
	qos_plan_free(&plan);
}

/* The kernel's own accounting of a map ("memlock" in its fdinfo). */
static uint64_t memlock_fd(int fd)
{
	char path[64], line[128];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

static uint64_t memlock(struct bpf_map *map)
{
	return memlock_fd(bpf_map__fd(map));
}

/* struct bpf_array or bpf_htab: the estimate leaves the map headers out. */
#define MAP_HDR_MAX	1024

/*
 * Hit counters, an array of a row of @entries ids per CPU: all of it when
 * created, 16 bytes per id per CPU, the estimate @est but for the header.
 */
static void rule_stats_mem(struct __test_metadata *_metadata, struct bpf_map *map,
			   uint32_t entries, int rows, uint64_t est)
{
	uint64_t mem = memlock(map);

	EXPECT_EQ((uint64_t)entries * rows * 16, est);
	EXPECT_LE(est, mem);
	EXPECT_LE(mem - est, MAP_HDR_MAX);
}

/*
 * Rule policers, a hash, filled with @entries policers: its buckets when
 * empty, and the same bytes for every policer, within what kmalloc's
 * caches round the estimate, @est, up to.
 */
static void rule_police_mem(struct __test_metadata *_metadata, struct bpf_map *map,
			    uint32_t entries, uint64_t est)
{
	struct qos_rule_policer rp = {};
	uint64_t empty = memlock(map), full, elem;
	uint32_t i;

	EXPECT_LE(empty - entries * 16, MAP_HDR_MAX);
	for (i = 0; i < entries; i++) {
		uint32_t idx = QOS_POLICER_RULE_FIRST + i;

		ASSERT_EQ(0, bpf_map_update_elem(bpf_map__fd(map), &idx, &rp, BPF_NOEXIST));
	}
	full = memlock(map);
	elem = (full - empty) / entries;
	EXPECT_EQ(full - empty, elem * entries);
	/* The policer (120 bytes) and its counters (144), with the
	 * element's header: from kmalloc-512 in the estimate. */
	EXPECT_GE(elem, sizeof(struct qos_rule_policer));
	EXPECT_LE(elem, 512);
	EXPECT_EQ(entries * (16 + 512), est);
}

/*
 * qos_mem_bytes() against the kernel's own accounting of the maps
 * (fdinfo "memlock"), the rule hash filled to capacity. Since Linux 6.4
 * that accounting follows the allocations, a hash counting its elements as
 * they come; before, it was a guess from max_entries that nothing can be
 * checked against. The arrays must match it but for their headers. The
 * hash's elements it counts at their size, which kmalloc serves from its
 * 192-byte cache: the estimate counts them at 192.
 */
TEST(mem_estimate)
{
	static struct qos_profile prof;
	struct qos_rule_val val = {};
	struct qos_rule_key key = {};
	int ncpus = libbpf_num_possible_cpus(), rows = qos_cpu_rows();
	uint64_t empty, full, elem, est, counters, other;
	struct qos_profile_mem m;
	char err[512], path[512];
	struct qos *skel;
	uint32_t i;

	snprintf(path, sizeof(path), "%s/tc-profiles/pip-20pct", QOS_SRCDIR);
	ASSERT_EQ(0, qos_profile_load(path, &prof, err, sizeof(err))) TH_LOG("%s", err);
	/* Small enough to fill in a moment; the sizes scale linearly. */
	prof.rule_entries = 4096;
	ASSERT_GT(ncpus, 0);
	ASSERT_GE(rows, ncpus);
	est = qos_mem_bytes(prof.rule_entries, ncpus, rows, &m);
	EXPECT_EQ(est, m.rule_hash + m.rule_stats + m.rule_police + m.counters + m.other);

	skel = qos__open();
	ASSERT_NE(NULL, skel);
	ASSERT_EQ(0, qos_rule_maps_size(skel, prof.rule_entries));
	ASSERT_EQ(0, qos__load(skel));
	empty = memlock(skel->maps.qos_rules);
	for (i = 0; i < prof.rule_entries; i++) {
		key.flowlabel = i;
		ASSERT_EQ(0, bpf_map_update_elem(bpf_map__fd(skel->maps.qos_rules), &key, &val,
						 BPF_NOEXIST));
	}
	full = memlock(skel->maps.qos_rules);
	if (full == empty) {
		qos__destroy(skel);
		qos_profile_free(&prof);
		SKIP(return, "this kernel accounts map memory by max_entries (before 6.4)");
	}

	/* Hash: 16-byte buckets (4096 is a power of two), and elements in
	 * kmalloc's 192-byte cache. */
	elem = (full - empty) / prof.rule_entries;
	EXPECT_EQ(full - empty, elem * prof.rule_entries);
	EXPECT_LE(empty - prof.rule_entries * 16, MAP_HDR_MAX);
	EXPECT_GT(elem, 128);
	EXPECT_LE(elem, 192);

	/* The IPv4 table: its own buckets, and elements no larger (the
	 * tables share the entries: the estimate counts the larger). */
	empty = memlock(skel->maps.qos_rules4);
	EXPECT_LE(empty - prof.rule_entries * 16, MAP_HDR_MAX);
	for (i = 0; i < prof.rule_entries; i++) {
		struct qos_rule_key4 k4 = { .src = i };

		ASSERT_EQ(0, bpf_map_update_elem(bpf_map__fd(skel->maps.qos_rules4), &k4, &val,
						 BPF_NOEXIST));
	}
	EXPECT_LE(memlock(skel->maps.qos_rules4) - empty, elem * prof.rule_entries);
	EXPECT_EQ(prof.rule_entries * (16 + 16 + 192), m.rule_hash);

	rule_stats_mem(_metadata, skel->maps.qos_rule_stats, prof.rule_entries, rows,
		       m.rule_stats);
	rule_police_mem(_metadata, skel->maps.qos_rule_pols, prof.rule_entries, m.rule_police);

	/* Arrays: the estimate is the accounting less the map headers
	 * (the class policers' too: qos_policers and qos_police_stats
	 * hold QOS_POLICER_RULE_FIRST each, whatever the rule table). */
	counters = memlock(skel->maps.qos_stats) + memlock(skel->maps.qos_unparsed) +
		   memlock(skel->maps.qos_police_stats);
	EXPECT_LE(m.counters, counters);
	EXPECT_LE(counters - m.counters, 3 * MAP_HDR_MAX);
	other = memlock(skel->maps.qos_cfg_slots) + memlock(skel->maps.qos_cfg_gen) +
		memlock(skel->maps.qos_meta) + memlock(skel->maps.qos_policers);
	EXPECT_LE(m.other, other);
	EXPECT_LE(other - m.other, 4 * MAP_HDR_MAX);
	qos__destroy(skel);
	qos_profile_free(&prof);
}

TEST_HARNESS_MAIN
