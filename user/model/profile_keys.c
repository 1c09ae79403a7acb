// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The keys of a profile: one handler per section kind ([profile],
 * [class NAME], [rule NAME]), each value parsed where it is read, the
 * reader's line in every error (Documentation/profiles.rst).
 */
#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/names.h"
#include "lib/util.h"
#include "model/perr.h"
#include "model/profile.h"
#include "model/profile_int.h"

#define QOS_HTB_PRIO_MAX	7

static int parse_bw(struct parse_ctx *c, const char *key, const char *v, struct qos_bw *bw)
{
	size_t len = strlen(v);

	memset(bw, 0, sizeof(*bw));
	bw->set = true;
	bw->line = c->line;
	snprintf(bw->text, sizeof(bw->text), "%s", v);
	if (len && v[len - 1] == '%') {
		uint64_t permille;

		/* Parse against a 100000 reference to validate the number only. */
		if (qos_parse_rate(v, 100000, &permille))
			return qos_parse_fail(c, key, "'%s' is not a share between 0%% and 100%%", v);
		bw->pct = true;
		bw->share = strtod(v, NULL);
		return 1;
	}
	if (qos_parse_rate(v, 0, &bw->bps))
		return qos_parse_fail(c, key, "'%s' is not a rate (e.g. 20%%, 10mbit, 1gbit)", v);
	return 1;
}

