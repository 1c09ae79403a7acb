/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef __QOS_CONFIRM_H
#define __QOS_CONFIRM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../bpf/qos_common.h"

/*
 * `apply --confirm SECONDS`, Juniper's "commit confirmed": the state before
 * the apply, held by a background process that puts it back unless
 * `qosctl confirm` arrives in time. See Documentation/design.rst.
 */
struct qos_confirm {
	bool have_old;			/* false: nothing was applied before */
	struct qos_meta old;
	struct qos_cfg old_cfg;
	int prog_fd[QOS_DIR_MAX];	/* keep the old programs alive */
};

/* Under the interface lock, before applying: snapshot the current state.
 * Fails with -EBUSY if a confirmation is already pending. */
int qos_confirm_prepare(const char *ifname, struct qos_confirm *c, char *err, size_t errlen);

/*
 * After a successful apply, still under the lock (@lock_fd): start the
 * process that rolls back in @secs seconds and record it as pending.
 */
int qos_confirm_arm(const char *ifname, struct qos_confirm *c, unsigned int secs,
		    int lock_fd, char *err, size_t errlen);

void qos_confirm_release(struct qos_confirm *c);

/* Under the lock: end a pending rollback, keeping what is applied.
 * Returns 1 if one was pending, 0 if none. */
int qos_confirm_cancel(const char *ifname);

/* The pending rollback's process and deadline, if any (1), else 0. */
int qos_confirm_pending(const char *ifname, pid_t *pid, long long *deadline);

#endif /* __QOS_CONFIRM_H */
