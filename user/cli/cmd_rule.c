// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * qosctl rule add|del|list dev IFACE ...: live rules, changed through the
 * same transaction as an apply (txn/txn.c), so a rule reported as added is
 * in force, and parallel rule commands and applies serialise on the
 * device's lock.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "kernel/rulemap.h"
#include "lib/util.h"
#include "out/rules.h"
#include "txn/txn.h"

static int class_id(const struct qos_meta *meta, const char *name, uint32_t *id)
{
	uint32_t i;

	for (i = 0; i < meta->nclasses && i < QOS_MAX_CLASSES; i++) {
		if (!strcmp(meta->classes[i].name, name)) {
			*id = meta->classes[i].id;
			return 0;
		}
	}
	return -ENOENT;
}

/* "KEY VALUE ..." words into @r: keys of the rule command being run. */
static int parse_words(int argc, char **argv, struct qos_rule *r, char *err, size_t errlen)
{
	char msg[256], name[32];
	int i;

	for (i = 0; i < argc; i += 2) {
		if (!cli_word(cli_cur, argv[i]) || !strcmp(argv[i], "dev") ||
		    !strcmp(argv[i], "id")) {
			cli_unknown_key(cli_cur, cli_cmd_name(cli_cur, name, sizeof(name)), argv[i]);
			return ERR_SHOWN;
		}
		if (i + 1 >= argc || !*argv[i + 1]) {
			snprintf(err, errlen, "'%s' needs a value", argv[i]);
			return -EINVAL;
		}
		if (qos_rule_set(r, argv[i], argv[i + 1], msg, sizeof(msg))) {
			snprintf(err, errlen, "%s: %s", argv[i], msg);
			return -EINVAL;
		}
	}
	return 0;
}

int cli_open_rules(struct qos_dev *dev, const char *name, struct qos_rules *cur, bool lock,
		      char *err, size_t errlen)
{
	struct qos_rule_maps m;
	int ret;

	ret = lock ? qos_txn_open(dev, name, 0, err, errlen) :
		     qos_txn_open_read(dev, name, err, errlen);
	if (ret)
		return ret;
	if (!dev->applied || !dev->have_cfg) {
		snprintf(err, errlen, "dev %s: no qosctl profile applied", name);
		qos_txn_close(dev);
		return -ENOENT;
	}
	m = qos_rule_maps_of(&dev->cur);
	ret = qos_rules_read(&m, cur, !lock);
	if (ret) {
		snprintf(err, errlen, "dev %s: reading the rules: %s", name, strerror(-ret));
		qos_txn_close(dev);
	}
	return ret;
}

static int rule_add(const char *name, int argc, char **argv, char *err, size_t errlen)
{
	const char *key;
	char msg[256];
	uint32_t demote = 0;
	struct qos_rules cur = {};
	struct qos_dev dev;
	struct qos_rule r;
	int ret;

	qos_rule_init(&r);
	ret = parse_words(argc, argv, &r, err, errlen);
	if (!ret && qos_rule_check(&r, &key, msg, sizeof(msg))) {
		snprintf(err, errlen, "%s: %s", key, msg);
		ret = -EINVAL;
	}
	ret = ret ?: cli_open_rules(&dev, name, &cur, true, err, errlen);
	if (ret)
		return ret;
	if (class_id(&dev.cfg.meta, r.class_name, &r.class_id)) {
		snprintf(err, errlen, "class: profile %s on %s has no class '%s'",
			 dev.cfg.meta.profile, name, r.class_name);
		ret = -ENOENT;
		goto out;
	}
	if (r.police_act.type == QOS_PA_DEMOTE &&
	    class_id(&dev.cfg.meta, r.police_demote, &demote)) {
		snprintf(err, errlen, "action: profile %s on %s has no class '%s'",
			 dev.cfg.meta.profile, name, r.police_demote);
		ret = -ENOENT;
		goto out;
	}
	r.police_act.arg = r.police_act.type == QOS_PA_DEMOTE ? demote : r.police_act.arg;
	ret = qos_rules_add(&cur, &r);
	ret = ret ?: qos_txn_rules(&dev, &cur, err, errlen);
out:
	qos_rules_free(&cur);
	qos_txn_close(&dev);
	return ret;
}

