// SPDX-License-Identifier: GPL-2.0-only
/*
 * The policer's token-bucket arithmetic (bpf/lib/tb.h), compiled natively
 * and driven by a synthetic clock: no BPF, no timing. The same
 * compare-and-swap code the BPF program runs is run here from two threads
 * at once on one bucket.
 *
 * The expected colours of the RFC examples are worked out by hand from the
 * definitions in RFC 2697 section 3 and RFC 2698 section 3 and written in
 * the comments; they are not computed by the code under test.
 */
#define _GNU_SOURCE /* cpus.h */
#include <stdint.h>

#include <linux/types.h>

#include "kselftest_harness.h"
#include "cpus.h"

/* Every CAS on this word loses, as to a faster CPU (tb_step()'s way out). */
static void *cas_loses;

static inline __u64 test_cas(__u64 *p, __u64 old, __u64 new)
{
	if (p == cas_loses)
		return old + 1;
	return __sync_val_compare_and_swap(p, old, new);
}

#define TB_CAS(p, old, new) test_cas(p, old, new)
#include "bpf/lib/tb.h"

#define MS	1000000ULL
#define SEC	1000000000ULL
#define DAY	(86400ULL * SEC)
#define NB	TB_NBITS_PER_BYTE
#define TICK	(4 * MS)	/* HZ=250 */

/* Credit the time up to @now and take nothing: a red probe. */
static void refill(const struct tb_params *p, struct tb_state *s, uint64_t now)
{
	tb_police(p, s, now, 0, TB_RED);
}

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
	refill(&p, &s, 10 * SEC + 500 * MS);
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

/*
 * A GSO packet of 64000 bytes on the wire, admitted on one segment's worth
 * (1514 bytes) by a 15000-byte bucket at 1 byte/ms: it takes all of its
 * bytes and leaves the bucket 49000 bytes in debt, which turns every packet
 * red until the debt is paid and a segment's worth earned again, to the
 * nanosecond.
 */
TEST(gso_debt)
{
	struct tb_params p;
	struct tb_state s;

	ASSERT_EQ(0, srtcm(&p, &s, 8000, 15000, 0));
	EXPECT_EQ(TB_GREEN, tb_police_gso(&p, &s, 0, 64000, 1514, TB_GREEN));
	EXPECT_EQ(-49000 * (int64_t)NB, (int64_t)s.tc);
	EXPECT_EQ(TB_RED, tb_police(&p, &s, 0, 1, TB_GREEN));
	EXPECT_EQ(TB_RED, tb_police_gso(&p, &s, 49 * SEC, 64000, 1514, TB_GREEN));
	EXPECT_EQ(0, s.tc);
	EXPECT_EQ(TB_RED, tb_police_gso(&p, &s, 50514 * MS - 1, 64000, 1514, TB_GREEN));
	EXPECT_EQ(TB_GREEN, tb_police_gso(&p, &s, 50514 * MS, 64000, 1514, TB_GREEN));
	EXPECT_EQ((1514 - 64000) * (int64_t)NB, (int64_t)s.tc);
	/* A reconfiguration keeps the debt. */
	ASSERT_EQ(0, tb_params_init(&p, TB_SRTCM, 8000, 1000, 0, 0));
	tb_reconfig(&s, &p);
	EXPECT_EQ((1514 - 64000) * (int64_t)NB, (int64_t)s.tc);
}

/* srTCM: a C in debt overflows nothing into E until it is paid and full. */
TEST(gso_debt_srtcm_excess)
{
	struct tb_params p;
	struct tb_state s;

	ASSERT_EQ(0, srtcm(&p, &s, 8000, 1000, 2000));	/* 1 byte per ms */
	s.te = 0;
	EXPECT_EQ(TB_GREEN, tb_police_gso(&p, &s, 0, 5000, 500, TB_GREEN));
	EXPECT_EQ(-4000 * (int64_t)NB, (int64_t)s.tc);
	/* A yellow packet is admitted by E on its own: E is empty. */
	EXPECT_EQ(TB_RED, tb_police(&p, &s, 0, 1, TB_GREEN));
	refill(&p, &s, 5 * SEC);
	EXPECT_EQ(1000 * NB, s.tc);
	EXPECT_EQ(0, s.te);
	refill(&p, &s, 6 * SEC);
	EXPECT_EQ(1000 * NB, s.tc);
	EXPECT_EQ(1000 * NB, s.te);
}

