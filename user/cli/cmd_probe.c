// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * qosctl probe send / probe reflect: STAMP (RFC 8762) measurements per
 * class. The classes and their DSCPs come from a profile (pip-20pct unless
 * one is named): the probe runs on a host, which need not have the profile
 * applied. Documentation/assurance.rst.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "lib/privs.h"
#include "lib/util.h"
#include "model/profile.h"
#include "out/exporter.h"
#include "out/probe.h"
#include "probe/sla_metrics.h"
#include "probe/socket.h"
#include "probe/sla_state.h"
#include "probe/stamp.h"

#define PROBE_PROFILE		"pip-20pct"
#define PROBE_COUNT_MAX		100000
#define PROBE_WAIT_NS		1000000000ULL

struct probe_args {
	const char *addr;
	const char *port;
	const char *cls;
	const char *interval;
	const char *count;
	const char *profile;
	const char *listen;
	const char *sla;
	const char *delay_p99;
	const char *loss;
	const char *dev;
	const char *state;
	/* probe reflect */
	const char *allow;
	const char *src_port_min;
	const char *src_rate;
	const char *src_burst;
	const char *global_rate;
	const char *global_burst;
	const char *cos_dscp;
	const char *user;
};

/* KEY VALUE pairs of cli_cur's words, and at most one positional. */
static int parse_probe(int argc, char **argv, struct probe_args *a)
{
	const char **slot[] = { &a->port, &a->cls, &a->interval, &a->count, &a->profile,
				&a->listen, &a->sla, &a->delay_p99, &a->loss, &a->dev, &a->state,
				&a->allow, &a->src_port_min, &a->src_rate, &a->src_burst,
				&a->global_rate, &a->global_burst, &a->cos_dscp, &a->user };
	const char *keys[] = { "port", "class", "interval", "count", "profile", "listen",
			       "sla", "delay-p99", "loss", "dev", "state", "allow",
			       "src-port-min", "src-rate", "src-burst", "global-rate",
			       "global-burst", "cos-dscp", "user" };
	char name[32];
	size_t k;
	int i;

	cli_cmd_name(cli_cur, name, sizeof(name));
	for (i = 0; i < argc; i++) {
		const struct cli_word *w = cli_word(cli_cur, argv[i]);

		if (!w) {
			if (!strcmp(cli_cur->name, "send") && !a->addr) {
				a->addr = argv[i];
				continue;
			}
			cli_unknown_key(cli_cur, name, argv[i]);
			return -EINVAL;
		}
		if (i + 1 >= argc || !*argv[i + 1]) {
			qos_err("%s: '%s' needs a value", name, argv[i]);
			return -EINVAL;
		}
		for (k = 0; k < ARRAY_SIZE(keys); k++)
			if (!strcmp(keys[k], w->key))
				*slot[k] = argv[++i];
	}
	return 0;
}

static int parse_port(const char *cmd, const char *s, uint16_t *port)
{
	uint32_t v;

	*port = STAMP_PORT;
	if (!s)
		return 0;
	if (qos_parse_u32(s, &v) || !v || v > 65535) {
		qos_err("%s: port '%s': expected 1-65535", cmd, s);
		return -EINVAL;
	}
	*port = v;
	return 0;
}

/* EF if the profile maps it to @cl for @table (the PHB a PIP class is
 * named for), else the lowest DSCP it maps there, or -1. */
static int class_dscp(const struct qos_profile *p, const struct qos_class_spec *cl, int table)
{
	unsigned int d, i;

	if (cl->dscp[table] >> 46 & 1)
		return 46;
	for (d = 0; d < 64; d++)
		if (cl->dscp[table] >> d & 1)
			return d;
	/* DSCP 0 reaches the default class unless a class claims it. */
	if (strcmp(cl->name, p->default_class))
		return -1;
	for (i = 0; i < p->nclasses; i++)
		if (p->classes[i].dscp[table] & 1)
			return -1;
	return 0;
}

