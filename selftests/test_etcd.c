// SPDX-License-Identifier: GPL-2.0-only
/*
 * The etcd client (user/domain/etcd.c) against an etcd member each test
 * starts for itself (Debian's etcd-server; skipped without it): loopback
 * ports found free, data in a mktemp directory, killed by PID. Prefix
 * ranges and revisions, transactions on both branches, leases, the watch
 * stream from a past revision, a watch cancelled by compaction, failover
 * past an endpoint nobody listens on, and a write that times out on a
 * stopped member reported as of unknown outcome (-ETIMEDOUT), never sent
 * again.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "domain/etcd.h"

static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(fd, (struct sockaddr *)&a, &len))
		return -1;
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

FIXTURE(etcd)
{
	char dir[64];
	char url[64];
	pid_t pid;
	struct qos_etcd *e;
};

static pid_t start_etcd(const char *dir, const char *url, int pport)
{
	char data[128], peer[64], cluster[80], log[128];
	pid_t pid;

	snprintf(data, sizeof(data), "%s/data", dir);
	snprintf(log, sizeof(log), "%s/etcd.log", dir);
	snprintf(peer, sizeof(peer), "http://127.0.0.1:%d", pport);
	snprintf(cluster, sizeof(cluster), "m1=%s", peer);
	pid = fork();
	if (pid)
		return pid;
	if (!freopen(log, "w", stdout) || !freopen(log, "a", stderr))
		_exit(127);
	execlp("etcd", "etcd", "--name", "m1", "--data-dir", data, "--listen-client-urls", url,
	       "--advertise-client-urls", url, "--listen-peer-urls", peer,
	       "--initial-advertise-peer-urls", peer, "--initial-cluster", cluster, NULL);
	_exit(127);
}

FIXTURE_SETUP(etcd)
{
	struct qos_etcd_kvs r;
	char err[256];
	int i, cport = free_port(), pport = free_port();

	self->pid = 0;
	self->e = NULL;
	if (system("command -v etcd >/dev/null 2>&1 && command -v etcdctl >/dev/null 2>&1"))
		SKIP(return, "etcd or etcdctl is not installed (etcd-server, etcd-client)");
	snprintf(self->dir, sizeof(self->dir), "/tmp/test_etcd.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->url, sizeof(self->url), "http://127.0.0.1:%d", cport);
	self->pid = start_etcd(self->dir, self->url, pport);
	ASSERT_LT(0, self->pid);
	ASSERT_EQ(0, qos_etcd_open(&self->e, self->url, NULL, err, sizeof(err))) TH_LOG("%s", err);
	qos_etcd_set_timeout(self->e, 1000);
	for (i = 0; i < 100; i++) {
		if (!qos_etcd_get(self->e, "/x", 0, 0, 0, &r))
			break;
		usleep(100000);
	}
	ASSERT_LT(i, 100) TH_LOG("etcd did not answer: %s", qos_etcd_errmsg(self->e));
	qos_etcd_kvs_free(&r);
}

FIXTURE_TEARDOWN(etcd)
{
	char cmd[128];

	qos_etcd_close(self->e);
	if (self->pid > 0) {
		kill(self->pid, SIGCONT);
		kill(self->pid, SIGTERM);
		waitpid(self->pid, NULL, 0);
	}
	if (self->dir[0] == '/') {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", self->dir);
		if (system(cmd))
			TH_LOG("could not remove %s", self->dir);
	}
}

TEST_F(etcd, range_and_txn)
{
	struct qos_etcd_hdr h1, h2;
	struct qos_etcd_txn_res res;
	struct qos_etcd_txn *t;
	struct qos_etcd_kvs r;
	int64_t n;

	ASSERT_EQ(0, qos_etcd_put(self->e, "/t/a", "1", 1, 0, &h1));
	ASSERT_EQ(0, qos_etcd_put(self->e, "/t/b", "two", 3, 0, &h2));
	EXPECT_EQ(h1.revision + 1, h2.revision);
	EXPECT_NE(0, h1.cluster_id);
	ASSERT_EQ(0, qos_etcd_put(self->e, "/u", "x", 1, 0, NULL));
	ASSERT_EQ(0, qos_etcd_get(self->e, "/t/", QOS_ETCD_PREFIX, 0, 0, &r));
	ASSERT_EQ(2, r.n);
	EXPECT_STREQ("/t/b", r.kv[1].key);
	EXPECT_STREQ("two", r.kv[1].value);
	EXPECT_EQ(3, r.kv[1].value_len);
	EXPECT_EQ(h2.revision, r.kv[1].mod_revision);
	qos_etcd_kvs_free(&r);
	/* At the revision of the first put, /t/b did not exist. */
	ASSERT_EQ(0, qos_etcd_get(self->e, "/t/", QOS_ETCD_PREFIX, h1.revision, 0, &r));
	EXPECT_EQ(1, r.n);
	qos_etcd_kvs_free(&r);
	EXPECT_EQ(-ERANGE, qos_etcd_get(self->e, "/t/", 0, h2.revision + 100, 0, &r));

	t = qos_etcd_txn_new();
	ASSERT_NE(NULL, t);
	qos_etcd_txn_cmp(t, "/t/a", QOS_ETCD_MOD, QOS_ETCD_EQ, h1.revision);
	qos_etcd_txn_cmp(t, "/t/c", QOS_ETCD_CREATE, QOS_ETCD_EQ, 0);
	qos_etcd_txn_put(t, true, "/t/c", "3", 1, 0);
	qos_etcd_txn_get(t, true, "/t/", QOS_ETCD_PREFIX);
	qos_etcd_txn_get(t, false, "/t/c", 0);
	ASSERT_EQ(0, qos_etcd_txn_commit(self->e, t, &res));
	EXPECT_TRUE(res.succeeded);
	ASSERT_EQ(1, res.nranges);
	EXPECT_EQ(3, res.ranges[0].n);
	qos_etcd_txn_res_free(&res);
	/* Again: /t/c exists now, the failure branch reads it. */
	ASSERT_EQ(0, qos_etcd_txn_commit(self->e, t, &res));
	EXPECT_FALSE(res.succeeded);
	ASSERT_EQ(1, res.nranges);
	EXPECT_STREQ("3", res.ranges[0].kv[0].value);
	qos_etcd_txn_res_free(&res);
	qos_etcd_txn_free(t);
	/* A touch moves mod_revision, not the value. */
	t = qos_etcd_txn_new();
	qos_etcd_txn_touch(t, true, "/t/b");
	ASSERT_EQ(0, qos_etcd_txn_commit(self->e, t, &res));
	qos_etcd_txn_res_free(&res);
	qos_etcd_txn_free(t);
	ASSERT_EQ(0, qos_etcd_get(self->e, "/t/b", 0, 0, 0, &r));
	EXPECT_STREQ("two", r.kv[0].value);
	EXPECT_LT(h2.revision, r.kv[0].mod_revision);
	qos_etcd_kvs_free(&r);
	ASSERT_EQ(0, qos_etcd_del(self->e, "/t/", QOS_ETCD_PREFIX, &n, NULL));
	EXPECT_EQ(3, n);
}

