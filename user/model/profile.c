// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Profile parser: INI files read with libinih. See Documentation/profiles.rst
 * for the format.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <search.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "model/profile.h"
#include "lib/names.h"
#include "lib/util.h"
#include "qos_paths.h"

#define QOS_DEFAULT_MARK_MASK	0x000f0000U
#define QOS_DEFAULT_HANDLE	1
#define QOS_DEFAULT_LEAF_DELAY	(20ULL * 1000 * 1000)	/* 20 ms */
#define QOS_HTB_PRIO_MAX	7

struct parse_ctx {
	struct qos_profile *p;
	FILE *f;
	int line;		/* line being handled, counted by our reader */
	int section_line;	/* line of the last [section] header */
	char *err;
	size_t errlen;
	bool failed;
	void *sections;		/* tsearch() tree of struct section_seen */
	bool in_key;		/* a key was given since the header: libinih's prev_name */
	bool continued;		/* the line continues the value of that key */
	unsigned int nkeys;
	struct {
		char name[64];	/* libinih cuts names at 49 characters */
		int line;
	} keys[64];		/* of the current section; none has half as many */
};

/* A [section] header, kept to refuse a second one of the same name, which
 * libinih would merge into the first without a word. */
struct section_seen {
	int line;
	char name[];
};

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static int fail(struct parse_ctx *c, const char *key, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	if (c->failed)
		return 0;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(c->err, c->errlen, "%s:%d: %s: %s", c->p->path, c->line, key, msg);
	c->failed = true;
	return 0;
}

static int section_cmp(const void *a, const void *b)
{
	return strcmp(((const struct section_seen *)a)->name,
		      ((const struct section_seen *)b)->name);
}

/*
 * A header line, @s just after its '['. libinih takes the name up to the
 * ']', unless an inline comment (a ';' after a space) comes first, which
 * it reports as a syntax error.
 */
static void section_header(struct parse_ctx *c, const char *s)
{
	const struct section_seen *first;
	struct section_seen *sec;
	char label[INI_MAX_LINE + 2];
	bool space = false;
	const char *end;
	void **node;

	for (end = s; *end && *end != ']' && !(space && *end == ';'); end++)
		space = isspace((unsigned char)*end);
	if (*end != ']')
		return;
	/* Errors about a whole section (a missing key) point at its header. */
	c->section_line = c->line;
	c->in_key = false;
	c->nkeys = 0;
	snprintf(label, sizeof(label), "[%.*s]", (int)(end - s), s);
	sec = malloc(sizeof(*sec) + (end - s) + 1);
	if (!sec) {
		fail(c, label, "out of memory");
		return;
	}
	sec->line = c->line;
	memcpy(sec->name, s, end - s);
	sec->name[end - s] = '\0';
	node = tsearch(sec, &c->sections, section_cmp);
	first = node ? *node : NULL;
	if (first == sec)
		return;
	if (first)
		fail(c, label, "repeated; first at line %d", first->line);
	else
		fail(c, label, "out of memory");
	free(sec);
}

/*
 * Reader handed to ini_parse_stream(): fgets() that counts lines, so the
 * handler knows the line of the key it is given, and sees the section
 * headers libinih does not report. A line is sorted as libinih sorts it:
 * blank or comment; indented after a key, the continuation of that key's
 * value; a header; a key.
 */
static char *read_line(char *buf, int size, void *stream)
{
	struct parse_ctx *c = stream;
	char *s = fgets(buf, size, c->f);
	const char *start = s;
	int next;

	if (!s)
		return NULL;
	c->line++;
	/* libinih reads at most @size - 1 bytes a line and takes the rest
	 * as a line of its own: a long comment's tail would become a key.
	 * Refuse the line, and end the parse. */
	if (!strchr(s, '\n') && (next = getc(c->f)) != EOF) {
		ungetc(next, c->f);
		fail(c, "line", "longer than %d bytes, the most a profile line may have",
		     size - 2);
		return NULL;
	}
	if (c->line == 1 && !strncmp(start, "\xef\xbb\xbf", 3))
		start += 3;
	while (isspace((unsigned char)*start))
		start++;
	c->continued = false;
	if (!*start || *start == ';' || *start == '#')
		return s;
	if (c->in_key && start > s)
		c->continued = true;
	else if (*start == '[')
		section_header(c, start + 1);
	return s;
}

static bool dscp_list_key(const char *key)
{
	return !strcmp(key, "dscp") || !strcmp(key, "dscp4") || !strcmp(key, "dscp6");
}

