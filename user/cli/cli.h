/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the command files of qosctl share: the global options, the command
 * table (user/cli/table.c) and the "dev X rate Y" argument parser.
 */
#ifndef __QOS_CLI_H
#define __QOS_CLI_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/linklayer.h"

struct qos_opts {
	bool json;
	bool stats;
	bool dry_run;
	bool prometheus;
	bool force;
	bool help;
	bool wide;
	bool per_family;
	bool continuous;
	unsigned int confirm;	/* seconds; 0 = no confirmation */
	unsigned int watch;	/* seconds between readings */
	unsigned int count;	/* --watch intervals; 0 = until interrupted */
	const char *listen;
	/* The etcd cluster of a domain (user/domain/etcd.h). */
	const char *etcd;
	const char *etcd_ca;
	const char *etcd_cert;
	const char *etcd_key;
	unsigned int etcd_timeout_ms;	/* 0: the client's default */
	const char *router;	/* agent: this router's name in the domain */
};

extern struct qos_opts opt;

/*
 * The command table is the one source of the usage, `qosctl help CMD`,
 * the suggestions for mistyped words and the shell completion: a command
 * names its words (keys and positional arguments) and the options it
 * takes; the man page is checked against it by selftests/cli_help.sh.
 */

/* Options, in the order help lists them; the value is the bit in cli_cmd.opts. */
enum cli_opt_id {
	O_JSON,
	O_STATS,
	O_WIDE,
	O_PER_FAMILY,
	O_WATCH,
	O_COUNT,
	O_PROMETHEUS,
	O_DRY_RUN,
	O_CONFIRM,
	O_STRICT,
	O_FORCE,
	O_LISTEN,
	O_CONTINUOUS,
	O_ETCD,
	O_ETCD_CA,
	O_ETCD_CERT,
	O_ETCD_KEY,
	O_ETCD_TIMEOUT,
	O_ROUTER,
	O_VERBOSE,
	O_HELP,
	O_VERSION,
	O_MAX,
};

#define O_BIT(o)	(1U << (o))
/* Taken by every command that talks to etcd. */
#define O_ETCD_ALL	(O_BIT(O_ETCD) | O_BIT(O_ETCD_CA) | O_BIT(O_ETCD_CERT) | \
			 O_BIT(O_ETCD_KEY) | O_BIT(O_ETCD_TIMEOUT))
/* Taken by every command. */
#define O_GLOBAL	(O_BIT(O_VERBOSE) | O_BIT(O_HELP) | O_BIT(O_VERSION))

struct cli_opt {
	const char *name;	/* long name, without "--" */
	char short_name;	/* 0: long only */
	const char *arg;	/* name of its value; NULL: takes none */
	const char *help;
};

extern const struct cli_opt cli_opts[O_MAX];

/* What the value of a word is, for completion. */
enum cli_val {
	CV_NONE,
	CV_PROFILE,
	CV_IFACE,
	CV_CLASS,
	CV_COMMAND,
};

struct cli_word {
	const char *key;	/* NULL: a positional argument */
	const char *arg;	/* its value, as the synopsis names it */
	enum cli_val val;
	const char *help;
};

struct cli_cmd {
	const char *name;
	const char *group;	/* a subcommand's command: "rule" */
	const char *synopsis;	/* what follows "qosctl NAME"; '\n' between forms */
	const char *summary;	/* one line, for the usage */
	const char *help;	/* a paragraph, for `qosctl help NAME` */
	const struct cli_word *const *words;	/* NULL-terminated */
	unsigned int opts;	/* O_BIT()s taken besides O_GLOBAL */
	int (*fn)(int argc, char **argv);
	const struct cli_cmd *sub;	/* subcommands, ended by a NULL name */
};

extern const struct cli_cmd cli_cmds[];
/* The command being run, for its words and its name in messages. */
extern const struct cli_cmd *cli_cur;

const struct cli_cmd *cli_find(const struct cli_cmd *table, const char *name);
const struct cli_word *cli_word(const struct cli_cmd *cmd, const char *key);

/* "qosctl: [PREFIX: ]unknown WHAT 'WORD' (did you mean ...?)", listing the
 * names of @table or the keys of @cmd. */
void cli_unknown_cmd(const char *prefix, const struct cli_cmd *table, const char *word);
void cli_unknown_key(const struct cli_cmd *cmd, const char *prefix, const char *word);

/* Usage on @f; help for one command (and its subcommands). */
void cli_usage(FILE *f);
void cli_help_cmd(FILE *f, const struct cli_cmd *cmd);
/* The full name of @cmd: "rule add". */
const char *cli_cmd_name(const struct cli_cmd *cmd, char *buf, size_t len);

/* 0 if @name is a profile or a path; else an error with suggestions. */
int cli_check_profile(const char *cmd, const char *name);

struct args {
	const char *dev;
	const char *rate;
	const char *ingress_rate;
	struct qos_ll_spec ll;	/* overhead, mpu, linklayer */
	const char *mtu;
	const char *period;	/* balance: milliseconds */
	uint32_t queues;	/* QOS_QUEUES_PROFILE unless given */
	int tcx_place;		/* enum qos_tcx_place */
};

/* "dev X rate Y" in any order; every key must be one of cli_cur's words.
 * Initialises @a. */
int parse_kv(int argc, char **argv, struct args *a);
int need_dev(const struct args *a);
int parse_link_rate(const char *s, uint64_t *bps);

int do_apply(int argc, char **argv);
int do_remove(int argc, char **argv);
int do_confirm(int argc, char **argv);
int do_show(int argc, char **argv);
int do_stats(int argc, char **argv);
int do_exporter(int argc, char **argv);
int do_validate(int argc, char **argv);
int do_list(int argc, char **argv);
int do_agent(int argc, char **argv);
int do_balance(int argc, char **argv);
/* Returned when the message is printed already (a suggestion). */
#define ERR_SHOWN 1

/* The device @name, locked (@lock) or opened to read, and its rules (with
 * their hit counters when read without the lock). */
struct qos_dev;
struct qos_rules;
int cli_open_rules(struct qos_dev *dev, const char *name, struct qos_rules *cur, bool lock,
		   char *err, size_t errlen);
/* CMD dev IFACE ...: "dev IFACE" comes first; @fn's errors are printed. */
int cli_on_dev(int argc, char **argv,
	       int (*fn)(const char *name, int argc, char **argv, char *err, size_t errlen));

int do_rule_add(int argc, char **argv);
int do_rule_del(int argc, char **argv);
int do_rule_list(int argc, char **argv);
int do_reserve_add(int argc, char **argv);
int do_reserve_del(int argc, char **argv);
int do_reserve_list(int argc, char **argv);
int do_reserve_apply(int argc, char **argv);
int do_probe_send(int argc, char **argv);
int do_probe_reflect(int argc, char **argv);
int do_domain_load(int argc, char **argv);
int do_domain_reserve(int argc, char **argv);
int do_domain_status(int argc, char **argv);
/* A client of the etcd cluster the options (--etcd, QOSCTL_ETCD, TLS,
 * timeout) name; errors printed. */
struct qos_etcd;
int cli_etcd_open(struct qos_etcd **e);
int do_help(int argc, char **argv);
int do_complete(int argc, char **argv);

#endif /* __QOS_CLI_H */