/*
 * trTCM: P then C each admit on the segment's worth and take the whole
 * packet. CIR 1 byte/ms, CBS 1000; PIR 2 bytes/ms, PBS 3000.
 *   t=0  GSO 4000 (need 500): P 3000 -> -1000, C 1000 -> -3000, green
 *        100 bytes: P in debt, red
 *   t=1s P 1000, C -2000: 100 bytes yellow (P 900)
 */
TEST(gso_debt_trtcm)
{
	struct tb_params p;
	struct tb_state s;

	ASSERT_EQ(0, tb_params_init(&p, TB_TRTCM, 8000, 1000, 16000, 3000));
	tb_state_init(&p, &s, 0);
	EXPECT_EQ(TB_GREEN, tb_police_gso(&p, &s, 0, 4000, 500, TB_GREEN));
	EXPECT_EQ(-1000 * (int64_t)NB, (int64_t)s.te);
	EXPECT_EQ(-3000 * (int64_t)NB, (int64_t)s.tc);
	EXPECT_EQ(TB_RED, tb_police(&p, &s, 0, 100, TB_GREEN));
	EXPECT_EQ(TB_YELLOW, tb_police(&p, &s, SEC, 100, TB_GREEN));
	EXPECT_EQ(900 * NB, s.te);
	EXPECT_EQ(-2000 * (int64_t)NB, (int64_t)s.tc);
}

/*
 * The long run: 64000-byte GSO packets (1514-byte segments) every ms,
 * 512 Mbit/s, through 20 Mbit/s with a 15000-byte bucket, for a simulated
 * minute. The debt never passes one packet less a segment, and what passed
 * plus what the bucket holds (or owes) is the burst plus rate x time to the
 * nanobit: no rate is lost or gained to the debt. (The bucket never fills:
 * a millisecond earns 2500 bytes, and a segment's worth admits.)
 */
TEST(gso_debt_long_run)
{
	const uint64_t rate = 20000000, wire = 64000, seg = 1514, burst = 15000;
	int64_t low = 0;
	uint64_t t, passed = 0;
	struct tb_params p;
	struct tb_state s;

	ASSERT_EQ(0, srtcm(&p, &s, rate, burst, 0));
	for (t = 0; t < 60 * SEC; t += MS) {
		if (tb_police_gso(&p, &s, t, wire, seg, TB_GREEN) == TB_GREEN)
			passed += wire;
		if ((int64_t)s.tc < low)
			low = s.tc;
	}
	t -= MS;
	EXPECT_GE(low, -(int64_t)((wire - seg) * NB));
	EXPECT_LT(low, 0);
	EXPECT_EQ(burst * NB + rate * t, passed * NB + s.tc);
	/* Within a packet of the rate: 150 MB in the minute. */
	EXPECT_LE(passed, burst + rate * t / 8 / SEC + wire - seg);
	EXPECT_GE(passed + wire, rate * t / 8 / SEC);
}

/* Days of idle at both ends of the rate range: full buckets, no overflow,
 * and the first interval after is credited exactly. */
TEST(long_idle_no_overflow)
{
	static const uint64_t rates[] = { TB_RATE_MIN, 100000000000ULL, 400000000000ULL,
					 TB_RATE_MAX };
	struct tb_params p;
	struct tb_state s;
	unsigned int i;

	for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		ASSERT_EQ(0, tb_params_init(&p, TB_SRTCM, rates[i], TB_BURST_MAX, 0,
					    TB_BURST_MAX));
		tb_state_init(&p, &s, 0);
		s.tc = 0;
		s.te = 0;
		refill(&p, &s, 3650 * DAY);
		EXPECT_EQ((uint64_t)TB_BURST_MAX * NB, s.tc);
		EXPECT_EQ((uint64_t)TB_BURST_MAX * NB, s.te);
		EXPECT_EQ(TB_GREEN, tb_police(&p, &s, 3650 * DAY, TB_BURST_MAX, TB_GREEN));
		EXPECT_EQ(TB_YELLOW, tb_police(&p, &s, 3650 * DAY, TB_BURST_MAX, TB_GREEN));
		EXPECT_EQ(TB_RED, tb_police(&p, &s, 3650 * DAY, 1, TB_GREEN));
		/* One more millisecond: exactly rate x 1 ms in C. */
		refill(&p, &s, 3650 * DAY + MS);
		EXPECT_EQ(rates[i] * MS, s.tc);

		ASSERT_EQ(0, tb_params_init(&p, TB_TRTCM, rates[i], TB_BURST_MAX, rates[i],
					    TB_BURST_MAX));
		tb_state_init(&p, &s, 0);
		s.tc = 1;
		s.te = 2;
		refill(&p, &s, 3650 * DAY);
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
	refill(&p, &s, 101 * MS);
	EXPECT_EQ(1 * NB, s.tc);
}

