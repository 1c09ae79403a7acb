// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * qosctl: apply DiffServ profiles to an interface and read their counters.
 *
 * main() parses the global options and dispatches; each command lives in
 * a cmd_*.c file over the library's txn/ and out/ layers.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "cli/cli.h"
#include "lib/util.h"
#include "lib/version.h"

struct qos_opts opt;

static int usage(void)
{
	printf(
		"Usage: qosctl [-v] [-j] [-s] COMMAND ...\n"
		"  qosctl apply PROFILE dev IFACE rate RATE [--dry-run | --confirm SECONDS]\n"
		"  qosctl confirm dev IFACE\n"
		"  qosctl remove dev IFACE [--force]\n"
		"  qosctl show dev IFACE [-j]\n"
		"  qosctl stats dev IFACE [-j] [-s] [--watch SECONDS [--count N]]\n"
		"  qosctl stats [dev IFACE] --prometheus\n"
		"  qosctl exporter --listen [IPV6]:PORT|IPV4:PORT|:PORT\n"
		"  qosctl validate PROFILE [rate RATE]\n"
		"  qosctl list\n"
		"  qosctl rule add dev IFACE [name NAME] [src PREFIX] [dst PREFIX]\n"
		"                 [flowlabel LABEL[/MASK]] [proto PROTO] [priority N]\n"
		"                 class NAME [set-dscp DSCP]\n"
		"  qosctl rule del dev IFACE {id N | name NAME | MATCH}\n"
		"  qosctl rule list dev IFACE [-j]\n"
		"PROFILE is a name from the profile directories or a path; RATE as in tc\n"
		"(100mbit, 1gbit). -j prints JSON, -s more counters, -v libbpf's log.\n");
	return 0;
}

/* "dev X rate Y" in any order; every word must be one @allowed. */
int parse_kv(int argc, char **argv, struct args *a, int allowed)
{
	int i;

	for (i = 0; i < argc; i++) {
		const char *k = argv[i];
		int which = !strcmp(k, "dev") ? ARG_DEV : !strcmp(k, "rate") ? ARG_RATE : 0;

		if (!(which & allowed)) {
			qos_err("unexpected argument '%s' (try 'qosctl help')", k);
			return -EINVAL;
		}
		if (i + 1 >= argc || !*argv[i + 1]) {
			qos_err("'%s' needs a value", k);
			return -EINVAL;
		}
		if (which == ARG_DEV)
			a->dev = argv[++i];
		else
			a->rate = argv[++i];
	}
	return 0;
}

int need_dev(const struct args *a)
{
	if (!a->dev) {
		qos_err("missing 'dev IFACE'");
		return -EINVAL;
	}
	return 0;
}

int parse_link_rate(const char *s, uint64_t *bps)
{
	if (!s) {
		qos_err("missing 'rate RATE' (the link rate, e.g. 100mbit, 1gbit)");
		return -EINVAL;
	}
	if (qos_parse_rate(s, 0, bps)) {
		qos_err("rate '%s': not a rate (e.g. 100mbit, 1gbit)", s);
		return -EINVAL;
	}
	return 0;
}

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	if (!qos_verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static const struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
} cmds[] = {
	{ "apply", do_apply },
	{ "remove", do_remove },
	{ "show", do_show },
	{ "stats", do_stats },
	{ "validate", do_validate },
	{ "list", do_list },
	{ "rule", do_rule },
	{ "confirm", do_confirm },
	{ "exporter", do_exporter },
};

/* Long-only options. */
enum {
	OPT_DRY_RUN = 256,
	OPT_CONFIRM,
	OPT_PROMETHEUS,
	OPT_WATCH,
	OPT_COUNT,
	OPT_LISTEN,
	OPT_FORCE,
};

/* A positive count up to a day's worth: seconds, or (--count) samples. */
static int count_arg(const char *opt, const char *what, const char *v, unsigned int *out)
{
	uint32_t u;

	if (qos_parse_u32(v, &u) || !u || u > 86400) {
		qos_err("%s '%s': expected %s, 1-86400", opt, v, what);
		return -EINVAL;
	}
	*out = u;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "stats", no_argument, NULL, 's' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "confirm", required_argument, NULL, OPT_CONFIRM },
		{ "prometheus", no_argument, NULL, OPT_PROMETHEUS },
		{ "watch", required_argument, NULL, OPT_WATCH },
		{ "count", required_argument, NULL, OPT_COUNT },
		{ "listen", required_argument, NULL, OPT_LISTEN },
		{ "force", no_argument, NULL, OPT_FORCE },
		{},
	};
	size_t i;
	int c;

	/* Errors are one "qosctl: " line, like every other error: getopt's
	 * own messages are off (opterr, and ':' to tell a missing value). */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jsvhV", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			opt.json = true;
			break;
		case 's':
			opt.stats = true;
			break;
		case 'v':
			qos_verbose = true;
			break;
		case 'h':
			return usage();
		case 'V':
			printf("qosctl %s (libbpf %s)\n", QOSCTL_VERSION, libbpf_version_string());
			return 0;
		case OPT_DRY_RUN:
			opt.dry_run = true;
			break;
		case OPT_CONFIRM:
			if (count_arg("--confirm", "seconds", optarg, &opt.confirm))
				return 1;
			break;
		case OPT_PROMETHEUS:
			opt.prometheus = true;
			break;
		case OPT_WATCH:
			if (count_arg("--watch", "seconds", optarg, &opt.watch))
				return 1;
			break;
		case OPT_COUNT:
			if (count_arg("--count", "a number of samples", optarg, &opt.count))
				return 1;
			break;
		case OPT_LISTEN:
			opt.listen = optarg;
			break;
		case OPT_FORCE:
			opt.force = true;
			break;
		case ':':
			qos_err("option '%s' needs a value", argv[optind - 1]);
			return 1;
		default:
			if (optopt)
				qos_err("unknown option '-%c' (try 'qosctl help')", optopt);
			else
				qos_err("unknown option '%s' (try 'qosctl help')", argv[optind - 1]);
			return 1;
		}
	}
	libbpf_set_print(print_libbpf);

	if (optind >= argc) {
		qos_err("missing command (try 'qosctl help')");
		return 1;
	}
	if (!strcmp(argv[optind], "help"))
		return usage();
	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		if (!strcmp(argv[optind], cmds[i].name))
			return cmds[i].fn(argc - optind - 1, argv + optind + 1) ? 1 : 0;
	qos_err("unknown command '%s' (try 'qosctl help')", argv[optind]);
	return 1;
}
