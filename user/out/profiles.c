// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * `qosctl list` and `qosctl validate`: profiles, text and JSON from the
 * same calls (out/print.h).
 */
#include <errno.h>
#include <string.h>

#include "lib/util.h"
#include "out/dryrun.h"
#include "out/print.h"
#include "out/profiles.h"

static void profile_print(struct qos_pr *p, const struct qos_profile_dir_row *dirs,
			  const struct qos_profile_row *e)
{
	const struct qos_profile_dir_row *d = &dirs[e->dir];

	qos_pr_open_object(p, NULL);
	qos_pr_string(p, QP_ANY, "name", "  %-16s ", e->name);
	qos_pr_string(p, QP_JSON, "path", NULL, e->path);
	qos_pr_string(p, QP_JSON, "origin", NULL, d->origin);
	if (e->hidden_by) {
		/* Text leaves out what the profile found first hides. */
		qos_pr_string(p, QP_JSON, e->ok ? "description" : "error", NULL, e->desc);
		qos_pr_string(p, QP_ANY, "hidden_by", "hidden by %s\n", e->hidden_by);
	} else if (e->ok) {
		qos_pr_string(p, QP_ANY, "description", "%s\n", e->desc);
	} else {
		qos_pr_string(p, QP_JSON, "error", NULL, e->desc);
		qos_pr_text(p, "invalid: see 'qosctl validate %s/%s'\n", d->path, e->name);
	}
	qos_pr_close_object(p);
}

int qos_profiles_print(FILE *f, bool json, const struct qos_profile_dir_row *dirs, int ndirs,
		       const struct qos_profile_row *prof, size_t n)
{
	struct qos_pr *p = qos_pr_open(f, json);
	size_t i;
	int d;

	if (!p)
		return -ENOMEM;
	qos_pr_open_array(p, "directories");
	for (d = 0; d < ndirs; d++) {
		qos_pr_open_object(p, NULL);
		qos_pr_string(p, QP_ANY, "path", "%s ", dirs[d].path);
		qos_pr_string(p, QP_ANY, "origin", "(%s)", dirs[d].origin);
		qos_pr_bool(p, QP_JSON, "exists", NULL, !dirs[d].err);
		if (dirs[d].err)
			qos_pr_string(p, QP_ANY, "error", ": %s", strerror(dirs[d].err));
		qos_pr_nl(p);
		qos_pr_close_object(p);
		/* In text, each directory's profiles under it. */
		for (i = 0; !json && i < n; i++)
			if (prof[i].dir == d)
				profile_print(p, dirs, &prof[i]);
	}
	qos_pr_close_array(p);
	qos_pr_open_array(p, "profiles");
	for (i = 0; json && i < n; i++)
		profile_print(p, dirs, &prof[i]);
	qos_pr_close_array(p);
	return qos_pr_close(p);
}

int qos_validate_print(FILE *f, bool json, const struct qos_profile *prof, uint64_t bps,
		       uint32_t mtu, bool mtu_given, const struct qos_class_plan *plan)
{
	struct qos_pr *p = qos_pr_open(f, json);
	unsigned int i;

	if (!p)
		return -ENOMEM;
	qos_pr_string(p, QP_JSON, "profile", NULL, prof->name);
	qos_pr_string(p, QP_ANY, "path", "%s: ok ", prof->path);
	qos_pr_string(p, QP_JSON, "description", NULL, prof->description);
	qos_pr_string(p, QP_JSON, "scheduler", NULL, qos_sched_name(prof->sched));
	if (bps)
		qos_pr_u64(p, QP_JSON, "rate_bps", NULL, bps);
	qos_pr_text(p, "(%u classes, %zu rules; ", prof->nclasses, prof->rules.n);
	qos_pr_u32(p, QP_ANY, "mtu", "bursts checked at MTU %u", mtu);
	qos_pr_text(p, "%s)\n", mtu_given ? "" : ", assumed: give 'mtu N'");
	qos_pr_open_array(p, "classes");
	for (i = 0; json && i < prof->nclasses; i++) {
		qos_pr_open_object(p, NULL);
		qos_pr_string(p, QP_JSON, "name", NULL, prof->classes[i].name);
		qos_pr_u32(p, QP_JSON, "id", NULL, prof->classes[i].id);
		if (bps) {
			qos_pr_u64(p, QP_JSON, "rate_bps", NULL, plan[i].rate_bps);
			qos_pr_u64(p, QP_JSON, "ceil_bps", NULL, plan[i].ceil_bps);
		}
		qos_pr_close_object(p);
	}
	qos_pr_close_array(p);
	qos_pr_u64(p, QP_JSON, "rules", NULL, prof->rules.n);
	if (!json)
		qos_print_mem(f, "", prof->rule_entries);
	return qos_pr_close(p);
}
