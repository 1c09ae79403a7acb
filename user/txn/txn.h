/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Transactions on a device: apply, remove, rule changes, confirmed apply.
 * Each builds a plan, writes the device's record, installs, and commits or
 * rolls back through the one installer (txn/install.h).
 */
#ifndef __QOS_TXN_TXN_H
#define __QOS_TXN_TXN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/dev.h"
#include "model/rule.h"

/*
 * Open @name for a change (QOS_DEV_LOCK is implied): take its lock, then
 * finish what a killed qosctl or an overdue confirmation left on it.
 */
int qos_txn_open(struct qos_dev *dev, const char *name, unsigned int flags, char *err,
		 size_t errlen);

/* Release a device opened with qos_txn_open(); its lock file goes too if
 * the device is left with no qosctl state. */
void qos_txn_close(struct qos_dev *dev);

/*
 * Open @name for reading, without its lock, unless a change on it died or
 * an unconfirmed apply is overdue with nobody left to roll it back: then
 * take the lock and finish that first (qos_txn_open()), so no command
 * reports a state that is about to be undone.
 */
int qos_txn_open_read(struct qos_dev *dev, const char *name, char *err, size_t errlen);

/*
 * For read-only commands: true if @dev has an apply whose confirmation is
 * overdue and whose keeper is gone, so that the caller reopens it with
 * qos_txn_open(), which rolls it back.
 */
bool qos_txn_overdue(const struct qos_dev *dev);

/*
 * Apply @profile at @link_bps, with the link-layer keys @ll (NULL: none)
 * over the profile's, the number of trees @queues (QOS_QUEUES_PROFILE: the
 * profile's), and download shaping at @ingress_bps (0: the profile's
 * ingress-rate, if any), at tcx at @place; with @confirm_secs, roll back unless
 * qos_txn_confirm() comes within that many seconds. On any error the
 * device is left as it was.
 */
struct qos_ll_spec;

/* tcx-place: where the programs go among other tools' at tcx when first
 * attached (Documentation/design.rst, "Attachment"). */
enum qos_tcx_place {
	QOS_TCX_KEEP,		/* not given: the device's, first on a fresh apply */
	QOS_TCX_FIRST,
	QOS_TCX_LAST,
};
/* "first" or "last"; -1 for anything else. */
int qos_tcx_place_parse(const char *s);
/* @place in @next's meta, or with QOS_TCX_KEEP the one @dev has (first). */
struct qos_plan;
void qos_tcx_place_set(const struct qos_dev *dev, struct qos_plan *next,
		       enum qos_tcx_place place);

int qos_txn_apply(struct qos_dev *dev, const char *profile, uint64_t link_bps,
		  uint64_t ingress_bps, const struct qos_ll_spec *ll, uint32_t queues,
		  enum qos_tcx_place place, unsigned int confirm_secs, char *err, size_t errlen);

/* Remove what qosctl installed. With @force, whatever sits at qosctl's
 * slot too, even when the state qosctl would read is broken. */
int qos_txn_remove(struct qos_dev *dev, bool force, char *err, size_t errlen);

/* Make @next the device's rule list (rule add and del). */
int qos_txn_rules(struct qos_dev *dev, struct qos_rules *next, char *err, size_t errlen);

/* End a pending confirmation, keeping what is applied: 1 if one was
 * pending, 0 if none. */
int qos_txn_confirm(struct qos_dev *dev, char *err, size_t errlen);

/* Seconds left of a pending confirmation, or -1. */
long qos_txn_pending(const struct qos_dev *dev);

/* txn/confirm.c: start the keeper that rolls back to @undo at the deadline. */
struct qos_undo;
struct qos_plan;
int qos_confirm_arm(struct qos_dev *dev, struct qos_undo *undo, const struct qos_plan *next,
		    unsigned int secs, char *err, size_t errlen);
/* Signal the keeper of a pending confirmation that it is no longer needed. */
void qos_confirm_release_keeper(pid_t pid, uint64_t start);

#endif /* __QOS_TXN_TXN_H */
