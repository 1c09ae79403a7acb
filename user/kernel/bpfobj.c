// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Programs and maps of a device. The embedded skeleton is loaded for a
 * fresh apply (or when qosctl itself or the rule capacity changed); every
 * other command finds the programs at qosctl's tc slot and the maps through
 * the programs' map ids, so the kernel is the only record of what runs and
 * nothing depends on bpffs (see Documentation/design.rst, "Device state").
 *
 * Attachment is tcx where the kernel and libbpf have it (kernel/tcx.c),
 * else clsact through libbpf's bpf_tc_* API, which Debian 12's libbpf 1.1
 * has; a device keeps the way its programs were first attached.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/pkt_cls.h>
#include <net/if.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <netlink/netlink.h>
#include <netlink/route/classifier.h>

#include "kernel/bpfobj.h"
#include "kernel/gp.h"
#include "kernel/nl.h"
#include "kernel/tcx.h"
#include "lib/util.h"
#include "qos.skel.h"

static const char *const map_names[QOS_MAP_MAX] = {
	[QOS_MAP_CFG] = "qos_cfg",
	[QOS_MAP_STATS] = "qos_stats",
	[QOS_MAP_UNPARSED] = "qos_unparsed",
	[QOS_MAP_RULES] = "qos_rules",
	[QOS_MAP_RULE_STATS] = "qos_rule_stats",
	[QOS_MAP_POLICERS] = "qos_policers",
	[QOS_MAP_POLICE_STATS] = "qos_police_stats",
	[QOS_MAP_RULES4] = "qos_rules4",
	[QOS_MAP_RULE_POLS] = "qos_rule_pols",
	[QOS_MAP_META] = "qos_meta",
	[QOS_MAP_SLOTS] = "qos_cfg_slots",
	[QOS_MAP_GEN] = "qos_cfg_gen",
};

static const char *const prog_names[QOS_DIR_MAX] = { "qos_ingress", "qos_egress" };

void qos_progs_init(struct qos_progs *p)
{
	int i;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < QOS_DIR_MAX; i++)
		p->prog[i] = -1;
	for (i = 0; i < QOS_MAP_MAX; i++)
		p->map[i] = -1;
}

void qos_progs_close(struct qos_progs *p)
{
	int i;

	for (i = 0; i < QOS_DIR_MAX; i++)
		if (p->prog[i] >= 0)
			close(p->prog[i]);
	for (i = 0; i < QOS_MAP_MAX; i++)
		if (p->map[i] >= 0)
			close(p->map[i]);
	qos_progs_init(p);
}

static int dup_fd(int fd)
{
	int n;

	if (fd < 0)
		return -1;
	n = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	return n < 0 ? -errno : n;
}

/* Close what a failed fill of @p opened: failed slots hold an error. */
static void progs_abandon(struct qos_progs *p)
{
	int i;

	for (i = 0; i < QOS_DIR_MAX; i++)
		p->prog[i] = p->prog[i] < 0 ? -1 : p->prog[i];
	for (i = 0; i < QOS_MAP_MAX; i++)
		p->map[i] = p->map[i] < 0 ? -1 : p->map[i];
	qos_progs_close(p);
}

int qos_progs_dup(const struct qos_progs *src, struct qos_progs *dst)
{
	int i, ret = 0;

	qos_progs_init(dst);
	memcpy(dst->prog_id, src->prog_id, sizeof(dst->prog_id));
	dst->rule_entries = src->rule_entries;
	dst->attach = src->attach;
	memcpy(dst->tcx_pos, src->tcx_pos, sizeof(dst->tcx_pos));
	memcpy(dst->tcx_n, src->tcx_n, sizeof(dst->tcx_n));
	for (i = 0; i < QOS_DIR_MAX && !ret; i++)
		if ((dst->prog[i] = dup_fd(src->prog[i])) < -1)
			ret = dst->prog[i];
	for (i = 0; i < QOS_MAP_MAX && !ret; i++)
		if ((dst->map[i] = dup_fd(src->map[i])) < -1)
			ret = dst->map[i];
	if (ret)
		progs_abandon(dst);
	return ret;
}

int qos_check_env(char *err, size_t errlen)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd, ret;

	if (geteuid() != 0) {
		snprintf(err, errlen, "must be run as root (CAP_NET_ADMIN and CAP_BPF)");
		return -EPERM;
	}
	/* Load `return TC_ACT_OK` rather than ask libbpf's probe, which
	 * reads a refusal as "not supported": EPERM (a security module,
	 * lockdown, root without CAP_BPF/CAP_SYS_ADMIN in a container) is
	 * not a missing kernel feature and must not be reported as one. */
	fd = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, NULL, "GPL", insns, ARRAY_SIZE(insns), NULL);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	ret = -errno;
	if (ret == -EINVAL || ret == -ENOSYS) {
		snprintf(err, errlen,
			 "the kernel lacks BPF tc programs (CONFIG_BPF_SYSCALL, CONFIG_NET_CLS_BPF)");
		return -EOPNOTSUPP;
	}
	snprintf(err, errlen, "cannot load a BPF program: %s", strerror(-ret));
	return ret;
}