/* A rate change keeps the tokens and credits the time after it at the new
 * rate; a smaller bucket cuts what it holds, a bigger one is not refilled. */
TEST(rate_change)
{
	struct tb_params p;
	struct tb_state s;

	ASSERT_EQ(0, srtcm(&p, &s, 8000, 10000, 0));		/* 1 byte/ms */
	EXPECT_EQ(TB_GREEN, tb_police(&p, &s, 0, 10000, TB_GREEN));
	refill(&p, &s, 1000 * MS);
	EXPECT_EQ(1000 * NB, s.tc);		/* 1 s at the old rate */
	ASSERT_EQ(0, tb_params_init(&p, TB_SRTCM, 16000, 10000, 0, 0));	/* 2 bytes/ms */
	tb_reconfig(&s, &p);
	EXPECT_EQ(1000 * NB, s.tc);
	refill(&p, &s, 2000 * MS);
	EXPECT_EQ(3000 * NB, s.tc);		/* plus 1 s at the new rate */

	/* Shrinking the bucket cuts what it holds. */
	ASSERT_EQ(0, tb_params_init(&p, TB_SRTCM, 16000, 2000, 0, 0));
	tb_reconfig(&s, &p);
	EXPECT_EQ(2000 * NB, s.tc);
	EXPECT_EQ(TB_GREEN, tb_police(&p, &s, 2000 * MS, 2000, TB_GREEN));
	EXPECT_EQ(TB_RED, tb_police(&p, &s, 2000 * MS, 1, TB_GREEN));

	/* A bigger bucket is not refilled by the change. */
	refill(&p, &s, 2500 * MS);
	ASSERT_EQ(0, tb_params_init(&p, TB_SRTCM, 16000, 50000, 0, 0));
	tb_reconfig(&s, &p);
	EXPECT_EQ(1000 * NB, s.tc);

	/* Nor is a bucket a torn write left above its size allowed to keep
	 * the excess: the next packet cuts it. */
	s.tc = 60000 * NB;
	EXPECT_EQ(TB_GREEN, tb_police(&p, &s, 2500 * MS, 1000, TB_GREEN));
	EXPECT_EQ(49000 * NB, s.tc);
}

/* A step whose CAS keeps losing takes nothing (the packet gets the next
 * colour) but its credit still reaches the bucket, by an atomic add; what
 * that leaves above the size is cut by the next step and, in srTCM, goes
 * on to E. */
TEST(cas_gives_up)
{
	struct tb_params p;
	struct tb_state s;

	ASSERT_EQ(0, srtcm(&p, &s, 8000, 10, 100));		/* 1 byte/ms */
	s.tc = 0;
	s.te = 0;
	cas_loses = &s.tc;
	EXPECT_EQ(TB_RED, tb_police(&p, &s, 5 * MS, 1, TB_GREEN));
	EXPECT_EQ(5 * MS, s.last_ns);
	EXPECT_EQ(5 * NB, s.tc);
	cas_loses = NULL;
	EXPECT_EQ(TB_GREEN, tb_police(&p, &s, 5 * MS, 5, TB_GREEN));
	EXPECT_EQ(0, s.tc);

	/* Full C: the add goes above its size; the next step cuts it and E
	 * gets the excess. */
	s.tc = 10 * NB;
	cas_loses = &s.tc;
	EXPECT_EQ(TB_RED, tb_police(&p, &s, 12 * MS, 1, TB_GREEN));	/* E is empty */
	EXPECT_EQ(17 * NB, s.tc);
	EXPECT_EQ(0, s.te);
	cas_loses = NULL;
	refill(&p, &s, 12 * MS);
	EXPECT_EQ(10 * NB, s.tc);
	EXPECT_EQ(7 * NB, s.te);
}

