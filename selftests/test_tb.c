// SPDX-License-Identifier: GPL-2.0-only
/*
 * The policer's token-bucket arithmetic (bpf/lib/tb.h), compiled natively
 * and driven by a synthetic clock: no BPF, no timing.
 *
 * The expected colours of the RFC examples are worked out by hand from the
 * definitions in RFC 2697 section 3 and RFC 2698 section 3 and written in
 * the comments; they are not computed by the code under test.
 */
#include <stdint.h>

#include "kselftest_harness.h"
#include "bpf/lib/tb.h"

#define MS	1000000ULL
#define SEC	1000000000ULL
#define DAY	(86400ULL * SEC)
#define NB	TB_NBITS_PER_BYTE

/* A full srTCM bucket at time 0. */
static int srtcm(struct tb_params *p, struct tb_state *s, uint64_t cir, uint64_t cbs,
		 uint64_t ebs)
{
	int err = tb_params_init(p, TB_SRTCM, cir, cbs, 0, ebs);

	tb_state_init(p, s, 0);
	return err;
}

/* An idle bucket refills to its size and no further. */
TEST(idle_refill_capped)
{
	struct tb_params p;
	struct tb_state s;

	ASSERT_EQ(0, srtcm(&p, &s, 8000, 1500, 0));		/* 1 byte per ms */
	EXPECT_EQ(TB_GREEN, tb_police(&p, &s, 0, 1500, TB_GREEN));
	EXPECT_EQ(0, s.tc);
	/* 10 s would be 10000 bytes; the bucket holds 1500. */
	EXPECT_EQ(TB_GREEN, tb_police(&p, &s, 10 * SEC, 1500, TB_GREEN));
	EXPECT_EQ(TB_RED, tb_police(&p, &s, 10 * SEC, 1, TB_GREEN));
	/* Half-way: exactly 500 bytes back. */
	tb_refill(&p, &s, 10 * SEC + 500 * MS);
	EXPECT_EQ(500 * NB, s.tc);
	EXPECT_EQ(0, s.te);
}

/* A packet larger than a bucket never fits it, however long the idle. */
TEST(packet_larger_than_burst)
{
	struct tb_params p;
	struct tb_state s;

	ASSERT_EQ(0, srtcm(&p, &s, 8000000, 1000, 0));
	EXPECT_EQ(TB_RED, tb_police(&p, &s, 0, 1001, TB_GREEN));
	EXPECT_EQ(1000 * NB, s.tc);		/* a red packet takes nothing */
	EXPECT_EQ(TB_RED, tb_police(&p, &s, DAY, 1500, TB_GREEN));
	EXPECT_EQ(TB_GREEN, tb_police(&p, &s, DAY, 1000, TB_GREEN));

	/* With an excess bucket that holds it, it is yellow. */
	ASSERT_EQ(0, srtcm(&p, &s, 8000000, 1000, 2000));
	EXPECT_EQ(TB_YELLOW, tb_police(&p, &s, 0, 1500, TB_GREEN));
	EXPECT_EQ(1000 * NB, s.tc);
	EXPECT_EQ(500 * NB, s.te);
}

/* Days of idle at both ends of the rate range: full buckets, no overflow,
 * and the first interval after is credited exactly. */
TEST(long_idle_no_overflow)
{
	static const uint64_t rates[] = { TB_RATE_MIN, 400000000000ULL, TB_RATE_MAX };
	struct tb_params p;
	struct tb_state s;
	unsigned int i;

	for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		ASSERT_EQ(0, tb_params_init(&p, TB_SRTCM, rates[i], TB_BURST_MAX, 0,
					    TB_BURST_MAX));
		tb_state_init(&p, &s, 0);
		s.tc = 0;
		s.te = 0;
		tb_refill(&p, &s, 3650 * DAY);
		EXPECT_EQ((uint64_t)TB_BURST_MAX * NB, s.tc);
		EXPECT_EQ((uint64_t)TB_BURST_MAX * NB, s.te);
		EXPECT_EQ(TB_GREEN, tb_police(&p, &s, 3650 * DAY, TB_BURST_MAX, TB_GREEN));
		EXPECT_EQ(TB_YELLOW, tb_police(&p, &s, 3650 * DAY, TB_BURST_MAX, TB_GREEN));
		EXPECT_EQ(TB_RED, tb_police(&p, &s, 3650 * DAY, 1, TB_GREEN));
		/* One more millisecond: exactly rate x 1 ms in C. */
		tb_refill(&p, &s, 3650 * DAY + MS);
		EXPECT_EQ(rates[i] * MS, s.tc);

		ASSERT_EQ(0, tb_params_init(&p, TB_TRTCM, rates[i], TB_BURST_MAX, rates[i],
					    TB_BURST_MAX));
		tb_state_init(&p, &s, 0);
		s.tc = 1;
		s.te = 2;
		tb_refill(&p, &s, 3650 * DAY);
		EXPECT_EQ((uint64_t)TB_BURST_MAX * NB, s.tc);
		EXPECT_EQ((uint64_t)TB_BURST_MAX * NB, s.te);
	}
}