/*
 * A key given twice in one section: libinih hands both to the handler, and
 * the second would silently replace the first. libinih also hands over
 * each indented line that continues a value as the same key again: a
 * class's DSCP lists add it up, any other value would lose its first line.
 */
static int key_once(struct parse_ctx *c, const char *section, const char *key)
{
	unsigned int i;

	for (i = 0; i < c->nkeys; i++) {
		if (strcmp(c->keys[i].name, key))
			continue;
		if (!c->continued)
			return fail(c, key, "repeated in [%s]; first at line %d", section,
				    c->keys[i].line);
		if (!dscp_list_key(key))
			return fail(c, key,
				    "continues the value of line %d; only a DSCP list goes on over lines",
				    c->keys[i].line);
		return 1;
	}
	if (c->nkeys == ARRAY_SIZE(c->keys))
		return fail(c, key, "more than %zu keys in [%s]", ARRAY_SIZE(c->keys), section);
	snprintf(c->keys[c->nkeys].name, sizeof(c->keys[0].name), "%s", key);
	c->keys[c->nkeys++].line = c->line;
	return 1;
}

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
			return fail(c, key, "'%s' is not a share between 0%% and 100%%", v);
		bw->pct = true;
		bw->share = strtod(v, NULL);
		return 1;
	}
	if (qos_parse_rate(v, 0, &bw->bps))
		return fail(c, key, "'%s' is not a rate (e.g. 20%%, 10mbit, 1gbit)", v);
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
				return fail(c, key, "'%s-%s' is not a DSCP range within 0-63",
					    tok, dash + 1);
		} else if (qos_parse_dscp(tok, &lo)) {
			return fail(c, key, "'%s' is not a DSCP (0-63, ef, csN, afXY, le, va)",
				    tok);
		} else {
			hi = lo;
		}
		for (; lo <= hi; lo++)
			*set |= 1ULL << lo;
	}
	if (!*set)
		return fail(c, key, "empty DSCP list");
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
			return fail(c, key, "'%s' is not a share of the class's ceiling (0%%-90%%)", v);
		p->reserve_headroom_pct = pct;
	} else if (!strcmp(key, "reserve-delay")) {
		uint64_t ns;

		if (qos_parse_time(v, &ns) || ns < 100000 || ns > 1000000000)
			return fail(c, key, "'%s' is not a delay from 100us to 1s", v);
		p->reserve_delay_ns = ns;
	} else if (!strcmp(key, "reserve-remark")) {
		uint8_t d;

		if (!strcmp(v, "none"))
			p->reserve_remark = 0;
		else if (qos_parse_dscp(v, &d))
			return fail(c, key, "'%s' is not none or a DSCP (ef, 46, ...)", v);
		else
			p->reserve_remark = QOS_REMARK_F | d;
	} else if (!strcmp(key, "reserve-exceed")) {
		if (!strcmp(v, "demote"))
			p->reserve_exceed = QOS_PA_DEMOTE;
		else if (!strcmp(v, "drop"))
			p->reserve_exceed = QOS_PA_DROP;
		else
			return fail(c, key, "'%s' is not demote or drop", v);
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
			return fail(c, key, "'%s' is not auto or a number of TX queues (1-%u)", v,
				    QOS_MAX_QUEUES);
		p->queues_line = c->line;
	} else if (!strcmp(key, "ingress-rate")) {
		if (qos_parse_rate(v, 0, &p->ingress_bps) || !p->ingress_bps)
			return fail(c, key, "'%s' is not a rate (e.g. 300mbit)", v);
		qos_profile_rate_check(p, c->line, key, v, p->ingress_bps, 0);
		p->ingress_line = c->line;
	} else if (!strcmp(key, "overhead") || !strcmp(key, "mpu") || !strcmp(key, "linklayer")) {
		char why[256];

		if (qos_ll_parse(&p->ll, key, v, why, sizeof(why)))
			return fail(c, key, "%s", why);
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
			return fail(c, key, "'%s' is not supported (htb, prio, tbf, none)", v);
		p->sched_line = c->line;
	} else if (!strcmp(key, "default")) {
		snprintf(p->default_class, sizeof(p->default_class), "%s", v);
		p->default_line = c->line;
	} else if (!strcmp(key, "mark-mask")) {
		if (qos_parse_u32_hex(v, &u) || !u)
			return fail(c, key, "'%s' is not a non-zero 32-bit mask", v);
		/* Contiguous, and wide enough for every class number. */
		if ((u >> __builtin_ctz(u)) & ((u >> __builtin_ctz(u)) + 1))
			return fail(c, key, "0x%08x is not a contiguous run of bits", u);
		if ((u >> __builtin_ctz(u)) < QOS_MAX_CLASSES - 1)
			return fail(c, key, "0x%08x is narrower than 4 bits", u);
		p->mark_mask = u;
	} else if (!strcmp(key, "handle")) {
		if (qos_parse_u32_hex(v, &u) || !u || u >= 0xffff)
			return fail(c, key, "'%s' is not a qdisc major number (1-0xfffe)", v);
		/* Leaf qdiscs take 0x11-0x1f (0x10 + class id). */
		if (u > 0x10 && u < 0x10 + QOS_MAX_CLASSES)
			return fail(c, key, "0x%x is taken by the leaf qdiscs (0x11-0x%x)", u,
				    0x10 + QOS_MAX_CLASSES - 1);
		p->handle_major = u;
	} else if (!strcmp(key, "rules")) {
		if (qos_parse_u32(v, &u) || u < 16)
			return fail(c, key, "'%s' is not a rule table size (16-%u)", v, QOS_RULES_MAX);
		/* Every rule installed has per-CPU hit counters: a full
		 * table of 2^24 would hold 256 MiB of them per CPU. */
		if (u > QOS_RULES_MAX)
			return fail(c, key,
				    "%u is above the ceiling of %u (each entry costs 16 bytes of hit counters per CPU)",
				    u, QOS_RULES_MAX);
		p->rule_entries = u;
	} else if (!strcmp(key, "leaf-delay")) {
		if (qos_parse_time(v, &p->leaf_delay_ns))
			return fail(c, key, "'%s' is not a time (e.g. 20ms)", v);
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
			return fail(c, key, "'%s' is not yes or no", v);
		p->wash_line = c->line;
	} else if (!strcmp(key, "tunnel-dscp")) {
		if (qos_tunnel_dscp_parse(v, &p->tunnel_dscp))
			return fail(c, key, "'%s' is not auto, outer or inner", v);
	} else {
		int ret = handle_reserve_key(c, key, v);

		if (ret < 0)
			ret = handle_link_key(c, key, v);
		return ret >= 0 ? ret : fail(c, key, "unknown key in [profile]");
	}
	return 1;
}

