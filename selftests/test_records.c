// SPDX-License-Identifier: GPL-2.0-only
/*
 * The files qosctl reads back, malformed on purpose: the transaction
 * record (user/txn/record.c, plan.c) and the probe's .sla state
 * (user/probe/sla_state.c). Each is truncated, given lengths that wrap,
 * counts far beyond its size, and made larger than its cap; each must
 * be refused, without reading past its buffer (run under SANITIZE=1 to
 * see an over-read as a report rather than, at best, a crash).
 *
 * The offsets below are the layout of struct rec_hdr (record.c) and
 * struct plan_hdr (plan.c): the tests corrupt the fields by hand.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "kernel/dev.h"
#include "lib/file.h"
#include "probe/sla_state.h"
#include "txn/record.h"

#define REC_PREV_LEN	32	/* rec_hdr: magic, state, deadline, keeper, start, */
#define REC_NEXT_LEN	40	/* prev_len, next_len */
#define REC_HDR		48
#define PLAN_NRULES	16	/* plan_hdr: magic, size, obj_hash, nrules */
#define PLAN_HDR	24

static uint64_t get64(const uint8_t *b, size_t off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static void put64(uint8_t *b, size_t off, uint64_t v)
{
	memcpy(b + off, &v, sizeof(v));
}

/* A record of a confirm under way, three rules in the state before. */
static void make_record(uint8_t **buf, size_t *len)
{
	struct qos_rec rec = { .state = QOS_REC_CONFIRM, .deadline_ns = 42, .keeper = 7 };
	struct qos_rule r;
	int i;

	for (i = 0; i < 3; i++) {
		qos_rule_init(&r);
		snprintf(r.name, sizeof(r.name), "r%d", i);
		r.dscp = 46;
		if (qos_rules_add(&rec.prev.rules, &r))
			abort();
	}
	if (qos_rec_encode(&rec, (void **)buf, len))
		abort();
	qos_rec_free(&rec);
}

TEST(record_round_trip)
{
	struct qos_rec rec;
	uint8_t *buf;
	size_t len;

	make_record(&buf, &len);
	ASSERT_EQ(0, qos_rec_decode(buf, len, &rec));
	EXPECT_EQ(QOS_REC_CONFIRM, rec.state);
	EXPECT_EQ(42, rec.deadline_ns);
	EXPECT_EQ(3, rec.prev.rules.n);
	EXPECT_STREQ("r2", rec.prev.rules.r[2].name);
	EXPECT_EQ(0, rec.next.rules.n);
	qos_rec_free(&rec);
	free(buf);
}

/* Every prefix of a good record, and one byte more. */
TEST(record_truncated)
{
	struct qos_rec rec;
	uint8_t *buf, *big;
	size_t len, i;

	make_record(&buf, &len);
	for (i = 0; i < len; i++) {
		uint8_t *cut = malloc(i ? i : 1);

		memcpy(cut, buf, i);
		EXPECT_EQ(-EINVAL, qos_rec_decode(cut, i, &rec)) TH_LOG("%zu of %zu bytes", i, len);
		free(cut);
	}
	big = calloc(1, len + 1);
	memcpy(big, buf, len);
	EXPECT_EQ(-EINVAL, qos_rec_decode(big, len + 1, &rec));
	free(big);
	free(buf);
}

/*
 * prev_len grown by k rules and next_len shrunk by as much: their sum is
 * still the file's length modulo 2^64, and the first plan's rule count,
 * grown by k too, matches its length. Read as given, the first plan's
 * rules run past the buffer.
 */
TEST(record_lengths_wrap)
{
	static const uint64_t ks[] = { 1, 1000, 1ULL << 40 };
	size_t rsz = sizeof(struct qos_rule), len, i;
	struct qos_rec rec;
	uint8_t *buf;

	make_record(&buf, &len);
	for (i = 0; i < ARRAY_SIZE(ks); i++) {
		uint8_t *b = malloc(len);

		memcpy(b, buf, len);
		put64(b, REC_PREV_LEN, get64(b, REC_PREV_LEN) + ks[i] * rsz);
		put64(b, REC_NEXT_LEN, get64(b, REC_NEXT_LEN) - ks[i] * rsz);
		put64(b, REC_HDR + PLAN_NRULES, get64(b, REC_HDR + PLAN_NRULES) + ks[i]);
		EXPECT_EQ(-EINVAL, qos_rec_decode(b, len, &rec)) TH_LOG("k = %ju", (uintmax_t)ks[i]);
		free(b);
	}
	/* Both halves near 2^63: the sum wraps to the file's length. */
	{
		uint8_t *b = malloc(len);

		memcpy(b, buf, len);
		put64(b, REC_PREV_LEN, get64(b, REC_PREV_LEN) + (1ULL << 63));
		put64(b, REC_NEXT_LEN, get64(b, REC_NEXT_LEN) + (1ULL << 63));
		EXPECT_EQ(-EINVAL, qos_rec_decode(b, len, &rec));
		free(b);
	}
	free(buf);
}

/*
 * A rule count whose size in bytes is a multiple of 2^64: 2^58 rules of
 * a 64-byte multiple. The plan's length then "matches" with no rule in
 * it, and the count is what the loop would believe.
 */
TEST(record_huge_rule_count)
{
	size_t rsz = sizeof(struct qos_rule), len, plen;
	uint64_t wrap = 1ULL << (64 - __builtin_ctzl(rsz));
	uint64_t counts[] = { wrap, 2 * wrap, QOS_RULES_MAX + 1ULL };
	struct qos_rec rec;
	uint8_t *buf;
	size_t i;

	make_record(&buf, &len);
	/* The first plan with its rules cut off: header and plan alone. */
	plen = get64(buf, REC_PREV_LEN) - 3 * rsz;
	for (i = 0; i < ARRAY_SIZE(counts); i++) {
		size_t nl = get64(buf, REC_NEXT_LEN);
		uint8_t *b = malloc(REC_HDR + plen + nl);

		memcpy(b, buf, REC_HDR + plen);
		memcpy(b + REC_HDR + plen, buf + len - nl, nl);
		put64(b, REC_PREV_LEN, plen);
		put64(b, REC_HDR + PLAN_NRULES, counts[i]);
		EXPECT_EQ(-EINVAL, qos_rec_decode(b, REC_HDR + plen + nl, &rec))
			TH_LOG("nrules = %ju", (uintmax_t)counts[i]);
		free(b);
	}
	free(buf);
}

/* Names that do not end (a rule's, the profile's) are ended: they are
 * printed with %s. */
TEST(record_names_end)
{
	struct qos_rec rec;
	uint8_t *buf;
	size_t len, off;

	make_record(&buf, &len);
	off = get64(buf, REC_PREV_LEN) - 3 * sizeof(struct qos_rule);
	memset(buf + REC_HDR + off + offsetof(struct qos_rule, name), 'x', QOS_RULE_NAME_LEN);
	/* The first plan's profile name: the plan follows its 24-byte header. */
	memset(buf + REC_HDR + PLAN_HDR + offsetof(struct qos_plan, cfg.meta.profile), 'x',
	       QOS_PROFILE_NAME_LEN);
	ASSERT_EQ(0, qos_rec_decode(buf, len, &rec));
	EXPECT_EQ(QOS_RULE_NAME_LEN - 1, strlen(rec.prev.rules.r[0].name));
	EXPECT_EQ(QOS_PROFILE_NAME_LEN - 1, strlen(rec.prev.cfg.meta.profile));
	qos_rec_free(&rec);
	free(buf);
}

/* A record file longer than any record is not read at all. */
TEST(record_file_too_big)
{
	char dir[] = "/tmp/test_records.XXXXXX";
	struct qos_dev dev = { .ifindex = 1, .netns = 1 };
	struct qos_rec rec;
	char name[64];
	uint8_t *buf;
	size_t len;
	int fd;

	ASSERT_NE(NULL, mkdtemp(dir));
	dev.run_fd = open(dir, O_RDONLY | O_DIRECTORY);
	ASSERT_LE(0, dev.run_fd);
	make_record(&buf, &len);
	ASSERT_EQ(0, qos_dev_file_write(&dev, "txn", buf, len));
	ASSERT_EQ(0, qos_rec_read(&dev, &rec));
	qos_rec_free(&rec);
	/* Sparse: the good record, then a hole to past the cap. */
	snprintf(name, sizeof(name), "%016x-1.txn", 1);
	fd = openat(dev.run_fd, name, O_WRONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, qos_rec_max_len() + 1));
	EXPECT_EQ(-EFBIG, qos_file_read_fd(fd, (void **)&buf, &len, qos_rec_max_len()));
	close(fd);
	EXPECT_EQ(-EINVAL, qos_rec_read(&dev, &rec));
	unlinkat(dev.run_fd, name, 0);
	close(dev.run_fd);
	rmdir(dir);
	free(buf);
}

