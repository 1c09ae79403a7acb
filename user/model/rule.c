// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Rules as data: parse them, check them, print their match, keep a list of
 * them. model/tuplespace.c turns them into the keys and shapes the BPF side
 * looks up; Documentation/classifier.rst explains the model.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "lib/names.h"
#include "lib/util.h"
#include "model/rule.h"

void qos_rule_init(struct qos_rule *r)
{
	memset(r, 0, sizeof(*r));
	r->proto = -1;
	r->sport_hi = r->dport_hi = 0xffff;
	r->dscp = -1;
	r->prio = QOS_RULE_PRIO_DEFAULT;
}

int qos_parse_prefix(const char *s, int *family, uint8_t addr[16], uint8_t *plen)
{
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(s, '/');
	uint32_t len, max;
	int fam, i;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%.*s", slash ? (int)(slash - s) : (int)strlen(s), s);
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, buf, addr) == 1)
		fam = AF_INET;
	else if (inet_pton(AF_INET6, buf, addr) == 1)
		fam = AF_INET6;
	else
		return -EINVAL;
	max = fam == AF_INET ? 32 : 128;
	len = max;
	if (slash && (qos_parse_u32(slash + 1, &len) || len > max))
		return -ERANGE;
	/* Host bits set is a typo more often than not; ip-route refuses too. */
	for (i = 0; i < 16; i++) {
		int bits = (int)len - i * 8;
		uint8_t keep = bits >= 8 ? 0xff : bits <= 0 ? 0 : (uint8_t)(0xff << (8 - bits));

		if (addr[i] & ~keep)
			return -EDOM;
	}
	*family = fam;
	*plen = len;
	return 0;
}

static const struct {
	const char *name;
	int proto;
} protos[] = {
	{ "icmp", 1 }, { "tcp", 6 }, { "udp", 17 }, { "gre", 47 }, { "esp", 50 },
	{ "ah", 51 }, { "icmpv6", 58 }, { "ipv6-icmp", 58 }, { "sctp", 132 },
};

static const char *proto_name(int proto)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(protos); i++)
		if (protos[i].proto == proto)
			return protos[i].name;
	return NULL;
}

static int set_prefix(struct qos_rule *r, bool src, const char *val, char *err, size_t errlen)
{
	int fam, ret;

	ret = qos_parse_prefix(val, &fam, src ? r->src : r->dst, src ? &r->src_len : &r->dst_len);
	if (ret == -EDOM) {
		snprintf(err, errlen, "'%s' has host bits set beyond the prefix length", val);
		return -EINVAL;
	}
	if (ret) {
		snprintf(err, errlen, "'%s' is not an IPv4 or IPv6 prefix (ADDR[/LEN])", val);
		return -EINVAL;
	}
	if (r->family != AF_UNSPEC && r->family != fam) {
		snprintf(err, errlen, "'%s' is not of the rule's address family", val);
		return -EINVAL;
	}
	r->family = fam;
	if (src)
		r->has_src = true;
	else
		r->has_dst = true;
	return 0;
}

static int set_flowlabel(struct qos_rule *r, const char *val, char *err, size_t errlen)
{
	const char *slash = strchr(val, '/');
	uint32_t u, m = QOS_FLOWLABEL_MASK;
	char num[16];

	if (!strcmp(val, "any")) {
		r->flowlabel = r->fl_mask = 0;
		return 0;
	}
	snprintf(num, sizeof(num), "%.*s", slash ? (int)(slash - val) : 15, val);
	if (qos_parse_u32_hex(num, &u) || u > QOS_FLOWLABEL_MASK ||
	    (slash && (qos_parse_u32_hex(slash + 1, &m) || !m || m > QOS_FLOWLABEL_MASK))) {
		snprintf(err, errlen,
			 "'%s' is not a flow label LABEL[/MASK] (20 bits, e.g. 0x12345/0xff000)", val);
		return -EINVAL;
	}
	if (u & ~m) {
		snprintf(err, errlen, "'%s': label has bits outside the mask", val);
		return -EINVAL;
	}
	if (r->family == AF_INET) {
		snprintf(err, errlen, "a flow label is IPv6 only, the rule is IPv4");
		return -EINVAL;
	}
	r->family = AF_INET6;
	r->flowlabel = u;
	r->fl_mask = m;
	return 0;
}

static int set_proto(struct qos_rule *r, const char *val, char *err, size_t errlen)
{
	uint32_t u;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(protos); i++) {
		if (!strcasecmp(val, protos[i].name)) {
			r->proto = protos[i].proto;
			return 0;
		}
	}
	if (qos_parse_u32(val, &u) || u > 255) {
		snprintf(err, errlen, "'%s' is not a protocol (tcp, udp, icmpv6, ... or 0-255)", val);
		return -EINVAL;
	}
	r->proto = u;
	return 0;
}

static bool has_port(uint16_t lo, uint16_t hi)
{
	return lo || hi != 0xffff;
}