/* A reading of another clock (2^62 ns or more away) is adopted as the new
 * origin: nothing is credited for the jump, either way, and the time after
 * it is credited exactly. */
TEST(other_clock)
{
	const uint64_t j = 2 * TB_CLOCK_OTHER + 12345 * TICK;	/* a jiffies reading */
	struct tb_params p;
	struct tb_state s;

	ASSERT_EQ(0, srtcm(&p, &s, 8000, 1000, 0));		/* 1 byte/ms */
	EXPECT_EQ(TB_GREEN, tb_police(&p, &s, 5 * SEC, 1000, TB_GREEN));
	EXPECT_EQ(TB_RED, tb_police(&p, &s, j, 1, TB_GREEN));
	EXPECT_EQ(0, s.tc);
	EXPECT_EQ(j, s.last_ns);
	refill(&p, &s, j + TICK);
	EXPECT_EQ(4 * NB, s.tc);
	/* And back: CLOCK_MONOTONIC after jiffies. */
	EXPECT_EQ(TB_RED, tb_police(&p, &s, 6 * SEC, 5, TB_GREEN));
	EXPECT_EQ(4 * NB, s.tc);
	EXPECT_EQ(6 * SEC, s.last_ns);

	/* A policer installed with time 0 and full buckets (what qosctl
	 * writes) is full at its first packet on either clock. */
	ASSERT_EQ(0, srtcm(&p, &s, 8000, 1000, 0));
	EXPECT_EQ(TB_GREEN, tb_police(&p, &s, j, 1000, TB_GREEN));
	ASSERT_EQ(0, srtcm(&p, &s, 8000, 1000, 0));
	EXPECT_EQ(TB_GREEN, tb_police(&p, &s, 1, 1000, TB_GREEN));
}

/* The tick a policer with these parameters gets from tb_params_clock(), or
 * -1 if they are out of range. */
static long long chosen_tick(__u32 mode, __u64 cir, __u64 cbs, __u64 pir, __u64 ebs)
{
	struct tb_params p;

	if (tb_params_init(&p, mode, cir, cbs, pir, ebs) || p.tick_ns)
		return -1;
	tb_params_clock(&p, TICK);
	return p.tick_ns;
}

/* The tick clock is chosen only for buckets that hold ten ticks of tokens
 * at their rate, all of them. */
TEST(tick_clock_choice)
{
	struct tb_params p;

	/* 10 Mbit/s, 50000 bytes = 40 ms: ten ticks, enough; a byte less is
	 * not, nor is tick 0. */
	EXPECT_EQ(TICK, chosen_tick(TB_SRTCM, 10000000, 50000, 0, 0));
	EXPECT_EQ(0, chosen_tick(TB_SRTCM, 10000000, 49999, 0, 0));
	ASSERT_EQ(0, tb_params_init(&p, TB_SRTCM, 10000000, 50000, 0, 0));
	tb_params_clock(&p, TICK);
	tb_params_clock(&p, 0);
	EXPECT_EQ(0, p.tick_ns);
	/* One frame at 100 Mbit/s is 0.12 ms: exact clock. */
	EXPECT_EQ(0, chosen_tick(TB_SRTCM, 100000000, 1514, 0, 0));
	/* A small EBS or PBS keeps the exact clock too; EBS 0 does not. */
	EXPECT_EQ(0, chosen_tick(TB_SRTCM, 10000000, 50000, 0, 1514));
	EXPECT_EQ(0, chosen_tick(TB_TRTCM, 10000000, 50000, 100000000, 50000));
	EXPECT_EQ(TICK, chosen_tick(TB_TRTCM, 10000000, 50000, 10000000, 50000));
	/* The auto burst holds 40 ms at 50 Mbit/s, 10.75 ms at 2 Gbit/s. */
	EXPECT_EQ(TICK, chosen_tick(TB_SRTCM, 50000000, tb_auto_burst(50000000, 1514), 0, 0));
	EXPECT_EQ(0, chosen_tick(TB_SRTCM, 2000000000, tb_auto_burst(2000000000, 1514), 0, 0));
}