uint64_t qos_obj_hash(void)
{
	static uint64_t h;
	const unsigned char *b;
	size_t i, n;

	if (h)
		return h;
	/* FNV-1a: a fingerprint, not a defence against anyone. */
	b = qos__elf_bytes(&n);
	h = 0xcbf29ce484222325ULL;
	for (i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

/* The skeleton's map @idx; NULL for QOS_MAP_CFG, which only programs of
 * an earlier build have. */
static struct bpf_map *skel_map(struct qos *skel, int idx)
{
	struct bpf_map *maps[QOS_MAP_MAX] = {
		NULL, skel->maps.qos_stats, skel->maps.qos_unparsed,
		skel->maps.qos_rules, skel->maps.qos_rule_stats, skel->maps.qos_policers,
		skel->maps.qos_police_stats, skel->maps.qos_rules4, skel->maps.qos_rule_pols,
		skel->maps.qos_meta, skel->maps.qos_cfg_slots, skel->maps.qos_cfg_gen,
	};

	return maps[idx];
}

/*
 * Rows of qos_rule_stats: one per CPU id the kernel may run a program on.
 * The program indexes a row by bpf_get_smp_processor_id(), so a possible
 * mask with holes ("0-3,8-11") needs rows up to its last id, more than
 * libbpf_num_possible_cpus(), which counts the CPUs.
 */
int qos_cpu_rows(void)
{
	static int rows;
	char buf[4096];
	FILE *f;

	if (rows > 0)
		return rows;
	f = fopen("/sys/devices/system/cpu/possible", "re");
	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EINVAL;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	rows = qos_cpulist_rows(buf);
	return rows;
}

int qos_rule_maps_size(struct qos *skel, uint32_t rule_entries)
{
	int ncpu = qos_cpu_rows();

	if (ncpu < 0)
		return ncpu;
	/* A row of hit counters per possible CPU id (bpf/lib/maps.h). */
	if ((uint64_t)ncpu * rule_entries > UINT32_MAX)
		return -E2BIG;
	skel->rodata->qos_rule_row = rule_entries;
	/* Both families' tables can each take all the entries: the limit
	 * is on their sum (qos_rules_validate()). */
	return bpf_map__set_max_entries(skel->maps.qos_rules, rule_entries) ?:
	       bpf_map__set_max_entries(skel->maps.qos_rules4, rule_entries) ?:
	       bpf_map__set_max_entries(skel->maps.qos_rule_stats, ncpu * rule_entries) ?:
	       bpf_map__set_max_entries(skel->maps.qos_rule_pols, rule_entries);
}

static int prog_id_of(int fd, uint32_t *id)
{
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	*id = info.id;
	return 0;
}

/* qosctl's program at one direction of a device: its id (0: none), how
 * it is attached, and at tcx its place and the list's revision. */
struct slot {
	uint32_t id;
	enum qos_attach how;
	uint32_t pos, n;
	uint64_t revision;
};

static enum qos_attach attach_how(int ifindex, struct slot s[QOS_DIR_MAX]);
static int tcx_attach_dir(int ifindex, enum qos_dir dir, int prog_fd, struct slot *s, bool last);

/* The attach at load both loads of qos_progs_load() share. */
struct early {
	struct qos_attach_early *ea;
	struct slot s[QOS_DIR_MAX];
	bool wait_egress;		/* ingress attaches after egress */
	bool egress_tried;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

/* One program loaded from its own instance of the skeleton, in a thread of
 * its own when both are loaded: the verifier runs for each in parallel. */
struct prog_load {
	enum qos_dir dir;
	const struct qos_progs *share;
	unsigned int share_mask;
	uint32_t rule_entries;
	struct early *early;		/* attach it once loaded (NULL: no) */
	struct qos *skel;
	uint64_t ns;			/* wall time of the load */
	int ret;
};

static struct bpf_program *skel_prog(struct qos *skel, enum qos_dir dir)
{
	return dir == QOS_DIR_INGRESS ? skel->progs.qos_ingress : skel->progs.qos_egress;
}

/*
 * The program @l loaded, attached at tcx at once: its attach's grace
 * period (tcx_entry_sync()) then passes while the other program is still
 * being verified. The egress program goes first, so that what runs is
 * never an ingress program alone (qos_progs_find()); the ingress one
 * waits for it and is left for the commit if egress is not attached. A
 * program attached so reads generation 0 until the configuration's first
 * flip and passes every packet on untouched.
 */
static void early_attach(struct prog_load *l)
{
	struct early *e = l->early;
	bool go = !l->ret;
	int ret;

	if (l->dir == QOS_DIR_INGRESS && e->wait_egress) {
		pthread_mutex_lock(&e->lock);
		while (!e->egress_tried)
			pthread_cond_wait(&e->cond, &e->lock);
		go = go && e->ea->attached[QOS_DIR_EGRESS];
		pthread_mutex_unlock(&e->lock);
	}
	if (go) {
		ret = tcx_attach_dir(e->ea->ifindex, l->dir,
				     bpf_program__fd(skel_prog(l->skel, l->dir)), &e->s[l->dir],
				     e->ea->last);
		e->ea->attached[l->dir] = !ret;
		if (ret)
			qos_dbg("%s attach at load: %s; left for the commit", prog_names[l->dir],
				strerror(-ret));
	}
	if (l->dir == QOS_DIR_EGRESS) {
		pthread_mutex_lock(&e->lock);
		e->egress_tried = true;
		pthread_cond_broadcast(&e->cond);
		pthread_mutex_unlock(&e->lock);
	}
}

/* Open the skeleton, share maps, load @l->dir's program (none if
 * QOS_DIR_MAX: the maps alone), bind every map to it and, with @l->early,
 * attach it. */
static void *prog_load_run(void *arg)
{
	struct prog_load *l = arg;
	uint64_t t0 = qos_boottime_ns();
	int d, i, ret;

	l->skel = qos__open();
	if (!l->skel) {
		l->ret = -errno;
		return NULL;
	}
	ret = qos_rule_maps_size(l->skel, l->rule_entries);
	for (d = 0; d < QOS_DIR_MAX && !ret; d++)
		ret = bpf_program__set_autoload(skel_prog(l->skel, d), d == (int)l->dir);
	for (i = 0; i < QOS_MAP_MAX && !ret; i++)
		if (l->share && (l->share_mask & 1U << i) && l->share->map[i] >= 0 &&
		    skel_map(l->skel, i))
			ret = bpf_map__reuse_fd(skel_map(l->skel, i), l->share->map[i]);
	l->ret = ret ?: qos__load(l->skel);
	l->ns = qos_boottime_ns() - t0;
	if (l->dir == QOS_DIR_MAX)
		return NULL;
	/* Every map, so that one program alone holds the state. */
	for (i = 0; i < QOS_MAP_MAX && !l->ret; i++)
		if (l->share->map[i] >= 0 &&
		    bpf_prog_bind_map(bpf_program__fd(skel_prog(l->skel, l->dir)),
				      l->share->map[i], NULL))
			l->ret = -errno;
	if (l->early)
		early_attach(l);
	return NULL;
}

static void prog_load_log(const struct prog_load *l, int fd)
{
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info);

	if (!qos_verbose || bpf_obj_get_info_by_fd(fd, &info, &len))
		return;
	qos_dbg("loaded %s: %u instructions verified, %.1f ms", prog_names[l->dir],
		info.verified_insns, l->ns / 1e6);
}

int qos_progs_load(const struct qos_progs *share, unsigned int share_mask, uint32_t rule_entries,
		   unsigned int dirs, struct qos_attach_early *ea, struct qos_progs *out)
{
	struct prog_load l[QOS_DIR_MAX] = {}, maps = {
		.dir = QOS_DIR_MAX, .share = share, .share_mask = share_mask,
		.rule_entries = rule_entries,
	};
	struct early early = { .ea = ea, .lock = PTHREAD_MUTEX_INITIALIZER,
			       .cond = PTHREAD_COND_INITIALIZER };
	pthread_t thr[QOS_DIR_MAX];
	bool started[QOS_DIR_MAX] = {};
	int d, i, ret;

	qos_progs_init(out);
	/* Attach at load only where nothing of qosctl's runs, at tcx, and
	 * with the egress program among those loaded. */
	if (ea) {
		memset(ea->attached, 0, sizeof(ea->attached));
		if (!(dirs & 1U << QOS_DIR_EGRESS) ||
		    attach_how(ea->ifindex, early.s) != QOS_ATTACH_TCX ||
		    early.s[QOS_DIR_INGRESS].id || early.s[QOS_DIR_EGRESS].id)
			ea = NULL;
		early.wait_egress = dirs & 1U << QOS_DIR_INGRESS;
	}
	/* The maps first, once; then each program shares every one of them. */
	prog_load_run(&maps);
	ret = maps.ret;
	for (i = 0; i < QOS_MAP_MAX && !ret; i++) {
		if (!skel_map(maps.skel, i))
			continue;
		out->map[i] = dup_fd(bpf_map__fd(skel_map(maps.skel, i)));
		if (out->map[i] < 0)
			ret = out->map[i];
	}
	for (d = 0; d < QOS_DIR_MAX && !ret; d++) {
		if (!(dirs & 1U << d))
			continue;
		l[d] = (struct prog_load){ .dir = d, .share = out, .share_mask = ~0U,
					   .rule_entries = rule_entries,
					   .early = ea ? &early : NULL };
		/* The last one runs here; a failed thread start, here too,
		 * and then the ingress program is attached at the commit: it
		 * cannot wait for the egress one here. */
		started[d] = (dirs >> (d + 1)) &&
			     !pthread_create(&thr[d], NULL, prog_load_run, &l[d]);
		if (!started[d] && d == QOS_DIR_INGRESS && (dirs >> (d + 1)))
			l[d].early = NULL;
		if (!started[d])
			prog_load_run(&l[d]);
	}
	for (d = 0; d < QOS_DIR_MAX; d++) {
		if (started[d])
			pthread_join(thr[d], NULL);
		if (!(dirs & 1U << d) || ret)
			continue;
		ret = l[d].ret;
		if (!ret) {
			out->prog[d] = dup_fd(bpf_program__fd(skel_prog(l[d].skel, d)));
			ret = out->prog[d] < 0 ? out->prog[d] : prog_id_of(out->prog[d], &out->prog_id[d]);
		}
		if (!ret)
			prog_load_log(&l[d], out->prog[d]);
	}
	out->rule_entries = rule_entries;
	if (ret)
		progs_abandon(out);
	for (d = 0; d < QOS_DIR_MAX; d++)
		qos__destroy(l[d].skel);
	qos__destroy(maps.skel);
	return ret;
}

static void tc_hook(struct bpf_tc_hook *hook, int ifindex, enum qos_dir dir)
{
	memset(hook, 0, sizeof(*hook));
	hook->sz = sizeof(*hook);
	hook->ifindex = ifindex;
	hook->attach_point = dir == QOS_DIR_INGRESS ? BPF_TC_INGRESS : BPF_TC_EGRESS;
}

static int clsact_query(int ifindex, enum qos_dir dir, uint32_t *prog_id)
{
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = QOS_TC_HANDLE, .priority = QOS_TC_PRIO);
	struct bpf_tc_hook hook;
	int err;

	tc_hook(&hook, ifindex, dir);
	err = bpf_tc_query(&hook, &opts);
	*prog_id = err ? 0 : opts.prog_id;
	return err == -ENOENT || err == -EINVAL ? 0 : err;
}

/* The maps of program @fd, by name, into @out->map[] (fds). */
static int prog_maps(int fd, struct qos_progs *out)
{
	uint32_t ids[64], n, i, len;
	struct bpf_prog_info info = {};
	int m, mfd, ret = 0;

	len = sizeof(info);
	info.nr_map_ids = 64;
	info.map_ids = (uintptr_t)ids;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	n = info.nr_map_ids < 64 ? info.nr_map_ids : 64;
	for (i = 0; i < n && !ret; i++) {
		struct bpf_map_info mi = {};
		uint32_t mlen = sizeof(mi);

		mfd = bpf_map_get_fd_by_id(ids[i]);
		if (mfd < 0)
			return -errno;
		if (bpf_obj_get_info_by_fd(mfd, &mi, &mlen)) {
			ret = -errno;
			close(mfd);
			break;
		}
		for (m = 0; m < QOS_MAP_MAX; m++)
			if (!strncmp(mi.name, map_names[m], BPF_OBJ_NAME_LEN - 1) &&
			    out->map[m] < 0)
				break;
		if (m == QOS_MAP_MAX) {
			close(mfd);
			continue;
		}
		out->map[m] = mfd;
		if (m == QOS_MAP_RULES)
			out->rule_entries = mi.max_entries;
	}
	return ret;
}

static int prog_name_is(int fd, const char *name, uint32_t *id)
{
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	*id = info.id;
	return !strncmp(info.name, name, BPF_OBJ_NAME_LEN - 1);
}

/* Whether program @id is qosctl's program for @dir, by its name. */
static bool prog_id_is(uint32_t id, enum qos_dir dir)
{
	uint32_t got;
	int fd, ret;

	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return false;
	ret = prog_name_is(fd, prog_names[dir], &got);
	close(fd);
	return ret == 1;
}

/* The clsact filter at qosctl's prio and handle, whatever runs there; else
 * the first program of qosctl's name in the tcx list. */
static int slot_find(int ifindex, enum qos_dir dir, struct slot *s)
{
	struct qos_tcx_list l;
	uint32_t i;
	int ret;

	memset(s, 0, sizeof(*s));
	ret = clsact_query(ifindex, dir, &s->id);
	if (ret || s->id) {
		s->how = s->id ? QOS_ATTACH_CLSACT : QOS_ATTACH_NONE;
		return ret;
	}
	if (qos_tcx_query(ifindex, dir, &l))
		return 0;
	s->n = l.n;
	s->revision = l.revision;
	for (i = 0; i < l.n && !s->id; i++) {
		if (!prog_id_is(l.ids[i], dir))
			continue;
		s->id = l.ids[i];
		s->pos = i + 1;
		s->how = QOS_ATTACH_TCX;
	}
	return 0;
}

/* Add the maps of @other to @out; a map both hold must be the same one. */
static int maps_merge(struct qos_progs *out, struct qos_progs *other)
{
	struct bpf_map_info a, b;
	uint32_t la, lb;
	int m;

	for (m = 0; m < QOS_MAP_MAX; m++) {
		if (other->map[m] < 0)
			continue;
		if (out->map[m] < 0) {
			out->map[m] = other->map[m];
			other->map[m] = -1;
			if (m == QOS_MAP_RULES)
				out->rule_entries = other->rule_entries;
			continue;
		}
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		la = lb = sizeof(a);
		if (bpf_obj_get_info_by_fd(out->map[m], &a, &la) ||
		    bpf_obj_get_info_by_fd(other->map[m], &b, &lb) || a.id != b.id)
			return -EPROTO;
	}
	return 0;
}

/* Where the programs of both directions run, into @out. */
static int slots_find(int ifindex, struct qos_progs *out, uint32_t id[QOS_DIR_MAX], char *what,
		      size_t whatlen)
{
	struct slot s[QOS_DIR_MAX];
	int d, ret;

	for (d = 0; d < QOS_DIR_MAX; d++) {
		ret = slot_find(ifindex, d, &s[d]);
		if (ret)
			return ret;
		id[d] = s[d].id;
		out->tcx_pos[d] = s[d].pos;
		out->tcx_n[d] = s[d].n;
	}
	if (!id[QOS_DIR_INGRESS] && !id[QOS_DIR_EGRESS])
		return -ENOENT;
	out->attach = s[QOS_DIR_EGRESS].how ?: s[QOS_DIR_INGRESS].how;
	if (s[QOS_DIR_INGRESS].how && s[QOS_DIR_EGRESS].how &&
	    s[QOS_DIR_INGRESS].how != s[QOS_DIR_EGRESS].how) {
		snprintf(what, whatlen, "programs %u and %u are split between clsact and tcx", id[0],
			 id[1]);
		return -EPROTO;
	}
	return 0;
}

/*
 * Maps @p may lack: the slots and the generation (programs of an earlier
 * build, with the array of maps), the array of maps (this build's), and
 * qos_meta (a build before the meta had a map of its own: the meta is in
 * their value, qos_cfg_get()).
 */
static bool map_optional(const struct qos_progs *p, int m)
{
	bool slots = p->map[QOS_MAP_SLOTS] >= 0 && p->map[QOS_MAP_GEN] >= 0;

	switch (m) {
	case QOS_MAP_CFG:
		return slots && p->map[QOS_MAP_META] >= 0;
	case QOS_MAP_META:
	case QOS_MAP_SLOTS:
	case QOS_MAP_GEN:
		return !slots && p->map[QOS_MAP_CFG] >= 0;
	default:
		return false;
	}
}

int qos_progs_find(int ifindex, struct qos_progs *out, char *what, size_t whatlen)
{
	struct qos_progs other;
	uint32_t id[QOS_DIR_MAX];
	int d, m, ret;

	qos_progs_init(out);
	ret = slots_find(ifindex, out, id, what, whatlen);
	if (ret)
		return ret;
	/* The egress program always runs; the ingress one when the profile
	 * acts at ingress (Documentation/design.rst, "Hooks"). */
	if (!id[QOS_DIR_EGRESS]) {
		snprintf(what, whatlen, "no program at qosctl's egress filter (pref %u handle 0x%x)",
			 QOS_TC_PRIO, QOS_TC_HANDLE);
		goto proto;
	}
	for (d = 0; d < QOS_DIR_MAX; d++) {
		if (!id[d])
			continue;
		out->prog[d] = bpf_prog_get_fd_by_id(id[d]);
		if (out->prog[d] < 0) {
			ret = -errno;
			/* Detached and freed since the query. */
			qos_progs_close(out);
			return ret == -ENOENT ? -EAGAIN : ret;
		}
		ret = prog_name_is(out->prog[d], prog_names[d], &out->prog_id[d]);
		if (ret < 0)
			goto fail;
		if (!ret) {
			snprintf(what, whatlen, "program %u at qosctl's %s filter is not %s", id[d],
				 d ? "egress" : "ingress", prog_names[d]);
			goto proto;
		}
	}
	ret = prog_maps(out->prog[QOS_DIR_EGRESS], out);
	if (!ret && id[QOS_DIR_INGRESS]) {
		/* Both programs must share the maps: one device, one state. */
		qos_progs_init(&other);
		ret = prog_maps(out->prog[QOS_DIR_INGRESS], &other);
		ret = ret ?: maps_merge(out, &other);
		qos_progs_close(&other);
	}
	for (m = 0; m < QOS_MAP_MAX && !ret; m++)
		if (out->map[m] < 0 && !map_optional(out, m))
			ret = -EPROTO;
	if (ret)
		goto maps;
	return 0;
maps:
	if (id[QOS_DIR_INGRESS])
		snprintf(what, whatlen,
			 "programs %u and %u at qosctl's filters do not share qosctl's maps", id[0],
			 id[1]);
	else
		snprintf(what, whatlen, "program %u at qosctl's egress filter lacks qosctl's maps",
			 id[1]);
proto:
	ret = -EPROTO;
fail:
	qos_progs_close(out);
	return ret;
}

int qos_slot_meta(int ifindex, struct qos_meta *meta, uint32_t *ifb_ifindex)
{
	struct qos_cfg *cfg;
	int d, ret = -ENOENT;

	cfg = malloc(sizeof(*cfg));
	if (!cfg)
		return -ENOMEM;
	for (d = 0; d < QOS_DIR_MAX && ret; d++) {
		struct qos_progs p;
		struct slot s;
		int ours;

		qos_progs_init(&p);
		if (slot_find(ifindex, d, &s) || !s.id)
			continue;
		p.prog[d] = bpf_prog_get_fd_by_id(s.id);
		if (p.prog[d] < 0)
			continue;
		ours = prog_name_is(p.prog[d], prog_names[d], &p.prog_id[d]) == 1;
		if (ours && !prog_maps(p.prog[d], &p) && !qos_cfg_get(&p, cfg) &&
		    cfg->meta.version == QOS_META_VERSION) {
			*meta = cfg->meta;
			*ifb_ifindex = cfg->ifb_ifindex;
			ret = 0;
		}
		qos_progs_close(&p);
	}
	free(cfg);
	return ret;
}

static int clsact_attach(int ifindex, const struct qos_progs *p, bool *clsact_created)
{
	struct bpf_tc_hook hook;
	int d, err;

	/* One clsact serves both directions. */
	tc_hook(&hook, ifindex, QOS_DIR_INGRESS);
	hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
	err = bpf_tc_hook_create(&hook);
	if (err && err != -EEXIST)
		return err;
	*clsact_created = !err;

	for (d = 0; d < QOS_DIR_MAX; d++) {
		LIBBPF_OPTS(bpf_tc_opts, opts, .handle = QOS_TC_HANDLE,
			    .priority = QOS_TC_PRIO, .flags = BPF_TC_F_REPLACE,
			    .prog_fd = p->prog[d]);

		if (p->prog[d] < 0)
			continue;
		tc_hook(&hook, ifindex, d);
		err = bpf_tc_attach(&hook, &opts);
		if (err)
			return err;
	}
	return 0;
}

/*
 * @prog_fd at tcx @dir in place of qosctl's program there (@s), or first
 * or @last. Another tool may change the list between the read and the
 * attach: the kernel then refuses the revision (-ESTALE), and the list is
 * read again.
 */
static int tcx_attach_dir(int ifindex, enum qos_dir dir, int prog_fd, struct slot *s, bool last)
{
	int tries, old, ret;

	for (tries = 0;; tries++) {
		old = s->id ? bpf_prog_get_fd_by_id(s->id) : -1;
		if (s->id && old < 0)
			return -errno;
		ret = qos_tcx_attach(ifindex, dir, prog_fd, old, last, s->revision);
		if (old >= 0)
			close(old);
		if (ret != -ESTALE || tries == 3)
			return ret;
		qos_dbg("tcx %s changed under us: reading it again", dir ? "egress" : "ingress");
		ret = slot_find(ifindex, dir, s);
		if (ret)
			return ret;
	}
}

static enum qos_attach attach_how(int ifindex, struct slot s[QOS_DIR_MAX])
{
	int d;

	for (d = 0; d < QOS_DIR_MAX; d++)
		if (slot_find(ifindex, d, &s[d]))
			memset(&s[d], 0, sizeof(s[d]));
	if (s[QOS_DIR_EGRESS].how || s[QOS_DIR_INGRESS].how)
		return s[QOS_DIR_EGRESS].how ?: s[QOS_DIR_INGRESS].how;
	return qos_tcx_usable(ifindex) ? QOS_ATTACH_TCX : QOS_ATTACH_CLSACT;
}

bool qos_attach_is_tcx(int ifindex)
{
	struct slot s[QOS_DIR_MAX];

	return attach_how(ifindex, s) == QOS_ATTACH_TCX;
}

int qos_progs_attach(int ifindex, const struct qos_progs *p, bool last, bool *clsact_created)
{
	struct slot s[QOS_DIR_MAX];
	bool fresh, done = false;
	int d, i, ret = 0;

	*clsact_created = false;
	if (attach_how(ifindex, s) != QOS_ATTACH_TCX)
		return clsact_attach(ifindex, p, clsact_created);
	fresh = !s[QOS_DIR_INGRESS].id && !s[QOS_DIR_EGRESS].id;
	/* Where nothing of ours runs, egress first: an ingress program
	 * alone is not a state qos_progs_find() accepts. */
	for (i = 0; i < QOS_DIR_MAX && !ret; i++) {
		d = fresh ? QOS_DIR_MAX - 1 - i : i;
		if (p->prog[d] < 0)
			continue;
		ret = tcx_attach_dir(ifindex, d, p->prog[d], &s[d], last);
		done |= !ret;
	}
	/* A kernel that lists tcx but refuses the attach: clsact, while
	 * nothing of ours is at tcx. */
	if (fresh && !done && (ret == -EINVAL || ret == -EOPNOTSUPP)) {
		qos_dbg("tcx refused the attach (%s): clsact", strerror(-ret));
		return clsact_attach(ifindex, p, clsact_created);
	}
	return ret;
}

static int tcx_detach_id(int ifindex, enum qos_dir dir, uint32_t id)
{
	int fd, ret;

	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	ret = qos_tcx_detach(ifindex, dir, fd);
	close(fd);
	return ret == -ENOENT ? 0 : ret;
}

int qos_prog_detach(int ifindex, enum qos_dir dir, uint32_t prog_id)
{
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = QOS_TC_HANDLE, .priority = QOS_TC_PRIO);
	struct bpf_tc_hook hook;
	struct slot s;
	int err;

	err = slot_find(ifindex, dir, &s);
	if (err || !s.id)
		return 0;
	if (prog_id && prog_id != s.id) {
		qos_dbg("%s slot runs program %u, not %u: left alone",
			dir ? "egress" : "ingress", s.id, prog_id);
		return 0;
	}
	/* Any id (remove --force): every program of qosctl's name at tcx. */
	while (s.how == QOS_ATTACH_TCX) {
		err = tcx_detach_id(ifindex, dir, s.id);
		if (err || prog_id)
			return err;
		err = slot_find(ifindex, dir, &s);
		if (err || !s.id)
			return err;
	}
	tc_hook(&hook, ifindex, dir);
	err = bpf_tc_detach(&hook, &opts);
	return err == -ENOENT ? 0 : err;
}

