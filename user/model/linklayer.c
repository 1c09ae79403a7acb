// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Link-layer overhead keys and presets. The presets take the framing of
 * tc-cake(8)'s keywords (given there over the IP packet) and subtract what
 * tc already counts on the Ethernet interface qosctl shapes: the 14-byte
 * Ethernet header, and for the pppoe-* ones the 8 bytes of PPPoE and PPP
 * headers in the frames of the interface the session runs on.
 * Documentation/profiles.rst lists each with its derivation.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/util.h"
#include "model/linklayer.h"

static const char *const ll_names[QOS_LL_MAX] = {
	[QOS_LL_ETHERNET] = "ethernet",
	[QOS_LL_ATM] = "atm",
	[QOS_LL_PTM] = "ptm",
};

static const struct {
	const char *name;
	uint32_t overhead, mpu, linklayer;
} presets[] = {
	/* IEEE 802.3: preamble and SFD 8, FCS 4, inter-frame gap 12; a
	 * frame is at least 64 bytes with FCS, 84 on the wire. */
	{ "ethernet", 24, 84, QOS_LL_ETHERNET },
	/* DOCSIS shapers count the Ethernet frame with its FCS (tc-cake:
	 * 18 over IP, mpu 64). */
	{ "docsis", 4, 64, QOS_LL_ETHERNET },
	/* VDSL2 PTM, bridged (tc-cake bridged-ptm: 22 over IP). */
	{ "bridged-ptm", 8, 0, QOS_LL_PTM },
	/* VDSL2 PTM with PPPoE (tc-cake pppoe-ptm: 30 over IP). */
	{ "pppoe-ptm", 8, 0, QOS_LL_PTM },
	{ "pppoe-vdsl", 8, 0, QOS_LL_PTM },
	/* ADSL, RFC 2684 bridged LLC/SNAP (tc-cake bridged-llcsnap: 32). */
	{ "bridged-llcsnap", 18, 0, QOS_LL_ATM },
	/* ADSL, PPPoE over LLC/SNAP and over VC-mux (tc-cake: 40, 32). */
	{ "pppoe-llcsnap", 18, 0, QOS_LL_ATM },
	{ "pppoe-vcmux", 10, 0, QOS_LL_ATM },
	/* ATM of unknown encapsulation: the largest (tc-cake
	 * conservative: 48 over IP). */
	{ "conservative", 34, 0, QOS_LL_ATM },
	/* What tc counts and nothing more: the default. */
	{ "none", 0, 0, QOS_LL_ETHERNET },
};

void qos_ll_spec_init(struct qos_ll_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->preset = -1;
}

const char *qos_linklayer_name(uint32_t ll)
{
	return ll < QOS_LL_MAX ? ll_names[ll] : "?";
}

const char *qos_ll_preset_name(unsigned int i)
{
	return i < ARRAY_SIZE(presets) ? presets[i].name : NULL;
}

static int parse_bytes(const char *v, uint32_t max, uint32_t *out)
{
	return qos_parse_u32(v, out) || *out > max ? -EINVAL : 0;
}

int qos_ll_parse(struct qos_ll_spec *s, const char *key, const char *v, char *why,
		 size_t len)
{
	unsigned int i;
	int n;

	if (!strcmp(key, "overhead")) {
		for (i = 0; i < ARRAY_SIZE(presets); i++)
			if (!strcmp(v, presets[i].name)) {
				s->preset = i;
				return 0;
			}
		if (!parse_bytes(v, QOS_LL_OVERHEAD_MAX, &s->overhead)) {
			s->set |= QOS_LL_F_OVERHEAD;
			return 0;
		}
		n = snprintf(why, len, "'%s' is neither a number of bytes (0-%u) nor a preset (",
			     v, QOS_LL_OVERHEAD_MAX);
		for (i = 0; i < ARRAY_SIZE(presets) && n > 0 && (size_t)n < len; i++)
			n += snprintf(why + n, len - n, "%s%s", i ? ", " : "", presets[i].name);
		if (n > 0 && (size_t)n < len)
			snprintf(why + n, len - n, ")");
		return -EINVAL;
	}
	if (!strcmp(key, "mpu")) {
		if (!parse_bytes(v, QOS_LL_MPU_MAX, &s->mpu)) {
			s->set |= QOS_LL_F_MPU;
			return 0;
		}
		snprintf(why, len, "'%s' is not a number of bytes (0-%u)", v, QOS_LL_MPU_MAX);
		return -EINVAL;
	}
	if (!strcmp(key, "linklayer")) {
		for (i = 0; i < QOS_LL_MAX; i++)
			if (!strcmp(v, ll_names[i])) {
				s->linklayer = i;
				s->set |= QOS_LL_F_LINKLAYER;
				return 0;
			}
		snprintf(why, len, "'%s' is not a link layer (ethernet, atm, ptm)", v);
		return -EINVAL;
	}
	return -ENOENT;
}

void qos_ll_apply(const struct qos_ll_spec *s, struct qos_meta *meta)
{
	if (s->preset >= 0) {
		meta->overhead = presets[s->preset].overhead;
		meta->mpu = presets[s->preset].mpu;
		meta->linklayer = presets[s->preset].linklayer;
	}
	if (s->set & QOS_LL_F_OVERHEAD)
		meta->overhead = s->overhead;
	if (s->set & QOS_LL_F_MPU)
		meta->mpu = s->mpu;
	if (s->set & QOS_LL_F_LINKLAYER)
		meta->linklayer = s->linklayer;
}

uint64_t qos_ll_rate(const struct qos_meta *meta, uint64_t bps)
{
	return meta->linklayer == QOS_LL_PTM ? bps / 65 * 64 : bps;
}
