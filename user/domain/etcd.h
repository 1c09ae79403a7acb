/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A client of etcd's v3 API through its JSON gateway (/v3/..., served by
 * etcd 3.4 and later; /v3beta/ too on 3.4), on libcurl and json-c. Debian
 * has no C client of etcd's gRPC API; the gateway is the same API as JSON
 * over HTTP: keys and values base64, 64-bit integers as JSON strings.
 *
 * One handle talks to one member at a time and moves to the next of its
 * endpoints when a member cannot be reached. A request that may have
 * reached a member (it timed out after it was sent) is never sent again
 * to another one unless it is a read: its outcome is unknown and the
 * call returns -ETIMEDOUT, for the caller to resolve by reading back
 * (Documentation/domain.rst, "Unknown outcomes").
 *
 * Every call returns 0 or -errno; qos_etcd_errmsg() then says why, with
 * the endpoint and etcd's own message. The header of every answer
 * (cluster id, revision) is kept: qos_etcd_last_hdr().
 *
 * Errors, from etcd's gRPC codes and from libcurl:
 *	-ECONNREFUSED	no endpoint could be reached
 *	-ETIMEDOUT	the request timed out (a write: outcome unknown; a
 *			read: at every endpoint)
 *	-EAGAIN		etcd unavailable (no leader, leader changed)
 *	-ERANGE		revision compacted or in the future
 *	-ENOENT		lease not found
 *	-EACCES		permission denied or not authenticated
 *	-EINVAL		bad request, bad answer
 *	-EIO		anything else
 */
#ifndef __QOS_DOMAIN_ETCD_H
#define __QOS_DOMAIN_ETCD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Environment variable naming the endpoints when --etcd is not given. */
#define QOS_ETCD_ENV		"QOSCTL_ETCD"
#define QOS_ETCD_MAX_ENDPOINTS	16
/* Per-request timeout unless qos_etcd_set_timeout() says otherwise. */
#define QOS_ETCD_TIMEOUT_MS	5000
#define QOS_ETCD_CONNECT_MS	1000

struct qos_etcd;

struct qos_etcd_tls {
	const char *ca;		/* CA bundle (PEM) checking the members */
	const char *cert;	/* client certificate (PEM) */
	const char *key;	/* its key (PEM) */
};

/* The header etcd puts on every answer. */
struct qos_etcd_hdr {
	uint64_t cluster_id;
	uint64_t member_id;
	int64_t revision;
	uint64_t raft_term;
};

/*
 * A handle on the endpoints @urls ("http://a:2379,https://b:2379"); NULL
 * takes $QOSCTL_ETCD. @tls may be NULL. On error @err says why.
 */
int qos_etcd_open(struct qos_etcd **e, const char *urls, const struct qos_etcd_tls *tls,
		  char *err, size_t errlen);
void qos_etcd_close(struct qos_etcd *e);
/* Timeout of each request, in ms (0: the default). */
void qos_etcd_set_timeout(struct qos_etcd *e, unsigned int ms);
/* Why the last call failed ("" after success). */
const char *qos_etcd_errmsg(const struct qos_etcd *e);
/* The header of the last answer, and the endpoint in use. */
const struct qos_etcd_hdr *qos_etcd_last_hdr(const struct qos_etcd *e);
const char *qos_etcd_endpoint(const struct qos_etcd *e);

/* A key-value pair as etcd returns it. key and value are NUL-terminated
 * besides their lengths. */
struct qos_etcd_kv {
	char *key;
	size_t key_len;
	char *value;
	size_t value_len;
	int64_t create_revision;
	int64_t mod_revision;
	int64_t version;
	int64_t lease;
};

struct qos_etcd_kvs {
	struct qos_etcd_kv *kv;
	size_t n;
	int64_t count;		/* keys in the range (> n if limited) */
	bool more;
	struct qos_etcd_hdr hdr;
};

void qos_etcd_kvs_free(struct qos_etcd_kvs *r);

/* Flags of a range, a delete, a watch. */
#define QOS_ETCD_PREFIX		0x1	/* every key starting with key */
#define QOS_ETCD_KEYS_ONLY	0x2
#define QOS_ETCD_SERIAL		0x4	/* serializable read (this member's view) */
#define QOS_ETCD_PREV_KV	0x8	/* watch: events carry the previous pair */

/* Range [@key] (or the prefix) at @rev (0: latest); @limit 0: all. */
int qos_etcd_get(struct qos_etcd *e, const char *key, unsigned int flags, int64_t rev,
		 int64_t limit, struct qos_etcd_kvs *out);
int qos_etcd_put(struct qos_etcd *e, const char *key, const void *val, size_t len,
		 int64_t lease, struct qos_etcd_hdr *hdr);
