// SPDX-License-Identifier: GPL-2.0-only
/*
 * The unit parsers every profile and command line goes through: rates,
 * sizes, times and DSCP names, with the values written out by hand.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "kselftest_harness.h"
#include "lib/names.h"
#include "lib/suggest.h"
#include "lib/util.h"
#include "out/policer.h"
#include "out/print.h"
#include "out/probe.h"

struct rate_case {
	const char *in;
	uint64_t link;
	int err;
	uint64_t bps;
};

TEST(rates)
{
	static const struct rate_case cases[] = {
		{ "100mbit", 0, 0, 100000000ULL },
		{ "1gbit", 0, 0, 1000000000ULL },
		{ "1.5gbit", 0, 0, 1500000000ULL },
		{ "400gbit", 0, 0, 400000000000ULL },
		{ "1kbit", 0, 0, 1000 },
		{ "800bit", 0, 0, 800 },
		{ "1000", 0, 0, 1000 },			/* bare number: bit/s */
		{ "10mbps", 0, 0, 80000000ULL },	/* bytes per second */
		{ "1mibit", 0, 0, 1048576 },
		{ "20%", 100000000ULL, 0, 20000000ULL },
		{ "1%", 100000000ULL, 0, 1000000ULL },
		{ "0.5%", 1000000000ULL, 0, 5000000ULL },
		{ "100%", 1000, 0, 1000 },
		{ "20%", 0, -EINVAL, 0 },		/* no link to take a share of */
		{ "0%", 1000, -ERANGE, 0 },
		{ "101%", 1000, -ERANGE, 0 },
		{ "-5mbit", 0, -EINVAL, 0 },
		{ "5 mbit", 0, -EINVAL, 0 },
		{ "mbit", 0, -EINVAL, 0 },
		{ "5furlongs", 0, -EINVAL, 0 },
		{ "", 0, -EINVAL, 0 },
		{ "0.1bit", 0, -ERANGE, 0 },
		{ "20tbit", 0, -ERANGE, 0 },
		/* Decimal only: strtod() would take these. */
		{ "0x1p4mbit", 0, -EINVAL, 0 },		/* hex float: 16mbit */
		{ "0x10", 0, -EINVAL, 0 },
		{ "infmbit", 0, -EINVAL, 0 },
		{ "nanbit", 0, -EINVAL, 0 },
		{ "1e3mbit", 0, -EINVAL, 0 },
		{ "+5mbit", 0, -EINVAL, 0 },
		{ ".5gbit", 0, -EINVAL, 0 },
		{ "5.mbit", 0, -EINVAL, 0 },
		{ "0x14%", 1000, -ERANGE, 0 },
		{ "inf%", 1000, -ERANGE, 0 },
		{ "1e1%", 1000, -ERANGE, 0 },
		{ "012mbit", 0, 0, 12000000ULL },	/* leading zeros: decimal */
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		uint64_t bps = 0;
		int err = qos_parse_rate(cases[i].in, cases[i].link, &bps);

		EXPECT_EQ(cases[i].err, err) TH_LOG("'%s'", cases[i].in);
		if (!cases[i].err)
			EXPECT_EQ(cases[i].bps, bps) TH_LOG("'%s'", cases[i].in);
	}
}

TEST(sizes_and_times)
{
	uint64_t v;

	ASSERT_EQ(0, qos_parse_size("1514", &v));
	EXPECT_EQ(1514, v);
	ASSERT_EQ(0, qos_parse_size("64kb", &v));
	EXPECT_EQ(65536, v);
	ASSERT_EQ(0, qos_parse_size("64k", &v));
	EXPECT_EQ(65536, v);
	ASSERT_EQ(0, qos_parse_size("2mb", &v));
	EXPECT_EQ(2097152, v);
	ASSERT_EQ(0, qos_parse_size("2mbit", &v));	/* Bc in bits, as the seed writes it */
	EXPECT_EQ(262144, v);
	EXPECT_EQ(-EINVAL, qos_parse_size("2 kb", &v));
	EXPECT_EQ(-ERANGE, qos_parse_size("0", &v));
	EXPECT_EQ(-ERANGE, qos_parse_size("5gb", &v));

	ASSERT_EQ(0, qos_parse_time("10ms", &v));
	EXPECT_EQ(10000000ULL, v);
	ASSERT_EQ(0, qos_parse_time("500us", &v));
	EXPECT_EQ(500000ULL, v);
	ASSERT_EQ(0, qos_parse_time("1.5s", &v));
	EXPECT_EQ(1500000000ULL, v);
	EXPECT_EQ(-EINVAL, qos_parse_time("10", &v));	/* a time needs its unit */
	EXPECT_EQ(-EINVAL, qos_parse_time("10min", &v));
	EXPECT_EQ(-EINVAL, qos_parse_time("0x1p3ms", &v));
	EXPECT_EQ(-EINVAL, qos_parse_time("infs", &v));
	EXPECT_EQ(-EINVAL, qos_parse_time("nanms", &v));
	EXPECT_EQ(-EINVAL, qos_parse_size("0x100", &v));
	EXPECT_EQ(-EINVAL, qos_parse_size("1e3kb", &v));
}

