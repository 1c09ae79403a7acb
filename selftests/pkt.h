/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Crafted packets for the BPF selftests, and a wrapper around
 * bpf_prog_test_run_opts() for tc programs.
 *
 * A packet is built front to back into a struct pkt: pkt_eth(), optional
 * pkt_vlan() tags, then pkt_ipv4()/pkt_ipv6() and a payload. Every builder
 * writes real, checksummed headers.
 */
#ifndef __QOS_SELFTEST_PKT_H
#define __QOS_SELFTEST_PKT_H

#include <arpa/inet.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <stdint.h>
#include <string.h>

#include <bpf/bpf.h>

#define PKT_MAX 2048

/*
 * The two bytes before buf put the header after a 14-byte Ethernet header
 * (and after any number of 4-byte VLAN tags) on a 4-byte boundary, as
 * NET_IP_ALIGN does for the kernel, so the tests may access iphdr and
 * ipv6hdr fields in place.
 */
struct pkt {
	uint8_t ip_align[2];
	uint8_t buf[PKT_MAX];
	size_t len;
	size_t l3;		/* offset of the last IP header started */
	size_t ethertype;	/* offset of the last ethertype field, 0 = none */
	size_t nexthdr;		/* offset of the last IPv6 next-header byte, 0 = none */
};

static inline void pkt_init(struct pkt *p)
{
	memset(p, 0, sizeof(*p));
}

static inline void *pkt_put(struct pkt *p, size_t n)
{
	void *s = p->buf + p->len;

	p->len += n;
	return s;
}

static inline void pkt_eth(struct pkt *p)
{
	struct ethhdr *eth = pkt_put(p, sizeof(*eth));

	memcpy(eth->h_dest, "\x02\x00\x00\x00\x00\x02", ETH_ALEN);
	memcpy(eth->h_source, "\x02\x00\x00\x00\x00\x01", ETH_ALEN);
	p->ethertype = 2 * ETH_ALEN;
}

/* Append an 802.1Q (tpid 0x8100) or 802.1ad (0x88a8) tag. */
static inline void pkt_ethertype(struct pkt *p, uint16_t proto)
{
	uint16_t be = htons(proto);

	memcpy(p->buf + p->ethertype, &be, 2);
}

static inline void pkt_vlan(struct pkt *p, uint16_t tpid, uint16_t vid)
{
	uint16_t be = htons(vid);

	pkt_ethertype(p, tpid);
	memcpy(pkt_put(p, 4), &be, 2);
	p->ethertype = p->len - 2;
}

static inline uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static inline uint16_t ip_csum(const void *data, size_t len)
{
	const uint16_t *w = data;
	uint32_t sum = 0;

	for (; len > 1; len -= 2)
		sum += *w++;
	if (len)
		sum += *(const uint8_t *)w;
	return csum_fold(sum);
}

/* Start an L3 header: if it directly follows the Ethernet header or the
 * last VLAN tag, set that ethertype (an inner header of a tunnel leaves
 * it alone). */
static inline void pkt_l3_begin(struct pkt *p, uint16_t proto)
{
	if (p->ethertype && p->len == p->ethertype + 2)
		pkt_ethertype(p, proto);
	p->l3 = p->len;
}

/* IPv4 header with @opt_len bytes of NOP options; tot_len fixed by pkt_end(). */
static inline struct iphdr *pkt_ipv4(struct pkt *p, uint8_t tos, uint8_t proto,
				     size_t opt_len)
{
	struct iphdr *ip;

	pkt_l3_begin(p, ETH_P_IP);
	ip = pkt_put(p, sizeof(*ip) + opt_len);
	memset(ip + 1, 1 /* NOP */, opt_len);
	ip->version = 4;
	ip->ihl = (sizeof(*ip) + opt_len) / 4;
	ip->tos = tos;
	ip->ttl = 64;
	ip->protocol = proto;
	ip->saddr = htonl(0x0a010101);
	ip->daddr = htonl(0x0a010201);
	return ip;
}

static inline struct ipv6hdr *pkt_ipv6(struct pkt *p, uint8_t tclass, uint32_t flowlabel,
				       uint8_t nexthdr)
{
	struct ipv6hdr *ip6;
	uint32_t vtc;

	pkt_l3_begin(p, ETH_P_IPV6);
	ip6 = pkt_put(p, sizeof(*ip6));
	vtc = (6U << 28) | ((uint32_t)tclass << 20) | (flowlabel & 0xfffff);
	*(uint32_t *)ip6 = htonl(vtc);
	ip6->nexthdr = nexthdr;
	p->nexthdr = (uint8_t *)&ip6->nexthdr - p->buf;
	ip6->hop_limit = 64;
	inet_pton(AF_INET6, "2001:db8:1::1", &ip6->saddr);
	inet_pton(AF_INET6, "2001:db8:2::1", &ip6->daddr);
	return ip6;
}

