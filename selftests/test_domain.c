// SPDX-License-Identifier: GPL-2.0-only
/*
 * The domain's pure parts (user/domain/schema.c): the domain file checked
 * whole with each error naming its entry, the path between two routers
 * and its tie rule, the values' JSON both ways, and admission across the
 * hops of a path with the bottleneck named, figures written out by hand.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "domain/schema.h"

/* r1 - r2 - r3 in a line, hosts on r1 eth0 and r3 eth0. */
static const char *line3 =
	"{\"routers\": [\"r1\", \"r2\", \"r3\"], \"interfaces\": ["
	"{\"router\": \"r1\", \"dev\": \"eth0\", \"rate\": \"100mbit\", \"profile\": \"p\"},"
	"{\"router\": \"r1\", \"dev\": \"eth1\", \"rate\": \"100mbit\", \"profile\": \"p\", \"peer\": \"r2\"},"
	"{\"router\": \"r2\", \"dev\": \"eth0\", \"rate\": \"100mbit\", \"profile\": \"p\", \"peer\": \"r1\"},"
	"{\"router\": \"r2\", \"dev\": \"eth1\", \"rate\": \"50mbit\", \"profile\": \"p\", \"peer\": \"r3\"},"
	"{\"router\": \"r3\", \"dev\": \"eth1\", \"rate\": \"100mbit\", \"profile\": \"p\", \"peer\": \"r2\"},"
	"{\"router\": \"r3\", \"dev\": \"eth0\", \"rate\": \"100mbit\", \"profile\": \"p\"}],"
	"\"prefixes\": [{\"prefix\": \"10.1.0.0/24\", \"router\": \"r1\", \"dev\": \"eth0\"},"
	"{\"prefix\": \"2001:db8:1::/64\", \"router\": \"r1\", \"dev\": \"eth0\"},"
	"{\"prefix\": \"10.3.0.0/24\", \"router\": \"r3\", \"dev\": \"eth0\"},"
	"{\"prefix\": \"2001:db8:3::/64\", \"router\": \"r3\", \"dev\": \"eth0\"}]}";

static int parse(const char *text, struct qos_domain *d, char *err, size_t len)
{
	json_object *root = json_tokener_parse(text);
	int ret;

	if (!root)
		return -EBADMSG;
	ret = qos_domain_parse(root, "d.json", d, err, len);
	json_object_put(root);
	return ret;
}

