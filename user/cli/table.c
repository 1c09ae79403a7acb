// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The commands of qosctl, their words and options: the one place their
 * syntax and descriptions are written. Usage, help, suggestions and the
 * shell completion (qosctl __complete) are read from here.
 */
#include <stddef.h>

#include "cli/cli.h"

const struct cli_opt cli_opts[O_MAX] = {
	[O_JSON] = { "json", 'j', NULL, "print JSON instead of a table" },
	[O_STATS] = { "stats", 's', NULL,
		      "more counters: verdicts, policer colours, queues, unparsed packets" },
	[O_WIDE] = { "wide", 0, NULL, "a column per address family (wider than 100 columns)" },
	[O_PER_FAMILY] = { "per-family", 0, NULL, "a row per address family" },
	[O_WATCH] = { "watch", 0, "SECONDS", "print the rates over every SECONDS until stopped" },
	[O_COUNT] = { "count", 0, "N", "with --watch, stop after N intervals" },
	[O_PROMETHEUS] = { "prometheus", 0, NULL,
			   "Prometheus text format; every interface without dev" },
	[O_DRY_RUN] = { "dry-run", 0, NULL, "print the plan as tc commands, change nothing" },
	[O_CONFIRM] = { "confirm", 0, "SECONDS",
			"roll back unless 'qosctl confirm' follows within SECONDS" },
	[O_STRICT] = { "strict", 0, NULL, "make warnings (units, low rates, shares, bursts) errors" },
	[O_FORCE] = { "force", 0, NULL, "also clear qosctl's slot when its state is broken" },
	[O_LISTEN] = { "listen", 0, "ADDRESS", "[IPV6]:PORT, IPV4:PORT or :PORT (both families)" },
	[O_VERBOSE] = { "verbose", 'v', NULL, "libbpf's and libnl's messages, the verifier log" },
	[O_HELP] = { "help", 'h', NULL, "this usage, or the help of COMMAND" },
	[O_VERSION] = { "version", 'V', NULL, "print the version, and libbpf's" },
};

static const struct cli_word w_profile = {
	NULL, "PROFILE", CV_PROFILE, "a profile name ('qosctl list') or a file's path"
};
static const struct cli_word w_dev = { "dev", "IFACE", CV_IFACE, "the interface" };
static const struct cli_word w_rate = {
	"rate", "RATE", CV_NONE, "the rate of the link, in tc's units: 100mbit, 1gbit"
};
static const struct cli_word w_mtu = {
	"mtu", "MTU", CV_NONE, "MTU to check bursts against (default 1500)"
};
static const struct cli_word w_name = { "name", "NAME", CV_NONE, "the rule's name" };
static const struct cli_word w_src = {
	"src", "PREFIX", CV_NONE, "source prefix, IPv4 or IPv6: ADDR[/LEN]"
};
static const struct cli_word w_dst = {
	"dst", "PREFIX", CV_NONE, "destination prefix, IPv4 or IPv6: ADDR[/LEN]"
};
static const struct cli_word w_flowlabel = {
	"flowlabel", "LABEL[/MASK]", CV_NONE, "IPv6 flow label (20 bits) under MASK, or any"
};
static const struct cli_word w_proto = {
	"proto", "PROTO", CV_NONE, "IP protocol: tcp, udp, icmp, icmpv6, ... or 0-255"
};
static const struct cli_word w_priority = {
	"priority", "N", CV_NONE, "0-65535, the lower wins an overlap; 100 if not given"
};
static const struct cli_word w_class = {
	"class", "CLASS", CV_CLASS, "the class, of the applied profile, packets go to"
};
static const struct cli_word w_set_dscp = {
	"set-dscp", "DSCP", CV_NONE, "rewrite the DSCP: 0-63, ef, csN, afXY, le, va"
};
static const struct cli_word w_id = { "id", "N", CV_NONE, "the rule's id, from 'rule list'" };
static const struct cli_word w_command = {
	NULL, "COMMAND", CV_COMMAND, "a command, and a subcommand of rule"
};

#define WORDS(...) ((const struct cli_word *const[]){ __VA_ARGS__, NULL })

static const struct cli_cmd rule_cmds[] = {
	{
		.name = "add",
		.group = "rule",
		.synopsis = "dev IFACE [name NAME] [src PREFIX] [dst PREFIX] "
			    "[flowlabel LABEL[/MASK]] [proto PROTO] [priority N] class CLASS "
			    "[set-dscp DSCP]",
		.summary = "add a rule",
		.help = "Packets that match every key given go to CLASS, whatever their DSCP, "
			"and get DSCP written with set-dscp. Of overlapping rules the one "
			"of the lowest priority wins, then the more specific.",
		.words = WORDS(&w_dev, &w_name, &w_src, &w_dst, &w_flowlabel, &w_proto,
			       &w_priority, &w_class, &w_set_dscp),
		.fn = do_rule_add,
	},
	{
		.name = "del",
		.group = "rule",
		.synopsis = "dev IFACE {id N | name NAME | MATCH}",
		.summary = "delete a rule",
		.help = "Delete the rule of id N, the rule named NAME, or the rule whose "
			"MATCH (src, dst, flowlabel and proto) is the one given.",
		.words = WORDS(&w_dev, &w_id, &w_name, &w_src, &w_dst, &w_flowlabel, &w_proto),
		.fn = do_rule_del,
	},
	{
		.name = "list",
		.group = "rule",
		.synopsis = "dev IFACE [-j]",
		.summary = "the rules of an interface, with their hit counters",
		.help = "The rules of IFACE, from its profile and added live, in the order "
			"overlaps are decided, with the packets and bytes each matched.",
		.words = WORDS(&w_dev),
		.opts = O_BIT(O_JSON),
		.fn = do_rule_list,
	},
	{},
};

