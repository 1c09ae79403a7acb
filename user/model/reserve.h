/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Premium IP reservations (qosctl reserve): rules of the profile's
 * reservation class with a policer of their own, a token bucket (rate r,
 * burst b), and an expiry time. Kept nowhere but in the device's rule table:
 * the rules are the reservations (Documentation/reservations.rst).
 *
 * Admission is the per-hop rule a broker applies at every interface of a
 * path: a pure function of the class (what reservations may take of its
 * rate, the rate its queue drains at, its delay bound, the largest packet),
 * the admitted set, summed, and the request. It touches nothing and reads
 * no clock; qos_resv_admit() is the only place it is written.
 */
#ifndef __QOS_MODEL_RESERVE_H
#define __QOS_MODEL_RESERVE_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "model/rule.h"

/* A reservation's burst without `burst`: this many full-size frames. */
#define QOS_RESERVE_BURST_FRAMES	2
/* reserve apply FILE: the largest file read (bytes). */
#define QOS_RESERVE_FILE_MAX		(64U << 20)

/* One request: its rule, and the expiry asked for (ns from now, 0: none). */
struct qos_reserve_req {
	struct qos_rule r;
	uint64_t for_ns;
};

/* KEY VALUE of `reserve add` or of a reservation file into @q: id, rate,
 * burst, remark, for, and the match keys of a rule. */
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

/* What admission needs to know of the reservation class on one interface. */
struct qos_resv_class {
	const char *name;
	uint64_t cap_bps;	/* the rates together: ceiling less headroom */
	uint64_t ceil_bps;	/* the rate its queue drains at */
	uint32_t headroom_pct;
	uint64_t delay_ns;	/* per-hop delay bound */
	uint32_t max_pkt;	/* largest frame, bytes */
};

/* The admitted set, summed: all admission reads of it. */
struct qos_resv_sum {
	uint64_t rate_bps;
	uint64_t burst;		/* sum of (b + max_pkt), bytes */
	size_t n;
};

/* A request: its token bucket. */
struct qos_resv_req {
	uint64_t rate_bps;
	uint64_t burst;		/* bytes */
};

enum qos_resv_verdict {
	QOS_RESV_ADMIT,
	QOS_RESV_RATE,		/* the rates would not fit cap_bps */
	QOS_RESV_DELAY,		/* the bursts would not drain within delay_ns */
};

/* The class of @meta's reservations (zeroed if it has no reserve-class). */
struct qos_resv_class qos_resv_class_of(const struct qos_meta *meta);

/* Add (@sign 1) or take away (-1) request @q from @s. */
void qos_resv_sum_step(struct qos_resv_sum *s, const struct qos_resv_class *c,
		       const struct qos_resv_req *q, int sign);

/*
 * The worst-case delay of the set @s in the class, in ns: its bursts, each
 * with one packet already in the queue, drained at the class's rate
 * ((sum b + n M) / R, RFC 2212's bound for a rate-R server with no rate
 * or delay error terms).
 */
uint64_t qos_resv_delay_ns(const struct qos_resv_class *c, const struct qos_resv_sum *s);

/* Whether the set @s fits the class: QOS_RESV_ADMIT or the limit it breaks. */
enum qos_resv_verdict qos_resv_fits(const struct qos_resv_class *c, const struct qos_resv_sum *s);

/* Bytes the class's queue must hold: its delay bound at its rate. */
uint64_t qos_resv_queue_bytes(const struct qos_resv_class *c);

/* Whether the set @s admits @q: QOS_RESV_ADMIT or the limit it would break. */
enum qos_resv_verdict qos_resv_admit(const struct qos_resv_class *c,
				     const struct qos_resv_sum *s,
				     const struct qos_resv_req *q);

/* Why @q was refused by @c over @s, with the numbers, into @buf. */
void qos_resv_refusal(char *buf, size_t len, enum qos_resv_verdict v,
		      const struct qos_resv_class *c, const struct qos_resv_sum *s,
		      const struct qos_resv_req *q);

/* The token bucket of reservation @r. */
struct qos_resv_req qos_resv_req_of(const struct qos_rule *r);

/* The name of class @id in @meta, NULL if it has none. */
const char *qos_meta_class_name(const struct qos_meta *meta, uint32_t id);

/* A reservation of @l that has not expired at @now. */
bool qos_reserve_live(const struct qos_rule *r, uint64_t now);

/* The live reservations of @l, summed for class @c. */
struct qos_resv_sum qos_reserve_sum(const struct qos_rules *l, const struct qos_resv_class *c,
				    uint64_t now);

/* Drop from @l the reservations that expired at @now; how many went. */
size_t qos_reserve_purge(struct qos_rules *l, uint64_t now);

/* Make @r a reservation of @meta's reservation class: class, burst (the
 * default if none), policer action beyond the rate, remark, flags. */
void qos_reserve_bind(struct qos_rule *r, const struct qos_meta *meta);

/*
 * The reservations of @l, expired ones dropped, bound to @meta's class and
 * checked against what it admits; @why names the change ("profile
 * pip-5pct"). On refusal @err has the numbers.
 */
int qos_reserve_fit(struct qos_rules *l, const struct qos_meta *meta, const char *dev,
		    const char *why, char *err, size_t errlen);

/*
 * Reservations by name in a rule list, hashed: a broker's file of 65,536
 * requests looks each id up in constant time. Indexes into the list, so
 * valid while the list is only appended to.
 */
struct qos_resv_index {
	const struct qos_rules *l;
	size_t *slot;		/* index in l->r plus one, 0: empty */
	size_t cap;		/* a power of two, at least twice the entries */
	size_t n;
	unsigned int next;	/* the next generated name is r<next> or later */
};

int qos_resv_index_init(struct qos_resv_index *x, const struct qos_rules *l);
void qos_resv_index_free(struct qos_resv_index *x);
/* The reservation of @l named @name, or NULL. */
struct qos_rule *qos_resv_index_find(const struct qos_resv_index *x, const char *name);
/* Record l->r[@i] (just appended) under its name. */
int qos_resv_index_add(struct qos_resv_index *x, size_t i);
/* A name no rule of the list has, r1, r2, ...: amortised constant time. */
void qos_resv_index_name(struct qos_resv_index *x, char *name, size_t len);

/*
 * A device's reservations being changed: its rules (expired reservations
 * dropped), the class they are admitted to, the live set summed, and the
 * names hashed, so that each request costs constant time.
 */
struct qos_admission {
	struct qos_rules *cur;
	const struct qos_meta *meta;
	struct qos_resv_class c;
	struct qos_resv_sum sum;
	struct qos_resv_index names;
	const char *dev;
};

/* Admission to the rules @cur of device @dev, whose configuration is @meta. */
int qos_admission_init(struct qos_admission *a, struct qos_rules *cur,
		       const struct qos_meta *meta, const char *dev);
void qos_admission_free(struct qos_admission *a);

/*
 * Admit @q into the device's rules (qos_resv_admit() decides): named,
 * bound to the class, checked, given its expiry. A reservation of the same
 * id is replaced if @replace, else refused; the same terms again change
 * nothing. On refusal @err has the numbers.
 */
int qos_admission_add(struct qos_admission *a, struct qos_reserve_req *q, bool replace,
		      char *err, size_t errlen);

#endif /* __QOS_MODEL_RESERVE_H */
