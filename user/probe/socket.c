// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * STAMP over UDP. Timestamps: SO_TIMESTAMPING software RX on both ends
 * (T2, T4), software TX through the error queue at the sender (T1); where
 * the kernel gives none, clock_gettime(CLOCK_REALTIME) around the system
 * call stands in, and the reply counts say which was used. The packet's
 * own timestamps (T1 and T3 on the wire) are necessarily read before the
 * send (Documentation/assurance.rst).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <sys/random.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/errqueue.h>
#include <linux/in6.h>
#include <linux/net_tstamp.h>

#include "probe/socket.h"
#include "probe/stamp.h"

#define TS_RX_FLAGS	(SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE)
#define TS_TX_FLAGS	(TS_RX_FLAGS | SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_OPT_ID | \
			 SOF_TIMESTAMPING_OPT_TSONLY)
#define COS_PKT_LEN	(STAMP_BASE_LEN + STAMP_TLV_HDR_LEN + STAMP_COS_LEN)

static int64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int probe_addr(const char *s, uint16_t port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, s, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		*len = sizeof(*in);
		return 0;
	}
	if (inet_pton(AF_INET6, s, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		*len = sizeof(*in6);
		return 0;
	}
	return -EINVAL;
}

/* The kernel's software timestamp among the control messages, or 0. */
static int64_t cmsg_ts(struct msghdr *m)
{
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPING) {
			struct scm_timestamping tss;

			memcpy(&tss, CMSG_DATA(c), sizeof(tss));
			if (tss.ts[0].tv_sec || tss.ts[0].tv_nsec)
				return (int64_t)tss.ts[0].tv_sec * 1000000000 + tss.ts[0].tv_nsec;
		}
	}
	return 0;
}

static int setint(int fd, int level, int name, int v)
{
	return setsockopt(fd, level, name, &v, sizeof(v));
}

/*
 * The flow label is leased from the kernel (IPV6_FLOWLABEL_MGR) and put on
 * the socket's destination; IPV6_FLOWINFO_SEND makes the kernel use it
 * rather than its own per-flow hash.
 */
static int set_flowlabel(int fd, const struct sockaddr_in6 *dst, uint32_t label)
{
	struct in6_flowlabel_req fr = {
		.flr_label = htonl(label & 0xfffff),
		.flr_action = IPV6_FL_A_GET,
		.flr_flags = IPV6_FL_F_CREATE,
		.flr_share = IPV6_FL_S_EXCL,
	};

	memcpy(&fr.flr_dst, &dst->sin6_addr, sizeof(fr.flr_dst));
	if (setsockopt(fd, IPPROTO_IPV6, IPV6_FLOWLABEL_MGR, &fr, sizeof(fr)))
		return -errno;
	return setint(fd, IPPROTO_IPV6, IPV6_FLOWINFO_SEND, 1) ? -errno : 0;
}

static int stream_open(const struct probe_send_cfg *c, struct probe_stream *s, char *err,
		       size_t errlen)
{
	struct sockaddr_storage dst = c->dst;
	int fam = dst.ss_family, tos = s->dscp << 2, r;

	s->fd = socket(fam, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd < 0)
		goto fail;
	r = fam == AF_INET ? setint(s->fd, IPPROTO_IP, IP_TOS, tos)
			   : setint(s->fd, IPPROTO_IPV6, IPV6_TCLASS, tos);
	if (r)
		goto fail;
	if (setint(s->fd, SOL_SOCKET, SO_TIMESTAMPING, TS_TX_FLAGS) &&
	    setint(s->fd, SOL_SOCKET, SO_TIMESTAMPING, TS_RX_FLAGS))
		goto fail;
	if (fam == AF_INET6 && s->flowlabel) {
		struct sockaddr_in6 *d6 = (struct sockaddr_in6 *)&dst;

		r = set_flowlabel(s->fd, d6, s->flowlabel);
		if (r) {
			snprintf(err, errlen, "class %s: flow label 0x%05x: %s", s->name,
				 s->flowlabel, strerror(-r));
			return r;
		}
		d6->sin6_flowinfo = htonl(s->flowlabel & 0xfffff);
	}
	if (connect(s->fd, (struct sockaddr *)&dst, c->dstlen))
		goto fail;
	return pstats_init(&s->st, c->count);
fail:
	r = -errno;
	snprintf(err, errlen, "class %s: socket: %s", s->name, strerror(errno));
	return r;
}

