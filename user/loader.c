// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * BPF side of qosctl: load the programs from the embedded skeleton, pin the
 * maps per interface, attach to clsact through libbpf's bpf_tc_* API (which
 * Debian 12's libbpf 1.1 has; tcx links need libbpf 1.3).
 */
#include <dirent.h>
#include <errno.h>
#include <linux/magic.h>
#include <linux/pkt_cls.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <netlink/netlink.h>
#include <netlink/route/classifier.h>
#include <netlink/route/tc.h>

#include "loader.h"
#include "qdisc.h"
#include "qos.skel.h"
#include "util.h"

struct qos_bpf {
	struct qos *skel;
};

int qos_pin_dir(const char *ifname, char *buf, size_t len)
{
	if ((size_t)snprintf(buf, len, "%s/%s", QOS_PIN_ROOT, ifname) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int qos_check_env(char *err, size_t errlen)
{
	struct statfs st;

	if (geteuid() != 0) {
		snprintf(err, errlen, "must be run as root (CAP_NET_ADMIN and CAP_BPF)");
		return -EPERM;
	}
	if (statfs(QOS_BPFFS, &st) || st.f_type != BPF_FS_MAGIC) {
		/* `ip netns exec` mounts a fresh /sys without bpffs. */
		snprintf(err, errlen,
			 "bpffs is not mounted at %s (mount -t bpf bpf %s; in a namespace use "
			 "'nsenter --net=/run/netns/NAME', not 'ip netns exec')",
			 QOS_BPFFS, QOS_BPFFS);
		return -ENOENT;
	}
	if (libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SCHED_CLS, NULL) != 1) {
		snprintf(err, errlen,
			 "the kernel lacks BPF tc programs (CONFIG_BPF_SYSCALL, CONFIG_NET_CLS_BPF)");
		return -EOPNOTSUPP;
	}
	return 0;
}

static int mkdir_p(const char *dir)
{
	char buf[256];
	char *s;

	snprintf(buf, sizeof(buf), "%s", dir);
	for (s = buf + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(buf, 0700) && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(buf, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

int qos_bpf_load(const char *pin_dir, uint32_t rule_entries, struct qos_bpf **objp,
		 bool *created)
{
	struct qos_bpf *obj;
	struct bpf_map *map;
	char path[256];
	int err;

	obj = calloc(1, sizeof(*obj));
	if (!obj)
		return -ENOMEM;
	obj->skel = qos__open();
	if (!obj->skel) {
		err = -errno;
		free(obj);
		return err;
	}

	snprintf(path, sizeof(path), "%s/qos_meta", pin_dir);
	*created = access(path, F_OK) != 0;

	err = bpf_map__set_max_entries(obj->skel->maps.qos_rules, rule_entries);
	err = err ?: bpf_map__set_max_entries(obj->skel->maps.qos_rule_stats, rule_entries);
	err = err ?: mkdir_p(pin_dir);
	if (err)
		goto fail;
	bpf_object__for_each_map(map, obj->skel->obj) {
		snprintf(path, sizeof(path), "%s/%s", pin_dir, bpf_map__name(map));
		err = bpf_map__set_pin_path(map, path);
		if (err)
			goto fail;
	}
	err = qos__load(obj->skel);
	if (err)
		goto fail;
	*objp = obj;
	return 0;
fail:
	if (*created)
		rmdir(pin_dir);
	qos__destroy(obj->skel);
	free(obj);
	return err;
}

void qos_bpf_close(struct qos_bpf *obj)
{
	if (!obj)
		return;
	qos__destroy(obj->skel);
	free(obj);
}

int qos_bpf_maps(struct qos_bpf *obj, struct qos_maps *m)
{
	m->cfg = bpf_map__fd(obj->skel->maps.qos_cfg);
	m->stats = bpf_map__fd(obj->skel->maps.qos_stats);
	m->unparsed = bpf_map__fd(obj->skel->maps.qos_unparsed);
	m->meta = bpf_map__fd(obj->skel->maps.qos_meta);
	return 0;
}

int qos_bpf_map_fd(struct qos_bpf *obj, const char *name)
{
	return bpf_object__find_map_fd_by_name(obj->skel->obj, name);
}

void qos_bpf_unpin(struct qos_bpf *obj, const char *pin_dir)
{
	struct bpf_map *map;

	bpf_object__for_each_map(map, obj->skel->obj)
		bpf_map__unpin(map, NULL);
	rmdir(pin_dir);
}

static void tc_hook(struct bpf_tc_hook *hook, int ifindex, enum qos_dir dir)
{
	memset(hook, 0, sizeof(*hook));
	hook->sz = sizeof(*hook);
	hook->ifindex = ifindex;
	hook->attach_point = dir == QOS_DIR_INGRESS ? BPF_TC_INGRESS : BPF_TC_EGRESS;
}

int qos_bpf_query(int ifindex, enum qos_dir dir, uint32_t *prog_id)
{
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = QOS_TC_HANDLE, .priority = QOS_TC_PRIO);
	struct bpf_tc_hook hook;
	int err;

	tc_hook(&hook, ifindex, dir);
	err = bpf_tc_query(&hook, &opts);
	*prog_id = err ? 0 : opts.prog_id;
	return err == -ENOENT || err == -EINVAL ? 0 : err;
}

int qos_bpf_attach(struct qos_bpf *obj, int ifindex, bool *clsact_created,
		   uint32_t prog_id[QOS_DIR_MAX])
{
	struct bpf_program *progs[QOS_DIR_MAX] = {
		obj->skel->progs.qos_ingress,
		obj->skel->progs.qos_egress,
	};
	struct bpf_tc_hook hook;
	int d, err;

	/* One clsact serves both directions; creating it for ingress is
	 * enough. */
	tc_hook(&hook, ifindex, QOS_DIR_INGRESS);
	hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
	err = bpf_tc_hook_create(&hook);
	if (err && err != -EEXIST)
		return err;
	*clsact_created = !err;

	for (d = 0; d < QOS_DIR_MAX; d++) {
		LIBBPF_OPTS(bpf_tc_opts, opts, .handle = QOS_TC_HANDLE,
			    .priority = QOS_TC_PRIO, .flags = BPF_TC_F_REPLACE,
			    .prog_fd = bpf_program__fd(progs[d]));

		tc_hook(&hook, ifindex, d);
		err = bpf_tc_attach(&hook, &opts);
		if (err)
			return err;
		prog_id[d] = opts.prog_id;
	}
	return 0;
}

/* True if a clsact direction still holds filters other than ours. */
static bool clsact_has_filters(struct nl_sock *sk, int ifindex, uint32_t parent)
{
	struct nl_cache *cache;
	bool busy;

	if (rtnl_cls_alloc_cache(sk, ifindex, parent, &cache))
		return true;
	busy = nl_cache_nitems(cache) > 0;
	nl_cache_free(cache);
	return busy;
}

int qos_bpf_detach(int ifindex, const uint32_t prog_id[QOS_DIR_MAX], bool destroy_clsact)
{
	struct bpf_tc_hook hook;
	struct nl_sock *sk;
	int d, err, ret = 0;

	for (d = 0; d < QOS_DIR_MAX; d++) {
		LIBBPF_OPTS(bpf_tc_opts, opts, .handle = QOS_TC_HANDLE, .priority = QOS_TC_PRIO);
		uint32_t id;

		err = qos_bpf_query(ifindex, d, &id);
		if (err || !id)
			continue;
		if (prog_id && prog_id[d] && prog_id[d] != id) {
			qos_dbg("%s filter runs program %u, not ours (%u): left alone",
				d ? "egress" : "ingress", id, prog_id[d]);
			continue;
		}
		tc_hook(&hook, ifindex, d);
		err = bpf_tc_detach(&hook, &opts);
		if (err && err != -ENOENT && !ret)
			ret = err;
	}
	if (!destroy_clsact || ret)
		return ret;

	if (qos_nl_open(&sk))
		return ret;
	if (!clsact_has_filters(sk, ifindex, TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS)) &&
	    !clsact_has_filters(sk, ifindex, TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS))) {
		tc_hook(&hook, ifindex, QOS_DIR_INGRESS);
		hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		err = bpf_tc_hook_destroy(&hook);
		if (err && err != -ENOENT && err != -EINVAL)
			ret = err;
	}
	qos_nl_close(sk);
	return ret;
}

int qos_maps_open(const char *ifname, struct qos_maps *m)
{
	static const char *const names[] = { "qos_cfg", "qos_stats", "qos_unparsed", "qos_meta" };
	int *fds[] = { &m->cfg, &m->stats, &m->unparsed, &m->meta };
	char dir[200], path[256];
	size_t i;
	int err;

	for (i = 0; i < ARRAY_SIZE(fds); i++)
		*fds[i] = -1;
	err = qos_pin_dir(ifname, dir, sizeof(dir));
	if (err)
		return err;
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		*fds[i] = bpf_obj_get(path);
		if (*fds[i] < 0) {
			err = -errno;
			qos_maps_close(m);
			return err;
		}
	}
	return 0;
}

