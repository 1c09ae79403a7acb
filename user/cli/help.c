// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Usage, `qosctl help [COMMAND]` and "did you mean", all from the command
 * table (table.c). Text is wrapped at 80 columns here, so the table holds
 * each description on one line.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "lib/suggest.h"
#include "lib/util.h"

#define WIDTH 80
#define COL 24		/* descriptions start one column after */

const struct cli_cmd *cli_find(const struct cli_cmd *table, const char *name)
{
	for (; table->name; table++)
		if (!strcmp(table->name, name))
			return table;
	return NULL;
}

const struct cli_word *cli_word(const struct cli_cmd *cmd, const char *key)
{
	const struct cli_word *const *w;

	for (w = cmd->words; w && *w; w++)
		if ((*w)->key && !strcmp((*w)->key, key))
			return *w;
	return NULL;
}

const char *cli_cmd_name(const struct cli_cmd *cmd, char *buf, size_t len)
{
	if (cmd->group)
		snprintf(buf, len, "%s %s", cmd->group, cmd->name);
	else
		snprintf(buf, len, "%s", cmd->name);
	return buf;
}

void cli_unknown_cmd(const char *prefix, const struct cli_cmd *table, const char *word)
{
	struct qos_suggest s;
	char hint[128];

	const char *group = table->group;

	qos_suggest_init(&s, word);
	for (; table->name; table++)
		qos_suggest_add(&s, table->name);
	if (s.n)
		qos_suggest_fmt(&s, hint, sizeof(hint));
	else
		snprintf(hint, sizeof(hint), " (try 'qosctl help%s%s')", group ? " " : "",
			 group ?: "");
	qos_err("%s%sunknown command '%s'%s", prefix ?: "", prefix ? ": " : "", word, hint);
}

void cli_unknown_key(const struct cli_cmd *cmd, const char *prefix, const char *word)
{
	const struct cli_word *const *w;
	struct qos_suggest s;
	char hint[128], name[32];

	qos_suggest_init(&s, word);
	for (w = cmd->words; w && *w; w++)
		if ((*w)->key)
			qos_suggest_add(&s, (*w)->key);
	if (s.n)
		qos_suggest_fmt(&s, hint, sizeof(hint));
	else
		snprintf(hint, sizeof(hint), " (try 'qosctl help %s')",
			 cli_cmd_name(cmd, name, sizeof(name)));
	qos_err("%s: unexpected argument '%s'%s", prefix, word, hint);
}

static bool is_upper(char c)
{
	return isupper((unsigned char)c);
}

static const char *token_end(const char *p)
{
	int depth = 0;

	while (*p && (depth || *p != ' ')) {
		depth += (*p == '[' || *p == '{') - (*p == ']' || *p == '}');
		p++;
	}
	return p;
}

/*
 * @text after @lead, broken at spaces outside brackets so that "[src
 * PREFIX]" stays whole; the text starts, and continues, at column @indent.
 */
static void wrap(FILE *f, const char *lead, const char *text, int indent)
{
	int col = fprintf(f, "%s", lead);
	const char *p = text;
	bool first = true;

	if (col < indent)
		col += fprintf(f, "%*s", indent - col, "");
	else if (col > indent)
		col += fprintf(f, " ");
	while (*p) {
		const char *e = token_end(p);
		int n;

		/* A key keeps its value: "class CLASS", "--watch SECONDS". */
		if (*e == ' ' && !is_upper(p[0]) && is_upper(e[1]) &&
		    (is_upper(e[2]) || !e[2] || e[2] == ' '))
			e = token_end(e + 1);
		n = e - p;
		if (!first && col + 1 + n > WIDTH) {
			col = fprintf(f, "\n%*s", indent, "") - 1;
			first = true;
		}
		if (!first)
			col += fprintf(f, " ");
		col += fprintf(f, "%.*s", n, p);
		first = false;
		for (p = e; *p == ' '; p++)
			;
	}
	fputc('\n', f);
}

static void print_synopsis(FILE *f, const char *first, const struct cli_cmd *cmd)
{
	char lead[64], name[32];
	const char *s = cmd->synopsis;

	cli_cmd_name(cmd, name, sizeof(name));
	while (s && *s) {
		size_t n = strcspn(s, "\n");
		char line[256];

		snprintf(lead, sizeof(lead), "%s qosctl %s", first, name);
		snprintf(line, sizeof(line), "%.*s", (int)n, s);
		wrap(f, lead, line, strlen(lead) + 1);
		first = "      ";
		s += n + (s[n] == '\n');
	}
}

