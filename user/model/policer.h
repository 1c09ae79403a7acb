/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Policers as data: the police-* keys of a profile's [class NAME] section
 * and their resolution into the qos_policers map value. See
 * Documentation/policing.rst.
 */
#ifndef __QOS_MODEL_POLICER_H
#define __QOS_MODEL_POLICER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../bpf/qos_common.h"

struct qos_profile;
struct qos_class_spec;

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
 * full; bursts derived by qosctl hold a full frame at @mtu. Error as
 * "FILE:LINE: KEY: reason".
 */
int qos_police_resolve(const struct qos_profile *p, const struct qos_class_spec *cl,
		       uint64_t link_bps, uint32_t mtu, struct qos_policer *pol, char *err,
		       size_t errlen);

extern const char *const qos_color_names[TB_COLOR_MAX];
/* The profile keys of the three colours' actions. */
extern const char *const qos_police_act_keys[TB_COLOR_MAX];

#endif /* __QOS_MODEL_POLICER_H */