TEST_F(etcd, leases)
{
	int64_t id, ttl;
	struct qos_etcd_kvs r;

	ASSERT_EQ(0, qos_etcd_lease_grant(self->e, 30, &id, &ttl));
	EXPECT_EQ(30, ttl);
	ASSERT_EQ(0, qos_etcd_put(self->e, "/l", "v", 1, id, NULL));
	ASSERT_EQ(0, qos_etcd_lease_keepalive(self->e, id, &ttl));
	EXPECT_EQ(30, ttl);
	ASSERT_EQ(0, qos_etcd_get(self->e, "/l", 0, 0, 0, &r));
	EXPECT_EQ(id, r.kv[0].lease);
	qos_etcd_kvs_free(&r);
	ASSERT_EQ(0, qos_etcd_lease_revoke(self->e, id));
	EXPECT_EQ(-ENOENT, qos_etcd_lease_keepalive(self->e, id, &ttl));
	ASSERT_EQ(0, qos_etcd_get(self->e, "/l", 0, 0, 0, &r));
	EXPECT_EQ(0, r.n);
	qos_etcd_kvs_free(&r);
}

struct seen {
	int created, events, deletes;
	int64_t compact;
};

static int on_watch(const struct qos_etcd_watch_resp *r, void *arg)
{
	struct seen *s = arg;
	size_t i;

	s->created += r->created;
	s->events += r->nev;
	for (i = 0; i < r->nev; i++)
		s->deletes += r->ev[i].type == QOS_ETCD_EV_DELETE;
	if (r->canceled)
		s->compact = r->compact_revision;
	return s->events >= 3 ? 42 : 0;
}