/* A probe's state as pstate_publish() writes it: @nsla SLAs, one window
 * of @window_ns. */
static void sla_text(char *buf, size_t len, uint64_t window_ns, int nsla)
{
	char *p = buf, *end = buf + len;
	int i;

	p += snprintf(p, end - p, "{\"target\":\"192.0.2.1\",\"family\":\"ipv4\","
		      "\"window_ns\":%ju,\"windows\":3,\"end_boottime_ns\":1,\"sla\":[",
		      (uintmax_t)window_ns);
	for (i = 0; i < nsla; i++)
		p += snprintf(p, end - p, "%s{\"class\":\"c%d\",\"delay_p99_bound_ns\":5000000,"
			      "\"loss_bound_pct\":null,\"delay_p99_ns\":1000,\"loss_pct\":0,"
			      "\"met\":true}", i ? "," : "", i);
	snprintf(p, end - p, "]}");
}

TEST(sla_good_and_truncated)
{
	struct pstate_sla *v = NULL;
	char good[512], text[512];
	size_t i;
	int n = 0;

	sla_text(good, sizeof(good), 1000000000, 1);
	ASSERT_TRUE(pstate_parse("p", good, &v, &n));
	ASSERT_EQ(1, n);
	EXPECT_STREQ("c0", v[0].cls);
	EXPECT_EQ(5000000, v[0].delay_p99_bound_ns);
	for (i = 0; i < strlen(good); i++) {
		snprintf(text, sizeof(text), "%.*s", (int)i, good);
		n = 0;
		EXPECT_FALSE(pstate_parse("p", text, &v, &n)) TH_LOG("%zu bytes", i);
		EXPECT_EQ(0, n);
	}
	free(v);
}

