// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ingress policer with crafted packets through bpf_prog_test_run_opts():
 * every action (pass, drop, remark, demote), the rewritten bytes (IPv4
 * checksum valid, ECN and flow label untouched, the inner header of 6in4),
 * colour-aware input colours, the counters, and exactness when several
 * CPUs police through one bucket at once.
 *
 * bpf_prog_test_run() runs on the real clocks, so the buckets refill while
 * a test runs. The tests police at 1 kbit/s, one byte per 8 ms, with
 * buckets sized in packets plus half a packet: the colour of every packet
 * is then fixed by the burst alone unless a test takes longer than a
 * quarter of a second, and the expected colours are exact. Every test runs
 * twice, with the policer on each of its clocks: CLOCK_MONOTONIC and
 * jiffies (tb_params_clock()).
 */
#define _GNU_SOURCE /* cpus.h */
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kselftest_harness.h"
#include "cpus.h"
#include "pkt.h"
#include "kernel/policer.h"
#include "qos_test.h"

#define CLS_PIP		2
#define CLS_BE		3
#define CLS_LBE		4
#define MARK_SHIFT	16
#define MARK_MASK	0x000f0000U
#define OTHER_BITS	0xa5a0f00fU
#define RATE		1000		/* bit/s */
#define FLOWLABEL	0xabcde
#define ECN_CE		3

enum shape { V4, V4_OPT, V6, SIXIN4 };

static const struct qos_police_action PASS = { QOS_PA_PASS, 0 };
static const struct qos_police_action DROP = { QOS_PA_DROP, 0 };

