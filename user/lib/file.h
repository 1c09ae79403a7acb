/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Whole files through a directory fd, and the network namespace's cookie. */
#ifndef __QOS_LIB_FILE_H
#define __QOS_LIB_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The cookie of this process's network namespace. */
int qos_netns_cookie(uint64_t *cookie);

/*
 * Open the directory @path, creating it 0700 if missing (not its parents),
 * and refuse it if it is a symlink, not a directory, not owned by our
 * euid, or writable by group or others; one of ours readable by others is
 * made 0700. Returns the directory fd, or -errno with @err naming @path.
 */
int qos_private_dir_open(const char *path, char *err, size_t errlen);

/* Replace @name in @dirfd with @buf atomically (a temporary file, renamed),
 * never through a symlink. -errno. */
int qos_file_replace(int dirfd, const char *name, const void *buf, size_t len, mode_t mode);

/* The whole of the regular file @fd, in a malloc()ed buffer, one byte
 * more than its length (a terminating 0 for text). -errno; -EFBIG when
 * it is longer than @max: nothing is allocated or read. */
int qos_file_read_fd(int fd, void **bufp, size_t *lenp, size_t max);

#endif /* __QOS_LIB_FILE_H */