/*
 * Append an IPv6 extension header of @type and @len bytes (a multiple of 8,
 * of 4 for AH) to the chain of the last IPv6 header: it takes over the next
 * header value the chain ended with. For a Fragment header @frag is the
 * fragment offset field (offset in 8-byte units << 3 | M).
 */
static inline uint8_t *pkt_ipv6_ext(struct pkt *p, uint8_t type, size_t len, uint16_t frag)
{
	uint8_t *h = pkt_put(p, len);

	memset(h, 0, len);
	h[0] = p->buf[p->nexthdr];
	p->buf[p->nexthdr] = type;
	p->nexthdr = h - p->buf;
	if (type == IPPROTO_AH) {
		h[1] = len / 4 - 2;
	} else if (type == IPPROTO_FRAGMENT) {
		h[2] = frag >> 8;
		h[3] = frag & 0xff;
	} else {
		h[1] = len / 8 - 1;
		/* PadN over the option area */
		h[2] = 1;
		h[3] = len - 4;
	}
	return h;
}

static inline void pkt_payload(struct pkt *p, size_t n)
{
	memset(pkt_put(p, n), 0xa5, n);
}

/*
 * Fix the length fields (and IPv4 checksums) of every IP header, outermost
 * first, walking from the first L3 header. @first_l3 is its offset.
 */
static inline void pkt_end(struct pkt *p, size_t first_l3)
{
	size_t off = first_l3;

	while (off < p->len) {
		uint8_t ver = p->buf[off] >> 4;

		if (ver == 4) {
			struct iphdr *ip = (struct iphdr *)(p->buf + off);

			ip->tot_len = htons(p->len - off);
			ip->check = 0;
			ip->check = ip_csum(ip, ip->ihl * 4);
			if (ip->protocol != IPPROTO_IPV6 && ip->protocol != IPPROTO_IPIP)
				break;
			off += ip->ihl * 4;
		} else if (ver == 6) {
			struct ipv6hdr *ip6 = (struct ipv6hdr *)(p->buf + off);

			ip6->payload_len = htons(p->len - off - sizeof(*ip6));
			break;
		} else {
			break;
		}
	}
}

/*
 * Undo a DSCP rewrite in @out, where the IPv4 header at @ip4 (0: none) and
 * the IPv6 header at @ip6 (0: none) must carry @dscp with their ECN bits,
 * flow label and a valid IPv4 checksum: 0 if they do, after which @out
 * holds @in's bytes there again, so one memcmp() shows anything else that
 * moved; else the offset of the first wrong header.
 */
static inline long pkt_undo_dscp(uint8_t *out, const uint8_t *in, size_t ip4, size_t ip6,
				 uint8_t dscp)
{
	if (ip4) {
		struct iphdr *o = (struct iphdr *)(out + ip4);
		const struct iphdr *i = (const struct iphdr *)(in + ip4);

		if (o->tos != (dscp << 2 | (i->tos & 3)) || ip_csum(o, o->ihl * 4))
			return (long)ip4;
		o->tos = i->tos;
		o->check = i->check;
	}
	if (ip6) {
		uint32_t w, want;

		memcpy(&w, in + ip6, 4);
		want = htonl((ntohl(w) & ~(0x3fU << 22)) | (uint32_t)dscp << 22);
		memcpy(&w, out + ip6, 4);
		if (w != want)
			return (long)ip6;
		memcpy(out + ip6, in + ip6, 4);
	}
	return 0;
}

struct run_result {
	int err;		/* of bpf_prog_test_run_opts() */
	int retval;		/* the program's return value */
	struct __sk_buff ctx;	/* skb fields after the run */
	uint8_t ip_align[2];	/* as in struct pkt */
	uint8_t out[PKT_MAX];
	uint32_t out_len;
};

/* Run a tc program once on @p with the skb fields of @ctx_in on entry (the
 * kernel takes mark, priority, tc_classid, gso_segs, gso_size and a few
 * more: convert___skb_to_skb() in net/bpf/test_run.c). */
static inline void pkt_run_ctx(int prog_fd, const struct pkt *p, struct __sk_buff *ctx_in,
			       struct run_result *r)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		    .data_in = p->buf,
		    .data_size_in = p->len,
		    .data_out = r->out,
		    .data_size_out = sizeof(r->out),
		    .ctx_in = ctx_in,
		    .ctx_size_in = sizeof(*ctx_in),
		    .ctx_out = &r->ctx,
		    .ctx_size_out = sizeof(r->ctx),
		    .repeat = 1);

	memset(&r->ctx, 0, sizeof(r->ctx));
	r->err = bpf_prog_test_run_opts(prog_fd, &opts);
	r->retval = opts.retval;
	r->out_len = opts.data_size_out;
}

/* Run a tc program once on @p with skb->mark = @mark on entry. */
static inline void pkt_run(int prog_fd, const struct pkt *p, uint32_t mark,
			   struct run_result *r)
{
	struct __sk_buff ctx_in = { .mark = mark };

	pkt_run_ctx(prog_fd, p, &ctx_in, r);
}

#endif /* __QOS_SELFTEST_PKT_H */