int qos_progs_detach(int ifindex, const uint32_t prog_id[QOS_DIR_MAX])
{
	int d, err, ret = 0;

	for (d = 0; d < QOS_DIR_MAX; d++) {
		/* An id of 0 in @prog_id: nothing of ours ran there. */
		if (prog_id && !prog_id[d])
			continue;
		err = qos_prog_detach(ifindex, d, prog_id ? prog_id[d] : 0);
		if (err && !ret)
			ret = err;
	}
	return ret;
}

/* True if a clsact direction still holds filters. */
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

/*
 * A filter request in flight, anyone's (qosctl show, stats, the exporter,
 * `tc filter show`: none takes the device's lock), holds a reference on
 * clsact, and meanwhile the kernel refuses to delete it with EBUSY
 * ("Current ingress or clsact Qdisc has ongoing filter requests", Linux
 * 6.5 and 6.1.y). Such a request lasts microseconds: try again, about
 * 0.3 s in all, checking each time that no filter came in.
 */
#define CLSACT_TRIES	20

int qos_clsact_destroy_if_empty(int ifindex)
{
	char name[IF_NAMESIZE] = "?";
	struct bpf_tc_hook hook;
	struct nl_sock *sk;
	int err = 0, tries;

	if (qos_nl_open(&sk))
		return 0;
	tc_hook(&hook, ifindex, QOS_DIR_INGRESS);
	hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
	for (tries = 0; tries < CLSACT_TRIES; tries++) {
		if (clsact_has_filters(sk, ifindex, TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS)) ||
		    clsact_has_filters(sk, ifindex, TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS)))
			break;
		err = bpf_tc_hook_destroy(&hook);
		if (err != -EBUSY)
			break;
		usleep(1000U << (tries < 4 ? tries : 4));
	}
	qos_nl_close(sk);
	if (err == -ENOENT || err == -EINVAL)
		err = 0;
	if (err) {
		if_indextoname(ifindex, name);
		qos_warn("dev %s: clsact left in place: %s", name, strerror(-err));
	}
	return err;
}

