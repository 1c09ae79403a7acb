// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Where profiles are found: the search path of profile directories, the
 * lookup of a name in it, and the scan of every directory (list,
 * suggestions, completion).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"
#include "model/profile.h"
#include "model/profile_path.h"
#include "qos_paths.h"

int qos_profile_dirs(int (*fn)(const char *dir, const char *origin, void *arg), void *arg)
{
	/* The installed qosctl never looks into a build tree: only the
	 * in-tree one defines qos_tree_profile_dir (user/intree.c). */
	const struct {
		const char *env;
		const char *dirs;
		const char *origin;
	} src[] = {
		{ "QOSCTL_PROFILE_DIR", NULL, "QOSCTL_PROFILE_DIR" },
		{ NULL, QOS_SYSCONFDIR "/qosctl/profiles", "local" },
		{ NULL, QOS_DATADIR "/tc-profiles", "built-in" },
		{ NULL, qos_tree_profile_dir, "built-in" },
	};
	size_t i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(src); i++) {
		const char *list = src[i].env ? getenv(src[i].env) : src[i].dirs;
		char *d, *save = NULL, buf[PATH_MAX];

		if (!list || strlen(list) >= sizeof(buf))
			continue;
		snprintf(buf, sizeof(buf), "%s", list);
		for (d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
			ret = fn(d, src[i].origin, arg);
			if (ret)
				return ret;
		}
	}
	return 0;
}

struct find_ctx {
	const char *name;
	char *path;
	size_t len;
};

static int find_in(const char *dir, const char *origin, void *arg)
{
	struct find_ctx *c = arg;

	if ((size_t)snprintf(c->path, c->len, "%s/%s", dir, c->name) >= c->len)
		return 0;
	return !access(c->path, R_OK);
}

int qos_profile_find(const char *name, char *path, size_t len)
{
	struct find_ctx c = { name, path, len };

	if (!*name || strlen(name) >= len)
		return -EINVAL;
	if (strchr(name, '/')) {
		snprintf(path, len, "%s", name);
		return access(path, R_OK) ? -errno : 0;
	}
	return qos_profile_dirs(find_in, &c) ? 0 : -ENOENT;
}

static int add_profile(struct qos_profile_scan *ps, const char *name, int dir)
{
	struct qos_profile_entry *np;
	size_t i;

	np = realloc(ps->p, (ps->n + 1) * sizeof(*ps->p));
	if (!np)
		return -ENOMEM;
	ps->p = np;
	np = &ps->p[ps->n];
	snprintf(np->name, sizeof(np->name), "%s", name);
	np->dir = dir;
	np->hidden_by = -1;
	for (i = 0; i < ps->n && np->hidden_by < 0; i++)
		if (!strcmp(ps->p[i].name, name))
			np->hidden_by = i;
	ps->n++;
	return 0;
}

/* One directory: its profiles, regular files (or links to them) whose
 * names qos_profile_find() would look up, dotfiles aside. */
static int scan_dir(const char *dir, const char *origin, void *arg)
{
	struct qos_profile_scan *ps = arg;
	struct dirent **ents;
	int d = ps->ndirs, i, n, ret = 0;

	if (d == QOS_PROFILE_DIRS)
		return 0;
	snprintf(ps->dir[d].path, sizeof(ps->dir[d].path), "%s", dir);
	ps->dir[d].origin = origin;
	ps->dir[d].err = 0;
	ps->ndirs++;
	n = scandir(dir, &ents, NULL, alphasort);
	if (n < 0) {
		ps->dir[d].err = errno;
		return 0;
	}
	for (i = 0; i < n; i++) {
		char full[PATH_MAX + NAME_MAX + 2];
		struct stat st;

		snprintf(full, sizeof(full), "%s/%s", dir, ents[i]->d_name);
		if (!ret && ents[i]->d_name[0] != '.' && !stat(full, &st) && S_ISREG(st.st_mode))
			ret = add_profile(ps, ents[i]->d_name, d);
		free(ents[i]);
	}
	free(ents);
	return ret;
}

int qos_profiles_scan(struct qos_profile_scan *ps)
{
	memset(ps, 0, sizeof(*ps));
	return qos_profile_dirs(scan_dir, ps);
}

void qos_profiles_free(struct qos_profile_scan *ps)
{
	free(ps->p);
	ps->p = NULL;
	ps->n = 0;
}

const char *qos_profile_desc(const struct qos_profile_scan *ps, const struct qos_profile_entry *pr,
			     char *buf, size_t len)
{
	static struct qos_profile p;
	char full[PATH_MAX + NAME_MAX + 2], err[512];
	int ret;

	snprintf(full, sizeof(full), "%s/%s", ps->dir[pr->dir].path, pr->name);
	ret = qos_profile_load(full, &p, err, sizeof(err));
	snprintf(buf, len, "%s", ret ? err : p.description);
	qos_profile_free(&p);
	return ret ? NULL : buf;
}

