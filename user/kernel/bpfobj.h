/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The BPF side of a device: the two programs of the embedded object, the
 * maps they share, and the one configuration value they read (struct
 * qos_cfg, in one of two slots). Nothing is pinned: whatever a
 * device runs is found from its tc filters (Documentation/design.rst).
 */
#ifndef __QOS_KERNEL_BPFOBJ_H
#define __QOS_KERNEL_BPFOBJ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../bpf/qos_common.h"
/* The kernel memory these maps take, for validate and the dry run. */
#include "kernel/mapmem.h"

/* Where our filters sit in the clsact chains, when clsact is the path
 * (a kernel before 6.6, or a qosctl built with libbpf < 1.3). The programs
 * return TC_ACT_UNSPEC, so filters after ours still run; at tcx the same
 * verdict lets the next program of the list run. */
#define QOS_TC_HANDLE		0x51
#define QOS_TC_PRIO		0x51

enum qos_map_idx {
	QOS_MAP_CFG,		/* programs of an earlier build: an array of maps */
	QOS_MAP_STATS,
	QOS_MAP_UNPARSED,
	QOS_MAP_RULES,
	QOS_MAP_RULE_STATS,
	QOS_MAP_POLICERS,
	QOS_MAP_POLICE_STATS,
	QOS_MAP_RULES4,
	QOS_MAP_RULE_POLS,
	QOS_MAP_META,
	QOS_MAP_SLOTS,		/* two slots of the data-path value */
	QOS_MAP_GEN,		/* the flip generation, mmap()able */
	QOS_MAP_MAX,
};

/* Maps that a new pair of programs shares with the pair it replaces: the
 * counters and the class policers' buckets carry on. The rule table, its
 * policers and the configuration are new with new programs, so that the
 * old pair keeps a consistent view until the new one is attached. */
#define QOS_MAPS_SHARED	(1U << QOS_MAP_STATS | 1U << QOS_MAP_UNPARSED | \
			 1U << QOS_MAP_POLICERS | 1U << QOS_MAP_POLICE_STATS)

/* How a device's programs are attached (Documentation/design.rst,
 * "Attachment"). */
enum qos_attach {
	QOS_ATTACH_NONE,
	QOS_ATTACH_CLSACT,		/* a clsact filter at qosctl's prio and handle */
	QOS_ATTACH_TCX,			/* in the tcx list, found by name and maps */
};

/* The programs of a device and their maps, as file descriptors (-1: none;
 * a device whose profile acts at egress only runs no ingress program). */
struct qos_progs {
	int prog[QOS_DIR_MAX];
	uint32_t prog_id[QOS_DIR_MAX];
	int map[QOS_MAP_MAX];
	uint32_t rule_entries;		/* max_entries of the rule table */
	/* As qos_progs_find found them: how, and at tcx their place (from
	 * 1) among how many programs. */
	enum qos_attach attach;
	uint32_t tcx_pos[QOS_DIR_MAX];
	uint32_t tcx_n[QOS_DIR_MAX];
};

void qos_progs_init(struct qos_progs *p);
void qos_progs_close(struct qos_progs *p);
/* Duplicate every fd of @src into @dst, so both can be closed. */
int qos_progs_dup(const struct qos_progs *src, struct qos_progs *dst);

/* Root, and a kernel with BPF tc programs: one clear error. */
int qos_check_env(char *err, size_t errlen);

/* Hash of the embedded object: equal hashes mean the same programs. */
uint64_t qos_obj_hash(void);

/* Bits of enum qos_dir: which programs to load. */
#define QOS_DIRS_ALL	(1U << QOS_DIR_INGRESS | 1U << QOS_DIR_EGRESS)

/* A device to attach programs to as soon as each is loaded. */
struct qos_attach_early {
	int ifindex;
	bool last;				/* at the end of the tcx list */
	bool attached[QOS_DIR_MAX];		/* out: which were */
};

/*
 * Load (verify) the programs in @dirs (1U << enum qos_dir) of the embedded
 * object with a rule table of @rule_entries. The maps in @share_mask (1U <<
 * enum qos_map_idx) are taken from @share when it is not NULL. Every map
 * of the object is bound to every program loaded, so one program alone
 * holds the device's whole state. With -v, each program's load time and
 * verified instructions are logged.
 *
 * With @ea, when nothing of qosctl's runs on @ea->ifindex and it attaches
 * through tcx, each program is attached there as soon as it is loaded,
 * egress first, so that one attach's grace period passes while the other
 * program is verified; @ea->attached says which were (the others are the
 * caller's to attach). Until the configuration's first flip they pass
 * every packet on.
 */
int qos_progs_load(const struct qos_progs *share, unsigned int share_mask, uint32_t rule_entries,
		   unsigned int dirs, struct qos_attach_early *ea, struct qos_progs *out);