/*
 * Sustained overload on a tick clock: a bucket of two ticks passes the
 * burst plus rate x the time of the last tick read, to the byte; the lumps
 * are never cut by the cap. With less than one tick of bucket, the cap
 * cuts every lump and the rate collapses.
 */
TEST(tick_clock_exact)
{
	const uint64_t rate = 10000000, pkt = 1000, gap = pkt * 8 * SEC / (2 * rate);
	const uint64_t sizes[] = { 10000, 4000 };
	unsigned int i;

	for (i = 0; i < 2; i++) {
		uint64_t t, now = 0, passed = 0, want;
		struct tb_params p;
		struct tb_state s;

		ASSERT_EQ(0, srtcm(&p, &s, rate, sizes[i], 0));
		for (t = 0; t < 10 * SEC; t += gap) {
			now = t / TICK * TICK;
			if (tb_police(&p, &s, now, pkt, TB_GREEN) == TB_GREEN)
				passed += pkt;
		}
		want = sizes[i] + rate * now / 8 / SEC;
		if (i == 0) {
			EXPECT_EQ(want * NB, passed * NB + s.tc);
			EXPECT_LE(want - passed, pkt);
		} else {
			EXPECT_LT(passed, want * 9 / 10) TH_LOG("%llu of %llu bytes",
							       (unsigned long long)passed,
							       (unsigned long long)want);
		}
	}
}

/* A deterministic pseudo-random sequence (xorshift64). */
static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

#define NPKT 20000

/*
 * On a clock that ticks, the policer decides as the exact one would on
 * arrival times rounded down to the tick. So, with L a tick's tokens:
 * it passes all of a stream that conforms to (CIR, CBS - L), and in no
 * window [t_i, t_j] does it pass more than CBS + CIR x (t_j - t_i + tick).
 * Checked on random bursty traffic, for every window.
 */
TEST(tick_clock_bounds)
{
	static uint64_t t[NPKT], len[NPKT], green[NPKT + 1];
	const uint64_t rate = 10000000, cbs = 50000, lump = rate * TICK / 8 / SEC;
	uint64_t x = 88172645463325252ULL, now = 0, best = 0;
	struct tb_params p, pc;
	struct tb_state s, sc;
	int i, passed = 0, n = 0;

	/* Bursts at four times the rate, a pause of up to 20 ms after one
	 * packet in 32: about 1.3 times the rate on average. */
	for (i = 0; i < NPKT; i++) {
		if (rnd(&x) % 32 == 0)
			now += rnd(&x) % (20 * MS);
		len[i] = 64 + rnd(&x) % 1451;
		t[i] = now;
		now += len[i] * 8 * SEC / (4 * rate) * (1 + rnd(&x) % 3) / 2;
	}
	ASSERT_EQ(0, srtcm(&p, &s, rate, cbs, 0));
	for (i = 0; i < NPKT; i++) {
		int g = tb_police(&p, &s, t[i] / TICK * TICK, len[i], TB_GREEN) == TB_GREEN;

		green[i + 1] = green[i] + (g ? len[i] : 0);
	}
	/* max over j >= i of green(i..j) - rate x (t_j - t_i), in nanobits,
	 * from the largest G(j+1) - rate x t_j to the right of each i. */
	for (i = NPKT - 1; i >= 0; i--) {
		uint64_t f = green[i + 1] * NB - rate * t[i] + rate * t[NPKT - 1];

		if (f > best)
			best = f;
		ASSERT_LE(best - (green[i] * NB - rate * t[i] + rate * t[NPKT - 1]),
			  cbs * NB + rate * TICK) TH_LOG("window from packet %d", i);
	}

	/* What an exact policer of burst CBS - L passes conforms to it: the
	 * tick policer of CBS passes all of it. */
	ASSERT_EQ(0, srtcm(&pc, &sc, rate, cbs - lump, 0));
	ASSERT_EQ(0, srtcm(&p, &s, rate, cbs, 0));
	for (i = 0; i < NPKT; i++) {
		if (tb_police(&pc, &sc, t[i], len[i], TB_GREEN) != TB_GREEN)
			continue;
		n++;
		passed += tb_police(&p, &s, t[i] / TICK * TICK, len[i], TB_GREEN) == TB_GREEN;
	}
	EXPECT_EQ(n, passed);
	EXPECT_GT(n, NPKT / 2);
	EXPECT_LT(n, NPKT);
}

