// SPDX-License-Identifier: LGPL-2.1-or-later
/* The rtnetlink socket every qdisc, class and link request goes through. */
#include <errno.h>

#include <netlink/netlink.h>
#include <netlink/route/link.h>

#include "kernel/nl.h"

int qos_nl_errno(int nlerr)
{
	switch (-nlerr) {
	case NLE_EXIST:
		return -EEXIST;
	case NLE_OBJ_NOTFOUND:
		return -ENOENT;
	case NLE_PERM:
		return -EPERM;
	case NLE_NOMEM:
		return -ENOMEM;
	case NLE_OPNOTSUPP:
		return -EOPNOTSUPP;
	case NLE_NODEV:
		return -ENODEV;
	case NLE_BUSY:
		return -EBUSY;
	case NLE_INVAL:
	case NLE_RANGE:
		return -EINVAL;
	default:
		return nlerr < 0 ? -EIO : 0;
	}
}

int qos_nl_open(struct nl_sock **skp)
{
	struct nl_sock *sk = nl_socket_alloc();
	int err;

	if (!sk)
		return -ENOMEM;
	err = nl_connect(sk, NETLINK_ROUTE);
	if (err) {
		nl_socket_free(sk);
		return qos_nl_errno(err);
	}
	*skp = sk;
	return 0;
}

void qos_nl_close(struct nl_sock *sk)
{
	if (sk)
		nl_socket_free(sk);
}

/* One attribute of link @ifindex, on a netlink socket of its own. */
static int link_attr(int ifindex, unsigned int (*get)(struct rtnl_link *), uint32_t *v)
{
	struct rtnl_link *link = NULL;
	struct nl_sock *sk = NULL;
	int ret;

	ret = qos_nl_open(&sk);
	if (!ret)
		ret = qos_nl_errno(rtnl_link_get_kernel(sk, ifindex, NULL, &link));
	if (!ret)
		*v = get(link);
	rtnl_link_put(link);
	qos_nl_close(sk);
	return ret;
}

int qos_link_mtu(int ifindex, uint32_t *mtu)
{
	return link_attr(ifindex, rtnl_link_get_mtu, mtu);
}

int qos_link_txqs(int ifindex, uint32_t *txqs)
{
	return link_attr(ifindex, rtnl_link_get_num_tx_queues, txqs);
}
