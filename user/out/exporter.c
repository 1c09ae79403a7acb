// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * `qosctl exporter`: /metrics over HTTP with libmicrohttpd, one internal
 * polling thread. Every scrape reads the devices' maps and the qdisc
 * statistics afresh; nothing is cached between scrapes, so the exporter
 * holds no state and sees profiles applied after it started.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "model/rule.h"
#include "out/exporter.h"
#include "out/prom.h"
#include "lib/util.h"

#define QOS_PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/*
 * Limits, so that clients that connect and stay (idle, or trickling
 * headers that never end) cannot make a scrape fail; the reasoning is in
 * Documentation/reliability.rst, "Exporter limits".
 *
 * One thread serves every connection: sockets are non-blocking, so a slow
 * client costs a slot, never the thread. MHD_USE_AUTO picks epoll on
 * Linux, which has no FD_SETSIZE ceiling. Every callback below runs in
 * that thread, so the connection list needs no lock.
 *
 * A Prometheus server keeps one connection per target, a browser half a
 * dozen: 8 per address is enough for any client. An address's 9th
 * connection is accepted and closed at once. The cap per address does not
 * hold against many addresses (275 hosts at 4 each fill 1,100 slots), so
 * the global cap does not refuse: once QOS_EXPORTER_EVICT_AT connections
 * are open, each new one closes the open connection that has waited
 * longest without a request (see evict()). A scraper's connection sends
 * its request at once and is answered; a flood only churns its own slots.
 * 256 in all keeps the descriptors (and the 32 KiB of buffers each
 * connection may hold) well within the 1024 systemd gives a service, with
 * room for the map and netlink descriptors a scrape opens; the spare
 * slots above QOS_EXPORTER_EVICT_AT absorb a burst of accepts (MHD takes
 * up to 10 per pass) before the evicted ones are reaped, so that MHD's own
 * cap, which leaves new connections in the backlog, is never reached.
 *
 * The timeout counts inactivity: it frees slots that idle clients and
 * vanished peers would hold forever, and is long enough for a scraper
 * on a slow link. A client trickling bytes resets it; the deadline does
 * not move: a connection with no complete request QOS_EXPORTER_DEADLINE_S
 * after it was accepted (or after its last answer) is closed at the next
 * accept.
 */
#define QOS_EXPORTER_TIMEOUT_S 5u
#define QOS_EXPORTER_DEADLINE_S 10u
#define QOS_EXPORTER_MAX_CONNS 256u
#define QOS_EXPORTER_EVICT_AT (QOS_EXPORTER_MAX_CONNS - 16u)
#define QOS_EXPORTER_MAX_CONNS_PER_IP 8u

struct qos_exporter_conn {
	struct qos_exporter_conn *prev, *next;
	struct MHD_Connection *c;
	uint64_t since;		/* accepted, or answered last (ns) */
	bool busy;		/* a request is being answered */
	bool closing;		/* shut down, MHD has yet to reap it */
};

static struct qos_exporter_conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci;

	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

/* Shut, not closed: MHD owns the descriptor, sees the end of the stream
 * on its next pass and reaps the connection (NOTIFY_CLOSED). */
static void conn_shut(struct qos_exporter *srv, struct qos_exporter_conn *k)
{
	const union MHD_ConnectionInfo *ci;

	ci = MHD_get_connection_info(k->c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (ci)
		shutdown(ci->connect_fd, SHUT_RDWR);
	k->closing = true;
	srv->nconns--;
}

/*
 * A new connection came in: close those past their deadline, then, at the
 * cap, the oldest one that is not being answered. Connections that never
 * sent a request and trickling ones both qualify; the newest, a scraper's
 * more often than not, is the last to go.
 */
static void evict(struct qos_exporter *srv, struct qos_exporter_conn *newest)
{
	uint64_t now = qos_boottime_ns(), deadline = QOS_EXPORTER_DEADLINE_S * 1000000000ULL;
	struct qos_exporter_conn *k, *oldest = NULL;

	for (k = srv->head; k; k = k->next) {
		if (k == newest || k->busy || k->closing)
			continue;
		if (now - k->since > deadline)
			conn_shut(srv, k);
		else if (!oldest || k->since < oldest->since)
			oldest = k;
	}
	if (srv->nconns > QOS_EXPORTER_EVICT_AT && oldest)
		conn_shut(srv, oldest);
}

static void notify_conn(void *cls, struct MHD_Connection *c, void **ctx,
			enum MHD_ConnectionNotificationCode code)
{
	struct qos_exporter *srv = cls;
	struct qos_exporter_conn *k = *ctx;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		k = calloc(1, sizeof(*k));
		if (!k)
			return;
		k->c = c;
		k->since = qos_boottime_ns();
		k->prev = srv->tail;
		*(srv->tail ? &srv->tail->next : &srv->head) = k;
		srv->tail = k;
		srv->nconns++;
		*ctx = k;
		evict(srv, k);
		return;
	}
	if (!k)
		return;
	*(k->prev ? &k->prev->next : &srv->head) = k->next;
	*(k->next ? &k->next->prev : &srv->tail) = k->prev;
	if (!k->closing)
		srv->nconns--;
	free(k);
	*ctx = NULL;
}

