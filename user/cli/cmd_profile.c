// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * qosctl validate and list: profiles, without touching the kernel.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "lib/util.h"
#include "model/profile.h"

int do_validate(int argc, char **argv)
{
	struct qos_class_plan plan[QOS_MAX_CLASSES];
	static struct qos_profile p;
	struct args a = {};
	char err[512];
	uint64_t bps = 0;

	if (argc < 1) {
		qos_err("validate: missing PROFILE");
		return -EINVAL;
	}
	if (parse_kv(argc - 1, argv + 1, &a, ARG_RATE))
		return -EINVAL;
	if (a.rate && parse_link_rate(a.rate, &bps))
		return -EINVAL;
	if (qos_profile_load(argv[0], &p, err, sizeof(err)) ||
	    (bps && qos_profile_resolve(&p, bps, plan, err, sizeof(err)))) {
		qos_err("validate: %s", err);
		return -1;
	}
	printf("%s: ok (%u classes, %zu rules)\n", p.path, p.nclasses, p.rules.n);
	qos_profile_free(&p);
	return 0;
}

int do_list(int argc, char **argv)
{
	static struct qos_profile p;
	char path[PATH_MAX], err[512];
	struct dirent **ents;
	const char *dir;
	int i, n;

	(void)argv;
	if (argc) {
		qos_err("list takes no arguments");
		return -EINVAL;
	}
	/* Profiles are found like qos_profile_find() does; list the first
	 * directory that exists. */
	if (qos_profile_find("pip-20pct", path, sizeof(path))) {
		qos_err("list: no profile directory found");
		return -ENOENT;
	}
	*strrchr(path, '/') = '\0';
	dir = path;
	n = scandir(dir, &ents, NULL, alphasort);
	if (n < 0) {
		qos_err("list: %s: %s", dir, strerror(errno));
		return -errno;
	}
	for (i = 0; i < n; i++) {
		char full[PATH_MAX + 256];

		if (ents[i]->d_name[0] != '.') {
			snprintf(full, sizeof(full), "%s/%s", dir, ents[i]->d_name);
			if (!qos_profile_load(full, &p, err, sizeof(err)))
				printf("%-16s %s\n", p.name, p.description);
			qos_profile_free(&p);
		}
		free(ents[i]);
	}
	free(ents);
	return 0;
}

/* rule add|del|list dev IFACE ...: "dev IFACE" comes first. */