static void build(struct pkt *p, enum shape s, uint8_t dscp)
{
	uint8_t tos = dscp << 2 | ECN_CE;

	pkt_init(p);
	pkt_eth(p);
	switch (s) {
	case V4:
		pkt_ipv4(p, tos, IPPROTO_UDP, 0);
		break;
	case V4_OPT:
		pkt_ipv4(p, tos, IPPROTO_UDP, 8);
		break;
	case V6:
		pkt_ipv6(p, tos, FLOWLABEL, IPPROTO_UDP);
		break;
	case SIXIN4:
		/* The tunnel copied the DSCP out (RFC 2983): the outer one
		 * classifies, the inner is left at 0 so that a rewrite of
		 * it shows. */
		pkt_ipv4(p, dscp << 2 | 1, IPPROTO_IPV6, 0);
		pkt_ipv6(p, ECN_CE, FLOWLABEL, IPPROTO_UDP);
		break;
	}
	pkt_payload(p, 8 + 32);
	pkt_end(p, ETH_HLEN);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

FIXTURE(police)
{
	struct qos *skel;
	int prog;
	struct qos_cfg cfg;
};

FIXTURE_VARIANT(police)
{
	bool tick;
};

FIXTURE_VARIANT_ADD(police, exact_clock)
{
	.tick = false,
};

FIXTURE_VARIANT_ADD(police, tick_clock)
{
	.tick = true,
};

/* The jiffy, as qosctl learns it. */
static uint64_t tick_ns(void)
{
	struct timespec ts;

	clock_getres(CLOCK_MONOTONIC_COARSE, &ts);
	return ts.tv_nsec;
}

/* The clock variant @v asks for, if @pol's buckets allow it. */
static void set_clock(const FIXTURE_VARIANT(police) *v, struct qos_policer *pol)
{
	tb_params_clock(&pol->tb, v->tick ? tick_ns() : 0);
}

FIXTURE_SETUP(police)
{
	static struct qos_profile prof;
	char err[512];

	self->skel = qos__open_and_load();
	ASSERT_NE(NULL, self->skel) TH_LOG("loading the BPF object: %s", strerror(errno));
	self->prog = bpf_program__fd(self->skel->progs.qos_ingress);
	/* Classification from pip-20pct; policers set by each test. */
	ASSERT_EQ(0, qos_profile_load(QOS_SRCDIR "/tc-profiles/pip-20pct", &prof, err,
				      sizeof(err))) TH_LOG("%s", err);
	qos_profile_fill_cfg(&prof, &self->cfg);
	memset(self->cfg.class_policer, 0, sizeof(self->cfg.class_policer));
	self->cfg.class_policer[CLS_PIP] = CLS_PIP;
	ASSERT_EQ(0, qos_test_cfg_put(self->skel, &self->cfg));
}

FIXTURE_TEARDOWN(police)
{
	qos__destroy(self->skel);
}

/* Install policer @idx at RATE with full buckets of @cbs and @ebs bytes, on
 * the clock of @v. */
static int set_policer(FIXTURE_DATA(police) *self, const FIXTURE_VARIANT(police) *v,
		       uint32_t idx, uint32_t mode, uint64_t cbs, uint64_t ebs, uint32_t flags,
		       struct qos_police_action g, struct qos_police_action y,
		       struct qos_police_action r)
{
	struct qos_policer pol = {};

	if (tb_params_init(&pol.tb, mode, RATE, cbs, mode == TB_TRTCM ? RATE : 0, ebs))
		return -EINVAL;
	set_clock(v, &pol);
	if (v->tick && !pol.tb.tick_ns)
		return -ERANGE;
	tb_state_init(&pol.tb, &pol.st, now_ns());
	pol.flags = flags;
	pol.act[TB_GREEN] = g;
	pol.act[TB_YELLOW] = y;
	pol.act[TB_RED] = r;
	return bpf_map_update_elem(bpf_map__fd(self->skel->maps.qos_policers), &idx, &pol, 0);
}

static void sum(int fd, uint32_t key, struct qos_ctr *out)
{
	int ncpu = libbpf_num_possible_cpus();
	struct qos_ctr vals[ncpu];
	int i;

	memset(out, 0, sizeof(*out));
	if (bpf_map_lookup_elem(fd, &key, vals))
		return;
	for (i = 0; i < ncpu; i++) {
		out->packets += vals[i].packets;
		out->bytes += vals[i].bytes;
	}
}

static uint64_t verdicts(struct qos *skel, uint32_t cls, uint32_t fam, uint32_t v)
{
	struct qos_ctr c;

	sum(bpf_map__fd(skel->maps.qos_stats), qos_stats_key(QOS_DIR_INGRESS, cls, fam, v), &c);
	return c.packets;
}

static struct qos_ctr colors(struct qos *skel, uint32_t idx, uint32_t fam, uint32_t color)
{
	return qos_test_police_ctr(bpf_map__fd(skel->maps.qos_police_stats), idx, fam, color);
}

static uint32_t mark_of(uint32_t cls)
{
	return (OTHER_BITS & ~MARK_MASK) | cls << MARK_SHIFT;
}

/* Within the burst packets pass with their class; beyond it they are
 * dropped with TC_ACT_SHOT. Both families, counted in L2 bytes. */
TEST_F(police, drop_beyond_burst)
{
	static const enum shape shapes[] = { V4, V6 };
	static const int fams[] = { QOS_FAM_IPV4, QOS_FAM_IPV6 };
	static struct run_result r;
	static struct pkt p;
	unsigned int s;
	int i;

	for (s = 0; s < 2; s++) {
		build(&p, shapes[s], 46);
		ASSERT_EQ(0, set_policer(self, variant, CLS_PIP, TB_SRTCM, p.len * 5 / 2, 0, 0,
					 PASS, DROP, DROP));
		for (i = 0; i < 4; i++) {
			pkt_run(self->prog, &p, OTHER_BITS, &r);
			ASSERT_EQ(0, r.err);
			if (i < 2) {
				EXPECT_EQ(TC_ACT_UNSPEC, r.retval) TH_LOG("shape %u packet %d", s, i);
				EXPECT_EQ(mark_of(CLS_PIP), r.ctx.mark);
			} else {
				EXPECT_EQ(TC_ACT_SHOT, r.retval) TH_LOG("shape %u packet %d", s, i);
			}
			EXPECT_EQ(0, memcmp(p.buf, r.out, p.len));
		}
		EXPECT_EQ(2, verdicts(self->skel, CLS_PIP, fams[s], QOS_V_PASS));
		EXPECT_EQ(2, verdicts(self->skel, CLS_PIP, fams[s], QOS_V_DROP));
		EXPECT_EQ(2, colors(self->skel, CLS_PIP, fams[s], TB_GREEN).packets);
		EXPECT_EQ(2 * p.len, colors(self->skel, CLS_PIP, fams[s], TB_GREEN).bytes);
		EXPECT_EQ(2, colors(self->skel, CLS_PIP, fams[s], TB_RED).packets);
		EXPECT_EQ(0, colors(self->skel, CLS_PIP, fams[s], TB_YELLOW).packets);
	}
}

/* A class without a policer is not policed and not counted by colour. */
TEST_F(police, unpoliced_class_untouched)
{
	static struct run_result r;
	static struct pkt p;
	int i;

	ASSERT_EQ(0, set_policer(self, variant, CLS_PIP, TB_SRTCM, 100, 0, 0, DROP, DROP, DROP));
	build(&p, V4, 0);
	for (i = 0; i < 10; i++) {
		pkt_run(self->prog, &p, OTHER_BITS, &r);
		EXPECT_EQ(TC_ACT_UNSPEC, r.retval);
		EXPECT_EQ(mark_of(CLS_BE), r.ctx.mark);
	}
	EXPECT_EQ(10, verdicts(self->skel, CLS_BE, QOS_FAM_IPV4, QOS_V_PASS));
	for (i = 0; i < TB_COLOR_MAX; i++)
		EXPECT_EQ(0, colors(self->skel, CLS_BE, QOS_FAM_IPV4, i).packets);
}

/* Bytes of @a and @b differ only in [@off, @off + @n). */
static int diff_outside(const uint8_t *a, const uint8_t *b, size_t len, size_t off, size_t n)
{
	size_t i;

	for (i = 0; i < len; i++)
		if ((i < off || i >= off + n) && a[i] != b[i])
			return (int)i;
	return -1;
}

/* Remark the excess to AF11 (10): IPv4 TOS = DSCP | ECN kept, header
 * checksum valid, nothing else changed; with and without options. */
TEST_F(police, remark_ipv4)
{
	static const enum shape shapes[] = { V4, V4_OPT };
	const struct qos_police_action remark = { QOS_PA_REMARK, 10 };
	static struct pkt want;	/* for its aligned buf */
	static struct run_result r;
	static struct pkt p;
	unsigned int s;

	for (s = 0; s < 2; s++) {
		const struct iphdr *ip;

		build(&p, shapes[s], 46);
		ASSERT_EQ(0, set_policer(self, variant, CLS_PIP, TB_SRTCM, p.len * 3 / 2, 0, 0,
					 PASS, remark, remark));
		pkt_run(self->prog, &p, OTHER_BITS, &r);
		EXPECT_EQ(0, memcmp(p.buf, r.out, p.len));	/* green: as it was */
		pkt_run(self->prog, &p, OTHER_BITS, &r);
		ASSERT_EQ(0, r.err);
		EXPECT_EQ(TC_ACT_UNSPEC, r.retval);
		EXPECT_EQ(mark_of(CLS_PIP), r.ctx.mark);	/* remark keeps the class */
		ASSERT_EQ(p.len, r.out_len);
		ip = (const struct iphdr *)(r.out + ETH_HLEN);
		EXPECT_EQ(10 << 2 | ECN_CE, ip->tos);
		EXPECT_EQ(0, ip_csum(ip, ip->ihl * 4)) TH_LOG("IPv4 header checksum invalid");
		EXPECT_NE(((const struct iphdr *)(p.buf + ETH_HLEN))->check, ip->check);
		/* Apart from TOS and checksum, the bytes are the same. */
		memcpy(want.buf, p.buf, p.len);
		((struct iphdr *)(want.buf + ETH_HLEN))->tos = ip->tos;
		((struct iphdr *)(want.buf + ETH_HLEN))->check = ip->check;
		EXPECT_EQ(0, memcmp(want.buf, r.out, p.len));
	}
	EXPECT_EQ(2, verdicts(self->skel, CLS_PIP, QOS_FAM_IPV4, QOS_V_REMARK));
	EXPECT_EQ(2, verdicts(self->skel, CLS_PIP, QOS_FAM_IPV4, QOS_V_PASS));
}

static uint32_t v6_word(const uint8_t *h)
{
	uint32_t w;

	memcpy(&w, h, 4);
	return ntohl(w);
}

/* IPv6: only the DSCP bits of the Traffic Class change; ECN and the flow
 * label stay. */
TEST_F(police, remark_ipv6)
{
	const struct qos_police_action remark = { QOS_PA_REMARK, 0 };
	static struct run_result r;
	static struct pkt p;
	uint32_t w;

	build(&p, V6, 46);
	ASSERT_EQ(0, set_policer(self, variant, CLS_PIP, TB_SRTCM, p.len / 2, 0, 0, PASS, remark,
				 remark));
	pkt_run(self->prog, &p, OTHER_BITS, &r);
	ASSERT_EQ(0, r.err);
	EXPECT_EQ(TC_ACT_UNSPEC, r.retval);
	w = v6_word(r.out + ETH_HLEN);
	EXPECT_EQ(6, w >> 28);
	EXPECT_EQ(0, (w >> 22) & 0x3f);			/* DSCP */
	EXPECT_EQ(ECN_CE, (w >> 20) & 3);		/* ECN */
	EXPECT_EQ(FLOWLABEL, w & 0xfffff);		/* flow label */
	EXPECT_EQ(-1, diff_outside(p.buf, r.out, p.len, ETH_HLEN, 2));
	EXPECT_EQ(1, verdicts(self->skel, CLS_PIP, QOS_FAM_IPV6, QOS_V_REMARK));
}

/* 6in4: the inner IPv6 header, the one classified, is remarked; the
 * outer IPv4 header is the tunnel's and stays as it was. */
TEST_F(police, remark_6in4_both_headers)
{
	const struct qos_police_action remark = { QOS_PA_REMARK, 8 };
	static struct run_result r;
	static struct pkt p;
	size_t inner = ETH_HLEN + sizeof(struct iphdr);

	build(&p, SIXIN4, 46);
	ASSERT_EQ(0, set_policer(self, variant, CLS_PIP, TB_SRTCM, p.len / 2, 0, 0, PASS, remark,
				 remark));
	pkt_run(self->prog, &p, OTHER_BITS, &r);
	ASSERT_EQ(0, r.err);
	EXPECT_EQ(0, pkt_undo_dscp(r.out, p.buf, ETH_HLEN, inner, 8));
	EXPECT_EQ(0, memcmp(p.buf, r.out, p.len));
	EXPECT_EQ(1, verdicts(self->skel, CLS_PIP, QOS_FAM_IPV6IN4, QOS_V_REMARK));
}

/*
 * A 6in4 packet whose inner header does not parse (version 4 where IPv6
 * belongs) is classified and policed by its outer EF all the same, and
 * only its outer DSCP rewritten; counted as ipv6in4.
 */
TEST_F(police, remark_6in4_bad_inner_by_outer)
{
	const struct qos_police_action remark = { QOS_PA_REMARK, 8 };
	static struct run_result r;
	static struct pkt p;
	size_t inner = ETH_HLEN + sizeof(struct iphdr);

	build(&p, SIXIN4, 46);
	p.buf[inner] = 0x45;
	ASSERT_EQ(0, set_policer(self, variant, CLS_PIP, TB_SRTCM, p.len / 2, 0, 0, PASS, remark,
				 remark));
	pkt_run(self->prog, &p, OTHER_BITS, &r);
	ASSERT_EQ(0, r.err);
	EXPECT_EQ(mark_of(CLS_PIP), r.ctx.mark);
	EXPECT_EQ(0, pkt_undo_dscp(r.out, p.buf, ETH_HLEN, 0, 8));
	EXPECT_EQ(0, memcmp(p.buf, r.out, p.len));
	EXPECT_EQ(1, verdicts(self->skel, CLS_PIP, QOS_FAM_IPV6IN4, QOS_V_REMARK));
}

/* Demote: the packet leaves unchanged with LBE in the mark (other mark
 * bits kept), counted as a demotion in PIP. */
TEST_F(police, demote_changes_mark)
{
	const struct qos_police_action demote = { QOS_PA_DEMOTE, CLS_LBE };
	static struct run_result r;
	static struct pkt p;

	build(&p, V6, 46);
	ASSERT_EQ(0, set_policer(self, variant, CLS_PIP, TB_SRTCM, p.len * 3 / 2, 0, 0, PASS, DROP,
				 demote));
	pkt_run(self->prog, &p, OTHER_BITS, &r);
	EXPECT_EQ(mark_of(CLS_PIP), r.ctx.mark);
	pkt_run(self->prog, &p, OTHER_BITS, &r);
	ASSERT_EQ(0, r.err);
	EXPECT_EQ(TC_ACT_UNSPEC, r.retval);
	EXPECT_EQ(mark_of(CLS_LBE), r.ctx.mark);
	EXPECT_EQ(0, memcmp(p.buf, r.out, p.len));
	EXPECT_EQ(1, verdicts(self->skel, CLS_PIP, QOS_FAM_IPV6, QOS_V_DEMOTE));
	EXPECT_EQ(0, verdicts(self->skel, CLS_LBE, QOS_FAM_IPV6, QOS_V_PASS));
}

/*
 * srTCM with an excess bucket: green, yellow and red each get their own
 * action. CBS holds 1.5 packets, EBS 1.5: G Y R.
 */
TEST_F(police, srtcm_three_colours)
{
	const struct qos_police_action remark = { QOS_PA_REMARK, 10 };
	static struct run_result r;
	static struct pkt p;

	build(&p, V4, 46);
	ASSERT_EQ(0, set_policer(self, variant, CLS_PIP, TB_SRTCM, p.len * 3 / 2, p.len * 3 / 2, 0,
				 PASS, remark, DROP));
	pkt_run(self->prog, &p, 0, &r);
	EXPECT_EQ(46 << 2 | ECN_CE, ((struct iphdr *)(r.out + ETH_HLEN))->tos);
	pkt_run(self->prog, &p, 0, &r);
	EXPECT_EQ(TC_ACT_UNSPEC, r.retval);
	EXPECT_EQ(10 << 2 | ECN_CE, ((struct iphdr *)(r.out + ETH_HLEN))->tos);
	pkt_run(self->prog, &p, 0, &r);
	EXPECT_EQ(TC_ACT_SHOT, r.retval);
	EXPECT_EQ(1, colors(self->skel, CLS_PIP, QOS_FAM_IPV4, TB_GREEN).packets);
	EXPECT_EQ(1, colors(self->skel, CLS_PIP, QOS_FAM_IPV4, TB_YELLOW).packets);
	EXPECT_EQ(1, colors(self->skel, CLS_PIP, QOS_FAM_IPV4, TB_RED).packets);
}

/*
 * A GSO packet (TCP over IPv4 and IPv6 with a 32-byte TCP header, UDP over
 * IPv4) is charged what its segments take on the wire: skb->len plus the
 * headers of every segment after the first, gso_segs read from the skb,
 * recounted from the payload when 0 or larger than the payload fills.
 * One segment's worth of tokens admits it, and it leaves the bucket in
 * debt by at most the rest; in debt, every packet is red.
 */
static void build_gso(struct pkt *p, enum shape s, uint32_t *hdr)
{
	uint8_t tos = 46 << 2;
	uint8_t *l4;

	pkt_init(p);
	pkt_eth(p);
	if (s == V6)
		pkt_ipv6(p, tos, FLOWLABEL, IPPROTO_TCP);
	else
		pkt_ipv4(p, tos, s == V4 ? IPPROTO_TCP : IPPROTO_UDP, 0);
	l4 = pkt_put(p, s == V4_OPT ? 8 : 32);
	if (s != V4_OPT)
		l4[12] = 8 << 4;	/* data offset: 32 bytes */
	*hdr = p->len;
	pkt_payload(p, 1200);
	pkt_end(p, ETH_HLEN);
}

TEST_F(police, gso_wire_charge)
{
	/* V4_OPT stands for UDP here. */
	static const enum shape shapes[] = { V4, V6, V4_OPT };
	static const int fams[] = { QOS_FAM_IPV4, QOS_FAM_IPV6, QOS_FAM_IPV4 };
	static const uint32_t segs_in[] = { 5, 0, 1000 };
	const uint32_t size = 250;	/* 1200 bytes of payload: 5 segments */
	static struct run_result r;
	struct __sk_buff ctx = {};
	static struct pkt p;
	struct qos_policer pol;
	uint32_t hdr, wire, idx = CLS_PIP;
	struct qos_ctr g0, r0;
	int64_t owed;
	unsigned int s, i;

	for (s = 0; s < 3; s++) {
		build_gso(&p, shapes[s], &hdr);
		wire = p.len + 4 * hdr;
		g0 = colors(self->skel, CLS_PIP, fams[s], TB_GREEN);
		r0 = colors(self->skel, CLS_PIP, fams[s], TB_RED);
		/* A bucket that holds every form of the packet: each is
		 * charged the same. */
		ASSERT_EQ(0, set_policer(self, variant, CLS_PIP, TB_SRTCM, 4 * wire, 0, 0,
					 PASS, DROP, DROP));
		for (i = 0; i < 3; i++) {
			ctx.gso_size = size;
			ctx.gso_segs = segs_in[i];
			pkt_run_ctx(self->prog, &p, &ctx, &r);
			ASSERT_EQ(0, r.err) TH_LOG("test_run refused gso_segs %u", segs_in[i]);
			EXPECT_EQ(TC_ACT_UNSPEC, r.retval);
		}
		EXPECT_EQ(g0.packets + 3, colors(self->skel, CLS_PIP, fams[s], TB_GREEN).packets);
		EXPECT_EQ(g0.bytes + 3 * wire, colors(self->skel, CLS_PIP, fams[s], TB_GREEN).bytes)
			TH_LOG("shape %u: 3 packets of %u bytes on the wire", s, wire);

		/* A bucket of one segment and 100 bytes: the packet passes
		 * and leaves it owing wire - hdr - size - 100 bytes, less the
		 * few bytes 1 kbit/s earns meanwhile. */
		ASSERT_EQ(0, set_policer(self, variant, CLS_PIP, TB_SRTCM, hdr + size + 100, 0, 0,
					 PASS, DROP, DROP));
		ctx.gso_segs = 5;
		pkt_run_ctx(self->prog, &p, &ctx, &r);
		EXPECT_EQ(TC_ACT_UNSPEC, r.retval);
		ASSERT_EQ(0, bpf_map_lookup_elem(bpf_map__fd(self->skel->maps.qos_policers), &idx,
						 &pol));
		owed = -(int64_t)pol.st.tc;
		EXPECT_LE(owed, (int64_t)(wire - hdr - size - 100) * (int64_t)TB_NBITS_PER_BYTE);
		EXPECT_GT(owed, (int64_t)(wire - hdr - size - 100 - 32) * (int64_t)TB_NBITS_PER_BYTE);
		/* In debt: the same packet and a plain one are red. */
		pkt_run_ctx(self->prog, &p, &ctx, &r);
		EXPECT_EQ(TC_ACT_SHOT, r.retval);
		pkt_run(self->prog, &p, 0, &r);
		EXPECT_EQ(TC_ACT_SHOT, r.retval);
		EXPECT_EQ(r0.bytes + wire + p.len, colors(self->skel, CLS_PIP, fams[s], TB_RED).bytes);

		/* A bucket one byte short of a segment's worth: red, takes
		 * nothing. */
		ASSERT_EQ(0, set_policer(self, variant, CLS_PIP, TB_SRTCM, hdr + size - 1, 0, 0,
					 PASS, DROP, DROP));
		pkt_run_ctx(self->prog, &p, &ctx, &r);
		EXPECT_EQ(TC_ACT_SHOT, r.retval);
		ASSERT_EQ(0, bpf_map_lookup_elem(bpf_map__fd(self->skel->maps.qos_policers), &idx,
						 &pol));
		EXPECT_EQ((uint64_t)(hdr + size - 1) * TB_NBITS_PER_BYTE, pol.st.tc);
	}
}

/*
 * trTCM colour-aware: with full buckets, a packet whose DSCP says red is
 * red and one that says yellow is yellow; colour-blind, all are green.
 * PIP's DSCPs stand in for drop precedences here: 46 green, 47 yellow,
 * 40 red.
 */
TEST_F(police, trtcm_colour_aware)
{
	const struct qos_police_action to_be = { QOS_PA_DEMOTE, CLS_BE };
	const struct qos_police_action to_lbe = { QOS_PA_DEMOTE, CLS_LBE };
	static const uint8_t dscp[] = { 46, 47, 40 };
	static const uint32_t want[] = { CLS_PIP, CLS_BE, CLS_LBE };
	static struct run_result r;
	static struct pkt p;
	struct qos_policer pol;
	uint64_t used_c, used_p;
	uint32_t idx = CLS_PIP;
	int i, fd = bpf_map__fd(self->skel->maps.qos_policers);

	ASSERT_EQ(0, set_policer(self, variant, CLS_PIP, TB_TRTCM, 10000, 10000, QOS_POLICE_F_AWARE,
				 PASS, to_be, to_lbe));
	ASSERT_EQ(0, bpf_map_lookup_elem(fd, &idx, &pol));
	pol.pre_yellow = 1ULL << 47;
	pol.pre_red = 1ULL << 40;
	ASSERT_EQ(0, bpf_map_update_elem(fd, &idx, &pol, 0));
	for (i = 0; i < 3; i++) {
		build(&p, V4, dscp[i]);
		pkt_run(self->prog, &p, OTHER_BITS, &r);
		EXPECT_EQ(mark_of(want[i]), r.ctx.mark) TH_LOG("dscp %u", dscp[i]);
	}
	/* RFC 2698: a red packet takes nothing, a yellow one only from P. */
	ASSERT_EQ(0, bpf_map_lookup_elem(fd, &idx, &pol));
	used_c = 10000 * TB_NBITS_PER_BYTE - pol.st.tc;
	used_p = 10000 * TB_NBITS_PER_BYTE - pol.st.te;
	EXPECT_LE(used_c, p.len * TB_NBITS_PER_BYTE);
	EXPECT_GT(used_c, 0);
	EXPECT_LE(used_p, 2 * p.len * TB_NBITS_PER_BYTE);
	EXPECT_GT(used_p, p.len * TB_NBITS_PER_BYTE);

	pol.flags = 0;
	ASSERT_EQ(0, bpf_map_update_elem(fd, &idx, &pol, 0));
	for (i = 0; i < 3; i++) {
		build(&p, V4, dscp[i]);
		pkt_run(self->prog, &p, OTHER_BITS, &r);
		EXPECT_EQ(mark_of(CLS_PIP), r.ctx.mark) TH_LOG("blind, dscp %u", dscp[i]);
	}
}

/*
 * qosctl's install path (qos_police_install()) on the live map: a re-apply
 * with an unchanged policer leaves its buckets alone; a changed one keeps
 * its tokens, neither refilled nor emptied, also when the change moves it
 * to the other clock, after which it refills at its new rate. Rollback
 * writes the previous entries back.
 */
TEST_F(police, reapply_keeps_buckets)
{
	static struct qos_policer pol[QOS_MAX_CLASSES], saved[QOS_MAX_CLASSES];
	int fd = bpf_map__fd(self->skel->maps.qos_policers);
	struct qos_policer *pp = &pol[CLS_PIP], cur;
	static struct run_result r;
	uint32_t idx = CLS_PIP;
	static struct pkt p;
	int i;

	build(&p, V4, 46);
	/* 3.5 packets at 1 kbit/s: seconds of tokens, the tick clock. */
	ASSERT_EQ(0, tb_params_init(&pp->tb, TB_SRTCM, RATE, p.len * 7 / 2, 0, 0));
	tb_state_init(&pp->tb, &pp->st, 0);
	pp->act[TB_YELLOW] = DROP;
	pp->act[TB_RED] = DROP;
	ASSERT_EQ(0, qos_police_install(fd, pol, saved));
	EXPECT_EQ(0, saved[CLS_PIP].tb.cir);
	ASSERT_EQ(0, bpf_map_lookup_elem(fd, &idx, &cur));
	EXPECT_EQ(tick_ns(), cur.tb.tick_ns);
	for (i = 0; i < 3; i++) {
		pkt_run(self->prog, &p, 0, &r);
		EXPECT_EQ(TC_ACT_UNSPEC, r.retval) TH_LOG("packet %d", i);
	}

	/* Unchanged: not written; half a packet stays in the bucket. */
	ASSERT_EQ(0, qos_police_install(fd, pol, saved));
	ASSERT_EQ(0, bpf_map_lookup_elem(fd, &idx, &cur));
	EXPECT_GE(cur.st.tc, p.len / 2 * TB_NBITS_PER_BYTE);
	EXPECT_LT(cur.st.tc, p.len * TB_NBITS_PER_BYTE);
	pkt_run(self->prog, &p, 0, &r);
	EXPECT_EQ(TC_ACT_SHOT, r.retval);

	/* A bigger bucket: not refilled. */
	ASSERT_EQ(0, tb_params_init(&pp->tb, TB_SRTCM, RATE, p.len * 10, 0, 0));
	ASSERT_EQ(0, qos_police_install(fd, pol, saved));
	EXPECT_EQ(p.len * 7 / 2 * TB_NBITS_PER_BYTE, saved[CLS_PIP].tb.cbs);
	pkt_run(self->prog, &p, 0, &r);
	EXPECT_EQ(TC_ACT_SHOT, r.retval);

	/* 1 Gbit/s: the same bucket holds 2 us, the exact clock. The switch
	 * credits nothing; a millisecond later the bucket is full. */
	ASSERT_EQ(0, tb_params_init(&pp->tb, TB_SRTCM, 1000000000, p.len * 10, 0, 0));
	ASSERT_EQ(0, qos_police_install(fd, pol, saved));
	ASSERT_EQ(0, bpf_map_lookup_elem(fd, &idx, &cur));
	EXPECT_EQ(0, cur.tb.tick_ns);
	pkt_run(self->prog, &p, 0, &r);
	EXPECT_EQ(TC_ACT_SHOT, r.retval);
	usleep(1000);
	for (i = 0; i < 10; i++) {
		pkt_run(self->prog, &p, 0, &r);
		EXPECT_EQ(TC_ACT_UNSPEC, r.retval) TH_LOG("packet %d", i);
	}

	/* Rollback: the 1 kbit/s policer is back. */
	qos_police_restore(fd, saved);
	ASSERT_EQ(0, bpf_map_lookup_elem(fd, &idx, &cur));
	EXPECT_EQ(RATE, cur.tb.cir);
	EXPECT_EQ(p.len * 10 * TB_NBITS_PER_BYTE, cur.tb.cbs);
}

struct hammer {
	int prog;
	const struct pkt *p;
	uint32_t repeat;
	int err;
};

static void *hammer_run(void *arg)
{
	struct hammer *h = arg;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = h->p->buf,
		    .data_size_in = h->p->len, .repeat = h->repeat);

	h->err = bpf_prog_test_run_opts(h->prog, &opts);
	return NULL;
}