/* Integers: decimal where a person writes decimal, leading zeros
 * included (strtol's base 0 read "012" as octal 10); hex only through
 * qos_parse_u32_hex() and only after "0x". */
TEST(integers)
{
	static const struct {
		const char *in;
		int err, err_hex;
		uint32_t v, v_hex;
	} cases[] = {
		{ "12", 0, 0, 12, 12 },
		{ "012", 0, 0, 12, 12 },
		{ "0", 0, 0, 0, 0 },
		{ "4294967295", 0, 0, UINT32_MAX, UINT32_MAX },
		{ "4294967296", -ERANGE, -ERANGE, 0, 0 },
		{ "0x10", -EINVAL, 0, 0, 16 },
		{ "0X000F0000", -EINVAL, 0, 0, 0xf0000 },
		{ "0xffffffff", -EINVAL, 0, 0, UINT32_MAX },
		{ "0x100000000", -EINVAL, -ERANGE, 0, 0 },
		{ "0x", -EINVAL, -EINVAL, 0, 0 },
		{ "0x0x5", -EINVAL, -EINVAL, 0, 0 },
		{ "0x-5", -EINVAL, -EINVAL, 0, 0 },
		{ "0x 5", -EINVAL, -EINVAL, 0, 0 },
		{ "ff", -EINVAL, -EINVAL, 0, 0 },
		{ "-1", -EINVAL, -EINVAL, 0, 0 },
		{ "+1", -EINVAL, -EINVAL, 0, 0 },
		{ " 1", -EINVAL, -EINVAL, 0, 0 },
		{ "1 ", -EINVAL, -EINVAL, 0, 0 },
		{ "1.0", -EINVAL, -EINVAL, 0, 0 },
		{ "", -EINVAL, -EINVAL, 0, 0 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		uint32_t v = 0xdead;

		EXPECT_EQ(cases[i].err, qos_parse_u32(cases[i].in, &v)) TH_LOG("'%s'", cases[i].in);
		if (!cases[i].err)
			EXPECT_EQ(cases[i].v, v) TH_LOG("'%s'", cases[i].in);
		EXPECT_EQ(cases[i].err_hex, qos_parse_u32_hex(cases[i].in, &v))
			TH_LOG("hex '%s'", cases[i].in);
		if (!cases[i].err_hex)
			EXPECT_EQ(cases[i].v_hex, v) TH_LOG("hex '%s'", cases[i].in);
	}
}

/* The rows of the [cpu][id] hit counters: the last id of the possible
 * CPUs' list + 1, holes included. */
TEST(cpulist_rows)
{
	EXPECT_EQ(1, qos_cpulist_rows("0"));
	EXPECT_EQ(2, qos_cpulist_rows("0-1"));
	EXPECT_EQ(12, qos_cpulist_rows("0-3,8-11"));
	EXPECT_EQ(3, qos_cpulist_rows("0,2"));
	EXPECT_EQ(-EINVAL, qos_cpulist_rows(""));
	EXPECT_EQ(-EINVAL, qos_cpulist_rows("0-"));
	EXPECT_EQ(-EINVAL, qos_cpulist_rows("0-3x"));
	EXPECT_EQ(-EINVAL, qos_cpulist_rows("0-99999999"));
}

TEST(dscp_names)
{
	static const struct {
		const char *in;
		int err;
		uint8_t dscp;
	} cases[] = {
		{ "0", 0, 0 }, { "63", 0, 63 }, { "012", 0, 12 }, { "046", 0, 46 },
		{ "0x2e", -EINVAL, 0 }, { "ef", 0, 46 },
		{ "EF", 0, 46 }, { "be", 0, 0 }, { "df", 0, 0 }, { "va", 0, 44 },
		{ "le", 0, 1 }, { "cs1", 0, 8 }, { "cs5", 0, 40 }, { "cs7", 0, 56 },
		{ "af11", 0, 10 }, { "af23", 0, 22 }, { "af41", 0, 34 }, { "af43", 0, 38 },
		{ "64", -ERANGE, 0 }, { "cs8", -EINVAL, 0 }, { "af14", -EINVAL, 0 },
		{ "af51", -EINVAL, 0 }, { "-1", -EINVAL, 0 }, { "", -EINVAL, 0 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		uint8_t d = 0xff;
		int err = qos_parse_dscp(cases[i].in, &d);

		EXPECT_EQ(cases[i].err, err) TH_LOG("'%s'", cases[i].in);
		if (!cases[i].err)
			EXPECT_EQ(cases[i].dscp, d) TH_LOG("'%s'", cases[i].in);
	}
}

/* Names: [A-Za-z0-9._:-], 1 to 64 bytes (or the field's own limit);
 * escaped for a terminal whatever they hold. */
TEST(names)
{
	static const char *const ok[] = { "pip", "r1", "be.2", "a_b", "v6:edge", "x-y",
					  "0123456789012345678901234567890123456789"
					  "012345678901234567890123" };
	static const char *const bad[] = { "", "a b", "r\x1b[31m", "a/b", "a@b", "caf\xc3\xa9",
					   "a\"b", "a\\b", "tab\t", "{x}",
					   "0123456789012345678901234567890123456789"
					   "0123456789012345678901234" };
	char buf[QOS_ESC_LEN];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ok); i++)
		EXPECT_TRUE(qos_name_ok(ok[i], QOS_NAME_MAX)) TH_LOG("ok[%u]", i);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		EXPECT_FALSE(qos_name_ok(bad[i], QOS_NAME_MAX)) TH_LOG("bad[%u]", i);
	EXPECT_FALSE(qos_name_ok("0123456789abcdef", 15));
	EXPECT_TRUE(qos_name_ok("0123456789abcde", 15));

	EXPECT_STREQ("r\\x1b[31m", qos_esc("r\x1b[31m", buf, sizeof(buf)));
	EXPECT_STREQ("a\\\\b \\x0a\\xc3\\xa9", qos_esc("a\\b \n\xc3\xa9", buf, sizeof(buf)));
	/* Cut whole: never half an escape. */
	EXPECT_STREQ("ab", qos_esc("ab\x1b", buf, 5));
	EXPECT_STREQ("ab\\x1b", qos_esc("ab\x1b", buf, 7));
}