static int parse_dscp_list(struct parse_ctx *c, const char *key, const char *v,
			   uint64_t *set)
{
	char buf[INI_MAX_LINE];
	char *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", v);
	*set = 0;
	for (tok = strtok_r(buf, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		char *dash = strchr(tok, '-');
		uint8_t lo, hi;

		if (dash) {
			*dash = '\0';
			if (qos_parse_dscp(tok, &lo) || qos_parse_dscp(dash + 1, &hi) || lo > hi)
				return qos_parse_fail(c, key, "'%s-%s' is not a DSCP range within 0-63",
						      tok, dash + 1);
		} else if (qos_parse_dscp(tok, &lo)) {
			return qos_parse_fail(c, key, "'%s' is not a DSCP (0-63, ef, csN, afXY, le, va)",
					      tok);
		} else {
			hi = lo;
		}
		for (; lo <= hi; lo++)
			*set |= 1ULL << lo;
	}
	if (!*set)
		return qos_parse_fail(c, key, "empty DSCP list");
	return 1;
}

static int parse_leaf(const char *v, enum qos_leaf *leaf)
{
	static const struct {
		const char *name;
		enum qos_leaf leaf;
	} leaves[] = {
		{ "auto", QOS_LEAF_AUTO },
		{ "pfifo", QOS_LEAF_PFIFO },
		{ "bfifo", QOS_LEAF_BFIFO },
		{ "fq_codel", QOS_LEAF_FQ_CODEL },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(leaves); i++) {
		if (!strcmp(v, leaves[i].name)) {
			*leaf = leaves[i].leaf;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_yes_no(const char *v, bool *yes)
{
	*yes = !strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1");
	return *yes || !strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0") ? 0 : -EINVAL;
}

static const char *const tunnel_dscp_names[QOS_TUNNEL_MAX] = {
	[QOS_TUNNEL_AUTO] = "auto",
	[QOS_TUNNEL_OUTER] = "outer",
	[QOS_TUNNEL_INNER] = "inner",
};

int qos_tunnel_dscp_parse(const char *v, uint32_t *mode)
{
	uint32_t i;

	for (i = 0; i < QOS_TUNNEL_MAX; i++) {
		if (!strcmp(v, tunnel_dscp_names[i])) {
			*mode = i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *qos_tunnel_dscp_name(uint32_t mode)
{
	return mode < QOS_TUNNEL_MAX ? tunnel_dscp_names[mode] : "?";
}

int qos_queues_parse(const char *v, uint32_t *q)
{
	if (!strcmp(v, "auto")) {
		*q = QOS_QUEUES_AUTO;
		return 0;
	}
	if (qos_parse_u32(v, q) || !*q || *q > QOS_MAX_QUEUES)
		return -EINVAL;
	return 0;
}

/* The keys of reservations (qosctl reserve): 1 handled, fail()'s 0 on an
 * error, -1 when @key is not one of them. */
static int handle_reserve_key(struct parse_ctx *c, const char *key, const char *v)
{
	struct qos_profile *p = c->p;

	if (!strcmp(key, "reserve-class")) {
		snprintf(p->reserve_class, sizeof(p->reserve_class), "%s", v);
		p->reserve_line = c->line;
	} else if (!strcmp(key, "reserve-headroom")) {
		size_t n = strlen(v);
		char num[16];
		uint32_t pct;

		snprintf(num, sizeof(num), "%.*s", n > 1 && v[n - 1] == '%' ? (int)n - 1 : 0, v);
		if (n >= sizeof(num) || qos_parse_u32(num, &pct) || pct > 90)
			return qos_parse_fail(c, key, "'%s' is not a share of the class's ceiling (0%%-90%%)", v);
		p->reserve_headroom_pct = pct;
	} else if (!strcmp(key, "reserve-delay")) {
		uint64_t ns;

		if (qos_parse_time(v, &ns) || ns < 100000 || ns > 1000000000)
			return qos_parse_fail(c, key, "'%s' is not a delay from 100us to 1s", v);
		p->reserve_delay_ns = ns;
	} else if (!strcmp(key, "reserve-remark")) {
		uint8_t d;

		if (!strcmp(v, "none"))
			p->reserve_remark = 0;
		else if (qos_parse_dscp(v, &d))
			return qos_parse_fail(c, key, "'%s' is not none or a DSCP (ef, 46, ...)", v);
		else
			p->reserve_remark = QOS_REMARK_F | d;
	} else if (!strcmp(key, "reserve-exceed")) {
		if (!strcmp(v, "demote"))
			p->reserve_exceed = QOS_PA_DEMOTE;
		else if (!strcmp(v, "drop"))
			p->reserve_exceed = QOS_PA_DROP;
		else
			return qos_parse_fail(c, key, "'%s' is not demote or drop", v);
	} else {
		return -1;
	}
	return 1;
}

/* The keys of the link the tree shapes: queues, download shaping and the
 * link layer. As handle_reserve_key(). */
static int handle_link_key(struct parse_ctx *c, const char *key, const char *v)
{
	struct qos_profile *p = c->p;

	if (!strcmp(key, "queues")) {
		if (qos_queues_parse(v, &p->queues))
			return qos_parse_fail(c, key, "'%s' is not auto or a number of TX queues (1-%u)", v,
					      QOS_MAX_QUEUES);
		p->queues_line = c->line;
	} else if (!strcmp(key, "ingress-rate")) {
		if (qos_parse_rate(v, 0, &p->ingress_bps) || !p->ingress_bps)
			return qos_parse_fail(c, key, "'%s' is not a rate (e.g. 300mbit)", v);
		qos_profile_rate_check(p, c->line, key, v, p->ingress_bps, 0);
		p->ingress_line = c->line;
	} else if (!strcmp(key, "overhead") || !strcmp(key, "mpu") || !strcmp(key, "linklayer")) {
		char why[256];

		if (qos_ll_parse(&p->ll, key, v, why, sizeof(why)))
			return qos_parse_fail(c, key, "%s", why);
		p->ll.line = c->line;
	} else {
		return -1;
	}
	return 1;
}

static int handle_profile_key(struct parse_ctx *c, const char *key, const char *v)
{
	struct qos_profile *p = c->p;
	uint32_t u;

	if (!strcmp(key, "description")) {
		snprintf(p->description, sizeof(p->description), "%s", v);
	} else if (!strcmp(key, "scheduler")) {
		if (qos_sched_parse(v, &p->sched))
			return qos_parse_fail(c, key, "'%s' is not supported (htb, prio, tbf, none)", v);
		p->sched_line = c->line;
	} else if (!strcmp(key, "default")) {
		snprintf(p->default_class, sizeof(p->default_class), "%s", v);
		p->default_line = c->line;
	} else if (!strcmp(key, "mark-mask")) {
		if (qos_parse_u32_hex(v, &u) || !u)
			return qos_parse_fail(c, key, "'%s' is not a non-zero 32-bit mask", v);
		/* Contiguous, and wide enough for every class number. */
		if ((u >> __builtin_ctz(u)) & ((u >> __builtin_ctz(u)) + 1))
			return qos_parse_fail(c, key, "0x%08x is not a contiguous run of bits", u);
		if ((u >> __builtin_ctz(u)) < QOS_MAX_CLASSES - 1)
			return qos_parse_fail(c, key, "0x%08x is narrower than 4 bits", u);
		p->mark_mask = u;
	} else if (!strcmp(key, "handle")) {
		if (qos_parse_u32_hex(v, &u) || !u || u >= 0xffff)
			return qos_parse_fail(c, key, "'%s' is not a qdisc major number (1-0xfffe)", v);
		/* Leaf qdiscs take 0x11-0x1f (0x10 + class id). */
		if (u > 0x10 && u < 0x10 + QOS_MAX_CLASSES)
			return qos_parse_fail(c, key, "0x%x is taken by the leaf qdiscs (0x11-0x%x)", u,
					      0x10 + QOS_MAX_CLASSES - 1);
		p->handle_major = u;
	} else if (!strcmp(key, "rules")) {
		if (qos_parse_u32(v, &u) || u < 16)
			return qos_parse_fail(c, key, "'%s' is not a rule table size (16-%u)", v, QOS_RULES_MAX);
		/* Every rule installed has per-CPU hit counters: a full
		 * table of 2^24 would hold 256 MiB of them per CPU. */
		if (u > QOS_RULES_MAX)
			return qos_parse_fail(c, key,
				    "%u is above the ceiling of %u (each entry costs 16 bytes of hit counters per CPU)",
				    u, QOS_RULES_MAX);
		p->rule_entries = u;
	} else if (!strcmp(key, "leaf-delay")) {
		if (qos_parse_time(v, &p->leaf_delay_ns))
			return qos_parse_fail(c, key, "'%s' is not a time (e.g. 20ms)", v);
	} else if (!strcmp(key, "nd-class")) {
		snprintf(p->nd_class, sizeof(p->nd_class), "%s", v);
		p->nd_line = c->line;
	} else if (!strcmp(key, "non-ip-class")) {
		snprintf(p->nonip_class, sizeof(p->nonip_class), "%s", v);
		p->nonip_line = c->line;
	} else if (!strcmp(key, "ack-class")) {
		snprintf(p->ack_class, sizeof(p->ack_class), "%s", v);
		p->ack_line = c->line;
	} else if (!strcmp(key, "priority-max")) {
		return parse_bw(c, key, v, &p->priority_max);
	} else if (!strcmp(key, "wash")) {
		if (parse_yes_no(v, &p->wash))
			return qos_parse_fail(c, key, "'%s' is not yes or no", v);
		p->wash_line = c->line;
	} else if (!strcmp(key, "tunnel-dscp")) {
		if (qos_tunnel_dscp_parse(v, &p->tunnel_dscp))
			return qos_parse_fail(c, key, "'%s' is not auto, outer or inner", v);
	} else {
		int ret = handle_reserve_key(c, key, v);

		if (ret < 0)
			ret = handle_link_key(c, key, v);
		return ret >= 0 ? ret : qos_parse_fail(c, key, "unknown key in [profile]");
	}
	return 1;
}

/* The DSCPs a class takes and the one it rewrites to on egress: 1
 * handled, qos_parse_fail()'s 0 on an error, -1 when @key is not one of
 * them. */
static int handle_class_mark_key(struct parse_ctx *c, struct qos_class_spec *cl,
				 const char *key, const char *v)
{
	uint64_t set;

	if (!strcmp(key, "dscp") || !strcmp(key, "dscp4") || !strcmp(key, "dscp6")) {
		if (!parse_dscp_list(c, key, v, &set))
			return 0;
		/* "dscp" is the one template for both families; dscp4 and
		 * dscp6 add family-specific code points. */
		if (strcmp(key, "dscp6")) {
			cl->dscp[QOS_TABLE_IPV4] |= set;
			cl->dscp_line[QOS_TABLE_IPV4] = c->line;
		}
		if (strcmp(key, "dscp4")) {
			cl->dscp[QOS_TABLE_IPV6] |= set;
			cl->dscp_line[QOS_TABLE_IPV6] = c->line;
		}
	} else if (!strcmp(key, "egress-remark") || !strcmp(key, "egress-remark4") ||
		   !strcmp(key, "egress-remark6")) {
		uint8_t d;

		if (qos_parse_dscp(v, &d))
			return qos_parse_fail(c, key, "'%s' is not a DSCP (0-63, ef, csN, afXY, le, va)", v);
		if (strcmp(key, "egress-remark6"))
			cl->remark[QOS_TABLE_IPV4] = QOS_REMARK_F | d;
		if (strcmp(key, "egress-remark4"))
			cl->remark[QOS_TABLE_IPV6] = QOS_REMARK_F | d;
		cl->remark_line = c->line;
	} else {
		return -1;
	}
	return 1;
}

/* CBQ's vocabulary, mapped onto HTB by profile_check.c. As
 * handle_class_mark_key(). */
static int handle_class_cbq_key(struct parse_ctx *c, struct qos_class_spec *cl,
				const char *key, const char *v)
{
	uint32_t u;

	if (!strcmp(key, "bounded") || !strcmp(key, "isolated")) {
		bool yes;

		if (parse_yes_no(v, &yes))
			return qos_parse_fail(c, key, "'%s' is not yes or no", v);
		if (!strcmp(key, "bounded"))
			cl->bounded = yes;
		else
			cl->isolated = yes;
		cl->cbq_line = c->line;
	} else if (!strcmp(key, "maxburst")) {
		if (qos_parse_u32(v, &u) || !u || u > 10000)
			return qos_parse_fail(c, key, "'%s' is not a packet count (1-10000)", v);
		cl->maxburst = u;
		cl->cbq_line = c->line;
	} else {
		return -1;
	}
	return 1;
}

static int handle_class_key(struct parse_ctx *c, struct qos_class_spec *cl,
			    const char *key, const char *v)
{
	uint32_t u;

	if (!strcmp(key, "id")) {
		if (qos_parse_u32(v, &u) || u < 1 || u >= QOS_MAX_CLASSES)
			return qos_parse_fail(c, key, "'%s' is not a class number (1-%d)", v,
					      QOS_MAX_CLASSES - 1);
		cl->id = u;
		cl->id_line = c->line;
	} else if (!strcmp(key, "priority")) {
		if (qos_parse_u32(v, &u) || u > QOS_HTB_PRIO_MAX)
			return qos_parse_fail(c, key, "'%s' is not a priority (0-%d, 0 first)", v,
					      QOS_HTB_PRIO_MAX);
		cl->prio = u;
		cl->prio_line = c->line;
	} else if (!strcmp(key, "rate")) {
		return parse_bw(c, key, v, &cl->rate);
	} else if (!strcmp(key, "ceil")) {
		return parse_bw(c, key, v, &cl->ceil);
	} else if (!strcmp(key, "leaf")) {
		if (parse_leaf(v, &cl->leaf))
			return qos_parse_fail(c, key, "'%s' is not a leaf qdisc (auto, pfifo, bfifo, fq_codel)", v);
	} else if (!strcmp(key, "limit")) {
		if (qos_parse_u32(v, &u) || !u)
			return qos_parse_fail(c, key, "'%s' is not a queue limit (packets or bytes)", v);
		cl->limit = u;
		cl->limit_line = c->line;
	} else if (!strcmp(key, "burst")) {
		if (qos_parse_size(v, &cl->burst))
			return qos_parse_fail(c, key, "'%s' is not a size (e.g. 1514, 64kb)", v);
		cl->burst_line = c->line;
	} else if (!strncmp(key, "police-", 7)) {
		char msg[160];

		if (qos_police_parse_key(&cl->police, key, v, c->line, msg, sizeof(msg)))
			return qos_parse_fail(c, key, "%s", msg);
	} else {
		int ret = handle_class_mark_key(c, cl, key, v);

		if (ret < 0)
			ret = handle_class_cbq_key(c, cl, key, v);
		return ret >= 0 ? ret :
		       qos_parse_fail(c, key, "unknown key in [class %s]", cl->name);
	}
	return 1;
}

/* qos_profile_class(), writable: the class being read. */
static struct qos_class_spec *class_get(struct qos_profile *p, const char *name)
{
	const struct qos_class_spec *cl = qos_profile_class(p, name);

	return cl ? &p->classes[cl - p->classes] : NULL;
}

/* Keys of a [rule NAME] section; a section's keys arrive together, so the
 * rule being filled is the last one. */
static int handle_rule_key(struct parse_ctx *c, const char *name, const char *key, const char *v)
{
	struct qos_profile *p = c->p;
	struct qos_rule *r, nr;
	char msg[256], esc[QOS_ESC_LEN];

	if (!qos_name_ok(name, QOS_RULE_NAME_LEN - 1))
		return qos_parse_fail(c, key, "rule name '%s' must be 1-%d of " QOS_NAME_CHARS,
				      qos_esc(name, esc, sizeof(esc)), QOS_RULE_NAME_LEN - 1);
	if (!p->rules.n || strcmp(p->rules.r[p->rules.n - 1].name, name)) {
		qos_rule_init(&nr);
		snprintf(nr.name, sizeof(nr.name), "%s", name);
		nr.line = c->line;
		nr.profile = true;
		if (qos_rules_add(&p->rules, &nr))
			return qos_parse_fail(c, key, "out of memory");
	}
	r = &p->rules.r[p->rules.n - 1];
	if (!strcmp(key, "name"))
		return qos_parse_fail(c, key, "unknown key in [rule %s] (the section names the rule)", name);
	if (qos_rule_set(r, key, v, msg, sizeof(msg)))
		return qos_parse_fail(c, key, "%s", msg);
	if (!strcmp(key, "sport") || !strcmp(key, "dport"))
		r->port_line = c->line;
	if (!strcmp(key, "police"))
		r->police_line = c->line;
	return 1;
}

int qos_profile_key(struct parse_ctx *c, const char *section, const char *key, const char *v)
{
	struct qos_profile *p = c->p;
	struct qos_class_spec *cl;
	char esc[QOS_ESC_LEN];
	const char *name;

	if (!strcmp(section, "profile"))
		return handle_profile_key(c, key, v);
	if (!strncmp(section, "rule ", 5))
		return handle_rule_key(c, section + 5, key, v);
	if (strncmp(section, "class ", 6))
		return qos_parse_fail(c, key,
			    "unknown section [%s] (expected [profile], [class NAME] or [rule NAME])",
			    section);

	name = section + 6;
	if (!qos_name_ok(name, QOS_CLASS_NAME_LEN - 1))
		return qos_parse_fail(c, key, "class name '%s' must be 1-%d of " QOS_NAME_CHARS,
				      qos_esc(name, esc, sizeof(esc)), QOS_CLASS_NAME_LEN - 1);
	cl = class_get(p, name);
	if (!cl) {
		if (p->nclasses == ARRAY_SIZE(p->classes))
			return qos_parse_fail(c, key, "more than %zu classes", ARRAY_SIZE(p->classes));
		cl = &p->classes[p->nclasses++];
		snprintf(cl->name, sizeof(cl->name), "%s", name);
		cl->line = c->section_line;
		cl->prio = 1;
	}
	return handle_class_key(c, cl, key, v);
}
