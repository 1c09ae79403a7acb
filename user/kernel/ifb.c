// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The IFB of download shaping, created and deleted through libnl-route
 * (rtnl_link_set_type(link, "ifb")), as iproute2's "ip link add NAME type
 * ifb" does over RTM_NEWLINK.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <netlink/netlink.h>
#include <netlink/route/link.h>

#include "kernel/ifb.h"
#include "kernel/nl.h"

void qos_ifb_name(int dev_ifindex, char name[IF_NAMESIZE])
{
	snprintf(name, IF_NAMESIZE, "qifb%d", dev_ifindex);
}

/*
 * Before Linux 6.4, bpf_redirect() did not mark the packet as redirected,
 * and ifb_xmit() drops every packet not so marked: on such a kernel the
 * redirect "works" and the IFB silently eats everything that arrives.
 * The fix is "bpf: Set skb redirect and from_ingress info in
 * __bpf_tx_skb" (Daniel Borkmann, bpf-next, April 2023; in 6.4). Nothing
 * user space can probe without sending traffic shows it, so the release
 * decides; a vendor kernel with it backported passes QOSCTL_IFB_REDIRECT=1.
 */
int qos_ifb_redirect_check(char *err, size_t errlen)
{
	const char *force = getenv("QOSCTL_IFB_REDIRECT");
	unsigned int major = 0, minor = 0;
	struct utsname u;

	if (force && !strcmp(force, "1"))
		return 0;
	if (uname(&u) || sscanf(u.release, "%u.%u", &major, &minor) != 2) {
		snprintf(err, errlen, "ingress-rate: cannot read the kernel's release");
		return -EIO;
	}
	if (major > 6 || (major == 6 && minor >= 4))
		return 0;
	snprintf(err, errlen,
		 "ingress-rate: kernel %s drops what BPF redirects to an IFB (fixed in Linux "
		 "6.4); download shaping needs 6.4 or later", u.release);
	return -EOPNOTSUPP;
}

/* The link named as the IFB of @dev_ifindex, or NULL. */
static int get_link(struct nl_sock *sk, int dev_ifindex, int ifindex, struct rtnl_link **link)
{
	char name[IF_NAMESIZE];

	qos_ifb_name(dev_ifindex, name);
	return qos_nl_errno(rtnl_link_get_kernel(sk, ifindex, ifindex ? NULL : name, link));
}

static bool link_is_ifb(struct rtnl_link *link, int dev_ifindex)
{
	char name[IF_NAMESIZE];

	qos_ifb_name(dev_ifindex, name);
	return !strcmp(rtnl_link_get_type(link) ?: "", "ifb") &&
	       !strcmp(rtnl_link_get_name(link) ?: "", name);
}

int qos_ifb_find(int dev_ifindex, int *ifindex, bool *is_ifb)
{
	struct rtnl_link *link = NULL;
	struct nl_sock *sk = NULL;
	int ret;

	ret = qos_nl_open(&sk);
	ret = ret ?: get_link(sk, dev_ifindex, 0, &link);
	if (!ret) {
		*ifindex = rtnl_link_get_ifindex(link);
		*is_ifb = link_is_ifb(link, dev_ifindex);
	}
	rtnl_link_put(link);
	qos_nl_close(sk);
	return ret == -ENODEV ? -ENOENT : ret;
}

int qos_ifb_create(int dev_ifindex, int *ifindex)
{
	struct rtnl_link *link = rtnl_link_alloc(), *got = NULL;
	struct nl_sock *sk = NULL;
	char name[IF_NAMESIZE];
	int ret;

	if (!link)
		return -ENOMEM;
	qos_ifb_name(dev_ifindex, name);
	rtnl_link_set_name(link, name);
	/* Up from its creation: a down IFB's qdisc is noop, which drops. */
	rtnl_link_set_flags(link, IFF_UP);
	ret = qos_nl_errno(rtnl_link_set_type(link, "ifb"));
	ret = ret ?: qos_nl_open(&sk);
	ret = ret ?: qos_nl_errno(rtnl_link_add(sk, link, NLM_F_CREATE | NLM_F_EXCL));
	ret = ret ?: get_link(sk, dev_ifindex, 0, &got);
	if (!ret)
		*ifindex = rtnl_link_get_ifindex(got);
	rtnl_link_put(got);
	rtnl_link_put(link);
	qos_nl_close(sk);
	return ret;
}

int qos_ifb_delete(int dev_ifindex, int ifindex)
{
	struct rtnl_link *link = NULL;
	struct nl_sock *sk = NULL;
	int ret;

	ret = qos_nl_open(&sk);
	ret = ret ?: get_link(sk, dev_ifindex, ifindex, &link);
	/* Another device took the index: not ours to delete. */
	if (!ret && link_is_ifb(link, dev_ifindex))
		ret = qos_nl_errno(rtnl_link_delete(sk, link));
	rtnl_link_put(link);
	qos_nl_close(sk);
	return ret == -ENODEV || ret == -ENOENT ? 0 : ret;
}
