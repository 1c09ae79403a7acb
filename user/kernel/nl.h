/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The rtnetlink socket (libnl-route), its errors, and link attributes. */
#ifndef __QOS_KERNEL_NL_H
#define __QOS_KERNEL_NL_H

#include <stdint.h>

struct nl_sock;

int qos_nl_open(struct nl_sock **sk);
/* A libnl error as a negative errno. */
int qos_nl_errno(int nlerr);
void qos_nl_close(struct nl_sock *sk);

/* The MTU of @ifindex, on a netlink socket of its own. */
int qos_link_mtu(int ifindex, uint32_t *mtu);
/* The number of TX queues of @ifindex (an mq root has a class for each). */
int qos_link_txqs(int ifindex, uint32_t *txqs);

#endif /* __QOS_KERNEL_NL_H */