/* The value of the array @fd at @key, if it has @size bytes. */
static int cfg_read(int fd, uint32_t key, struct qos_cfg *cfg, uint32_t size)
{
	struct bpf_map_info info = {};
	uint32_t len = sizeof(info);

	/* Another build's value may be larger than ours: never read it. */
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.value_size != size)
		return -EPROTO;
	return bpf_map_lookup_elem(fd, &key, cfg) ? -errno : 0;
}

static int rec_get(int meta, struct qos_meta_rec *rec)
{
	uint32_t zero = 0;

	return bpf_map_lookup_elem_flags(meta, &zero, rec, BPF_F_LOCK) ? -errno : 0;
}

static int rec_put(int meta, const struct qos_meta_rec *rec)
{
	uint32_t zero = 0;

	return bpf_map_update_elem(meta, &zero, rec, BPF_F_LOCK) ? -errno : 0;
}

static int meta_get(int meta, struct qos_cfg *cfg)
{
	struct qos_meta_rec rec;
	int ret = rec_get(meta, &rec);

	if (ret)
		return ret;
	cfg->meta = rec.meta;
	cfg->ifb = rec.ifb;
	return 0;
}

/* Programs of an earlier build: the first @size bytes of the value of the
 * inner map in the slot of @outer (-ENOENT if it is empty). */