const struct cli_cmd cli_cmds[] = {
	{
		.name = "apply",
		.synopsis = "PROFILE dev IFACE rate RATE [--strict] [--dry-run | --confirm SECONDS]",
		.summary = "put a profile on an interface, as one transaction",
		.help = "Install PROFILE on IFACE: on any failure the interface is left as it "
			"was. Applied again, the qdisc tree is changed in place and the "
			"programs are replaced atomically. A root qdisc that qosctl did not "
			"install is never replaced.",
		.words = WORDS(&w_profile, &w_dev, &w_rate),
		.opts = O_BIT(O_DRY_RUN) | O_BIT(O_CONFIRM) | O_BIT(O_STRICT),
		.fn = do_apply,
	},
	{
		.name = "confirm",
		.synopsis = "dev IFACE",
		.summary = "keep an apply made with --confirm",
		.help = "Keep the apply waiting for confirmation on IFACE; without this, the "
			"previous state comes back when its time runs out.",
		.words = WORDS(&w_dev),
		.fn = do_confirm,
	},
	{
		.name = "remove",
		.synopsis = "dev IFACE [--force]",
		.summary = "remove what qosctl installed on an interface",
		.help = "Remove qosctl's programs, qdisc tree and state from IFACE, and "
			"nothing else.",
		.words = WORDS(&w_dev),
		.opts = O_BIT(O_FORCE),
		.fn = do_remove,
	},
	{
		.name = "show",
		.synopsis = "dev IFACE [-j]",
		.summary = "the profile, classes, rates and DSCPs of an interface",
		.help = "The profile on IFACE, its scheduler and programs, and per class its "
			"rate, ceiling, priority, leaf queue, DSCPs and policer.",
		.words = WORDS(&w_dev),
		.opts = O_BIT(O_JSON),
		.fn = do_show,
	},
	{
		.name = "stats",
		.synopsis = "dev IFACE [-j] [-s] [--wide | --per-family]\n"
			    "dev IFACE [-j] [--wide | --per-family] --watch SECONDS [--count N]\n"
			    "[dev IFACE] --prometheus",
		.summary = "counters per class, direction and family",
		.help = "Packets, bytes and drops per class and direction, both address "
			"families together: police-drops by the class's policer, "
			"queue-drops by its queue (egress). -j always gives every counter "
			"per family.",
		.words = WORDS(&w_dev),
		.opts = O_BIT(O_JSON) | O_BIT(O_STATS) | O_BIT(O_WIDE) | O_BIT(O_PER_FAMILY) |
			O_BIT(O_WATCH) | O_BIT(O_COUNT) | O_BIT(O_PROMETHEUS),
		.fn = do_stats,
	},
	{
		.name = "rule",
		.synopsis = "{add | del | list} dev IFACE ...",
		.summary = "add, delete or list live classification rules",
		.help = "Rules send packets to a class by address, flow label and protocol, "
			"ahead of the DSCP; changed live, in one transaction.",
		.sub = rule_cmds,
	},
	{
		.name = "validate",
		.synopsis = "PROFILE [rate RATE] [mtu MTU] [--strict] [-j]",
		.summary = "check a profile without touching the kernel",
		.help = "Check PROFILE; with rate, also its rates and shares on a link of "
			"RATE. Errors name the file, the line and the key.",
		.words = WORDS(&w_profile, &w_rate, &w_mtu),
		.opts = O_BIT(O_JSON) | O_BIT(O_STRICT),
		.fn = do_validate,
	},
	{
		.name = "list",
		.synopsis = "[-j]",
		.summary = "the profile directories and the profiles in them",
		.help = "Every profile directory, in the order they are searched, and the "
			"profiles in each; a profile hides one of the same name in a later "
			"directory.",
		.opts = O_BIT(O_JSON),
		.fn = do_list,
	},
	{
		.name = "exporter",
		.synopsis = "--listen ADDRESS",
		.summary = "serve the Prometheus metrics over HTTP",
		.help = "Serve /metrics, and on / a page linking to it, until SIGINT or "
			"SIGTERM.",
		.opts = O_BIT(O_LISTEN),
		.fn = do_exporter,
	},
	{
		.name = "help",
		.synopsis = "[COMMAND]",
		.summary = "the usage, or the syntax and options of COMMAND",
		.help = "Without COMMAND, the commands and options; with it, its syntax and "
			"what each of its words and options does.",
		.words = WORDS(&w_command),
		.fn = do_help,
	},
	{},
};
