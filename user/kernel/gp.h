/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An RCU grace period waited from user space: an update of a one-slot
 * BPF_MAP_TYPE_ARRAY_OF_MAPS of this process's own, which the kernel
 * returns from only after synchronize_rcu() (maybe_wait_bpf_programs(),
 * kernel/bpf/syscall.c). A tc program run is one RCU read-side critical
 * section, so once a grace period that began after a moment has ended, no
 * run that began before that moment is still going. Not membarrier():
 * see Documentation/design.rst, "Two slots".
 *
 * Moments are CLOCK_BOOTTIME nanoseconds (qos_boottime_ns()).
 */
#ifndef __QOS_KERNEL_GP_H
#define __QOS_KERNEL_GP_H

#include <stdbool.h>
#include <stdint.h>

/* Has a grace period that began at or after @since ended? */
bool qos_gp_done(uint64_t since);
/* Begin one in a thread unless one that began at or after @since is
 * under way or over; the thread ends by itself. */
void qos_gp_start(uint64_t since);
/* Until one that began at or after @since has ended (begun here if
 * none is under way). */
int qos_gp_wait(uint64_t since);

/* Is the thread that waits them up? */
bool qos_gp_busy(void);
/* One, waited here through raw system calls and maps of its own, for a
 * process just forked from a threaded one (nothing of libc's or libbpf's
 * state is touched). */
int qos_gp_once(void);

#endif /* __QOS_KERNEL_GP_H */