static int inner_read(int outer, struct qos_cfg *cfg, uint32_t size)
{
	uint32_t zero = 0, id = 0;
	int fd, ret;

	if (bpf_map_lookup_elem(outer, &zero, &id) || !id)
		return -ENOENT;
	fd = bpf_map_get_fd_by_id(id);
	if (fd < 0)
		return -errno;
	ret = cfg_read(fd, 0, cfg, size);
	close(fd);
	return ret;
}

/* Word @key of qos_cfg_gen: QOS_GEN_NOW, the generation; QOS_GEN_CLEAN,
 * the one at which the inactive slot was last known clean. */
enum { QOS_GEN_NOW, QOS_GEN_CLEAN };

static int gen_word(const struct qos_progs *p, uint32_t key, uint32_t *v)
{
	*v = 0;
	return bpf_map_lookup_elem(p->map[QOS_MAP_GEN], &key, v) ? -errno : 0;
}

static int gen_get(const struct qos_progs *p, uint32_t *gen)
{
	return gen_word(p, QOS_GEN_NOW, gen);
}

static bool have_slots(const struct qos_progs *p)
{
	return p->map[QOS_MAP_SLOTS] >= 0 && p->map[QOS_MAP_GEN] >= 0 && p->map[QOS_MAP_META] >= 0;
}

