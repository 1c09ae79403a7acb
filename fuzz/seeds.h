/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Seeds the fuzz targets make themselves: with QOS_FUZZ_SEEDS=DIR in the
 * environment, LLVMFuzzerInitialize() writes a few valid inputs of this
 * build (a record carries the build's object hash, so it cannot be
 * checked in) into DIR, which the caller then names as a corpus
 * directory. Without it, nothing is written.
 */
#ifndef __QOS_FUZZ_SEEDS_H
#define __QOS_FUZZ_SEEDS_H

#include <stdio.h>
#include <stdlib.h>

static inline void fuzz_seed(const char *name, const void *buf, size_t len)
{
	const char *dir = getenv("QOS_FUZZ_SEEDS");
	char path[4096];
	FILE *f;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "we");
	if (!f || fwrite(buf, 1, len, f) != len)
		abort();
	fclose(f);
}

#endif /* __QOS_FUZZ_SEEDS_H */
