// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * qosctl: apply DiffServ profiles to an interface and read their counters.
 *
 * main() parses the options and dispatches through the command table
 * (table.c); each command lives in a cmd_*.c file over the library's txn/
 * and out/ layers.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "cli/cli.h"
#include "lib/suggest.h"
#include "lib/util.h"
#include "lib/version.h"
#include "model/profile.h"
#include "txn/txn.h"

struct qos_opts opt;

const struct cli_cmd *cli_cur;

/* "dev X rate Y" in any order; every key must be one of cli_cur's words. */
int parse_kv(int argc, char **argv, struct args *a)
{
	char name[32];
	int i;

	memset(a, 0, sizeof(*a));
	qos_ll_spec_init(&a->ll);
	a->queues = QOS_QUEUES_PROFILE;
	cli_cmd_name(cli_cur, name, sizeof(name));
	for (i = 0; i < argc; i++) {
		const char *k = argv[i];
		char why[256];
		int ret;

		if (!cli_word(cli_cur, k)) {
			cli_unknown_key(cli_cur, name, k);
			return -EINVAL;
		}
		if (i + 1 >= argc || !*argv[i + 1]) {
			qos_err("%s: '%s' needs a value", name, k);
			return -EINVAL;
		}
		if (!strcmp(k, "dev")) {
			a->dev = argv[++i];
		} else if (!strcmp(k, "rate")) {
			a->rate = argv[++i];
		} else if (!strcmp(k, "ingress-rate")) {
			a->ingress_rate = argv[++i];
		} else if (!strcmp(k, "mtu")) {
			a->mtu = argv[++i];
		} else if (!strcmp(k, "period")) {
			a->period = argv[++i];
		} else if (!strcmp(k, "tcx-place")) {
			a->tcx_place = qos_tcx_place_parse(argv[++i]);
			if (a->tcx_place < 0) {
				qos_err("%s: tcx-place '%s': not first or last", name, argv[i]);
				return -EINVAL;
			}
		} else if (!strcmp(k, "queues")) {
			if (qos_queues_parse(argv[++i], &a->queues)) {
				qos_err("%s: queues '%s': not auto or a number of TX queues (1-%u)",
					name, argv[i], QOS_MAX_QUEUES);
				return -EINVAL;
			}
		} else {
			ret = qos_ll_parse(&a->ll, k, argv[i + 1], why, sizeof(why));
			if (ret == -ENOENT) {
				cli_unknown_key(cli_cur, name, k);
				return -EINVAL;
			}
			if (ret) {
				qos_err("%s: %s: %s", name, k, why);
				return -EINVAL;
			}
			i++;
		}
	}
	return 0;
}

int need_dev(const struct args *a)
{
	char name[32];

	if (!a->dev) {
		qos_err("%s: missing 'dev IFACE'", cli_cmd_name(cli_cur, name, sizeof(name)));
		return -EINVAL;
	}
	return 0;
}

