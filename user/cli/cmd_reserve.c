// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * qosctl reserve add|del|list dev IFACE ..., reserve apply FILE: Premium IP
 * reservations with admission control (Documentation/assurance.rst). A
 * reservation is a rule of the profile's reserve-class with a policer of its
 * own at the reserved rate, changed through the same transaction as rule
 * add (txn/txn.c); model/reserve.c admits it and does the arithmetic.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include <json-c/json.h>

#include "cli/cli.h"
#include "kernel/rulemap.h"
#include "lib/names.h"
#include "lib/util.h"
#include "model/reserve.h"
#include "txn/txn.h"

/*
 * Change the reservations of @name: open it locked, with its rules and no
 * expired reservations, let @fn change them, and commit the rules in one
 * transaction.
 */
static int change_dev(const char *name, int (*fn)(struct qos_admission *a, void *arg, char *err,
						  size_t errlen),
		      void *arg, char *err, size_t errlen)
{
	struct qos_rules cur = {};
	struct qos_admission a;
	struct qos_dev dev;
	int ret;

	ret = cli_open_rules(&dev, name, &cur, true, err, errlen);
	if (ret)
		return ret;
	qos_reserve_purge(&cur, qos_boottime_ns());
	ret = qos_admission_init(&a, &cur, &dev.cfg.meta, name);
	if (ret)
		snprintf(err, errlen, "%s", strerror(-ret));
	ret = ret ?: fn(&a, arg, err, errlen);
	ret = ret ?: qos_txn_rules(&dev, &cur, err, errlen);
	qos_admission_free(&a);
	qos_rules_free(&cur);
	qos_txn_close(&dev);
	return ret;
}

static int add_one(struct qos_admission *a, void *arg, char *err, size_t errlen)
{
	return qos_admission_add(a, arg, false, err, errlen);
}

static int reserve_add(const char *name, int argc, char **argv, char *err, size_t errlen)
{
	struct qos_reserve_req q = {};
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
	ret = change_dev(name, add_one, &q, err, errlen);
	if (!ret)
		printf("dev %s: reservation %s\n", name, q.r.name);
	return ret;
}

static int del_one(struct qos_admission *a, void *arg, char *err, size_t errlen)
{
	struct qos_rule *r = qos_resv_index_find(&a->names, arg);
	struct qos_rules *cur = a->cur;

	if (!r) {
		snprintf(err, errlen, "dev %s: no reservation %s", a->dev, (const char *)arg);
		return -ENOENT;
	}
	memmove(r, r + 1, (cur->n - (r - cur->r) - 1) * sizeof(*r));
	cur->n--;
	return 0;
}

static int reserve_del(const char *name, int argc, char **argv, char *err, size_t errlen)
{
	if (argc != 2 || strcmp(argv[0], "id")) {
		snprintf(err, errlen, "say which reservation: id NAME");
		return -EINVAL;
	}
	return change_dev(name, del_one, argv[1], err, errlen);
}

