// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * qosctl validate and list: profiles, without touching the kernel; and the
 * profile names the other commands suggest and complete.
 */
#include <dirent.h>
#include <errno.h>
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
#include "out/profiles.h"

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
	ret = qos_validate_print(stdout, opt.json, &p, bps, mtu, a.mtu, plan);
	if (ret)
		qos_err("validate: %s", strerror(-ret));
	qos_profile_free(&p);
	return ret;
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

/* The strings of one row of `list`. */
struct list_buf {
	char path[PATH_MAX + NAME_MAX + 2];
	char hidden[PATH_MAX + NAME_MAX + 2];
	char desc[512];
};

/* The rows of `list`: descriptions loaded where they are printed (text
 * leaves them out for hidden profiles). */
static void list_rows(const struct qos_profile_scan *ps, struct qos_profile_row *rows,
		      struct list_buf *b)
{
	size_t i;

	for (i = 0; i < ps->n; i++) {
		const struct qos_profile_entry *pr = &ps->p[i];
		struct qos_profile_row *e = &rows[i];

		snprintf(b[i].path, sizeof(b[i].path), "%s/%s", ps->dir[pr->dir].path, pr->name);
		*e = (struct qos_profile_row){ .name = pr->name, .dir = pr->dir,
					       .path = b[i].path, .desc = b[i].desc };
		if (pr->hidden_by >= 0) {
			const struct qos_profile_entry *h = &ps->p[pr->hidden_by];

			snprintf(b[i].hidden, sizeof(b[i].hidden), "%s/%s", ps->dir[h->dir].path,
				 h->name);
			e->hidden_by = b[i].hidden;
		}
		if (opt.json || !e->hidden_by)
			e->ok = qos_profile_desc(ps, pr, b[i].desc, sizeof(b[i].desc));
	}
}

static int list_print(const struct qos_profile_scan *ps)
{
	struct qos_profile_dir_row dirs[QOS_PROFILE_DIRS];
	struct qos_profile_row *rows = calloc(ps->n ?: 1, sizeof(*rows));
	struct list_buf *b = calloc(ps->n ?: 1, sizeof(*b));
	int d, ret = -ENOMEM;

	if (rows && b) {
		for (d = 0; d < ps->ndirs; d++)
			dirs[d] = (struct qos_profile_dir_row){ .path = ps->dir[d].path,
								.origin = ps->dir[d].origin,
								.err = ps->dir[d].err };
		list_rows(ps, rows, b);
		ret = qos_profiles_print(stdout, opt.json, dirs, ps->ndirs, rows, ps->n);
	}
	free(rows);
	free(b);
	return ret;
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
	ret = list_print(&ps);
	if (ret)
		qos_err("list: %s", strerror(-ret));
	qos_profiles_free(&ps);
	return ret;
}