/* The flow label of a profile rule for @cl that matches on one, or 0. */
static uint32_t class_flowlabel(const struct qos_profile *p, const struct qos_class_spec *cl)
{
	size_t i;

	for (i = 0; i < p->rules.n; i++) {
		const struct qos_rule *r = &p->rules.r[i];

		if (r->fl_mask && r->family != AF_INET && !strcmp(r->class_name, cl->name))
			return r->flowlabel & r->fl_mask;
	}
	return 0;
}

/* The streams for "class NAME" or "class all" of @p on @family. */
static int pick_streams(const struct qos_profile *p, const char *cls, int family,
			struct probe_stream *s, unsigned int *n)
{
	int table = family == AF_INET6 ? QOS_TABLE_IPV6 : QOS_TABLE_IPV4;
	bool all = !strcmp(cls, "all");
	unsigned int i;

	*n = 0;
	for (i = 0; i < p->nclasses; i++) {
		const struct qos_class_spec *cl = &p->classes[i];
		uint32_t fl = family == AF_INET6 ? class_flowlabel(p, cl) : 0;
		int dscp = class_dscp(p, cl, table);

		if (!all && strcmp(cls, cl->name))
			continue;
		if (dscp < 0 && fl)
			dscp = 0;
		if (dscp < 0) {
			if (!all) {
				qos_err("probe send: class '%s': no DSCP of %s leads to it, "
					"nor a flow label rule", cls, p->path);
				return -EINVAL;
			}
			continue;
		}
		memset(&s[*n], 0, sizeof(s[*n]));
		snprintf(s[*n].name, sizeof(s[*n].name), "%s", cl->name);
		s[*n].dscp = dscp;
		s[*n].flowlabel = fl;
		s[*n].ssid = (getpid() << 4 | *n) & 0xffff;
		(*n)++;
	}
	if (!*n) {
		qos_err("probe send: class '%s': not a class of %s (or 'all')", cls, p->path);
		return -EINVAL;
	}
	return 0;
}

/* "sla CLASS [delay-p99 TIME] [loss PERCENT]" against the streams. */
static int parse_sla(const struct probe_args *a, const struct probe_stream *s, unsigned int n,
		     struct pm_sla *sla)
{
	unsigned int i;
	const char *end;

	sla->loss_ratio = -1;
	if (!a->sla) {
		if (a->delay_p99 || a->loss) {
			qos_err("probe send: '%s' needs 'sla CLASS'", a->loss ? "loss" : "delay-p99");
			return -EINVAL;
		}
		return 0;
	}
	for (i = 0; i < n && strcmp(s[i].name, a->sla); i++)
		;
	if (i == n) {
		qos_err("probe send: sla '%s': not a class probed", a->sla);
		return -EINVAL;
	}
	if (!a->delay_p99 && !a->loss) {
		qos_err("probe send: sla %s: needs delay-p99 TIME or loss PERCENT", a->sla);
		return -EINVAL;
	}
	if (a->delay_p99 && qos_parse_time(a->delay_p99, &sla->delay_p99_ns)) {
		qos_err("probe send: delay-p99 '%s': expected a time (2ms, 500us)", a->delay_p99);
		return -EINVAL;
	}
	if (a->loss) {
		if (qos_parse_decimal(a->loss, &sla->loss_ratio, &end))
			end = a->loss;
		sla->loss_ratio /= 100;
		if (end == a->loss || strcmp(end, "%") || sla->loss_ratio > 1) {
			qos_err("probe send: loss '%s': expected a percentage, 0%%-100%%", a->loss);
			return -EINVAL;
		}
	}
	snprintf(sla->cls, sizeof(sla->cls), "%s", a->sla);
	sla->set = true;
	return 0;
}

static const struct pstats_sum *sla_sum(const struct pm_sla *sla, const struct probe_stream *s,
					 unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!strcmp(s[i].name, sla->cls))
			return &s[i].sum;
	return NULL;
}

static struct qos_probe_dist dist_of(const struct pstats_dist *d)
{
	return (struct qos_probe_dist){ .n = d->n, .min = d->min, .p50 = d->p50, .p90 = d->p90,
					.p99 = d->p99, .max = d->max, .mean = d->mean };
}

