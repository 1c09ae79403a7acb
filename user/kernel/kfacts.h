/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Facts about the running kernel that cost a fork and a network namespace
 * to find (which qdiscs it has), kept in QOS_RUN_DIR for the next command.
 */
#ifndef __QOS_KERNEL_KFACTS_H
#define __QOS_KERNEL_KFACTS_H

#include <stdint.h>

#define QOS_KFACTS_FILE "qdisc-probe"

/*
 * The qdisc bits (one per name of @kinds, in order) a probe of this kernel
 * recorded, in *@bits: 0, or -errno when there is no record, it is of
 * another kernel (release, boot or module set) or of another list of
 * kinds, or it cannot be trusted (not a regular file of ours that only we
 * can write: refused, never followed), or the process could not run the
 * probe itself (no CAP_SYS_ADMIN).
 */
int qos_kfacts_read(const char *kinds, uint32_t *bits);
/* Record @bits for this kernel; best effort, -errno. */
int qos_kfacts_write(const char *kinds, uint32_t bits);

#endif /* __QOS_KERNEL_KFACTS_H */
