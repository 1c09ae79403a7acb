// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * qosctl reserve add|del|list dev IFACE ..., reserve apply FILE: Premium IP
 * reservations with admission control (Documentation/assurance.rst). A
 * reservation is a rule of the profile's reserve-class with a policer of its
 * own at the reserved rate, changed through the same transaction as rule
 * add (txn/txn.c); model/reserve.c does the arithmetic.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cli/cli.h"
#include "kernel/rulemap.h"
#include "lib/util.h"
#include "model/reserve.h"
#include "txn/txn.h"

static struct qos_rule *find(struct qos_rules *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->r[i].reserve && !strcmp(l->r[i].name, name))
			return &l->r[i];
	return NULL;
}

static void unique_name(const struct qos_rules *l, char *name, size_t len)
{
	unsigned int n;
	size_t i;

	for (n = 1;; n++) {
		snprintf(name, len, "r%u", n);
		for (i = 0; i < l->n && strcmp(l->r[i].name, name); i++)
			;
		if (i == l->n)
			return;
	}
}

/*
 * Admit @q into @cur, the device's rules (expired reservations already
 * dropped): a reservation of the same id is replaced if @replace, else
 * refused. On refusal @err has the numbers.
 */
static int admit(struct qos_rules *cur, const struct qos_meta *meta, struct qos_reserve_req *q,
		 bool replace, const char *dev, char *err, size_t errlen)
{
	char a[32], b[32], c[32], d[32], e[32], msg[256];
	struct qos_rule *old = NULL;
	uint64_t now = qos_boottime_ns(), sum, free_bps;
	const char *key;
	size_t n;

	if (!meta->reserve_class) {
		snprintf(err, errlen,
			 "dev %s: profile %s has no reserve-class: reservations need one",
			 dev, meta->profile);
		return -EOPNOTSUPP;
	}
	if (!q->r.police_bps) {
		snprintf(err, errlen, "rate: a reservation needs a rate");
		return -EINVAL;
	}
	if (!q->r.name[0])
		unique_name(cur, q->r.name, sizeof(q->r.name));
	old = find(cur, q->r.name);
	if (old && !replace) {
		snprintf(err, errlen, "dev %s: reservation %s exists (reserve del first)", dev,
			 q->r.name);
		return -EEXIST;
	}
	qos_reserve_bind(&q->r, meta);
	if (qos_rule_check(&q->r, &key, msg, sizeof(msg))) {
		snprintf(err, errlen, "%s: %s", key, msg);
		return -EINVAL;
	}
	q->r.expires_ns = q->for_ns ? now + q->for_ns : 0;

	sum = qos_reserve_sum(cur, now, &n);
	if (old) {
		sum -= old->police_bps;
		n--;
	}
	free_bps = meta->reserve_cap_bps > sum ? meta->reserve_cap_bps - sum : 0;
	if (q->r.police_bps > free_bps) {
		snprintf(err, errlen,
			 "dev %s: reservation %s of %s refused: class %s admits %s (ceiling %s less "
			 "%u%% headroom), %s is reserved by %zu reservation%s, %s is free", dev,
			 q->r.name, qos_fmt_rate(q->r.police_bps, a, sizeof(a)), q->r.class_name,
			 qos_fmt_rate(meta->reserve_cap_bps, b, sizeof(b)),
			 qos_fmt_rate(meta->reserve_ceil_bps, c, sizeof(c)),
			 meta->reserve_headroom_pct, qos_fmt_rate(sum, d, sizeof(d)), n,
			 n == 1 ? "" : "s", qos_fmt_rate(free_bps, e, sizeof(e)));
		return -ENOSPC;
	}
	if (old) {
		/* Same id, new terms: the rule keeps its place and policer
		 * slot only if its match is unchanged; simplest is anew. */
		*old = q->r;
		return 0;
	}
	return qos_rules_add(cur, &q->r);
}

/* Open @name locked, with its rules and no expired reservations. */
static int open_locked(struct qos_dev *dev, const char *name, struct qos_rules *cur, char *err,
		       size_t errlen)
{
	int ret = cli_open_rules(dev, name, cur, true, err, errlen);

	if (!ret)
		qos_reserve_purge(cur, qos_boottime_ns());
	return ret;
}

