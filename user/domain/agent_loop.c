// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * qosctl agent: the loop that keeps a router's desired state from etcd and
 * its status in etcd (Documentation/domain.rst, "The agent"). List the
 * router's keys, reconcile, then watch from the revision listed + 1; on a
 * compacted or cancelled watch, a changed cluster id or a revision that
 * went backwards, and every AGENT_RELIST_S anyway, list again. Each change
 * of the desired state is written to the state directory before it is
 * reconciled, so a restarted agent, or one that cannot reach etcd, starts
 * from it and never removes what runs. Expiry goes on by the clock.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "domain/agent.h"
#include "domain/etcd.h"
#include "lib/json.h"
#include "lib/util.h"
#include "txn/install.h"

/* List everything again this often, whatever the watch says (seconds). */
#define AGENT_RELIST_S		60
/* The status key's lease, and how often it is renewed (seconds). */
#define AGENT_LEASE_TTL		10
#define AGENT_KEEPALIVE_S	3
/* What the watch's callbacks end it with. */
#define AGENT_RELIST		1	/* time for the periodic list */
#define AGENT_STOP		2	/* SIGINT or SIGTERM */
#define AGENT_TROUBLE		3	/* etcd failed a request */

/* Routes change without etcd knowing: drift is looked up again this often. */
#define AGENT_DRIFT_MS		5000
/* How long the last request may take once asked to stop (ms). */
#define AGENT_STOP_MS		1000
/* Wait between attempts while etcd cannot be reached (ms, doubling). */
#define AGENT_BACKOFF_MIN_MS	200
#define AGENT_BACKOFF_MAX_MS	2000

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The agent's whole state: one per process. */
struct agent {
	const struct qos_agent_opts *o;
	char prefix[512];		/* ROOT/router/NAME/ */
	char status_key[512];		/* ROOT/status/NAME */
	struct qos_etcd *e;
	struct qos_agent_desired d;
	struct qos_agent_result res;
	bool have_res;
	int64_t applied_rev;		/* revision of the last state reconciled without error */
	int64_t persisted_rev;		/* of the persisted state it started from (0: none) */
	char last_error[1024];
	int64_t lease;
	int64_t keepalive_at, relist_at;	/* mono_ms() */
	int64_t next_end;		/* ns since the epoch: the next reservation to expire */
	int64_t drift_at;		/* mono_ms(): the next route lookups */
	bool published;			/* the status is in etcd as it is now */
	bool relist;			/* list everything before watching */
	unsigned int relists;		/* how many times, for the status */
};

static void set_error(struct agent *a, const char *fmt, const char *what)
{
	snprintf(a->last_error, sizeof(a->last_error), fmt, what);
	qos_warn("agent %s: %s", a->o->router, a->last_error);
	a->published = false;
}

/* Reconcile the desired state, remember the outcome for the status. */
static void reconcile(struct agent *a)
{
	int64_t t0 = mono_ms();
	int ret;

	if (a->have_res)
		qos_agent_result_free(&a->res);
	ret = qos_agent_reconcile(&a->d, &a->res);
	qos_agent_drift(&a->d, &a->res);
	a->drift_at = mono_ms() + AGENT_DRIFT_MS;
	a->have_res = true;
	a->next_end = qos_agent_next_end(&a->d, qos_agent_now_unix_ns());
	if (ret) {
		set_error(a, "%s", a->res.last_error);
	} else {
		a->applied_rev = a->d.revision;
		a->last_error[0] = '\0';
	}
	if (a->res.changes || ret)
		qos_dbg("agent %s: revision %lld: %u change(s) in %lld ms", a->o->router,
			(long long)a->d.revision, a->res.changes, (long long)(mono_ms() - t0));
	a->published = false;
}

/*
 * The persisted desired state made what runs, before etcd is asked: after
 * a restart nothing differs and nothing changes; after a reboot (the
 * kernel has none of it) it is installed again, and the log says so.
 */
static void start_persisted(struct agent *a)
{
	a->persisted_rev = a->d.revision;
	reconcile(a);
	if (a->res.changes)
		qos_warn("agent %s: the kernel differed from the persisted desired state of "
			 "revision %lld (%s/agent-%s.json): %u change(s) made",
			 a->o->router, (long long)a->d.revision, QOS_STATE_DIR, a->o->router,
			 a->res.changes);
	else
		qos_dbg("agent %s: starting from the persisted desired state of revision %lld",
			a->o->router, (long long)a->d.revision);
}

static void save(struct agent *a)
{
	char err[512];

	if (qos_agent_save(a->o->router, &a->d, err, sizeof(err)))
		set_error(a, "saving the desired state: %s", err);
}

/* {name: {...}} as [{@key: name, ...}], the status key's lists. */
static json_object *as_list(json_object *by_name, const char *key)
{
	json_object *l = json_object_new_array();

	if (!by_name)
		return l;
	json_object_object_foreach(by_name, name, v) {
		json_object *e = json_object_new_object();

		json_object_object_add(e, key, json_object_new_string(name));
		json_object_object_foreach(v, k, x)
			json_object_object_add(e, k, json_object_get(x));
		json_object_array_add(l, e);
	}
	return l;
}

