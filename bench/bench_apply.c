// SPDX-License-Identifier: GPL-2.0-only
/*
 * An apply as the domain agent makes it (user/domain/agent.c, dev_sync()):
 * in a process that stays up, the device opened, the profile applied,
 * the device closed, RUNS times with the link rate alternating between
 * RATE1 and RATE2 so that every apply changes the qdisc tree (the rate
 * is meta: no configuration flip). With PROFILE2, odd runs apply
 * PROFILE2 instead of PROFILE, which should differ in what
 * the programs read (a DSCP mapping), so that every apply flips the
 * configuration too. It waits grace periods as the agent does
 * (qos_install_async(): after a flip, in a thread), so back-to-back
 * changes the programs read still wait for one between two flips. One
 * line per apply, "run,usec", on stdout: the time of those three calls,
 * wall clock. BENCH_APPLY_GAP_MS sleeps that long before each apply,
 * untimed. scripts/bench/apply-latency.sh runs it as its "agent",
 * "agent-dp" and "agent-dp-gap" operations.
 *
 * Usage: bench_apply DEV PROFILE RATE1 RATE2 RUNS [PROFILE2]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "kernel/dev.h"
#include "model/profile.h"
#include "lib/util.h"
#include "txn/install.h"
#include "txn/txn.h"

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

int main(int argc, char **argv)
{
	uint64_t bps[2];
	char err[512];
	int i, runs, gap;

	if ((argc != 6 && argc != 7) || qos_parse_rate(argv[3], 0, &bps[0]) ||
	    qos_parse_rate(argv[4], 0, &bps[1]) || (runs = atoi(argv[5])) <= 0) {
		fprintf(stderr, "usage: bench_apply DEV PROFILE RATE1 RATE2 RUNS [PROFILE2]\n");
		return 2;
	}
	/* libbpf's messages stay quiet, as in qosctl without -v. */
	libbpf_set_print(NULL);
	qos_install_async(true);
	gap = getenv("BENCH_APPLY_GAP_MS") ? atoi(getenv("BENCH_APPLY_GAP_MS")) : 0;
	for (i = 1; i <= runs; i++) {
		long long t0;
		struct qos_dev dev;
		int ret;

		if (gap > 0)
			usleep(gap * 1000);
		t0 = now_us();
		ret = qos_txn_open(&dev, argv[1], 0, err, sizeof(err));
		if (!ret) {
			ret = qos_txn_apply(&dev, argc == 7 && i % 2 ? argv[6] : argv[2], bps[i % 2],
					    0, NULL, QOS_QUEUES_PROFILE, QOS_TCX_KEEP, 0, err,
					    sizeof(err));
			qos_txn_close(&dev);
		}
		if (ret) {
			fprintf(stderr, "bench_apply: %s\n", err);
			return 1;
		}
		printf("%d,%lld\n", i, now_us() - t0);
	}
	return 0;
}
