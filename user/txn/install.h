/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one installer: make a device run a plan. apply, a failed apply's
 * rollback, the rollback of an unconfirmed apply, the recovery of a killed
 * one, rule changes and remove all go through qos_install().
 */
#ifndef __QOS_TXN_INSTALL_H
#define __QOS_TXN_INSTALL_H

#include "txn/plan.h"

/*
 * What an install replaces, held until the caller commits (qos_undo_free)
 * or rolls back (qos_install(dev, &undo->prev, next, &undo->held, NULL)).
 * The caller reads @prev (qos_plan_current()); the install holds @held.
 */
struct qos_undo {
	struct qos_plan prev;		/* the state before, as a plan */
	struct qos_progs held;		/* the programs that ran before (fds) */
};

/*
 * Make @dev run @next, given that it runs @cur or, after a failure or a
 * crash, part of the way from @cur to something else (@cur then describes
 * that something, so its qdisc tree is cleared). @held: programs to run
 * (a rollback's), or NULL to keep what runs when it can run @next, else
 * load new ones. @undo, if not NULL, receives the programs that ran.
 * The device's lock must be held. On success @dev is reloaded and what it
 * runs has been checked against what was installed; on failure nothing
 * is undone here: the caller rolls back through this same function.
 */
int qos_install(struct qos_dev *dev, struct qos_plan *next, const struct qos_plan *cur,
		const struct qos_progs *held, struct qos_undo *undo, char *err, size_t errlen);

/*
 * Set what @next will own on @dev (the root qdisc, a clsact qdisc it
 * creates) in its meta flags, so a record written before the install says
 * what a killed install may have left. qos_install() calls it too.
 */
int qos_install_prepare(struct qos_dev *dev, struct qos_plan *next, const struct qos_plan *cur,
			char *err, size_t errlen);

/* A process that stays up (the agent): after a flip, the grace period that
 * makes the slot left clean is waited in a thread of its own, not at the
 * next flip. */
void qos_install_async(bool on);

void qos_undo_init(struct qos_undo *undo);
void qos_undo_free(struct qos_undo *undo);

#endif /* __QOS_TXN_INSTALL_H */