static int handle_class_key(struct parse_ctx *c, struct qos_class_spec *cl,
			    const char *key, const char *v)
{
	uint64_t set;
	uint32_t u;

	if (!strcmp(key, "id")) {
		if (qos_parse_u32(v, &u) || u < 1 || u >= QOS_MAX_CLASSES)
			return fail(c, key, "'%s' is not a class number (1-%d)", v,
				    QOS_MAX_CLASSES - 1);
		cl->id = u;
		cl->id_line = c->line;
	} else if (!strcmp(key, "priority")) {
		if (qos_parse_u32(v, &u) || u > QOS_HTB_PRIO_MAX)
			return fail(c, key, "'%s' is not a priority (0-%d, 0 first)", v,
				    QOS_HTB_PRIO_MAX);
		cl->prio = u;
		cl->prio_line = c->line;
	} else if (!strcmp(key, "rate")) {
		return parse_bw(c, key, v, &cl->rate);
	} else if (!strcmp(key, "ceil")) {
		return parse_bw(c, key, v, &cl->ceil);
	} else if (!strcmp(key, "dscp") || !strcmp(key, "dscp4") || !strcmp(key, "dscp6")) {
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
	} else if (!strcmp(key, "leaf")) {
		if (parse_leaf(v, &cl->leaf))
			return fail(c, key, "'%s' is not a leaf qdisc (auto, pfifo, bfifo, fq_codel)", v);
	} else if (!strcmp(key, "limit")) {
		if (qos_parse_u32(v, &u) || !u)
			return fail(c, key, "'%s' is not a queue limit (packets or bytes)", v);
		cl->limit = u;
		cl->limit_line = c->line;
	} else if (!strcmp(key, "burst")) {
		if (qos_parse_size(v, &cl->burst))
			return fail(c, key, "'%s' is not a size (e.g. 1514, 64kb)", v);
		cl->burst_line = c->line;
	} else if (!strncmp(key, "police-", 7)) {
		char msg[160];

		if (qos_police_parse_key(&cl->police, key, v, c->line, msg, sizeof(msg)))
			return fail(c, key, "%s", msg);
	} else if (!strcmp(key, "egress-remark") || !strcmp(key, "egress-remark4") ||
		   !strcmp(key, "egress-remark6")) {
		uint8_t d;

		if (qos_parse_dscp(v, &d))
			return fail(c, key, "'%s' is not a DSCP (0-63, ef, csN, afXY, le, va)", v);
		if (strcmp(key, "egress-remark6"))
			cl->remark[QOS_TABLE_IPV4] = QOS_REMARK_F | d;
		if (strcmp(key, "egress-remark4"))
			cl->remark[QOS_TABLE_IPV6] = QOS_REMARK_F | d;
		cl->remark_line = c->line;
	} else if (!strcmp(key, "bounded") || !strcmp(key, "isolated")) {
		bool yes;

		if (parse_yes_no(v, &yes))
			return fail(c, key, "'%s' is not yes or no", v);
		if (!strcmp(key, "bounded"))
			cl->bounded = yes;
		else
			cl->isolated = yes;
		cl->cbq_line = c->line;
	} else if (!strcmp(key, "maxburst")) {
		if (qos_parse_u32(v, &u) || !u || u > 10000)
			return fail(c, key, "'%s' is not a packet count (1-10000)", v);
		cl->maxburst = u;
		cl->cbq_line = c->line;
	} else {
		return fail(c, key, "unknown key in [class %s]", cl->name);
	}
	return 1;
}