/* Stream @s as out/probe.h prints it. */
static struct qos_probe_row row_of(const struct probe_stream *s)
{
	const struct pstats_sum *m = &s->sum;

	return (struct qos_probe_row){
		.cls = s->name, .dscp = s->dscp, .flowlabel = s->flowlabel, .ssid = s->ssid,
		.sent = m->sent, .received = m->received, .lost = m->lost,
		.duplicates = m->duplicates, .reordered = m->reordered,
		.rtt = dist_of(&m->rtt), .fwd = dist_of(&m->fwd), .back = dist_of(&m->back),
		.owd_valid = m->owd_valid, .jitter_ns = m->jitter_ns,
		.tx_kernel = m->tx_kernel, .rx_kernel = m->rx_kernel,
		.refl_dscp = m->refl_dscp, .refl_dscp_replies = m->refl_dscp_replies,
		.remarked = m->remarked, .cos_refused = m->cos_refused, .refl_ttl = m->refl_ttl,
	};
}

static int print_send(const char *addr, uint16_t port, const struct probe_send_cfg *c,
		      const struct probe_stream *s, unsigned int n, const struct pm_sla *sla)
{
	struct qos_probe_row rows[QOS_MAX_CLASSES];
	struct qos_probe_run run = {
		.target = addr, .port = port,
		.family = c->dst.ss_family == AF_INET6 ? "ipv6" : "ipv4",
		.interval_ns = c->interval_ns, .count = c->count, .rows = rows,
		.sla_delay_p99_ns = sla->delay_p99_ns, .sla_loss_ratio = sla->loss_ratio,
	};
	unsigned int i;

	for (i = 0; i < n && i < QOS_MAX_CLASSES; i++) {
		rows[i] = row_of(&s[i]);
		if (sla->set && !strcmp(s[i].name, sla->cls))
			run.sla_row = &rows[i];
	}
	run.n = i;
	if (run.sla_row)
		run.sla_met = pm_sla_met(sla, sla_sum(sla, s, n));
	return qos_probe_print(stdout, opt.json, &run);
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

/* Signals end the loop; the poll they interrupt has no SA_RESTART. */
static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static pthread_mutex_t pm_lock = PTHREAD_MUTEX_INITIALIZER;

/* Called from the HTTP server's thread. */
static int write_metrics(FILE *f, void *arg)
{
	pthread_mutex_lock(&pm_lock);
	pm_write(f, arg);
	pthread_mutex_unlock(&pm_lock);
	return 0;
}

/* The probe's directory when `state` is not given: the one systemd made for
 * the unit (RuntimeDirectory=qosctl-probe/%i), else one of this process. */
static const char *state_name(char *buf, size_t len)
{
	const char *rd = getenv("RUNTIME_DIRECTORY");
	size_t n = strlen(PROBE_STATE_DIR "/");

	if (rd && !strncmp(rd, PROBE_STATE_DIR "/", n) && rd[n] && !strpbrk(rd + n, "/:"))
		return rd + n;
	snprintf(buf, len, "pid-%d", (int)getpid());
	return buf;
}

/* The last window's SLA verdicts, written for show. -errno. */
static int publish(struct pstate_pub *pub, const struct pm_target *t)
{
	struct qos_sla_verdict v[QOS_MAX_CLASSES];
	struct qos_sla_state st = {
		.target = t->target, .family = t->family, .window_ns = pub->window_ns,
		.windows = t->windows, .end_boottime_ns = qos_boottime_ns(), .v = v,
	};
	unsigned int i;
	char *text;
	int r;

	for (i = 0; i < t->n && st.n < QOS_MAX_CLASSES; i++) {
		if (t->m[i].sla_met < 0)
			continue;
		v[st.n++] = (struct qos_sla_verdict){
			.cls = t->s[i].name, .delay_p99_bound_ns = t->sla->delay_p99_ns,
			.loss_bound_ratio = t->sla->loss_ratio, .delay_p99_ns = t->m[i].p99_ns,
			.loss_ratio = t->m[i].loss_ratio, .met = t->m[i].sla_met,
		};
	}
	text = qos_sla_state_json(&st);
	if (!text)
		return -ENOMEM;
	r = pstate_publish(pub, text);
	free(text);
	return r;
}

/* Windows of c->count test packets per class until SIGINT or SIGTERM. */
static int run_continuous(const char *addr, struct probe_send_cfg *c, struct probe_stream *s,
			  unsigned int n, const struct pm_sla *sla, struct pstate_pub *pub)
{
	struct pm_stream m[QOS_MAX_CLASSES] = {};
	struct pm_target t = {
		.target = addr, .family = c->dst.ss_family == AF_INET6 ? "ipv6" : "ipv4",
		.s = s, .m = m, .n = n, .sla = sla,
	};
	struct qos_exporter srv = { .write = write_metrics, .arg = &t };
	bool pub_failed = false;
	char err[512];
	sigset_t set;
	unsigned int i;
	int r, e;

	/* The server's thread inherits a mask with them blocked: they come
	 * to this thread, and interrupt its poll. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	r = qos_exporter_start(&srv, opt.listen, err, sizeof(err));
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	if (r) {
		qos_err("probe send: %s", err);
		pstate_close(pub);
		return r;
	}
	catch_signals();
	fprintf(stderr, "qosctl: probe send: serving /metrics on %s\n", opt.listen);
	c->stop = &stop;
	while (!stop) {
		r = probe_send(c, s, n, err, sizeof(err));
		if (r) {
			qos_err("probe send: %s", err);
			break;
		}
		/* A window cut short by the signal is not a window. */
		pthread_mutex_lock(&pm_lock);
		if (!stop)
			pm_add_window(&t);
		pthread_mutex_unlock(&pm_lock);
		/* Only this thread changes @t: no lock to read it. A failed
		 * write is said once; the metrics go on being served. */
		e = !stop && pub->dirfd >= 0 ? publish(pub, &t) : 0;
		if (e && !pub_failed) {
			qos_err("probe send: %s/%s/%s: %s", PROBE_STATE_DIR, pub->dir, pub->file,
				strerror(-e));
			pub_failed = true;
		}
		for (i = 0; i < n; i++)
			pstats_free(&s[i].st);
	}
	qos_exporter_stop(&srv);
	pstate_close(pub);
	return r;
}