static void stream_send(struct probe_stream *s, uint16_t errest)
{
	struct stamp_test t = {
		.seq = s->st.sent,
		.err = errest,
		.ssid = s->ssid,
		.cos = { .present = true, .dscp1 = s->dscp },
	};
	uint8_t buf[COS_PKT_LEN];
	int64_t now = now_ns(CLOCK_REALTIME);

	t.ts = stamp_ntp_from_ns(now);
	stamp_test_pack(&t, buf, sizeof(buf));
	s->st.slot[t.seq].t1 = now;
	/* A refused or dropped packet is a lost one: loss is what is measured. */
	send(s->fd, buf, sizeof(buf), 0);
	s->st.sent++;
}

/* TX timestamps: ee_data is the send's index on the socket (OPT_ID),
 * which is the sequence number, every send being one test packet. */
static void stream_errqueue(struct probe_stream *s)
{
	char ctl[512];
	struct msghdr m = { .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c;

	while (recvmsg(s->fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT) >= 0) {
		int64_t ts = cmsg_ts(&m);

		for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
			struct sock_extended_err ee;

			if (!((c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) ||
			      (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR)))
				continue;
			memcpy(&ee, CMSG_DATA(c), sizeof(ee));
			if (ee.ee_origin == SO_EE_ORIGIN_TIMESTAMPING && ts &&
			    ee.ee_data < s->st.sent) {
				s->st.slot[ee.ee_data].t1k = ts;
			}
		}
		m.msg_controllen = sizeof(ctl);
	}
}

static void stream_recv(struct probe_stream *s, uint16_t errest, int tai_utc)
{
	uint8_t buf[STAMP_MAX_LEN];
	char ctl[256];
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl };
	struct stamp_reply r;
	ssize_t len;

	for (;;) {
		struct pstats_slot sl = {};

		m.msg_controllen = sizeof(ctl);
		len = recvmsg(s->fd, &m, MSG_DONTWAIT);
		if (len < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			continue;	/* ECONNREFUSED and the like: loss */
		}
		sl.t4 = cmsg_ts(&m);
		sl.t4_kernel = sl.t4 != 0;
		if (!sl.t4)
			sl.t4 = now_ns(CLOCK_REALTIME);
		/* A reply that does not carry back the timestamp we sent is
		 * not an answer to us. SSID 0: a reflector that knows no
		 * RFC 8972 (TWAMP-light, plain RFC 8762) zeroes it; the
		 * socket's own port and the timestamp still tell. */
		if (stamp_reply_parse(buf, len, &r) || (r.ssid && r.ssid != s->ssid) ||
		    r.s_seq >= s->st.sent ||
		    stamp_ntp_from_ns(s->st.slot[r.s_seq].t1) != r.s_ts)
			continue;
		sl.t2 = stamp_ts_to_ns(r.rx_ts, r.err, tai_utc);
		sl.t3 = stamp_ts_to_ns(r.ts, r.err, tai_utc);
		sl.synced = (r.err & STAMP_ERR_S) && (errest & STAMP_ERR_S);
		sl.refl_dscp = r.cos.present && !(r.cos.flags & STAMP_TLV_F_U) ? r.cos.dscp2 : -1;
		sl.refl_rp = sl.refl_dscp >= 0 && r.cos.rp;
		sl.refl_ttl = r.s_ttl;
		pstats_reply(&s->st, r.s_seq, &sl);
	}
}

static bool all_answered(const struct probe_stream *s, unsigned int n, uint32_t count)
{
	unsigned int i;
	uint32_t q;

	for (i = 0; i < n; i++)
		for (q = 0; q < count; q++)
			if (!s[i].st.slot[q].replies)
				return false;
	return true;
}