TEST_F(etcd, watch)
{
	struct qos_etcd_hdr h1, h2;
	struct seen s = {};
	char body[160];
	int ret;

	ASSERT_EQ(0, qos_etcd_put(self->e, "/w/a", "1", 1, 0, &h1));
	ASSERT_EQ(0, qos_etcd_put(self->e, "/w/b", "2", 1, 0, NULL));
	ASSERT_EQ(0, qos_etcd_del(self->e, "/w/a", 0, NULL, NULL));
	/* From the first put: three events already in the history. */
	EXPECT_EQ(42, qos_etcd_watch(self->e, "/w/", QOS_ETCD_PREFIX, h1.revision, false,
				     on_watch, NULL, &s));
	EXPECT_EQ(1, s.created);
	EXPECT_EQ(3, s.events);
	EXPECT_EQ(1, s.deletes);
	/* Compacted past it: cancelled with the compact revision. */
	ASSERT_EQ(0, qos_etcd_put(self->e, "/w/c", "3", 1, 0, &h2));
	snprintf(body, sizeof(body), "etcdctl --endpoints %s compact %lld >/dev/null",
		 self->url, (long long)h2.revision);
	ASSERT_EQ(0, system(body));
	memset(&s, 0, sizeof(s));
	ret = qos_etcd_watch(self->e, "/w/", QOS_ETCD_PREFIX, h1.revision, false, on_watch,
			     NULL, &s);
	EXPECT_EQ(-ERANGE, ret) TH_LOG("%s", qos_etcd_errmsg(self->e));
	EXPECT_EQ(h2.revision, s.compact);
}

TEST_F(etcd, failover_and_unknown_outcome)
{
	struct qos_etcd *e;
	struct qos_etcd_kvs r;
	char urls[160], err[256];
	int ret;

	/* The first endpoint refuses connections: the second answers. */
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d,%s", free_port(), self->url);
	ASSERT_EQ(0, qos_etcd_open(&e, urls, NULL, err, sizeof(err)));
	ASSERT_EQ(0, qos_etcd_put(e, "/f", "1", 1, 0, NULL)) TH_LOG("%s", qos_etcd_errmsg(e));
	EXPECT_STREQ(self->url, qos_etcd_endpoint(e));
	EXPECT_STREQ("", qos_etcd_errmsg(e));
	qos_etcd_close(e);
	EXPECT_EQ(-EINVAL, qos_etcd_open(&e, "ftp://x", NULL, err, sizeof(err)));
	EXPECT_STREQ("etcd endpoint 'ftp://x': not an http:// or https:// URL", err);

	/* A stopped member takes the request and never answers. */
	qos_etcd_set_timeout(self->e, 300);
	ASSERT_EQ(0, kill(self->pid, SIGSTOP));
	ret = qos_etcd_put(self->e, "/f", "2", 1, 0, NULL);
	EXPECT_EQ(-ETIMEDOUT, ret);
	EXPECT_NE(NULL, strstr(qos_etcd_errmsg(self->e), "outcome unknown"));
	EXPECT_EQ(-ETIMEDOUT, qos_etcd_get(self->e, "/f", 0, 0, 0, &r));
	ASSERT_EQ(0, kill(self->pid, SIGCONT));
	qos_etcd_set_timeout(self->e, 2000);
	ASSERT_EQ(0, qos_etcd_get(self->e, "/f", 0, 0, 0, &r));
	/* Applied once when the member resumed, or not at all. */
	EXPECT_TRUE(!strcmp(r.kv[0].value, "1") || !strcmp(r.kv[0].value, "2"));
	EXPECT_LE(r.kv[0].version, 2);
	qos_etcd_kvs_free(&r);
}

TEST(prefix_end)
{
	size_t len;
	char *e = qos_etcd_prefix_end("/a/", &len);

	EXPECT_STREQ("/a0", e);
	EXPECT_EQ(3, len);
	free(e);
	e = qos_etcd_prefix_end("", &len);
	EXPECT_EQ(1, len);
	EXPECT_EQ(0, e[0]);
	free(e);
}

TEST_HARNESS_MAIN
