// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * qosctl validate and list: profiles, without touching the kernel; and the
 * profile names the other commands suggest and complete.
 */
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "lib/suggest.h"
#include "lib/util.h"
#include "model/profile.h"
#include "model/profile_path.h"
#include "out/dryrun.h"

static void print_json(json_object *o)
{
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							  JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static json_object *validate_json(const struct qos_profile *p, uint64_t bps, uint32_t mtu,
				  const struct qos_class_plan *plan)
{
	json_object *o = json_object_new_object(), *cls = json_object_new_array();
	unsigned int i;

	json_object_object_add(o, "profile", json_object_new_string(p->name));
	json_object_object_add(o, "path", json_object_new_string(p->path));
	json_object_object_add(o, "description", json_object_new_string(p->description));
	json_object_object_add(o, "scheduler", json_object_new_string(qos_sched_name(p->sched)));
	if (bps)
		json_object_object_add(o, "rate_bps", json_object_new_uint64(bps));
	json_object_object_add(o, "mtu", json_object_new_uint64(mtu));
	for (i = 0; i < p->nclasses; i++) {
		json_object *c = json_object_new_object();

		json_object_object_add(c, "name", json_object_new_string(p->classes[i].name));
		json_object_object_add(c, "id", json_object_new_int64(p->classes[i].id));
		if (bps) {
			json_object_object_add(c, "rate_bps",
					       json_object_new_uint64(plan[i].rate_bps));
			json_object_object_add(c, "ceil_bps",
					       json_object_new_uint64(plan[i].ceil_bps));
		}
		json_object_array_add(cls, c);
	}
	json_object_object_add(o, "classes", cls);
	json_object_object_add(o, "rules", json_object_new_int64(p->rules.n));
	return o;
}

int do_validate(int argc, char **argv)
{
	struct qos_class_plan plan[QOS_MAX_CLASSES];
	static struct qos_profile p;
	struct args a = {};
	uint32_t mtu = QOS_MTU_DEFAULT;
	char err[512];
	uint64_t bps = 0;
	int ret;

	if (argc < 1) {
		qos_err("validate: missing PROFILE");
		return -EINVAL;
	}
	if (parse_kv(argc - 1, argv + 1, &a))
		return -EINVAL;
	if (a.rate && parse_link_rate(a.rate, &bps))
		return -EINVAL;
	if (a.mtu && (qos_parse_u32(a.mtu, &mtu) || mtu < QOS_MTU_MIN || mtu > QOS_MTU_MAX)) {
		qos_err("validate: mtu '%s': not an MTU (%u-%u)", a.mtu, QOS_MTU_MIN, QOS_MTU_MAX);
		return -EINVAL;
	}
	if (cli_check_profile("validate", argv[0]))
		return -ENOENT;
	ret = qos_profile_load(argv[0], &p, err, sizeof(err));
	if (!ret)
		qos_profile_check_mtu(&p, mtu);
	if (ret || (bps && qos_profile_resolve(&p, bps, mtu, plan, err, sizeof(err))) ||
	    qos_strict_check(err, sizeof(err))) {
		qos_err("validate: %s", err);
		qos_profile_free(&p);
		return -1;
	}
	if (opt.json)
		print_json(validate_json(&p, bps, mtu, plan));
	else
		printf("%s: ok (%u classes, %zu rules; bursts checked at MTU %u%s)\n", p.path,
		       p.nclasses, p.rules.n, mtu, a.mtu ? "" : ", assumed: give 'mtu N'");
	if (!opt.json)
		qos_print_mem(stdout, "", p.rule_entries);
	qos_profile_free(&p);
	return 0;
}

int cli_check_profile(const char *cmd, const char *name)
{
	static struct qos_profile_scan ps;
	char path[PATH_MAX], hint[256];
	struct qos_suggest s;
	size_t i;

	if (strchr(name, '/') || !qos_profile_find(name, path, sizeof(path)))
		return 0;
	qos_suggest_init(&s, name);
	if (!qos_profiles_scan(&ps))
		for (i = 0; i < ps.n; i++)
			qos_suggest_add(&s, ps.p[i].name);
	if (s.n)
		qos_suggest_fmt(&s, hint, sizeof(hint));
	else
		snprintf(hint, sizeof(hint), " (see 'qosctl list')");
	qos_err("%s: profile '%s': no such profile%s", cmd, name, hint);
	qos_profiles_free(&ps);
	return -ENOENT;
}

static json_object *list_json(const struct qos_profile_scan *ps)
{
	json_object *o = json_object_new_object();
	json_object *dirs = json_object_new_array(), *profs = json_object_new_array();
	char path[PATH_MAX + NAME_MAX + 2], desc[512];
	size_t i;
	int d;

	for (d = 0; d < ps->ndirs; d++) {
		json_object *jd = json_object_new_object();

		json_object_object_add(jd, "path", json_object_new_string(ps->dir[d].path));
		json_object_object_add(jd, "origin", json_object_new_string(ps->dir[d].origin));
		json_object_object_add(jd, "exists", json_object_new_boolean(!ps->dir[d].err));
		if (ps->dir[d].err)
			json_object_object_add(jd, "error",
					       json_object_new_string(strerror(ps->dir[d].err)));
		json_object_array_add(dirs, jd);
	}
	for (i = 0; i < ps->n; i++) {
		const struct qos_profile_entry *pr = &ps->p[i];
		json_object *jp = json_object_new_object();
		bool ok = qos_profile_desc(ps, pr, desc, sizeof(desc));

		snprintf(path, sizeof(path), "%s/%s", ps->dir[pr->dir].path, pr->name);
		json_object_object_add(jp, "name", json_object_new_string(pr->name));
		json_object_object_add(jp, "path", json_object_new_string(path));
		json_object_object_add(jp, "origin", json_object_new_string(ps->dir[pr->dir].origin));
		json_object_object_add(jp, ok ? "description" : "error", json_object_new_string(desc));
		if (pr->hidden_by >= 0) {
			const struct qos_profile_entry *h = &ps->p[pr->hidden_by];

			snprintf(path, sizeof(path), "%s/%s", ps->dir[h->dir].path, h->name);
			json_object_object_add(jp, "hidden_by", json_object_new_string(path));
		}
		json_object_array_add(profs, jp);
	}
	json_object_object_add(o, "directories", dirs);
	json_object_object_add(o, "profiles", profs);
	return o;
}

/* Each directory in search order, then its profiles: a profile found
 * earlier under the same name hides it. */
static void list_text(const struct qos_profile_scan *ps)
{
	char desc[512];
	size_t i;
	int d;

	for (d = 0; d < ps->ndirs; d++) {
		printf("%s (%s)%s%s\n", ps->dir[d].path, ps->dir[d].origin,
		       ps->dir[d].err ? ": " : "", ps->dir[d].err ? strerror(ps->dir[d].err) : "");
		for (i = 0; i < ps->n; i++) {
			const struct qos_profile_entry *pr = &ps->p[i], *h;

			if (pr->dir != d)
				continue;
			if (pr->hidden_by >= 0) {
				h = &ps->p[pr->hidden_by];
				printf("  %-16s hidden by %s/%s\n", pr->name, ps->dir[h->dir].path,
				       h->name);
				continue;
			}
			if (qos_profile_desc(ps, pr, desc, sizeof(desc)))
				printf("  %-16s %s\n", pr->name, desc);
			else
				printf("  %-16s invalid: see 'qosctl validate %s/%s'\n", pr->name,
				       ps->dir[d].path, pr->name);
		}
	}
}

int do_list(int argc, char **argv)
{
	static struct qos_profile_scan ps;
	int ret;

	if (argc) {
		qos_err("list: unexpected argument '%s'", argv[0]);
		return -EINVAL;
	}
	ret = qos_profiles_scan(&ps);
	if (ret) {
		qos_err("list: %s", strerror(-ret));
		qos_profiles_free(&ps);
		return ret;
	}
	if (opt.json)
		print_json(list_json(&ps));
	else
		list_text(&ps);
	qos_profiles_free(&ps);
	return 0;
}
