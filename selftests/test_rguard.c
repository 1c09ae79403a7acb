// SPDX-License-Identifier: GPL-2.0-only
/*
 * The STAMP reflector's admission checks (user/probe/rguard.c) with a
 * synthetic clock: source ports, allow-list, per-source and global token
 * buckets, and the bounded source table, IPv4 and IPv6 side by side.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "kselftest_harness.h"
#include "probe/rguard.h"

#define MS	1000000LL

static struct sockaddr_storage src(const char *addr, uint16_t port)
{
	struct sockaddr_storage ss = {};
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

	if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
	} else {
		inet_pton(AF_INET6, addr, &s6->sin6_addr);
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
	}
	return ss;
}

static enum rg_verdict check(struct rguard *g, const char *addr, uint16_t port, int64_t now)
{
	struct sockaddr_storage ss = src(addr, port);

	return rg_check(g, (struct sockaddr *)&ss, now);
}

/* @n packets from @addr at @now: how many passed. */
static int pass_n(struct rguard *g, const char *addr, int n, int64_t now)
{
	int i, ok = 0;

	for (i = 0; i < n; i++)
		ok += check(g, addr, 40000, now) == RG_PASS;
	return ok;
}

static const char *const fam_addr[2] = { "10.1.1.1", "2001:db8:1::1" };

/* What answering would loop with: a reflector on our port or STAMP's,
 * an echo service, any privileged port; src-port-min moves the bound,
 * never below our own port and 7. */
TEST(ports)
{
	struct rguard g;
	struct rg_cfg c;
	int f;

	for (f = 0; f < 2; f++) {
		rg_cfg_default(&c, 862);
		ASSERT_EQ(0, rg_init(&g, &c, 1));
		EXPECT_EQ(RG_PORT, check(&g, fam_addr[f], 862, 0));
		EXPECT_EQ(RG_PORT, check(&g, fam_addr[f], 7, 0));
		EXPECT_EQ(RG_PORT, check(&g, fam_addr[f], 1023, 0));
		EXPECT_EQ(RG_PASS, check(&g, fam_addr[f], 1024, 0));
		rg_free(&g);

		c.src_port_min = 1;
		c.own_port = 8620;
		ASSERT_EQ(0, rg_init(&g, &c, 1));
		EXPECT_EQ(RG_PASS, check(&g, fam_addr[f], 862, 0));
		EXPECT_EQ(RG_PASS, check(&g, fam_addr[f], 1, 0));
		EXPECT_EQ(RG_PORT, check(&g, fam_addr[f], 7, 0));
		EXPECT_EQ(RG_PORT, check(&g, fam_addr[f], 8620, 0));
		rg_free(&g);
	}
}

TEST(allow_list)
{
	struct rguard g;
	struct rg_cfg c;

	rg_cfg_default(&c, 862);
	ASSERT_EQ(0, rg_parse_prefix("10.1.0.0/17", &c.allow[0]));
	ASSERT_EQ(0, rg_parse_prefix("2001:db8:1::/63", &c.allow[1]));
	ASSERT_EQ(0, rg_parse_prefix("192.0.2.7", &c.allow[2]));
	c.nallow = 3;
	ASSERT_EQ(0, rg_init(&g, &c, 1));
	EXPECT_EQ(RG_PASS, check(&g, "10.1.127.255", 40000, 0));
	EXPECT_EQ(RG_ALLOW, check(&g, "10.1.128.0", 40000, 0));
	EXPECT_EQ(RG_PASS, check(&g, "192.0.2.7", 40000, 0));
	EXPECT_EQ(RG_ALLOW, check(&g, "192.0.2.6", 40000, 0));
	EXPECT_EQ(RG_PASS, check(&g, "2001:db8:1:1::9", 40000, 0));
	EXPECT_EQ(RG_ALLOW, check(&g, "2001:db8:1:2::9", 40000, 0));
	/* IPv4-mapped: the IPv4 rules. */
	EXPECT_EQ(RG_PASS, check(&g, "::ffff:10.1.0.1", 40000, 0));
	/* Refused by the list before the port is looked at. */
	EXPECT_EQ(RG_ALLOW, check(&g, "10.2.0.1", 862, 0));
	rg_free(&g);

	EXPECT_EQ(-EINVAL, rg_parse_prefix("10.0.0.0/33", &c.allow[0]));
	EXPECT_EQ(-EINVAL, rg_parse_prefix("2001:db8::/129", &c.allow[0]));
	EXPECT_EQ(-EINVAL, rg_parse_prefix("10.0.0.0/", &c.allow[0]));
	EXPECT_EQ(-EINVAL, rg_parse_prefix("10.0.0.0/08", &c.allow[0]));
	EXPECT_EQ(-EINVAL, rg_parse_prefix("10.0.0.0/-1", &c.allow[0]));
	EXPECT_EQ(-EINVAL, rg_parse_prefix("host", &c.allow[0]));
}