/* *@deleted (may be NULL): how many keys went. */
int qos_etcd_del(struct qos_etcd *e, const char *key, unsigned int flags, int64_t *deleted,
		 struct qos_etcd_hdr *hdr);

/* Transactions: compares, then the success or the failure operations. */
enum qos_etcd_target {
	QOS_ETCD_MOD,		/* mod_revision */
	QOS_ETCD_CREATE,	/* create_revision (0: the key does not exist) */
	QOS_ETCD_VERSION,
	QOS_ETCD_LEASE,
};

enum qos_etcd_cmp_op {
	QOS_ETCD_EQ,
	QOS_ETCD_NE,
	QOS_ETCD_LT,
	QOS_ETCD_GT,
};

struct qos_etcd_txn;

struct qos_etcd_txn *qos_etcd_txn_new(void);
void qos_etcd_txn_free(struct qos_etcd_txn *t);
/* Compare @target of @key with @v. Errors latch until commit (-ENOMEM). */
void qos_etcd_txn_cmp(struct qos_etcd_txn *t, const char *key, enum qos_etcd_target target,
		      enum qos_etcd_cmp_op op, int64_t v);
/* Operations, on the success branch if @success, else the failure one. */
void qos_etcd_txn_put(struct qos_etcd_txn *t, bool success, const char *key, const void *val,
		      size_t len, int64_t lease);
void qos_etcd_txn_del(struct qos_etcd_txn *t, bool success, const char *key,
		      unsigned int flags);
void qos_etcd_txn_get(struct qos_etcd_txn *t, bool success, const char *key,
		      unsigned int flags);
/* Rewrite @key with its own value (put with ignore_value): its
 * mod_revision moves, so a pending transaction comparing it fails. The key
 * must exist. */
void qos_etcd_txn_touch(struct qos_etcd_txn *t, bool success, const char *key);

/* The outcome: which branch ran, and the ranges of that branch in the
 * order their qos_etcd_txn_get() calls were made. */
struct qos_etcd_txn_res {
	bool succeeded;
	struct qos_etcd_hdr hdr;
	struct qos_etcd_kvs *ranges;
	size_t nranges;
};

void qos_etcd_txn_res_free(struct qos_etcd_txn_res *r);
/* Commit @t (which stays the caller's). Never retried on another member
 * once sent: -ETIMEDOUT means the outcome is unknown. */
int qos_etcd_txn_commit(struct qos_etcd *e, const struct qos_etcd_txn *t,
			struct qos_etcd_txn_res *res);

/* Leases. @ttl in seconds; *@granted the TTL etcd gave. */
int qos_etcd_lease_grant(struct qos_etcd *e, int64_t ttl, int64_t *id, int64_t *granted);
int qos_etcd_lease_revoke(struct qos_etcd *e, int64_t id);
/* One keepalive; -ENOENT if the lease has expired or was revoked. */
int qos_etcd_lease_keepalive(struct qos_etcd *e, int64_t id, int64_t *ttl);

/* Watch: a streamed answer, one qos_etcd_watch_resp per JSON object. */
enum qos_etcd_ev_type {
	QOS_ETCD_EV_PUT,
	QOS_ETCD_EV_DELETE,
};

struct qos_etcd_ev {
	enum qos_etcd_ev_type type;
	struct qos_etcd_kv kv;
	struct qos_etcd_kv prev_kv;	/* zeroed unless QOS_ETCD_PREV_KV */
};

struct qos_etcd_watch_resp {
	struct qos_etcd_hdr hdr;
	bool created;
	bool canceled;
	int64_t compact_revision;	/* canceled: history before it is gone */
	const char *cancel_reason;
	struct qos_etcd_ev *ev;
	size_t nev;
	bool fragment;
};

/*
 * Watch @key (or the prefix) from revision @start (0: from now), calling
 * @fn for each answer; the answer is freed when @fn returns. Returns when
 * @fn returns non-zero (that value), when @tick (called about once a
 * second, may be NULL) returns non-zero (that value), when the watch is
 * canceled (-ECANCELED, or -ERANGE if compacted: resp->compact_revision
 * was passed to @fn), or on an error of the connection (-errno). The
 * member is not changed during a watch; the next call starts at the next
 * endpoint if this one failed. @progress asks etcd for progress notices
 * (an answer without events, its header at the current revision).
 */
int qos_etcd_watch(struct qos_etcd *e, const char *key, unsigned int flags, int64_t start,
		   bool progress, int (*fn)(const struct qos_etcd_watch_resp *r, void *arg),
		   int (*tick)(void *arg), void *arg);

/* The end of the range of keys starting with @prefix, as etcd wants it
 * (the prefix with its last byte incremented), malloc()ed. */
char *qos_etcd_prefix_end(const char *prefix, size_t *len);

#endif /* __QOS_DOMAIN_ETCD_H */
