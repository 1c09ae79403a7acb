/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Token-bucket arithmetic of the policer: RFC 2697 single-rate and RFC 2698
 * two-rate three-colour markers, without a lock.
 *
 * Integer code with no BPF helper and no libc: the ingress program includes
 * this header, qosctl uses it to build and reconfigure policers, and
 * selftests/test_tb.c compiles it natively and drives it with a synthetic
 * clock, from several threads at once for the atomic parts.
 *
 * Tokens are counted in nanobits (1e-9 bit). A rate in bit/s times an
 * interval in nanoseconds is then a whole number of nanobits, so a refill
 * is one multiplication, exact, with no division and no remainder to carry:
 * the bucket never drifts from rate x time however packets are spaced. A
 * byte is 8e9 nanobits. A bucket holds at most TB_BURST_MAX bytes (2^61.9
 * nanobits), and a refill is computed only for intervals shorter than the
 * time to fill the buckets from their deepest debt (fill_ns, TB_DEBT_MAX),
 * so dt * rate stays below two buckets plus a debt plus rate and a bucket
 * plus a credit below 2^64: no overflow at 1 kbit/s after years of idle
 * nor at 1 Tbit/s.
 *
 * Concurrency (Documentation/policing.rst): every word of struct tb_state
 * is updated on its own with a compare-and-swap. A packet first claims the
 * time from last_ns to its clock reading: whoever moves last_ns forward
 * owns that interval and adds its tokens, so each nanosecond is credited
 * once. It then adds that credit and takes its own tokens in one CAS per
 * bucket. Each bucket alone is then exact, whatever the interleaving: it
 * never gives out more than it held plus rate x the time claimed.
 */
#ifndef __QOS_LIB_TB_H
#define __QOS_LIB_TB_H

#include <linux/types.h>

/* Always inlined, but for the CAS step in BPF (TB_STEP_FN): the rest of a
 * policer step is straight-line code in the BPF program. */
#define TB_INLINE static inline __attribute__((always_inline))

#define TB_NS_PER_SEC		1000000000ULL
#define TB_NBITS_PER_BYTE	(8ULL * TB_NS_PER_SEC)
#define TB_RATE_MIN		1000ULL			/* 1 kbit/s */
#define TB_RATE_MAX		1000000000000ULL	/* 1 Tbit/s */
#define TB_BURST_MAX		(1ULL << 29)		/* bytes per bucket, 512 MiB */
/* The deepest debt a bucket may owe, in bytes: a GSO packet's cost less
 * the segment it is admitted on (tb_police_gso()), 1 MiB, above BIG TCP's
 * 512 kB. */
#define TB_DEBT_MAX		(1ULL << 20)
#define TB_DEBT_NB		(TB_DEBT_MAX * TB_NBITS_PER_BYTE)
/* Above any debt, in nanobits (see tb_step()). */
#define TB_DEBT_OFF		(1ULL << 62)

/*
 * Two readings further apart than this (146 years) come from different
 * clocks: the bucket then adopts the new reading without crediting
 * anything (see tb_claim()). A caller with two clocks keeps one of them
 * at or above TB_CLOCK_OTHER * 2.
 */
#define TB_CLOCK_OTHER		(1ULL << 62)

/* A CAS that lost to another CPU this many times in a row gives up: the
 * bucket counts as empty for that packet, and its credit is added with an
 * atomic add instead (tb_step()). */
#define TB_CAS_TRIES		16

/* Atomic access to a state word, the same in BPF and natively. The BPF
 * forms are BPF_ATOMIC | BPF_CMPXCHG on a 64-bit word (kernel 5.12), which
 * clang emits at any -mcpu (v3 is needed only for 32-bit atomics), and
 * BPF_ATOMIC | BPF_ADD without fetch (the old XADD). */
#define TB_LOAD(x)		(*(volatile __u64 *)&(x))
#ifndef TB_CAS		/* a test may make it lose */
#define TB_CAS(p, old, new)	__sync_val_compare_and_swap(p, old, new)
#endif
#define TB_ADD(p, v)		__sync_fetch_and_add(p, v)

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
 * whatever they held, the deepest debt included (srTCM: both buckets
 * through fill_c_ns).
 * tick_ns: 0, or the period of the ticking clock that drives the buckets
 * (tb_params_clock()).
 */
