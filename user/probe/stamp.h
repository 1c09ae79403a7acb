/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * STAMP (RFC 8762) test packets in unauthenticated mode, with the Session-
 * Sender Identifier and the Class of Service TLV of RFC 8972: encoding and
 * decoding only, no sockets. Documentation/assurance.rst says what of the
 * protocol is implemented.
 */
#ifndef __QOS_STAMP_H
#define __QOS_STAMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define STAMP_PORT		862
/* Both packets of unauthenticated mode are 44 bytes before any TLV. */
#define STAMP_BASE_LEN		44
#define STAMP_MAX_LEN		1472
#define STAMP_TLV_HDR_LEN	4
/* RFC 8972 section 4.4; IANA "STAMP TLV Types". */
#define STAMP_TLV_COS		4
#define STAMP_COS_LEN		4
/* STAMP TLV Flags: Unrecognized, Malformed, Integrity failed. */
#define STAMP_TLV_F_U		0x80
#define STAMP_TLV_F_M		0x40
#define STAMP_TLV_F_I		0x20

/* Error Estimate (RFC 4656 section 4.1.2): S, Z, Scale, Multiplier. */
#define STAMP_ERR_S		0x8000
#define STAMP_ERR_Z		0x4000

/* The Class of Service TLV: DSCP1 asked for the reflected packet, DSCP2
 * and ECN as the reflector received them. */
struct stamp_cos {
	bool present;
	uint8_t flags;
	uint8_t dscp1;
	uint8_t dscp2;
	uint8_t ecn;
	uint8_t rp;
};

/* Session-Sender test packet. */
struct stamp_test {
	uint32_t seq;
	uint64_t ts;		/* NTP 64-bit format */
	uint16_t err;
	uint16_t ssid;
	struct stamp_cos cos;
};

/* Session-Reflector test packet. */
struct stamp_reply {
	uint32_t seq;
	uint64_t ts;		/* when it was sent (T3) */
	uint16_t err;
	uint16_t ssid;
	uint64_t rx_ts;		/* when the test packet was received (T2) */
	uint32_t s_seq;
	uint64_t s_ts;		/* the sender's timestamp (T1) */
	uint16_t s_err;
	uint8_t s_ttl;
	struct stamp_cos cos;
};

uint64_t stamp_ntp_from_ts(const struct timespec *ts);
/*
 * A packet's timestamp in nanoseconds since the Unix epoch (UTC), in the
 * format its Error Estimate @err says: NTP 64-bit, or with Z set the PTPv2
 * truncated format (seconds and nanoseconds of TAI since 1970), less
 * @tai_utc_s, TAI's lead on UTC.
 */
int64_t stamp_ts_to_ns(uint64_t ts, uint16_t err, int tai_utc_s);
/* TAI - UTC as the kernel knows it (adjtimex), 0 if it does not. */
int stamp_tai_utc(void);
/* Nanoseconds since the Unix epoch. */
int64_t stamp_ntp_to_ns(uint64_t ntp);
uint64_t stamp_ntp_from_ns(int64_t ns);

/* Error Estimate of @err_ns nanoseconds; S set when @synced. */
uint16_t stamp_err_encode(uint64_t err_ns, bool synced);
/* The Error Estimate of this host's clock (adjtimex). */
uint16_t stamp_err_local(void);

/* Bytes written (the packet is @len long, zero padded, @len >= what the
 * fields need), or -EINVAL. */
int stamp_test_pack(const struct stamp_test *t, uint8_t *buf, size_t len);
int stamp_reply_pack(const struct stamp_reply *r, uint8_t *buf, size_t len);
/* 0, or -EINVAL for a packet shorter than STAMP_BASE_LEN. TLVs that do
 * not parse leave cos.present false. */
int stamp_test_parse(const uint8_t *buf, size_t len, struct stamp_test *t);
int stamp_reply_parse(const uint8_t *buf, size_t len, struct stamp_reply *r);

/* What the reflector knows of one test packet, and its policy. */
struct stamp_refl_in {
	uint8_t tos;		/* the DS field (or Traffic Class) received */
	uint8_t ttl;
	uint64_t rx;		/* T2, NTP */
	uint64_t tx;		/* T3, NTP */
	uint16_t err;		/* the reflector's Error Estimate */
	uint64_t cos_allowed;	/* DSCPs the CoS TLV may choose: bit d, DSCP d */
};

struct stamp_refl_out {
	uint8_t dscp;		/* the DSCP the reply is to be sent with */
	bool cos_refused;	/* a CoS TLV asked for a DSCP not allowed */
};

/*
 * The reflector's work on one test packet of @len bytes: writes the reply
 * of the same length in @out (the TLVs copied, the CoS TLV filled, unknown
 * ones flagged U, malformed ones M) and returns its length, or -EINVAL.
 * The reply's DSCP is the one received, or the CoS TLV's DSCP1 if
 * @ri->cos_allowed has it; RP says which (RFC 8972 section 4.4).
 */
int stamp_reflect_ex(const uint8_t *in, size_t len, const struct stamp_refl_in *ri,
		     uint8_t *out, struct stamp_refl_out *ro);
/* stamp_reflect_ex() with no DSCP the CoS TLV may choose. */
int stamp_reflect(const uint8_t *in, size_t len, uint8_t tos, uint8_t ttl, uint64_t rx,
		  uint64_t tx, uint16_t err, uint8_t *out, uint8_t *dscp_out);

#endif /* __QOS_STAMP_H */