/* The sender's address, interval, count and reply wait from @a. */
static int send_cfg(const struct probe_args *a, struct probe_send_cfg *c, uint16_t *port)
{
	if (parse_port("probe send", a->port, port))
		return -EINVAL;
	if (!a->addr) {
		qos_err("probe send: missing ADDRESS (the reflector's)");
		return -EINVAL;
	}
	if (probe_addr(a->addr, *port, &c->dst, &c->dstlen)) {
		qos_err("probe send: '%s': not an IPv4 or IPv6 address", a->addr);
		return -EINVAL;
	}
	c->interval_ns = 100000000;
	if (a->interval && (qos_parse_time(a->interval, &c->interval_ns) ||
			    c->interval_ns < 1000000 || c->interval_ns > 60000000000ULL)) {
		qos_err("probe send: interval '%s': expected a time from 1ms to 60s", a->interval);
		return -EINVAL;
	}
	c->count = 10;
	if (a->count && (qos_parse_u32(a->count, &c->count) || !c->count ||
			 c->count > PROBE_COUNT_MAX)) {
		qos_err("probe send: count '%s': expected 1-%d", a->count, PROBE_COUNT_MAX);
		return -EINVAL;
	}
	c->wait_ns = PROBE_WAIT_NS + c->interval_ns;
	return 0;
}

/* The options that only go together: --continuous with --listen, dev with
 * an SLA of a continuous run, state with dev, -j without --continuous. */