/* PORT or LO-HI; 0-65535 is any port. */
static int set_port(struct qos_rule *r, bool src, const char *val, char *err, size_t errlen)
{
	const char *dash = strchr(val, '-');
	uint32_t lo, hi;
	char num[8];

	size_t n = dash ? (size_t)(dash - val) : strlen(val);

	/* Longer than any port, even zero-padded: not cut to fit. */
	if (n >= sizeof(num))
		n = 0;
	snprintf(num, sizeof(num), "%.*s", (int)n, val);
	if (!n || qos_parse_u32(num, &lo) ||
	    qos_parse_u32(dash ? dash + 1 : num, &hi) || lo > hi || hi > 0xffff) {
		snprintf(err, errlen, "'%s' is not a port or a range LO-HI (0-65535, LO <= HI)",
			 val);
		return -EINVAL;
	}
	if (src) {
		r->sport_lo = lo;
		r->sport_hi = hi;
	} else {
		r->dport_lo = lo;
		r->dport_hi = hi;
	}
	return 0;
}

/* police RATE, burst SIZE|auto, action drop|remark:DSCP|demote:CLASS. */
static int set_police(struct qos_rule *r, const char *key, const char *val, char *err,
		      size_t errlen)
{
	uint64_t u;
	uint8_t d;

	if (!strcmp(key, "police")) {
		if (strchr(val, '%') || qos_parse_rate(val, 0, &u) || u < TB_RATE_MIN ||
		    u > TB_RATE_MAX) {
			snprintf(err, errlen, "'%s' is not a rate from 1kbit to 1000gbit", val);
			return -EINVAL;
		}
		r->police_bps = u;
		if (!r->police_act.type)
			r->police_act.type = QOS_PA_DROP;
	} else if (!strcmp(key, "burst")) {
		if (!strcmp(val, "auto")) {
			r->police_burst = 0;
		} else if (qos_parse_size(val, &u) || !u || u > TB_BURST_MAX) {
			snprintf(err, errlen, "'%s' is not a size from 1 byte to %llu (or auto)",
				 val, TB_BURST_MAX);
			return -EINVAL;
		} else {
			r->police_burst = u;
		}
	} else if (!strcmp(val, "drop")) {
		r->police_act.type = QOS_PA_DROP;
		r->police_act.arg = 0;
	} else if (!strncmp(val, "remark:", 7) && !qos_parse_dscp(val + 7, &d)) {
		r->police_act.type = QOS_PA_REMARK;
		r->police_act.arg = d;
	} else if (!strncmp(val, "demote:", 7) && val[7] && strlen(val + 7) < QOS_CLASS_NAME_LEN) {
		r->police_act.type = QOS_PA_DEMOTE;
		snprintf(r->police_demote, sizeof(r->police_demote), "%s", val + 7);
	} else {
		snprintf(err, errlen, "'%s' is not an action (drop, remark:DSCP, demote:CLASS)",
			 val);
		return -EINVAL;
	}
	return 0;
}

/* priority, class, set-dscp, name: one word each. */
static int set_word(struct qos_rule *r, const char *key, const char *val, char *err,
		    size_t errlen)
{
	char esc[QOS_ESC_LEN];
	uint32_t u;
	uint8_t d;

	if (!strcmp(key, "priority")) {
		if (qos_parse_u32(val, &u) || u > 0xffff) {
			snprintf(err, errlen, "'%s' is not a priority (0-65535, lower wins)", val);
			return -EINVAL;
		}
		r->prio = u;
	} else if (!strcmp(key, "class")) {
		if (!qos_name_ok(val, sizeof(r->class_name) - 1)) {
			snprintf(err, errlen, "'%s' is not a class name",
				 qos_esc(val, esc, sizeof(esc)));
			return -EINVAL;
		}
		snprintf(r->class_name, sizeof(r->class_name), "%s", val);
	} else if (!strcmp(key, "set-dscp")) {
		if (qos_parse_dscp(val, &d)) {
			snprintf(err, errlen, "'%s' is not a DSCP (0-63, ef, csN, afXY, le, va)", val);
			return -EINVAL;
		}
		r->dscp = d;
	} else if (!strcmp(key, "name")) {
		/* Also a reservation's id, from the command line or JSON. */
		if (!qos_name_ok(val, sizeof(r->name) - 1)) {
			snprintf(err, errlen, "name '%s' must be 1-%d of " QOS_NAME_CHARS,
				 qos_esc(val, esc, sizeof(esc)), QOS_RULE_NAME_LEN - 1);
			return -EINVAL;
		}
		snprintf(r->name, sizeof(r->name), "%s", val);
	} else {
		snprintf(err, errlen,
			 "unknown rule key (src, dst, flowlabel, proto, sport, dport, priority, class, set-dscp, police, burst, action)");
		return -ENOENT;
	}
	return 0;
}

