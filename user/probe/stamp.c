// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * STAMP packet codec (RFC 8762 section 4.2.1 and 4.3.1, unauthenticated;
 * RFC 8972 sections 3 and 4.4). Fields are big-endian at fixed offsets;
 * the offsets are written once, here, and checked against hand-made byte
 * vectors by selftests/test_stamp.c.
 */
#include <errno.h>
#include <string.h>
#include <sys/timex.h>

#include "probe/stamp.h"

/* Seconds from the NTP era 0 (1900) to the Unix epoch. */
#define NTP_UNIX_OFFSET		2208988800ULL
#define NSEC_PER_SEC		1000000000ULL

/* Offsets common to both packets. */
#define OFF_SEQ		0
#define OFF_TS		4
#define OFF_ERR		12
#define OFF_SSID	14
/* Reflector packet. */
#define OFF_RX_TS	16
#define OFF_S_SEQ	24
#define OFF_S_TS	28
#define OFF_S_ERR	36
#define OFF_S_TTL	40

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, v);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)p[0] << 8 | p[1];
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

uint64_t stamp_ntp_from_ns(int64_t ns)
{
	uint64_t sec = ns / NSEC_PER_SEC, nsec = ns % NSEC_PER_SEC;

	return (sec + NTP_UNIX_OFFSET) << 32 | ((nsec << 32) / NSEC_PER_SEC);
}

uint64_t stamp_ntp_from_ts(const struct timespec *ts)
{
	return stamp_ntp_from_ns((int64_t)ts->tv_sec * NSEC_PER_SEC + ts->tv_nsec);
}

int64_t stamp_ntp_to_ns(uint64_t ntp)
{
	uint64_t frac = ntp & 0xffffffff;

	/* Rounded to the nearest: a round trip through NTP keeps the ns. */
	return (int64_t)((ntp >> 32) - NTP_UNIX_OFFSET) * (int64_t)NSEC_PER_SEC +
	       (int64_t)((frac * NSEC_PER_SEC + (1ULL << 31)) >> 32);
}

int64_t stamp_ts_to_ns(uint64_t ts, uint16_t err, int tai_utc_s)
{
	if (!(err & STAMP_ERR_Z))
		return stamp_ntp_to_ns(ts);
	/* Seconds below 2^32 and nanoseconds below 2^32: no overflow. */
	return (int64_t)(ts >> 32) * (int64_t)NSEC_PER_SEC + (int64_t)(ts & 0xffffffff) -
	       (int64_t)tai_utc_s * (int64_t)NSEC_PER_SEC;
}

int stamp_tai_utc(void)
{
	struct timex tx = {};

	return adjtimex(&tx) < 0 ? 0 : tx.tai;
}

/* Multiplier * 2^(Scale - 32) seconds, the smallest Scale whose
 * Multiplier fits in 8 bits, never below the error (rounded up). */
uint16_t stamp_err_encode(uint64_t err_ns, bool synced)
{
	/* The error in units of 2^-32 s, rounded up; never 0 (RFC 4656
	 * forbids a zero Multiplier). */
	unsigned __int128 units = (((unsigned __int128)err_ns << 32) + NSEC_PER_SEC - 1) /
				  NSEC_PER_SEC;
	unsigned int scale = 0;
	uint64_t mult;

	if (!units)
		units = 1;
	while (scale < 63 && (units >> scale) > 255)
		scale++;
	mult = (uint64_t)((units + (((unsigned __int128)1 << scale) - 1)) >> scale);
	if (mult > 255)
		mult = 255;
	return (synced ? STAMP_ERR_S : 0) | scale << 8 | mult;
}

uint16_t stamp_err_local(void)
{
	struct timex tx = {};
	int st = adjtimex(&tx);

	/* esterror is in microseconds; an unsynchronised clock has no bound
	 * worth stating: maxerror then. A sandbox that denies adjtimex()
	 * (systemd's ProtectClock=) leaves nothing known: NTP's 16 s. */
	if (st < 0)
		return stamp_err_encode(16000000000ULL, false);
	if (st == TIME_ERROR || (tx.status & STA_UNSYNC))
		return stamp_err_encode((uint64_t)tx.maxerror * 1000, false);
	return stamp_err_encode((uint64_t)tx.esterror * 1000, true);
}

