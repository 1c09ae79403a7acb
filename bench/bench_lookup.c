// SPDX-License-Identifier: GPL-2.0-only
/*
 * The price of one rule-table lookup by map layout, through
 * BPF_PROG_TEST_RUN: the rule hash with its one 48-byte key for both
 * families, a hash per family with a shorter key, an LPM trie per family,
 * and a hash per family keyed as the rule tables are or could be (IPv4's
 * 20 bytes; IPv6's two addresses and a shape-id word in 36), see
 * bench/lookup.bpf.c, at 1, 1k, 64k and 1M entries per family, all in the
 * same run and taking turns batch by batch. Every packet hits
 * the entry in the middle of the table (its source address, exact); the
 * tries also hold a covering prefix (10.0.0.0/8, 2001:db8::/32), so they
 * choose between two matches as a prefix table would.
 *
 * Costs are printed net of an empty tc program measured in the same run,
 * and as a multiple of it (Documentation/performance.rst).
 *
 * Usage: bench_lookup [-r REPEAT] [-n RUNS] [-l LEVELS]
 * Each cell is the fastest of RUNS batches of REPEAT packets.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/pkt_cls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "pkt.h"
#include "qos_common.h"

enum {
	V_EMPTY,
	V_KEY48_4, V_SHORT_4, V_LPM_4, V_KEYED_4,
	V_KEY48_6, V_SHORT_6, V_LPM_6, V_KEYED_6,
	V_MAX
};
#define V_COLS		(V_KEY48_6 - V_KEY48_4)

static const char *const prog_names[V_MAX] = {
	NULL, "key48_v4", "short_v4", "lpm_v4", "keyed_v4",
	"key48_v6", "short_v6", "lpm_v6", "keyed_v6",
};

static const uint32_t levels[] = { 1, 1000, 65536, 1 << 20 };
#define NLEVELS		(sizeof(levels) / sizeof(levels[0]))

/* As bench/lookup.bpf.c. */
struct key4 {
	uint8_t src_len, dst_len, proto, pad;
	uint16_t sport, dport;
	uint32_t src, dst;
};

struct key6 {
	uint8_t src_len, dst_len, proto, pad;
	uint32_t mask;
	uint16_t sport, dport;
	uint8_t src[16], dst[16];
};

struct key36 {
	uint8_t src[16], dst[16];
	uint32_t shape_fl;	/* shape id << 20 | flow label */
};

struct lpm4 {
	uint32_t prefixlen;
	uint32_t addr;
};

struct lpm6 {
	uint32_t prefixlen;
	uint8_t addr[16];
};

struct maps {
	int key48, short4, short6, lpm4, lpm6, keyed4, keyed6;
};

static void v4_addr(uint32_t i, uint32_t *a)
{
	*a = htonl(0x0a000000 | i);
}

static void v6_addr(uint32_t i, uint8_t a[16])
{
	uint32_t s = htonl(i);

	inet_pton(AF_INET6, "2001:db8:100::", a);
	memcpy(a + 12, &s, 4);
}

static void put(int fd, const void *key, uint64_t val)
{
	if (bpf_map_update_elem(fd, key, &val, BPF_NOEXIST)) {
		fprintf(stderr, "bench: map update: %s\n", strerror(errno));
		exit(1);
	}
}

/* Entries [from, to) of each family into every map. */
static void fill(const struct maps *m, uint32_t from, uint32_t to)
{
	uint32_t i;

	for (i = from; i < to; i++) {
		struct qos_rule_key k48 = { .table = QOS_TABLE_IPV4, .src_len = 32 };
		struct key4 k4 = { .src_len = 32 };
		struct key6 k6 = { .src_len = 128 };
		struct lpm4 l4 = { .prefixlen = 32 };
		struct lpm6 l6 = { .prefixlen = 128 };
		struct qos_rule_key4 r4 = { .src_len = 32 };
		struct key36 r6 = { .shape_fl = 1U << 20 };

		v4_addr(i, &k48.src[0]);
		k4.src = l4.addr = r4.src = k48.src[0];
		put(m->key48, &k48, i);
		put(m->short4, &k4, i);
		put(m->lpm4, &l4, i);
		put(m->keyed4, &r4, i);

		memset(&k48, 0, sizeof(k48));
		k48.table = QOS_TABLE_IPV6;
		k48.src_len = 128;
		v6_addr(i, (uint8_t *)k48.src);
		memcpy(k6.src, k48.src, 16);
		memcpy(l6.addr, k48.src, 16);
		memcpy(r6.src, k48.src, 16);
		put(m->key48, &k48, i);
		put(m->short6, &k6, i);
		put(m->lpm6, &l6, i);
		put(m->keyed6, &r6, i);
	}
}

static void covering(const struct maps *m)
{
	struct lpm4 l4 = { .prefixlen = 8 };
	struct lpm6 l6 = { .prefixlen = 32 };

	v4_addr(0, &l4.addr);
	inet_pton(AF_INET6, "2001:db8::", l6.addr);
	put(m->lpm4, &l4, ~0ULL);
	put(m->lpm6, &l6, ~0ULL);
}

