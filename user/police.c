// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Policers: profile keys, resolution into struct qos_policer with the
 * arithmetic of bpf/lib/tb.h, installation in the pinned qos_policers map,
 * and their part of `show` and `stats`.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "loader.h"
#include "police.h"
#include "profile.h"
#include "report.h"
#include "util.h"

const char *const qos_color_names[TB_COLOR_MAX] = { "green", "yellow", "red" };
static const char *const act_keys[TB_COLOR_MAX] = { "police-conform", "police-exceed",
						    "police-violate" };

/* RFC 2597 drop precedence: AFx2 arrive yellow, AFx3 red, the rest green. */
#define AF_DP2	((1ULL << 12) | (1ULL << 20) | (1ULL << 28) | (1ULL << 36))
#define AF_DP3	((1ULL << 14) | (1ULL << 22) | (1ULL << 30) | (1ULL << 38))

static int msgf(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int parse_size(const char *v, bool zero_ok, int line, struct qos_police_size *sz)
{
	sz->line = line;
	if (!strcmp(v, "auto")) {
		sz->kind = QOS_PSZ_AUTO;
		return 0;
	}
	if (zero_ok && !strcmp(v, "0")) {
		sz->kind = QOS_PSZ_BYTES;
		sz->v = 0;
		return 0;
	}
	if (!qos_parse_time(v, &sz->v)) {
		sz->kind = QOS_PSZ_TIME;
		return 0;
	}
	if (!qos_parse_size(v, &sz->v)) {
		sz->kind = QOS_PSZ_BYTES;
		return 0;
	}
	return -EINVAL;
}

static int parse_action(const char *v, int line, struct qos_police_act_spec *a)
{
	uint8_t dscp;

	memset(a, 0, sizeof(*a));
	a->set = true;
	a->line = line;
	if (!strcmp(v, "pass")) {
		a->act.type = QOS_PA_PASS;
	} else if (!strcmp(v, "drop")) {
		a->act.type = QOS_PA_DROP;
	} else if (!strncmp(v, "remark:", 7) && !qos_parse_dscp(v + 7, &dscp)) {
		a->act.type = QOS_PA_REMARK;
		a->act.arg = dscp;
	} else if (!strncmp(v, "demote:", 7) && v[7] &&
		   strlen(v + 7) < sizeof(a->demote)) {
		a->act.type = QOS_PA_DEMOTE;
		snprintf(a->demote, sizeof(a->demote), "%s", v + 7);
	} else {
		return -EINVAL;
	}
	return 0;
}

static int parse_dscps(const char *v, uint64_t *set)
{
	char buf[256];
	char *tok, *save = NULL;
	uint8_t d;

	if ((size_t)snprintf(buf, sizeof(buf), "%s", v) >= sizeof(buf))
		return -EINVAL;
	*set = 0;
	for (tok = strtok_r(buf, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		if (!strcmp(tok, "none"))
			continue;
		if (qos_parse_dscp(tok, &d))
			return -EINVAL;
		*set |= 1ULL << d;
	}
	return 0;
}

int qos_police_parse_key(struct qos_police_spec *ps, const char *key, const char *v, int line,
			 char *msg, size_t msglen)
{
	const char *k = key + strlen("police-");
	uint64_t bps;
	int c;

	if (!strcmp(k, "rate") || !strcmp(k, "peak-rate")) {
		bool peak = k[0] == 'p';

		/* A share is checked against a stand-in link here and
		 * resolved against the real one at apply time. */
		if (strlen(v) >= sizeof(ps->rate) || qos_parse_rate(v, 1000000000000ULL, &bps))
			return msgf(msg, msglen, "'%s' is not a rate (e.g. 20%%, 10mbit)", v);
		snprintf(peak ? ps->peak_rate : ps->rate, sizeof(ps->rate), "%s", v);
		if (peak) {
			ps->peak_line = line;
		} else {
			ps->set = true;
			ps->line = line;
		}
	} else if (!strcmp(k, "burst") || !strcmp(k, "excess-burst") ||
		   !strcmp(k, "peak-burst")) {
		struct qos_police_size *sz = k[0] == 'b' ? &ps->burst :
					     k[0] == 'e' ? &ps->excess_burst : &ps->peak_burst;

		if (parse_size(v, sz == &ps->excess_burst, line, sz))
			return msgf(msg, msglen,
				    "'%s' is not a burst (auto, bytes such as 64kb, or a time such as 10ms)",
				    v);
	} else if (!strcmp(k, "mode")) {
		if (!strcmp(v, "srtcm"))
			ps->mode = TB_SRTCM;
		else if (!strcmp(v, "trtcm"))
			ps->mode = TB_TRTCM;
		else
			return msgf(msg, msglen, "'%s' is not a mode (srtcm, trtcm)", v);
		ps->mode_line = line;
	} else if (!strcmp(k, "color") || !strcmp(k, "colour")) {
		if (strcmp(v, "blind") && strcmp(v, "aware"))
			return msgf(msg, msglen, "'%s' is not blind or aware", v);
		ps->aware = !strcmp(v, "aware");
	} else if (!strcmp(k, "yellow-dscp") || !strcmp(k, "red-dscp")) {
		c = k[0] == 'y' ? TB_YELLOW : TB_RED;
		if (parse_dscps(v, &ps->pre_dscp[c]))
			return msgf(msg, msglen,
				    "'%s' is not a DSCP list (0-63, afXY, csN, ef, ..., or none)", v);
		ps->pre_line[c] = line;
	} else {
		for (c = 0; c < TB_COLOR_MAX; c++)
			if (!strcmp(key, act_keys[c]))
				break;
		if (c == TB_COLOR_MAX)
			return msgf(msg, msglen, "unknown police key");
		if (parse_action(v, line, &ps->act[c]))
			return msgf(msg, msglen,
				    "'%s' is not an action (pass, drop, remark:DSCP, demote:CLASS)",
				    v);
	}
	return 0;
}

int qos_police_check(const struct qos_profile *p, char *err, size_t errlen)
{
	unsigned int i;
	int c;

	for (i = 0; i < p->nclasses; i++) {
		const struct qos_class_spec *cl = &p->classes[i];
		const struct qos_police_spec *ps = &cl->police;
		bool tr = ps->mode == TB_TRTCM;

		if (!ps->set) {
			int line = ps->mode_line ?: ps->burst.line ?: ps->peak_line ?:
				   ps->act[TB_GREEN].line ?: ps->act[TB_YELLOW].line ?:
				   ps->act[TB_RED].line;

			if (line)
				return qos_profile_errf(err, errlen, p, line, "police-rate",
					    "[class %s] has police keys but no police-rate",
					    cl->name);
			continue;
		}
		if (tr && !ps->peak_rate[0])
			return qos_profile_errf(err, errlen, p, ps->mode_line, "police-peak-rate",
				    "[class %s] trtcm needs a police-peak-rate", cl->name);
		if (!tr && (ps->peak_rate[0] || ps->peak_burst.kind))
			return qos_profile_errf(err, errlen, p, ps->peak_line ?: ps->peak_burst.line,
				    "police-peak-rate",
				    "[class %s] peak rate and burst need police-mode = trtcm",
				    cl->name);
		if (tr && ps->excess_burst.kind)
			return qos_profile_errf(err, errlen, p, ps->excess_burst.line, "police-excess-burst",
				    "[class %s] an excess burst needs police-mode = srtcm",
				    cl->name);
		for (c = 0; c < TB_COLOR_MAX; c++) {
			const struct qos_police_act_spec *a = &ps->act[c];
			const struct qos_class_spec *to;

			if (!a->set || a->act.type != QOS_PA_DEMOTE)
				continue;
			to = qos_profile_class(p, a->demote);
			if (!to)
				return qos_profile_errf(err, errlen, p, a->line, act_keys[c],
					    "no class named '%s'", a->demote);
			if (to == cl)
				return qos_profile_errf(err, errlen, p, a->line, act_keys[c],
					    "class %s cannot be demoted to itself", cl->name);
		}
	}
	return 0;
}

/* A bucket's size in bytes at @rate. */
static int size_bytes(const struct qos_police_size *sz, uint64_t rate, uint64_t dflt,
		      uint64_t *bytes)
{
	switch (sz->kind) {
	case QOS_PSZ_UNSET:
		*bytes = dflt;
		return 0;
	case QOS_PSZ_BYTES:
		*bytes = sz->v;
		break;
	case QOS_PSZ_TIME:
		/* rate x time is a whole number of nanobits. */
		if (sz->v > TB_BURST_MAX * TB_NBITS_PER_BYTE / rate)
			return -ERANGE;
		*bytes = tb_div_up(rate * sz->v, TB_NBITS_PER_BYTE);
		if (*bytes < QOS_POLICE_MIN_FRAME)
			*bytes = QOS_POLICE_MIN_FRAME;
		break;
	default:
		*bytes = tb_auto_burst(rate, QOS_POLICE_MIN_FRAME);
		break;
	}
	return *bytes > TB_BURST_MAX ? -ERANGE : 0;
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	/* The clock bpf_ktime_get_ns() reads. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * TB_NS_PER_SEC + ts.tv_nsec;
}

int qos_police_resolve(const struct qos_profile *p, const struct qos_class_spec *cl,
		       uint64_t link_bps, struct qos_policer *pol, char *err, size_t errlen)
{
	const struct qos_police_spec *ps = &cl->police;
	uint64_t cir = 0, pir = 0, cbs, ebs;
	char a[32], b[32];
	int c;

	memset(pol, 0, sizeof(*pol));
	if (qos_parse_rate(ps->rate, link_bps, &cir) || cir < TB_RATE_MIN || cir > TB_RATE_MAX)
		return qos_profile_errf(err, errlen, p, ps->line, "police-rate",
			    "[class %s] '%s' is %s at link rate %s, outside 1kbit to 1000gbit",
			    cl->name, ps->rate, qos_fmt_rate(cir, a, sizeof(a)),
			    qos_fmt_rate(link_bps, b, sizeof(b)));
	if (size_bytes(&ps->burst, cir, tb_auto_burst(cir, QOS_POLICE_MIN_FRAME), &cbs))
		return qos_profile_errf(err, errlen, p, ps->burst.line, "police-burst",
			    "[class %s] burst exceeds %llu bytes", cl->name, TB_BURST_MAX);
	if (ps->mode == TB_TRTCM) {
		if (qos_parse_rate(ps->peak_rate, link_bps, &pir) || pir < cir ||
		    pir > TB_RATE_MAX)
			return qos_profile_errf(err, errlen, p, ps->peak_line, "police-peak-rate",
				    "[class %s] '%s' is not between police-rate and 1000gbit",
				    cl->name, ps->peak_rate);
		if (size_bytes(&ps->peak_burst, pir, tb_auto_burst(pir, QOS_POLICE_MIN_FRAME),
			       &ebs))
			return qos_profile_errf(err, errlen, p, ps->peak_burst.line, "police-peak-burst",
				    "[class %s] burst exceeds %llu bytes", cl->name,
				    TB_BURST_MAX);
	} else if (size_bytes(&ps->excess_burst, cir, 0, &ebs)) {
		return qos_profile_errf(err, errlen, p, ps->excess_burst.line, "police-excess-burst",
			    "[class %s] burst exceeds %llu bytes", cl->name, TB_BURST_MAX);
	}
	if (tb_params_init(&pol->tb, ps->mode, cir, cbs, pir, ebs))
		return qos_profile_errf(err, errlen, p, ps->line, "police-rate",
			    "[class %s] policer parameters out of range", cl->name);
	tb_state_init(&pol->tb, &pol->st, monotonic_ns());

	if (ps->aware) {
		pol->flags |= QOS_POLICE_F_AWARE;
		pol->pre_yellow = ps->pre_line[TB_YELLOW] ? ps->pre_dscp[TB_YELLOW] : AF_DP2;
		pol->pre_red = ps->pre_line[TB_RED] ? ps->pre_dscp[TB_RED] : AF_DP3;
		pol->pre_yellow &= ~pol->pre_red;
	}
	/* Conform passes; exceed drops; violate does what exceed does, so
	 * a two-colour policer needs one action. */
	pol->act[TB_GREEN].type = QOS_PA_PASS;
	pol->act[TB_YELLOW].type = QOS_PA_DROP;
	for (c = 0; c < TB_COLOR_MAX; c++) {
		const struct qos_police_act_spec *as = &ps->act[c];

		if (as->set)
			pol->act[c] = as->act;
		else if (c == TB_RED)
			pol->act[c] = pol->act[TB_YELLOW];
		if (as->set && as->act.type == QOS_PA_DEMOTE)
			pol->act[c].arg = qos_profile_class(p, as->demote)->id;
	}
	return 0;
}

/* Everything but the lock and the buckets. */
static bool same_config(const struct qos_policer *a, const struct qos_policer *b)
{
	return !memcmp(&a->tb, &b->tb, sizeof(a->tb)) && a->flags == b->flags &&
	       a->pre_yellow == b->pre_yellow && a->pre_red == b->pre_red &&
	       !memcmp(a->act, b->act, sizeof(a->act));
}

int qos_police_install(int fd, const struct qos_policer pol[QOS_MAX_CLASSES],
		       struct qos_policer saved[QOS_MAX_CLASSES])
{
	uint32_t id;

	memset(saved, 0, sizeof(*saved) * QOS_MAX_CLASSES);
	for (id = 1; id < QOS_MAX_CLASSES; id++)
		if (bpf_map_lookup_elem_flags(fd, &id, &saved[id], BPF_F_LOCK))
			return -errno;

	for (id = 1; id < QOS_MAX_CLASSES; id++) {
		struct qos_policer v = pol[id];
		const struct qos_policer *old = &saved[id];

		if (v.tb.cir && old->tb.cir) {
			if (same_config(&v, old))
				continue;
			/* Keep the tokens: the old buckets carried forward to
			 * now, then cut to the new sizes. Packets policed
			 * between the read above and this write are not
			 * charged: microseconds of traffic, at apply only. */
			v.st = old->st;
			v.tb = old->tb;
			tb_reconfig(&v.tb, &v.st, &pol[id].tb, monotonic_ns());
		} else if (!v.tb.cir && !old->tb.cir) {
			continue;
		}
		if (bpf_map_update_elem(fd, &id, &v, BPF_F_LOCK)) {
			int err = -errno;

			qos_police_restore(fd, saved);
			return err;
		}
	}
	return 0;
}

void qos_police_restore(int fd, const struct qos_policer saved[QOS_MAX_CLASSES])
{
	uint32_t id;

	for (id = 1; id < QOS_MAX_CLASSES; id++)
		bpf_map_update_elem(fd, &id, &saved[id], BPF_F_LOCK);
}

int qos_police_read(const char *ifname, uint32_t idx, struct qos_police_report *r)
{
	int ncpu = libbpf_num_possible_cpus();
	char dir[200], path[256];
	struct qos_ctr *vals;
	int fd, sfd, f, c, i, err = 0;

	memset(r, 0, sizeof(*r));
	r->idx = idx;
	if (ncpu < 0)
		return ncpu;
	err = qos_pin_dir(ifname, dir, sizeof(dir));
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/qos_policers", dir);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/qos_police_stats", dir);
	sfd = bpf_obj_get(path);
	if (sfd < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals) {
		err = -ENOMEM;
		goto out;
	}
	if (bpf_map_lookup_elem_flags(fd, &idx, &r->pol, BPF_F_LOCK)) {
		err = -errno;
		goto out;
	}
	r->set = r->pol.tb.cir != 0;
	for (f = 0; f < QOS_FAM_MAX; f++)
		for (c = 0; c < TB_COLOR_MAX; c++) {
			uint32_t key = qos_police_stats_key(idx, f, c);

			if (bpf_map_lookup_elem(sfd, &key, vals)) {
				err = -errno;
				goto out;
			}
			for (i = 0; i < ncpu; i++) {
				r->ctr[f][c].packets += vals[i].packets;
				r->ctr[f][c].bytes += vals[i].bytes;
			}
		}
out:
	free(vals);
	close(sfd);
	close(fd);
	return err;
}

static const char *act_str(const struct qos_police_action *a,
			   const char *const class_names[QOS_MAX_CLASSES], char *buf, size_t len)
{
	const char *name;

	switch (a->type) {
	case QOS_PA_DROP:
		return "drop";
	case QOS_PA_REMARK:
		snprintf(buf, len, "remark:%u", a->arg);
		return buf;
	case QOS_PA_DEMOTE:
		name = class_names[a->arg & (QOS_MAX_CLASSES - 1)];
		if (name)
			snprintf(buf, len, "demote:%s", name);
		else
			snprintf(buf, len, "demote:%u", a->arg);
		return buf;
	default:
		return "pass";
	}
}

static uint64_t nb_bytes(uint64_t nb)
{
	return nb / TB_NBITS_PER_BYTE;
}

void qos_police_print_config(FILE *f, const struct qos_policer *pol,
			     const char *const class_names[QOS_MAX_CLASSES])
{
	bool tr = pol->tb.mode == TB_TRTCM;
	char a[32], b[32];
	int c;

	fprintf(f, "police %s %s cir %s cbs %llub", tr ? "trtcm" : "srtcm",
		pol->flags & QOS_POLICE_F_AWARE ? "aware" : "blind",
		qos_fmt_rate(pol->tb.cir, a, sizeof(a)), (unsigned long long)nb_bytes(pol->tb.cbs));
	if (tr)
		fprintf(f, " pir %s pbs %llub", qos_fmt_rate(pol->tb.pir, b, sizeof(b)),
			(unsigned long long)nb_bytes(pol->tb.ebs));
	else
		fprintf(f, " ebs %llub", (unsigned long long)nb_bytes(pol->tb.ebs));
	for (c = 0; c < TB_COLOR_MAX; c++)
		fprintf(f, " %s %s", act_keys[c] + strlen("police-"),
			act_str(&pol->act[c], class_names, a, sizeof(a)));
	fputc('\n', f);
}

static json_object *dscp_set_json(uint64_t set)
{
	json_object *arr = json_object_new_array();
	int i;

	for (i = 0; i < QOS_DSCP_MAX; i++)
		if (set & (1ULL << i))
			json_object_array_add(arr, json_object_new_int(i));
	return arr;
}

json_object *qos_police_config_json(const struct qos_policer *pol,
				    const char *const class_names[QOS_MAX_CLASSES])
{
	json_object *o = json_object_new_object();
	bool tr = pol->tb.mode == TB_TRTCM;
	char buf[32];
	int c;

	json_object_object_add(o, "mode", json_object_new_string(tr ? "trtcm" : "srtcm"));
	json_object_object_add(o, "color", json_object_new_string(
				       pol->flags & QOS_POLICE_F_AWARE ? "aware" : "blind"));
	json_object_object_add(o, "cir_bps", json_object_new_uint64(pol->tb.cir));
	json_object_object_add(o, "cbs_bytes", json_object_new_uint64(nb_bytes(pol->tb.cbs)));
	if (tr) {
		json_object_object_add(o, "pir_bps", json_object_new_uint64(pol->tb.pir));
		json_object_object_add(o, "pbs_bytes",
				       json_object_new_uint64(nb_bytes(pol->tb.ebs)));
	} else {
		json_object_object_add(o, "ebs_bytes",
				       json_object_new_uint64(nb_bytes(pol->tb.ebs)));
	}
	if (pol->flags & QOS_POLICE_F_AWARE) {
		json_object_object_add(o, "yellow_dscp", dscp_set_json(pol->pre_yellow));
		json_object_object_add(o, "red_dscp", dscp_set_json(pol->pre_red));
	}
	for (c = 0; c < TB_COLOR_MAX; c++)
		json_object_object_add(o, act_keys[c] + strlen("police-"),
				       json_object_new_string(act_str(&pol->act[c], class_names,
								      buf, sizeof(buf))));
	return o;
}

void qos_police_print_stats(FILE *f, const struct qos_police_report *r)
{
	int c, fm;

	for (c = 0; c < TB_COLOR_MAX; c++) {
		fprintf(f, "%-10s %-8s", "", qos_color_names[c]);
		for (fm = 0; fm < QOS_FAM_MAX; fm++)
			fprintf(f, " %14llu %16llu", (unsigned long long)r->ctr[fm][c].packets,
				(unsigned long long)r->ctr[fm][c].bytes);
		fputc('\n', f);
	}
}

json_object *qos_police_stats_json(const struct qos_police_report *r)
{
	json_object *o = json_object_new_object();
	int c, fm;

	for (c = 0; c < TB_COLOR_MAX; c++) {
		json_object *co = json_object_new_object();

		for (fm = 0; fm < QOS_FAM_MAX; fm++) {
			json_object *fo = json_object_new_object();

			json_object_object_add(fo, "packets",
					       json_object_new_uint64(r->ctr[fm][c].packets));
			json_object_object_add(fo, "bytes",
					       json_object_new_uint64(r->ctr[fm][c].bytes));
			json_object_object_add(co, qos_family_names[fm], fo);
		}
		json_object_object_add(o, qos_color_names[c], co);
	}
	return o;
}