static struct qos_class_spec *class_by_name(struct qos_profile *p, const char *name)
{
	unsigned int i;

	for (i = 0; i < p->nclasses; i++)
		if (!strcmp(p->classes[i].name, name))
			return &p->classes[i];
	return NULL;
}

/* Keys of a [rule NAME] section; a section's keys arrive together, so the
 * rule being filled is the last one. */
static int handle_rule_key(struct parse_ctx *c, const char *name, const char *key, const char *v)
{
	struct qos_profile *p = c->p;
	struct qos_rule *r, nr;
	char msg[256], esc[QOS_ESC_LEN];

	if (!qos_name_ok(name, QOS_RULE_NAME_LEN - 1))
		return fail(c, key, "rule name '%s' must be 1-%d of " QOS_NAME_CHARS,
			    qos_esc(name, esc, sizeof(esc)), QOS_RULE_NAME_LEN - 1);
	if (!p->rules.n || strcmp(p->rules.r[p->rules.n - 1].name, name)) {
		qos_rule_init(&nr);
		snprintf(nr.name, sizeof(nr.name), "%s", name);
		nr.line = c->line;
		nr.profile = true;
		if (qos_rules_add(&p->rules, &nr))
			return fail(c, key, "out of memory");
	}
	r = &p->rules.r[p->rules.n - 1];
	if (!strcmp(key, "name"))
		return fail(c, key, "unknown key in [rule %s] (the section names the rule)", name);
	if (qos_rule_set(r, key, v, msg, sizeof(msg)))
		return fail(c, key, "%s", msg);
	if (!strcmp(key, "sport") || !strcmp(key, "dport"))
		r->port_line = c->line;
	if (!strcmp(key, "police"))
		r->police_line = c->line;
	return 1;
}

static int handler(void *user, const char *section, const char *key, const char *v)
{
	struct parse_ctx *c = user;
	struct qos_profile *p = c->p;
	struct qos_class_spec *cl;
	char esc[QOS_ESC_LEN];
	const char *name;

	c->in_key = true;
	if (c->failed || !key_once(c, section, key))
		return 0;
	if (!strcmp(section, "profile"))
		return handle_profile_key(c, key, v);
	if (!strncmp(section, "rule ", 5))
		return handle_rule_key(c, section + 5, key, v);
	if (strncmp(section, "class ", 6))
		return fail(c, key,
			    "unknown section [%s] (expected [profile], [class NAME] or [rule NAME])",
			    section);

	name = section + 6;
	if (!qos_name_ok(name, QOS_CLASS_NAME_LEN - 1))
		return fail(c, key, "class name '%s' must be 1-%d of " QOS_NAME_CHARS,
			    qos_esc(name, esc, sizeof(esc)), QOS_CLASS_NAME_LEN - 1);
	cl = class_by_name(p, name);
	if (!cl) {
		if (p->nclasses == ARRAY_SIZE(p->classes))
			return fail(c, key, "more than %zu classes", ARRAY_SIZE(p->classes));
		cl = &p->classes[p->nclasses++];
		snprintf(cl->name, sizeof(cl->name), "%s", name);
		cl->line = c->section_line;
		cl->prio = 1;
	}
	return handle_class_key(c, cl, key, v);
}