TEST(parse_line)
{
	struct qos_domain d;
	char err[256] = "";

	ASSERT_EQ(0, parse(line3, &d, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(3, d.nrouters);
	EXPECT_EQ(6, d.nifs);
	EXPECT_EQ(4, d.npfx);
	/* The key the prefix is written under. */
	EXPECT_STREQ("10.1.0.0/24", d.pfx[0].text);
	EXPECT_STREQ("2001:db8:1::/64", d.pfx[1].text);
	EXPECT_EQ(50000000, qos_domain_iface(&d, "r2", "eth1")->rate_bps);
	EXPECT_STREQ("r3", qos_domain_iface(&d, "r2", "eth1")->peer);
	EXPECT_STREQ("", qos_domain_iface(&d, "r1", "eth0")->peer);
	qos_domain_free(&d);
}

/* @text with @from replaced by @to (once). */
static char *edit(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	char *out = malloc(strlen(text) + strlen(to) + 1);

	if (!at || !out)
		abort();
	sprintf(out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	return out;
}

static void expect_error(struct __test_metadata *_metadata, const char *from, const char *to,
			 const char *msg)
{
	char *text = edit(line3, from, to), err[256] = "";
	struct qos_domain d;

	EXPECT_EQ(-EINVAL, parse(text, &d, err, sizeof(err)));
	EXPECT_STREQ(msg, err);
	free(text);
}

TEST(parse_errors)
{
	expect_error(_metadata, "\"router\": \"r2\", \"dev\": \"eth1\"",
		     "\"router\": \"r9\", \"dev\": \"eth1\"",
		     "d.json: interfaces[3]: router 'r9' is not a declared router");
	expect_error(_metadata, "\"peer\": \"r3\"", "\"peer\": \"r7\"",
		     "d.json: interfaces[3]: peer 'r7' is not a declared router");
	expect_error(_metadata, "\"router\": \"r3\", \"dev\": \"eth0\"",
		     "\"router\": \"r2\", \"dev\": \"eth0\"",
		     "d.json: interfaces[5]: interface r2 eth0 is declared twice (first in "
		     "interfaces[2])");
	expect_error(_metadata, "\"10.3.0.0/24\"", "\"10.1.0.128/25\"",
		     "d.json: prefixes[2]: prefix 10.1.0.128/25 overlaps 10.1.0.0/24 of "
		     "prefixes[0]");
	expect_error(_metadata, "\"2001:db8:3::/64\"", "\"2001:db8::/32\"",
		     "d.json: prefixes[3]: prefix 2001:db8::/32 overlaps 2001:db8:1::/64 of "
		     "prefixes[1]");
	expect_error(_metadata, "\"router\": \"r3\", \"dev\": \"eth0\"}]}",
		     "\"router\": \"r3\", \"dev\": \"eth9\"}]}",
		     "d.json: prefixes[3]: interface r3 eth9 is not declared");
	expect_error(_metadata, "\"rate\": \"50mbit\"", "\"rate\": \"fast\"",
		     "d.json: interfaces[3]: rate 'fast': not a rate (100mbit, 1gbit)");
	expect_error(_metadata, "\"peer\": \"r3\"", "\"peer\": \"r2\"",
		     "d.json: interfaces[3]: peer 'r2' is its own router");
	expect_error(_metadata, "\"peer\": \"r3\"", "\"peer\": \"r3\", \"speed\": 1",
		     "d.json: interfaces[3]: unknown key 'speed' (router, dev, rate, profile, "
		     "peer)");
	expect_error(_metadata, "\"10.3.0.0/24\"", "\"10.3.0.1/24\"",
		     "d.json: prefixes[2]: prefix '10.3.0.1/24': not an IPv4 or IPv6 prefix");
	expect_error(_metadata, "[\"r1\", \"r2\", \"r3\"]", "[\"r1\", \"r2\", \"r3\", \"r2\"]",
		     "d.json: routers[3]: router 'r2' is declared twice");
}

static void expect_path(struct __test_metadata *_metadata, const struct qos_domain *d,
			const char *src, const char *dst, const char *dev, const char *want)
{
	struct qos_dom_hop hops[QOS_DOM_MAX_HOPS];
	char got[256] = "";
	size_t i, n;

	ASSERT_EQ(0, qos_domain_path(d, src, dst, dev, hops, QOS_DOM_MAX_HOPS, &n));
	for (i = 0; i < n; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s %s", i ? ", " : "",
			 hops[i].ifc->router, hops[i].ifc->dev);
	EXPECT_STREQ(want, got);
}

TEST(path_line)
{
	struct qos_dom_hop hops[QOS_DOM_MAX_HOPS];
	struct qos_domain d;
	char err[256] = "";
	size_t n;

	ASSERT_EQ(0, parse(line3, &d, err, sizeof(err))) TH_LOG("%s", err);
	expect_path(_metadata, &d, "r1", "r3", "eth0", "r1 eth1, r2 eth1, r3 eth0");
	expect_path(_metadata, &d, "r3", "r1", "eth0", "r3 eth1, r2 eth0, r1 eth0");
	/* Both ends on one router: its interface towards the hosts alone. */
	expect_path(_metadata, &d, "r1", "r1", "eth0", "r1 eth0");
	EXPECT_EQ(-ENOENT, qos_domain_path(&d, "r1", "r3", "eth7", hops, 8, &n));
	EXPECT_EQ(-E2BIG, qos_domain_path(&d, "r1", "r3", "eth0", hops, 2, &n));
	qos_domain_free(&d);
}

/*
 * A diamond with a long way round: r1 to r4 through rb or ra (two hops
 * each; ra wins by name though declared last), or through x, y, z (four
 * hops, never taken); two parallel links r1 -> ra (eth3 wins over eth5).
 * r4 -> r1 has no link: unreachable that way.
 */
static const char *diamond =
	"{\"routers\": [\"r1\", \"rb\", \"ra\", \"r4\", \"x\", \"y\", \"z\"], \"interfaces\": ["
	"{\"router\": \"r1\", \"dev\": \"eth0\", \"rate\": \"1gbit\", \"profile\": \"p\", \"peer\": \"x\"},"
	"{\"router\": \"x\", \"dev\": \"e\", \"rate\": \"1gbit\", \"profile\": \"p\", \"peer\": \"y\"},"
	"{\"router\": \"y\", \"dev\": \"e\", \"rate\": \"1gbit\", \"profile\": \"p\", \"peer\": \"z\"},"
	"{\"router\": \"z\", \"dev\": \"e\", \"rate\": \"1gbit\", \"profile\": \"p\", \"peer\": \"r4\"},"
	"{\"router\": \"r1\", \"dev\": \"eth1\", \"rate\": \"1gbit\", \"profile\": \"p\", \"peer\": \"rb\"},"
	"{\"router\": \"r1\", \"dev\": \"eth5\", \"rate\": \"1gbit\", \"profile\": \"p\", \"peer\": \"ra\"},"
	"{\"router\": \"r1\", \"dev\": \"eth3\", \"rate\": \"1gbit\", \"profile\": \"p\", \"peer\": \"ra\"},"
	"{\"router\": \"rb\", \"dev\": \"eth0\", \"rate\": \"1gbit\", \"profile\": \"p\", \"peer\": \"r4\"},"
	"{\"router\": \"ra\", \"dev\": \"eth0\", \"rate\": \"1gbit\", \"profile\": \"p\", \"peer\": \"r4\"},"
	"{\"router\": \"r4\", \"dev\": \"lan\", \"rate\": \"1gbit\", \"profile\": \"p\"},"
	"{\"router\": \"r1\", \"dev\": \"lan\", \"rate\": \"1gbit\", \"profile\": \"p\"}]}";

TEST(path_ties)
{
	struct qos_dom_hop hops[QOS_DOM_MAX_HOPS];
	struct qos_domain d;
	char err[256] = "";
	size_t n;

	ASSERT_EQ(0, parse(diamond, &d, err, sizeof(err))) TH_LOG("%s", err);
	expect_path(_metadata, &d, "r1", "r4", "lan", "r1 eth3, ra eth0, r4 lan");
	expect_path(_metadata, &d, "x", "r4", "lan", "x e, y e, z e, r4 lan");
	EXPECT_EQ(-ENETUNREACH, qos_domain_path(&d, "r4", "r1", "lan", hops, 8, &n));
	qos_domain_free(&d);
}

TEST(values_both_ways)
{
	struct qos_dom_iface f = { .router = "r1", .dev = "eth1", .rate = "100mbit",
				   .rate_bps = 100000000, .profile = "pip-20pct", .peer = "r2",
				   .cls_name = "pip" }, g;
	struct qos_dom_prefix p, q;
	json_object *o;
	struct qos_domain d;
	char err[256];

	f.cls = (struct qos_resv_class){ .cap_bps = 18000000, .ceil_bps = 20000000,
					 .headroom_pct = 10, .delay_ns = 10000000,
					 .max_pkt = 1514 };
	o = qos_dom_iface_json(&f);
	ASSERT_NE(NULL, o);
	EXPECT_STREQ("{\"router\":\"r1\",\"dev\":\"eth1\",\"rate\":\"100mbit\",\"rate_bps\":"
		     "100000000,\"profile\":\"pip-20pct\",\"peer\":\"r2\",\"class\":{\"name\":"
		     "\"pip\",\"cap_bps\":18000000,\"ceil_bps\":20000000,\"headroom_pct\":10,"
		     "\"delay_ns\":10000000,\"max_pkt_bytes\":1514}}",
		     json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	ASSERT_EQ(0, qos_dom_iface_from_json(o, &g));
	json_object_put(o);
	EXPECT_STREQ("r2", g.peer);
	EXPECT_STREQ("pip", g.cls.name);
	EXPECT_EQ(18000000, g.cls.cap_bps);
	EXPECT_EQ(10000000, g.cls.delay_ns);
	EXPECT_EQ(1514, g.cls.max_pkt);

	ASSERT_EQ(0, parse(line3, &d, err, sizeof(err)));
	p = d.pfx[1];
	o = qos_dom_prefix_json(&p);
	ASSERT_EQ(0, qos_dom_prefix_from_json(o, &q));
	json_object_put(o);
	EXPECT_STREQ("2001:db8:1::/64", q.text);
	EXPECT_EQ(64, q.plen);
	EXPECT_TRUE(qos_prefix_overlap(&p, &q));
	EXPECT_EQ(&d.pfx[3], qos_domain_prefix_of(&d, q.family, d.pfx[3].addr, 128));
	EXPECT_EQ(NULL, qos_domain_prefix_of(&d, q.family, d.pfx[3].addr, 32));
	qos_domain_free(&d);
}

TEST(ledger_both_ways)
{
	struct qos_dom_entry a = { "a", 2000000, 4542, 0 }, b = { "b", 1000000, 4542, 500 };
	struct qos_dom_ledger l = {}, m;
	struct qos_resv_sum s;
	json_object *o;

	ASSERT_EQ(0, qos_dom_ledger_add(&l, &a));
	ASSERT_EQ(0, qos_dom_ledger_add(&l, &b));
	s = qos_dom_ledger_live(&l, 499);
	EXPECT_EQ(3000000, s.rate_bps);
	EXPECT_EQ(9084, s.burst);
	EXPECT_EQ(2, s.n);
	o = qos_dom_ledger_json(&l, &s);
	ASSERT_EQ(0, qos_dom_ledger_from_json(o, &m));
	json_object_put(o);
	EXPECT_EQ(2, m.n);
	EXPECT_EQ(500, m.e[1].end_unix_ns);
	/* At its end b is no longer counted, and dropped. */
	s = qos_dom_ledger_live(&m, 500);
	EXPECT_EQ(2000000, s.rate_bps);
	EXPECT_EQ(1, m.n);
	EXPECT_TRUE(qos_dom_ledger_del(&m, "a"));
	EXPECT_FALSE(qos_dom_ledger_del(&m, "a"));
	EXPECT_EQ(0, m.n);
	qos_dom_ledger_free(&l);
	qos_dom_ledger_free(&m);
}

/*
 * Three hops: pip-20pct at 100mbit (cap 18mbit, ceil 20mbit), at 50mbit
 * (cap 9mbit, ceil 10mbit: 12500 bytes in 10 ms), at 100mbit. 2mbit with
 * 3028-byte bursts: each takes 4542 bytes of a queue (b + M). The middle
 * hop holds two (9084 bytes, 7.27 ms at 10mbit); a third would take
 * 13626 bytes, 10.9 ms: refused by delay there, nowhere else touched.
 */
TEST(admit_across_hops)
{
	struct qos_dom_iface f[3] = {};
	struct qos_dom_hop hops[3] = { { &f[0] }, { &f[1] }, { &f[2] } };
	struct qos_dom_ledger l[3] = {};
	struct qos_resv_sum s[3];
	struct qos_resv_req q = { 2000000, 3028 };
	size_t i, at = 99;

	for (i = 0; i < 3; i++)
		f[i].cls = (struct qos_resv_class){ .name = "pip", .cap_bps = 18000000,
						    .ceil_bps = 20000000, .headroom_pct = 10,
						    .delay_ns = 10000000, .max_pkt = 1514 };
	f[1].cls.cap_bps = 9000000;
	f[1].cls.ceil_bps = 10000000;
	EXPECT_EQ(QOS_RESV_ADMIT, qos_domain_admit(hops, 3, l, s, &q, "a", 0, 0, &at));
	EXPECT_EQ(QOS_RESV_ADMIT, qos_domain_admit(hops, 3, l, s, &q, "b", 100, 0, &at));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(2, l[i].n);
		EXPECT_EQ(4000000, s[i].rate_bps);
		EXPECT_EQ(9084, s[i].burst);
	}
	EXPECT_EQ(7267200, qos_resv_delay_ns(&f[1].cls, &s[1]));
	EXPECT_EQ(QOS_RESV_DELAY, qos_domain_admit(hops, 3, l, s, &q, "c", 0, 50, &at));
	EXPECT_EQ(1, at);
	EXPECT_EQ(9084, s[1].burst);
	EXPECT_EQ(2, l[0].n);
	/* Once b has ended, there is room again, on every hop. */
	EXPECT_EQ(QOS_RESV_ADMIT, qos_domain_admit(hops, 3, l, s, &q, "c", 0, 100, &at));
	EXPECT_EQ(2, l[2].n);
	EXPECT_STREQ("c", l[2].e[1].id);
	/* By rate: 8mbit more does not fit the middle hop's 9mbit. */
	q = (struct qos_resv_req){ 8000000, 1514 };
	EXPECT_EQ(QOS_RESV_RATE, qos_domain_admit(hops, 3, l, s, &q, "d", 0, 100, &at));
	EXPECT_EQ(1, at);
	/* No reserve-class on an interface: refused there by rate. */
	f[2].cls.cap_bps = 0;
	q = (struct qos_resv_req){ 1000, 1514 };
	EXPECT_EQ(QOS_RESV_RATE, qos_domain_admit(hops, 3, l, s, &q, "e", 0, 100, &at));
	EXPECT_EQ(2, at);
	for (i = 0; i < 3; i++)
		qos_dom_ledger_free(&l[i]);
}

TEST_HARNESS_MAIN