/* The status document (Documentation/domain.rst, "/qosctl/status/R"). */
static json_object *status_doc(const struct agent *a)
{
	json_object *o = json_object_new_object();
	const struct qos_agent_result *r = a->have_res ? &a->res : NULL;

	json_object_object_add(o, "router", json_object_new_string(a->o->router));
	json_object_object_add(o, "pid", json_object_new_int(getpid()));
	json_object_object_add(o, "updated_unix_ns",
			       json_object_new_int64(qos_agent_now_unix_ns()));
	json_object_object_add(o, "desired_revision", json_object_new_int64(a->d.revision));
	json_object_object_add(o, "applied_revision", json_object_new_int64(a->applied_rev));
	json_object_object_add(o, "started_revision", json_object_new_int64(a->persisted_rev));
	json_object_object_add(o, "error", json_object_new_string(a->last_error));
	json_object_object_add(o, "ifaces", as_list(r ? r->ifs : NULL, "dev"));
	json_object_object_add(o, "resv", as_list(r ? r->resv : NULL, "id"));
	json_object_object_add(o, "drift", r && r->drift ? json_object_get(r->drift) :
			       json_object_new_array());
	json_object_object_add(o, "relists", json_object_new_int(a->relists));
	return o;
}

/* Keep the status lease alive and the status key current. */
static int publish(struct agent *a)
{
	int64_t ttl, now = mono_ms();
	json_object *o;
	const char *s;
	int ret = 0;

	if (a->lease && now >= a->keepalive_at) {
		ret = qos_etcd_lease_keepalive(a->e, a->lease, &ttl);
		if (ret == -ENOENT) {
			a->lease = 0;
			a->published = false;
		} else if (ret) {
			return ret;
		}
		a->keepalive_at = now + AGENT_KEEPALIVE_S * 1000;
	}
	if (!a->lease) {
		ret = qos_etcd_lease_grant(a->e, AGENT_LEASE_TTL, &a->lease, &ttl);
		if (ret)
			return ret;
		a->keepalive_at = now + AGENT_KEEPALIVE_S * 1000;
	}
	if (a->published)
		return 0;
	o = status_doc(a);
	s = qos_json_text(o);
	ret = s ? qos_etcd_put(a->e, a->status_key, s, strlen(s), a->lease, NULL) : -ENOMEM;
	json_object_put(o);
	a->published = !ret;
	return ret;
}

/*
 * Everything under the router's prefix, as one desired state at one
 * revision. A cluster id that changed, or a revision behind the one the
 * state had, is said in the log: the listed state wins either way.
 */
static int relist(struct agent *a)
{
	struct qos_etcd_kvs kvs = {};
	struct qos_agent_desired d;
	size_t plen = strlen(a->prefix), i;
	char err[512];
	int ret;

	ret = qos_etcd_get(a->e, a->prefix, QOS_ETCD_PREFIX, 0, 0, &kvs);
	if (ret)
		return ret;
	qos_agent_desired_init(&d);
	for (i = 0; i < kvs.n; i++) {
		if (qos_agent_desired_set(&d, kvs.kv[i].key + plen, kvs.kv[i].value, err,
					  sizeof(err)) < 0)
			set_error(a, "%s", err);
	}
	d.revision = kvs.hdr.revision;
	d.cluster_id = kvs.hdr.cluster_id;
	if (a->d.cluster_id && a->d.cluster_id != d.cluster_id)
		qos_warn("agent %s: etcd's cluster id changed: state taken from the new cluster",
			 a->o->router);
	else if (d.revision < a->d.revision)
		qos_warn("agent %s: etcd's revision went back from %lld to %lld: relisted",
			 a->o->router, (long long)a->d.revision, (long long)d.revision);
	qos_etcd_kvs_free(&kvs);
	qos_agent_desired_free(&a->d);
	a->d = d;
	a->relist = false;
	a->relist_at = mono_ms() + AGENT_RELIST_S * 1000;
	save(a);
	reconcile(a);
	return 0;
}

/* One answer of the watch: its events into the desired state. */
static int on_watch(const struct qos_etcd_watch_resp *r, void *arg)
{
	struct agent *a = arg;
	size_t plen = strlen(a->prefix), i;
	char err[512];

	if (r->canceled)
		return r->compact_revision ? -ERANGE : -ECANCELED;
	if (r->hdr.cluster_id != a->d.cluster_id || r->hdr.revision < a->d.revision)
		return -ESTALE;
	for (i = 0; i < r->nev; i++) {
		const struct qos_etcd_ev *ev = &r->ev[i];

		if (qos_agent_desired_set(&a->d, ev->kv.key + plen,
					  ev->type == QOS_ETCD_EV_PUT ? ev->kv.value : NULL, err,
					  sizeof(err)) < 0)
			set_error(a, "%s", err);
	}
	if (r->hdr.revision > a->d.revision) {
		a->d.revision = r->hdr.revision;
		/* Nothing of ours changed up to it: what runs is as of it. */
		if (!r->nev && !a->last_error[0])
			a->applied_rev = r->hdr.revision;
		a->published = false;
	}
	if (r->nev && !r->fragment) {
		save(a);
		reconcile(a);
	}
	return publish(a) ? AGENT_TROUBLE : 0;
}

