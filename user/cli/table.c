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
	[O_CONTINUOUS] = { "continuous", 0, NULL,
			   "probe send: windows of N until stopped, metrics served" },
	[O_ETCD] = { "etcd", 0, "URL[,URL...]",
		     "the domain's etcd members; QOSCTL_ETCD if not given" },
	[O_ETCD_CA] = { "etcd-ca", 0, "FILE", "CA certificates (PEM) checking the etcd members" },
	[O_ETCD_CERT] = { "etcd-cert", 0, "FILE", "client certificate (PEM) for etcd" },
	[O_ETCD_KEY] = { "etcd-key", 0, "FILE", "the client certificate's key (PEM)" },
	[O_ETCD_TIMEOUT] = { "etcd-timeout", 0, "TIME", "each etcd request's timeout: 5s if not given" },
	[O_ROUTER] = { "router", 0, "NAME", "agent: this router's name in the domain (default: host name)" },
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
static const struct cli_word w_ingress_rate = {
	"ingress-rate", "RATE", CV_NONE,
	"shape what arrives, through an IFB qosctl owns"
};
static const struct cli_word w_overhead = {
	"overhead", "N|PRESET", CV_NONE,
	"bytes the link adds to each frame, or a preset: ethernet, docsis, pppoe-ptm, ..."
};
static const struct cli_word w_mpu = {
	"mpu", "N", CV_NONE, "the smallest length, in bytes, the link charges a frame"
};
static const struct cli_word w_linklayer = {
	"linklayer", "ethernet|atm|ptm", CV_NONE, "the link's framing: ATM cells, VDSL2 PTM"
};
static const struct cli_word w_queues = {
	"queues", "N|auto", CV_NONE,
	"an HTB tree per TX queue under mq, 1/N of each rate"
};
static const struct cli_word w_tcx_place = {
	"tcx-place", "first|last", CV_NONE,
	"first (default) or last among other tools' tcx programs"
};
static const struct cli_word w_mtu = {
	"mtu", "MTU", CV_NONE, "MTU to check bursts against (default 1500)"
};
static const struct cli_word w_period = {
	"period", "MS", CV_NONE, "milliseconds between re-balancings: 10-10000, 100 if not given"
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
static const struct cli_word w_sport = {
	"sport", "PORT[-PORT]", CV_NONE, "source port or range, with proto tcp, udp, ..."
};
static const struct cli_word w_dport = {
	"dport", "PORT[-PORT]", CV_NONE, "destination port or range, with proto tcp, udp, ..."
};
static const struct cli_word w_police = {
	"police", "RATE", CV_NONE, "a policer of the rule's own at RATE: 10mbit"
};
static const struct cli_word w_burst = {
	"burst", "SIZE", CV_NONE, "its bucket: 64kb, 1514, auto (default)"
};
static const struct cli_word w_action = {
	"action", "ACTION", CV_NONE, "drop (default), remark:DSCP, demote:CLASS"
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

static const struct cli_word w_resv_id = {
	"id", "NAME", CV_NONE, "the reservation's name (r1, r2, ... if not given)"
};
static const struct cli_word w_resv_rate = {
	"rate", "RATE", CV_NONE, "the rate reserved: 2mbit"
};
static const struct cli_word w_resv_burst = {
	"burst", "SIZE", CV_NONE, "its token bucket: 16kb; two full-size frames if not given"
};
static const struct cli_word w_resv_remark = {
	"remark", "DSCP", CV_NONE, "rewrite its conforming packets to DSCP on the way out: ef"
};
static const struct cli_word w_file = {
	NULL, "FILE", CV_NONE, "a JSON file of reservations"
};
static const struct cli_word w_for = {
	"for", "DURATION", CV_NONE, "expire after DURATION: 30s, 10m, 2h; default never"
};
static const struct cli_word w_target = {
	NULL, "ADDRESS", CV_NONE, "the reflector, an IPv4 or IPv6 address"
};
static const struct cli_word w_port = {
	"port", "PORT", CV_NONE, "the UDP port; 862, STAMP's, if not given"
};
static const struct cli_word w_probe_class = {
	"class", "CLASS", CV_NONE, "a class of the profile, or all (the default)"
};
static const struct cli_word w_interval = {
	"interval", "TIME", CV_NONE, "between test packets of a class: 1ms-60s, 100ms if not given"
};
static const struct cli_word w_probe_count = {
	"count", "N", CV_NONE, "test packets per class, 1-100000; 10 if not given"
};
static const struct cli_word w_probe_profile = {
	"profile", "PROFILE", CV_PROFILE, "the classes and DSCPs to probe; pip-20pct if not given"
};
static const struct cli_word w_probe_listen = {
	"listen", "ADDRESS[,ADDRESS...]", CV_NONE,
	"up to 8 local addresses; every IPv4 and IPv6 one if not given"
};

static const struct cli_word w_refl_allow = {
	"allow", "PREFIX[,PREFIX...]", CV_NONE, "answer only these IPv4 and IPv6 prefixes"
};
static const struct cli_word w_refl_port_min = {
	"src-port-min", "N", CV_NONE, "refuse source ports below N; 1024 if not given"
};
static const struct cli_word w_refl_src_rate = {
	"src-rate", "N", CV_NONE, "test packets per second per source; 1000 if not given"
};
static const struct cli_word w_refl_src_burst = {
	"src-burst", "N", CV_NONE, "a source's burst of test packets; 100 if not given"
};
static const struct cli_word w_refl_global_rate = {
	"global-rate", "N", CV_NONE, "test packets per second in all; 20000 if not given"
};
static const struct cli_word w_refl_global_burst = {
	"global-burst", "N", CV_NONE, "the burst of all sources; 1000 if not given"
};
static const struct cli_word w_refl_cos = {
	"cos-dscp", "DSCP[,DSCP...]", CV_NONE, "DSCPs a Class of Service TLV may ask for the reply"
};
static const struct cli_word w_refl_user = {
	"user", "USER", CV_NONE, "started as root, run as USER once bound; nobody if not given"
};
static const struct cli_word w_exporter_allow = {
	"allow", "PREFIX", CV_NONE, "serve only clients in these prefixes (at most 16)"
};

static const struct cli_word w_probe_dev = {
	"dev", "IFACE", CV_IFACE, "publish the SLA verdict for 'show dev IFACE'"
};
static const struct cli_word w_probe_state = {
	"state", "NAME", CV_NONE, "with dev: the name of the probe's state directory"
};

static const struct cli_word w_sla = {
	"sla", "CLASS", CV_NONE, "the class an SLA (delay-p99, loss) is checked for"
};
static const struct cli_word w_delay_p99 = {
	"delay-p99", "TIME", CV_NONE, "SLA: the highest round-trip p99 of a window"
};
static const struct cli_word w_loss = {
	"loss", "PERCENT", CV_NONE, "SLA: the highest loss of a window, 0-100%"
};

static const struct cli_word w_domain_file = {
	NULL, "FILE", CV_NONE, "the domain, JSON: routers, interfaces, prefixes"
};
static const struct cli_word w_dom_cmd = {
	NULL, "add|del|list", CV_NONE, "admit, delete or list reservations of the domain"
};
static const struct cli_word w_dom_src = {
	"src", "PREFIX", CV_NONE, "the source, IPv4 or IPv6, inside a declared prefix"
};
static const struct cli_word w_dom_dst = {
	"dst", "PREFIX", CV_NONE, "the destination, inside a declared prefix"
};
static const struct cli_word w_dom_id = {
	"id", "NAME", CV_NONE, "the reservation's name (resv-HEX if not given)"
};
static const struct cli_word w_dom_remark = {
	"remark", "DSCP", CV_NONE, "the DSCP the edge router marks it with: ef if not given"
};

#define WORDS(...) ((const struct cli_word *const[]){ __VA_ARGS__, NULL })

static const struct cli_cmd rule_cmds[] = {
	{
		.name = "add",
		.group = "rule",
		.synopsis = "dev IFACE [name NAME] [src PREFIX] [dst PREFIX] "
			    "[flowlabel LABEL[/MASK]] [proto PROTO] [sport PORT[-PORT]] "
			    "[dport PORT[-PORT]] [priority N] class CLASS [set-dscp DSCP] "
			    "[police RATE [burst SIZE] [action ACTION]]",
		.summary = "add a rule",
		.help = "Packets that match every key given go to CLASS, whatever their DSCP, "
			"and get DSCP written with set-dscp. Of overlapping rules the one "
			"of the lowest priority wins, then the more specific. With police, "
			"the rule's packets are policed at RATE by a policer of its own "
			"instead of their class's.",
		.words = WORDS(&w_dev, &w_name, &w_src, &w_dst, &w_flowlabel, &w_proto,
			       &w_sport, &w_dport, &w_priority, &w_class, &w_set_dscp, &w_police,
			       &w_burst, &w_action),
		.fn = do_rule_add,
	},
	{
		.name = "del",
		.group = "rule",
		.synopsis = "dev IFACE {id N | name NAME | MATCH}",
		.summary = "delete a rule",
		.help = "Delete the rule of id N, the rule named NAME, or the rule whose "
			"MATCH (src, dst, flowlabel, proto, sport and dport) is the one given.",
		.words = WORDS(&w_dev, &w_id, &w_name, &w_src, &w_dst, &w_flowlabel, &w_proto,
			       &w_sport, &w_dport),
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

static const struct cli_cmd reserve_cmds[] = {
	{
		.name = "add",
		.group = "reserve",
		.synopsis = "dev IFACE [id NAME] [src PREFIX] [dst PREFIX] "
			    "[flowlabel LABEL[/MASK]] [proto PROTO] [sport PORT[-PORT]] "
			    "[dport PORT[-PORT]] rate RATE [burst SIZE] [remark DSCP] "
			    "[for DURATION]",
		.summary = "reserve a rate in the profile's reserve-class",
		.help = "Admit the flow that matches into the profile's reserve-class on "
			"IFACE's egress, policed there at RATE and SIZE (beyond them demoted "
			"or dropped, as the profile says), if the reservations together still "
			"fit the class's ceiling less its headroom and their bursts drain "
			"within its delay bound; refused with the figures otherwise. With "
			"for, the reservation ends by itself.",
		.words = WORDS(&w_dev, &w_resv_id, &w_src, &w_dst, &w_flowlabel, &w_proto,
			       &w_sport, &w_dport, &w_resv_rate, &w_resv_burst, &w_resv_remark,
			       &w_for),
		.fn = do_reserve_add,
	},
	{
		.name = "del",
		.group = "reserve",
		.synopsis = "dev IFACE id NAME",
		.summary = "end a reservation",
		.help = "Delete the reservation NAME of IFACE.",
		.words = WORDS(&w_dev, &w_resv_id),
		.fn = do_reserve_del,
	},
	{
		.name = "list",
		.group = "reserve",
		.synopsis = "dev IFACE [-j]",
		.summary = "the reservations of an interface and the rate left",
		.help = "Each reservation of IFACE with its rate, time left and the packets and "
			"bytes it matched, and the class's admitted, reserved and free rates.",
		.words = WORDS(&w_dev),
		.opts = O_BIT(O_JSON),
		.fn = do_reserve_list,
	},
	{
		.name = "apply",
		.group = "reserve",
		.synopsis = "FILE",
		.summary = "add or replace the reservations of a JSON file",
		.help = "The requests of FILE ({\"reservations\": [{\"dev\": ..., \"id\": ..., "
			"\"rate\": ...}, ...]}), all checked first, then one transaction per "
			"interface. A request whose id exists replaces it: the same file "
			"sent again changes nothing.",
		.words = WORDS(&w_file),
		.fn = do_reserve_apply,
	},
	{},
};

static const struct cli_cmd domain_cmds[] = {
	{
		.name = "load",
		.group = "domain",
		.synopsis = "FILE [--etcd URL[,URL...]]",
		.summary = "declare the domain's routers, interfaces and prefixes",
		.help = "Check FILE whole ({\"routers\": [...], \"interfaces\": [{\"router\", "
			"\"dev\", \"rate\", \"profile\", \"peer\"}], \"prefixes\": [{\"prefix\", "
			"\"router\", \"dev\"}]}), each profile as apply finds it, then write it "
			"to etcd in one transaction. Loaded again, it writes nothing; a change "
			"that would strand admitted reservations is refused with the numbers.",
		.words = WORDS(&w_domain_file),
		.opts = O_BIT(O_JSON) | O_ETCD_ALL,
		.fn = do_domain_load,
	},
	{
		.name = "reserve",
		.group = "domain",
		.synopsis = "add src PREFIX dst PREFIX [proto PROTO] [sport PORT[-PORT]] "
			    "[dport PORT[-PORT]] [flowlabel LABEL[/MASK]] rate RATE [burst SIZE] "
			    "[remark DSCP] [for DURATION] [id NAME]\n"
			    "del id NAME\n"
			    "list [-j]",
		.summary = "admit a reservation on every hop of its path",
		.help = "add: the path from the source's router to the destination's over the "
			"declared links (fewest hops; ties to the smaller router names), "
			"admitted on every egress interface by rate and burst against the "
			"delay bound, in one etcd transaction; refused naming the bottleneck "
			"router and interface with its numbers. del: every key of it at once. "
			"list: the reservations, their paths and hops.",
		.words = WORDS(&w_dom_cmd, &w_dom_src, &w_dom_dst, &w_proto, &w_sport, &w_dport,
			       &w_flowlabel, &w_resv_rate, &w_resv_burst, &w_dom_remark, &w_for,
			       &w_dom_id),
		.opts = O_BIT(O_JSON) | O_ETCD_ALL,
		.fn = do_domain_reserve,
	},
	{
		.name = "status",
		.group = "domain",
		.synopsis = "[-j]",
		.summary = "the agents, interfaces and reservations of the domain",
		.help = "Per router, whether its agent is alive, the revisions it was told and "
			"has applied, its last error; per interface, what its class admits, "
			"what is reserved and free; per reservation, its path and whether each "
			"hop has installed it; SLA verdicts where probes run.",
		.opts = O_BIT(O_JSON) | O_ETCD_ALL,
		.fn = do_domain_status,
	},
	{},
};

static const struct cli_cmd probe_cmds[] = {
	{
		.name = "send",
		.group = "probe",
		.synopsis = "ADDRESS [port PORT] [class CLASS] [interval TIME] [count N] "
			    "[profile PROFILE] [sla CLASS [delay-p99 TIME] [loss PERCENT]] "
			    "[-j | --continuous --listen ADDRESS [dev IFACE [state NAME]]]",
		.summary = "delay, jitter and loss per class to a STAMP reflector",
		.help = "Send COUNT STAMP test packets per class to the reflector at ADDRESS, "
			"each class with its DSCP (and IPv6 flow label, for a class a "
			"profile rule matches by flow label), and report per class the "
			"round-trip delay less the reflector's time, the one-way delays, "
			"jitter, loss, duplicates, reordering and the DSCP the reflector "
			"received (RFC 8972 Class of Service TLV). With --continuous, "
			"probe in windows of COUNT until stopped and serve the metrics "
			"(histograms, loss, the SLA's verdict) on --listen; with dev, "
			"also publish the verdict of each window for 'qosctl show dev IFACE'.",
		.words = WORDS(&w_target, &w_port, &w_probe_class, &w_interval, &w_probe_count,
			       &w_probe_profile, &w_sla, &w_delay_p99, &w_loss, &w_probe_dev,
			       &w_probe_state),
		.opts = O_BIT(O_JSON) | O_BIT(O_CONTINUOUS) | O_BIT(O_LISTEN),
		.fn = do_probe_send,
	},
	{
		.name = "reflect",
		.group = "probe",
		.synopsis = "[listen ADDRESS[,ADDRESS...]] [port PORT] [allow PREFIX[,PREFIX...]] "
			    "[src-port-min N] [src-rate N] [src-burst N] [global-rate N] "
			    "[global-burst N] [cos-dscp DSCP[,DSCP...]] [user USER] "
			    "[--listen ADDRESS] [-j]",
		.summary = "answer STAMP test packets until stopped",
		.help = "Reflect STAMP and TWAMP-light test packets, IPv4 and IPv6, until "
			"SIGINT or SIGTERM, then print the packets reflected per family "
			"and received DSCP, and those refused per reason. A reply keeps "
			"the DSCP its test packet came with unless cos-dscp allows the "
			"one its Class of Service TLV asks for. Test packets from "
			"outside allow, from source ports below src-port-min, 7 or PORT, "
			"and beyond the rates are not answered. Started as root, it "
			"runs as USER with no capability once bound; with --listen, "
			"its counters are served as metrics.",
		.words = WORDS(&w_probe_listen, &w_port, &w_refl_allow, &w_refl_port_min,
			       &w_refl_src_rate, &w_refl_src_burst, &w_refl_global_rate,
			       &w_refl_global_burst, &w_refl_cos, &w_refl_user),
		.opts = O_BIT(O_JSON) | O_BIT(O_LISTEN),
		.fn = do_probe_reflect,
	},
	{},
};

const struct cli_cmd cli_cmds[] = {
	{
		.name = "apply",
		.synopsis = "PROFILE dev IFACE rate RATE [ingress-rate RATE] [overhead N|PRESET] "
			    "[mpu N] [linklayer ethernet|atm|ptm] [queues N|auto] [tcx-place first|last] "
			    "[--strict] [--dry-run | --confirm SECONDS]",
		.summary = "put a profile on an interface, as one transaction",
		.help = "Install PROFILE on IFACE: on any failure the interface is left as it "
			"was. Applied again, the qdisc tree is changed in place and the "
			"programs are replaced atomically. A root qdisc that qosctl did not "
			"install is never replaced.",
		.words = WORDS(&w_profile, &w_dev, &w_rate, &w_ingress_rate, &w_overhead, &w_mpu,
			       &w_linklayer, &w_queues, &w_tcx_place),
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
		.name = "reserve",
		.synopsis = "{add | del | list} dev IFACE ... | apply FILE",
		.summary = "Premium IP reservations with admission control",
		.help = "Reservations admit a flow into the profile's reserve-class at a rate, "
			"while the reservations together fit what the class admits.",
		.sub = reserve_cmds,
	},
	{
		.name = "domain",
		.synopsis = "{load FILE | reserve {add | del | list} ... | status} [--etcd URL[,URL...]]",
		.summary = "a DiffServ domain of many routers on etcd",
		.help = "The domain's routers, interfaces and prefixes, and reservations "
			"admitted along their paths, kept in etcd (--etcd or QOSCTL_ETCD); an "
			"agent on each router installs them.",
		.sub = domain_cmds,
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
		.synopsis = "--listen ADDRESS [allow PREFIX[,PREFIX...]]",
		.summary = "serve the Prometheus metrics over HTTP",
		.help = "Serve /metrics, and on / a page linking to it, until SIGINT or "
			"SIGTERM; with allow, only to clients under one of the prefixes.",
		.words = WORDS(&w_exporter_allow),
		.opts = O_BIT(O_LISTEN),
		.fn = do_exporter,
	},
	{
		.name = "agent",
		.synopsis = "[--router NAME] [--etcd URL[,URL...]]",
		.summary = "run this router's agent of a domain on etcd",
		.help = "In the foreground until SIGINT or SIGTERM: read this router's "
			"interfaces and edge reservations from etcd (--etcd or $QOSCTL_ETCD), install "
			"them through the one installer, change only what differs, keep "
			"what runs when etcd is unreachable, and publish its status under "
			"a lease of its own (Documentation/domain.rst).",
		.opts = O_BIT(O_ROUTER) | O_ETCD_ALL,
		.fn = do_agent,
	},
	{
		.name = "balance",
		.synopsis = "dev IFACE [period MS] [-j]",
		.summary = "share a multi-queue tree's rates by each queue's demand",
		.help = "In the foreground until SIGINT or SIGTERM: every period, read the "
			"classes of each TX queue's tree (queues N) and set their HTB rates so "
			"that one flow may use the whole link while the link, Premium IP's cap "
			"and LBE's floor hold for the link as a whole; on exit, put back the "
			"static split (1/N of every rate) and print a summary.",
		.words = WORDS(&w_dev, &w_period),
		.opts = O_BIT(O_JSON),
		.fn = do_balance,
	},
	{
		.name = "probe",
		.synopsis = "{send | reflect} ...",
		.summary = "STAMP measurements of delay, jitter and loss per class",
		.help = "Active measurement with STAMP (RFC 8762), IPv4 and IPv6: a sender "
			"probing each class with its DSCP, and a reflector.",
		.sub = probe_cmds,
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