/* 1 kbit/s: one byte every 8 ms, to the nanosecond. */
TEST(rate_1kbit)
{
	struct tb_params p;
	struct tb_state s;

	ASSERT_EQ(0, srtcm(&p, &s, 1000, 100, 0));
	EXPECT_EQ(TB_GREEN, tb_police(&p, &s, 0, 100, TB_GREEN));
	EXPECT_EQ(TB_RED, tb_police(&p, &s, 8 * MS - 1, 1, TB_GREEN));
	EXPECT_EQ(TB_GREEN, tb_police(&p, &s, 8 * MS, 1, TB_GREEN));
	EXPECT_EQ(0, s.tc);
	/* 100 bytes take 800 ms. */
	EXPECT_EQ(TB_RED, tb_police(&p, &s, 808 * MS - 1, 100, TB_GREEN));
	EXPECT_EQ(TB_GREEN, tb_police(&p, &s, 808 * MS, 100, TB_GREEN));
}

/* 400 Gbit/s: 50 bytes per ns; a 1500-byte packet every 30 ns. */
TEST(rate_400gbit)
{
	struct tb_params p;
	struct tb_state s;
	uint64_t t;

	ASSERT_EQ(0, srtcm(&p, &s, 400000000000ULL, 1500, 0));
	EXPECT_EQ(TB_GREEN, tb_police(&p, &s, 0, 1500, TB_GREEN));
	EXPECT_EQ(TB_RED, tb_police(&p, &s, 29, 1500, TB_GREEN));
	EXPECT_EQ(TB_GREEN, tb_police(&p, &s, 30, 1500, TB_GREEN));
	/* A million packets at exactly the rate: every one green. */
	for (t = 60; t <= 30000000; t += 30)
		if (tb_police(&p, &s, t, 1500, TB_GREEN) != TB_GREEN)
			break;
	EXPECT_EQ(30000030, t);
	EXPECT_EQ(0, s.tc);
}

/* Offered at twice an odd rate with odd spacing for a simulated minute:
 * what passes is the burst plus rate x time, to within one packet. No
 * drift from rounding, whatever the spacing. */
TEST(no_drift)
{
	const uint64_t rate = 7777777, pkt = 1371, burst = 10000;
	/* Twice the rate: a packet every pkt * 8 / (2 * rate) s. */
	const uint64_t gap = pkt * 8 * SEC / (2 * rate);
	uint64_t t, passed = 0, allowed;
	struct tb_params p;
	struct tb_state s;

	ASSERT_EQ(0, srtcm(&p, &s, rate, burst, 0));
	for (t = 0; t < 60 * SEC; t += gap)
		if (tb_police(&p, &s, t, pkt, TB_GREEN) == TB_GREEN)
			passed += pkt;
	t -= gap;
	allowed = burst + rate * t / 8 / SEC;
	EXPECT_GE(allowed, passed);
	EXPECT_LE(allowed - passed, pkt);
	/* Exact accounting: what passed plus what is left equals burst plus
	 * everything earned, in nanobits. */
	EXPECT_EQ(burst * NB + rate * t, passed * NB + s.tc);
}

/* A clock read on another CPU, behind the last refill, adds nothing and
 * does not move the refill time back. */
TEST(clock_behind)
{
	struct tb_params p;
	struct tb_state s;

	ASSERT_EQ(0, srtcm(&p, &s, 8000, 1000, 0));
	EXPECT_EQ(TB_GREEN, tb_police(&p, &s, 100 * MS, 1000, TB_GREEN));
	EXPECT_EQ(100 * MS, s.last_ns);
	EXPECT_EQ(TB_RED, tb_police(&p, &s, 90 * MS, 1, TB_GREEN));
	EXPECT_EQ(100 * MS, s.last_ns);
	tb_refill(&p, &s, 101 * MS);
	EXPECT_EQ(1 * NB, s.tc);
}

/* A rate change credits the time before it at the old rate, the time after
 * at the new one, and cuts the tokens to a smaller bucket. */
