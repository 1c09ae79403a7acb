/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Giving up privilege once the sockets that needed it are open.
 */
#ifndef __QOS_PRIVS_H
#define __QOS_PRIVS_H

#include <stddef.h>

/*
 * Started as root: become @user (its uid and gid, no supplementary
 * group), for good. Then, root or not, drop every capability (effective,
 * permitted, inheritable, ambient) and set no_new_privs. 0, or -errno
 * with @err saying why. Capabilities are per thread: call it before any
 * thread is started.
 */
int qos_drop_privs(const char *user, char *err, size_t errlen);

#endif /* __QOS_PRIVS_H */
