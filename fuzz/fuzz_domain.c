// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the domain file of `qosctl domain load`
 * (qos_domain_parse(), user/domain/schema.c): the input is the file,
 * parsed by json-c as the command does. A domain it accepts must give,
 * between any two routers with a path, a path that holds together (each
 * hop's peer the next hop's router, the last hop the destination's
 * interface), and each interface and prefix must come back the same from
 * its JSON. Profiles are not resolved (no file is read). Seeds: written
 * by LLVMFuzzerInitialize() (fuzz/seeds.h); fuzz/domain.dict holds the keys.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "domain/schema.h"
#include "seeds.h"

static const char *const seeds[] = {
	"{\"routers\": [\"r1\", \"r2\"], \"interfaces\": [{\"router\": \"r1\", \"dev\": \"eth1\", "
	"\"rate\": \"100mbit\", \"profile\": \"pip-20pct\", \"peer\": \"r2\"}, {\"router\": \"r2\", "
	"\"dev\": \"eth0\", \"rate\": \"1gbit\", \"profile\": \"pip-20pct\", \"peer\": \"r1\"}, "
	"{\"router\": \"r1\", \"dev\": \"eth0\", \"rate\": \"100mbit\", \"profile\": \"pip-20pct\"}], "
	"\"prefixes\": [{\"prefix\": \"10.1.0.0/24\", \"router\": \"r1\", \"dev\": \"eth0\"}, "
	"{\"prefix\": \"2001:db8::/48\", \"router\": \"r2\", \"dev\": \"eth0\"}]}",
	"{\"routers\": [], \"interfaces\": []}",
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char name[16];
	size_t i;

	for (i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		snprintf(name, sizeof(name), "domain-%zu", i);
		fuzz_seed(name, seeds[i], strlen(seeds[i]));
	}
	return 0;
}

static void check_path(const struct qos_domain *d, const char *src, const struct qos_dom_iface *to)
{
	struct qos_dom_hop hops[QOS_DOM_MAX_HOPS];
	size_t i, n;

	if (qos_domain_path(d, src, to->router, to->dev, hops, QOS_DOM_MAX_HOPS, &n))
		return;
	if (!n || hops[n - 1].ifc != to || strcmp(hops[0].ifc->router, src))
		abort();
	for (i = 0; i + 1 < n; i++)
		if (strcmp(hops[i].ifc->peer, hops[i + 1].ifc->router))
			abort();
}

static void check_values(const struct qos_domain *d)
{
	struct qos_dom_iface f;
	struct qos_dom_prefix p;
	json_object *o;
	size_t i;

	for (i = 0; i < d->nifs; i++) {
		o = qos_dom_iface_json(&d->ifs[i]);
		if (!o || qos_dom_iface_from_json(o, &f) || strcmp(f.dev, d->ifs[i].dev) ||
		    strcmp(f.peer, d->ifs[i].peer) || f.rate_bps != d->ifs[i].rate_bps)
			abort();
		json_object_put(o);
	}
	for (i = 0; i < d->npfx; i++) {
		o = qos_dom_prefix_json(&d->pfx[i]);
		if (!o || qos_dom_prefix_from_json(o, &p) || strcmp(p.text, d->pfx[i].text))
			abort();
		json_object_put(o);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_tokener *tok = json_tokener_new();
	struct qos_domain d;
	json_object *root;
	char err[512];
	size_t i, j;

	if (!tok)
		abort();
	root = json_tokener_parse_ex(tok, (const char *)data, (int)(size > 1 << 16 ? 1 << 16 : size));
	json_tokener_free(tok);
	if (!root)
		return 0;
	if (!qos_domain_parse(root, "fuzz.json", &d, err, sizeof(err))) {
		for (i = 0; i < d.nrouters && i < 32; i++)
			for (j = 0; j < d.nifs && j < 64; j++)
				check_path(&d, d.routers[i], &d.ifs[j]);
		check_values(&d);
		qos_domain_free(&d);
	}
	json_object_put(root);
	return 0;
}