int probe_send(const struct probe_send_cfg *c, struct probe_stream *s, unsigned int n,
	       char *err, size_t errlen)
{
	uint16_t errest = stamp_err_local();
	int tai_utc = stamp_tai_utc();
	struct pollfd pfd[QOS_MAX_CLASSES];
	int64_t start, deadline = 0, now;
	unsigned int i;
	int r = 0;

	if (n > QOS_MAX_CLASSES)
		return -EINVAL;
	for (i = 0; i < n; i++)
		s[i].fd = -1;
	for (i = 0; i < n; i++) {
		r = stream_open(c, &s[i], err, errlen);
		if (r)
			goto out;
		pfd[i].fd = s[i].fd;
		pfd[i].events = POLLIN;
	}
	/* The streams are spread over the interval, not sent in a burst: a
	 * burst's first reply would wait behind the sender's next sends. */
	start = now_ns(CLOCK_MONOTONIC);
	for (;;) {
		int64_t next = INT64_MAX, t, wait;
		bool done = true;

		if (c->stop && *c->stop)
			break;
		now = now_ns(CLOCK_MONOTONIC);
		for (i = 0; i < n; i++) {
			if (s[i].st.sent >= c->count)
				continue;
			t = start + (int64_t)(c->interval_ns * i / n) +
			    (int64_t)c->interval_ns * s[i].st.sent;
			if (now >= t) {
				stream_send(&s[i], errest);
				t += c->interval_ns;
			}
			if (s[i].st.sent < c->count) {
				done = false;
				next = t < next ? t : next;
			}
		}
		if (done && !deadline)
			deadline = now + c->wait_ns;
		if (done && (now >= deadline || all_answered(s, n, c->count)))
			break;
		wait = (done ? deadline : next) - now;
		struct timespec ts = { wait / 1000000000, wait % 1000000000 };

		if (wait < 0)
			ts = (struct timespec){};
		if (ppoll(pfd, n, &ts, NULL) < 0 && errno != EINTR) {
			r = -errno;
			snprintf(err, errlen, "poll: %s", strerror(errno));
			goto out;
		}
		for (i = 0; i < n; i++) {
			if (pfd[i].revents & POLLERR)
				stream_errqueue(&s[i]);
			if (pfd[i].revents & POLLIN)
				stream_recv(&s[i], errest, tai_utc);
		}
	}
	/* TX timestamps not yet read are still queued. */
	for (i = 0; i < n; i++) {
		stream_errqueue(&s[i]);
		pstats_sum(&s[i].st, s[i].dscp, &s[i].sum);
	}
out:
	for (i = 0; i < n; i++) {
		if (s[i].fd >= 0)
			close(s[i].fd);
		s[i].fd = -1;
	}
	return r;
}

static int refl_open(int fam, const struct sockaddr_storage *ss, socklen_t len, char *err,
		     size_t errlen)
{
	int fd = socket(fam, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), r;
	char a[INET6_ADDRSTRLEN] = "?";

	if (fd < 0)
		goto fail;
	if (fam == AF_INET)
		r = setint(fd, IPPROTO_IP, IP_RECVTOS, 1) || setint(fd, IPPROTO_IP, IP_RECVTTL, 1) ||
		    setint(fd, IPPROTO_IP, IP_PKTINFO, 1);
	else
		r = setint(fd, IPPROTO_IPV6, IPV6_V6ONLY, 1) ||
		    setint(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, 1) ||
		    setint(fd, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, 1) ||
		    setint(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, 1);
	if (r || setint(fd, SOL_SOCKET, SO_TIMESTAMPING, TS_RX_FLAGS))
		goto fail;
	if (bind(fd, (const struct sockaddr *)ss, len))
		goto fail;
	return fd;
fail:
	r = -errno;
	if (fam == AF_INET)
		inet_ntop(fam, &((const struct sockaddr_in *)ss)->sin_addr, a, sizeof(a));
	else
		inet_ntop(fam, &((const struct sockaddr_in6 *)ss)->sin6_addr, a, sizeof(a));
	snprintf(err, errlen, "listen %s: %s", a, strerror(errno));
	if (fd >= 0)
		close(fd);
	return r;
}

#define CNT_ADD(x, n)	__atomic_fetch_add(&(x), (n), __ATOMIC_RELAXED)

/* One datagram as received, with what its control messages said. */
struct refl_pkt {
	uint8_t buf[STAMP_MAX_LEN];
	ssize_t len;
	struct sockaddr_storage from;
	socklen_t fromlen;
	int tos, ttl;
	int64_t rx;
	bool have_pi;
	struct in_pktinfo pi4;
	struct in6_pktinfo pi6;
};

