/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef __QOS_APPLY_H
#define __QOS_APPLY_H

#include <stddef.h>
#include <stdint.h>

/*
 * Apply @profile to @ifname at @link_bps as one transaction: on any error
 * the interface, its qdiscs, filters and pinned maps are as they were, and
 * @err says what failed. Applying over a profile qosctl installed earlier
 * changes it in place (programs replaced, classes changed) without tearing
 * the tree down.
 */
int qos_apply(const char *profile, const char *ifname, uint64_t link_bps,
	      char *err, size_t errlen);

/* Remove what qosctl installed on @ifname, and nothing else. */
int qos_remove(const char *ifname, char *err, size_t errlen);

#endif /* __QOS_APPLY_H */