static bool rule_hit(const struct qos_rule *e, int argc, char **argv, uint32_t id,
		     const struct qos_rule *r)
{
	if (id)
		return e->id == id;
	if (argc == 2 && !strcmp(argv[0], "name"))
		return !strcmp(e->name, r->name);
	return qos_rule_same_match(e, r);
}

static int rule_del(const char *name, int argc, char **argv, char *err, size_t errlen)
{
	struct qos_rules cur = {};
	struct qos_dev dev;
	struct qos_rule r;
	uint32_t id = 0;
	size_t i;
	int ret;

	qos_rule_init(&r);
	if (argc == 2 && !strcmp(argv[0], "id")) {
		if (qos_parse_u32(argv[1], &id) || !id) {
			snprintf(err, errlen, "id: '%s' is not a rule id", argv[1]);
			return -EINVAL;
		}
	} else if (argc == 2 && !strcmp(argv[0], "name")) {
		snprintf(r.name, sizeof(r.name), "%s", argv[1]);
	} else {
		if (!argc) {
			snprintf(err, errlen, "say which rule: id N, name NAME, or its match");
			return -EINVAL;
		}
		ret = parse_words(argc, argv, &r, err, errlen);
		if (ret)
			return ret;
	}
	ret = cli_open_rules(&dev, name, &cur, true, err, errlen);
	if (ret)
		return ret;
	for (i = 0; i < cur.n && !rule_hit(&cur.r[i], argc, argv, id, &r); i++)
		;
	if (i == cur.n) {
		snprintf(err, errlen, "dev %s: no such rule", name);
		ret = -ENOENT;
		goto out;
	}
	memmove(&cur.r[i], &cur.r[i + 1], (cur.n - i - 1) * sizeof(cur.r[0]));
	cur.n--;
	ret = qos_txn_rules(&dev, &cur, err, errlen);
out:
	qos_rules_free(&cur);
	qos_txn_close(&dev);
	return ret;
}

static int rule_list(const char *name, int argc, char **argv, char *err, size_t errlen)
{
	struct qos_rules_view view;
	struct qos_rules cur = {};
	struct qos_dev dev;
	int ret;

	if (argc) {
		cli_unknown_key(cli_cur, "rule list", argv[0]);
		return ERR_SHOWN;
	}
	ret = cli_open_rules(&dev, name, &cur, false, err, errlen);
	if (ret)
		return ret;
	ret = qos_rules_view_read(&view, &cur, &dev.cfg.meta, &dev.cur);
	if (!ret) {
		ret = qos_rules_print(stdout, &view, opt.json);
		qos_rules_view_free(&view);
	}
	qos_rules_free(&cur);
	qos_dev_close(&dev);
	if (ret)
		snprintf(err, errlen, "%s", strerror(-ret));
	return ret;
}

int cli_on_dev(int argc, char **argv,
	       int (*fn)(const char *name, int argc, char **argv, char *err, size_t errlen))
{
	char err[512], cmd[32];
	int ret;

	cli_cmd_name(cli_cur, cmd, sizeof(cmd));
	if (argc < 2 || strcmp(argv[0], "dev") || !*argv[1]) {
		qos_err("%s: missing 'dev IFACE'", cmd);
		return -EINVAL;
	}
	ret = fn(argv[1], argc - 2, argv + 2, err, sizeof(err));
	if (ret < 0)
		qos_err("%s: %s", cmd, err);
	return ret ? -1 : 0;
}

int do_rule_add(int argc, char **argv)
{
	return cli_on_dev(argc, argv, rule_add);
}

int do_rule_del(int argc, char **argv)
{
	return cli_on_dev(argc, argv, rule_del);
}

int do_rule_list(int argc, char **argv)
{
	return cli_on_dev(argc, argv, rule_list);
}