/* Edits, adjacent transpositions as one, and what qosctl suggests. */
TEST(suggestions)
{
	static const struct {
		const char *a, *b;
		int d;
	} dist[] = {
		{ "rate", "rate", 0 }, { "rat", "rate", 1 }, { "lsit", "list", 1 },
		{ "aply", "apply", 1 }, { "pip-20pc", "pip-20pct", 1 }, { "", "dev", 3 },
		{ "stast", "stats", 1 }, { "ca", "abc", 3 }, { "kitten", "sitting", 3 },
	};
	static const char *const words[] = { "dev", "rate", "src", "dst", "set-dscp" };
	struct qos_suggest s;
	char buf[128];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(dist); i++) {
		EXPECT_EQ(dist[i].d, qos_edit_distance(dist[i].a, dist[i].b))
			TH_LOG("'%s' '%s'", dist[i].a, dist[i].b);
		EXPECT_EQ(dist[i].d, qos_edit_distance(dist[i].b, dist[i].a));
	}
	qos_suggest_init(&s, "rat");
	for (i = 0; i < ARRAY_SIZE(words); i++)
		qos_suggest_add(&s, words[i]);
	EXPECT_STREQ(" (did you mean 'rate'?)", qos_suggest_fmt(&s, buf, sizeof(buf)));
	/* Ties are all offered; a known word, or nothing close, gets none. */
	qos_suggest_init(&s, "pip-2pct");
	qos_suggest_add(&s, "pip-5pct");
	qos_suggest_add(&s, "pip-20pct");
	qos_suggest_add(&s, "pip-5pct");
	EXPECT_STREQ(" (did you mean 'pip-5pct' or 'pip-20pct'?)",
		     qos_suggest_fmt(&s, buf, sizeof(buf)));
	qos_suggest_init(&s, "rate");
	qos_suggest_add(&s, "rate");
	EXPECT_EQ(0, s.n);
	qos_suggest_init(&s, "bogus");
	for (i = 0; i < ARRAY_SIZE(words); i++)
		qos_suggest_add(&s, words[i]);
	EXPECT_STREQ("", qos_suggest_fmt(&s, buf, sizeof(buf)));
	/* A start of a word is offered when no edit is close. */
	qos_suggest_init(&s, "set");
	for (i = 0; i < ARRAY_SIZE(words); i++)
		qos_suggest_add(&s, words[i]);
	EXPECT_STREQ(" (did you mean 'set-dscp'?)", qos_suggest_fmt(&s, buf, sizeof(buf)));
}

