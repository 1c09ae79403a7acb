/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Token-bucket arithmetic of the policer: RFC 2697 single-rate and RFC 2698
 * two-rate three-colour markers.
 *
 * Pure functions on plain integers, with no BPF helper and no libc: the
 * ingress program includes this header, qosctl uses it to build and
 * reconfigure policers, and selftests/test_tb.c compiles it natively and
 * drives it with a synthetic clock.
 *
 * Tokens are counted in nanobits (1e-9 bit). A rate in bit/s times an
 * interval in nanoseconds is then a whole number of nanobits, so a refill
 * is one multiplication, exact, with no division and no remainder to carry:
 * the bucket never drifts from rate x time however packets are spaced. A
 * byte is 8e9 nanobits. A bucket holds at most TB_BURST_MAX bytes, so the
 * two buckets together hold less than 2^63 nanobits, and a refill is
 * computed only for intervals shorter than the time to fill the buckets
 * from empty (fill_ns), so dt * rate stays below 2^63 + rate: no overflow
 * at 1 kbit/s after years of idle nor at 1 Tbit/s.
 */
#ifndef __QOS_LIB_TB_H
#define __QOS_LIB_TB_H

#include <linux/types.h>

/* Always inlined: the BPF program runs these under a bpf_spin_lock, where
 * no call is allowed. */
#define TB_INLINE static inline __attribute__((always_inline))

#define TB_NS_PER_SEC		1000000000ULL
#define TB_NBITS_PER_BYTE	(8ULL * TB_NS_PER_SEC)
#define TB_RATE_MIN		1000ULL			/* 1 kbit/s */
#define TB_RATE_MAX		1000000000000ULL	/* 1 Tbit/s */
#define TB_BURST_MAX		(1ULL << 29)		/* bytes per bucket, 512 MiB */

enum tb_mode {
	TB_SRTCM,	/* RFC 2697: CIR, CBS, EBS */
	TB_TRTCM,	/* RFC 2698: CIR, CBS, PIR, PBS */
};

enum tb_color {
	TB_GREEN,
	TB_YELLOW,
	TB_RED,
	TB_COLOR_MAX,
};

/*
 * srTCM: bucket C (committed, size cbs) and bucket E (excess, size ebs),
 * both filled at cir, E only with what overflows C. ebs = 0 makes a plain
 * two-colour policer.
 * trTCM: bucket C (cbs) filled at cir and bucket P (ebs holds PBS) filled
 * at pir.
 * fill_c_ns / fill_e_ns: after this much idle time the buckets are full,
 * whatever they held (srTCM: both buckets through fill_c_ns).
 */
struct tb_params {
	__u64 cir;		/* bit/s */
	__u64 pir;		/* bit/s, trTCM only */
	__u64 cbs;		/* nanobits */
	__u64 ebs;		/* nanobits: srTCM EBS or trTCM PBS */
	__u64 fill_c_ns;
	__u64 fill_e_ns;
	__u32 mode;		/* enum tb_mode */
	__u32 pad;
};

struct tb_state {
	__u64 tc;		/* nanobits in bucket C */
	__u64 te;		/* nanobits in bucket E (srTCM) or P (trTCM) */
	__u64 last_ns;		/* time of the last refill */
};

TB_INLINE __u64 tb_div_up(__u64 a, __u64 b)
{
	return a / b + (a % b != 0);
}

/*
 * Fill in @p; bursts in bytes. Returns 0, or -1 if a value is out of range
 * (the caller reports which). For srTCM @pir is ignored.
 */
TB_INLINE int tb_params_init(struct tb_params *p, __u32 mode, __u64 cir, __u64 cbs_bytes,
				 __u64 pir, __u64 ebs_bytes)
{
	if (mode > TB_TRTCM || cir < TB_RATE_MIN || cir > TB_RATE_MAX ||
	    cbs_bytes > TB_BURST_MAX || ebs_bytes > TB_BURST_MAX)
		return -1;
	if (mode == TB_TRTCM && (pir < cir || pir > TB_RATE_MAX))
		return -1;
	p->mode = mode;
	p->pad = 0;
	p->cir = cir;
	p->pir = mode == TB_TRTCM ? pir : 0;
	p->cbs = cbs_bytes * TB_NBITS_PER_BYTE;
	p->ebs = ebs_bytes * TB_NBITS_PER_BYTE;
	if (mode == TB_SRTCM) {
		p->fill_c_ns = tb_div_up(p->cbs + p->ebs, cir);
		p->fill_e_ns = p->fill_c_ns;
	} else {
		p->fill_c_ns = tb_div_up(p->cbs, cir);
		p->fill_e_ns = tb_div_up(p->ebs, pir);
	}
	return 0;
}

