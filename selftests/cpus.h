/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Threads pinned to distinct CPUs, for the tests that drive one policer
 * from two CPUs at once (test_tb, test_police).
 */
#ifndef __QOS_SELFTEST_CPUS_H
#define __QOS_SELFTEST_CPUS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>

/* The @i-th CPU this process may run on (0 and 1 on an idle 2-CPU
 * machine), or -1 if there are not that many. */
static inline int qos_test_nth_cpu(int i)
{
	cpu_set_t set;
	int c;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set) && i-- == 0)
			return c;
	return -1;
}

/* Start @fn(@arg) on the @i-th CPU this process may run on, or unpinned if
 * there are not that many. Returns 0 or a negative errno. */
static inline int qos_test_start_on(int i, pthread_t *th, void *(*fn)(void *), void *arg)
{
	int cpu = qos_test_nth_cpu(i), err;
	pthread_attr_t attr;
	cpu_set_t set;

	pthread_attr_init(&attr);
	if (cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	err = pthread_create(th, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return -err;
}

#endif /* __QOS_SELFTEST_CPUS_H */