/* Render with the print layer into a string; text or JSON. */
static char *pr_render(bool json, void (*fn)(struct qos_pr *p), int *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct qos_pr *p;

	if (!f)
		return NULL;
	p = qos_pr_open(f, json);
	fn(p);
	*err = qos_pr_close(p);
	fclose(f);
	return buf;
}

static void pr_classes(struct qos_pr *p)
{
	qos_pr_string(p, QP_ANY, "dev", "dev %s\n", "eth1");
	qos_pr_open_array(p, "classes");
	qos_pr_open_object(p, NULL);
	qos_pr_string(p, QP_ANY, "name", "  %-4s", "pip");
	qos_pr_rate(p, QP_ANY, "ceil", " ceil %s", 20000000);
	qos_pr_size(p, QP_ANY, "burst", " burst %s", 15140);
	qos_pr_size(p, QP_ANY, "limit", " limit %s", 65536);
	qos_pr_time(p, QP_ANY, "delay_ns", " delay %s", 10000000);
	qos_pr_time(p, QP_TEXT, NULL, " left %s", 59994612000ULL);
	qos_pr_time(p, QP_TEXT, NULL, " rtt %s", 1250000);
	qos_pr_u64(p, QP_ANY, "packets", " %llu pkts", 18446744073709551615ULL);
	qos_pr_u32(p, QP_JSON, "id", NULL, 3);
	qos_pr_bool(p, QP_ANY, "strict", " strict %s", true);
	qos_pr_null(p, QP_ANY, "sla", " sla %s");
	qos_pr_s64(p, QP_TEXT, NULL, " (%lld)", -1);
	qos_pr_u64_opt(p, QP_ANY, "bound_ns", " bound %llu", 7, true);
	qos_pr_double_opt(p, QP_ANY, "loss_pct", " loss %.1f", 0.5, false);
	qos_pr_nl(p);
	qos_pr_close_object(p);
	qos_pr_close_array(p);
	qos_pr_text(p, "%d class\n", 1);
}

TEST(print_one_call_two_forms)
{
	char *text, *json;
	int err;

	text = pr_render(false, pr_classes, &err);
	ASSERT_EQ(0, err);
	EXPECT_STREQ("dev eth1\n  pip  ceil 20mbit burst 15140b limit 64kb delay 10ms left 59.995s rtt 1.250ms "
		     "18446744073709551615 pkts strict yes sla - (-1) bound 7\n1 class\n", text);
	json = pr_render(true, pr_classes, &err);
	ASSERT_EQ(0, err);
	EXPECT_STREQ("{\"dev\":\"eth1\",\"classes\":[{\"name\":\"pip\",\"ceil\":20000000,"
		     "\"burst\":15140,\"limit\":65536,\"delay_ns\":10000000,"
		     "\"packets\":18446744073709551615,\"id\":3,\"strict\":true,"
		     "\"sla\":null,\"bound_ns\":7,\"loss_pct\":null}]}\n", json);
	free(text);
	free(json);
}

static void pr_top_array(struct qos_pr *p)
{
	qos_pr_open_array(p, NULL);
	qos_pr_string(p, QP_ANY, NULL, "%s\n", "a/b");
	qos_pr_u64(p, QP_ANY, NULL, "%llu\n", 7);
	qos_pr_close_array(p);
}

static void pr_unbalanced(struct qos_pr *p)
{
	qos_pr_open_object(p, "x");
	qos_pr_close_array(p);
	qos_pr_u64(p, QP_ANY, "late", "%llu", 1);
}

static void pr_nothing(struct qos_pr *p)
{
}