static int reserve_add(const char *name, int argc, char **argv, char *err, size_t errlen)
{
	struct qos_rules cur = {};
	struct qos_reserve_req q = {};
	struct qos_dev dev;
	int i, ret;

	qos_rule_init(&q.r);
	for (i = 0; i < argc; i += 2) {
		if (!cli_word(cli_cur, argv[i]) || !strcmp(argv[i], "dev")) {
			cli_unknown_key(cli_cur, "reserve add", argv[i]);
			return ERR_SHOWN;
		}
		if (i + 1 >= argc || !*argv[i + 1]) {
			snprintf(err, errlen, "'%s' needs a value", argv[i]);
			return -EINVAL;
		}
		ret = qos_reserve_req_set(&q, argv[i], argv[i + 1], err, errlen);
		if (ret)
			return ret;
	}
	ret = open_locked(&dev, name, &cur, err, errlen);
	if (ret)
		return ret;
	ret = admit(&cur, &dev.cfg.meta, &q, false, name, err, errlen);
	ret = ret ?: qos_txn_rules(&dev, &cur, err, errlen);
	if (!ret)
		printf("dev %s: reservation %s\n", name, q.r.name);
	qos_rules_free(&cur);
	qos_txn_close(&dev);
	return ret;
}

static int reserve_del(const char *name, int argc, char **argv, char *err, size_t errlen)
{
	struct qos_rules cur = {};
	struct qos_rule *r;
	struct qos_dev dev;
	int ret;

	if (argc != 2 || strcmp(argv[0], "id")) {
		snprintf(err, errlen, "say which reservation: id NAME");
		return -EINVAL;
	}
	ret = open_locked(&dev, name, &cur, err, errlen);
	if (ret)
		return ret;
	r = find(&cur, argv[1]);
	if (!r) {
		snprintf(err, errlen, "dev %s: no reservation %s", name, argv[1]);
		ret = -ENOENT;
	} else {
		memmove(r, r + 1, (cur.n - (r - cur.r) - 1) * sizeof(*r));
		cur.n--;
		ret = qos_txn_rules(&dev, &cur, err, errlen);
	}
	qos_rules_free(&cur);
	qos_txn_close(&dev);
	return ret;
}

static void list_json(const struct qos_rules *cur, const struct qos_meta *meta, uint64_t now,
		      uint64_t sum, const char *dev)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	char match[256];
	size_t i;

	json_object_object_add(o, "dev", json_object_new_string(dev));
	json_object_object_add(o, "class", meta->reserve_class ?
			       json_object_new_string(qos_meta_class_name(meta, meta->reserve_class) ?: "?") :
			       NULL);
	json_object_object_add(o, "ceil_bps", json_object_new_uint64(meta->reserve_ceil_bps));
	json_object_object_add(o, "headroom_pct", json_object_new_int(meta->reserve_headroom_pct));
	json_object_object_add(o, "admits_bps", json_object_new_uint64(meta->reserve_cap_bps));
	json_object_object_add(o, "reserved_bps", json_object_new_uint64(sum));
	json_object_object_add(o, "free_bps",
			       json_object_new_uint64(meta->reserve_cap_bps > sum ? meta->reserve_cap_bps - sum : 0));
	for (i = 0; i < cur->n; i++) {
		const struct qos_rule *r = &cur->r[i];
		json_object *e;

		if (!r->reserve)
			continue;
		e = json_object_new_object();
		json_object_object_add(e, "id", json_object_new_string(r->name));
		json_object_object_add(e, "match",
				       json_object_new_string(qos_rule_fmt_match(r, match,
										 sizeof(match))));
		json_object_object_add(e, "rate_bps", json_object_new_uint64(r->police_bps));
		json_object_object_add(e, "burst_bytes", json_object_new_uint64(r->police_burst));
		json_object_object_add(e, "expires_in_s", r->expires_ns ?
				       json_object_new_int64(r->expires_ns > now ?
							     (int64_t)((r->expires_ns - now) / 1000000000ULL) : 0) :
				       NULL);
		json_object_object_add(e, "expired",
				       json_object_new_boolean(!qos_reserve_live(r, now)));
		json_object_object_add(e, "packets", json_object_new_uint64(r->hits.packets));
		json_object_object_add(e, "bytes", json_object_new_uint64(r->hits.bytes));
		json_object_array_add(a, e);
	}
	json_object_object_add(o, "reservations", a);
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
						      JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static int reserve_list(const char *name, int argc, char **argv, char *err, size_t errlen)
{
	char a[32], b[32], c[32], match[256], left[32];
	uint64_t now = qos_boottime_ns(), sum;
	struct qos_rules cur = {};
	struct qos_dev dev;
	const struct qos_meta *meta;
	size_t i, n;
	int ret;

	if (argc) {
		cli_unknown_key(cli_cur, "reserve list", argv[0]);
		return ERR_SHOWN;
	}
	ret = cli_open_rules(&dev, name, &cur, false, err, errlen);
	if (ret)
		return ret;
	meta = &dev.cfg.meta;
	sum = qos_reserve_sum(&cur, now, &n);
	if (opt.json) {
		list_json(&cur, meta, now, sum, name);
		goto out;
	}
	if (!meta->reserve_class) {
		printf("dev %s: profile %s takes no reservations (no reserve-class)\n", name,
		       meta->profile);
		goto out;
	}
	printf("dev %s: class %s admits %s (ceiling %s less %u%%): %s reserved, %s free\n", name,
	       qos_meta_class_name(meta, meta->reserve_class) ?: "?",
	       qos_fmt_rate(meta->reserve_cap_bps, a, sizeof(a)),
	       qos_fmt_rate(meta->reserve_ceil_bps, b, sizeof(b)), meta->reserve_headroom_pct,
	       qos_fmt_rate(sum, c, sizeof(c)),
	       qos_fmt_rate(meta->reserve_cap_bps > sum ? meta->reserve_cap_bps - sum : 0, match,
			    sizeof(match)));
	printf("%-12s %-10s %-9s %14s %16s  %s\n", "id", "rate", "expires", "packets", "bytes",
	       "match");
	for (i = 0; i < cur.n; i++) {
		const struct qos_rule *r = &cur.r[i];

		if (!r->reserve)
			continue;
		if (!r->expires_ns)
			snprintf(left, sizeof(left), "never");
		else if (!qos_reserve_live(r, now))
			snprintf(left, sizeof(left), "expired");
		else
			snprintf(left, sizeof(left), "%llus",
				 (unsigned long long)((r->expires_ns - now) / 1000000000ULL));
		printf("%-12s %-10s %-9s %14llu %16llu  %s\n", r->name,
		       qos_fmt_rate(r->police_bps, a, sizeof(a)), left,
		       (unsigned long long)r->hits.packets, (unsigned long long)r->hits.bytes,
		       qos_rule_fmt_match(r, match, sizeof(match)));
	}
out:
	qos_rules_free(&cur);
	qos_dev_close(&dev);
	return 0;
}

