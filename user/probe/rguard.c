// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The reflector's admission checks. State is bounded: one table of
 * cfg.sources entries allocated at start, a set of RG_WAYS entries per
 * hash. A party that sends from many addresses takes entries from other
 * sources, which then start again with a full bucket: it gains no more
 * than a burst per address it owns, and the global bucket bounds them
 * all. An IPv6 source is its /64 (what one host is usually given), so the
 * addresses of one LAN count as one source.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/rguard.h"

#define NS_PER_SEC	1000000000ULL

const char *const rg_reason[RG_NVERDICTS] = {
	[RG_PASS] = "none",
	[RG_DST] = "destination",
	[RG_ALLOW] = "allow",
	[RG_PORT] = "port",
	[RG_RATE_SRC] = "source-rate",
	[RG_RATE_ALL] = "global-rate",
};

void rg_cfg_default(struct rg_cfg *c, uint16_t own_port)
{
	memset(c, 0, sizeof(*c));
	c->own_port = own_port;
	c->src_port_min = RG_SRC_PORT_MIN;
	c->src_rate = RG_SRC_RATE;
	c->src_burst = RG_SRC_BURST;
	c->all_rate = RG_ALL_RATE;
	c->all_burst = RG_ALL_BURST;
	c->sources = RG_SOURCES;
}

int rg_init(struct rguard *g, const struct rg_cfg *c, uint64_t seed)
{
	memset(g, 0, sizeof(*g));
	g->cfg = *c;
	g->seed = seed;
	g->nsets = (c->sources + RG_WAYS - 1) / RG_WAYS;
	if (!g->nsets)
		g->nsets = 1;
	g->tab = calloc((size_t)g->nsets * RG_WAYS, sizeof(*g->tab));
	return g->tab ? 0 : -ENOMEM;
}

void rg_free(struct rguard *g)
{
	free(g->tab);
	g->tab = NULL;
}

/*
 * A packet's token: the refill since the last is rate x elapsed, capped
 * at the burst; an interval long enough to fill the bucket is not
 * multiplied (no overflow after any idle time). A clock read before the
 * last one credits nothing.
 */
static bool tb_take(struct rg_bucket *b, uint32_t rate, uint32_t burst, int64_t now)
{
	uint64_t full = (uint64_t)burst * NS_PER_SEC;
	uint64_t dt = now > b->last_ns ? (uint64_t)(now - b->last_ns) : 0;

	if (rate && dt >= full / rate + 1)
		b->tokens = full;
	else
		b->tokens += dt * rate;
	if (b->tokens > full)
		b->tokens = full;
	if (now > b->last_ns)
		b->last_ns = now;
	if (b->tokens < NS_PER_SEC)
		return false;
	b->tokens -= NS_PER_SEC;
	return true;
}

static void tb_fill(struct rg_bucket *b, uint32_t burst, int64_t now)
{
	b->tokens = (uint64_t)burst * NS_PER_SEC;
	b->last_ns = now;
}

static bool prefix_has(const struct rg_prefix *p, int family, const uint8_t *a)
{
	unsigned int full = p->plen / 8, rest = p->plen % 8;

	if (p->family != family || memcmp(p->addr, a, full))
		return false;
	return !rest || !((p->addr[full] ^ a[full]) & (0xff << (8 - rest)));
}

/* The address (IPv4-mapped IPv6 taken as IPv4) and port of @sa. */
static int src_of(const struct sockaddr *sa, uint8_t *a, uint16_t *port)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;

	if (sa->sa_family == AF_INET) {
		memcpy(a, &s4->sin_addr, 4);
		*port = ntohs(s4->sin_port);
		return AF_INET;
	}
	*port = ntohs(s6->sin6_port);
	if (!memcmp(&s6->sin6_addr, mapped, sizeof(mapped))) {
		memcpy(a, (const uint8_t *)&s6->sin6_addr + 12, 4);
		return AF_INET;
	}
	memcpy(a, &s6->sin6_addr, 16);
	return AF_INET6;
}

static uint64_t key_hash(const struct rguard *g, const uint8_t *key)
{
	uint64_t h = g->seed, w = 0;

	memcpy(&w, key, 8);
	h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
	h ^= h >> 29;
	h = (h ^ key[8]) * 0xbf58476d1ce4e5b9ULL;
	return h ^ h >> 32;
}

/* The entry of @key: found, free, or the set's longest idle one. */
static struct rg_entry *src_entry(struct rguard *g, const uint8_t *key, int64_t now)
{
	struct rg_entry *set = g->tab + (key_hash(g, key) % g->nsets) * RG_WAYS, *e = set;
	unsigned int i;

	for (i = 0; i < RG_WAYS; i++) {
		if (set[i].used && !memcmp(set[i].key, key, sizeof(set[i].key)))
			return &set[i];
		if (!set[i].used ? e->used : e->used && set[i].seen_ns < e->seen_ns)
			e = &set[i];
	}
	if (e->used)
		g->evicted++;
	e->used = true;
	memcpy(e->key, key, sizeof(e->key));
	tb_fill(&e->b, g->cfg.src_burst, now);
	return e;
}

static bool allowed(const struct rg_cfg *c, int family, const uint8_t *a)
{
	unsigned int i;

	for (i = 0; i < c->nallow; i++)
		if (prefix_has(&c->allow[i], family, a))
			return true;
	return !c->nallow;
}

enum rg_verdict rg_check(struct rguard *g, const struct sockaddr *from, int64_t now_ns)
{
	uint8_t a[16], key[9] = {};
	struct rg_entry *e;
	uint16_t port;
	int family = src_of(from, a, &port);

	if (!allowed(&g->cfg, family, a))
		return RG_ALLOW;
	/* A reply of a reflector on our port, of an echo service, of any
	 * service on a privileged port: answering would start a loop. */
	if (port == g->cfg.own_port || port == RG_ECHO_PORT || port < g->cfg.src_port_min)
		return RG_PORT;
	key[0] = family == AF_INET ? 4 : 6;
	memcpy(key + 1, a, family == AF_INET ? 4 : 8);
	e = src_entry(g, key, now_ns);
	e->seen_ns = now_ns;
	if (!tb_take(&e->b, g->cfg.src_rate, g->cfg.src_burst, now_ns))
		return RG_RATE_SRC;
	if (!g->all_set) {
		tb_fill(&g->all, g->cfg.all_burst, now_ns);
		g->all_set = true;
	}
	if (!tb_take(&g->all, g->cfg.all_rate, g->cfg.all_burst, now_ns)) {
		/* Not the source's fault: its token back. */
		e->b.tokens += NS_PER_SEC;
		return RG_RATE_ALL;
	}
	return RG_PASS;
}

int rg_parse_prefix(const char *s, struct rg_prefix *p)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash, *end;
	unsigned long len;
	int max;

	if (snprintf(buf, sizeof(buf), "%s", s) >= (int)sizeof(buf))
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	if (inet_pton(AF_INET, buf, p->addr) == 1)
		p->family = AF_INET, max = 32;
	else if (inet_pton(AF_INET6, buf, p->addr) == 1)
		p->family = AF_INET6, max = 128;
	else
		return -EINVAL;
	len = max;
	if (slash) {
		if (slash[1] < '0' || slash[1] > '9')
			return -EINVAL;
		len = strtoul(slash + 1, &end, 10);
		if (*end || len > (unsigned long)max || (slash[1] == '0' && slash[2]))
			return -EINVAL;
	}
	p->plen = len;
	return 0;
}