int qos_maps_open_applied(const char *ifname, struct qos_maps *m, char *err, size_t errlen)
{
	int ret = qos_check_env(err, errlen);

	if (ret)
		return ret;
	if (qos_maps_open(ifname, m)) {
		snprintf(err, errlen, "dev %s: no qosctl profile applied", ifname);
		return -ENOENT;
	}
	return 0;
}

void qos_maps_close(struct qos_maps *m)
{
	int *fds[] = { &m->cfg, &m->stats, &m->unparsed, &m->meta };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fds); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

int qos_meta_read(int fd, struct qos_meta *meta)
{
	uint32_t zero = 0;

	return bpf_map_lookup_elem(fd, &zero, meta) ? -errno : 0;
}

int qos_meta_write(int fd, const struct qos_meta *meta)
{
	uint32_t zero = 0;

	return bpf_map_update_elem(fd, &zero, meta, BPF_ANY) ? -errno : 0;
}

int qos_cfg_read(int fd, struct qos_cfg *cfg)
{
	uint32_t zero = 0;

	return bpf_map_lookup_elem(fd, &zero, cfg) ? -errno : 0;
}

int qos_cfg_write(int fd, const struct qos_cfg *cfg)
{
	uint32_t zero = 0;

	return bpf_map_update_elem(fd, &zero, cfg, BPF_ANY) ? -errno : 0;
}