int do_reserve_add(int argc, char **argv)
{
	return cli_on_dev(argc, argv, reserve_add);
}

int do_reserve_del(int argc, char **argv)
{
	return cli_on_dev(argc, argv, reserve_del);
}

int do_reserve_list(int argc, char **argv)
{
	return cli_on_dev(argc, argv, reserve_list);
}

/* The requests from @first on whose device is @dev, in one transaction. */
static int apply_dev(const char *dev, const char **devs, struct qos_reserve_req *qs, size_t first,
		     size_t n, char *err, size_t errlen)
{
	struct qos_rules cur = {};
	struct qos_dev d;
	size_t j, k = 0;
	int ret;

	ret = open_locked(&d, dev, &cur, err, errlen);
	if (ret)
		return ret;
	for (j = first; j < n && !ret; j++) {
		if (strcmp(devs[j], dev))
			continue;
		ret = admit(&cur, &d.cfg.meta, &qs[j], true, dev, err, errlen);
		k++;
	}
	ret = ret ?: qos_txn_rules(&d, &cur, err, errlen);
	if (!ret)
		printf("dev %s: %zu reservation%s in force\n", dev, k, k == 1 ? "" : "s");
	qos_rules_free(&cur);
	qos_txn_close(&d);
	return ret;
}

/*
 * reserve apply FILE: {"reservations": [{"dev": ..., "id": ..., "rate": ...,
 * ...}, ...]} (or the bare array), as a bandwidth broker would send. Every
 * request is checked before any device is touched; then each device gets
 * its requests in one transaction, all admitted or none. A request whose
 * id exists replaces that reservation, so sending the same file again
 * changes nothing. Devices are changed one after the other: a refusal on
 * one leaves those before it changed (each is named on stdout).
 */
static int apply_file(const char *path, char *err, size_t errlen)
{
	struct qos_reserve_req *qs = NULL;
	const char **devs = NULL;
	json_object *root;
	size_t n = 0, i, j;
	int ret;

	root = json_object_from_file(path);
	if (!root) {
		snprintf(err, errlen, "%s: %s", path, json_util_get_last_err() ?: "not JSON");
		return -EINVAL;
	}
	ret = qos_reserve_file_parse(root, path, &qs, &devs, &n, err, errlen);
	for (i = 0; i < n && !ret; i++) {
		for (j = 0; j < i && strcmp(devs[j], devs[i]); j++)
			;
		if (j == i)	/* the first request of its device */
			ret = apply_dev(devs[i], devs, qs, i, n, err, errlen);
	}
	free(qs);
	free(devs);
	json_object_put(root);
	return ret;
}

int do_reserve_apply(int argc, char **argv)
{
	char err[512];
	int ret;

	if (argc != 1 || !*argv[0]) {
		qos_err("reserve apply: give one FILE");
		return -1;
	}
	ret = apply_file(argv[0], err, sizeof(err));
	if (ret)
		qos_err("reserve apply: %s", err);
	return ret ? -1 : 0;
}