struct qos;
/* Size the rule tables, their hit counters and their policers of an opened
 * skeleton. */
/* Rows of the [cpu][id] hit counters: the highest possible CPU id + 1. */
int qos_cpu_rows(void);
int qos_rule_maps_size(struct qos *skel, uint32_t rule_entries);

/*
 * What runs at qosctl's slot of @ifindex: its clsact filters, or else the
 * programs of qosctl's names in the tcx lists. 0 with @out filled,
 * -ENOENT if nothing does, -EPROTO if something that is not qosctl's does
 * (@what says what): qosctl's egress program holding every qosctl map
 * must be there, and at ingress nothing or qosctl's ingress program using
 * the same maps.
 */
int qos_progs_find(int ifindex, struct qos_progs *out, char *what, size_t whatlen);

/*
 * The meta of the configuration a qosctl program at either direction of
 * qosctl's slot still reads, when the pair is broken (remove --force),
 * and the ifindex of the IFB it redirects to (0: none): 0, or -ENOENT if
 * neither holds one.
 */
int qos_slot_meta(int ifindex, struct qos_meta *meta, uint32_t *ifb_ifindex);

/*
 * Whether qos_progs_attach would attach through tcx on @ifindex: the way
 * qosctl's programs there are attached, else tcx if the kernel has it.
 */
bool qos_attach_is_tcx(int ifindex);

/*
 * Attach (or atomically replace) the programs of @p at qosctl's slot,
 * ingress first where qosctl's run, egress first at a tcx slot where none
 * does; a direction without a program is left as it is. Where
 * programs of qosctl run, the new ones replace them in the same way (the
 * same clsact filter; at tcx, BPF_F_REPLACE at the revision read); else
 * through tcx, first or @last among the programs there, falling back to
 * clsact when the kernel refuses. The clsact qdisc is created if missing
 * (*clsact_created then true).
 */
int qos_progs_attach(int ifindex, const struct qos_progs *p, bool last, bool *clsact_created);

/* Detach what sits at qosctl's slot in @dir if its id is @prog_id (any id
 * when 0). */
int qos_prog_detach(int ifindex, enum qos_dir dir, uint32_t prog_id);
/*
 * Detach what sits at qosctl's slot in each direction if its id is
 * @prog_id[dir] (any id when @prog_id is NULL).
 */
int qos_progs_detach(int ifindex, const uint32_t prog_id[QOS_DIR_MAX]);

/* Remove the clsact qdisc if no filter is left on it. */
int qos_clsact_destroy_if_empty(int ifindex);

/*
 * The configuration of the programs @p: the data-path value in the active
 * slot and the meta (-ENOENT if never configured). Programs of an earlier
 * build hold it in the slot of an array of maps (QOS_MAP_CFG), and those
 * of a build before that kept the meta in the value: read, to replace them.
 */
int qos_cfg_get(const struct qos_progs *p, struct qos_cfg *cfg);
/* The flip generation of @p's configuration, 0: never configured. */
uint32_t qos_cfg_gen(const struct qos_progs *p);

/* What qos_cfg_set() did: the generation it left, whether it flipped, when. */
struct qos_cfg_flip {
	uint32_t gen;
	bool flipped;
	bool clean;		/* from generation 0: the slot left was never read */
	uint64_t at_ns;		/* CLOCK_BOOTTIME, just after the flip */
};

/*
 * Make @cfg the configuration of the programs @p: unless the active slot
 * holds @cfg's data-path value already, write it into the inactive slot
 * and flip the generation; then write the meta. The inactive slot is
 * written only once a grace period has ended since a program could last
 * read it: one that began after the last flip this process made, or after
 * @since for a flip of another process (a moment after the device lock was
 * taken). Once it returns, a program run that begins sees @cfg; one under
 * way may see the value before until it ends (qos_cfg_clean()).
 */
int qos_cfg_set(const struct qos_progs *p, const struct qos_cfg *cfg, uint64_t since,
		struct qos_cfg_flip *f);
/* Begin, in a thread, the grace period qos_cfg_set() would wait for, when
 * the inactive slot of @p is not known to be clean. */
void qos_cfg_prepare(const struct qos_progs *p, uint64_t since);
/* After the flip @f: wait until no program run can see the value before
 * it, and record the inactive slot clean. */
int qos_cfg_clean(const struct qos_progs *p, const struct qos_cfg_flip *f);
/* The same, in the background: in a thread of this process (@thread, one
 * that stays up), else in a process of its own that outlives this one. */
void qos_cfg_clean_later(const struct qos_progs *p, const struct qos_cfg_flip *f, bool thread);

/* Sum a per-CPU counter. */
int qos_ctr_read(int fd, uint32_t key, struct qos_ctr *sum);

#endif /* __QOS_KERNEL_BPFOBJ_H */