struct tb_params {
	__u64 cir;		/* bit/s */
	__u64 pir;		/* bit/s, trTCM only */
	__u64 cbs;		/* nanobits */
	__u64 ebs;		/* nanobits: srTCM EBS or trTCM PBS */
	__u64 fill_c_ns;
	__u64 fill_e_ns;
	__u64 tick_ns;
	__u32 mode;		/* enum tb_mode */
	__u32 pad;
};

/* Each word is read and written atomically on its own. */
struct tb_state {
	__u64 tc;		/* nanobits in bucket C */
	__u64 te;		/* nanobits in bucket E (srTCM) or P (trTCM) */
	__u64 last_ns;		/* the clock reading tokens were credited up to */
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
		p->fill_c_ns = tb_div_up(p->cbs + p->ebs + TB_DEBT_NB, cir);
		p->fill_e_ns = p->fill_c_ns;
	} else {
		p->fill_c_ns = tb_div_up(p->cbs + TB_DEBT_NB, cir);
		p->fill_e_ns = tb_div_up(p->ebs + TB_DEBT_NB, pir);
	}
	p->tick_ns = 0;
	return 0;
}

/*
 * Let a clock that ticks every @tick_ns drive the buckets if every one of
 * them holds TB_TICKS_MIN ticks of tokens at its rate; 0 or too coarse a
 * tick leaves an exact clock. On a ticking clock the buckets decide as on
 * the exact one for arrival times rounded down to the tick: bytes are
 * still credited to the nanobit, up to a tick late. With L the tokens of
 * a tick, that passes all traffic conforming to (rate, size - L) and never
 * more than size + L + rate x T in an interval T: the burst moves by at
 * most L, a tenth here. Under sustained overload it is exact in the long
 * run once a bucket holds two lumps of L (tc-tbf(8) asks burst >= rate /
 * HZ for the same reason); below one, the cap cuts every lump.
 */
#define TB_TICKS_MIN		10

TB_INLINE void tb_params_clock(struct tb_params *p, __u64 tick_ns)
{
	__u64 min_ns = TB_TICKS_MIN * tick_ns;

	p->tick_ns = 0;
	if (!tick_ns || p->cbs / p->cir < min_ns)
		return;
	if (p->mode == TB_TRTCM && p->ebs / p->pir < min_ns)
		return;
	if (p->mode == TB_SRTCM && p->ebs && p->ebs / p->cir < min_ns)
		return;
	p->tick_ns = tick_ns;
}

/*
 * RFC 2697 2.x / RFC 2698 2.x: both buckets start full. @now may be 0 or a
 * reading of another clock than the data path's: a full bucket loses
 * nothing by not being credited until the first packet.
 */
TB_INLINE void tb_state_init(const struct tb_params *p, struct tb_state *s, __u64 now)
{
	s->tc = p->cbs;
	s->te = p->ebs;
	s->last_ns = now;
}

/*
 * Claim the interval from last_ns to @now: the CPU whose CAS moves last_ns
 * forward credits its tokens, and no other CPU can claim them again.
 * Returns its length in ns, 0 for nothing to credit: a reading at or behind
 * last_ns (another CPU got there first; last_ns never moves back), a lost
 * race (the winner's interval ends where the next claim begins, so nothing
 * falls between), or a reading of another clock, which is adopted as the
 * new origin.
 */
TB_INLINE __u64 tb_claim(struct tb_state *s, __u64 now)
{
	__u64 last = TB_LOAD(s->last_ns);
	__u64 dt = now - last;

	if (dt + TB_CLOCK_OTHER >= 2 * TB_CLOCK_OTHER) {
		TB_CAS(&s->last_ns, last, now);
		return 0;
	}
	if ((__s64)dt <= 0 || TB_CAS(&s->last_ns, last, now) != last)
		return 0;
	return dt;
}

/* The tokens @dt_ns earn at @rate, or at least @size and the deepest debt
 * once the bucket would have filled from there: a bucket left in debt by a
 * GSO packet before an idle is as full after it as any other. */
TB_INLINE __u64 tb_credit(__u64 dt_ns, __u64 rate, __u64 size, __u64 fill_ns)
{
	return dt_ns >= fill_ns ? size + TB_DEBT_NB : dt_ns * rate;
}