int qos_profile_dirs(int (*fn)(const char *dir, const char *origin, void *arg), void *arg)
{
	/* The installed qosctl never looks into a build tree: only the
	 * in-tree one defines qos_tree_profile_dir (user/intree.c). */
	const struct {
		const char *env;
		const char *dirs;
		const char *origin;
	} src[] = {
		{ "QOSCTL_PROFILE_DIR", NULL, "QOSCTL_PROFILE_DIR" },
		{ NULL, QOS_SYSCONFDIR "/qosctl/profiles", "local" },
		{ NULL, QOS_DATADIR "/tc-profiles", "built-in" },
		{ NULL, qos_tree_profile_dir, "built-in" },
	};
	size_t i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(src); i++) {
		const char *list = src[i].env ? getenv(src[i].env) : src[i].dirs;
		char *d, *save = NULL, buf[PATH_MAX];

		if (!list || strlen(list) >= sizeof(buf))
			continue;
		snprintf(buf, sizeof(buf), "%s", list);
		for (d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
			ret = fn(d, src[i].origin, arg);
			if (ret)
				return ret;
		}
	}
	return 0;
}

struct find_ctx {
	const char *name;
	char *path;
	size_t len;
};

static int find_in(const char *dir, const char *origin, void *arg)
{
	struct find_ctx *c = arg;

	if ((size_t)snprintf(c->path, c->len, "%s/%s", dir, c->name) >= c->len)
		return 0;
	return !access(c->path, R_OK);
}

int qos_profile_find(const char *name, char *path, size_t len)
{
	struct find_ctx c = { name, path, len };

	if (!*name || strlen(name) >= len)
		return -EINVAL;
	if (strchr(name, '/')) {
		snprintf(path, len, "%s", name);
		return access(path, R_OK) ? -errno : 0;
	}
	return qos_profile_dirs(find_in, &c) ? 0 : -ENOENT;
}

void qos_profile_rate_check(const struct qos_profile *p, int line, const char *key,
			    const char *v, uint64_t bps, uint64_t link_bps)
{
	char where[PATH_MAX + 64];

	snprintf(where, sizeof(where), "%s:%d: %s:", p->path, line, key);
	qos_rate_check(where, v, bps, link_bps);
}

static void bw_check(const struct qos_profile *p, const struct qos_bw *bw, const char *key,
		     uint64_t bps, uint64_t link_bps)
{
	qos_profile_rate_check(p, bw->line, key, bw->text, bps, bw->pct ? link_bps : 0);
}

int qos_profile_errf(char *err, size_t len, const struct qos_profile *p, int line,
		     const char *key, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(err, len, "%s:%d: %s: %s", p->path, line, key, msg);
	return -EINVAL;
}

/* Classes exist, the set fits the table and the data path. Names are
 * unique: they are section names, and a section comes once. */
static int check_rules(struct qos_profile *p, char *err, size_t len)
{
	char msg[400];
	size_t i, bad = 0;
	int ret;

	for (i = 0; i < p->rules.n; i++) {
		struct qos_rule *r = &p->rules.r[i];
		const struct qos_class_spec *cl;
		const char *key;

		if (qos_rule_check(r, &key, msg, sizeof(msg)))
			return qos_profile_errf(err, len, p,
				    key[0] == 'c' || key[0] == 'b' || key[0] == 'a' ? r->line :
				    r->port_line, key, "[rule %s]: %s", r->name, msg);
		cl = qos_profile_class(p, r->class_name);
		if (!cl)
			return qos_profile_errf(err, len, p, r->line, "class", "[rule %s]: no class named '%s'",
				    r->name, r->class_name);
		r->class_id = cl->id;
		if (r->police_act.type != QOS_PA_DEMOTE)
			continue;
		cl = qos_profile_class(p, r->police_demote);
		if (!cl)
			return qos_profile_errf(err, len, p, r->police_line ?: r->line, "action",
				    "[rule %s]: no class named '%s'", r->name, r->police_demote);
		r->police_act.arg = cl->id;
	}
	ret = qos_rules_validate(&p->rules, p->rule_entries, &bad, msg, sizeof(msg));
	if (ret)
		return qos_profile_errf(err, len, p, bad < p->rules.n ? p->rules.r[bad].line : 1, "rule", "%s",
			    msg);
	return 0;
}

