/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The statistics of one probe stream, from the four timestamps of each
 * sequence number: no sockets, so selftests/test_stamp.c feeds it by hand.
 */
#ifndef __QOS_PROBE_STREAM_STATS_H
#define __QOS_PROBE_STREAM_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One sequence number's times, in ns since the Unix epoch; 0: not seen. */
struct pstats_slot {
	int64_t t1;		/* sent: the packet's own timestamp */
	int64_t t1k;		/* sent: the kernel's TX timestamp; 0: none */
	int64_t t2;		/* received by the reflector */
	int64_t t3;		/* sent back by the reflector */
	int64_t t4;		/* reply received */
	uint32_t replies;	/* more than 1: duplicates */
	bool t4_kernel;
	bool synced;		/* both ends' Error Estimate have S set */
	int refl_dscp;		/* CoS TLV DSCP2; -1 without the TLV */
	bool refl_rp;		/* CoS TLV RP set: the reply not sent with DSCP1 */
	int refl_ttl;
};

struct pstats {
	struct pstats_slot *slot;	/* by sequence number */
	uint32_t count;			/* slots */
	uint32_t sent;
	uint32_t max_seq;		/* highest sequence number received */
	bool any;
	uint32_t reordered;		/* arrived after a higher one (RFC 4737) */
};

/* Percentiles of a sample set, by nearest rank. */
struct pstats_dist {
	uint32_t n;
	int64_t min, p50, p90, p99, max;
	double mean;
};

struct pstats_sum {
	uint32_t sent;
	uint32_t received;	/* distinct sequence numbers answered */
	uint32_t lost;
	uint32_t duplicates;
	uint32_t reordered;
	struct pstats_dist rtt;		/* (T4 - T1) - (T3 - T2) */
	struct pstats_dist fwd;		/* T2 - T1 */
	struct pstats_dist back;	/* T4 - T3 */
	bool owd_valid;			/* every reply synced and fwd, back >= 0 */
	double jitter_ns;		/* RFC 3550 section 6.4.1, on the RTT */
	uint32_t tx_kernel, rx_kernel;	/* replies timed by the kernel */
	int refl_dscp;			/* the last one the reflector reported; -1 */
	uint32_t refl_dscp_replies;	/* replies that carried it */
	uint32_t remarked;		/* replies whose DSCP2 != @dscp */
	uint32_t cos_refused;		/* replies not sent back with @dscp (RP) */
	int refl_ttl;			/* the last; -1 */
};

int pstats_init(struct pstats *s, uint32_t count);
void pstats_free(struct pstats *s);
/* A reply for @seq: arrival order feeds the reordering count. */
void pstats_reply(struct pstats *s, uint32_t seq, const struct pstats_slot *r);
void pstats_sum(const struct pstats *s, uint8_t dscp, struct pstats_sum *sum);
/* The round trip of an answered slot, ns: (T4 - T1) - (T3 - T2). */
int64_t pstats_rtt(const struct pstats_slot *sl);
/* Nearest-rank percentiles of @v (sorted in place). */
void pstats_dist(int64_t *v, uint32_t n, struct pstats_dist *d);

#endif /* __QOS_PROBE_STREAM_STATS_H */
