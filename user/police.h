/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Policers: the police-* keys of a profile's [class NAME] section, their
 * resolution into the qos_policers map value, and their counters. See
 * Documentation/policing.rst.
 */
#ifndef __QOS_POLICE_H
#define __QOS_POLICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../bpf/qos_common.h"

struct qos_profile;
struct qos_class_spec;
struct json_object;

/* The smallest burst "auto" and a time may give: one Ethernet frame at
 * MTU 1500, as the policer counts bytes (L2, without FCS). */
#define QOS_POLICE_MIN_FRAME	1514

enum qos_police_size_kind {
	QOS_PSZ_UNSET,
	QOS_PSZ_AUTO,
	QOS_PSZ_BYTES,
	QOS_PSZ_TIME,
};

/* A bucket size as written: auto, bytes, or a time at the bucket's rate. */
struct qos_police_size {
	enum qos_police_size_kind kind;
	uint64_t v;		/* bytes or nanoseconds */
	int line;
};

struct qos_police_act_spec {
	struct qos_police_action act;
	char demote[QOS_CLASS_NAME_LEN];	/* class name, resolved later */
	bool set;
	int line;
};

struct qos_police_spec {
	bool set;		/* police-rate given */
	int line;		/* of police-rate */
	char rate[32];		/* as written: a rate or N% of the link */
	char peak_rate[32];
	int peak_line;
	enum tb_mode mode;
	int mode_line;
	struct qos_police_size burst, excess_burst, peak_burst;
	bool aware;
	uint64_t pre_dscp[TB_COLOR_MAX];	/* aware: DSCPs arriving in each colour */
	int pre_line[TB_COLOR_MAX];
	struct qos_police_act_spec act[TB_COLOR_MAX];
};

/*
 * Parse one police-* key of a class. Returns 0, or -EINVAL with the reason
 * in @msg (the caller adds file, line and key).
 */
int qos_police_parse_key(struct qos_police_spec *ps, const char *key, const char *v, int line,
			 char *msg, size_t msglen);

/* Checks that need the whole profile (demote targets, mode consistency).
 * Error as "FILE:LINE: KEY: reason". */
int qos_police_check(const struct qos_profile *p, char *err, size_t errlen);

/*
 * Resolve @cl's policer against @link_bps into a map value with its buckets
 * full. Error as "FILE:LINE: KEY: reason".
 */
int qos_police_resolve(const struct qos_profile *p, const struct qos_class_spec *cl,
		       uint64_t link_bps, struct qos_policer *pol, char *err, size_t errlen);

/*
 * Install the class policers @pol[id] (id 1 to QOS_MAX_CLASSES - 1; a zero
 * cir means no policer, and clears the entry) into the qos_policers map
 * @fd. A policer whose configuration is unchanged keeps its buckets; a
 * changed one is switched in place with tb_reconfig(), so a re-apply
 * neither refills nor empties it. @saved receives the previous entries
 * for qos_police_restore().
 */
int qos_police_install(int fd, const struct qos_policer pol[QOS_MAX_CLASSES],
		       struct qos_policer saved[QOS_MAX_CLASSES]);
void qos_police_restore(int fd, const struct qos_policer saved[QOS_MAX_CLASSES]);

/* A policer and its counters, as `show` and `stats` print them. */
struct qos_police_report {
	bool set;
	uint32_t idx;
	struct qos_policer pol;
	struct qos_ctr ctr[QOS_FAM_MAX][TB_COLOR_MAX];
};

/* Read policer @idx of @ifname from the pinned maps. */
int qos_police_read(const char *ifname, uint32_t idx, struct qos_police_report *r);

extern const char *const qos_color_names[TB_COLOR_MAX];

/* "police srtcm cir 20mbit cbs 250000b ... exceed drop violate drop" */
void qos_police_print_config(FILE *f, const struct qos_policer *pol,
			     const char *const class_names[QOS_MAX_CLASSES]);
struct json_object *qos_police_config_json(const struct qos_policer *pol,
					   const char *const class_names[QOS_MAX_CLASSES]);
/* One row per colour: packets and bytes per family. */
void qos_police_print_stats(FILE *f, const struct qos_police_report *r);
struct json_object *qos_police_stats_json(const struct qos_police_report *r);

#endif /* __QOS_POLICE_H */