static int check_profile(struct qos_profile *p, char *err, size_t len)
{
	uint64_t seen[QOS_TABLE_MAX] = {};
	unsigned int i, j;
	int t, ret;

	if (!p->nclasses)
		return qos_profile_errf(err, len, p, 1, "class", "the profile defines no [class NAME]");
	if (!p->default_class[0])
		return qos_profile_errf(err, len, p, 1, "default",
			    "[profile] must name the default class (default = NAME)");
	if (!qos_profile_class(p, p->default_class))
		return qos_profile_errf(err, len, p, p->default_line, "default",
			    "no class named '%s'", p->default_class);

	for (i = 0; i < p->nclasses; i++) {
		const struct qos_class_spec *cl = &p->classes[i];

		if (!cl->id)
			return qos_profile_errf(err, len, p, cl->line, "id",
				    "[class %s] has no id (the class number in the mark)",
				    cl->name);
		if (!cl->rate.set && p->sched != QOS_SCHED_NONE)
			return qos_profile_errf(err, len, p, cl->line, "rate", "[class %s] has no rate",
				    cl->name);
		for (j = 0; j < i; j++)
			if (p->classes[j].id == cl->id)
				return qos_profile_errf(err, len, p, cl->id_line, "id",
					    "class %s has the same id as class %s", cl->name,
					    p->classes[j].name);
		if (cl->rate.set && cl->ceil.set && cl->rate.pct == cl->ceil.pct &&
		    (cl->rate.pct ? cl->rate.share > cl->ceil.share : cl->rate.bps > cl->ceil.bps))
			return qos_profile_errf(err, len, p, cl->ceil.line, "ceil",
				    "[class %s] ceil is below its rate", cl->name);
		for (t = 0; t < QOS_TABLE_MAX; t++) {
			uint64_t dup = seen[t] & cl->dscp[t];

			if (dup)
				return qos_profile_errf(err, len, p, cl->dscp_line[t], t ? "dscp6" : "dscp4",
					    "DSCP %d of class %s is already in another class",
					    __builtin_ctzll(dup), cl->name);
			seen[t] |= cl->dscp[t];
		}
	}
	ret = check_rules(p, err, len);
	return ret ?: qos_police_check(p, err, len);
}

int qos_profile_load(const char *name, struct qos_profile *p, char *err, size_t errlen)
{
	struct parse_ctx c = { .p = p, .err = err, .errlen = errlen };
	const char *base;
	int ret;

	memset(p, 0, sizeof(*p));
	p->mark_mask = QOS_DEFAULT_MARK_MASK;
	p->handle_major = QOS_DEFAULT_HANDLE;
	p->leaf_delay_ns = QOS_DEFAULT_LEAF_DELAY;
	qos_ll_spec_init(&p->ll);
	p->sched = QOS_SCHED_HTB;
	p->rule_entries = QOS_RULES_DEFAULT;
	p->reserve_headroom_pct = QOS_RESERVE_HEADROOM_DEFAULT;
	p->reserve_delay_ns = QOS_RESERVE_DELAY_DEFAULT_NS;
	p->reserve_exceed = QOS_PA_DEMOTE;
	p->queues = 1;

	ret = qos_profile_find(name, p->path, sizeof(p->path));
	if (ret) {
		snprintf(err, errlen, "profile '%s': %s", name,
			 ret == -ENOENT ? "no such profile (see 'qosctl list')" : strerror(-ret));
		return ret;
	}
	base = base_name(p->path);
	snprintf(p->name, sizeof(p->name), "%.*s", (int)strcspn(base, "."), base);

	c.f = fopen(p->path, "r");
	if (!c.f) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", p->path, strerror(errno));
		return ret;
	}
	ret = ini_parse_stream(read_line, &c, handler, &c);
	fclose(c.f);
	tdestroy(c.sections, free);
	if (c.failed)
		return -EINVAL;
	if (ret) {
		snprintf(err, errlen, "%s:%d: syntax error (expected [section] or key = value)",
			 p->path, ret);
		return -EINVAL;
	}
	return check_profile(p, err, errlen) ?: qos_profile_check_ext(p, err, errlen);
}

void qos_profile_free(struct qos_profile *p)
{
	qos_rules_free(&p->rules);
}

const struct qos_class_spec *qos_profile_class(const struct qos_profile *p, const char *name)
{
	unsigned int i;

	for (i = 0; i < p->nclasses; i++)
		if (!strcmp(p->classes[i].name, name))
			return &p->classes[i];
	return NULL;
}

static uint64_t bw_resolve(const struct qos_bw *bw, uint64_t link)
{
	if (bw->pct)
		return (uint64_t)((double)link * bw->share / 100.0 + 0.5);
	return bw->bps;
}

int qos_profile_resolve(const struct qos_profile *p, uint64_t link_bps, uint32_t mtu,
			struct qos_class_plan *plan, char *err, size_t errlen)
{
	uint64_t sum = 0;
	unsigned int i;
	char a[32], b[32];

