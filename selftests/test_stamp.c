// SPDX-License-Identifier: GPL-2.0-only
/*
 * The STAMP codec and the probe statistics, against byte vectors written
 * by hand from the layouts of RFC 8762 (sections 4.2.1, 4.3.1) and
 * RFC 8972 (sections 3, 4.4), and streams whose delays, losses and
 * reorderings are known in advance.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "kselftest_harness.h"
#include "probe/sla_metrics.h"
#include "probe/stream_stats.h"
#include "probe/stamp.h"

/* 1 s past the NTP era's 0xE8A1B2C3 seconds, and half a second. */
#define TS_A	0xE8A1B2C380000000ULL
#define TS_B	0xE8A1B2C3C0000000ULL
#define TS_C	0xE8A1B2C4000F4240ULL

/* Session-Sender: seq, timestamp, error estimate (S=1, scale 1, mult 1),
 * SSID, 28 MBZ, then the CoS TLV asking for DSCP1 = 46 (EF). */
static const uint8_t test_pkt[52] = {
	0x01, 0x02, 0x03, 0x04,
	0xe8, 0xa1, 0xb2, 0xc3, 0x80, 0x00, 0x00, 0x00,
	0x81, 0x01,
	0xbe, 0xef,
	[44] = 0x00, 0x04, 0x00, 0x04, 0xb8, 0x00, 0x00, 0x00,
};

/* Its reflection, received with DSCP 10 (AF11), ECN 01 and TTL 63. */
static const uint8_t reply_pkt[52] = {
	0x01, 0x02, 0x03, 0x04,				/* stateless: the sender's */
	0xe8, 0xa1, 0xb2, 0xc4, 0x00, 0x0f, 0x42, 0x40,	/* T3 */
	0x0f, 0x84,					/* 1 ms, not synchronised */
	0xbe, 0xef,
	0xe8, 0xa1, 0xb2, 0xc3, 0xc0, 0x00, 0x00, 0x00,	/* T2 */
	0x01, 0x02, 0x03, 0x04,
	0xe8, 0xa1, 0xb2, 0xc3, 0x80, 0x00, 0x00, 0x00,	/* T1 */
	0x81, 0x01,
	0x00, 0x00,
	63, 0x00, 0x00, 0x00,
	/* DSCP1 46, DSCP2 10, ECN 1, RP 0: 101110 001010 01 00 */
	0x00, 0x04, 0x00, 0x04, 0xb8, 0xa4, 0x00, 0x00,
};

TEST(pack_test_packet)
{
	struct stamp_test t = {
		.seq = 0x01020304, .ts = TS_A, .err = 0x8101, .ssid = 0xbeef,
		.cos = { .present = true, .dscp1 = 46 },
	};
	uint8_t buf[52];

	ASSERT_EQ(52, stamp_test_pack(&t, buf, sizeof(buf)));
	ASSERT_EQ(0, memcmp(buf, test_pkt, sizeof(buf)));
	/* No room for the TLV, nor for the base packet. */
	ASSERT_EQ(-EINVAL, stamp_test_pack(&t, buf, 48));
	t.cos.present = false;
	ASSERT_EQ(44, stamp_test_pack(&t, buf, 44));
	ASSERT_EQ(-EINVAL, stamp_test_pack(&t, buf, 43));
}

TEST(parse_reply)
{
	struct stamp_reply r;

	ASSERT_EQ(0, stamp_reply_parse(reply_pkt, sizeof(reply_pkt), &r));
	EXPECT_EQ(0x01020304, r.seq);
	EXPECT_EQ(TS_C, r.ts);
	EXPECT_EQ(0x0f84, r.err);
	EXPECT_EQ(0xbeef, r.ssid);
	EXPECT_EQ(TS_B, r.rx_ts);
	EXPECT_EQ(0x01020304, r.s_seq);
	EXPECT_EQ(TS_A, r.s_ts);
	EXPECT_EQ(0x8101, r.s_err);
	EXPECT_EQ(63, r.s_ttl);
	ASSERT_TRUE(r.cos.present);
	EXPECT_EQ(46, r.cos.dscp1);
	EXPECT_EQ(10, r.cos.dscp2);
	EXPECT_EQ(1, r.cos.ecn);
	EXPECT_EQ(0, r.cos.flags);
	/* An RFC 8762 reflector's 44 bytes: no TLV. */
	ASSERT_EQ(0, stamp_reply_parse(reply_pkt, 44, &r));
	EXPECT_FALSE(r.cos.present);
	ASSERT_EQ(-EINVAL, stamp_reply_parse(reply_pkt, 43, &r));
}