static void cos_put(uint8_t *p, const struct stamp_cos *c)
{
	p[0] = c->flags;
	p[1] = STAMP_TLV_COS;
	put16(p + 2, STAMP_COS_LEN);
	put16(p + 4, (uint16_t)(c->dscp1 & 0x3f) << 10 | (c->dscp2 & 0x3f) << 4 |
		     (c->ecn & 3) << 2 | (c->rp & 3));
	put16(p + 6, 0);
}

/* The first CoS TLV among the TLVs from @off on. */
static void cos_find(const uint8_t *buf, size_t len, size_t off, struct stamp_cos *c)
{
	memset(c, 0, sizeof(*c));
	while (off + STAMP_TLV_HDR_LEN <= len) {
		uint16_t l = get16(buf + off + 2);

		if (off + STAMP_TLV_HDR_LEN + l > len)
			return;
		if (buf[off + 1] == STAMP_TLV_COS && l >= STAMP_COS_LEN) {
			uint16_t v = get16(buf + off + 4);

			c->present = true;
			c->flags = buf[off];
			c->dscp1 = v >> 10;
			c->dscp2 = (v >> 4) & 0x3f;
			c->ecn = (v >> 2) & 3;
			c->rp = v & 3;
			return;
		}
		off += STAMP_TLV_HDR_LEN + l;
	}
}

static size_t need_len(const struct stamp_cos *c)
{
	return STAMP_BASE_LEN + (c->present ? STAMP_TLV_HDR_LEN + STAMP_COS_LEN : 0);
}

int stamp_test_pack(const struct stamp_test *t, uint8_t *buf, size_t len)
{
	if (len < need_len(&t->cos) || len > STAMP_MAX_LEN)
		return -EINVAL;
	memset(buf, 0, len);
	put32(buf + OFF_SEQ, t->seq);
	put64(buf + OFF_TS, t->ts);
	put16(buf + OFF_ERR, t->err);
	put16(buf + OFF_SSID, t->ssid);
	if (t->cos.present)
		cos_put(buf + STAMP_BASE_LEN, &t->cos);
	return len;
}

int stamp_reply_pack(const struct stamp_reply *r, uint8_t *buf, size_t len)
{
	if (len < need_len(&r->cos) || len > STAMP_MAX_LEN)
		return -EINVAL;
	memset(buf, 0, len);
	put32(buf + OFF_SEQ, r->seq);
	put64(buf + OFF_TS, r->ts);
	put16(buf + OFF_ERR, r->err);
	put16(buf + OFF_SSID, r->ssid);
	put64(buf + OFF_RX_TS, r->rx_ts);
	put32(buf + OFF_S_SEQ, r->s_seq);
	put64(buf + OFF_S_TS, r->s_ts);
	put16(buf + OFF_S_ERR, r->s_err);
	buf[OFF_S_TTL] = r->s_ttl;
	if (r->cos.present)
		cos_put(buf + STAMP_BASE_LEN, &r->cos);
	return len;
}

int stamp_test_parse(const uint8_t *buf, size_t len, struct stamp_test *t)
{
	if (len < STAMP_BASE_LEN)
		return -EINVAL;
	t->seq = get32(buf + OFF_SEQ);
	t->ts = get64(buf + OFF_TS);
	t->err = get16(buf + OFF_ERR);
	t->ssid = get16(buf + OFF_SSID);
	cos_find(buf, len, STAMP_BASE_LEN, &t->cos);
	return 0;
}

