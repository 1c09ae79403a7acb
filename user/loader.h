/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef __QOS_LOADER_H
#define __QOS_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../bpf/qos_common.h"

#define QOS_BPFFS		"/sys/fs/bpf"
#define QOS_PIN_ROOT		QOS_BPFFS "/qosctl"

/* Where our filters sit in the clsact chains. The programs return
 * TC_ACT_UNSPEC, so filters after ours still run. */
#define QOS_TC_HANDLE		0x51
#define QOS_TC_PRIO		0x51

struct qos_bpf;

/* The pinned maps of one interface, opened by any later process. */
struct qos_maps {
	int cfg;
	int stats;
	int unparsed;
	int meta;
};

int qos_pin_dir(const char *ifname, char *buf, size_t len);

/* Root, bpffs mounted, the kernel has cls_bpf programs: one clear error. */
int qos_check_env(char *err, size_t errlen);

/*
 * Open and load the programs with their maps pinned under @pin_dir
 * (reusing maps already pinned there, so counters survive a re-apply).
 * The rule tables get @rule_entries entries. *created tells whether the
 * pins are new.
 */
int qos_bpf_load(const char *pin_dir, uint32_t rule_entries, struct qos_bpf **obj,
		 bool *created);
void qos_bpf_close(struct qos_bpf *obj);
int qos_bpf_maps(struct qos_bpf *obj, struct qos_maps *m);
/* The fd of map @name of @obj, or a negative error. */
int qos_bpf_map_fd(struct qos_bpf *obj, const char *name);
/* Unpin every map of @obj and remove @pin_dir. */
void qos_bpf_unpin(struct qos_bpf *obj, const char *pin_dir);

/*
 * Attach (or atomically replace) both programs on @ifindex. *clsact_created
 * is set if this call created the clsact qdisc. prog_id[] receives the ids.
 */
int qos_bpf_attach(struct qos_bpf *obj, int ifindex, bool *clsact_created,
		   uint32_t prog_id[QOS_DIR_MAX]);

/*
 * Detach our filter from each direction if it still runs the program with
 * the recorded id (0 = whatever sits at our handle/priority). Destroys the
 * clsact qdisc too when @destroy_clsact and no other filter is left.
 */
int qos_bpf_detach(int ifindex, const uint32_t prog_id[QOS_DIR_MAX], bool destroy_clsact);

/* Query the program id at our slot; 0 if none. */
int qos_bpf_query(int ifindex, enum qos_dir dir, uint32_t *prog_id);

/* Remove the pins of @ifname without loading anything. */
int qos_pins_remove(const char *ifname);

/* Put a program back by id (rollback of a replace). */
int qos_prog_fd_by_id(uint32_t id);
int qos_attach_fd(int ifindex, enum qos_dir dir, int prog_fd);

int qos_maps_open(const char *ifname, struct qos_maps *m);
/* qos_check_env(), then the maps an earlier apply pinned for @ifname, with
 * the one error every command gives when there are none. */
int qos_maps_open_applied(const char *ifname, struct qos_maps *m, char *err, size_t errlen);
void qos_maps_close(struct qos_maps *m);

int qos_meta_read(int fd, struct qos_meta *meta);
int qos_meta_write(int fd, const struct qos_meta *meta);
int qos_cfg_read(int fd, struct qos_cfg *cfg);
int qos_cfg_write(int fd, const struct qos_cfg *cfg);

/* Sum a per-CPU counter. */
int qos_ctr_read(int fd, uint32_t key, struct qos_ctr *sum);

#endif /* __QOS_LOADER_H */