int parse_link_rate(const char *s, uint64_t *bps)
{
	const char *cmd = cli_cur->name;
	char where[64];

	if (!s) {
		qos_err("%s: missing 'rate RATE' (the link rate, e.g. 100mbit, 1gbit)", cmd);
		return -EINVAL;
	}
	if (qos_parse_rate(s, 0, bps)) {
		qos_err("%s: rate '%s': not a rate (e.g. 100mbit, 1gbit)", cmd, s);
		return -EINVAL;
	}
	snprintf(where, sizeof(where), "%s: rate", cmd);
	qos_rate_check(where, s, *bps, 0);
	return 0;
}

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	if (!qos_verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

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

/* --etcd-timeout TIME: 1 ms to 10 minutes. */
static int etcd_timeout_arg(const char *v)
{
	uint64_t ns;

	if (qos_parse_time(v, &ns) || ns < 1000000ULL || ns > 600000000000ULL) {
		qos_err("--etcd-timeout '%s': expected a time, 1ms-10min (500ms, 5s)", v);
		return -EINVAL;
	}
	opt.etcd_timeout_ms = ns / 1000000;
	return 0;
}

/* Option @o, with its value @v if it takes one. */
static int set_opt(enum cli_opt_id o, const char *v)
{
	switch (o) {
	case O_JSON:
		opt.json = true;
		break;
	case O_STATS:
		opt.stats = true;
		break;
	case O_WIDE:
		opt.wide = true;
		break;
	case O_PER_FAMILY:
		opt.per_family = true;
		break;
	case O_WATCH:
		return count_arg("--watch", "seconds", v, &opt.watch);
	case O_COUNT:
		return count_arg("--count", "a number of samples", v, &opt.count);
	case O_PROMETHEUS:
		opt.prometheus = true;
		break;
	case O_STRICT:
		qos_strict = true;
		break;
	case O_DRY_RUN:
		opt.dry_run = true;
		break;
	case O_CONFIRM:
		return count_arg("--confirm", "seconds", v, &opt.confirm);
	case O_FORCE:
		opt.force = true;
		break;
	case O_LISTEN:
		opt.listen = v;
		break;
	case O_CONTINUOUS:
		opt.continuous = true;
		break;
	case O_ETCD:
		opt.etcd = v;
		break;
	case O_ETCD_CA:
		opt.etcd_ca = v;
		break;
	case O_ETCD_CERT:
		opt.etcd_cert = v;
		break;
	case O_ETCD_KEY:
		opt.etcd_key = v;
		break;
	case O_ETCD_TIMEOUT:
		return etcd_timeout_arg(v);
	case O_ROUTER:
		opt.router = v;
		break;
	case O_VERBOSE:
		qos_verbose = true;
		break;
	case O_HELP:
		opt.help = true;
		break;
	default:
		break;
	}
	return 0;
}

static void unknown_opt(const char *arg)
{
	char word[64], hint[128];
	struct qos_suggest s;
	int o;

	snprintf(word, sizeof(word), "%.*s", (int)strcspn(arg, "="), arg);
	qos_suggest_init(&s, word + 2);
	for (o = 0; o < O_MAX; o++)
		qos_suggest_add(&s, cli_opts[o].name);
	/* The suggestions are bare names: put the dashes back. */
	if (s.n) {
		char names[QOS_SUGGEST_MAX][40];
		int i;

		for (i = 0; i < s.n; i++) {
			snprintf(names[i], sizeof(names[i]), "--%s", s.best[i]);
			s.best[i] = names[i];
		}
		qos_err("unknown option '%s'%s", word, qos_suggest_fmt(&s, hint, sizeof(hint)));
		return;
	}
	qos_err("unknown option '%s' (try 'qosctl help')", word);
}

/*
 * Options anywhere on the line, as getopt_long permutes them, built from
 * cli_opts. Errors are one "qosctl: " line, like every other error:
 * getopt's own messages are off (opterr, and ':' to tell a missing value).
 * Returns the set of options seen, or -1.
 */
static int parse_opts(int argc, char **argv)
{
	struct option lo[O_MAX + 1] = {};
	char shorts[2 * O_MAX + 2], *p = shorts;
	int c, o, seen = 0;

	*p++ = ':';
	for (o = 0; o < O_MAX; o++) {
		lo[o].name = cli_opts[o].name;
		lo[o].has_arg = cli_opts[o].arg ? required_argument : no_argument;
		lo[o].val = 256 + o;
		if (cli_opts[o].short_name) {
			*p++ = cli_opts[o].short_name;
			if (cli_opts[o].arg)
				*p++ = ':';
		}
	}
	*p = '\0';
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		if (c == ':') {
			qos_err("option '%s' needs a value", argv[optind - 1]);
			return -1;
		}
		for (o = 0; c < 256 && o < O_MAX && cli_opts[o].short_name != c; o++)
			;
		if (c >= 256)
			o = c - 256;
		if (o >= O_MAX || c == '?') {
			if (optopt)
				qos_err("unknown option '-%c' (try 'qosctl help')", optopt);
			else
				unknown_opt(argv[optind - 1]);
			return -1;
		}
		if (o == O_VERSION) {
			printf("qosctl %s (libbpf %s)\n", QOSCTL_VERSION, libbpf_version_string());
			exit(0);
		}
		if (set_opt(o, optarg))
			return -1;
		seen |= O_BIT(o);
	}
	return seen;
}

/* The command named by @argv, a subcommand for a group like rule. */
static const struct cli_cmd *find_cmd(int *argc, char ***argv)
{
	const struct cli_cmd *c = cli_find(cli_cmds, (*argv)[0]), *s;

	if (!c) {
		cli_unknown_cmd(NULL, cli_cmds, (*argv)[0]);
		return NULL;
	}
	(*argc)--;
	(*argv)++;
	if (!c->sub || (opt.help && !*argc))
		return c;
	if (!*argc) {
		qos_err("%s: missing command (try 'qosctl help %s')", c->name, c->name);
		return NULL;
	}
	s = cli_find(c->sub, (*argv)[0]);
	if (!s) {
		cli_unknown_cmd(c->name, c->sub, (*argv)[0]);
		return NULL;
	}
	(*argc)--;
	(*argv)++;
	return s;
}

int main(int argc, char **argv)
{
	const struct cli_cmd *c;
	char name[32];
	int seen, o;

	libbpf_set_print(print_libbpf);
	/* The shell completion's entry: the words as typed, options too. */
	if (argc > 1 && !strcmp(argv[1], "__complete"))
		return do_complete(argc - 2, argv + 2) ? 1 : 0;
	seen = parse_opts(argc, argv);
	if (seen < 0)
		return 1;

	/* Bare qosctl is a mistake (stderr, 1); help, an answer (stdout, 0). */
	if (optind >= argc) {
		cli_usage(opt.help ? stdout : stderr);
		return !opt.help;
	}
	argc -= optind;
	argv += optind;
	c = find_cmd(&argc, &argv);
	if (!c)
		return 1;
	if (opt.help) {
		cli_help_cmd(stdout, c);
		return 0;
	}
	for (o = 0; o < O_MAX; o++) {
		if ((seen & O_BIT(o)) && !((c->opts | O_GLOBAL) & O_BIT(o))) {
			cli_cmd_name(c, name, sizeof(name));
			qos_err("%s: does not take --%s (see 'qosctl help %s')", name,
				cli_opts[o].name, name);
			return 1;
		}
	}
	cli_cur = c;
	return c->fn(argc, argv) ? 1 : 0;
}
