/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The router agent's state and reconciliation (Documentation/domain.rst,
 * "The agent"). The desired state is the values of the router's keys in
 * etcd, kept as they were read (JSON), with the revision they were read
 * at; reconciling compares it with what the kernel runs and changes what
 * differs through the one installer (txn/), device by device. Nothing here
 * talks to etcd: agent_loop.c feeds it events and relists.
 */
#ifndef __QOS_DOMAIN_AGENT_H
#define __QOS_DOMAIN_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

/* What the router is to run: its keys' values by key, under "iface/DEV"
 * and "resv/ID" (the names after the router's prefix; the schema is in
 * Documentation/domain.rst, "Key schema"). */
struct qos_agent_desired {
	json_object *ifs;	/* dev -> {"profile": ..., "rate_bps": ...} */
	json_object *edge;	/* id -> {"dev", "args": [[key, value], ...],
				 * "end_unix_ns"}: the reservations R is the edge of */
	json_object *transit;	/* id -> the same, with R's "dev": those R carries
				 * further on (checked for drift only) */
	int64_t revision;	/* etcd's revision the state is as of */
	uint64_t cluster_id;	/* of the cluster it was read from */
};

void qos_agent_desired_init(struct qos_agent_desired *d);
void qos_agent_desired_free(struct qos_agent_desired *d);
/* Forget every key (before a relist). */
void qos_agent_desired_clear(struct qos_agent_desired *d);

/*
 * Key @rel (the key less the router's prefix: "iface/eth1", "resv/lab",
 * "transit/lab")
 * now holds @val (JSON), or was deleted (@val NULL). Keys of other kinds
 * are ignored (1); a value that is not a JSON object is an error naming
 * the key, and the state is unchanged.
 */
int qos_agent_desired_set(struct qos_agent_desired *d, const char *rel, const char *val,
			  char *err, size_t errlen);

/* Where the agent keeps its desired state: on disk, not /run's tmpfs, so a
 * router that reboots while etcd is out of reach comes up with it. */
#define QOS_STATE_DIR	"/var/lib/qosctl"

/*
 * The last desired state of @router, persisted as QOS_STATE_DIR/agent-R.json
 * (the directory checked as /run/qosctl is: ours, 0700, not a symlink; the
 * file regular, ours, 0600, not a symlink). load: -ENOENT if there is none.
 */
int qos_agent_save(const char *router, const struct qos_agent_desired *d, char *err,
		   size_t errlen);
int qos_agent_load(const char *router, struct qos_agent_desired *d, char *err, size_t errlen);

/* What the last reconciliation did and found, for the status key. */
struct qos_agent_result {
	json_object *ifs;	/* dev -> {"applied": bool, "error": ...} */
	json_object *resv;	/* id -> {"installed": bool, "error", "drift": bool} */
	char last_error[512];	/* "" when every device is as desired */
	unsigned int changes;	/* installs done (0: the kernel already matched) */
	json_object *drift;	/* [{"id", "dev", "route_dev"}]: flows routed elsewhere */
};

void qos_agent_result_free(struct qos_agent_result *r);

/*
 * Make the kernel run @d: every declared interface its profile at its
 * rate, and on each the edge reservations whose egress it is (expired
 * ones left out: their end time is authoritative). Devices that already
 * match are not touched; a device that fails keeps what it runs and the
 * error goes into @res, and the others go on. Never removes a profile:
 * an interface no longer declared keeps what it has.
 */
int qos_agent_reconcile(const struct qos_agent_desired *d, struct qos_agent_result *res);

/*
 * Path drift: for each installed edge reservation and each transit one with
 * a destination, whether the kernel routes it out of another device than
 * the path's (a route lookup, RTM_GETROUTE): res->drift lists them.
 */
void qos_agent_drift(const struct qos_agent_desired *d, struct qos_agent_result *res);

/* The earliest end time (ns since the epoch) of @d's reservations after
 * @now, 0: none. */
int64_t qos_agent_next_end(const struct qos_agent_desired *d, int64_t now);
/* CLOCK_REALTIME in ns: the clock of the reservations' end times. */
int64_t qos_agent_now_unix_ns(void);

/* The domain's keys live under this prefix in etcd. */
#define QOS_DOMAIN_ROOT		"/qosctl/"

/* How the agent runs (qosctl agent). */
struct qos_etcd_tls;
struct qos_agent_opts {
	const char *router;		/* this router's name in the domain */
	const char *endpoints;		/* NULL: $QOSCTL_ETCD */
	unsigned int timeout_ms;	/* of each request; 0: the client's default */
	const struct qos_etcd_tls *tls;	/* NULL: plain HTTP */
	const char *root;		/* the domain's key prefix, ending in '/' */
};

/*
 * Run the agent until SIGINT or SIGTERM: start from the persisted desired
 * state, then keep following etcd (agent_loop.c). Returns 0, or -errno
 * with @err when it cannot start.
 */
int qos_agent_run(const struct qos_agent_opts *o, char *err, size_t errlen);

#endif /* __QOS_DOMAIN_AGENT_H */