/* The answer is sent (or failed): the deadline starts again. */
static void request_done(void *cls, struct MHD_Connection *c, void **req_ctx,
			 enum MHD_RequestTerminationCode code)
{
	struct qos_exporter_conn *k = conn_of(c);

	if (k) {
		k->busy = false;
		k->since = qos_boottime_ns();
	}
}

static bool prefix_has(const struct qos_exporter_allow *p, const uint8_t *addr)
{
	unsigned int full = p->plen / 8, rest = p->plen % 8;

	if (memcmp(p->addr, addr, full))
		return false;
	return !rest || !((p->addr[full] ^ addr[full]) & (uint8_t)(0xff << (8 - rest)));
}

/* IPv4 clients of a dual-stack socket come as ::ffff:a.b.c.d. */
static enum MHD_Result allowed(void *cls, const struct sockaddr *sa, socklen_t len)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	const struct qos_exporter *srv = cls;
	const uint8_t *addr;
	int family = sa->sa_family;
	size_t i;

	if (!srv->nallow)
		return MHD_YES;
	if (family == AF_INET) {
		addr = (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr;
	} else if (family == AF_INET6) {
		addr = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
		if (!memcmp(addr, mapped, sizeof(mapped))) {
			family = AF_INET;
			addr += sizeof(mapped);
		}
	} else {
		return MHD_NO;
	}
	for (i = 0; i < srv->nallow; i++)
		if (srv->allow[i].family == family && prefix_has(&srv->allow[i], addr))
			return MHD_YES;
	return MHD_NO;
}

int qos_exporter_parse_allow(const char *s, struct qos_exporter_allow *allow, size_t *nallow,
			     char *err, size_t errlen)
{
	char one[INET6_ADDRSTRLEN + 8];
	size_t n = 0, len;

	for (; *s; s += len + !!s[len]) {
		len = strcspn(s, ",");
		if (n == QOS_EXPORTER_MAX_ALLOW) {
			snprintf(err, errlen, "allow: more than %d prefixes", QOS_EXPORTER_MAX_ALLOW);
			return -E2BIG;
		}
		snprintf(one, sizeof(one), "%.*s", (int)len, s);
		if (len >= sizeof(one) ||
		    qos_parse_prefix(one, &allow[n].family, allow[n].addr, &allow[n].plen)) {
			snprintf(err, errlen, "allow: '%.*s' is not an IPv4 or IPv6 prefix "
				 "(ADDR[/LEN], host bits clear)", (int)(len > 64 ? 64 : len), s);
			return -EINVAL;
		}
		n++;
	}
	if (!n) {
		snprintf(err, errlen, "allow: expected PREFIX[,PREFIX...]");
		return -EINVAL;
	}
	*nallow = n;
	return 0;
}

static const char qos_index_html[] =
	"<!DOCTYPE html>\n"
	"<html><head><title>qosctl exporter</title></head>\n"
	"<body><h1>qosctl exporter</h1><p><a href=\"/metrics\">Metrics</a></p></body></html>\n";

