/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Premium IP reservations (qosctl reserve): rules of the profile's
 * reservation class with a policer of their own at the reserved rate and an
 * expiry time, admitted while their rates together fit the class's ceiling
 * less a headroom. Kept nowhere but in the device's rule table: the rules
 * are the reservations (Documentation/assurance.rst).
 */
#ifndef __QOS_MODEL_RESERVE_H
#define __QOS_MODEL_RESERVE_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "model/rule.h"

/* One request: its rule, and the expiry asked for (ns from now, 0: none). */
struct qos_reserve_req {
	struct qos_rule r;
	uint64_t for_ns;
};

/* KEY VALUE of `reserve add` or of a reservation file into @q: id, rate,
 * burst, for, and the match keys of a rule. */
int qos_reserve_req_set(struct qos_reserve_req *q, const char *key, const char *val, char *err,
			size_t errlen);

/*
 * A reservation file, parsed by json-c into @root: {"reservations": [{"dev":
 * ..., "id": ..., "rate": ..., ...}, ...]} or the bare array, read from
 * @path (for messages). On success the *@n requests in *@qs, their devices
 * in *@devs (both malloc()ed; the device names point into @root). Nothing
 * is checked against a device. @err names the file, the request and the key.
 */
int qos_reserve_file_parse(json_object *root, const char *path, struct qos_reserve_req **qs,
			   const char ***devs, size_t *n, char *err, size_t errlen);

/* The name of class @id in @meta, NULL if it has none. */
const char *qos_meta_class_name(const struct qos_meta *meta, uint32_t id);

/* A reservation of @l that has not expired at @now. */
bool qos_reserve_live(const struct qos_rule *r, uint64_t now);

/* The rate of the live reservations of @l, and their number in *@n. */
uint64_t qos_reserve_sum(const struct qos_rules *l, uint64_t now, size_t *n);

/* Drop from @l the reservations that expired at @now. */
void qos_reserve_purge(struct qos_rules *l, uint64_t now);

/* Make @r a reservation of @meta's reservation class: class, policer
 * action beyond the rate, flags. */
void qos_reserve_bind(struct qos_rule *r, const struct qos_meta *meta);

/*
 * The reservations of @l, expired ones dropped, bound to @meta's class and
 * checked against what it admits; @why names the change ("adding r1",
 * "applying pip-5pct"). On refusal @err has the numbers.
 */
int qos_reserve_fit(struct qos_rules *l, const struct qos_meta *meta, const char *dev,
		    const char *why, char *err, size_t errlen);

#endif /* __QOS_MODEL_RESERVE_H */