TEST(rate_change)
{
	struct tb_params p, np;
	struct tb_state s;

	ASSERT_EQ(0, srtcm(&p, &s, 8000, 10000, 0));		/* 1 byte/ms */
	EXPECT_EQ(TB_GREEN, tb_police(&p, &s, 0, 10000, TB_GREEN));
	ASSERT_EQ(0, tb_params_init(&np, TB_SRTCM, 16000, 10000, 0, 0));	/* 2 bytes/ms */
	tb_reconfig(&p, &s, &np, 1000 * MS);
	EXPECT_EQ(1000 * NB, s.tc);		/* 1 s at the old rate */
	tb_refill(&p, &s, 2000 * MS);
	EXPECT_EQ(3000 * NB, s.tc);		/* plus 1 s at the new rate */

	/* Shrinking the bucket cuts what it holds. */
	ASSERT_EQ(0, tb_params_init(&np, TB_SRTCM, 16000, 2000, 0, 0));
	tb_reconfig(&p, &s, &np, 2000 * MS);
	EXPECT_EQ(2000 * NB, s.tc);
	EXPECT_EQ(TB_GREEN, tb_police(&p, &s, 2000 * MS, 2000, TB_GREEN));
	EXPECT_EQ(TB_RED, tb_police(&p, &s, 2000 * MS, 1, TB_GREEN));

	/* A bigger bucket is not refilled by the change. */
	ASSERT_EQ(0, tb_params_init(&np, TB_SRTCM, 16000, 50000, 0, 0));
	tb_reconfig(&p, &s, &np, 2500 * MS);
	EXPECT_EQ(1000 * NB, s.tc);
}

/*
 * RFC 2697, colour-blind. CIR 8000 bit/s = 1 byte/ms, CBS 3000, EBS 2000,
 * packets of 1000 bytes. Tc = 3000, Te = 2000 at start.
 *   t=0     x6: G G G (Tc 0) Y Y (Te 0) R
 *   t=1500  +1500 bytes all into C (Tc 1500): G (Tc 500), R
 *   t=5000  +3500: C takes 2500 (Tc 3000), E the other 1000:
 *           G G G Y R
 */
TEST(srtcm_blind_worked_example)
{
	static const struct {
		uint64_t t_ms;
		int color;
	} ex[] = {
		{ 0, TB_GREEN }, { 0, TB_GREEN }, { 0, TB_GREEN }, { 0, TB_YELLOW },
		{ 0, TB_YELLOW }, { 0, TB_RED },
		{ 1500, TB_GREEN }, { 1500, TB_RED },
		{ 5000, TB_GREEN }, { 5000, TB_GREEN }, { 5000, TB_GREEN },
		{ 5000, TB_YELLOW }, { 5000, TB_RED },
	};
	struct tb_params p;
	struct tb_state s;
	unsigned int i;

	ASSERT_EQ(0, srtcm(&p, &s, 8000, 3000, 2000));
	for (i = 0; i < sizeof(ex) / sizeof(ex[0]); i++)
		EXPECT_EQ(ex[i].color, tb_police(&p, &s, ex[i].t_ms * MS, 1000, TB_GREEN))
			TH_LOG("packet %u", i);
}

/*
 * RFC 2697, colour-aware, same buckets. A yellow packet may only use E, a
 * red one is red and takes nothing.
 *   t=0  Y-in: Y (Te 1000)   R-in: R   G-in: G (Tc 2000)
 *        Y-in: Y (Te 0)      Y-in: R (Te empty, C not allowed)
 *        G-in: G (Tc 1000)   G-in: G (Tc 0)   G-in: R
 */
