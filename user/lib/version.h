/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The release, for `qosctl --version` and the qosctl_info metric. A build
 * may set it with -DQOSCTL_VERSION=... (a distribution package does).
 */
#ifndef __QOS_LIB_VERSION_H
#define __QOS_LIB_VERSION_H

#ifndef QOSCTL_VERSION
#define QOSCTL_VERSION "0.2"
#endif

#endif /* __QOS_LIB_VERSION_H */
