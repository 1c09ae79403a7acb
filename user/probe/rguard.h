/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the reflector agrees to answer: an allow-list of prefixes, no
 * source port another reflector or an echo service answers from, and
 * token buckets per source and for all sources together. No sockets and
 * no clock of its own (the caller passes the time), so
 * selftests/test_stamp.c drives it with a synthetic one.
 * Documentation/reliability.rst, "The STAMP reflector".
 */
#ifndef __QOS_RGUARD_H
#define __QOS_RGUARD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

enum rg_verdict {
	RG_PASS,
	RG_DST,			/* sent to a broadcast or multicast address */
	RG_ALLOW,		/* not from an allowed prefix */
	RG_PORT,		/* from a port replies come from */
	RG_RATE_SRC,		/* over its source's rate */
	RG_RATE_ALL,		/* over the reflector's rate */
	RG_NVERDICTS,
};

/* The reason's name in the output and the metrics ("allow", ...). */
extern const char *const rg_reason[RG_NVERDICTS];

#define RG_ALLOW_MAX		64
/* Each source hashes to a set of RG_WAYS entries: a new source takes the
 * set's free entry, else the one idle longest. */
#define RG_WAYS			4
#define RG_ECHO_PORT		7

struct rg_prefix {
	int family;
	uint8_t addr[16];
	uint8_t plen;
};

struct rg_cfg {
	uint16_t own_port;		/* always refused as a source port */
	uint16_t src_port_min;		/* source ports below it refused */
	uint32_t src_rate, src_burst;	/* per source: packets per second, packets */
	uint32_t all_rate, all_burst;
	uint32_t sources;		/* entries of the source table */
	unsigned int nallow;		/* 0: every source allowed */
	struct rg_prefix allow[RG_ALLOW_MAX];
};

#define RG_SRC_RATE		1000
#define RG_SRC_BURST		100
#define RG_ALL_RATE		20000
#define RG_ALL_BURST		1000
#define RG_SOURCES		4096
#define RG_SRC_PORT_MIN		1024

/* Tokens in nanopackets: a refill is time (ns) times rate (packets/s). */
struct rg_bucket {
	uint64_t tokens;
	int64_t last_ns;
};

struct rg_entry {
	uint8_t key[9];			/* family, then the IPv4 address or IPv6 /64 */
	bool used;
	int64_t seen_ns;
	struct rg_bucket b;
};

struct rguard {
	struct rg_cfg cfg;
	uint64_t seed;
	uint32_t nsets;
	struct rg_entry *tab;
	struct rg_bucket all;
	bool all_set;
	uint64_t evicted;		/* sources that took another's entry */
};

/* The defaults above, for @own_port. */
void rg_cfg_default(struct rg_cfg *c, uint16_t own_port);
/* 0 or -ENOMEM; @seed keys the source hash (random in the reflector). */
int rg_init(struct rguard *g, const struct rg_cfg *c, uint64_t seed);
void rg_free(struct rguard *g);
/* The verdict on a test packet from @from at @now_ns (monotonic). A
 * packet refused takes no token of a later check. */
enum rg_verdict rg_check(struct rguard *g, const struct sockaddr *from, int64_t now_ns);
/* "ADDR/LEN" or "ADDR" (a host), IPv4 or IPv6: 0 or -EINVAL. */
int rg_parse_prefix(const char *s, struct rg_prefix *p);

#endif /* __QOS_RGUARD_H */