TEST(reflect)
{
	uint8_t out[64], in[64], dscp;

	/* By default the reply keeps the DSCP received, 10, not DSCP1's 46:
	 * RP 1 says so; the rest is reply_pkt. */
	ASSERT_EQ(52, stamp_reflect(test_pkt, sizeof(test_pkt), 10 << 2 | 1, 63, TS_B, TS_C,
				    0x0f84, out, &dscp));
	ASSERT_EQ(0, memcmp(out, reply_pkt, 49));
	EXPECT_EQ(0xa5, out[49]);
	ASSERT_EQ(0, memcmp(out + 50, reply_pkt + 50, 2));
	EXPECT_EQ(10, dscp);

	/* Without the TLV: the reply keeps the DSCP received. */
	ASSERT_EQ(44, stamp_reflect(test_pkt, 44, 10 << 2, 63, TS_B, TS_C, 0x0f84, out, &dscp));
	ASSERT_EQ(0, memcmp(out, reply_pkt, 44));
	EXPECT_EQ(10, dscp);

	/* An unknown TLV is copied with U set, zero padding left alone. */
	memcpy(in, test_pkt, 44);
	memcpy(in + 44, (uint8_t[]){ 0x00, 0x09, 0x00, 0x04, 1, 2, 3, 4, 0, 0, 0, 0 }, 12);
	ASSERT_EQ(56, stamp_reflect(in, 56, 0, 64, TS_B, TS_C, 0, out, &dscp));
	ASSERT_EQ(0, memcmp(out + 44, ((uint8_t[]){ 0x80, 0x09, 0x00, 0x04, 1, 2, 3, 4,
						    0, 0, 0, 0 }), 12));
	/* A TLV running past the packet: M set, the walk ends. */
	memcpy(in + 44, (uint8_t[]){ 0x00, 0x04, 0x00, 0x40, 0xb8, 0, 0, 0 }, 8);
	ASSERT_EQ(52, stamp_reflect(in, 52, 0, 64, TS_B, TS_C, 0, out, &dscp));
	EXPECT_EQ(0x40, out[44]);
	EXPECT_EQ(0, dscp);
	ASSERT_EQ(-EINVAL, stamp_reflect(in, 40, 0, 64, TS_B, TS_C, 0, out, &dscp));
}

static int cos_case(uint8_t tos, uint8_t dscp1, uint64_t allowed, uint8_t *out,
		       struct stamp_refl_out *ro)
{
	struct stamp_refl_in ri = { .tos = tos, .ttl = 63, .rx = TS_B, .tx = TS_C, .err = 0x0f84,
				    .cos_allowed = allowed };
	uint8_t in[52];

	memcpy(in, test_pkt, sizeof(in));
	in[48] = dscp1 << 2;
	return stamp_reflect_ex(in, sizeof(in), &ri, out, ro);
}

/* The operator's set decides whether DSCP1 is used (RFC 8972 section 4.4:
 * RP 0 when it is, 1 when it is not); DSCP2 and ECN are what came. */
TEST(reflect_cos)
{
	struct stamp_refl_out ro;
	uint8_t out[52];

	/* Allowed: the reply is reply_pkt, with DSCP1. */
	ASSERT_EQ(52, cos_case(10 << 2 | 1, 46, 1ULL << 46 | 1, out, &ro));
	ASSERT_EQ(0, memcmp(out, reply_pkt, 52));
	EXPECT_EQ(46, ro.dscp);
	EXPECT_FALSE(ro.cos_refused);
	/* The case: DSCP 0 asking for EF, refused by default and by
	 * a set without it. */
	ASSERT_EQ(52, cos_case(0, 46, 0, out, &ro));
	EXPECT_EQ(0, ro.dscp);
	EXPECT_TRUE(ro.cos_refused);
	EXPECT_EQ(0xb8, out[48]);
	EXPECT_EQ(0x01, out[49]);	/* DSCP2 0, ECN 0, RP 1 */
	ASSERT_EQ(52, cos_case(0, 46, 1ULL << 10 | 1, out, &ro));
	EXPECT_EQ(0, ro.dscp);
	EXPECT_TRUE(ro.cos_refused);
	/* Asking for the DSCP it came with: that is what it gets, RP 0. */
	ASSERT_EQ(52, cos_case(46 << 2, 46, 0, out, &ro));
	EXPECT_EQ(46, ro.dscp);
	EXPECT_FALSE(ro.cos_refused);
	EXPECT_EQ(0xe0, out[49]);	/* DSCP2 46: 1110 in the top nibble, RP 0 */
}