static void list_json(const struct qos_rules *cur, const struct qos_meta *meta, uint64_t now,
		      const struct qos_resv_class *c, const struct qos_resv_sum *s,
		      const char *dev)
{
	uint64_t sum = s->rate_bps;
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
	json_object_object_add(o, "delay_bound_us", json_object_new_uint64(c->delay_ns / 1000));
	json_object_object_add(o, "queue_bytes", json_object_new_uint64(qos_resv_queue_bytes(c)));
	json_object_object_add(o, "max_packet_bytes", json_object_new_uint64(c->max_pkt));
	json_object_object_add(o, "reserved_burst_bytes", json_object_new_uint64(s->burst));
	json_object_object_add(o, "worst_delay_us",
			       json_object_new_uint64(qos_resv_delay_ns(c, s) / 1000));
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

static int sweep(struct qos_admission *a, void *arg, char *err, size_t errlen)
{
	return 0;
}

/*
 * Open @name to read its rules; expired reservations found there are
 * deleted first, under the lock, by one transaction: a reader sees them
 * gone rather than waiting for the next change. Should that fail (an
 * apply waiting for its confirmation), the list is read as it is, the
 * expired ones shown as such.
 */
static int open_swept(struct qos_dev *dev, const char *name, struct qos_rules *cur, char *err,
		      size_t errlen)
{
	struct qos_rules copy;
	int ret = cli_open_rules(dev, name, cur, false, err, errlen);
	size_t gone;

	if (ret)
		return ret;
	copy = *cur;
	gone = qos_reserve_purge(&copy, qos_boottime_ns());
	if (!gone)
		return 0;
	qos_rules_free(cur);
	qos_dev_close(dev);
	change_dev(name, sweep, NULL, err, errlen);
	return cli_open_rules(dev, name, cur, false, err, errlen);
}

static int reserve_list(const char *name, int argc, char **argv, char *err, size_t errlen)
{
	char a[32], b[32], c[32], match[256], left[32], esc[QOS_ESC_LEN];
	uint64_t now = qos_boottime_ns(), sum;
	struct qos_rules cur = {};
	struct qos_dev dev;
	const struct qos_meta *meta;
	struct qos_resv_class rc;
	struct qos_resv_sum s;
	size_t i;
	int ret;

	if (argc) {
		cli_unknown_key(cli_cur, "reserve list", argv[0]);
		return ERR_SHOWN;
	}
	ret = open_swept(&dev, name, &cur, err, errlen);
	if (ret)
		return ret;
	meta = &dev.cfg.meta;
	rc = qos_resv_class_of(meta);
	s = qos_reserve_sum(&cur, &rc, now);
	sum = s.rate_bps;
	if (opt.json) {
		list_json(&cur, meta, now, &rc, &s, name);
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
	printf("delay bound %llu us, worst case of the admitted bursts %llu us\n",
	       (unsigned long long)(rc.delay_ns / 1000),
	       (unsigned long long)(qos_resv_delay_ns(&rc, &s) / 1000));
	printf("%-12s %-10s %-8s %-9s %14s %16s  %s\n", "id", "rate", "burst", "expires", "packets",
	       "bytes", "match");
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
		/* Names are checked where they enter, but a rule map is
		 * anyone's with CAP_SYS_ADMIN: never a raw byte to a terminal. */
		printf("%-12s %-10s %-8llu %-9s %14llu %16llu  %s\n",
		       qos_esc(r->name, esc, sizeof(esc)), qos_fmt_rate(r->police_bps, a, sizeof(a)),
		       (unsigned long long)r->police_burst, left,
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

/* The requests of a file on one device, from the first. */
struct dev_requests {
	const char *dev;
	const char **devs;
	struct qos_reserve_req *qs;
	size_t first, n, k;
};

static int add_file(struct qos_admission *a, void *arg, char *err, size_t errlen)
{
	struct dev_requests *d = arg;
	size_t j;
	int ret = 0;

	for (j = d->first; j < d->n && !ret; j++) {
		if (strcmp(d->devs[j], d->dev))
			continue;
		ret = qos_admission_add(a, &d->qs[j], true, err, errlen);
		d->k++;
	}
	return ret;
}

/* The requests from @first on whose device is @dev, in one transaction. */
static int apply_dev(const char *dev, const char **devs, struct qos_reserve_req *qs, size_t first,
		     size_t n, char *err, size_t errlen)
{
	struct dev_requests d = { dev, devs, qs, first, n, 0 };
	int ret = change_dev(dev, add_file, &d, err, errlen);

	if (!ret)
		printf("dev %s: %zu reservation%s in force\n", dev, d.k, d.k == 1 ? "" : "s");
	return ret;
}

/*
 * More requests for device @devs[@first] than it has room for, whatever
 * it holds: refused before any device is changed. Each reservation takes
 * a rule and a policer of its own; the rule policers are as many as the
 * rule table's entries, so the table is the limit.
 */
static int check_room(const char *path, const char **devs, size_t first, size_t n, char *err,
		      size_t errlen)
{
	struct qos_dev d;
	size_t j, k = 0;
	uint32_t rules;
	int ret;

	for (j = first; j < n; j++)
		k += !strcmp(devs[j], devs[first]);
	ret = qos_txn_open_read(&d, devs[first], err, errlen);
	if (ret)
		return ret;
	rules = d.applied && d.have_cfg ? d.cfg.meta.rule_entries - 1 : 0;
	qos_txn_close(&d);
	if (k <= rules)
		return 0;
	snprintf(err, errlen,
		 "%s: %zu requests for dev %s, which holds at most %u reservations (its rule "
		 "table): nothing changed", path, k, devs[first], rules);
	return -ENOSPC;
}

/* Each device of @devs once, in order of its first request: @fn on it. */
static int each_dev(const char *path, const char **devs, struct qos_reserve_req *qs, size_t n, bool room,
		    char *err, size_t errlen)
{
	size_t i, j;
	int ret = 0;

	for (i = 0; i < n && !ret; i++) {
		for (j = 0; j < i && strcmp(devs[j], devs[i]); j++)
			;
		if (j < i)
			continue;
		ret = room ? check_room(path, devs, i, n, err, errlen) :
			     apply_dev(devs[i], devs, qs, i, n, err, errlen);
	}
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
	size_t n = 0;
	int ret;

	root = json_object_from_file(path);
	if (!root) {
		snprintf(err, errlen, "%s: %s", path, json_util_get_last_err() ?: "not JSON");
		return -EINVAL;
	}
	ret = qos_reserve_file_parse(root, path, &qs, &devs, &n, err, errlen);
	ret = ret ?: each_dev(path, devs, qs, n, true, err, errlen);
	ret = ret ?: each_dev(path, devs, qs, n, false, err, errlen);
	free(qs);
	free(devs);
	json_object_put(root);
	return ret;
}

int do_reserve_apply(int argc, char **argv)
{
	struct stat st;
	char err[512];
	int ret;

	if (argc != 1 || !*argv[0]) {
		qos_err("reserve apply: give one FILE");
		return -1;
	}
	if (!stat(argv[0], &st) && st.st_size > QOS_RESERVE_FILE_MAX) {
		qos_err("reserve apply: %s: %lld bytes, more than the %u a file may have: nothing "
			"changed", argv[0], (long long)st.st_size, QOS_RESERVE_FILE_MAX);
		return -1;
	}
	ret = apply_file(argv[0], err, sizeof(err));
	if (ret)
		qos_err("reserve apply: %s", err);
	return ret ? -1 : 0;
}