/*
 * Two threads, pinned to two CPUs, police through one bucket with the
 * compare-and-swap code the BPF program runs, each reading a shared
 * synthetic clock that advances @step ns per reading: readings are used
 * out of order between the threads as on real CPUs, and the updates race.
 * Each thread counts the bytes of each colour it got.
 */
struct hammer {
	const struct tb_params *p;
	struct tb_state *s;
	uint64_t *clock;
	uint64_t step, pkt, n;
	uint32_t pre;
	uint64_t bytes[TB_COLOR_MAX];
};

static void *hammer_run(void *arg)
{
	struct hammer *h = arg;
	uint64_t i;

	for (i = 0; i < h->n; i++) {
		uint64_t now = __sync_fetch_and_add(h->clock, h->step);

		h->bytes[tb_police(h->p, h->s, now, h->pkt, h->pre)] += h->pkt;
	}
	return NULL;
}

static int hammer2(const struct tb_params *p, struct tb_state *s, uint64_t step, uint64_t pkt,
		   uint64_t n, uint64_t bytes[TB_COLOR_MAX])
{
	static uint64_t clock;
	struct hammer h[2];
	pthread_t th[2];
	int i, c;

	clock = 0;
	for (i = 0; i < 2; i++) {
		int err;

		h[i] = (struct hammer){ .p = p, .s = s, .clock = &clock, .step = step,
					.pkt = pkt, .n = n, .pre = TB_GREEN };
		err = qos_test_start_on(i, &th[i], hammer_run, &h[i]);
		if (err) {
			if (i)
				pthread_join(th[0], NULL);
			return err;
		}
	}
	for (c = 0; c < TB_COLOR_MAX; c++)
		bytes[c] = 0;
	for (i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		for (c = 0; c < TB_COLOR_MAX; c++)
			bytes[c] += h[i].bytes[c];
	}
	return 0;
}

/*
 * srTCM at 1 byte/ns offered ten times that: everything green is exactly
 * the tokens credited (rate x the time claimed, last_ns) plus the burst,
 * minus what is left, to the nanobit. The bucket starts empty and never
 * fills, so the cap never applies and the identity is exact whatever the
 * interleaving; a lost or doubled update would break it.
 */
TEST(concurrent_srtcm_exact)
{
	const uint64_t rate = 8 * SEC, pkt = 1000, n = 1000000;
	uint64_t bytes[TB_COLOR_MAX];
	struct tb_params p;
	struct tb_state s;

	ASSERT_EQ(0, srtcm(&p, &s, rate, 1000000, 0));
	s.tc = 0;
	ASSERT_EQ(0, hammer2(&p, &s, 100, pkt, n, bytes));
	EXPECT_EQ(2 * n * pkt, bytes[TB_GREEN] + bytes[TB_RED]);
	EXPECT_EQ(rate * s.last_ns, bytes[TB_GREEN] * NB + s.tc);
	/* The last readings are claimed, give or take a race at the end. */
	EXPECT_GE(s.last_ns, (2 * n - 10) * 100);
	/* ... which is within 1% of the rate: 1 byte/ns. */
	EXPECT_LE(bytes[TB_GREEN], s.last_ns);
	EXPECT_GE(bytes[TB_GREEN], s.last_ns - pkt);
}

/* trTCM, both buckets exact at once: P (3 bytes/ns) gives green and
 * yellow, C (1 byte/ns) green, to the nanobit. */