int qos_ctr_read(int fd, uint32_t key, struct qos_ctr *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	struct qos_ctr *vals;
	int i;

	if (ncpu < 0)
		return ncpu;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	memset(sum, 0, sizeof(*sum));
	if (bpf_map_lookup_elem(fd, &key, vals)) {
		int err = -errno;

		free(vals);
		return err;
	}
	for (i = 0; i < ncpu; i++) {
		sum->packets += vals[i].packets;
		sum->bytes += vals[i].bytes;
	}
	free(vals);
	return 0;
}

/* Everything under the pin directory is ours: remove it all, so maps added
 * later need no list kept here. */
int qos_pins_remove(const char *ifname)
{
	char dir[200], path[512];
	struct dirent *de;
	DIR *d;
	int err;

	err = qos_pin_dir(ifname, dir, sizeof(dir));
	if (err)
		return err;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (unlink(path) && errno != ENOENT) {
			err = -errno;
			break;
		}
	}
	closedir(d);
	if (!err && rmdir(dir) && errno != ENOENT)
		err = -errno;
	return err;
}

int qos_prog_fd_by_id(uint32_t id)
{
	int fd = bpf_prog_get_fd_by_id(id);

	return fd < 0 ? -errno : fd;
}

int qos_attach_fd(int ifindex, enum qos_dir dir, int prog_fd)
{
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = QOS_TC_HANDLE, .priority = QOS_TC_PRIO,
		    .flags = BPF_TC_F_REPLACE, .prog_fd = prog_fd);
	struct bpf_tc_hook hook;

	tc_hook(&hook, ifindex, dir);
	return bpf_tc_attach(&hook, &opts);
}
