// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Policers as data: profile keys and their resolution into struct
 * qos_policer with the arithmetic of bpf/lib/tb.h.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "model/perr.h"
#include "model/policer.h"
#include "model/profile.h"
#include "lib/util.h"

const char *const qos_color_names[TB_COLOR_MAX] = { "green", "yellow", "red" };
const char *const qos_police_act_keys[TB_COLOR_MAX] = { "police-conform", "police-exceed",
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
			if (!strcmp(key, qos_police_act_keys[c]))
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
				return qos_profile_errf(err, errlen, p, a->line, qos_police_act_keys[c],
					    "no class named '%s'", a->demote);
			if (to == cl)
				return qos_profile_errf(err, errlen, p, a->line, qos_police_act_keys[c],
					    "class %s cannot be demoted to itself", cl->name);
		}
	}
	return 0;
}

/* A bucket's size in bytes at @rate. */
static int size_bytes(const struct qos_police_size *sz, uint64_t rate, uint64_t dflt,
		      uint32_t frame, uint64_t *bytes)
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
		if (*bytes < frame)
			*bytes = frame;
		break;
	default:
		*bytes = tb_auto_burst(rate, frame);
		break;
	}
	return *bytes > TB_BURST_MAX ? -ERANGE : 0;
}

int qos_police_resolve(const struct qos_profile *p, const struct qos_class_spec *cl,
		       uint64_t link_bps, uint32_t mtu, struct qos_policer *pol, char *err,
		       size_t errlen)
{
	uint32_t frame = mtu + QOS_ETH_HLEN;
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
	qos_profile_rate_check(p, ps->line, "police-rate", ps->rate, cir,
			       strchr(ps->rate, '%') ? link_bps : 0);
	if (size_bytes(&ps->burst, cir, tb_auto_burst(cir, frame), frame, &cbs))
		return qos_profile_errf(err, errlen, p, ps->burst.line, "police-burst",
			    "[class %s] burst exceeds %llu bytes", cl->name, TB_BURST_MAX);
	if (ps->mode == TB_TRTCM) {
		if (qos_parse_rate(ps->peak_rate, link_bps, &pir) || pir < cir ||
		    pir > TB_RATE_MAX)
			return qos_profile_errf(err, errlen, p, ps->peak_line, "police-peak-rate",
				    "[class %s] '%s' is not between police-rate and 1000gbit",
				    cl->name, ps->peak_rate);
		qos_profile_rate_check(p, ps->peak_line, "police-peak-rate", ps->peak_rate, pir,
				       strchr(ps->peak_rate, '%') ? link_bps : 0);
		if (size_bytes(&ps->peak_burst, pir, tb_auto_burst(pir, frame), frame, &ebs))
			return qos_profile_errf(err, errlen, p, ps->peak_burst.line, "police-peak-burst",
				    "[class %s] burst exceeds %llu bytes", cl->name,
				    TB_BURST_MAX);
	} else if (size_bytes(&ps->excess_burst, cir, 0, frame, &ebs)) {
		return qos_profile_errf(err, errlen, p, ps->excess_burst.line, "police-excess-burst",
			    "[class %s] burst exceeds %llu bytes", cl->name, TB_BURST_MAX);
	}
	if (tb_params_init(&pol->tb, ps->mode, cir, cbs, pir, ebs))
		return qos_profile_errf(err, errlen, p, ps->line, "police-rate",
			    "[class %s] policer parameters out of range", cl->name);
	tb_state_init(&pol->tb, &pol->st, 0);

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

