// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * qosctl domain: the DiffServ domain on etcd (Documentation/domain.rst).
 * load declares it, reserve admits a reservation along its path, status
 * reads back what the brokers and the agents wrote. The work is in
 * user/domain/, the output in user/out/domain.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "cli/cli.h"
#include "domain/broker.h"
#include "lib/util.h"
#include "out/domain.h"

int cli_etcd_open(struct qos_etcd **e)
{
	struct qos_etcd_tls tls = { opt.etcd_ca, opt.etcd_cert, opt.etcd_key };
	char err[512];
	int ret;

	if ((opt.etcd_cert || opt.etcd_key) && !(opt.etcd_cert && opt.etcd_key)) {
		qos_err("--etcd-cert and --etcd-key go together");
		return -EINVAL;
	}
	ret = qos_etcd_open(e, opt.etcd, &tls, err, sizeof(err));
	if (ret) {
		qos_err("%s", err);
		return ret;
	}
	qos_etcd_set_timeout(*e, opt.etcd_timeout_ms);
	return 0;
}

/* The domain file @path, checked whole and resolved, into @d. */
static int read_domain_file(const char *path, struct qos_domain *d, char *err, size_t errlen)
{
	json_object *root;
	struct stat st;
	int ret;

	if (!stat(path, &st) && st.st_size > QOS_DOM_FILE_MAX) {
		snprintf(err, errlen, "%s: %lld bytes, more than the %u a file may have", path,
			 (long long)st.st_size, QOS_DOM_FILE_MAX);
		return -EFBIG;
	}
	root = json_object_from_file(path);
	if (!root) {
		snprintf(err, errlen, "%s: %s", path, json_util_get_last_err() ?: "not JSON");
		return -EINVAL;
	}
	ret = qos_domain_parse(root, path, d, err, errlen);
	json_object_put(root);
	ret = ret ?: qos_domain_resolve(d, path, err, errlen);
	if (ret)
		qos_domain_free(d);
	return ret;
}

int do_domain_load(int argc, char **argv)
{
	struct qos_load_res r = {};
	struct qos_domain d = {};
	struct qos_etcd *e = NULL;
	struct qos_pr *p;
	char err[1024];
	int ret;

	if (argc != 1 || !*argv[0]) {
		qos_err("domain load: give one FILE");
		return -EINVAL;
	}
	ret = read_domain_file(argv[0], &d, err, sizeof(err));
	if (ret) {
		qos_err("domain load: %s: nothing written", err);
		return ret;
	}
	ret = cli_etcd_open(&e);
	if (!ret) {
		ret = qos_broker_load(e, &d, &r, err, sizeof(err));
		if (ret == -ETIMEDOUT)
			qos_err("domain load: %s: whether it was written is unknown; load the "
				"file again (the same file writes nothing twice)", err);
		else if (ret)
			qos_err("domain load: %s: nothing written", err);
	}
	if (!ret) {
		p = qos_pr_open(stdout, opt.json);
		if (p)
			qos_out_domain_load(p, argv[0], &r);
		ret = p ? qos_pr_close(p) : -ENOMEM;
	}
	qos_etcd_close(e);
	qos_domain_free(&d);
	return ret;
}

/* The words of `domain reserve add` into @q. */
static int parse_add(int argc, char **argv, struct qos_broker_req *q)
{
	struct qos_reserve_req tmp;
	char why[256];
	int i;

	memset(q, 0, sizeof(*q));
	for (i = 0; i < argc; i += 2) {
		const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!cli_word(cli_cur, k) || !strcmp(k, "add") || !strcmp(k, "del")) {
			cli_unknown_key(cli_cur, "domain reserve add", k);
			return -EINVAL;
		}
		if (!v || !*v) {
			qos_err("domain reserve add: '%s' needs a value", k);
			return -EINVAL;
		}
		if (!strcmp(k, "id")) {
			if (!qos_name_ok(v, QOS_NAME_MAX)) {
				qos_err("domain reserve add: id: 1-%d of %s", QOS_NAME_MAX,
					QOS_NAME_CHARS);
				return -EINVAL;
			}
			q->id = v;
		} else if (!strcmp(k, "for")) {
			if (qos_reserve_req_set(&tmp, k, v, why, sizeof(why))) {
				qos_err("domain reserve add: %s", why);
				return -EINVAL;
			}
			q->for_ns = tmp.for_ns;
		} else if (q->nargs == ARRAY_SIZE(q->args)) {
			qos_err("domain reserve add: too many keys");
			return -E2BIG;
		} else {
			q->args[q->nargs][0] = k;
			q->args[q->nargs++][1] = v;
		}
	}
	return 0;
}