/* Run @p through @prog @repeat times from each of two threads, pinned to
 * two CPUs (test_run runs the program on the caller's CPU). */
static int hammer2(int prog, const struct pkt *p, uint32_t repeat)
{
	struct hammer h[2];
	pthread_t th[2];
	int i, n, err = 0;

	for (n = 0; n < 2 && !err; n++) {
		h[n] = (struct hammer){ .prog = prog, .p = p, .repeat = repeat };
		err = qos_test_start_on(n, &th[n], hammer_run, &h[n]);
	}
	if (err)
		n--;
	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		err = err ?: h[i].err;
	}
	return err;
}

/*
 * Two CPUs through one bucket: as many packets are green as the burst
 * holds, plus what the clock refilled while the threads ran (none unless
 * the machine is so loaded that they take more than a quarter second). A
 * lost update between CPUs would let more through.
 */
TEST_F(police, concurrent_exact)
{
	static struct pkt p;
	struct qos_ctr g, red;
	uint64_t t0, extra;

	build(&p, V4, 46);
	ASSERT_EQ(0, set_policer(self, variant, CLS_PIP, TB_SRTCM, p.len * 5000 + p.len / 2, 0, 0,
				 PASS, DROP, DROP));
	t0 = now_ns();
	ASSERT_EQ(0, hammer2(self->prog, &p, 100000));
	/* Half a packet was left in the bucket; RATE bit/s refilled it. */
	extra = (p.len / 2 + RATE * (now_ns() - t0) / 8 / 1000000000ULL) / p.len;
	g = colors(self->skel, CLS_PIP, QOS_FAM_IPV4, TB_GREEN);
	red = colors(self->skel, CLS_PIP, QOS_FAM_IPV4, TB_RED);
	EXPECT_EQ(200000, g.packets + red.packets);
	EXPECT_GE(g.packets, 5000);
	EXPECT_LE(g.packets, 5000 + extra) TH_LOG("%llu green, refill allows %llu extra",
					       (unsigned long long)g.packets,
					       (unsigned long long)extra);
	EXPECT_EQ(g.packets, verdicts(self->skel, CLS_PIP, QOS_FAM_IPV4, QOS_V_PASS));
	EXPECT_EQ(red.packets, verdicts(self->skel, CLS_PIP, QOS_FAM_IPV4, QOS_V_DROP));
}

