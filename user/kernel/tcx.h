/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tcx (Linux 6.6+): BPF programs at tc ingress and egress without a
 * qdisc, in an ordered list per direction that the kernel versions with
 * a revision. qosctl attaches through the mprog API (BPF_PROG_ATTACH with
 * BPF_TCX_INGRESS/EGRESS), which persists without a link or a pin, and
 * replaces its program in place (BPF_F_REPLACE) against the revision it
 * read. See Documentation/design.rst, "Attachment".
 */
#ifndef __QOS_KERNEL_TCX_H
#define __QOS_KERNEL_TCX_H

#include <stdbool.h>
#include <stdint.h>

#include "../bpf/qos_common.h"

/* The most programs qosctl reads at one tcx direction. */
#define QOS_TCX_MAX	64

struct qos_tcx_list {
	uint32_t ids[QOS_TCX_MAX];	/* first to run first */
	uint32_t n;
	uint64_t revision;
};

/*
 * The programs at tcx @dir of @ifindex. -EOPNOTSUPP when the kernel (or
 * the libbpf this qosctl was built with) has no tcx.
 */
int qos_tcx_query(int ifindex, enum qos_dir dir, struct qos_tcx_list *l);

/* Whether programs can be attached through tcx on @ifindex, and are to
 * be: QOSCTL_ATTACH=clsact in the environment says no. */
bool qos_tcx_usable(int ifindex);

/*
 * Put @prog_fd at tcx @dir of @ifindex: in place of @old_fd if it is not
 * -1, else first (@last false) or last among the programs there; in both
 * cases only if the list is still at @revision (-ESTALE otherwise).
 */
int qos_tcx_attach(int ifindex, enum qos_dir dir, int prog_fd, int old_fd, bool last,
		   uint64_t revision);
/* Take @prog_fd off tcx @dir of @ifindex. */
int qos_tcx_detach(int ifindex, enum qos_dir dir, int prog_fd);

#endif /* __QOS_KERNEL_TCX_H */
