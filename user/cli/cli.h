/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the command files of qosctl share: the global options and the
 * "dev X rate Y" argument parser.
 */
#ifndef __QOS_CLI_H
#define __QOS_CLI_H

#include <stdbool.h>
#include <stdint.h>

struct qos_opts {
	bool json;
	bool stats;
	bool dry_run;
	bool prometheus;
	bool force;
	unsigned int confirm;	/* seconds; 0 = no confirmation */
	unsigned int watch;	/* seconds between readings */
	unsigned int count;	/* --watch intervals; 0 = until interrupted */
	const char *listen;
};

extern struct qos_opts opt;

struct args {
	const char *dev;
	const char *rate;
};

enum { ARG_DEV = 1, ARG_RATE = 2 };

/* "dev X rate Y" in any order; every word must be one @allowed. */
int parse_kv(int argc, char **argv, struct args *a, int allowed);
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
int do_rule(int argc, char **argv);

#endif /* __QOS_CLI_H */
