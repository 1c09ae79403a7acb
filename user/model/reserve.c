// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Admission control for Premium IP reservations: plain arithmetic on a rule
 * list and the profile's figures in the device's qos_meta.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/util.h"
#include "model/reserve.h"

bool qos_reserve_live(const struct qos_rule *r, uint64_t now)
{
	return r->reserve && (!r->expires_ns || r->expires_ns > now);
}

uint64_t qos_reserve_sum(const struct qos_rules *l, uint64_t now, size_t *n)
{
	uint64_t sum = 0;
	size_t i;

	*n = 0;
	for (i = 0; i < l->n; i++) {
		if (!qos_reserve_live(&l->r[i], now))
			continue;
		sum += l->r[i].police_bps;
		(*n)++;
	}
	return sum;
}

void qos_reserve_purge(struct qos_rules *l, uint64_t now)
{
	size_t i, j;

	for (i = j = 0; i < l->n; i++)
		if (!l->r[i].reserve || qos_reserve_live(&l->r[i], now))
			l->r[j++] = l->r[i];
	l->n = j;
}

const char *qos_meta_class_name(const struct qos_meta *meta, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < meta->nclasses && i < QOS_MAX_CLASSES; i++)
		if (meta->classes[i].id == id)
			return meta->classes[i].name;
	return NULL;
}

void qos_reserve_bind(struct qos_rule *r, const struct qos_meta *meta)
{
	r->reserve = true;
	r->profile = false;
	r->class_id = meta->reserve_class;
	snprintf(r->class_name, sizeof(r->class_name), "%s",
		 qos_meta_class_name(meta, meta->reserve_class) ?: "?");
	r->police_act.type = meta->reserve_exceed;
	r->police_act.arg = meta->reserve_exceed == QOS_PA_DEMOTE ? meta->default_class : 0;
	snprintf(r->police_demote, sizeof(r->police_demote), "%s",
		 meta->reserve_exceed == QOS_PA_DEMOTE ?
		 qos_meta_class_name(meta, meta->default_class) ?: "?" : "");
}

int qos_reserve_fit(struct qos_rules *l, const struct qos_meta *meta, const char *dev,
		    const char *why, char *err, size_t errlen)
{
	char a[32], b[32], c[32];
	uint64_t now = qos_boottime_ns(), sum;
	size_t i, n;

	qos_reserve_purge(l, now);
	sum = qos_reserve_sum(l, now, &n);
	if (!n)
		return 0;
	if (!meta->reserve_class) {
		snprintf(err, errlen,
			 "dev %s: %s: profile %s has no reserve-class, and %zu reservation%s "
			 "(%s) would be left without one", dev, why, meta->profile, n,
			 n == 1 ? "" : "s", qos_fmt_rate(sum, a, sizeof(a)));
		return -ENOSPC;
	}
	if (sum > meta->reserve_cap_bps) {
		snprintf(err, errlen,
			 "dev %s: %s: reservations would take %s of class %s, which admits %s "
			 "(its ceiling %s less %u%% headroom)", dev, why,
			 qos_fmt_rate(sum, a, sizeof(a)), qos_meta_class_name(meta, meta->reserve_class) ?: "?",
			 qos_fmt_rate(meta->reserve_cap_bps, b, sizeof(b)),
			 qos_fmt_rate(meta->reserve_ceil_bps, c, sizeof(c)),
			 meta->reserve_headroom_pct);
		return -ENOSPC;
	}
	for (i = 0; i < l->n; i++)
		if (l->r[i].reserve)
			qos_reserve_bind(&l->r[i], meta);
	return 0;
}
