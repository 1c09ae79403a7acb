/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef __QOS_DRYRUN_H
#define __QOS_DRYRUN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * `apply --dry-run`: print to @f what qos_apply() would install on @ifname,
 * as the equivalent tc commands and the contents of the configuration
 * map, and change nothing.
 */
int qos_dry_run(const char *profile, const char *ifname, uint64_t link_bps, FILE *f,
		char *err, size_t errlen);

#endif /* __QOS_DRYRUN_H */