/* PTPv2 truncated timestamps (Z set): seconds and nanoseconds of TAI. */
TEST(ptp_timestamps)
{
	uint64_t ptp = 1763900037ULL << 32 | 123456789;

	EXPECT_EQ(1763900000123456789LL, stamp_ts_to_ns(ptp, STAMP_ERR_Z | 0x0001, 37));
	EXPECT_EQ(1763900037123456789LL, stamp_ts_to_ns(ptp, STAMP_ERR_S | STAMP_ERR_Z, 0));
	/* Z clear: NTP, whatever the TAI offset. */
	EXPECT_EQ(1500000000, stamp_ts_to_ns(stamp_ntp_from_ns(1500000000), STAMP_ERR_S, 37));
}

TEST(timestamps)
{
	EXPECT_EQ(2208988800ULL << 32, stamp_ntp_from_ns(0));
	EXPECT_EQ((2208988800ULL << 32) + (1ULL << 32) + (1ULL << 31),
		  stamp_ntp_from_ns(1500000000));
	EXPECT_EQ(1500000000, stamp_ntp_to_ns(stamp_ntp_from_ns(1500000000)));
	EXPECT_EQ(1763900000123456789LL, stamp_ntp_to_ns(stamp_ntp_from_ns(1763900000123456789LL)));
	/* Error Estimate: Multiplier * 2^(Scale - 32) s, at least the error. */
	EXPECT_EQ(0x8001, stamp_err_encode(0, true));
	EXPECT_EQ(0x0f84, stamp_err_encode(1000000, false));	/* 1 ms: 132 << 15 */
	EXPECT_EQ(0x1980, stamp_err_encode(1000000000, false));	/* 1 s: 128 << 25 */
}

/*
 * Ten sent; 5 and 9 lost, 2 answered twice, 3 after 4. Sequence i has
 * forward 100 ns, 50 ns in the reflector, backward 200 + 10 i ns: RTT
 * 300 + 10 i. The reflector saw DSCP 46 except on 7 (re-marked to 0).
 */
TEST(stream_stats)
{
	static const uint32_t order[] = { 0, 1, 2, 2, 4, 3, 6, 7, 8 };
	struct pstats_sum m;
	struct pstats s;
	unsigned int i;

	ASSERT_EQ(0, pstats_init(&s, 10));
	for (i = 0; i < 10; i++)
		s.slot[i].t1 = 1000000000LL + i * 1000000LL;
	s.sent = 10;
	s.slot[6].t1k = s.slot[6].t1 - 7;	/* a kernel TX timestamp wins */
	for (i = 0; i < ARRAY_SIZE(order); i++) {
		uint32_t q = order[i];
		int64_t t1 = s.slot[q].t1k ? s.slot[q].t1k : s.slot[q].t1;
		struct pstats_slot r = {
			.t2 = t1 + 100, .t3 = t1 + 150, .t4 = t1 + 350 + 10 * q,
			.synced = true, .refl_dscp = q == 7 ? 0 : 46, .refl_ttl = 62,
			.refl_rp = q == 7,
			.t4_kernel = true,
		};

		pstats_reply(&s, q, &r);
	}
	pstats_sum(&s, 46, &m);
	EXPECT_EQ(10, m.sent);
	EXPECT_EQ(8, m.received);
	EXPECT_EQ(2, m.lost);
	EXPECT_EQ(1, m.duplicates);
	EXPECT_EQ(1, m.reordered);
	EXPECT_EQ(8, m.rtt.n);
	EXPECT_EQ(300, m.rtt.min);
	EXPECT_EQ(330, m.rtt.p50);	/* nearest rank: 4th of 8 */
	EXPECT_EQ(380, m.rtt.p90);
	EXPECT_EQ(380, m.rtt.p99);
	EXPECT_EQ(380, m.rtt.max);
	EXPECT_EQ(100, m.fwd.p50);
	EXPECT_EQ(200, m.back.min);
	EXPECT_EQ(280, m.back.max);
	EXPECT_TRUE(m.owd_valid);
	/* RFC 3550 on RTT differences 10, 10, 10, 10, 20, 10, 10. */
	EXPECT_TRUE(m.jitter_ns > 4.183 && m.jitter_ns < 4.185);
	EXPECT_EQ(1, m.tx_kernel);
	EXPECT_EQ(8, m.rx_kernel);
	EXPECT_EQ(8, m.refl_dscp_replies);
	EXPECT_EQ(1, m.remarked);
	EXPECT_EQ(1, m.cos_refused);
	EXPECT_EQ(62, m.refl_ttl);
	pstats_free(&s);
}