static void print_opt(FILE *f, enum cli_opt_id o)
{
	const struct cli_opt *op = &cli_opts[o];
	char name[48], lead[64];

	if (op->short_name)
		snprintf(name, sizeof(name), "-%c, --%s%s%s", op->short_name, op->name,
			 op->arg ? " " : "", op->arg ?: "");
	else
		snprintf(name, sizeof(name), "--%s%s%s", op->name, op->arg ? " " : "",
			 op->arg ?: "");
	snprintf(lead, sizeof(lead), "  %-*s", COL - 2, name);
	wrap(f, lead, op->help, COL + 1);
}

void cli_usage(FILE *f)
{
	const struct cli_cmd *c;
	char lead[64];
	int o;

	fprintf(f, "Usage: qosctl [OPTIONS] COMMAND [ARGUMENTS]\n\nCommands:\n");
	for (c = cli_cmds; c->name; c++) {
		snprintf(lead, sizeof(lead), "  %-*s", COL - 2, c->name);
		wrap(f, lead, c->summary, COL + 1);
	}
	fprintf(f, "\nOptions:\n");
	for (o = 0; o < O_MAX; o++)
		print_opt(f, o);
	fprintf(f, "\nPROFILE is a name from 'qosctl list' or a path; RATE is in tc's units\n"
		   "(100mbit, 1gbit). 'qosctl help COMMAND' or 'qosctl COMMAND --help' gives\n"
		   "the syntax of a command.\n");
}

static void print_words(FILE *f, const struct cli_cmd *cmd)
{
	const struct cli_word *const *w;
	char name[48], lead[64];

	if (!cmd->words)
		return;
	fprintf(f, "\nArguments:\n");
	for (w = cmd->words; *w; w++) {
		snprintf(name, sizeof(name), "%s%s%s", (*w)->key ?: "", (*w)->key ? " " : "",
			 (*w)->arg);
		snprintf(lead, sizeof(lead), "  %-*s", COL - 2, name);
		wrap(f, lead, (*w)->help, COL + 1);
	}
}

void cli_help_cmd(FILE *f, const struct cli_cmd *cmd)
{
	const struct cli_cmd *s;
	char lead[64];
	int o;

	if (cmd->sub) {
		for (s = cmd->sub; s->name; s++)
			print_synopsis(f, s == cmd->sub ? "Usage:" : "      ", s);
	} else {
		print_synopsis(f, "Usage:", cmd);
	}
	fputc('\n', f);
	wrap(f, "", cmd->help, 0);
	print_words(f, cmd);
	if (cmd->opts)
		fprintf(f, "\nOptions:\n");
	for (o = 0; o < O_MAX; o++)
		if (cmd->opts & O_BIT(o))
			print_opt(f, o);
	if (!cmd->sub)
		return;
	fprintf(f, "\nCommands:\n");
	for (s = cmd->sub; s->name; s++) {
		snprintf(lead, sizeof(lead), "  %-*s", COL - 2, s->name);
		wrap(f, lead, s->summary, COL + 1);
	}
	fprintf(f, "\n'qosctl help %s COMMAND' gives the syntax of one.\n", cmd->name);
}

/* help [COMMAND [SUBCOMMAND]] */
int do_help(int argc, char **argv)
{
	const struct cli_cmd *c, *s;

	if (!argc) {
		cli_usage(stdout);
		return 0;
	}
	c = cli_find(cli_cmds, argv[0]);
	if (!c) {
		cli_unknown_cmd("help", cli_cmds, argv[0]);
		return -EINVAL;
	}
	if (argc > 1 && c->sub) {
		s = cli_find(c->sub, argv[1]);
		if (!s) {
			cli_unknown_cmd("help", c->sub, argv[1]);
			return -EINVAL;
		}
		c = s;
		argc--;
		argv++;
	}
	if (argc > 1) {
		qos_err("help: unexpected argument '%s'", argv[1]);
		return -EINVAL;
	}
	cli_help_cmd(stdout, c);
	return 0;
}