static int send_modes(const struct probe_args *a, const struct pm_sla *sla)
{
	if (opt.continuous != !!opt.listen) {
		qos_err("probe send: --continuous and --listen ADDRESS go together");
		return -EINVAL;
	}
	if (a->dev && (!opt.continuous || !sla->set)) {
		qos_err("probe send: dev %s: publishes the verdict of --continuous with sla CLASS",
			a->dev);
		return -EINVAL;
	}
	if (a->state && !a->dev) {
		qos_err("probe send: state %s: names where dev IFACE publishes; dev is missing",
			a->state);
		return -EINVAL;
	}
	if (opt.continuous && opt.json) {
		qos_err("probe send: --continuous serves its metrics, -j is for a single run");
		return -EINVAL;
	}
	return 0;
}

int do_probe_send(int argc, char **argv)
{
	struct pm_sla sla = {};
	struct probe_stream s[QOS_MAX_CLASSES];
	struct probe_send_cfg c = {};
	struct probe_args a = {};
	struct qos_profile p;
	char err[512];
	unsigned int n, i;
	uint16_t port;
	int r;

	if (parse_probe(argc, argv, &a) || send_cfg(&a, &c, &port))
		return -EINVAL;
	if (cli_check_profile("probe send", a.profile ? a.profile : PROBE_PROFILE))
		return -EINVAL;
	if (qos_profile_load(a.profile ? a.profile : PROBE_PROFILE, &p, err, sizeof(err))) {
		qos_err("probe send: %s", err);
		return -EINVAL;
	}
	r = pick_streams(&p, a.cls ? a.cls : "all", c.dst.ss_family, s, &n);
	qos_profile_free(&p);
	if (r || parse_sla(&a, s, n, &sla) || send_modes(&a, &sla))
		return -EINVAL;
	if (opt.continuous) {
		struct pstate_pub pub = { .dirfd = -1 };
		char name[32];

		if (a.dev) {
			if (pstate_open(&pub, a.state ?: state_name(name, sizeof(name)), a.dev,
					c.count * c.interval_ns + c.wait_ns, err, sizeof(err))) {
				qos_err("probe send: %s", err);
				return -EINVAL;
			}
		}
		return run_continuous(a.addr, &c, s, n, &sla, &pub);
	}
	r = probe_send(&c, s, n, err, sizeof(err));
	if (r) {
		qos_err("probe send: %s", err);
		goto out;
	}
	r = print_send(a.addr, port, &c, s, n, &sla);
	if (r)
		qos_err("probe send: %s", strerror(-r));
out:
	for (i = 0; i < n; i++)
		pstats_free(&s[i].st);
	return r;
}

_Static_assert(RG_NVERDICTS - 1 <= QOS_REFL_REASONS_MAX, "a refusal reason left out");

static int print_refl(const struct probe_refl_stats *rs)
{
	struct qos_refl_counts c = { .bad = rs->bad, .evicted = rs->evicted };
	int f, d;

	for (f = 0; f < 2; f++) {
		c.packets[f] = rs->packets[f];
		memcpy(c.dscp[f], rs->dscp[f], sizeof(c.dscp[f]));
		c.cos_refused[f] = rs->cos_refused[f];
		for (d = RG_PASS + 1; d < RG_NVERDICTS; d++)
			c.refused[f][d - 1] = rs->refused[f][d];
	}
	for (d = RG_PASS + 1; d < RG_NVERDICTS; d++)
		c.reason[c.nreasons++] = rg_reason[d];
	return qos_refl_print(stdout, opt.json, &c);
}

/* @s, if given, a number from 1 to @max, into @v. */
static int refl_num(const char *key, const char *s, uint32_t max, uint32_t *v)
{
	if (!s)
		return 0;
	if (qos_parse_u32(s, v) || !*v || *v > max) {
		qos_err("probe reflect: %s '%s': expected 1-%u", key, s, max);
		return -EINVAL;
	}
	return 0;
}