	for (i = 0; i < p->nclasses; i++) {
		const struct qos_class_spec *cl = &p->classes[i];
		struct qos_class_plan *pl = &plan[i];

		memset(pl, 0, sizeof(*pl));
		pl->spec = cl;
		if (cl->police.set &&
		    qos_police_resolve(p, cl, link_bps, mtu, &pl->police, err, errlen))
			return -EINVAL;
		/* Without a qdisc tree, rates have nothing to shape. */
		if (p->sched == QOS_SCHED_NONE)
			continue;
		pl->rate_bps = bw_resolve(&cl->rate, link_bps);
		pl->ceil_bps = cl->ceil.set ? bw_resolve(&cl->ceil, link_bps) : link_bps;
		if (!pl->rate_bps)
			return qos_profile_errf(err, errlen, p, cl->rate.line, "rate",
				    "[class %s] rate rounds to 0 at link rate %s", cl->name,
				    qos_fmt_rate(link_bps, a, sizeof(a)));
		if (pl->rate_bps > link_bps)
			return qos_profile_errf(err, errlen, p, cl->rate.line, "rate",
				    "[class %s] rate %s exceeds the link rate %s", cl->name,
				    qos_fmt_rate(pl->rate_bps, a, sizeof(a)),
				    qos_fmt_rate(link_bps, b, sizeof(b)));
		if (pl->ceil_bps > link_bps)
			return qos_profile_errf(err, errlen, p, cl->ceil.line, "ceil",
				    "[class %s] ceil %s exceeds the link rate %s", cl->name,
				    qos_fmt_rate(pl->ceil_bps, a, sizeof(a)),
				    qos_fmt_rate(link_bps, b, sizeof(b)));
		if (pl->ceil_bps < pl->rate_bps)
			return qos_profile_errf(err, errlen, p, cl->ceil.set ? cl->ceil.line : cl->rate.line,
				    "ceil", "[class %s] ceil %s is below its rate %s", cl->name,
				    qos_fmt_rate(pl->ceil_bps, a, sizeof(a)),
				    qos_fmt_rate(pl->rate_bps, b, sizeof(b)));
		/* Warnings once the rates are resolved: a profile is parsed
		 * also where none is due (list, the name check). */
		bw_check(p, &cl->rate, "rate", pl->rate_bps, link_bps);
		if (cl->ceil.set && cl->ceil.line != cl->rate.line)	/* not a copy */
			bw_check(p, &cl->ceil, "ceil", pl->ceil_bps, link_bps);
		sum += pl->rate_bps;
		if (sum > link_bps + p->nclasses)	/* allow per-class rounding */
			return qos_profile_errf(err, errlen, p, cl->rate.line, "rate",
				    "guaranteed rates add up to %s, more than the link rate %s",
				    qos_fmt_rate(sum, a, sizeof(a)),
				    qos_fmt_rate(link_bps, b, sizeof(b)));
	}
	return qos_profile_check_shares(p, plan, link_bps, err, errlen);
}

/*
 * The maps of bpf/lib/maps.h as the kernel (6.x) allocates them. An array
 * element is its value rounded up to 8 bytes; a per-CPU one is that on
 * every possible CPU plus an 8-byte pointer to it. A hash has 16-byte
 * buckets, a power of two of them; without preallocation each element is
 * a separate allocation of a 48-byte header, the key and the value each
 * rounded up to 8, and an 8-byte free-list node, from the kmalloc cache
 * that fits: 144 bytes from kmalloc-192 for a rule (bpftool's "memlock"
 * counts the 144, /proc/slabinfo shows the 192). A per-CPU hash element
 * holds an 8-byte pointer for its value, which is allocated apart on every
 * possible CPU, with a 16-byte holder (pointer and free-list node) of its
 * own. Map headers (under 1 KiB each) are left out.
 */
#define KERN_HTAB_BUCKET	16
#define KERN_HTAB_ELEM_HDR	48
#define KERN_LLIST_NODE		8

static uint64_t round8(uint64_t n)
{
	return (n + 7) & ~7ULL;
}

/* kmalloc's size classes: powers of two from 8 bytes, and 96 and 192. */
static uint64_t kmalloc_size(uint64_t n)
{
	uint64_t s = 8;

	if (n > 64 && n <= 96)
		return 96;
	if (n > 128 && n <= 192)
		return 192;
	while (s < n)
		s <<= 1;
	return s;
}

static uint64_t array_bytes(uint64_t entries, size_t value)
{
	return entries * round8(value);
}

