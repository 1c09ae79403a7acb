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

#include <json-c/json.h>

#include "cli/cli.h"
#include "lib/privs.h"
#include "lib/util.h"
#include "model/profile.h"
#include "out/exporter.h"
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

static json_object *dist_json(const struct pstats_dist *d)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "samples", json_object_new_int64(d->n));
	json_object_object_add(o, "min_ns", json_object_new_int64(d->min));
	json_object_object_add(o, "p50_ns", json_object_new_int64(d->p50));
	json_object_object_add(o, "p90_ns", json_object_new_int64(d->p90));
	json_object_object_add(o, "p99_ns", json_object_new_int64(d->p99));
	json_object_object_add(o, "max_ns", json_object_new_int64(d->max));
	json_object_object_add(o, "mean_ns", json_object_new_double(d->mean));
	return o;
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

static void print_json(const char *addr, uint16_t port, const struct probe_send_cfg *c,
		       const struct probe_stream *s, unsigned int n, const struct pm_sla *sla)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	unsigned int i;

	json_object_object_add(o, "target", json_object_new_string(addr));
	json_object_object_add(o, "port", json_object_new_int(port));
	json_object_object_add(o, "family", json_object_new_string(
		c->dst.ss_family == AF_INET6 ? "ipv6" : "ipv4"));
	json_object_object_add(o, "interval_ns", json_object_new_uint64(c->interval_ns));
	json_object_object_add(o, "count", json_object_new_uint64(c->count));
	for (i = 0; i < n; i++) {
		const struct pstats_sum *m = &s[i].sum;
		json_object *e = json_object_new_object(), *r = json_object_new_object();

		json_object_object_add(e, "class", json_object_new_string(s[i].name));
		json_object_object_add(e, "dscp", json_object_new_int(s[i].dscp));
		json_object_object_add(e, "flowlabel", s[i].flowlabel ?
				       json_object_new_int64(s[i].flowlabel) : NULL);
		json_object_object_add(e, "ssid", json_object_new_int(s[i].ssid));
		json_object_object_add(e, "sent", json_object_new_int64(m->sent));
		json_object_object_add(e, "received", json_object_new_int64(m->received));
		json_object_object_add(e, "lost", json_object_new_int64(m->lost));
		json_object_object_add(e, "loss_pct", json_object_new_double(
			m->sent ? 100.0 * m->lost / m->sent : 0));
		json_object_object_add(e, "duplicates", json_object_new_int64(m->duplicates));
		json_object_object_add(e, "reordered", json_object_new_int64(m->reordered));
		json_object_object_add(e, "rtt", dist_json(&m->rtt));
		json_object_object_add(e, "jitter_ns", json_object_new_double(m->jitter_ns));
		json_object_object_add(e, "forward", dist_json(&m->fwd));
		json_object_object_add(e, "backward", dist_json(&m->back));
		json_object_object_add(e, "one_way_valid", json_object_new_boolean(m->owd_valid));
		json_object_object_add(e, "tx_kernel_timestamps", json_object_new_int64(m->tx_kernel));
		json_object_object_add(e, "rx_kernel_timestamps", json_object_new_int64(m->rx_kernel));
		json_object_object_add(r, "dscp", m->refl_dscp >= 0 ?
				       json_object_new_int(m->refl_dscp) : NULL);
		json_object_object_add(r, "dscp_replies", json_object_new_int64(m->refl_dscp_replies));
		json_object_object_add(r, "remarked", json_object_new_int64(m->remarked));
		json_object_object_add(r, "cos_refused", json_object_new_int64(m->cos_refused));
		json_object_object_add(r, "ttl", m->refl_ttl >= 0 ?
				       json_object_new_int(m->refl_ttl) : NULL);
		json_object_object_add(e, "reflector", r);
		json_object_array_add(a, e);
	}
	json_object_object_add(o, "streams", a);
	if (sla->set) {
		json_object *j = json_object_new_object();

		json_object_object_add(j, "class", json_object_new_string(sla->cls));
		json_object_object_add(j, "delay_p99_ns", sla->delay_p99_ns ?
				       json_object_new_uint64(sla->delay_p99_ns) : NULL);
		json_object_object_add(j, "loss_pct", sla->loss_ratio >= 0 ?
				       json_object_new_double(sla->loss_ratio * 100) : NULL);
		json_object_object_add(j, "met", json_object_new_boolean(
			pm_sla_met(sla, sla_sum(sla, s, n))));
		json_object_object_add(o, "sla", j);
	}
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
}

