/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * STAMP Session-Sender and Session-Reflector over UDP sockets, IPv4 and
 * IPv6 alike: one socket per probed class (its DSCP, its flow label), the
 * kernel's software timestamps where it gives them.
 */
#ifndef __QOS_PROBE_SOCKET_H
#define __QOS_PROBE_SOCKET_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "../bpf/qos_common.h"
#include "probe/stream_stats.h"
#include "probe/rguard.h"

struct probe_stream {
	char name[QOS_CLASS_NAME_LEN];	/* the class probed */
	uint8_t dscp;
	uint32_t flowlabel;		/* IPv6 only; 0: none */
	uint16_t ssid;			/* Session-Sender Identifier */
	int fd;
	struct pstats st;
	struct pstats_sum sum;
};

struct probe_send_cfg {
	struct sockaddr_storage dst;
	socklen_t dstlen;
	uint64_t interval_ns;
	uint32_t count;
	uint64_t wait_ns;		/* for replies after the last test packet */
	volatile sig_atomic_t *stop;	/* set: end the run early (NULL: never) */
};

/* Run the streams to the end (or *c->stop); their sums are filled.
 * -errno, @err says. */
int probe_send(const struct probe_send_cfg *c, struct probe_stream *s, unsigned int n,
	       char *err, size_t errlen);

/* Test packets reflected, per family (0: IPv4, 1: IPv6) and DSCP received,
 * and refused, per family and reason. Written by the reflecting thread
 * with relaxed atomics, read with them by any other. */
struct probe_refl_stats {
	uint64_t packets[2];
	uint64_t dscp[2][64];
	uint64_t bad;			/* too short to be a test packet */
	uint64_t refused[2][RG_NVERDICTS];
	uint64_t cos_refused[2];	/* replies not sent with the DSCP1 asked */
	uint64_t evicted;		/* sources that took another's table entry */
};

/* Addresses a reflector listens on, at most. */
#define PROBE_REFL_SOCKS	8

struct probe_refl_cfg {
	const char *addr;		/* "ADDR[,ADDR...]"; NULL: 0.0.0.0 and :: */
	uint16_t port;
	struct rg_cfg guard;
	uint64_t cos_allowed;		/* DSCPs a CoS TLV may choose: bit d, DSCP d */
	/* Called once the sockets are bound, before any packet is read
	 * (privileges dropped, metrics served): 0, or -errno with @err. */
	int (*ready)(void *arg, char *err, size_t errlen);
	void *arg;
	volatile sig_atomic_t *stop;
};

/* Reflect as @c says until *c->stop. -errno, @err says. */
int probe_reflect(const struct probe_refl_cfg *c, struct probe_refl_stats *rs, char *err,
		  size_t errlen);

/* "ADDR" (IPv4 or IPv6) and a port into @ss. */
int probe_addr(const char *s, uint16_t port, struct sockaddr_storage *ss, socklen_t *len);

#endif /* __QOS_PROBE_SOCKET_H */
