// SPDX-License-Identifier: LGPL-2.1-or-later
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <strings.h>

#include "lib/names.h"
#include "lib/util.h"

bool qos_verbose;

/* Messages quote what they were given (a name, a value, a path): no byte
 * of it reaches the terminal raw. */
static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	char msg[4096];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	fputs(prefix, stderr);
	qos_fputs_printable(msg, stderr);
	fputc('\n', stderr);
}

void qos_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("qosctl: ", fmt, ap);
	va_end(ap);
}

void qos_dbg(const char *fmt, ...)
{
	va_list ap;

	if (!qos_verbose)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

bool qos_strict;
static unsigned int nwarnings;

void qos_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("qosctl: warning: ", fmt, ap);
	va_end(ap);
	nwarnings++;
}

int qos_strict_check(char *err, size_t errlen)
{
	if (!qos_strict || !nwarnings)
		return 0;
	snprintf(err, errlen, "%u warning%s, errors with --strict", nwarnings,
		 nwarnings == 1 ? "" : "s");
	return -EINVAL;
}

bool qos_rate_in_bytes(const char *s)
{
	size_t len = strlen(s);

	return len > 3 && !strcasecmp(s + len - 3, "bps");
}

void qos_rate_check(const char *where, const char *v, uint64_t bps, uint64_t link_bps)
{
	char r[32], l[32], at[48] = "";

	qos_fmt_rate(bps, r, sizeof(r));
	if (qos_rate_in_bytes(v))
		qos_warn("%s '%s' is %s: 'bps' is bytes per second, as in tc", where, v, r);
	if (link_bps)
		snprintf(at, sizeof(at), " at link rate %s", qos_fmt_rate(link_bps, l, sizeof(l)));
	if (bps < QOS_RATE_WARN_MIN)
		qos_warn("%s '%s' is %s%s, below 8kbit: a full frame takes over 1.5 s", where, v, r,
			 at);
}

void qos_fault_point(const char *step)
{
	const char *f = getenv("QOSCTL_FAULT");

	if (f && !strcmp(f, step))
		raise(SIGKILL);
	f = getenv("QOSCTL_PAUSE");
	if (f && !strcmp(f, step))
		raise(SIGSTOP);
}

bool qos_fail_point(const char *step)
{
	static bool failed;
	const char *f = getenv("QOSCTL_FAIL");

	/* Once: the rollback that follows goes through the same steps. */
	if (failed || !f || strcmp(f, step))
		return false;
	failed = true;
	return true;
}

struct unit {
	const char *name;
	double mult;
};

/* Longest suffixes first so "kbit" is not read as "k" + "bit". */
static const struct unit rate_units[] = {
	{ "tbit", 1e12 }, { "gbit", 1e9 }, { "mbit", 1e6 }, { "kbit", 1e3 }, { "bit", 1 },
	{ "tbps", 8e12 }, { "gbps", 8e9 }, { "mbps", 8e6 }, { "kbps", 8e3 }, { "bps", 8 },
	{ "tibit", 1099511627776.0 }, { "gibit", 1073741824.0 },
	{ "mibit", 1048576.0 }, { "kibit", 1024.0 },
	{ "", 1 },
};

static const struct unit size_units[] = {
	{ "gbit", 1073741824.0 / 8 }, { "mbit", 1048576.0 / 8 }, { "kbit", 1024.0 / 8 },
	{ "gb", 1073741824.0 }, { "mb", 1048576.0 }, { "kb", 1024.0 },
	{ "g", 1073741824.0 }, { "m", 1048576.0 }, { "k", 1024.0 },
	{ "b", 1 }, { "", 1 },
};

static const struct unit time_units[] = {
	{ "ns", 1 }, { "usec", 1e3 }, { "us", 1e3 }, { "msec", 1e6 }, { "ms", 1e6 },
	{ "sec", 1e9 }, { "s", 1e9 },
};

#define DIGITS		"0123456789"
#define HEX_DIGITS	"0123456789abcdefABCDEF"

int qos_parse_decimal(const char *s, double *v, const char **end)
{
	char num[64];
	size_t n;

	n = s ? strspn(s, DIGITS) : 0;
	if (!n)
		return -EINVAL;
	if (s[n] == '.') {
		size_t frac = strspn(s + n + 1, DIGITS);

		if (!frac)
			return -EINVAL;
		n += 1 + frac;
	}
	/* Only the digits go to strtod(), which would also take a sign,
	 * an exponent, hex floats, "inf" and "nan". */
	if (n >= sizeof(num))
		return -ERANGE;
	memcpy(num, s, n);
	num[n] = '\0';
	*v = strtod(num, NULL);
	*end = s + n;
	return 0;
}

static int parse_number_unit(const char *s, const struct unit *units, size_t n,
			     double *out)
{
	const char *end;
	double v;
	size_t i;

	if (qos_parse_decimal(s, &v, &end))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (!strcasecmp(end, units[i].name)) {
			*out = v * units[i].mult;
			return 0;
		}
	}
	return -EINVAL;
}

int qos_parse_rate(const char *s, uint64_t link_bps, uint64_t *bps)
{
	size_t len = s ? strlen(s) : 0;
	double v;
	int err;

	if (len > 1 && s[len - 1] == '%') {
		const char *end;

		if (!link_bps)
			return -EINVAL;
		if (qos_parse_decimal(s, &v, &end) || end != s + len - 1 || v <= 0 || v > 100)
			return -ERANGE;
		*bps = (uint64_t)llround((double)link_bps * v / 100.0);
		return 0;
	}
	err = parse_number_unit(s, rate_units, ARRAY_SIZE(rate_units), &v);
	if (err)
		return err;
	if (v < 1 || v > 1e13)
		return -ERANGE;
	*bps = (uint64_t)llround(v);
	return 0;
}