static int reserve_add(struct qos_etcd *e, int argc, char **argv)
{
	struct qos_broker_req q;
	json_object *resv = NULL;
	struct qos_pr *p;
	char err[1024];
	int ret;

	ret = parse_add(argc, argv, &q);
	if (ret)
		return ret;
	ret = qos_broker_reserve(e, &q, &resv, err, sizeof(err));
	if (ret) {
		qos_err("domain reserve add: %s", err);
		return ret;
	}
	p = qos_pr_open(stdout, opt.json);
	if (p)
		qos_out_domain_resv(p, resv, NULL);
	ret = p ? qos_pr_close(p) : -ENOMEM;
	json_object_put(resv);
	return ret;
}

static int reserve_del(struct qos_etcd *e, int argc, char **argv)
{
	char err[1024];
	int ret;

	if (argc != 2 || strcmp(argv[0], "id") || !*argv[1]) {
		qos_err("domain reserve del: give 'id NAME'");
		return -EINVAL;
	}
	ret = qos_broker_release(e, argv[1], err, sizeof(err));
	if (ret)
		qos_err("domain reserve del: %s", err);
	else if (!opt.json)
		printf("reservation %s: deleted\n", argv[1]);
	return ret;
}

/* What status and reserve list print, from one read. */
static int print_view(struct qos_etcd *e, const char *cmd, bool status)
{
	struct qos_dom_view v;
	struct qos_pr *p;
	char err[1024];
	int ret;

	ret = qos_broker_view(e, &v, err, sizeof(err));
	if (ret) {
		qos_err("%s: %s", cmd, err);
		return ret;
	}
	p = qos_pr_open(stdout, opt.json);
	if (p && status)
		qos_out_domain_status(p, &v);
	else if (p)
		qos_out_domain_resv_list(p, &v);
	ret = p ? qos_pr_close(p) : -ENOMEM;
	qos_dom_view_free(&v);
	return ret;
}

int do_domain_reserve(int argc, char **argv)
{
	struct qos_etcd *e;
	int ret;

	if (!argc || (strcmp(argv[0], "add") && strcmp(argv[0], "del") &&
		      strcmp(argv[0], "list"))) {
		qos_err("domain reserve: %s '%s' (add, del or list)",
			argc ? "unknown command" : "missing command", argc ? argv[0] : "");
		return -EINVAL;
	}
	if (!strcmp(argv[0], "list") && argc > 1) {
		qos_err("domain reserve list: takes no words");
		return -EINVAL;
	}
	ret = cli_etcd_open(&e);
	if (ret)
		return ret;
	if (!strcmp(argv[0], "add"))
		ret = reserve_add(e, argc - 1, argv + 1);
	else if (!strcmp(argv[0], "del"))
		ret = reserve_del(e, argc - 1, argv + 1);
	else
		ret = print_view(e, "domain reserve list", false);
	qos_etcd_close(e);
	return ret;
}

int do_domain_status(int argc, char **argv)
{
	struct qos_etcd *e;
	int ret;

	if (argc) {
		qos_err("domain status: takes no words");
		return -EINVAL;
	}
	ret = cli_etcd_open(&e);
	if (ret)
		return ret;
	ret = print_view(e, "domain status", true);
	qos_etcd_close(e);
	return ret;
}
