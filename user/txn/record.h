/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The transaction record of a device, in QOS_RUN_DIR: the state before a
 * change, kept while the change is under way (so a killed qosctl is rolled
 * back by the next command) and while an apply waits for confirmation (so
 * the rollback happens even if the process waiting for it dies).
 */
#ifndef __QOS_TXN_RECORD_H
#define __QOS_TXN_RECORD_H

#include <stdint.h>
#include <sys/types.h>

#include "txn/plan.h"

enum qos_rec_state {
	QOS_REC_APPLYING = 1,	/* a change is under way, or died */
	QOS_REC_CONFIRM,	/* applied, rolled back at the deadline */
};

struct qos_rec {
	enum qos_rec_state state;
	uint64_t deadline_ns;		/* CLOCK_BOOTTIME */
	pid_t keeper;			/* the process that rolls back on time */
	uint64_t keeper_start;		/* its start time: the pid alone may be reused */
	struct qos_plan prev;		/* the state to go back to */
	struct qos_plan next;		/* what was being installed (no rules) */
};

int qos_rec_write(const struct qos_dev *dev, const struct qos_rec *rec);
/* 0 with @rec filled, -ENOENT if there is none, -EINVAL if unreadable
 * (malformed, of another build, or longer than qos_rec_max_len()). */
int qos_rec_read(const struct qos_dev *dev, struct qos_rec *rec);
/* The file's bytes, malloc()ed in *@buf, and back: -EINVAL for anything
 * qos_rec_encode() of this build did not make. */
int qos_rec_encode(const struct qos_rec *rec, void **buf, size_t *len);
int qos_rec_decode(const void *buf, size_t len, struct qos_rec *rec);
/* The longest record: two plans of QOS_RULES_MAX rules at most. */
size_t qos_rec_max_len(void);
int qos_rec_remove(const struct qos_dev *dev);
void qos_rec_free(struct qos_rec *rec);

/* Start time of process @pid (clock ticks since boot), 0 if it is gone. */
uint64_t qos_proc_start(pid_t pid);
/* True if @pid still is the process that started at @start. */
bool qos_proc_alive(pid_t pid, uint64_t start);

#endif /* __QOS_TXN_RECORD_H */