/* RFC 2697 2.x / RFC 2698 2.x: both buckets start full. */
TB_INLINE void tb_state_init(const struct tb_params *p, struct tb_state *s, __u64 now)
{
	s->tc = p->cbs;
	s->te = p->ebs;
	s->last_ns = now;
}

/* @tokens + @dt_ns at @rate, capped at @size. */
TB_INLINE __u64 tb_fill(__u64 tokens, __u64 size, __u64 rate, __u64 dt_ns, __u64 fill_ns)
{
	__u64 add;

	if (dt_ns >= fill_ns)
		return size;
	add = dt_ns * rate;
	return size - tokens > add ? tokens + add : size;
}

/*
 * Add the tokens earned since the last refill. A clock read on another CPU
 * before this one took the lock can be behind last_ns: such an interval is
 * treated as zero and last_ns never moves back, so no token is counted
 * twice.
 */
TB_INLINE void tb_refill(const struct tb_params *p, struct tb_state *s, __u64 now)
{
	__u64 dt = now - s->last_ns;
	__u64 add, room;

	if ((__s64)dt <= 0)
		return;
	s->last_ns = now;
	if (p->mode == TB_TRTCM) {
		s->tc = tb_fill(s->tc, p->cbs, p->cir, dt, p->fill_c_ns);
		s->te = tb_fill(s->te, p->ebs, p->pir, dt, p->fill_e_ns);
		return;
	}
	/* srTCM: tokens go to C until it is full, the overflow to E. */
	if (dt >= p->fill_c_ns) {
		s->tc = p->cbs;
		s->te = p->ebs;
		return;
	}
	add = dt * p->cir;
	room = p->cbs - s->tc;
	if (add <= room) {
		s->tc += add;
		return;
	}
	s->tc = p->cbs;
	add -= room;
	s->te = p->ebs - s->te > add ? s->te + add : p->ebs;
}

/*
 * Colour a packet of @bytes whose colour on arrival is @pre (TB_GREEN in
 * colour-blind mode: for both RFCs the colour-aware rules given a green
 * packet are the colour-blind rules) and take its tokens. Buckets must be
 * refilled first.
 */
TB_INLINE __u32 tb_color(const struct tb_params *p, struct tb_state *s, __u32 bytes,
			     __u32 pre)
{
	__u64 b = (__u64)bytes * TB_NBITS_PER_BYTE;

	if (p->mode == TB_TRTCM) {
		/* RFC 2698 3: red if P lacks tokens, else yellow if C does. */
		if (pre == TB_RED || s->te < b)
			return TB_RED;
		s->te -= b;
		if (pre == TB_YELLOW || s->tc < b)
			return TB_YELLOW;
		s->tc -= b;
		return TB_GREEN;
	}
	/* RFC 2697 3: green from C, else yellow from E, else red. */
	if (pre == TB_GREEN && s->tc >= b) {
		s->tc -= b;
		return TB_GREEN;
	}
	if (pre != TB_RED && s->te >= b) {
		s->te -= b;
		return TB_YELLOW;
	}
	return TB_RED;
}

TB_INLINE __u32 tb_police(const struct tb_params *p, struct tb_state *s, __u64 now,
			      __u32 bytes, __u32 pre)
{
	tb_refill(p, s, now);
	return tb_color(p, s, bytes, pre);
}

/*
 * Switch a running bucket to new parameters at @now: the interval up to now
 * is credited at the old rates, then the buckets are cut to the new sizes.
 * Tokens already earned are kept, so a rate change neither refills nor
 * empties the bucket.
 */
TB_INLINE void tb_reconfig(struct tb_params *p, struct tb_state *s,
			       const struct tb_params *np, __u64 now)
{
	tb_refill(p, s, now);
	*p = *np;
	if (s->tc > p->cbs)
		s->tc = p->cbs;
	if (s->te > p->ebs)
		s->te = p->ebs;
}

/*
 * The burst at the knee the policing seed measured for TCP through a
 * policer (policing-shaping-ipv6-slides): Bc* = 0.6 Mbit + 0.03 s x rate
 * below 40 Mbit/s, 1.5 Mbit + 0.01 s x rate above. In bytes, rounded up,
 * never below @min_bytes (one frame) nor above TB_BURST_MAX.
 */
TB_INLINE __u64 tb_auto_burst(__u64 rate, __u64 min_bytes)
{
	__u64 bits = rate < 40000000ULL ? 600000ULL + rate * 3 / 100 :
					  1500000ULL + rate / 100;
	__u64 bytes = tb_div_up(bits, 8);

	if (bytes < min_bytes)
		bytes = min_bytes;
	return bytes > TB_BURST_MAX ? TB_BURST_MAX : bytes;
}

#endif /* __QOS_LIB_TB_H */
