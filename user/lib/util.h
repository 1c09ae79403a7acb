/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef __QOS_UTIL_H
#define __QOS_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../bpf/qos_common.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* Set by -v; libbpf and libnl chatter is shown only then. */
extern bool qos_verbose;

void qos_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void qos_dbg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Warnings: each printed on stderr when found, "qosctl: warning: ...", and
 * counted. With --strict (qos_strict) a command that changes or checks a
 * profile fails once they are printed: qos_strict_check() before it acts.
 */
extern bool qos_strict;
void qos_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* 0, or -EINVAL with @err saying that --strict made the warnings errors. */
int qos_strict_check(char *err, size_t errlen);

/* Frames: the MTU plus the Ethernet header (FCS not counted, as tc). An
 * MTU not known (validate without 'mtu N') is taken to be 1500. */
#define QOS_ETH_HLEN		14
#define QOS_MTU_DEFAULT		1500
#define QOS_MTU_MIN		68	/* IPv4's; IPv6 wants 1280 */
#define QOS_MTU_MAX		65535

/* Rates below this many bit/s get a warning: a full frame takes 1.5 s. */
#define QOS_RATE_WARN_MIN	8000
/* Is rate @s written in tc's bytes per second ("100mbps" = 800mbit)? */
bool qos_rate_in_bytes(const char *s);
/*
 * Warn about rate @v, resolved to @bps (against @link_bps for a share, 0
 * otherwise): tc's bytes-per-second unit, or below QOS_RATE_WARN_MIN.
 * @where starts the message: "apply: rate", "FILE:LINE: ceil:".
 */
void qos_rate_check(const char *where, const char *v, uint64_t bps, uint64_t link_bps);

/*
 * Units follow tc(8): "100mbit", "1gbit", "10kbit", "1.5gbit", "800bit";
 * "Xbps" is bytes per second. A rate may also be "N%" of @link (when
 * @link is 0 a percentage is an error). Results in bit/s.
 */
int qos_parse_rate(const char *s, uint64_t link_bps, uint64_t *bps);

/* Sizes: "1514", "64kb" / "64k" (KiB), "2mb", "1500b", or "2mbit" (bits). */
int qos_parse_size(const char *s, uint64_t *bytes);

/* Times: "10ms", "500us", "1s", "250ns". Result in nanoseconds. */
int qos_parse_time(const char *s, uint64_t *ns);

/*
 * Unsigned integer, the whole string, decimal: what a person writes as
 * decimal (DSCP, ids, limits, ports) is read as decimal, leading zeros
 * included ("012" is 12, not octal 10). No sign, space or hex.
 */
int qos_parse_u32(const char *s, uint32_t *v);

/* The same, or hex after "0x": where hex is documented (flow labels,
 * marks and masks, qdisc handles). */
int qos_parse_u32_hex(const char *s, uint32_t *v);

/*
 * The decimal number @s starts with: digits, optionally '.' and digits
 * ("1.5", not ".5", "1e3", "0x1p4", "inf" or "nan", which strtod() takes).
 * *@end points after it. 0, or -EINVAL / -ERANGE.
 */
int qos_parse_decimal(const char *s, double *v, const char **end);

/* DSCP by number (0-63) or name: be, df, ef, va, le, csN, afXY. */
int qos_parse_dscp(const char *s, uint8_t *dscp);

/*
 * Test hook: if QOSCTL_FAULT names @step, die by SIGKILL there, as an OOM
 * kill or a crash would, so tests can prove recovery from every step.
 */
void qos_fault_point(const char *step);
/* QOSCTL_PAUSE=@step stops the process there (SIGSTOP), for a test to act
 * in the middle; QOSCTL_FAIL=@step makes qos_fail_point(@step) true, for a
 * test to see the rollback of a failure at that step. */
bool qos_fail_point(const char *step);

/* "100mbit" style rendering for tables and dry-runs. */
/* CLOCK_BOOTTIME in ns: the clock of bpf_ktime_get_boot_ns(), and of
 * deadlines that must not move with the wall clock. */
uint64_t qos_boottime_ns(void);
/* The highest CPU id of a cpulist ("0-3,8-11") + 1, or -EINVAL. */
int qos_cpulist_rows(const char *list);

const char *qos_fmt_rate(uint64_t bps, char *buf, size_t len);

/* The qdisc class a mark class is queued in: major:(0x10 + id), so that
 * tc shows class id N as M:1N for N < 16. */
static inline uint32_t qos_classid(uint32_t major, uint32_t id)
{
	return (major << 16) | (0x10 + id);
}

/* Names of the qdiscs behind enum qos_leaf and enum qos_sched. */
const char *qos_leaf_name(enum qos_leaf leaf);
const char *qos_sched_name(enum qos_sched sched);

#endif /* __QOS_UTIL_H */