uint32_t qos_cfg_gen(const struct qos_progs *p)
{
	uint32_t gen;

	return p->map[QOS_MAP_GEN] < 0 || gen_get(p, &gen) ? 0 : gen;
}

/* The active slot, read as a seqlock's reader: a slot is rewritten only
 * after two flips, so a generation read the same before and after says
 * the bytes are whole (a reader without the device lock: show). */
static int slots_read(const struct qos_progs *p, struct qos_cfg *cfg)
{
	uint32_t g0, g1;
	int tries, ret;

	for (tries = 0; tries < 8; tries++) {
		ret = gen_get(p, &g0);
		if (!ret && !g0)
			return -ENOENT;
		ret = ret ?: cfg_read(p->map[QOS_MAP_SLOTS], g0 & 1, cfg, QOS_CFG_DP_SIZE);
		ret = ret ?: gen_get(p, &g1);
		if (ret || g0 == g1)
			return ret;
	}
	return -EAGAIN;
}

int qos_cfg_get(const struct qos_progs *p, struct qos_cfg *cfg)
{
	int meta = p->map[QOS_MAP_META];

	if (have_slots(p))
		return slots_read(p, cfg) ?: meta_get(meta, cfg);
	if (p->map[QOS_MAP_CFG] < 0)
		return -EPROTO;
	/* Programs without a meta map are of a build that kept the meta in
	 * the value, at the same place: read it whole, to replace them. */
	if (meta < 0)
		return inner_read(p->map[QOS_MAP_CFG], cfg, sizeof(*cfg));
	return inner_read(p->map[QOS_MAP_CFG], cfg, QOS_CFG_DP_SIZE) ?: meta_get(meta, cfg);
}