/* A UDP packet from entry @i of the family of variant @v. */
static void build(struct pkt *p, int v, uint32_t i)
{
	pkt_init(p);
	pkt_eth(p);
	if (v == V_EMPTY || v < V_KEY48_6) {
		struct iphdr *ip = pkt_ipv4(p, 0, IPPROTO_UDP, 0);

		v4_addr(i, &ip->saddr);
		ip->daddr = htonl(0xc0000201);
	} else {
		struct ipv6hdr *ip = pkt_ipv6(p, 0, 0, IPPROTO_UDP);

		v6_addr(i, ip->saddr.s6_addr);
		inet_pton(AF_INET6, "2001:db8:200::1", &ip->daddr);
	}
	pkt_payload(p, 64);
	pkt_end(p, ETH_HLEN);
}

/* ns per packet of one batch of @repeat runs, timed here (test_run's own
 * duration is rounded to whole ns); every packet must hit. */
static double batch(int prog, const struct pkt *p, uint32_t repeat)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = p->buf, .data_size_in = p->len,
		    .repeat = repeat);
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	if (bpf_prog_test_run_opts(prog, &opts) || (int)opts.retval != TC_ACT_UNSPEC) {
		fprintf(stderr, "bench: test_run failed or missed: %s, retval %d\n",
			strerror(errno), (int)opts.retval);
		exit(1);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / repeat;
}

static int empty_prog(void)
{
	static const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = TC_ACT_UNSPEC },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "empty", "GPL", insns, 2, NULL);
}

static int map_fd(struct bpf_object *obj, const char *name)
{
	return bpf_map__fd(bpf_object__find_map_by_name(obj, name));
}

int main(int argc, char **argv)
{
	uint32_t repeat = 1000000, have = 0;
	int runs = 7, nlevels = NLEVELS, prog[V_MAX], v, l, r, c;
	struct pkt pkts[V_MAX];
	struct bpf_object *obj;
	struct maps m;

	while ((c = getopt(argc, argv, "r:n:l:")) != -1) {
		switch (c) {
		case 'r':
			repeat = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			runs = atoi(optarg);
			break;
		case 'l':
			nlevels = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-r REPEAT] [-n RUNS] [-l LEVELS]\n", argv[0]);
			return 2;
		}
	}
	if (!repeat || runs < 1 || nlevels < 1 || nlevels > (int)NLEVELS) {
		fprintf(stderr, "bench: bad -r, -n or -l\n");
		return 2;
	}
	obj = bpf_object__open_file(LOOKUP_OBJ, NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "bench: loading %s: %s\n", LOOKUP_OBJ, strerror(errno));
		return 1;
	}
	prog[V_EMPTY] = empty_prog();
	if (prog[V_EMPTY] < 0) {
		fprintf(stderr, "bench: loading an empty program: %s\n", strerror(errno));
		return 1;
	}
	for (v = 1; v < V_MAX; v++)
		prog[v] = bpf_program__fd(bpf_object__find_program_by_name(obj, prog_names[v]));
	m.key48 = map_fd(obj, "key48");
	m.short4 = map_fd(obj, "short4");
	m.short6 = map_fd(obj, "short6");
	m.lpm4 = map_fd(obj, "lpm4");
	m.lpm6 = map_fd(obj, "lpm6");
	m.keyed4 = map_fd(obj, "keyed4");
	m.keyed6 = map_fd(obj, "keyed6");
	covering(&m);

	printf("one lookup on the source address, ns per packet net of the empty program,\n"
	       "and as a multiple of it (fastest of %d x %u)\n\n", runs, repeat);
	printf("%8s %6s %13s %13s %13s %13s %8s\n", "entries", "family", "key48", "short",
	       "lpm", "keyed", "empty");
	for (l = 0; l < nlevels; l++) {
		double ns[V_MAX];

		fill(&m, have, levels[l]);
		have = levels[l];
		for (v = 0; v < V_MAX; v++) {
			build(&pkts[v], v, have / 2);
			ns[v] = 1e9;
		}
		for (r = 0; r < runs; r++) {
			for (v = 0; v < V_MAX; v++) {
				double t = batch(prog[v], &pkts[v], repeat);

				if (t < ns[v])
					ns[v] = t;
			}
		}
		for (v = V_KEY48_4; v < V_MAX; v += V_COLS) {
			printf("%8u %6s", have, v == V_KEY48_4 ? "ipv4" : "ipv6");
			for (c = 0; c < V_COLS; c++) {
				double net = ns[v + c] - ns[V_EMPTY];

				printf(" %6.1f %5.2fx", net, net / ns[V_EMPTY]);
			}
			printf(" %8.1f\n", ns[V_EMPTY]);
		}
	}
	bpf_object__close(obj);
	return 0;
}
