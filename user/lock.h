/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef __QOS_LOCK_H
#define __QOS_LOCK_H

#include <stddef.h>

/* Per-interface run-time files: the lock, a pending confirmation. */
#define QOS_RUN_DIR	"/run/qosctl"

/* Path of @ifname's file with @suffix under QOS_RUN_DIR. */
int qos_run_path(const char *ifname, const char *suffix, char *buf, size_t len);

/*
 * Serialize every qosctl process that changes @ifname: an exclusive flock
 * on QOS_RUN_DIR/IFACE.lock, waited for. Returns the descriptor holding
 * the lock (close it, or qos_unlock_dev(), to release) or a negative
 * errno with @err set.
 */
int qos_lock_dev(const char *ifname, char *err, size_t errlen);
void qos_unlock_dev(int fd);

/*
 * Release the lock and remove its file, for a command that left @ifname
 * with no qosctl state (remove): interfaces come and go, their lock files
 * should not pile up. Safe against waiters: see qos_lock_dev().
 */
void qos_unlock_dev_remove(int fd, const char *ifname);

#endif /* __QOS_LOCK_H */
