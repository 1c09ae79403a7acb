// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Grace periods from user space (kernel/gp.h), one at a time per process:
 * a thread waits them in a loop while a caller wants one later than the
 * last that ended, so callers that ask during a wait share the next one.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "kernel/gp.h"
#include "lib/util.h"

static pthread_mutex_t gp_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gp_cv = PTHREAD_COND_INITIALIZER;
static uint64_t gp_want;	/* the latest moment a grace period must begin after */
static uint64_t gp_ended;	/* the beginning of the last that ended */
static bool gp_running;		/* the thread is up */
static int gp_err;		/* of the thread's last wait */
static int gp_outer = -1, gp_inner = -1;

/* The one-slot array of maps, made once (under gp_mu). */
static int gp_maps(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts);
	uint32_t zero = 0;

	if (gp_outer >= 0)
		return 0;
	gp_inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "qos_gp_inner", sizeof(zero),
				  sizeof(zero), 1, NULL);
	if (gp_inner < 0)
		return -errno;
	opts.inner_map_fd = gp_inner;
	gp_outer = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "qos_gp", sizeof(zero),
				  sizeof(zero), 1, &opts);
	if (gp_outer < 0) {
		close(gp_inner);
		gp_inner = -1;
		return -errno;
	}
	return 0;
}

/* One grace period: returns once it has ended. */
static int gp_sync(void)
{
	uint32_t zero = 0;

	return bpf_map_update_elem(gp_outer, &zero, &gp_inner, BPF_ANY) ? -errno : 0;
}

static void *gp_thread(void *arg)
{
	uint64_t begun;
	int ret;

	(void)arg;
	pthread_mutex_lock(&gp_mu);
	while (gp_want > gp_ended && !gp_err) {
		begun = qos_boottime_ns();
		pthread_mutex_unlock(&gp_mu);
		ret = gp_sync();
		pthread_mutex_lock(&gp_mu);
		gp_err = ret;
		if (!ret)
			gp_ended = begun;
		pthread_cond_broadcast(&gp_cv);
	}
	gp_running = false;
	pthread_cond_broadcast(&gp_cv);
	pthread_mutex_unlock(&gp_mu);
	return NULL;
}

/* Under gp_mu: ask for one that begins at or after @since. */
static int gp_ask(uint64_t since)
{
	pthread_attr_t attr;
	pthread_t thr;
	int ret;

	if (gp_ended >= since)
		return 0;
	if (gp_want < since)
		gp_want = since;
	if (gp_running)
		return 0;
	ret = gp_maps();
	if (ret)
		return ret;
	gp_err = 0;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	ret = -pthread_create(&thr, &attr, gp_thread, NULL);
	pthread_attr_destroy(&attr);
	gp_running = !ret;
	return ret;
}

bool qos_gp_done(uint64_t since)
{
	bool done;

	pthread_mutex_lock(&gp_mu);
	done = gp_ended >= since;
	pthread_mutex_unlock(&gp_mu);
	return done;
}

void qos_gp_start(uint64_t since)
{
	pthread_mutex_lock(&gp_mu);
	gp_ask(since);
	pthread_mutex_unlock(&gp_mu);
}

int qos_gp_wait(uint64_t since)
{
	uint64_t begun;
	int ret;

	pthread_mutex_lock(&gp_mu);
	ret = gp_ask(since);
	while (!ret && gp_running && gp_ended < since)
		pthread_cond_wait(&gp_cv, &gp_mu);
	ret = 0;
	/* The thread could not start, or its wait failed: here, once. */
	if (gp_ended < since) {
		begun = qos_boottime_ns();
		ret = gp_maps() ?: gp_sync();
		if (!ret && begun > gp_ended)
			gp_ended = begun;
	}
	pthread_mutex_unlock(&gp_mu);
	return ret;
}

bool qos_gp_busy(void)
{
	bool busy;

	pthread_mutex_lock(&gp_mu);
	busy = gp_running;
	pthread_mutex_unlock(&gp_mu);
	return busy;
}

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

int qos_gp_once(void)
{
	union bpf_attr a;
	uint32_t zero = 0;
	int inner, outer, ret = 0;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = a.value_size = sizeof(zero);
	a.max_entries = 1;
	inner = sys_bpf(BPF_MAP_CREATE, &a);
	if (inner < 0)
		return -errno;
	a.map_type = BPF_MAP_TYPE_ARRAY_OF_MAPS;
	a.inner_map_fd = inner;
	outer = sys_bpf(BPF_MAP_CREATE, &a);
	if (outer < 0) {
		ret = -errno;
		close(inner);
		return ret;
	}
	memset(&a, 0, sizeof(a));
	a.map_fd = outer;
	a.key = (uintptr_t)&zero;
	a.value = (uintptr_t)&inner;
	if (sys_bpf(BPF_MAP_UPDATE_ELEM, &a))
		ret = -errno;
	close(outer);
	close(inner);
	return ret;
}
