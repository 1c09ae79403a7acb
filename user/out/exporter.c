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
 * Linux, which has no FD_SETSIZE ceiling and takes the listening socket
 * out of its set while the global cap is reached.
 *
 * A Prometheus server keeps one connection per target, a browser half a
 * dozen: 8 per address is enough for any client, and up to 31 addresses
 * misbehaving at once still leave free slots for a scraper elsewhere.
 * An address's 9th connection is accepted and closed at once.
 * 256 in all keeps the descriptors (and the 32 KiB of buffers each
 * connection may hold) well within the 1024 systemd gives a service, with
 * room for the map and netlink descriptors a scrape opens.
 *
 * The timeout counts inactivity: it frees slots that idle clients and
 * vanished peers would hold forever, and is long enough for a scraper
 * on a slow link. A client trickling bytes resets it; for those the cap
 * per address is the bound.
 */
#define QOS_EXPORTER_TIMEOUT_S 5u
#define QOS_EXPORTER_MAX_CONNS 256u
#define QOS_EXPORTER_MAX_CONNS_PER_IP 8u

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
	struct MHD_Response *resp;
	unsigned int status = MHD_HTTP_OK;
	enum MHD_Result ret;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

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
				  (uint16_t)port, NULL, NULL, answer, srv,
				  MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
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

int qos_exporter_run(const char *listen, char *err, size_t errlen)
{
	struct qos_exporter srv = { .write = write_devices };
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