static uint64_t percpu_array_bytes(uint64_t entries, size_t value, int ncpus)
{
	return entries * (sizeof(void *) + round8(value) * ncpus);
}

static uint64_t buckets_bytes(uint64_t entries)
{
	uint64_t buckets = 1;

	while (buckets < entries)
		buckets <<= 1;
	return buckets * KERN_HTAB_BUCKET;
}

static uint64_t hash_bytes(uint64_t entries, size_t key, size_t value)
{
	return buckets_bytes(entries) +
	       entries * kmalloc_size(KERN_HTAB_ELEM_HDR + round8(key) + round8(value) +
				      KERN_LLIST_NODE);
}

static uint64_t percpu_hash_bytes(uint64_t entries, size_t key, size_t value, int ncpus)
{
	return buckets_bytes(entries) +
	       entries * (kmalloc_size(KERN_HTAB_ELEM_HDR + round8(key) + sizeof(void *) +
				       KERN_LLIST_NODE) +
			  KERN_LLIST_NODE + sizeof(void *) + round8(value) * ncpus);
}

uint64_t qos_mem_bytes(uint32_t rule_entries, int ncpus, struct qos_profile_mem *mem)
{
	struct qos_profile_mem m;

	/* Two tables (IPv4 entries under a shorter key) with their entries'
	 * sum limited: the buckets of both, the elements of the larger. */
	m.rule_hash = hash_bytes(rule_entries, sizeof(struct qos_rule_key),
				 sizeof(struct qos_rule_val)) +
		      buckets_bytes(rule_entries);
	m.rule_stats = percpu_hash_bytes(rule_entries, sizeof(uint32_t), sizeof(struct qos_ctr),
					 ncpus);
	/* Every rule with a policer of its own, as a reservation has. */
	m.rule_police = hash_bytes(rule_entries, sizeof(uint32_t), sizeof(struct qos_rule_policer));
	m.counters = percpu_array_bytes(QOS_STATS_ENTRIES + QOS_UNPARSED_ENTRIES,
					sizeof(struct qos_ctr), ncpus) +
		     percpu_array_bytes(QOS_POLICER_RULE_FIRST, sizeof(struct qos_police_ctrs),
					ncpus);
	/* The configuration: the qos_cfg array-of-maps slot (an 8-byte
	 * pointer) and the one-entry array it holds. */
	m.other = array_bytes(1, sizeof(uint64_t)) + array_bytes(1, sizeof(struct qos_cfg)) +
		  array_bytes(QOS_POLICER_RULE_FIRST, sizeof(struct qos_policer));
	if (mem)
		*mem = m;
	return m.rule_hash + m.rule_stats + m.rule_police + m.counters + m.other;
}

void qos_profile_fill_cfg(const struct qos_profile *p, struct qos_cfg *cfg)
{
	const struct qos_class_spec *def = qos_profile_class(p, p->default_class);
	unsigned int i, t, d;

	memset(cfg, 0, sizeof(*cfg));
	cfg->mark_mask = p->mark_mask;
	cfg->mark_shift = __builtin_ctz(p->mark_mask);
	cfg->default_class = def->id;
	if (p->wash)
		cfg->flags |= QOS_CFG_F_WASH;
	cfg->tunnel_dscp = p->tunnel_dscp;
	for (t = 0; t < QOS_TABLE_MAX; t++)
		for (d = 0; d < QOS_DSCP_MAX; d++)
			cfg->dscp_class[t][d] = def->id;
	for (i = 0; i < p->nclasses; i++) {
		const struct qos_class_spec *cl = &p->classes[i];

		if (p->sched != QOS_SCHED_NONE)
			cfg->classid[cl->id] = qos_profile_classid(p, cl);
		if (cl->police.set)
			cfg->class_policer[cl->id] = cl->id;
		for (t = 0; t < QOS_TABLE_MAX; t++)
			cfg->egress_remark[t][cl->id] = cl->remark[t];
		for (t = 0; t < QOS_TABLE_MAX; t++)
			for (d = 0; d < QOS_DSCP_MAX; d++)
				if (cl->dscp[t] & (1ULL << d))
					cfg->dscp_class[t][d] = cl->id;
	}
	if (p->nd_class[0])
		cfg->nd_class = qos_profile_class(p, p->nd_class)->id;
	if (p->nonip_class[0])
		cfg->nonip_class = qos_profile_class(p, p->nonip_class)->id;
	if (p->ack_class[0])
		cfg->ack_class = qos_profile_class(p, p->ack_class)->id;
}