int stamp_reply_parse(const uint8_t *buf, size_t len, struct stamp_reply *r)
{
	if (len < STAMP_BASE_LEN)
		return -EINVAL;
	r->seq = get32(buf + OFF_SEQ);
	r->ts = get64(buf + OFF_TS);
	r->err = get16(buf + OFF_ERR);
	r->ssid = get16(buf + OFF_SSID);
	r->rx_ts = get64(buf + OFF_RX_TS);
	r->s_seq = get32(buf + OFF_S_SEQ);
	r->s_ts = get64(buf + OFF_S_TS);
	r->s_err = get16(buf + OFF_S_ERR);
	r->s_ttl = buf[OFF_S_TTL];
	cos_find(buf, len, STAMP_BASE_LEN, &r->cos);
	return 0;
}

/*
 * The CoS TLV at @p (RFC 8972 section 4.4): DSCP1 kept, DSCP2 and ECN as
 * received, RP 0 when the reply is sent with DSCP1, else 1. DSCP1 is used
 * only if the operator allows it: a sender must not pick the priority of
 * a router's traffic.
 */
static void cos_reflect(uint8_t *p, const struct stamp_refl_in *ri, struct stamp_refl_out *ro)
{
	uint16_t v = get16(p + 4);
	uint8_t dscp1 = v >> 10;

	if (ri->cos_allowed >> dscp1 & 1)
		ro->dscp = dscp1;
	else if (dscp1 != ri->tos >> 2)
		ro->cos_refused = true;
	put16(p + 4, (uint16_t)dscp1 << 10 | (ri->tos >> 2) << 4 | (ri->tos & 3) << 2 |
		     (ro->dscp != dscp1));
}

/*
 * Stateless reflection (RFC 8762 section 4.3): the reply's sequence number
 * is the sender's, its SSID the sender's (0 from a TWAMP-light or plain
 * RFC 8762 sender), T1 and the sender's Error Estimate (its Z bit among
 * them) copied as they came. TLVs are copied in order (RFC 8972 section
 * 4): the CoS TLV as cos_reflect() says, any other type gets the U flag;
 * a TLV whose length runs past the packet gets the M flag and ends the
 * walk.
 */
int stamp_reflect_ex(const uint8_t *in, size_t len, const struct stamp_refl_in *ri,
		     uint8_t *out, struct stamp_refl_out *ro)
{
	struct stamp_reply r = {};
	struct stamp_test t;
	size_t off;

	if (len > STAMP_MAX_LEN || stamp_test_parse(in, len, &t))
		return -EINVAL;
	r.seq = t.seq;
	r.ts = ri->tx;
	r.err = ri->err;
	r.ssid = t.ssid;
	r.rx_ts = ri->rx;
	r.s_seq = t.seq;
	r.s_ts = t.ts;
	r.s_err = t.err;
	r.s_ttl = ri->ttl;
	stamp_reply_pack(&r, out, len);
	ro->dscp = ri->tos >> 2;
	ro->cos_refused = false;
	memcpy(out + STAMP_BASE_LEN, in + STAMP_BASE_LEN, len - STAMP_BASE_LEN);
	for (off = STAMP_BASE_LEN; off + STAMP_TLV_HDR_LEN <= len;) {
		uint8_t *p = out + off;
		uint16_t l = get16(p + 2);

		if (off + STAMP_TLV_HDR_LEN + l > len) {
			p[0] |= STAMP_TLV_F_M;
			break;
		}
		if (p[1] == STAMP_TLV_COS && l >= STAMP_COS_LEN)
			cos_reflect(p, ri, ro);
		else if (p[1] != 0 || l != 0)
			p[0] |= STAMP_TLV_F_U;
		off += STAMP_TLV_HDR_LEN + l;
	}
	return len;
}

int stamp_reflect(const uint8_t *in, size_t len, uint8_t tos, uint8_t ttl, uint64_t rx,
		  uint64_t tx, uint16_t err, uint8_t *out, uint8_t *dscp_out)
{
	struct stamp_refl_in ri = { .tos = tos, .ttl = ttl, .rx = rx, .tx = tx, .err = err };
	struct stamp_refl_out ro;
	int r = stamp_reflect_ex(in, len, &ri, out, &ro);

	*dscp_out = ro.dscp;
	return r;
}