static int refl_recv(int fd, struct refl_pkt *p)
{
	char ctl[512];
	struct iovec iov = { p->buf, sizeof(p->buf) };
	struct msghdr m = { .msg_name = &p->from, .msg_namelen = sizeof(p->from),
			    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
			    .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c;

	p->len = recvmsg(fd, &m, MSG_DONTWAIT);
	if (p->len < 0)
		return -errno;
	p->fromlen = m.msg_namelen;
	p->tos = p->ttl = 0;
	p->have_pi = false;
	p->rx = cmsg_ts(&m);
	if (!p->rx)
		p->rx = now_ns(CLOCK_REALTIME);
	for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS)
			p->tos = *(uint8_t *)CMSG_DATA(c);
		else if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TTL)
			memcpy(&p->ttl, CMSG_DATA(c), sizeof(p->ttl));
		else if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO)
			p->have_pi = memcpy(&p->pi4, CMSG_DATA(c), sizeof(p->pi4));
		else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_TCLASS)
			memcpy(&p->tos, CMSG_DATA(c), sizeof(p->tos));
		else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_HOPLIMIT)
			memcpy(&p->ttl, CMSG_DATA(c), sizeof(p->ttl));
		else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO)
			p->have_pi = memcpy(&p->pi6, CMSG_DATA(c), sizeof(p->pi6));
	}
	return 0;
}

/* @out back to where @p came from, from the address it was sent to, with
 * @dscp (ECN 0): the same for both families. */
static void refl_send(int fd, int fam, struct refl_pkt *p, const uint8_t *out, size_t len,
		      uint8_t dscp)
{
	char octl[128] = {};
	struct iovec iov = { (void *)out, len };
	struct msghdr m = { .msg_name = &p->from, .msg_namelen = p->fromlen, .msg_iov = &iov,
			    .msg_iovlen = 1, .msg_control = octl };
	struct cmsghdr *c;
	int t = dscp << 2;

	m.msg_controllen = CMSG_SPACE(sizeof(int)) +
			   (fam == AF_INET ? CMSG_SPACE(sizeof(p->pi4)) : CMSG_SPACE(sizeof(p->pi6)));
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = fam == AF_INET ? IPPROTO_IP : IPPROTO_IPV6;
	c->cmsg_type = fam == AF_INET ? IP_TOS : IPV6_TCLASS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &t, sizeof(t));
	c = CMSG_NXTHDR(&m, c);
	if (p->have_pi && fam == AF_INET) {
		p->pi4.ipi_spec_dst = p->pi4.ipi_addr;
		p->pi4.ipi_ifindex = 0;
		c->cmsg_level = IPPROTO_IP;
		c->cmsg_type = IP_PKTINFO;
		c->cmsg_len = CMSG_LEN(sizeof(p->pi4));
		memcpy(CMSG_DATA(c), &p->pi4, sizeof(p->pi4));
	} else if (p->have_pi) {
		c->cmsg_level = IPPROTO_IPV6;
		c->cmsg_type = IPV6_PKTINFO;
		c->cmsg_len = CMSG_LEN(sizeof(p->pi6));
		memcpy(CMSG_DATA(c), &p->pi6, sizeof(p->pi6));
	} else {
		m.msg_controllen = CMSG_SPACE(sizeof(int));
	}
	sendmsg(fd, &m, MSG_DONTWAIT);
}

/*
 * Whether @p was sent to an address of this host, not to a broadcast or
 * multicast one: one such request would be answered by every reflector
 * of the link, to whatever source it names. IPv4: the kernel's
 * ipi_spec_dst is the destination itself only for a local unicast
 * route, the interface's address for broadcast and multicast.
 */
static bool refl_unicast(const struct refl_pkt *p, int fam)
{
	if (!p->have_pi)
		return true;
	if (fam == AF_INET)
		return p->pi4.ipi_addr.s_addr == p->pi4.ipi_spec_dst.s_addr &&
		       !IN_MULTICAST(ntohl(p->pi4.ipi_addr.s_addr));
	return !IN6_IS_ADDR_MULTICAST(&p->pi6.ipi6_addr);
}

struct refl_ctx {
	const struct probe_refl_cfg *cfg;
	struct rguard guard;
	struct probe_refl_stats *rs;
	uint16_t errest;
};

/* One datagram in; its reply out if the guard lets it, with the DSCP
 * stamp_reflect_ex() chose. */