/* @body is static: MHD sends it from where it is, without a copy. */
static enum MHD_Result answer_static(struct MHD_Connection *conn, unsigned int status,
				     const char *type, const char *body)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(strlen(body), (void *)body,
					       MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	/* RFC 9110 15.5.6: a 405 lists the methods that would work. */
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_len, void **con_cls)
{
	const struct qos_exporter *srv = cls;
	struct qos_exporter_conn *k = conn_of(conn);
	struct MHD_Response *resp;
	unsigned int status = MHD_HTTP_OK;
	enum MHD_Result ret;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (k)
		k->busy = true;
	/* Answered on the first call, before any request body is read: MHD
	 * discards the body and closes the connection. */
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return answer_static(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
				     "text/plain; charset=utf-8", "qosctl exporter: GET or HEAD\n");
	if (!strcmp(url, "/"))
		return answer_static(conn, MHD_HTTP_OK, "text/html; charset=utf-8", qos_index_html);
	f = open_memstream(&buf, &len);
	if (!f)
		return MHD_NO;
	if (strcmp(url, "/metrics")) {
		status = MHD_HTTP_NOT_FOUND;
		fputs("qosctl exporter: see /metrics\n", f);
	} else if (srv->write(f, srv->arg)) {
		status = MHD_HTTP_INTERNAL_SERVER_ERROR;
	}
	if (fclose(f)) {
		free(buf);
		return MHD_NO;
	}
	resp = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(buf);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, QOS_PROM_CONTENT_TYPE);
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* "[::1]:9100", "127.0.0.1:9100", ":9100", "9100". */
static int parse_listen(const char *s, struct sockaddr_storage *ss, unsigned int *flags)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	char host[INET6_ADDRSTRLEN + 2];
	const char *port;
	uint32_t p;
	size_t hl;

	memset(ss, 0, sizeof(*ss));
	if (*s == '[') {
		const char *end = strchr(s, ']');

		if (!end || end[1] != ':')
			return -EINVAL;
		hl = end - s - 1;
		port = end + 2;
		if (hl >= sizeof(host))
			return -EINVAL;
		memcpy(host, s + 1, hl);
		host[hl] = '\0';
	} else {
		const char *colon = strrchr(s, ':');

		port = colon ? colon + 1 : s;
		hl = colon ? (size_t)(colon - s) : 0;
		if (hl >= sizeof(host) || (colon && strchr(s, ':') != colon))
			return -EINVAL;
		memcpy(host, s, hl);
		host[hl] = '\0';
	}
	if (qos_parse_u32(port, &p) || !p || p > 65535)
		return -EINVAL;
	if (!*host) {
		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_any;
		s6->sin6_port = htons(p);
		*flags = MHD_USE_DUAL_STACK;
	} else if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(p);
		*flags = MHD_USE_IPv6;
	} else if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(p);
		*flags = 0;
	} else {
		return -EINVAL;
	}
	return (int)p;
}

/* The interfaces' metrics, read afresh. */
static int write_devices(FILE *f, void *arg)
{
	const struct qos_report **rp = NULL;
	struct qos_report *r = NULL;
	int n, i;

	n = qos_report_read_all(&r);
	if (n < 0) {
		fprintf(f, "reading qosctl state: %s\n", strerror(-n));
		return n;
	}
	rp = n > 0 ? calloc(n, sizeof(*rp)) : NULL;
	for (i = 0; rp && i < n; i++)
		rp[i] = &r[i];
	qos_prom_write(f, rp, rp ? n : 0);
	free(rp);
	free(r);
	return 0;
}

int qos_exporter_start(struct qos_exporter *srv, const char *listen, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	unsigned int flags;
	int port;

	port = parse_listen(listen, &ss, &flags);
	if (port < 0) {
		snprintf(err, errlen,
			 "--listen '%s': expected [IPV6]:PORT, IPV4:PORT or :PORT", listen);
		return port;
	}
	srv->d = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG | flags,
				  (uint16_t)port, allowed, srv, answer, srv,
				  MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				  MHD_OPTION_NOTIFY_CONNECTION, notify_conn, srv,
				  MHD_OPTION_NOTIFY_COMPLETED, request_done, srv,
				  MHD_OPTION_CONNECTION_TIMEOUT, QOS_EXPORTER_TIMEOUT_S,
				  MHD_OPTION_CONNECTION_LIMIT, QOS_EXPORTER_MAX_CONNS,
				  MHD_OPTION_PER_IP_CONNECTION_LIMIT, QOS_EXPORTER_MAX_CONNS_PER_IP,
				  MHD_OPTION_END);
	if (!srv->d) {
		snprintf(err, errlen, "--listen %s: cannot listen (address in use or not local?)",
			 listen);
		return -EADDRNOTAVAIL;
	}
	return 0;
}

void qos_exporter_stop(struct qos_exporter *srv)
{
	if (srv->d)
		MHD_stop_daemon(srv->d);
	srv->d = NULL;
}

int qos_exporter_run(const char *listen, const struct qos_exporter_allow *allow, size_t nallow,
		     char *err, size_t errlen)
{
	struct qos_exporter srv = { .write = write_devices, .allow = allow, .nallow = nallow };
	sigset_t set;
	int r, sig;

	/* Blocked before the daemon's thread starts, so it inherits the mask
	 * and the signals reach sigwait() below. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	r = qos_exporter_start(&srv, listen, err, errlen);
	if (r)
		return r;
	fprintf(stderr, "qosctl: exporter: serving /metrics on %s\n", listen);
	sigwait(&set, &sig);
	qos_exporter_stop(&srv);
	return 0;
}