/* "PREFIX[,PREFIX...]" into the guard's allow-list. */
static int refl_allow(const char *s, struct rg_cfg *g)
{
	char buf[4096], *tok, *save;

	if (!s)
		return 0;
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (g->nallow == RG_ALLOW_MAX) {
			qos_err("probe reflect: allow: at most %d prefixes", RG_ALLOW_MAX);
			return -EINVAL;
		}
		if (rg_parse_prefix(tok, &g->allow[g->nallow++])) {
			qos_err("probe reflect: allow '%s': not an IPv4 or IPv6 prefix", tok);
			return -EINVAL;
		}
	}
	if (!g->nallow) {
		qos_err("probe reflect: allow '%s': expected PREFIX[,PREFIX...]", s);
		return -EINVAL;
	}
	return 0;
}

/* "DSCP[,DSCP...]" (numbers or names) into a mask. */
static int refl_cos(const char *s, uint64_t *mask)
{
	char buf[512], *tok, *save;
	uint8_t d;

	*mask = 0;
	if (!s)
		return 0;
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (qos_parse_dscp(tok, &d)) {
			qos_err("probe reflect: cos-dscp '%s': expected DSCPs (0-63 or a name: "
				"ef, af11, cs1), comma-separated", tok);
			return -EINVAL;
		}
		*mask |= 1ULL << d;
	}
	if (!*mask) {
		qos_err("probe reflect: cos-dscp '%s': expected DSCP[,DSCP...]", s);
		return -EINVAL;
	}
	return 0;
}

static int refl_cfg(const struct probe_args *a, struct probe_refl_cfg *c)
{
	struct rg_cfg *g = &c->guard;
	uint32_t pmin = RG_SRC_PORT_MIN;

	if (parse_port("probe reflect", a->port, &c->port))
		return -EINVAL;
	rg_cfg_default(g, c->port);
	c->addr = a->listen;
	if (refl_num("src-port-min", a->src_port_min, 65535, &pmin) ||
	    refl_num("src-rate", a->src_rate, 10000000, &g->src_rate) ||
	    refl_num("src-burst", a->src_burst, 1000000, &g->src_burst) ||
	    refl_num("global-rate", a->global_rate, 10000000, &g->all_rate) ||
	    refl_num("global-burst", a->global_burst, 1000000, &g->all_burst) ||
	    refl_allow(a->allow, g) || refl_cos(a->cos_dscp, &c->cos_allowed))
		return -EINVAL;
	g->src_port_min = pmin;
	return 0;
}

struct refl_run {
	const char *user;
	struct probe_refl_stats *rs;
	struct qos_exporter srv;
};

static int write_refl_metrics(FILE *f, void *arg)
{
	pm_write_reflect(f, arg);
	return 0;
}

/* The sockets are bound: give up root and capabilities, then serve the
 * metrics (from a thread, started only now: capabilities are per thread). */
static int refl_ready(void *arg, char *err, size_t errlen)
{
	struct refl_run *run = arg;
	sigset_t set;
	int r;

	r = qos_drop_privs(run->user, err, errlen);
	if (r || !opt.listen)
		return r;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	run->srv = (struct qos_exporter){ .write = write_refl_metrics, .arg = run->rs };
	r = qos_exporter_start(&run->srv, opt.listen, err, errlen);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	if (!r)
		fprintf(stderr, "qosctl: probe reflect: serving /metrics on %s\n", opt.listen);
	return r;
}

int do_probe_reflect(int argc, char **argv)
{
	struct probe_refl_stats rs = {};
	struct probe_refl_cfg c = { .stop = &stop };
	struct refl_run run = { .user = "nobody", .rs = &rs };
	struct probe_args a = {};
	char err[512];
	int r;

	if (parse_probe(argc, argv, &a) || refl_cfg(&a, &c))
		return -EINVAL;
	if (a.user)
		run.user = a.user;
	c.ready = refl_ready;
	c.arg = &run;
	catch_signals();
	r = probe_reflect(&c, &rs, err, sizeof(err));
	if (run.srv.d)
		qos_exporter_stop(&run.srv);
	if (r) {
		qos_err("probe reflect: %s", err);
		return -1;
	}
	r = print_refl(&rs);
	if (r)
		qos_err("probe reflect: %s", strerror(-r));
	fflush(stdout);
	return r;
}
