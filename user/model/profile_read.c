// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The profile reader: INI files read with libinih, line by line, so that
 * every error names its line; each key goes to profile_keys.c, the whole
 * profile to profile_check.c. See Documentation/profiles.rst for the
 * format.
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

#include "lib/util.h"
#include "model/profile.h"
#include "model/profile_int.h"
#include "model/profile_path.h"

#define QOS_DEFAULT_MARK_MASK	0x000f0000U
#define QOS_DEFAULT_HANDLE	1
#define QOS_DEFAULT_LEAF_DELAY	(20ULL * 1000 * 1000)	/* 20 ms */

/* A [section] header, kept to refuse a second one of the same name, which
 * libinih would merge into the first without a word. */
struct section_seen {
	int line;
	char name[];
};

int qos_parse_fail(struct parse_ctx *c, const char *key, const char *fmt, ...)
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
		qos_parse_fail(c, label, "out of memory");
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
		qos_parse_fail(c, label, "repeated; first at line %d", first->line);
	else
		qos_parse_fail(c, label, "out of memory");
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
		qos_parse_fail(c, "line", "longer than %d bytes, the most a profile line may have",
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
			return qos_parse_fail(c, key, "repeated in [%s]; first at line %d", section,
					      c->keys[i].line);
		if (!dscp_list_key(key))
			return qos_parse_fail(c, key,
				    "continues the value of line %d; only a DSCP list goes on over lines",
				    c->keys[i].line);
		return 1;
	}
	if (c->nkeys == ARRAY_SIZE(c->keys))
		return qos_parse_fail(c, key, "more than %zu keys in [%s]", ARRAY_SIZE(c->keys), section);
	snprintf(c->keys[c->nkeys].name, sizeof(c->keys[0].name), "%s", key);
	c->keys[c->nkeys++].line = c->line;
	return 1;
}

static int handler(void *user, const char *section, const char *key, const char *v)
{
	struct parse_ctx *c = user;

	c->in_key = true;
	if (c->failed || !key_once(c, section, key))
		return 0;
	return qos_profile_key(c, section, key, v);
}

/* What a profile that does not say otherwise holds. */
static void profile_defaults(struct qos_profile *p)
{
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
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

int qos_profile_load(const char *name, struct qos_profile *p, char *err, size_t errlen)
{
	struct parse_ctx c = { .p = p, .err = err, .errlen = errlen };
	const char *base;
	int ret;

	profile_defaults(p);
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
	return qos_profile_check(p, err, errlen);
}