/*
 * In BPF the step is a global function, verified once on its own: inlined,
 * its CAS loop was walked again at each of the four calls of
 * tb_police_gso() on every path of the policer into them, 99k of the
 * instructions the verifier processed for each program
 * (performance.rst, "Apply latency: where the time goes"). The callers
 * then see a result they know nothing of, and keep their branches on it.
 * Weak: both programs include it, and the object keeps one copy. Natively
 * (qosctl, test_tb) it stays inline.
 *
 * Its arguments and result are words, not a struct on the stack: a BPF
 * function takes five arguments, and 6.1 counts every frame of the call
 * chain, rounded up to 32 bytes, against the 512-byte stack. @bytes_need
 * is the packet's bytes in the low 32 bits and the bytes it needs in the
 * high 32; the result is tb_step()'s return value plus one in the top two
 * bits and what overflowed below them, capped at TB_OVER_MAX: the one
 * use of the overflow, srTCM's spill from C into E, adds it to a bucket
 * smaller than that, so the cap changes nothing.
 */
#ifdef __bpf__
#define TB_STEP_FN __attribute__((weak)) __attribute__((noinline))
#else
#define TB_STEP_FN TB_INLINE
#endif
#define TB_OVER_MAX	((1ULL << 62) - 1)

TB_INLINE __u64 tb_step_ret(int r, __u64 over)
{
	return (__u64)(r + 1) << 62 | (over < TB_OVER_MAX ? over : TB_OVER_MAX);
}

/* @tokens NULL only to please the verifier, for which a global function's
 * pointer argument may be NULL. */
TB_STEP_FN __u64 tb_step_word(__u64 *tokens, __u64 size, __u64 credit, __u64 bytes_need,
			      __u32 take)
{
	__u64 b = (bytes_need & 0xffffffffULL) * TB_NBITS_PER_BYTE;
	__u64 need = (bytes_need >> 32) * TB_NBITS_PER_BYTE;
	int i;

	if (!tokens)
		return tb_step_ret(-1, 0);
	for (i = 0; i < TB_CAS_TRIES; i++) {
		__u64 t = TB_LOAD(*tokens);
		__u64 sum = t + credit;
		__u64 nt = sum + TB_DEBT_OFF < size + TB_DEBT_OFF ? sum : size;
		int ok = take && nt + TB_DEBT_OFF >= need + TB_DEBT_OFF;

		if (ok)
			nt -= b;
		if (nt == t || TB_CAS(tokens, t, nt) == t)
			return tb_step_ret(ok, sum - (ok ? nt + b : nt));
	}
	if (credit)
		TB_ADD(tokens, credit < size ? credit : size);
	return tb_step_ret(-1, 0);
}

/*
 * One atomic step on one bucket of @size: add @credit (what does not fit
 * goes to *@over when @over is given) and, if @take and the bucket then
 * holds @need bytes, take @bytes. Returns 1 if they were taken, 0 if not,
 * -1 if the CAS lost TB_CAS_TRIES times in a row: then nothing is taken and
 * the credit is added with an atomic add, which cannot lose, without the
 * cap. A bucket found above @size (that add, or a reconfiguration that
 * shrank it) is cut back by the next step, what it cuts going to *@over as
 * any overflow. The add is at most @size, and a credit that large needs an
 * idle of the bucket's fill time before its claim, so two are never in
 * flight at once: a bucket stays below two sizes (2^62.9 nanobits) and a
 * step's sum below three (2^63.5).
 *
 * Debt: when @need < @bytes (a GSO packet admitted on one segment's worth,
 * tb_police_gso()) the bucket may go below zero, by at most @bytes - @need
 * (TB_DEBT_NB), far less than TB_DEBT_OFF: the word then holds the debt in two's
 * complement. A bucket in debt is paid first by credits, admits nothing and
 * overflows nothing. Comparing the words lifted by TB_DEBT_OFF puts every
 * debt below every holding (a sum stays below 2^63.5, so the lift
 * cannot wrap): the step keeps the branches it has without debts, which
 * keeps the verifier's work where it was.
 */
TB_INLINE int tb_step(__u64 *tokens, __u64 size, __u64 credit, __u64 *over, int take,
		      __u32 bytes, __u32 need)
{
	__u64 w = tb_step_word(tokens, size, credit, (__u64)need << 32 | bytes, !!take);

	if (over)
		*over = w & TB_OVER_MAX;
	return (int)(w >> 62) - 1;
}