/*
 * Two CPUs at once through a policer whose rate, not its burst, decides:
 * 400 Mbit/s (40 on a slow machine), offered several times that from CPUs
 * 0 and 1 for 1.5 s. The bucket starts empty and holds 8 s of the rate, so
 * that no pause of the two threads on a loaded machine fills it: every
 * token earned is either taken by a green packet or still in the bucket.
 * Green bytes plus what is left are within 1% of CIR x elapsed, and green
 * alone does not exceed it by more than 1%. Elapsed runs from the first
 * packet, which sets the policer's origin on its clock, to after the last:
 * the tick clock may credit up to a tick (4 ms at HZ=250, 0.3%) more or
 * less than that.
 */
TEST_F(police, concurrent_rate)
{
	const char *slow = getenv("KSFT_MACHINE_SLOW");
	const uint64_t rate = slow && !strcmp(slow, "yes") ? 40000000 : 400000000;
	int fd = bpf_map__fd(self->skel->maps.qos_policers);
	uint64_t t0, t1, allowed, left, sent;
	struct qos_policer pol = {};
	static struct run_result r;
	uint32_t idx = CLS_PIP;
	static struct pkt p;
	struct qos_ctr g, red;
	double off, off_green;

	build(&p, V4, 46);
	ASSERT_EQ(0, tb_params_init(&pol.tb, TB_SRTCM, rate, rate / 8 * 8, 0, 0));
	set_clock(variant, &pol);
	ASSERT_EQ(variant->tick ? tick_ns() : 0, pol.tb.tick_ns);
	tb_state_init(&pol.tb, &pol.st, now_ns());
	pol.st.tc = 0;
	pol.act[TB_RED] = DROP;
	ASSERT_EQ(0, bpf_map_update_elem(fd, &idx, &pol, 0));
	pkt_run(self->prog, &p, 0, &r);
	ASSERT_EQ(0, r.err);
	sent = 1;
	t0 = now_ns();
	do {
		ASSERT_EQ(0, hammer2(self->prog, &p, 1000000));
		sent += 2000000;
		t1 = now_ns();
	} while (t1 - t0 < 1500000000ULL);
	g = colors(self->skel, CLS_PIP, QOS_FAM_IPV4, TB_GREEN);
	red = colors(self->skel, CLS_PIP, QOS_FAM_IPV4, TB_RED);
	ASSERT_EQ(0, bpf_map_lookup_elem(fd, &idx, &pol));
	left = pol.st.tc / TB_NBITS_PER_BYTE;
	allowed = rate / 8 * (t1 - t0) / 1000000000ULL;
	off = ((double)g.bytes + left - allowed) / allowed * 100;
	off_green = ((double)g.bytes - allowed) / allowed * 100;
	TH_LOG("%.3f s, offered %.0f Mbit/s; green %llu + left %llu bytes against %llu: %+.3f%%",
	       (t1 - t0) / 1e9, (g.bytes + red.bytes) * 8 / ((t1 - t0) / 1e3),
	       (unsigned long long)g.bytes, (unsigned long long)left,
	       (unsigned long long)allowed, off);
	EXPECT_EQ(sent, g.packets + red.packets);
	EXPECT_GT(red.packets, 0);
	EXPECT_LE(off, 1.0);
	EXPECT_GE(off, -1.0);
	EXPECT_LE(off_green, 1.0);
}

TEST_HARNESS_MAIN