TEST(print_documents)
{
	struct json_object *o;
	struct qos_pr *p;
	char *s;
	int err;

	s = pr_render(true, pr_top_array, &err);
	ASSERT_EQ(0, err);
	EXPECT_STREQ("[\"a/b\",7]\n", s);	/* no "\/": one flag set */
	free(s);
	/* An unbalanced document is an error and nothing is written. */
	s = pr_render(true, pr_unbalanced, &err);
	EXPECT_EQ(-EINVAL, err);
	EXPECT_STREQ("", s);
	free(s);
	s = pr_render(true, pr_nothing, &err);
	ASSERT_EQ(0, err);
	EXPECT_STREQ("{}\n", s);
	free(s);
	p = qos_pr_open_tree();
	ASSERT_NE(NULL, p);
	qos_pr_u64(p, QP_ANY, "n", "%llu", 5);
	o = qos_pr_take(p);
	ASSERT_NE(NULL, o);
	EXPECT_STREQ("{\"n\":5}", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
}

/* A colour-aware trTCM policer with one action of each kind. */
static const struct qos_policer test_pol = {
	.flags = QOS_POLICE_F_AWARE,
	.tb = { .mode = TB_TRTCM, .cir = 20000000, .pir = 40000000,
		.cbs = 250000 * TB_NBITS_PER_BYTE, .ebs = 500000 * TB_NBITS_PER_BYTE },
	.pre_yellow = 1ULL << 12 | 1ULL << 14,
	.pre_red = 1ULL << 16,
	.act = { { QOS_PA_PASS, 0 }, { QOS_PA_REMARK, 10 }, { QOS_PA_DEMOTE, 4 } },
};

static void pr_policer(struct qos_pr *p)
{
	const char *names[QOS_MAX_CLASSES] = { [4] = "lbe" };
	struct qos_police_report r = { .set = true, .pol = test_pol };

	r.ctr[QOS_FAM_IPV6][TB_RED] = (struct qos_ctr){ .packets = 2, .bytes = 3000 };
	qos_police_config_print(p, &test_pol, names);
	qos_police_stats_print(p, &r);
}

/* Configuration and colour counters: the fields each form has, once. */
TEST(print_policer_both_forms)
{
	char *s;
	int err;

	s = pr_render(false, pr_policer, &err);
	ASSERT_EQ(0, err);
	EXPECT_STREQ("police trtcm aware cir 20mbit cbs 250000b pir 40mbit pbs 500000b "
		     "conform pass exceed remark:10 violate demote:lbe\n"
		     "           green                 0                0              0"
		     "                0              0                0\n"
		     "           yellow                0                0              0"
		     "                0              0                0\n"
		     "           red                   0                0              2"
		     "             3000              0                0\n", s);
	free(s);
	s = pr_render(true, pr_policer, &err);
	ASSERT_EQ(0, err);
	EXPECT_STREQ("{\"mode\":\"trtcm\",\"color\":\"aware\",\"cir_bps\":20000000,"
		     "\"cbs_bytes\":250000,\"pir_bps\":40000000,\"pbs_bytes\":500000,"
		     "\"yellow_dscp\":[12,14],\"red_dscp\":[16],\"conform\":\"pass\","
		     "\"exceed\":\"remark:10\",\"violate\":\"demote:lbe\","
		     "\"green\":{\"ipv4\":{\"packets\":0,\"bytes\":0},"
		     "\"ipv6\":{\"packets\":0,\"bytes\":0},\"ipv6in4\":{\"packets\":0,\"bytes\":0}},"
		     "\"yellow\":{\"ipv4\":{\"packets\":0,\"bytes\":0},"
		     "\"ipv6\":{\"packets\":0,\"bytes\":0},\"ipv6in4\":{\"packets\":0,\"bytes\":0}},"
		     "\"red\":{\"ipv4\":{\"packets\":0,\"bytes\":0},"
		     "\"ipv6\":{\"packets\":2,\"bytes\":3000},\"ipv6in4\":{\"packets\":0,\"bytes\":0}}}\n",
		     s);
	free(s);
}

static char *refl_render(bool json, const struct qos_refl_counts *c, int *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	*err = qos_refl_print(f, json, c);
	fclose(f);
	return buf;
}

/* Text names what was reflected and refused; JSON has every reason. */
TEST(print_reflector_counts)
{
	struct qos_refl_counts c = {
		.packets = { 3, 1 }, .reason = { "allow", "rate" }, .nreasons = 2,
	};
	char *s;
	int err = 0;

	c.dscp[0][46] = 3;
	c.dscp[1][0] = 1;
	c.refused[0][1] = 2;
	s = refl_render(false, &c, &err);
	ASSERT_EQ(0, err);
	EXPECT_STREQ("ipv4 dscp 46: 3 test packets reflected\nipv4 refused, rate: 2\n"
		     "ipv6 dscp 0: 1 test packets reflected\n"
		     "reflected: ipv4 3, ipv6 1, malformed 0\n", s);
	free(s);
	s = refl_render(true, &c, &err);
	ASSERT_EQ(0, err);
	EXPECT_STREQ("{\"malformed\":0,\"sources_evicted\":0,\"ipv4\":{\"packets\":3,"
		     "\"dscp\":{\"46\":3},\"refused\":{\"allow\":0,\"rate\":2},\"cos_refused\":0},"
		     "\"ipv6\":{\"packets\":1,\"dscp\":{\"0\":1},\"refused\":{\"allow\":0,"
		     "\"rate\":0},\"cos_refused\":0}}\n", s);
	free(s);
}

TEST_HARNESS_MAIN