/* A burst, then the rate: exactly rate x time after the burst. */
TEST(source_rate)
{
	struct rguard g;
	struct rg_cfg c;
	int f;

	for (f = 0; f < 2; f++) {
		rg_cfg_default(&c, 862);
		c.src_rate = 100;
		c.src_burst = 10;
		ASSERT_EQ(0, rg_init(&g, &c, 1));
		EXPECT_EQ(10, pass_n(&g, fam_addr[f], 30, 0));
		EXPECT_EQ(RG_RATE_SRC, check(&g, fam_addr[f], 40000, 9 * MS));
		EXPECT_EQ(1, pass_n(&g, fam_addr[f], 5, 10 * MS));
		/* 1 s: 100 tokens, capped at the burst. */
		EXPECT_EQ(10, pass_n(&g, fam_addr[f], 30, 1010 * MS));
		/* Another source has its own bucket; the same /64 does not. */
		EXPECT_EQ(10, pass_n(&g, f ? "2001:db8:2::1" : "10.1.1.2", 30, 1010 * MS));
		if (f)
			EXPECT_EQ(0, pass_n(&g, "2001:db8:1::2", 30, 1010 * MS));
		/* A clock read backwards credits nothing. */
		EXPECT_EQ(0, pass_n(&g, fam_addr[f], 5, 0));
		/* Years idle: a full bucket, no overflow. */
		EXPECT_EQ(10, pass_n(&g, fam_addr[f], 30, 100LL * 365 * 86400 * 1000 * MS));
		rg_free(&g);
	}
}

/* The global bucket bounds every source together; a packet it refuses
 * gives its source's token back. */
TEST(global_rate)
{
	struct rguard g;
	struct rg_cfg c;

	rg_cfg_default(&c, 862);
	c.src_rate = 1;
	c.src_burst = 10;
	c.all_rate = 1;
	c.all_burst = 15;
	ASSERT_EQ(0, rg_init(&g, &c, 1));
	EXPECT_EQ(10, pass_n(&g, fam_addr[0], 30, 0));
	EXPECT_EQ(5, pass_n(&g, fam_addr[1], 30, 0));
	EXPECT_EQ(RG_RATE_ALL, check(&g, fam_addr[1], 40000, 0));
	/* 1 s: one global token, and the IPv6 source still has 5. */
	EXPECT_EQ(RG_PASS, check(&g, fam_addr[1], 40000, 1000 * MS));
	rg_free(&g);
}

/*
 * The table holds what it was given, however many sources: a new source
 * takes the longest idle entry of its set, which then starts again with
 * a full bucket. 1000 sources through a table of 8.
 */
TEST(bounded_table)
{
	struct rguard g;
	struct rg_cfg c;
	char a[64];
	int i, f;

	for (f = 0; f < 2; f++) {
		rg_cfg_default(&c, 862);
		c.sources = 8;
		c.src_burst = 1;
		c.src_rate = 1;
		c.all_burst = 1000000;
		ASSERT_EQ(0, rg_init(&g, &c, 42));
		EXPECT_EQ(2, g.nsets);
		for (i = 0; i < 1000; i++) {
			if (f)
				snprintf(a, sizeof(a), "2001:db8:%x::1", i);
			else
				snprintf(a, sizeof(a), "10.9.%d.%d", i / 256, i % 256);
			EXPECT_EQ(RG_PASS, check(&g, a, 40000, i));
		}
		EXPECT_EQ(1000 - 8, g.evicted);
		/* The last source is still known: no second token. */
		EXPECT_EQ(RG_RATE_SRC, check(&g, a, 40000, 1000));
		rg_free(&g);
	}
}

TEST_HARNESS_MAIN