TEST(concurrent_trtcm_exact)
{
	const uint64_t cir = 8 * SEC, pir = 24 * SEC, pkt = 1000, n = 1000000;
	uint64_t bytes[TB_COLOR_MAX];
	struct tb_params p;
	struct tb_state s;

	ASSERT_EQ(0, tb_params_init(&p, TB_TRTCM, cir, 1000000, pir, 1000000));
	tb_state_init(&p, &s, 0);
	s.tc = 0;
	s.te = 0;
	ASSERT_EQ(0, hammer2(&p, &s, 100, pkt, n, bytes));
	EXPECT_EQ(2 * n * pkt, bytes[TB_GREEN] + bytes[TB_YELLOW] + bytes[TB_RED]);
	EXPECT_EQ(pir * s.last_ns, (bytes[TB_GREEN] + bytes[TB_YELLOW]) * NB + s.te);
	EXPECT_EQ(cir * s.last_ns, bytes[TB_GREEN] * NB + s.tc);
	EXPECT_GT(bytes[TB_YELLOW], bytes[TB_GREEN]);
}

/*
 * srTCM with an excess bucket, both full at the start, offered 1.5 times
 * the rate: green never exceeds CBS + CIR x t, green and yellow never
 * CBS + EBS + CIR x t, and they fall short by less than a packet (the
 * overflow of C into a full E at the very start).
 */
TEST(concurrent_srtcm_excess_bound)
{
	const uint64_t rate = 8 * SEC, pkt = 1500, n = 500000, cbs = 300000, ebs = 200000;
	uint64_t bytes[TB_COLOR_MAX], gy, cap;
	struct tb_params p;
	struct tb_state s;

	ASSERT_EQ(0, srtcm(&p, &s, rate, cbs, ebs));
	ASSERT_EQ(0, hammer2(&p, &s, 1000, pkt, n, bytes));
	gy = bytes[TB_GREEN] + bytes[TB_YELLOW];
	cap = (cbs + ebs) * NB + rate * s.last_ns;
	EXPECT_LE(bytes[TB_GREEN] * NB + s.tc, cbs * NB + rate * s.last_ns);
	EXPECT_LE(gy * NB + s.tc + s.te, cap);
	EXPECT_GE(gy * NB + s.tc + s.te, cap - pkt * NB);
	EXPECT_GT(bytes[TB_YELLOW], 0);
	EXPECT_GT(bytes[TB_RED], 0);
}

/* One packet of a worked example: its arrival and the colour worked out by
 * hand. */
struct example {
	uint64_t t_ms;
	int color;
};

/* The harness's EXPECT_EQ is two statements: the braces keep both in the
 * loop. */
#define EXPECT_EXAMPLE(p, s, ex)                                                           \
	for (unsigned int i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {                    \
		EXPECT_EQ(ex[i].color, tb_police(p, s, ex[i].t_ms * MS, 1000, TB_GREEN)) \
			TH_LOG("packet %u", i);                                            \
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
	static const struct example ex[] = {
		{ 0, TB_GREEN }, { 0, TB_GREEN }, { 0, TB_GREEN }, { 0, TB_YELLOW },
		{ 0, TB_YELLOW }, { 0, TB_RED },
		{ 1500, TB_GREEN }, { 1500, TB_RED },
		{ 5000, TB_GREEN }, { 5000, TB_GREEN }, { 5000, TB_GREEN },
		{ 5000, TB_YELLOW }, { 5000, TB_RED },
	};
	struct tb_params p;
	struct tb_state s;

	ASSERT_EQ(0, srtcm(&p, &s, 8000, 3000, 2000));
	EXPECT_EXAMPLE(&p, &s, ex)
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
	static const struct example ex[] = {
		{ 0, TB_GREEN }, { 0, TB_GREEN }, { 0, TB_YELLOW }, { 0, TB_RED },
		{ 500, TB_YELLOW },
		{ 1000, TB_GREEN }, { 1000, TB_RED },
		{ 3000, TB_GREEN }, { 3000, TB_GREEN }, { 3000, TB_YELLOW }, { 3000, TB_RED },
	};
	struct tb_params p;
	struct tb_state s;

	ASSERT_EQ(0, tb_params_init(&p, TB_TRTCM, 8000, 2000, 16000, 3000));
	tb_state_init(&p, &s, 0);
	EXPECT_EXAMPLE(&p, &s, ex)
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
	/* 1500 bytes at 8000 bit/s: 1.5 s to fill, from the deepest debt
	 * (1 MiB) 1048.576 s more. */
	EXPECT_EQ(1500 * MS + TB_DEBT_MAX * MS, p.fill_c_ns);
}

TEST_HARNESS_MAIN
