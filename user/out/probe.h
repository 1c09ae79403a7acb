/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The results of `probe send` and `probe reflect`, as plain data: the
 * renderers need nothing of probe/'s sockets and statistics.
 */
#ifndef __QOS_OUT_PROBE_H
#define __QOS_OUT_PROBE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* A distribution of delays, ns. */
struct qos_probe_dist {
	uint32_t n;
	int64_t min, p50, p90, p99, max;
	double mean;
};

/* One class's stream: what was sent, what came back, and how. */
struct qos_probe_row {
	const char *cls;
	uint8_t dscp;
	uint32_t flowlabel;		/* 0: none */
	uint16_t ssid;
	uint32_t sent, received, lost, duplicates, reordered;
	struct qos_probe_dist rtt, fwd, back;
	bool owd_valid;			/* the one-way delays can be trusted */
	double jitter_ns;
	uint32_t tx_kernel, rx_kernel;	/* replies timed by the kernel */
	int refl_dscp;			/* the reflector's last report; -1 */
	uint32_t refl_dscp_replies, remarked, cos_refused;
	int refl_ttl;			/* -1: unknown */
};

/* A run of `probe send`, and its SLA if one was given. */
struct qos_probe_run {
	const char *target;
	uint16_t port;
	const char *family;		/* "ipv4", "ipv6" */
	uint64_t interval_ns;
	uint32_t count;
	const struct qos_probe_row *rows;
	unsigned int n;
	const struct qos_probe_row *sla_row;	/* the SLA's class; NULL: no SLA */
	uint64_t sla_delay_p99_ns;	/* 0: no bound */
	double sla_loss_ratio;		/* < 0: no bound */
	bool sla_met;
};

int qos_probe_print(FILE *f, bool json, const struct qos_probe_run *run);

#define QOS_REFL_REASONS_MAX	8

/* What a reflector answered and refused, per family (0: IPv4, 1: IPv6). */
struct qos_refl_counts {
	uint64_t packets[2];
	uint64_t dscp[2][64];		/* test packets per DSCP received */
	uint64_t bad;			/* malformed */
	uint64_t evicted;		/* sources that took another's entry */
	uint64_t cos_refused[2];
	const char *reason[QOS_REFL_REASONS_MAX];	/* why refused: their names */
	uint64_t refused[2][QOS_REFL_REASONS_MAX];
	unsigned int nreasons;
};

int qos_refl_print(FILE *f, bool json, const struct qos_refl_counts *c);

/* One class's SLA over the last window of `probe send --continuous`. */
struct qos_sla_verdict {
	const char *cls;
	uint64_t delay_p99_bound_ns;	/* 0: no bound */
	double loss_bound_ratio;	/* < 0: no bound */
	int64_t delay_p99_ns;
	double loss_ratio;
	bool met;
};

/* What a continuous probe publishes for `show` (probe/pstate.h). */
struct qos_sla_state {
	const char *target;
	const char *family;
	uint64_t window_ns;		/* the longest a window can take */
	uint64_t windows;
	uint64_t end_boottime_ns;	/* when the last window ended */
	const struct qos_sla_verdict *v;
	unsigned int n;
};

/* @st as the JSON text of the state file, malloc()ed; NULL on ENOMEM. */
char *qos_sla_state_json(const struct qos_sla_state *st);

#endif /* __QOS_OUT_PROBE_H */
