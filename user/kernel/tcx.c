// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tcx through libbpf's bpf_prog_attach_opts() and bpf_prog_query_opts(),
 * whose relative_fd, expected_revision and revision fields came with
 * libbpf 1.3: the Makefile probes for them (QOS_HAVE_LIBBPF_TCX in
 * qos_features.h), as xdp-tools' configure probes libbpf's functions, and
 * a qosctl built without them uses clsact alone. The attach types and
 * flags are the kernel's ABI, spelled out for uapi headers older than 6.6
 * (Debian 12's linux-libc-dev is 6.1).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "kernel/tcx.h"
#include "qos_features.h"

#define QOS_BPF_TCX_INGRESS	46
#define QOS_BPF_TCX_EGRESS	47
#ifndef BPF_F_BEFORE
#define BPF_F_BEFORE		(1U << 3)
#define BPF_F_AFTER		(1U << 4)
#endif

#ifdef QOS_HAVE_LIBBPF_TCX
static enum bpf_attach_type tcx_type(enum qos_dir dir)
{
	return dir == QOS_DIR_INGRESS ? QOS_BPF_TCX_INGRESS : QOS_BPF_TCX_EGRESS;
}

int qos_tcx_query(int ifindex, enum qos_dir dir, struct qos_tcx_list *l)
{
	LIBBPF_OPTS(bpf_prog_query_opts, opts, .prog_ids = l->ids, .count = QOS_TCX_MAX);

	memset(l, 0, sizeof(*l));
	/* A kernel before 6.6 knows no such attach type. */
	if (bpf_prog_query_opts(ifindex, tcx_type(dir), &opts))
		return errno == EINVAL ? -EOPNOTSUPP : -errno;
	l->n = opts.count < QOS_TCX_MAX ? opts.count : QOS_TCX_MAX;
	l->revision = opts.revision;
	return 0;
}

int qos_tcx_attach(int ifindex, enum qos_dir dir, int prog_fd, int old_fd, bool last,
		   uint64_t revision)
{
	LIBBPF_OPTS(bpf_prog_attach_opts, opts, .expected_revision = revision);

	if (old_fd >= 0) {
		opts.flags = BPF_F_REPLACE;
		opts.replace_prog_fd = old_fd;
	} else {
		/* No relative program: before (after) all of them. */
		opts.flags = last ? BPF_F_AFTER : BPF_F_BEFORE;
	}
	return bpf_prog_attach_opts(prog_fd, ifindex, tcx_type(dir), &opts) ? -errno : 0;
}

int qos_tcx_detach(int ifindex, enum qos_dir dir, int prog_fd)
{
	LIBBPF_OPTS(bpf_prog_detach_opts, opts);

	return bpf_prog_detach_opts(prog_fd, ifindex, tcx_type(dir), &opts) ? -errno : 0;
}
#else
int qos_tcx_query(int ifindex, enum qos_dir dir, struct qos_tcx_list *l)
{
	memset(l, 0, sizeof(*l));
	return -EOPNOTSUPP;
}

int qos_tcx_attach(int ifindex, enum qos_dir dir, int prog_fd, int old_fd, bool last,
		   uint64_t revision)
{
	return -EOPNOTSUPP;
}

int qos_tcx_detach(int ifindex, enum qos_dir dir, int prog_fd)
{
	return -EOPNOTSUPP;
}
#endif

bool qos_tcx_usable(int ifindex)
{
	const char *mode = getenv("QOSCTL_ATTACH");
	struct qos_tcx_list l;

	if (mode && !strcmp(mode, "clsact"))
		return false;
	return !qos_tcx_query(ifindex, QOS_DIR_EGRESS, &l);
}