static void refl_one(struct refl_ctx *x, int fd, int fam)
{
	struct refl_pkt p;
	uint8_t out[STAMP_MAX_LEN];
	struct stamp_refl_in ri = { .cos_allowed = x->cfg->cos_allowed, .err = x->errest };
	struct stamp_refl_out ro;
	struct probe_refl_stats *rs = x->rs;
	enum rg_verdict v;
	int f = fam == AF_INET6;
	ssize_t len;

	if (refl_recv(fd, &p))
		return;
	/* Checked before the packet is parsed: a refused one costs nothing
	 * more, whatever it holds. */
	v = refl_unicast(&p, fam) ? rg_check(&x->guard, (struct sockaddr *)&p.from,
					      now_ns(CLOCK_MONOTONIC)) : RG_DST;
	__atomic_store_n(&rs->evicted, x->guard.evicted, __ATOMIC_RELAXED);
	if (v != RG_PASS) {
		CNT_ADD(rs->refused[f][v], 1);
		return;
	}
	ri.tos = p.tos;
	ri.ttl = p.ttl;
	ri.rx = stamp_ntp_from_ns(p.rx);
	ri.tx = stamp_ntp_from_ns(now_ns(CLOCK_REALTIME));
	len = stamp_reflect_ex(p.buf, p.len, &ri, out, &ro);
	if (len < 0) {
		CNT_ADD(rs->bad, 1);
		return;
	}
	CNT_ADD(rs->packets[f], 1);
	CNT_ADD(rs->dscp[f][p.tos >> 2], 1);
	if (ro.cos_refused)
		CNT_ADD(rs->cos_refused[f], 1);
	refl_send(fd, fam, &p, out, len, ro.dscp);
}

/* The sockets of c->addr ("ADDR[,ADDR...]"), or of 0.0.0.0 and :: when
 * it is NULL; -errno, @err says (the ones opened are in @pfd, @n). */
static int refl_bind(const struct probe_refl_cfg *c, struct pollfd *pfd, int *fam, int *n,
		     char *err, size_t errlen)
{
	char buf[PROBE_REFL_SOCKS * (INET6_ADDRSTRLEN + 1)], *tok, *save;
	struct sockaddr_storage ss;
	socklen_t len;

	*n = 0;
	if (snprintf(buf, sizeof(buf), "%s", c->addr ?: "0.0.0.0,::") >= (int)sizeof(buf)) {
		snprintf(err, errlen, "listen: at most %d addresses", PROBE_REFL_SOCKS);
		return -EINVAL;
	}
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n == PROBE_REFL_SOCKS) {
			snprintf(err, errlen, "listen: at most %d addresses", PROBE_REFL_SOCKS);
			return -EINVAL;
		}
		if (probe_addr(tok, c->port, &ss, &len)) {
			snprintf(err, errlen, "listen '%s': not an IPv4 or IPv6 address", tok);
			return -EINVAL;
		}
		fam[*n] = ss.ss_family;
		pfd[*n].events = POLLIN;
		pfd[*n].fd = refl_open(fam[*n], &ss, len, err, errlen);
		if (pfd[*n].fd < 0)
			return pfd[*n].fd;
		(*n)++;
	}
	if (!*n) {
		snprintf(err, errlen, "listen '%s': expected ADDRESS[,ADDRESS...]", c->addr);
		return -EINVAL;
	}
	return 0;
}

int probe_reflect(const struct probe_refl_cfg *c, struct probe_refl_stats *rs, char *err,
		  size_t errlen)
{
	struct refl_ctx x = { .cfg = c, .rs = rs };
	struct pollfd pfd[PROBE_REFL_SOCKS];
	int fam[PROBE_REFL_SOCKS], n = 0, i, r;
	uint64_t seed = 0;

	/* The seed keeps a sender from aiming its addresses at one set of
	 * the source table. Not blocking for it early in boot: the clock
	 * and pid then, which a remote sender does not know either. */
	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
		seed = (uint64_t)now_ns(CLOCK_MONOTONIC) ^ (uint64_t)getpid() << 32;
	if (rg_init(&x.guard, &c->guard, seed)) {
		snprintf(err, errlen, "source table: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	r = refl_bind(c, pfd, fam, &n, err, errlen);
	if (!r && c->ready)
		r = c->ready(c->arg, err, errlen);
	while (!r && !*c->stop) {
		/* The estimate changes as the clock is disciplined. */
		x.errest = stamp_err_local();
		if (poll(pfd, n, 1000) < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			snprintf(err, errlen, "poll: %s", strerror(errno));
			break;
		}
		for (i = 0; i < n; i++)
			if (pfd[i].revents & POLLIN)
				refl_one(&x, pfd[i].fd, fam[i]);
	}
	for (i = 0; i < n; i++)
		close(pfd[i].fd);
	rg_free(&x.guard);
	return r;
}