/* The route lookups again; the status is published if they changed. */
static void drift_again(struct agent *a)
{
	char *before = strdup(json_object_to_json_string(a->res.drift));

	qos_agent_drift(&a->d, &a->res);
	if (!before || strcmp(before, json_object_to_json_string(a->res.drift)))
		a->published = false;
	free(before);
	a->drift_at = mono_ms() + AGENT_DRIFT_MS;
}

/* About once a second during the watch: expiry, status, periodic relist. */
static int on_tick(void *arg)
{
	struct agent *a = arg;

	if (stop)
		return AGENT_STOP;
	if (a->next_end && a->next_end <= qos_agent_now_unix_ns())
		reconcile(a);
	if (a->have_res && mono_ms() >= a->drift_at)
		drift_again(a);
	if (mono_ms() >= a->relist_at)
		return AGENT_RELIST;
	return publish(a) ? AGENT_TROUBLE : 0;
}

static void backoff(struct agent *a, int *ms, int ret);

/*
 * Why the watch ended; then list everything again, whatever the reason
 * (a compaction, a cancel, another cluster, a revision gone back, the
 * periodic list, or an error of the connection, which may hide any of
 * these): one range read, and the watch starts from its revision + 1.
 */
static void watch_ended(struct agent *a, int ret, int *wait_ms)
{
	static const struct { int ret; const char *why; } reasons[] = {
		{ -ERANGE, "its history was compacted" },
		{ -ECANCELED, "etcd cancelled the watch" },
		{ -ESTALE, "etcd's cluster id or revision changed" },
		{ AGENT_RELIST, NULL },
	};
	size_t i;

	for (i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		if (reasons[i].ret != ret)
			continue;
		if (reasons[i].why)
			qos_warn("agent %s: watch from revision %lld ended, %s: listing again",
				 a->o->router, (long long)a->d.revision + 1, reasons[i].why);
		break;
	}
	if (ret == AGENT_STOP)
		return;
	a->relist = true;
	a->relists++;
	if (i == sizeof(reasons) / sizeof(reasons[0]) && (ret < 0 || ret == AGENT_TROUBLE))
		backoff(a, wait_ms, ret < 0 ? ret : -EIO);
}

static void backoff(struct agent *a, int *ms, int ret)
{
	set_error(a, "etcd: %s", qos_etcd_errmsg(a->e)[0] ? qos_etcd_errmsg(a->e) :
		  strerror(-ret));
	usleep((useconds_t)*ms * 1000);
	*ms = *ms * 2 > AGENT_BACKOFF_MAX_MS ? AGENT_BACKOFF_MAX_MS : *ms * 2;
}

int qos_agent_run(const struct qos_agent_opts *o, char *err, size_t errlen)
{
	struct agent a = { .o = o };
	int ret, wait_ms = AGENT_BACKOFF_MIN_MS;

	snprintf(a.prefix, sizeof(a.prefix), "%srouter/%s/", o->root, o->router);
	snprintf(a.status_key, sizeof(a.status_key), "%sstatus/%s", o->root, o->router);
	qos_agent_desired_init(&a.d);
	qos_install_async(true);
	ret = qos_etcd_open(&a.e, o->endpoints, o->tls, err, errlen);
	if (ret)
		goto out;
	qos_etcd_set_timeout(a.e, o->timeout_ms);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* What was last desired, installed again whatever etcd says now; then
	 * the watch goes on from its revision + 1. */
	a.relist_at = mono_ms() + AGENT_RELIST_S * 1000;
	ret = qos_agent_load(o->router, &a.d, err, errlen);
	if (!ret)
		start_persisted(&a);
	else if (ret != -ENOENT)
		qos_warn("agent %s: %s", o->router, err);
	a.relist = ret != 0;
	while (!stop) {
		ret = a.relist ? relist(&a) : 0;
		ret = ret ?: publish(&a);
		if (ret) {
			backoff(&a, &wait_ms, ret);
			continue;
		}
		wait_ms = AGENT_BACKOFF_MIN_MS;
		ret = qos_etcd_watch(a.e, a.prefix, QOS_ETCD_PREFIX, a.d.revision + 1, true,
				     on_watch, on_tick, &a);
		watch_ended(&a, ret, &wait_ms);
	}
	/* A clean stop: the status goes at once, not at the lease's end; and
	 * soon, even when etcd does not answer (then the lease's end it is). */
	qos_etcd_set_timeout(a.e, AGENT_STOP_MS);
	if (a.lease)
		qos_etcd_lease_revoke(a.e, a.lease);
	ret = 0;
out:
	if (a.have_res)
		qos_agent_result_free(&a.res);
	qos_agent_desired_free(&a.d);
	qos_etcd_close(a.e);
	return ret;
}