int qos_rule_set(struct qos_rule *r, const char *key, const char *val, char *err, size_t errlen)
{
	if (!strcmp(key, "src") || !strcmp(key, "dst"))
		return set_prefix(r, key[0] == 's', val, err, errlen);
	if (!strcmp(key, "flowlabel"))
		return set_flowlabel(r, val, err, errlen);
	if (!strcmp(key, "proto"))
		return set_proto(r, val, err, errlen);
	if (!strcmp(key, "sport") || !strcmp(key, "dport"))
		return set_port(r, key[0] == 's', val, err, errlen);
	if (!strcmp(key, "police") || !strcmp(key, "burst") || !strcmp(key, "action"))
		return set_police(r, key, val, err, errlen);
	return set_word(r, key, val, err, errlen);
}

unsigned int qos_port_blocks(uint16_t lo, uint16_t hi, uint16_t val[32], uint8_t len[32])
{
	uint32_t p = lo, n = 0;

	while (p <= hi) {
		uint32_t size = p ? p & -p : 0x10000;

		while (p + size - 1 > hi)
			size >>= 1;
		val[n] = p;
		len[n++] = 16 - __builtin_ctz(size);
		p += size;
	}
	return n;
}

static unsigned int rule_blocks(const struct qos_rule *r)
{
	uint16_t v[32];
	uint8_t l[32];

	return qos_port_blocks(r->sport_lo, r->sport_hi, v, l) *
	       qos_port_blocks(r->dport_lo, r->dport_hi, v, l);
}

static bool proto_has_ports(int proto)
{
	return proto == 6 || proto == 17 || proto == 132 || proto == 136;
}

int qos_rule_check(const struct qos_rule *r, const char **key, char *err, size_t errlen)
{
	bool sp = has_port(r->sport_lo, r->sport_hi), dp = has_port(r->dport_lo, r->dport_hi);
	unsigned int n;

	*key = "class";
	if (!r->class_name[0]) {
		snprintf(err, errlen, "the rule names no class (class NAME)");
		return -EINVAL;
	}
	*key = r->police_burst ? "burst" : "action";
	if (!r->police_bps && (r->police_burst || r->police_act.type)) {
		snprintf(err, errlen, "burst and action need police RATE");
		return -EINVAL;
	}
	if (!sp && !dp)
		return 0;
	*key = dp ? "dport" : "sport";
	if (!proto_has_ports(r->proto)) {
		snprintf(err, errlen, "ports need proto tcp, udp, sctp or udplite");
		return -EINVAL;
	}
	n = rule_blocks(r);
	if (n > QOS_RULE_BLOCKS_MAX) {
		snprintf(err, errlen,
			 "sport %u-%u and dport %u-%u cut into %u aligned blocks (entries), more than %d: align the ranges to powers of two or split the rule",
			 r->sport_lo, r->sport_hi, r->dport_lo, r->dport_hi, n,
			 QOS_RULE_BLOCKS_MAX);
		return -E2BIG;
	}
	return 0;
}

const char *qos_rule_fmt_match(const struct qos_rule *r, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	size_t n = 0;
	int i;

	buf[0] = '\0';
	if (r->has_src) {
		inet_ntop(r->family, r->src, a, sizeof(a));
		n += snprintf(buf + n, len - n, "src %s/%u ", a, r->src_len);
	}
	if (r->has_dst && n < len) {
		inet_ntop(r->family, r->dst, a, sizeof(a));
		n += snprintf(buf + n, len - n, "dst %s/%u ", a, r->dst_len);
	}
	if (r->fl_mask && n < len) {
		if (r->fl_mask == QOS_FLOWLABEL_MASK)
			n += snprintf(buf + n, len - n, "flowlabel 0x%05x ", r->flowlabel);
		else
			n += snprintf(buf + n, len - n, "flowlabel 0x%05x/0x%05x ", r->flowlabel,
				      r->fl_mask);
	}
	if (r->proto >= 0 && n < len) {
		if (proto_name(r->proto))
			n += snprintf(buf + n, len - n, "proto %s ", proto_name(r->proto));
		else
			n += snprintf(buf + n, len - n, "proto %d ", r->proto);
	}
	for (i = 0; i < 2 && n < len; i++) {
		uint16_t lo = i ? r->dport_lo : r->sport_lo, hi = i ? r->dport_hi : r->sport_hi;

		if (!has_port(lo, hi))
			continue;
		if (lo == hi)
			n += snprintf(buf + n, len - n, "%s %u ", i ? "dport" : "sport", lo);
		else
			n += snprintf(buf + n, len - n, "%s %u-%u ", i ? "dport" : "sport", lo, hi);
	}
	if (!n)
		n = snprintf(buf, len, "%s ", r->family == AF_INET ? "ipv4" :
				       r->family == AF_INET6 ? "ipv6" : "any");
	if (n && n <= len)
		buf[n - 1] = '\0';
	return buf;
}

int qos_rules_add(struct qos_rules *l, const struct qos_rule *r)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct qos_rule *p = realloc(l->r, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		l->r = p;
		l->cap = cap;
	}
	l->r[l->n++] = *r;
	return 0;
}

void qos_rules_free(struct qos_rules *l)
{
	free(l->r);
	memset(l, 0, sizeof(*l));
}