int qos_parse_size(const char *s, uint64_t *bytes)
{
	double v;
	int err;

	err = parse_number_unit(s, size_units, ARRAY_SIZE(size_units), &v);
	if (err)
		return err;
	if (v < 1 || v > (double)UINT32_MAX)
		return -ERANGE;
	*bytes = (uint64_t)llround(v);
	return 0;
}

int qos_parse_time(const char *s, uint64_t *ns)
{
	double v;
	int err;

	err = parse_number_unit(s, time_units, ARRAY_SIZE(time_units), &v);
	if (err)
		return err;
	if (v < 1 || v > 3600e9)
		return -ERANGE;
	*ns = (uint64_t)llround(v);
	return 0;
}

/* Digits of @base, the whole string: no sign, space or second prefix that
 * strtoull() would take. */
static int parse_u32_base(const char *s, int base, uint32_t *v)
{
	const char *set = base == 16 ? HEX_DIGITS : DIGITS;
	unsigned long long x;

	if (!*s || s[strspn(s, set)])
		return -EINVAL;
	errno = 0;
	x = strtoull(s, NULL, base);
	if (errno || x > UINT32_MAX)
		return -ERANGE;
	*v = (uint32_t)x;
	return 0;
}

int qos_parse_u32(const char *s, uint32_t *v)
{
	return s ? parse_u32_base(s, 10, v) : -EINVAL;
}

int qos_parse_u32_hex(const char *s, uint32_t *v)
{
	if (s && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return parse_u32_base(s + 2, 16, v);
	return qos_parse_u32(s, v);
}

/* RFC 2474 class selectors, RFC 2597 AF, RFC 3246 EF, RFC 5865 VA, RFC 8622 LE. */
int qos_parse_dscp(const char *s, uint8_t *dscp)
{
	uint32_t v;

	if (!strcasecmp(s, "be") || !strcasecmp(s, "df")) {
		*dscp = 0;
		return 0;
	}
	if (!strcasecmp(s, "ef")) {
		*dscp = 46;
		return 0;
	}
	if (!strcasecmp(s, "va")) {
		*dscp = 44;
		return 0;
	}
	if (!strcasecmp(s, "le")) {
		*dscp = 1;
		return 0;
	}
	if (!strncasecmp(s, "cs", 2) && s[2] >= '0' && s[2] <= '7' && !s[3]) {
		*dscp = (s[2] - '0') * 8;
		return 0;
	}
	if (!strncasecmp(s, "af", 2) && s[2] >= '1' && s[2] <= '4' &&
	    s[3] >= '1' && s[3] <= '3' && !s[4]) {
		*dscp = (s[2] - '0') * 8 + (s[3] - '0') * 2;
		return 0;
	}
	if (qos_parse_u32(s, &v))
		return -EINVAL;
	if (v > 63)
		return -ERANGE;
	*dscp = v;
	return 0;
}

const char *qos_fmt_rate(uint64_t bps, char *buf, size_t len)
{
	if (bps >= 1000000000ULL && bps % 1000000000ULL == 0)
		snprintf(buf, len, "%llugbit", (unsigned long long)(bps / 1000000000ULL));
	else if (bps >= 1000000ULL && bps % 1000000ULL == 0)
		snprintf(buf, len, "%llumbit", (unsigned long long)(bps / 1000000ULL));
	else if (bps >= 1000ULL && bps % 1000ULL == 0)
		snprintf(buf, len, "%llukbit", (unsigned long long)(bps / 1000ULL));
	else
		snprintf(buf, len, "%llubit", (unsigned long long)bps);
	return buf;
}

const char *qos_leaf_name(enum qos_leaf leaf)
{
	switch (leaf) {
	case QOS_LEAF_PFIFO:
		return "pfifo";
	case QOS_LEAF_BFIFO:
		return "bfifo";
	case QOS_LEAF_FQ_CODEL:
		return "fq_codel";
	default:
		return "auto";
	}
}

const char *qos_sched_name(enum qos_sched sched)
{
	/* The words of the profile's `scheduler` key, and the root qdisc's
	 * tc kind for the three that build a tree. */
	static const char *const names[] = {
		[QOS_SCHED_HTB] = "htb",
		[QOS_SCHED_PRIO] = "prio",
		[QOS_SCHED_TBF] = "tbf",
		[QOS_SCHED_NONE] = "none",
	};

	return (unsigned int)sched < ARRAY_SIZE(names) ? names[sched] : "htb";
}

uint64_t qos_boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * The highest CPU id in @list, a cpulist ("0-3,8-11", ranges in ascending
 * order: Documentation/admin-guide/cputopology.rst), plus one; -EINVAL if
 * it is not one.
 */
int qos_cpulist_rows(const char *list)
{
	const char *last = strrchr(list, ','), *dash;
	unsigned long id;
	char *end;

	last = last ? last + 1 : list;
	dash = strchr(last, '-');
	last = dash ? dash + 1 : last;
	if (*last < '0' || *last > '9')
		return -EINVAL;
	errno = 0;
	id = strtoul(last, &end, 10);
	if (errno || *end || id >= 1U << 20)
		return -EINVAL;
	return id + 1;
}
