// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the STAMP packet parsers (user/probe/stamp.c): the
 * input is a UDP payload as the reflector (a test packet) and the sender
 * (a reply) receive it from anyone. Both parsers must stay within the
 * buffer and walk the TLVs to their end; what a parse gives, packed again
 * and parsed again, must give the same fields. The reflector's work on the
 * same bytes must write a reply of the request's length, with the DSCP the
 * request arrived with or one the operator allowed, and nothing else.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "probe/stamp.h"
#include "seeds.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct stamp_test t = { .seq = 7, .ts = 1ULL << 63, .err = STAMP_ERR_S | 1, .ssid = 3 };
	struct stamp_reply r = { .seq = 7, .rx_ts = 5, .s_seq = 7, .s_ttl = 64 };
	uint8_t buf[STAMP_BASE_LEN + 16];

	stamp_test_pack(&t, buf, STAMP_BASE_LEN);
	fuzz_seed("test", buf, STAMP_BASE_LEN);
	t.cos = (struct stamp_cos){ .present = true, .dscp1 = 46 };
	stamp_test_pack(&t, buf, sizeof(buf));
	fuzz_seed("test-cos", buf, sizeof(buf));
	r.cos = t.cos;
	stamp_reply_pack(&r, buf, sizeof(buf));
	fuzz_seed("reply-cos", buf, sizeof(buf));
	return 0;
}

static void test_round_trip(const uint8_t *data, size_t size)
{
	struct stamp_test t, t2;
	uint8_t buf[STAMP_MAX_LEN];

	if (stamp_test_parse(data, size, &t))
		return;
	if (stamp_test_pack(&t, buf, STAMP_BASE_LEN + 8) < 0 ||
	    stamp_test_parse(buf, STAMP_BASE_LEN + 8, &t2))
		abort();
	if (t2.seq != t.seq || t2.ts != t.ts || t2.err != t.err || t2.ssid != t.ssid ||
	    t2.cos.present != t.cos.present ||
	    (t.cos.present && (t2.cos.dscp1 != t.cos.dscp1 || t2.cos.dscp2 != t.cos.dscp2 ||
			       t2.cos.ecn != t.cos.ecn || t2.cos.rp != t.cos.rp)))
		abort();
}

static void reply_round_trip(const uint8_t *data, size_t size)
{
	struct stamp_reply r, r2;
	uint8_t buf[STAMP_MAX_LEN];

	if (stamp_reply_parse(data, size, &r))
		return;
	if (stamp_reply_pack(&r, buf, STAMP_BASE_LEN + 8) < 0 ||
	    stamp_reply_parse(buf, STAMP_BASE_LEN + 8, &r2))
		abort();
	if (r2.seq != r.seq || r2.ts != r.ts || r2.rx_ts != r.rx_ts || r2.s_seq != r.s_seq ||
	    r2.s_ts != r.s_ts || r2.s_err != r.s_err || r2.s_ttl != r.s_ttl ||
	    r2.cos.present != r.cos.present)
		abort();
}

/*
 * The DS field the packet "arrived with" and the DSCPs the CoS TLV may
 * choose come from the input's last bytes, so the fuzzer explores them too.
 */
static void reflect_one(const uint8_t *data, size_t size)
{
	struct stamp_refl_in ri = { .ttl = 64, .rx = 1, .tx = 2, .err = STAMP_ERR_S };
	struct stamp_refl_out ro;
	uint8_t out[STAMP_MAX_LEN];
	int len;

	if (size > STAMP_MAX_LEN)
		return;
	if (size >= 9) {
		ri.tos = data[size - 9];
		memcpy(&ri.cos_allowed, data + size - 8, sizeof(ri.cos_allowed));
	}
	len = stamp_reflect_ex(data, size, &ri, out, &ro);
	if (len < 0)
		return;
	if ((size_t)len != size || ro.dscp > 63)
		abort();
	if (ro.dscp != ri.tos >> 2 && !(ri.cos_allowed & (1ULL << ro.dscp)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A copy of exactly @size bytes: ASan sees any read past it. */
	uint8_t *pkt = malloc(size ?: 1);

	if (!pkt)
		abort();
	memcpy(pkt, data, size);
	test_round_trip(pkt, size);
	reply_round_trip(pkt, size);
	reflect_one(pkt, size);
	free(pkt);
	return 0;
}