/* A window so long that PROBE_STALE_WINDOWS of it wrap (3 x
 * 0x5555555555555556 is 2 modulo 2^64: shown stale at once otherwise),
 * and more SLAs than a profile has classes. */
TEST(sla_huge_values)
{
	struct pstate_sla *v = NULL;
	char text[16384];
	int n = 0;

	sla_text(text, sizeof(text), 0x5555555555555556ULL, 1);
	EXPECT_FALSE(pstate_parse("p", text, &v, &n));
	EXPECT_EQ(0, n);
	sla_text(text, sizeof(text), 1000000000, QOS_MAX_CLASSES + 1);
	n = 0;
	EXPECT_FALSE(pstate_parse("p", text, &v, &n));
	free(v);
}

/* The .sla cap holds where the file is read, whatever fstat said before. */
TEST(sla_file_too_big)
{
	char path[] = "/tmp/test_records.sla.XXXXXX";
	void *buf = NULL;
	size_t len;
	int fd = mkstemp(path);

	ASSERT_LE(0, fd);
	unlink(path);
	ASSERT_EQ(0, ftruncate(fd, 65536));
	ASSERT_EQ(0, qos_file_read_fd(fd, &buf, &len, 65536));
	EXPECT_EQ(65536, len);
	EXPECT_EQ(0, ((char *)buf)[len]);
	free(buf);
	ASSERT_EQ(0, ftruncate(fd, 65537));
	EXPECT_EQ(-EFBIG, qos_file_read_fd(fd, &buf, &len, 65536));
	close(fd);
}

TEST_HARNESS_MAIN
