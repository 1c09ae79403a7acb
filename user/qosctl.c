// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * qosctl: apply DiffServ profiles to an interface and read their counters.
 *
 * One do_<command>() per command; the work is in the library modules.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "apply.h"
#include "confirm.h"
#include "dryrun.h"
#include "exporter.h"
#include "lock.h"
#include "profile.h"
#include "prom.h"
#include "report.h"
#include "rules.h"
#include "util.h"
#include "watch.h"

#ifndef QOSCTL_VERSION
#define QOSCTL_VERSION "0.1"
#endif

static bool opt_json;
static bool opt_stats;
static bool opt_dry_run;
static bool opt_prometheus;
static unsigned int opt_confirm;	/* seconds; 0 = no confirmation */
static unsigned int opt_watch;		/* seconds between readings */
static unsigned int opt_count;		/* --watch intervals; 0 = until interrupted */
static const char *opt_listen;

struct args {
	const char *dev;
	const char *rate;
};

static int usage(void)
{
	printf(
		"Usage: qosctl [-v] [-j] [-s] COMMAND ...\n"
		"  qosctl apply PROFILE dev IFACE rate RATE [--dry-run | --confirm SECONDS]\n"
		"  qosctl confirm dev IFACE\n"
		"  qosctl remove dev IFACE\n"
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

enum { ARG_DEV = 1, ARG_RATE = 2 };

/* "dev X rate Y" in any order; every word must be one @allowed. */
static int parse_kv(int argc, char **argv, struct args *a, int allowed)
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

static int need_dev(const struct args *a)
{
	if (!a->dev) {
		qos_err("missing 'dev IFACE'");
		return -EINVAL;
	}
	return 0;
}

static int parse_link_rate(const char *s, uint64_t *bps)
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

/*
 * Under the interface lock. A plain apply also confirms a pending one,
 * like a new commit does in Junos; with --confirm the state it replaces
 * is handed to a process that restores it on timeout.
 */
static int apply_locked(const char *profile, const char *dev, uint64_t bps, char *err,
			size_t errlen)
{
	struct qos_confirm c;
	int lock, ret = 0;

	/* Checked again under the lock; this one keeps a typo from leaving a
	 * lock file for an interface that does not exist. */
	if (!if_nametoindex(dev)) {
		snprintf(err, errlen, "dev %s: no such device", dev);
		return -ENODEV;
	}
	lock = qos_lock_dev(dev, err, errlen);
	if (lock < 0)
		return lock;
	if (opt_confirm)
		ret = qos_confirm_prepare(dev, &c, err, errlen);
	ret = ret ?: qos_apply(profile, dev, bps, err, errlen);
	if (!ret && opt_confirm)
		ret = qos_confirm_arm(dev, &c, opt_confirm, lock, err, errlen);
	else if (!ret)
		qos_confirm_cancel(dev);
	if (opt_confirm)
		qos_confirm_release(&c);
	qos_unlock_dev(lock);
	return ret;
}

static int do_apply(int argc, char **argv)
{
	struct args a = {};
	char err[512];
	uint64_t bps;
	int ret;

	if (argc < 1) {
		qos_err("apply: missing PROFILE");
		return -EINVAL;
	}
	if (parse_kv(argc - 1, argv + 1, &a, ARG_DEV | ARG_RATE) || need_dev(&a) ||
	    parse_link_rate(a.rate, &bps))
		return -EINVAL;
	if (opt_dry_run && opt_confirm) {
		qos_err("apply: --dry-run and --confirm exclude each other");
		return -EINVAL;
	}
	if (opt_dry_run)
		ret = qos_dry_run(argv[0], a.dev, bps, stdout, err, sizeof(err));
	else
		ret = apply_locked(argv[0], a.dev, bps, err, sizeof(err));
	if (ret) {
		qos_err("apply: %s", err);
		return -1;
	}
	if (opt_confirm)
		printf("dev %s: applied; rolls back in %us unless 'qosctl confirm dev %s'\n",
		       a.dev, opt_confirm, a.dev);
	return 0;
}

static int do_remove(int argc, char **argv)
{
	struct args a = {};
	char err[512];
	int lock, ret;

	if (parse_kv(argc, argv, &a, ARG_DEV) || need_dev(&a))
		return -EINVAL;
	lock = qos_lock_dev(a.dev, err, sizeof(err));
	ret = lock < 0 ? lock : qos_remove(a.dev, err, sizeof(err));
	if (!ret)
		qos_confirm_cancel(a.dev);
	if (!ret)
		qos_unlock_dev_remove(lock, a.dev);
	else
		qos_unlock_dev(lock);
	if (ret) {
		qos_err("remove: %s", err);
		return -1;
	}
	return 0;
}

static int read_report(int argc, char **argv, const char *cmd, struct qos_report *r)
{
	struct args a = {};
	char err[512];

	if (parse_kv(argc, argv, &a, ARG_DEV) || need_dev(&a))
		return -EINVAL;
	if (qos_report_read(a.dev, r, err, sizeof(err))) {
		qos_err("%s: %s", cmd, err);
		return -1;
	}
	return 0;
}

static int do_show(int argc, char **argv)
{
	static struct qos_report r;
	int err = read_report(argc, argv, "show", &r);

	if (!err)
		qos_report_show(stdout, &r, opt_json);
	return err;
}

static int stats_prometheus(const char *dev)
{
	static struct qos_report one;
	const struct qos_report *rp[1] = { &one };
	struct qos_report *all = NULL;
	const struct qos_report **allp;
	char err[512];
	int i, n;

	if (dev) {
		if (qos_report_read(dev, &one, err, sizeof(err))) {
			qos_err("stats: %s", err);
			return -1;
		}
		qos_prom_write(stdout, rp, 1);
		return 0;
	}
	n = qos_report_read_all(&all);
	if (n < 0) {
		qos_err("stats: reading qosctl state: %s", strerror(-n));
		return n;
	}
	allp = calloc(n ?: 1, sizeof(*allp));
	if (!allp) {
		free(all);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		allp[i] = &all[i];
	qos_prom_write(stdout, allp, n);
	free(allp);
	free(all);
	return 0;
}

static int do_stats(int argc, char **argv)
{
	static struct qos_report r;
	struct args a = {};
	char err[512];
	int ret;

	if (opt_prometheus) {
		if (opt_json || opt_watch) {
			qos_err("stats: --prometheus excludes -j and --watch");
			return -EINVAL;
		}
		if (parse_kv(argc, argv, &a, ARG_DEV))
			return -EINVAL;
		return stats_prometheus(a.dev);
	}
	if (opt_watch) {
		if (parse_kv(argc, argv, &a, ARG_DEV) || need_dev(&a))
			return -EINVAL;
		ret = qos_stats_watch(a.dev, opt_watch, opt_count, opt_json, stdout, err,
				      sizeof(err));
		if (ret)
			qos_err("stats: %s", err);
		return ret;
	}
	ret = read_report(argc, argv, "stats", &r);
	if (!ret)
		qos_report_stats(stdout, &r, opt_json, opt_stats);
	return ret;
}

static int do_confirm(int argc, char **argv)
{
	struct args a = {};
	char err[512];
	int lock, ret;

	if (parse_kv(argc, argv, &a, ARG_DEV) || need_dev(&a))
		return -EINVAL;
	lock = qos_lock_dev(a.dev, err, sizeof(err));
	if (lock < 0) {
		qos_err("confirm: %s", err);
		return lock;
	}
	ret = qos_confirm_cancel(a.dev);
	qos_unlock_dev(lock);
	if (!ret) {
		qos_err("confirm: dev %s: no apply is waiting for confirmation", a.dev);
		return -ENOENT;
	}
	printf("dev %s: confirmed\n", a.dev);
	return 0;
}

static int do_exporter(int argc, char **argv)
{
	char err[512];

	if (argc) {
		qos_err("exporter: unexpected argument '%s'", argv[0]);
		return -EINVAL;
	}
	if (!opt_listen) {
		qos_err("exporter: missing --listen ADDR:PORT");
		return -EINVAL;
	}
	if (qos_exporter_run(opt_listen, err, sizeof(err))) {
		qos_err("exporter: %s", err);
		return -1;
	}
	return 0;
}

#define MIB(b)	((double)(b) / (1 << 20))

/* What an apply would take of the kernel's memory on this machine: the
 * rule table's share grows with `rules` and with the CPU count. */
static void print_mem(const struct qos_profile *p)
{
	int ncpus = libbpf_num_possible_cpus();
	struct qos_profile_mem m;
	uint64_t total;

	if (ncpus < 0) {
		qos_err("validate: no memory estimate: possible CPUs: %s", strerror(-ncpus));
		return;
	}
	total = qos_profile_mem_bytes(p, ncpus, &m);
	printf("kernel memory: %.1f MiB per interface on %d CPUs (rule table of %u: hash %.1f MiB "
	       "full, counters %.1f MiB; other maps %.1f MiB)\n",
	       MIB(total), ncpus, p->rule_entries, MIB(m.rule_hash), MIB(m.rule_stats),
	       MIB(m.counters + m.other));
}

static int do_validate(int argc, char **argv)
{
	struct qos_class_plan plan[QOS_MAX_CLASSES];
	static struct qos_profile p;
	struct args a = {};
	char err[512];
	uint64_t bps = 0;

	if (argc < 1) {
		qos_err("validate: missing PROFILE");
		return -EINVAL;
	}
	if (parse_kv(argc - 1, argv + 1, &a, ARG_RATE))
		return -EINVAL;
	if (a.rate && parse_link_rate(a.rate, &bps))
		return -EINVAL;
	if (qos_profile_load(argv[0], &p, err, sizeof(err)) ||
	    (bps && qos_profile_resolve(&p, bps, plan, err, sizeof(err)))) {
		qos_err("validate: %s", err);
		return -1;
	}
	printf("%s: ok (%u classes, %zu rules)\n", p.path, p.nclasses, p.rules.n);
	print_mem(&p);
	qos_profile_free(&p);
	return 0;
}

static int do_list(int argc, char **argv)
{
	static struct qos_profile p;
	char path[PATH_MAX], err[512];
	struct dirent **ents;
	const char *dir;
	int i, n;

	(void)argv;
	if (argc) {
		qos_err("list takes no arguments");
		return -EINVAL;
	}
	/* Profiles are found like qos_profile_find() does; list the first
	 * directory that exists. */
	if (qos_profile_find("pip-20pct", path, sizeof(path))) {
		qos_err("list: no profile directory found");
		return -ENOENT;
	}
	*strrchr(path, '/') = '\0';
	dir = path;
	n = scandir(dir, &ents, NULL, alphasort);
	if (n < 0) {
		qos_err("list: %s: %s", dir, strerror(errno));
		return -errno;
	}
	for (i = 0; i < n; i++) {
		char full[PATH_MAX + 256];

		if (ents[i]->d_name[0] != '.') {
			snprintf(full, sizeof(full), "%s/%s", dir, ents[i]->d_name);
			if (!qos_profile_load(full, &p, err, sizeof(err)))
				printf("%-16s %s\n", p.name, p.description);
			qos_profile_free(&p);
		}
		free(ents[i]);
	}
	free(ents);
	return 0;
}

/* rule add|del|list dev IFACE ...: "dev IFACE" comes first. */
static int do_rule(int argc, char **argv)
{
	const char *sub = argc ? argv[0] : "";
	char err[512];
	int ret;

	if (strcmp(sub, "add") && strcmp(sub, "del") && strcmp(sub, "list")) {
		qos_err("rule: expected add, del or list (try 'qosctl help')");
		return -EINVAL;
	}
	if (argc < 3 || strcmp(argv[1], "dev") || !*argv[2]) {
		qos_err("rule %s: missing 'dev IFACE'", sub);
		return -EINVAL;
	}
	if (!strcmp(sub, "list")) {
		if (argc > 3) {
			qos_err("rule list: unexpected argument '%s'", argv[3]);
			return -EINVAL;
		}
		ret = qos_rule_cmd_list(stdout, argv[2], opt_json, err, sizeof(err));
	} else if (!strcmp(sub, "add")) {
		ret = qos_rule_cmd_add(argv[2], argc - 3, argv + 3, err, sizeof(err));
	} else {
		ret = qos_rule_cmd_del(argv[2], argc - 3, argv + 3, err, sizeof(err));
	}
	if (ret)
		qos_err("rule %s: %s", sub, err);
	return ret;
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
			opt_json = true;
			break;
		case 's':
			opt_stats = true;
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
			opt_dry_run = true;
			break;
		case OPT_CONFIRM:
			if (count_arg("--confirm", "seconds", optarg, &opt_confirm))
				return 1;
			break;
		case OPT_PROMETHEUS:
			opt_prometheus = true;
			break;
		case OPT_WATCH:
			if (count_arg("--watch", "seconds", optarg, &opt_watch))
				return 1;
			break;
		case OPT_COUNT:
			if (count_arg("--count", "a number of samples", optarg, &opt_count))
				return 1;
			break;
		case OPT_LISTEN:
			opt_listen = optarg;
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
