/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The domain's bandwidth broker on etcd: load the declared domain, admit a
 * reservation on every egress interface of its path in one transaction,
 * release it, and read everything back for list and status
 * (Documentation/domain.rst). Optimistic: each change compares the
 * mod_revision of everything it read and starts again on a conflict; no
 * etcd lock is ever taken.
 */
#ifndef __QOS_DOMAIN_BROKER_H
#define __QOS_DOMAIN_BROKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "domain/etcd.h"
#include "domain/schema.h"

/* Attempts of one change before it gives up on conflicts. */
#define QOS_BROKER_ATTEMPTS	64
/* The lease of a reservation with an end outlives it by this much. */
#define QOS_BROKER_LEASE_SLACK_S	10

/* Each interface's reservation class, from its profile at its rate as
 * `apply` would build it (the profile search path of `apply`). */
int qos_domain_resolve(struct qos_domain *d, const char *path, char *err, size_t errlen);

/* What a load did. */
struct qos_load_res {
	size_t puts;
	size_t dels;
	bool unchanged;
	int64_t revision;
};

/*
 * Write @d (resolved) as the declared domain, in one transaction, unless
 * it strands admitted reservations (-EBUSY, @err with the numbers). Keys
 * whose value is already the same are not written; nothing at all when
 * nothing differs.
 */
int qos_broker_load(struct qos_etcd *e, const struct qos_domain *d, struct qos_load_res *r,
		    char *err, size_t errlen);

/* The declared domain as etcd has it (empty if never loaded). */
int qos_broker_read_domain(struct qos_etcd *e, struct qos_domain *d, int64_t *stamp_mod,
			   char *err, size_t errlen);

/* A request of `domain reserve add`. */
struct qos_broker_req {
	const char *args[32][2];	/* the match, rate, burst keys in order */
	size_t nargs;
	const char *id;			/* NULL: generated */
	uint64_t for_ns;		/* 0: no end */
	const char *remark;		/* NULL: ef */
};

/*
 * Admit @q: 0 with *@resv the reservation's value as written (the caller
 * puts it); -ENOSPC refused, @err naming the bottleneck router and
 * interface with its numbers; -EEXIST if the id is taken; -ETIMEDOUT if
 * the outcome could not be resolved.
 */
int qos_broker_reserve(struct qos_etcd *e, const struct qos_broker_req *q, json_object **resv,
		       char *err, size_t errlen);

/* Delete reservation @id and its ledger entries, in one transaction. */
int qos_broker_release(struct qos_etcd *e, const char *id, char *err, size_t errlen);

/* Everything `domain status` and `reserve list` show, read at one revision. */
struct qos_dom_view {
	struct qos_domain d;
	struct qos_resv_sum *sums;	/* per interface of d, live at now */
	json_object *resv;		/* array of reservation values */
	json_object *status;		/* object: router -> its status value */
	uint64_t now_unix_ns;
	int64_t revision;
};

int qos_broker_view(struct qos_etcd *e, struct qos_dom_view *v, char *err, size_t errlen);
void qos_dom_view_free(struct qos_dom_view *v);

/* Wall-clock now, ns since the epoch: the clock of end_unix_ns. */
uint64_t qos_unix_ns(void);

#endif /* __QOS_DOMAIN_BROKER_H */