static void print_text(const char *addr, uint16_t port, const struct probe_send_cfg *c,
		       const struct probe_stream *s, unsigned int n, const struct pm_sla *sla)
{
	unsigned int i;

	printf("STAMP to %s port %u: %u test packets per class, every %.3f ms\n", addr, port,
	       c->count, c->interval_ns / 1e6);
	printf("%-8s %4s %6s %6s %6s %4s %5s  %-26s %8s %s\n", "class", "dscp", "sent", "rcvd",
	       "loss%", "dup", "reord", "rtt ms min/p50/p90/p99", "jitter", "refl-dscp");
	for (i = 0; i < n; i++) {
		const struct pstats_sum *m = &s[i].sum;
		char rtt[64], refl[48];

		snprintf(rtt, sizeof(rtt), "%.3f/%.3f/%.3f/%.3f", m->rtt.min / 1e6,
			 m->rtt.p50 / 1e6, m->rtt.p90 / 1e6, m->rtt.p99 / 1e6);
		if (m->refl_dscp < 0)
			snprintf(refl, sizeof(refl), "unknown");
		else if (m->remarked)
			snprintf(refl, sizeof(refl), "%d (re-marked in %u)", m->refl_dscp,
				 m->remarked);
		else
			snprintf(refl, sizeof(refl), "%d", m->refl_dscp);
		printf("%-8s %4u %6u %6u %6.2f %4u %5u  %-26s %8.3f %s\n", s[i].name, s[i].dscp,
		       m->sent, m->received, m->sent ? 100.0 * m->lost / m->sent : 0,
		       m->duplicates, m->reordered, rtt, m->jitter_ns / 1e6, refl);
	}
	for (i = 0; i < n; i++) {
		const struct pstats_sum *m = &s[i].sum;

		if (!m->received)
			continue;
		printf("%-8s one-way ms p50 forward %.3f backward %.3f%s\n", s[i].name,
		       m->fwd.p50 / 1e6, m->back.p50 / 1e6,
		       m->owd_valid ? "" : " (not valid: clocks not both synchronised)");
		if (m->cos_refused)
			printf("%-8s %u replies not sent back with DSCP %u (RP 1): the backward "
			       "path measured in the DSCP the reflector received\n", s[i].name,
			       m->cos_refused, s[i].dscp);
	}
	if (sla->set) {
		const struct pstats_sum *m = sla_sum(sla, s, n);

		printf("sla %s: %s (rtt p99 %.3f ms, loss %.2f%%)\n", sla->cls,
		       pm_sla_met(sla, m) ? "met" : "not met", m->rtt.p99 / 1e6,
		       m->sent ? 100.0 * m->lost / m->sent : 0);
	}
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
		e = !stop && pub->dirfd >= 0 ? pstate_publish(pub, &t) : 0;
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
	if (opt.json)
		print_json(a.addr, port, &c, s, n, &sla);
	else
		print_text(a.addr, port, &c, s, n, &sla);
out:
	for (i = 0; i < n; i++)
		pstats_free(&s[i].st);
	return r;
}

static void print_refl(const struct probe_refl_stats *rs)
{
	const char *fam[] = { "ipv4", "ipv6" };
	json_object *o = json_object_new_object();
	int f, d;

	json_object_object_add(o, "malformed", json_object_new_uint64(rs->bad));
	json_object_object_add(o, "sources_evicted", json_object_new_uint64(rs->evicted));
	for (f = 0; f < 2; f++) {
		json_object *e = json_object_new_object(), *ds = json_object_new_object();
		json_object *rf = json_object_new_object();
		char k[4];

		json_object_object_add(e, "packets", json_object_new_uint64(rs->packets[f]));
		for (d = 0; d < 64; d++) {
			if (!rs->dscp[f][d])
				continue;
			snprintf(k, sizeof(k), "%d", d);
			json_object_object_add(ds, k, json_object_new_uint64(rs->dscp[f][d]));
			if (!opt.json)
				printf("%s dscp %d: %llu test packets reflected\n", fam[f], d,
				       (unsigned long long)rs->dscp[f][d]);
		}
		json_object_object_add(e, "dscp", ds);
		for (d = RG_PASS + 1; d < RG_NVERDICTS; d++) {
			json_object_object_add(rf, rg_reason[d],
					       json_object_new_uint64(rs->refused[f][d]));
			if (!opt.json && rs->refused[f][d])
				printf("%s refused, %s: %llu\n", fam[f], rg_reason[d],
				       (unsigned long long)rs->refused[f][d]);
		}
		json_object_object_add(e, "refused", rf);
		json_object_object_add(e, "cos_refused", json_object_new_uint64(rs->cos_refused[f]));
		json_object_object_add(o, fam[f], e);
	}
	if (opt.json)
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	else
		printf("reflected: ipv4 %llu, ipv6 %llu, malformed %llu\n",
		       (unsigned long long)rs->packets[0], (unsigned long long)rs->packets[1],
		       (unsigned long long)rs->bad);
	json_object_put(o);
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
	print_refl(&rs);
	fflush(stdout);
	return 0;
}