/*
 * This process's last flips, by the id of their generation map: the moment
 * a grace period must begin after for the slot a flip left to be clean. A
 * flip of another process was made before this one took the device lock.
 */
static struct {
	uint32_t map_id, gen;
	uint64_t at;
} flips[16];
static unsigned int flips_next;

static uint64_t flip_since(uint32_t map_id, uint32_t gen, uint64_t since)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(flips); i++)
		if (flips[i].map_id == map_id && flips[i].gen == gen)
			return flips[i].at;
	return since;
}

static void flip_note(uint32_t map_id, uint32_t gen, uint64_t at)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(flips) && flips[i].map_id != map_id; i++)
		;
	if (i == ARRAY_SIZE(flips))
		i = flips_next++ % ARRAY_SIZE(flips);
	flips[i].map_id = map_id;
	flips[i].gen = gen;
	flips[i].at = at;
}

static uint32_t map_id_of(int fd)
{
	struct bpf_map_info info = {};
	uint32_t len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

/* Does the active slot (generation @g) hold @cfg's data-path value? */
static bool slot_same(const struct qos_progs *p, uint32_t g, const struct qos_cfg *cfg)
{
	struct qos_cfg *now;
	bool same;

	if (!g)
		return false;
	now = malloc(sizeof(*now));
	same = now && !cfg_read(p->map[QOS_MAP_SLOTS], g & 1, now, QOS_CFG_DP_SIZE) &&
	       !memcmp(now, cfg, QOS_CFG_DP_SIZE);
	free(now);
	return same;
}

/* The words of qos_cfg_gen, mmap()ed: an array's elements are 8 bytes
 * apart, two words per key. */
#define GEN_NOW		(2 * QOS_GEN_NOW)
#define GEN_CLEAN	(2 * QOS_GEN_CLEAN)

static uint32_t *gen_map(int fd)
{
	void *w = mmap(NULL, sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return w == MAP_FAILED ? NULL : w;
}

static void gen_unmap(uint32_t *w)
{
	munmap(w, sysconf(_SC_PAGESIZE));
}

/* A grace period began after generation @g was flipped to and has ended:
 * the slot it left is clean. A plain store, without the device lock: every
 * value stored is a generation whose slot left was clean, and only the
 * current one makes the slot clean (design.rst, "Two slots"). */
static void gen_clean(uint32_t *w, uint32_t g)
{
	if (__atomic_load_n(&w[GEN_NOW], __ATOMIC_ACQUIRE) == g)
		__atomic_store_n(&w[GEN_CLEAN], g, __ATOMIC_RELEASE);
}

/* Write @cfg into the slot generation @g left inactive and make it the
 * active one: one aligned 32-bit store, after the write. */
static int slot_flip(const struct qos_progs *p, uint32_t *w, const struct qos_cfg *cfg,
		     uint32_t g, struct qos_cfg_flip *f)
{
	uint32_t ng = g + 1 ?: 2, slot = ng & 1;

	if (bpf_map_update_elem(p->map[QOS_MAP_SLOTS], &slot, cfg, BPF_ANY))
		return -errno;
	/* The update returned before this store; a program loads the
	 * generation, then the slot it names (an address dependency). */
	__atomic_store_n(&w[GEN_NOW], ng, __ATOMIC_RELEASE);
	f->gen = ng;
	f->flipped = true;
	f->at_ns = qos_boottime_ns();
	return 0;
}

/* Until the slot generation @g left is clean: marked so by whoever waited
 * for it (another process included), or a grace period begun after
 * @since has ended here. */
static int clean_wait(uint32_t *w, uint32_t g, uint64_t since)
{
	qos_gp_start(since);
	while (__atomic_load_n(&w[GEN_CLEAN], __ATOMIC_ACQUIRE) != g && !qos_gp_done(since)) {
		if (!qos_gp_busy())
			return qos_gp_wait(since);
		usleep(200);
	}
	return 0;
}

/* qos_cfg_set() on the mapped words @w of generation map @id. */
static int cfg_flip(const struct qos_progs *p, uint32_t *w, uint32_t id,
		    const struct qos_cfg *cfg, uint64_t since, struct qos_cfg_flip *f)
{
	uint32_t g = __atomic_load_n(&w[GEN_NOW], __ATOMIC_ACQUIRE);
	uint32_t clean = __atomic_load_n(&w[GEN_CLEAN], __ATOMIC_ACQUIRE);
	int ret;

	f->gen = g;
	if (slot_same(p, g, cfg)) {
		if (clean != g && qos_gp_done(flip_since(id, g, since)))
			gen_clean(w, g);
		return 0;
	}
	/* At generation 0 the programs read neither slot. */
	if (g && clean != g) {
		ret = clean_wait(w, g, flip_since(id, g, since));
		if (ret)
			return ret;
	}
	ret = slot_flip(p, w, cfg, g, f);
	if (ret)
		return ret;
	flip_note(id, f->gen, f->at_ns);
	f->clean = !g;
	if (f->clean)
		gen_clean(w, f->gen);
	return 0;
}

int qos_cfg_set(const struct qos_progs *p, const struct qos_cfg *cfg, uint64_t since,
		struct qos_cfg_flip *f)
{
	struct qos_meta_rec rec = { .meta = cfg->meta, .ifb = cfg->ifb };
	uint32_t *w;
	int ret;

	memset(f, 0, sizeof(*f));
	if (!have_slots(p))
		return -EPROTO;
	w = gen_map(p->map[QOS_MAP_GEN]);
	if (!w)
		return -errno;
	ret = cfg_flip(p, w, map_id_of(p->map[QOS_MAP_GEN]), cfg, since, f);
	gen_unmap(w);
	return ret ?: rec_put(p->map[QOS_MAP_META], &rec);
}

void qos_cfg_prepare(const struct qos_progs *p, uint64_t since)
{
	uint32_t g, clean;

	if (!have_slots(p) || gen_word(p, QOS_GEN_NOW, &g) || !g ||
	    gen_word(p, QOS_GEN_CLEAN, &clean) || clean == g)
		return;
	qos_gp_start(flip_since(map_id_of(p->map[QOS_MAP_GEN]), g, since));
}

/* Mark the slot @f left clean, in the map @fd. */
static int clean_mark(int fd, const struct qos_cfg_flip *f)
{
	uint32_t *w = gen_map(fd);

	if (!w)
		return -errno;
	gen_clean(w, f->gen);
	gen_unmap(w);
	return 0;
}

int qos_cfg_clean(const struct qos_progs *p, const struct qos_cfg_flip *f)
{
	if (!f->flipped || f->clean)
		return 0;
	return qos_gp_wait(f->at_ns) ?: clean_mark(p->map[QOS_MAP_GEN], f);
}

/* What a waiter of qos_cfg_clean_later() holds. */
struct clean_later {
	int fd;				/* the generation map, its own */
	struct qos_cfg_flip f;
};

static void *clean_later_run(void *arg)
{
	struct clean_later *c = arg;

	if (!qos_gp_wait(c->f.at_ns))
		clean_mark(c->fd, &c->f);
	close(c->fd);
	free(c);
	return NULL;
}

/* In a grandchild, which init reaps: nothing of this process but the
 * generation map, and no libc or libbpf state (this process has
 * threads). */
static void clean_later_fork(const struct clean_later *c)
{
	pid_t pid = fork();

	if (pid > 0) {
		waitpid(pid, NULL, 0);
		return;
	}
	if (pid < 0 || fork())
		_exit(0);
	dup2(c->fd, 0);
	syscall(__NR_close_range, 1, ~0U, 0);
	if (!qos_gp_once())
		clean_mark(0, &c->f);
	_exit(0);
}

void qos_cfg_clean_later(const struct qos_progs *p, const struct qos_cfg_flip *f, bool thread)
{
	struct clean_later *c;
	pthread_attr_t attr;
	pthread_t thr;

	if (!f->flipped || f->clean || !(c = malloc(sizeof(*c))))
		return;
	c->f = *f;
	c->fd = dup_fd(p->map[QOS_MAP_GEN]);
	if (c->fd < 0) {
		free(c);
		return;
	}
	if (!thread) {
		clean_later_fork(c);
		close(c->fd);
		free(c);
		return;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&thr, &attr, clean_later_run, c)) {
		close(c->fd);
		free(c);
	}
	pthread_attr_destroy(&attr);
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