TEST(srtcm_aware_worked_example)
{
	static const int in[] = { TB_YELLOW, TB_RED, TB_GREEN, TB_YELLOW, TB_YELLOW,
				  TB_GREEN, TB_GREEN, TB_GREEN };
	static const int out[] = { TB_YELLOW, TB_RED, TB_GREEN, TB_YELLOW, TB_RED,
				   TB_GREEN, TB_GREEN, TB_RED };
	struct tb_params p;
	struct tb_state s;
	unsigned int i;

	ASSERT_EQ(0, srtcm(&p, &s, 8000, 3000, 2000));
	for (i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		EXPECT_EQ(out[i], tb_police(&p, &s, 0, 1000, in[i])) TH_LOG("packet %u", i);
}

/*
 * RFC 2698, colour-blind. CIR 8000 bit/s (1 byte/ms), CBS 2000;
 * PIR 16000 bit/s (2 bytes/ms), PBS 3000; packets of 1000 bytes.
 *   t=0    G (Tp 2000 Tc 1000)  G (Tp 1000 Tc 0)  Y (Tp 0)  R
 *   t=500  Tc 500, Tp 1000: Y (Tp 0)
 *   t=1000 Tc 1000, Tp 1000: G (both 0)  R
 *   t=3000 Tc 2000 (full), Tp 3000 (full): G G Y R
 */
TEST(trtcm_blind_worked_example)
{
	static const struct {
		uint64_t t_ms;
		int color;
	} ex[] = {
		{ 0, TB_GREEN }, { 0, TB_GREEN }, { 0, TB_YELLOW }, { 0, TB_RED },
		{ 500, TB_YELLOW },
		{ 1000, TB_GREEN }, { 1000, TB_RED },
		{ 3000, TB_GREEN }, { 3000, TB_GREEN }, { 3000, TB_YELLOW }, { 3000, TB_RED },
	};
	struct tb_params p;
	struct tb_state s;
	unsigned int i;

	ASSERT_EQ(0, tb_params_init(&p, TB_TRTCM, 8000, 2000, 16000, 3000));
	tb_state_init(&p, &s, 0);
	for (i = 0; i < sizeof(ex) / sizeof(ex[0]); i++)
		EXPECT_EQ(ex[i].color, tb_police(&p, &s, ex[i].t_ms * MS, 1000, TB_GREEN))
			TH_LOG("packet %u", i);
}

/*
 * RFC 2698, colour-aware, same buckets (Tp 3000, Tc 2000).
 *   Y-in: Y (Tp 2000, Tc stays 2000)   R-in: R (nothing taken)
 *   G-in: G (Tp 1000, Tc 1000)         Y-in: Y (Tp 0)
 *   G-in: R (Tp empty although Tc holds 1000)
 */
TEST(trtcm_aware_worked_example)
{
	static const int in[] = { TB_YELLOW, TB_RED, TB_GREEN, TB_YELLOW, TB_GREEN };
	static const int out[] = { TB_YELLOW, TB_RED, TB_GREEN, TB_YELLOW, TB_RED };
	struct tb_params p;
	struct tb_state s;
	unsigned int i;

	ASSERT_EQ(0, tb_params_init(&p, TB_TRTCM, 8000, 2000, 16000, 3000));
	tb_state_init(&p, &s, 0);
	for (i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		EXPECT_EQ(out[i], tb_police(&p, &s, 0, 1000, in[i])) TH_LOG("packet %u", i);
	EXPECT_EQ(1000 * NB, s.tc);
	EXPECT_EQ(0, s.te);
}

/* The seed's knee, in bytes, worked out by hand. */
TEST(auto_burst)
{
	/* 0.6 Mbit + 0.03 s x 10 Mbit/s = 900000 bit */
	EXPECT_EQ(112500, tb_auto_burst(10000000, 1514));
	/* 0.6 Mbit + 0.03 s x 30 Mbit/s = 1.5 Mbit */
	EXPECT_EQ(187500, tb_auto_burst(30000000, 1514));
	/* 1.5 Mbit + 0.01 s x 50 Mbit/s = 2 Mbit */
	EXPECT_EQ(250000, tb_auto_burst(50000000, 1514));
	/* 1.5 Mbit + 0.01 s x 70 Mbit/s = 2.2 Mbit */
	EXPECT_EQ(275000, tb_auto_burst(70000000, 1514));
	/* 600030 bit, rounded up to whole bytes */
	EXPECT_EQ(75004, tb_auto_burst(1000, 1514));
	/* 1.5 Mbit + 4000 Mbit */
	EXPECT_EQ(500187500, tb_auto_burst(400000000000ULL, 1514));
	EXPECT_EQ(TB_BURST_MAX, tb_auto_burst(TB_RATE_MAX, 1514));
	/* never below one frame */
	EXPECT_EQ(200000, tb_auto_burst(1000, 200000));
}

TEST(params_range)
{
	struct tb_params p;

	EXPECT_EQ(-1, tb_params_init(&p, TB_SRTCM, TB_RATE_MIN - 1, 1500, 0, 0));
	EXPECT_EQ(-1, tb_params_init(&p, TB_SRTCM, TB_RATE_MAX + 1, 1500, 0, 0));
	EXPECT_EQ(-1, tb_params_init(&p, TB_SRTCM, 8000, TB_BURST_MAX + 1, 0, 0));
	EXPECT_EQ(-1, tb_params_init(&p, TB_SRTCM, 8000, 1500, 0, TB_BURST_MAX + 1));
	EXPECT_EQ(-1, tb_params_init(&p, TB_TRTCM, 8000, 1500, 7999, 1500));
	EXPECT_EQ(-1, tb_params_init(&p, 2, 8000, 1500, 8000, 1500));
	EXPECT_EQ(0, tb_params_init(&p, TB_TRTCM, 8000, 1500, 8000, 1500));
	/* 1500 bytes at 8000 bit/s: 1.5 s to fill */
	EXPECT_EQ(1500 * MS, p.fill_c_ns);
}

TEST_HARNESS_MAIN
