// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the profile parser: the input is a profile file,
 * loaded and resolved at a few link rates the way apply and validate do.
 * Any crash, sanitizer report or leak is a finding.
 *
 * The input goes to a memfd opened again by its /proc path, so the
 * parser reads it through the same fopen() as a real profile, without
 * touching the disk.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/util.h"
#include "model/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t rates[] = { 1000000, 100000000, 100000000000ULL };
	static struct qos_class_plan plan[QOS_MAX_CLASSES];
	static struct qos_profile p;
	static char path[64];
	static int fd = -1;
	char err[512];
	size_t i;

	if (fd < 0) {
		fd = memfd_create("fuzz-profile", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();

	if (!qos_profile_load(path, &p, err, sizeof(err)))
		for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
			qos_profile_resolve(&p, rates[i], QOS_MTU_DEFAULT, plan, err, sizeof(err));
	qos_profile_free(&p);
	return 0;
}
