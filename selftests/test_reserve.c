// SPDX-License-Identifier: GPL-2.0-only
/*
 * Admission of reservations (model/reserve.c), the pure function a broker
 * calls per hop: rates against the class less its headroom, bursts
 * against the delay bound, refusals with their numbers, and the names of
 * a broker's file hashed, with the figures written out by hand.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "kselftest_harness.h"
#include "model/reserve.h"

/* pip-20pct at 100mbit: ceiling 20 Mbit/s, 10% headroom, 10 ms, 1514-byte
 * frames: 25000 bytes of queue. */
static const struct qos_resv_class pip = {
	.name = "pip", .cap_bps = 18000000, .ceil_bps = 20000000, .headroom_pct = 10,
	.delay_ns = 10000000, .max_pkt = 1514,
};

static struct qos_resv_sum set_of(const struct qos_resv_req *q, size_t n)
{
	struct qos_resv_sum s = {};
	size_t i;

	for (i = 0; i < n; i++)
		qos_resv_sum_step(&s, &pip, &q[i], 1);
	return s;
}

TEST(rate)
{
	struct qos_resv_req q[] = { { 10000000, 3028 }, { 8000000, 3028 } };
	struct qos_resv_req more = { 8000, 3028 };
	struct qos_resv_sum s = set_of(q, 2);
	char msg[512];

	EXPECT_EQ(25000, qos_resv_queue_bytes(&pip));
	EXPECT_EQ(QOS_RESV_ADMIT, qos_resv_fits(&pip, &s));
	EXPECT_EQ(QOS_RESV_RATE, qos_resv_admit(&pip, &s, &more));
	qos_resv_refusal(msg, sizeof(msg), QOS_RESV_RATE, &pip, &s, &more);
	EXPECT_STREQ("class pip admits 18mbit (ceiling 20mbit less 10% headroom), 18mbit is "
		     "reserved by 2 reservations, 0bit is free", msg);
	/* Taken away, it fits again. */
	qos_resv_sum_step(&s, &pip, &q[1], -1);
	EXPECT_EQ(QOS_RESV_ADMIT, qos_resv_admit(&pip, &s, &more));
	EXPECT_EQ(1, s.n);
}

/*
 * 1 Mbit/s with a 1 MB burst queues 419 ms ahead of every PIP packet at
 * 20 Mbit/s: refused on the delay bound, not the rate. Bursts of two
 * frames (3028 bytes) take 4542 bytes each with their packet: five fit
 * the 25000 bytes (22710, 9.084 ms), a sixth would not (27252, 10.9 ms).
 */
TEST(burst)
{
	struct qos_resv_req big = { 1000000, 1048576 }, small = { 1000000, 3028 };
	struct qos_resv_sum s = {};
	char msg[512];
	int i;

	EXPECT_EQ(QOS_RESV_DELAY, qos_resv_admit(&pip, &s, &big));
	qos_resv_refusal(msg, sizeof(msg), QOS_RESV_DELAY, &pip, &s, &big);
	EXPECT_STREQ("class pip: burst/delay: its burst of 1048576 bytes and the 0 of 0 admitted "
		     "reservations (each with a 1514-byte packet) would drain in 420.036ms at "
		     "20mbit, over its delay bound of 10.000ms (25000 bytes; 25000 free)", msg);
	for (i = 0; i < 5; i++) {
		ASSERT_EQ(QOS_RESV_ADMIT, qos_resv_admit(&pip, &s, &small));
		qos_resv_sum_step(&s, &pip, &small, 1);
	}
	EXPECT_EQ(22710, s.burst);
	EXPECT_EQ(9084000, qos_resv_delay_ns(&pip, &s));
	EXPECT_EQ(QOS_RESV_DELAY, qos_resv_admit(&pip, &s, &small));
	qos_resv_refusal(msg, sizeof(msg), QOS_RESV_DELAY, &pip, &s, &small);
	EXPECT_STREQ("class pip: burst/delay: its burst of 3028 bytes and the 22710 of 5 admitted "
		     "reservations (each with a 1514-byte packet) would drain in 10.900ms at "
		     "20mbit, over its delay bound of 10.000ms (25000 bytes; 2290 free)", msg);
}

/* No overflow where a broker's figures are large: 65,536 bursts of 64 kB
 * at 400 Gbit/s. */
TEST(large)
{
	struct qos_resv_class c = { "pip", 72000000000ULL, 80000000000ULL, 10, 1000000000ULL,
				    9014 };
	struct qos_resv_req q = { 1000000, 65536 };
	struct qos_resv_sum s = {};
	int i;

	EXPECT_EQ(10000000000ULL, qos_resv_queue_bytes(&c));
	for (i = 0; i < 65536; i++)
		qos_resv_sum_step(&s, &c, &q, 1);
	EXPECT_EQ(QOS_RESV_ADMIT, qos_resv_fits(&c, &s));
	/* 65536 x 74550 bytes = 4885708800 at 10 GB/s. */
	EXPECT_EQ(488570880, qos_resv_delay_ns(&c, &s));
}

/* Names: found in constant time, generated past every name in use. */
TEST(names)
{
	struct qos_rules l = {};
	struct qos_resv_index x;
	struct qos_rule r = {};
	char name[QOS_RULE_NAME_LEN];
	int i;

	r.reserve = true;
	for (i = 0; i < 3000; i++) {
		snprintf(r.name, sizeof(r.name), "r%d", i % 2 ? i : 3000 + i);
		ASSERT_EQ(0, qos_rules_add(&l, &r));
	}
	snprintf(r.name, sizeof(r.name), "plain");
	r.reserve = false;
	ASSERT_EQ(0, qos_rules_add(&l, &r));
	ASSERT_EQ(0, qos_resv_index_init(&x, &l));
	EXPECT_EQ(&l.r[1], qos_resv_index_find(&x, "r1"));
	EXPECT_EQ(&l.r[2], qos_resv_index_find(&x, "r3002"));
	EXPECT_EQ(NULL, qos_resv_index_find(&x, "r2"));
	/* A rule that is not a reservation is not one, but keeps its name. */
	EXPECT_EQ(NULL, qos_resv_index_find(&x, "plain"));
	qos_resv_index_name(&x, name, sizeof(name));
	EXPECT_STREQ("r2", name);
	snprintf(r.name, sizeof(r.name), "r4");
	r.reserve = true;
	ASSERT_EQ(0, qos_rules_add(&l, &r));
	ASSERT_EQ(0, qos_resv_index_add(&x, l.n - 1));
	qos_resv_index_name(&x, name, sizeof(name));
	EXPECT_STREQ("r6", name);
	EXPECT_EQ(&l.r[l.n - 1], qos_resv_index_find(&x, "r4"));
	qos_resv_index_free(&x);
	qos_rules_free(&l);
}

TEST_HARNESS_MAIN
