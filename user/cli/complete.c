// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * qosctl __complete WORD... CURRENT: what may come at CURRENT, one
 * "candidate<TAB>description" per line, for completion/qosctl.bash and
 * completion/_qosctl. Commands, keys and options come from the command
 * table; profiles from the profile directories, interfaces from this
 * network namespace, classes from the profile applied on the "dev" given.
 * Hidden: not a command of the table, not in the usage.
 */
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "kernel/dev.h"
#include "model/profile_path.h"

static const char *cur;

static void cand(const char *word, const char *desc)
{
	if (strncmp(word, cur, strlen(cur)))
		return;
	if (desc && *desc)
		printf("%s\t%s\n", word, desc);
	else
		printf("%s\n", word);
}

static void cands_cmds(const struct cli_cmd *table)
{
	for (; table->name; table++)
		cand(table->name, table->summary);
}

static void cands_opts(const struct cli_cmd *cmd)
{
	char name[48];
	int o;

	for (o = 0; o < O_MAX; o++) {
		if (cmd && !((cmd->opts | O_GLOBAL) & O_BIT(o)))
			continue;
		snprintf(name, sizeof(name), "--%s", cli_opts[o].name);
		cand(name, cli_opts[o].help);
	}
}

static void cands_ifaces(void)
{
	struct if_nameindex *ifs = if_nameindex(), *i;

	for (i = ifs; i && i->if_index; i++)
		cand(i->if_name, NULL);
	if (ifs)
		if_freenameindex(ifs);
}

static void cands_profiles(void)
{
	static struct qos_profile_scan ps;
	char desc[512];
	size_t i;

	if (qos_profiles_scan(&ps))
		return;
	for (i = 0; i < ps.n; i++)
		if (ps.p[i].hidden_by < 0)
			cand(ps.p[i].name, qos_profile_desc(&ps, &ps.p[i], desc, sizeof(desc)));
	qos_profiles_free(&ps);
}

/* The classes of the profile on @name: needs what `show` needs (root). */
static void cands_classes(const char *name)
{
	struct qos_dev dev;
	char err[256];
	uint32_t i;

	if (!name || qos_dev_open(&dev, name, 0, err, sizeof(err)))
		return;
	for (i = 0; dev.applied && dev.have_cfg && i < dev.cfg.meta.nclasses &&
		    i < QOS_MAX_CLASSES; i++)
		cand(dev.cfg.meta.classes[i].name, NULL);
	qos_dev_close(&dev);
}

static enum cli_opt_id find_opt(const char *w)
{
	int o;

	for (o = 0; o < O_MAX; o++) {
		if (w[1] != '-' && w[1] == cli_opts[o].short_name && !w[2])
			return o;
		if (w[1] == '-' && !strcmp(w + 2, cli_opts[o].name))
			return o;
	}
	return O_MAX;
}

/* The words after the command (keys and values), with @cur last: what
 * comes at @cur. */
static void cands_args(const struct cli_cmd *cmd, char **pos, int npos)
{
	const struct cli_word *const *w = cmd->words;
	int first = w && *w && !(*w)->key, i;
	const char *dev = NULL;

	if (first && !npos) {
		if ((*w)->val == CV_PROFILE)
			cands_profiles();
		else if ((*w)->val == CV_COMMAND)
			cands_cmds(cli_cmds);
		return;
	}
	if (cmd->fn == do_help) {
		const struct cli_cmd *c = cli_find(cli_cmds, pos[0]);

		if (npos == 1 && c && c->sub)
			cands_cmds(c->sub);
		return;
	}
	for (i = first; i < npos; i += 2) {
		const struct cli_word *k = cli_word(cmd, pos[i]);

		if (!k)
			return;
		if (i + 1 == npos) {
			if (k->val == CV_IFACE)
				cands_ifaces();
			else if (k->val == CV_CLASS)
				cands_classes(dev);
			return;
		}
		if (!strcmp(pos[i], "dev"))
			dev = pos[i + 1];
	}
	for (; w && *w; w++) {
		bool used = false;

		for (i = first; i < npos && (*w)->key; i += 2)
			used |= !strcmp(pos[i], (*w)->key);
		if ((*w)->key && !used)
			cand((*w)->key, (*w)->help);
	}
}

int do_complete(int argc, char **argv)
{
	const struct cli_cmd *cmd = NULL, *s;
	char *pos[64];
	int i, npos = 0;

	cur = argc ? argv[argc - 1] : "";
	for (i = 0; i < argc - 1; i++) {
		if (argv[i][0] == '-' && argv[i][1]) {
			enum cli_opt_id o = find_opt(argv[i]);

			/* The value of an option: nothing to offer. */
			if (o < O_MAX && cli_opts[o].arg && ++i == argc - 1)
				return 0;
			continue;
		}
		if (!cmd) {
			cmd = cli_find(cli_cmds, argv[i]);
			if (!cmd)
				return 0;
		} else if (cmd->sub) {
			s = cli_find(cmd->sub, argv[i]);
			if (!s)
				return 0;
			cmd = s;
		} else if (npos < (int)(sizeof(pos) / sizeof(pos[0]))) {
			pos[npos++] = argv[i];
		}
	}
	if (cur[0] == '-')
		cands_opts(cmd);
	else if (!cmd)
		cands_cmds(cli_cmds);
	else if (cmd->sub)
		cands_cmds(cmd->sub);
	else
		cands_args(cmd, pos, npos);
	return 0;
}
