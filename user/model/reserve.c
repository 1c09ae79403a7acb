// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Admission control for Premium IP reservations: plain arithmetic on a rule
 * list and the profile's figures in the device's qos_meta.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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

/* qos_parse_time()'s units, and hours and days. */
static int parse_duration(const char *s, uint64_t *ns)
{
	unsigned long long n;
	char *end;

	n = strtoull(s, &end, 10);
	if (end != s && (!strcmp(end, "h") || !strcmp(end, "d")) && n <= 3650 * 24) {
		*ns = n * 3600ULL * 1000000000ULL * (*end == 'd' ? 24 : 1);
		return 0;
	}
	return qos_parse_time(s, ns);
}

/* The reservation's words, mapped onto a rule's keys. */
int qos_reserve_req_set(struct qos_reserve_req *q, const char *key, const char *val, char *err,
			size_t errlen)
{
	static const char *const pass[] = { "src", "dst", "flowlabel", "proto", "sport", "dport" };
	const char *rkey = NULL;
	char msg[256];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pass) && !rkey; i++)
		if (!strcmp(key, pass[i]))
			rkey = key;
	if (!strcmp(key, "rate"))
		rkey = "police";
	else if (!strcmp(key, "burst"))
		rkey = "burst";
	else if (!strcmp(key, "id"))
		rkey = "name";
	if (!strcmp(key, "for")) {
		if (parse_duration(val, &q->for_ns) || !q->for_ns) {
			snprintf(err, errlen, "for: '%s' is not a duration (30s, 10m, 2h)", val);
			return -EINVAL;
		}
		return 0;
	}
	if (!rkey) {
		snprintf(err, errlen, "'%s' is not a key of a reservation", key);
		return -EINVAL;
	}
	if (qos_rule_set(&q->r, rkey, val, msg, sizeof(msg))) {
		snprintf(err, errlen, "%s: %s", key, msg);
		return -EINVAL;
	}
	return 0;
}

/* Request @i of a reservation file into @q and its device into *@dev. */
static int read_request(json_object *e, size_t i, const char *path, struct qos_reserve_req *q,
			const char **dev, char *err, size_t errlen)
{
	char msg[384];

	qos_rule_init(&q->r);
	if (!json_object_is_type(e, json_type_object)) {
		snprintf(err, errlen, "%s: reservations[%zu]: not an object", path, i);
		return -EINVAL;
	}
	json_object_object_foreach(e, key, val) {
		const char *v = json_object_get_string(val);

		if (!json_object_is_type(val, json_type_string) &&
		    !json_object_is_type(val, json_type_int)) {
			snprintf(err, errlen, "%s: reservations[%zu].%s: not a string or a number",
				 path, i, key);
			return -EINVAL;
		}
		if (!strcmp(key, "dev")) {
			*dev = v;
		} else if (qos_reserve_req_set(q, key, v, msg, sizeof(msg))) {
			snprintf(err, errlen, "%s: reservations[%zu].%s", path, i, msg);
			return -EINVAL;
		}
	}
	if (!*dev) {
		snprintf(err, errlen, "%s: reservations[%zu]: no \"dev\"", path, i);
		return -EINVAL;
	}
	return 0;
}

int qos_reserve_file_parse(json_object *root, const char *path, struct qos_reserve_req **qsp,
			   const char ***devsp, size_t *np, char *err, size_t errlen)
{
	struct qos_reserve_req *qs = NULL;
	const char **devs = NULL;
	json_object *arr = root;
	size_t n, i;
	int ret = 0;

	if (json_object_is_type(root, json_type_object) &&
	    !json_object_object_get_ex(root, "reservations", &arr)) {
		snprintf(err, errlen, "%s: no \"reservations\" array", path);
		return -EINVAL;
	}
	if (!json_object_is_type(arr, json_type_array)) {
		snprintf(err, errlen, "%s: reservations: not an array", path);
		return -EINVAL;
	}
	n = json_object_array_length(arr);
	qs = calloc(n ?: 1, sizeof(*qs));
	devs = calloc(n ?: 1, sizeof(*devs));
	if (!qs || !devs) {
		ret = -ENOMEM;
		snprintf(err, errlen, "%s", strerror(-ret));
	}
	for (i = 0; i < n && !ret; i++)
		ret = read_request(json_object_array_get_idx(arr, i), i, path, &qs[i], &devs[i], err,
				   errlen);
	if (ret) {
		free(qs);
		free(devs);
		return ret;
	}
	*qsp = qs;
	*devsp = devs;
	*np = n;
	return 0;
}
