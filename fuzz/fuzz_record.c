// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the transaction record decoder (user/txn/record.c,
 * plan.c): the input is a record file's bytes. Decoding must stay within
 * them, whatever the lengths and counts say; a record it accepts must
 * encode back to the same bytes. Seeds are this build's own records
 * (fuzz/seeds.h): the object hash in them is the build's.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "seeds.h"
#include "txn/record.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct qos_rec rec = { .state = QOS_REC_APPLYING, .next.empty = true };
	struct qos_rule r;
	size_t len;
	void *buf;
	int i;

	for (i = 0; i < 3; i++) {
		if (qos_rec_encode(&rec, &buf, &len))
			abort();
		fuzz_seed(i == 0 ? "rec-0" : i == 1 ? "rec-1" : "rec-2", buf, len);
		free(buf);
		qos_rule_init(&r);
		snprintf(r.name, sizeof(r.name), "r%d", i);
		if (qos_rules_add(&rec.prev.rules, &r))
			abort();
		rec.state = QOS_REC_CONFIRM;
	}
	qos_rec_free(&rec);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *in = malloc(size ?: 1);
	struct qos_rec rec;
	size_t len;
	void *out;

	if (!in)
		abort();
	memcpy(in, data, size);
	if (!qos_rec_decode(in, size, &rec)) {
		if (qos_rec_encode(&rec, &out, &len))
			abort();
		/* Names are ended on decode, and a next plan's rules (which
		 * no record of ours has) are not written: lengths only. */
		if (len + rec.next.rules.n * sizeof(struct qos_rule) != size)
			abort();
		free(out);
		qos_rec_free(&rec);
	}
	free(in);
	return 0;
}
