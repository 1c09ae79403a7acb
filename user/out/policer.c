// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Policers in `show` and `stats`: their configuration and colour counters.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "kernel/stats.h"
#include "lib/util.h"
#include "model/policer.h"
#include "out/policer.h"

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
		fprintf(f, " %s %s", qos_police_act_keys[c] + strlen("police-"),
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
		json_object_object_add(o, qos_police_act_keys[c] + strlen("police-"),
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