/*
 * Colour a packet that costs @bytes at time @now whose colour on arrival is
 * @pre (TB_GREEN in colour-blind mode: for both RFCs the colour-aware rules
 * given a green packet are the colour-blind rules), take its tokens and
 * credit the time since the last refill. Safe to run on every CPU at once
 * on the same @s; @p is only read.
 *
 * A bucket admits the packet when it holds @need bytes: @bytes for a
 * packet (the RFCs), one segment's wire size for a GSO packet of @bytes on
 * the wire (at most TB_BURST_MAX), which then takes all its @bytes and may
 * leave the bucket in debt (tb_step()), as the wire would have let its
 * segments in over the time the debt takes to pay. @bytes - @need is at
 * most TB_DEBT_MAX. Documentation/policing.rst (GSO and GRO) has the
 * reasoning and the bound.
 *
 * The buckets are visited in the RFCs' order, each in one atomic step:
 * trTCM P then C, srTCM C then E. Each bucket on its own never gives more
 * than it held plus its rate x the time claimed plus the debt it is left
 * in, so green
 * bytes never exceed CBS + CIR x t + D, nor green and yellow PBS + PIR x t
 * + D (trTCM) or CBS + EBS + CIR x t + 2D (srTCM), D being the largest
 * @bytes - @need admitted. A step that keeps losing the race
 * (TB_CAS_TRIES in a row) counts as a bucket without the packet's tokens:
 * stricter, never looser; its credit still reaches the bucket.
 */
TB_INLINE __u32 tb_police_gso(const struct tb_params *p, struct tb_state *s, __u64 now,
			      __u32 bytes, __u32 need, __u32 pre)
{
	__u64 dt = tb_claim(s, now);
	__u64 over = 0;
	int r;

	if (p->mode == TB_TRTCM) {
		/* RFC 2698 3: red if P lacks tokens, else yellow if C does. */
		r = tb_step(&s->te, p->ebs, dt ? tb_credit(dt, p->pir, p->ebs, p->fill_e_ns) : 0,
			    0, pre != TB_RED, bytes, need);
		if (r <= 0) {
			if (dt)
				tb_step(&s->tc, p->cbs, tb_credit(dt, p->cir, p->cbs, p->fill_c_ns),
					0, 0, 0, 0);
			return TB_RED;
		}
		r = tb_step(&s->tc, p->cbs, dt ? tb_credit(dt, p->cir, p->cbs, p->fill_c_ns) : 0,
			    0, pre == TB_GREEN, bytes, need);
		return r > 0 ? TB_GREEN : TB_YELLOW;
	}
	/* RFC 2697 3: green from C, else yellow from E, else red. What
	 * overflows C goes on to E. */
	r = tb_step(&s->tc, p->cbs, dt ? tb_credit(dt, p->cir, p->cbs + p->ebs, p->fill_c_ns) : 0,
		    &over, pre == TB_GREEN, bytes, need);
	if (r < 0)
		r = 0;
	if (r > 0 && !over)
		return TB_GREEN;
	if (!p->ebs)
		return r > 0 ? TB_GREEN : TB_RED;
	if (tb_step(&s->te, p->ebs, over, 0, !r && pre != TB_RED, bytes, need) > 0)
		return TB_YELLOW;
	return r > 0 ? TB_GREEN : TB_RED;
}

/* A packet of @bytes, admitted only by a bucket that holds all of it. */
TB_INLINE __u32 tb_police(const struct tb_params *p, struct tb_state *s, __u64 now,
			  __u32 bytes, __u32 pre)
{
	return tb_police_gso(p, s, now, bytes, bytes, pre);
}

/*
 * Carry the buckets @s of a running policer over to new parameters @np
 * without refilling or emptying them: what they hold is kept, cut to the
 * new sizes. The time since the last refill is credited by the next packet,
 * at the new rates (or not at all if the new parameters change the clock).
 * Not atomic: qosctl applies it to a copy and writes the whole value back.
 */
TB_INLINE void tb_reconfig(struct tb_state *s, const struct tb_params *np)
{
	if ((__s64)s->tc >= 0 && s->tc > np->cbs)
		s->tc = np->cbs;
	if ((__s64)s->te >= 0 && s->te > np->ebs)
		s->te = np->ebs;
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