/* A reply out of the stream, and unsynchronised clocks. */
TEST(stream_edges)
{
	struct pstats_slot r = { .t2 = 10, .t3 = 20, .t4 = 30, .refl_dscp = -1 };
	struct pstats_sum m;
	struct pstats s;

	ASSERT_EQ(0, pstats_init(&s, 2));
	s.sent = 2;
	pstats_reply(&s, 2, &r);
	pstats_reply(&s, 0, &r);
	pstats_sum(&s, 0, &m);
	EXPECT_EQ(1, m.received);
	EXPECT_EQ(1, m.lost);
	EXPECT_FALSE(m.owd_valid);
	EXPECT_EQ(-1, m.refl_dscp);
	EXPECT_EQ(0, m.remarked);
	EXPECT_EQ(0, m.jitter_ns);
	pstats_free(&s);
}

/* The SLA verdict at its bounds, and the histogram's buckets. */
TEST(sla_and_histogram)
{
	struct pm_sla sla = { .set = true, .cls = "pip", .delay_p99_ns = 1000000,
			      .loss_ratio = 0.001 };
	struct pstats_sum sum = { .sent = 1000, .lost = 1, .rtt = { .n = 999, .p99 = 1000000 } };
	struct probe_stream ps = { .name = "pip" };
	struct pm_stream m = {};
	struct pm_target t = { .s = &ps, .m = &m, .n = 1, .sla = &sla };
	static const int64_t rtt[] = { 40000, 50000, 50001, 2000000, 3000000000LL };
	unsigned int i;

	EXPECT_TRUE(pm_sla_met(&sla, &sum));
	sum.lost = 2;
	EXPECT_FALSE(pm_sla_met(&sla, &sum));
	sum.lost = 0;
	sum.rtt.p99 = 1000001;
	EXPECT_FALSE(pm_sla_met(&sla, &sum));
	sla.delay_p99_ns = 0;
	EXPECT_TRUE(pm_sla_met(&sla, &sum));
	sum.rtt.n = 0;
	sla.delay_p99_ns = 1;
	EXPECT_FALSE(pm_sla_met(&sla, &sum));	/* nothing answered */

	/* Five replies: two at or below 50 us, one just above, 2 ms, 3 s. */
	ASSERT_EQ(0, pstats_init(&ps.st, 5));
	ps.st.sent = 5;
	for (i = 0; i < 5; i++) {
		struct pstats_slot r = { .t2 = 10, .t3 = 10, .t4 = rtt[i], .refl_dscp = -1 };

		pstats_reply(&ps.st, i, &r);
	}
	pstats_sum(&ps.st, 46, &ps.sum);
	sla.delay_p99_ns = 0;
	pm_add_window(&t);
	EXPECT_EQ(2, m.bucket[0]);		/* le 0.00005 */
	EXPECT_EQ(1, m.bucket[1]);		/* le 0.0001 */
	EXPECT_EQ(1, m.bucket[5]);		/* le 0.002 */
	EXPECT_EQ(1, m.bucket[PM_BUCKETS]);	/* +Inf */
	EXPECT_EQ(5, m.sent);
	EXPECT_EQ(1, m.sla_met);
	EXPECT_EQ(1, t.windows);
	pstats_free(&ps.st);
}

/*
 * Label values in the probe's metrics escape backslash, double quote and
 * newline as the exposition format asks (they were printed raw), in every
 * series, the windows counter's target included.
 */
TEST(metrics_labels_escaped)
{
	struct probe_stream ps = { .name = "a\"b\\c\nd" };
	struct pm_stream m = { .sla_met = -1 };
	struct pm_target t = { .target = "x\"y", .family = "ipv6", .s = &ps, .m = &m, .n = 1 };
	char *buf = NULL, *line;
	size_t len = 0, n = 0;
	FILE *f;

	f = open_memstream(&buf, &len);
	ASSERT_NE(NULL, f);
	pm_write(f, &t);
	fclose(f);
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		if (line[0] == '#')
			continue;
		n++;
		if (!strncmp(line, "qosctl_probe_windows_total", 26)) {
			EXPECT_STREQ("qosctl_probe_windows_total{target=\"x\\\"y\",family=\"ipv6\"} 0",
				     line);
			continue;
		}
		EXPECT_NE(NULL, strstr(line, "{target=\"x\\\"y\",family=\"ipv6\","
					     "class=\"a\\\"b\\\\c\\nd\"")) TH_LOG("%s", line);
	}
	EXPECT_LT(5, n);
	free(buf);
}

TEST_HARNESS_MAIN
