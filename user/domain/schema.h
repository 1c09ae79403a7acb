/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The declared DiffServ domain and its keys in etcd
 * (Documentation/domain.rst, "Key schema"): plain data, the file of
 * `qosctl domain load` checked whole, each value to and from its JSON,
 * and the path between two routers. No I/O.
 */
#ifndef __QOS_DOMAIN_SCHEMA_H
#define __QOS_DOMAIN_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "lib/names.h"
#include "model/reserve.h"

#define QOS_DOM_ROOT		"/qosctl/"
#define QOS_DOM_DECL		"/qosctl/domain/"
#define QOS_DOM_STAMP		"/qosctl/domain/stamp"
#define QOS_DOM_ROUTER		"/qosctl/domain/router/"	/* R */
#define QOS_DOM_PREFIX		"/qosctl/domain/prefix/"	/* P */
#define QOS_DOM_IFACE		"/qosctl/domain/iface/"	/* R/DEV */
#define QOS_DOM_DESIRED		"/qosctl/router/"	/* R/iface/DEV, R/resv/ID */
#define QOS_DOM_LEDGER		"/qosctl/ledger/"	/* R/DEV */
#define QOS_DOM_RESV		"/qosctl/resv/"		/* ID */
#define QOS_DOM_STATUS		"/qosctl/status/"	/* R */

/* The largest domain file read (bytes), and what it may declare. */
#define QOS_DOM_FILE_MAX	(16U << 20)
#define QOS_DOM_MAX_ROUTERS	4096
/* The longest path, in routers. */
#define QOS_DOM_MAX_HOPS	64
#define QOS_DOM_DEV_MAX		15	/* IFNAMSIZ - 1 */
#define QOS_DOM_KEY_MAX		256

struct qos_dom_iface {
	char router[QOS_NAME_MAX + 1];
	char dev[QOS_DOM_DEV_MAX + 1];
	char rate[32];			/* as written */
	uint64_t rate_bps;
	char profile[256];
	char peer[QOS_NAME_MAX + 1];	/* "": not a link */
	struct qos_resv_class cls;	/* resolved from profile at rate */
	char cls_name[QOS_NAME_MAX + 1];
};

struct qos_dom_prefix {
	char text[64];			/* normalised: host bits cleared */
	int family;
	uint8_t addr[16];
	uint8_t plen;
	char router[QOS_NAME_MAX + 1];
	char dev[QOS_DOM_DEV_MAX + 1];
};

struct qos_domain {
	char (*routers)[QOS_NAME_MAX + 1];
	size_t nrouters;
	struct qos_dom_iface *ifs;
	size_t nifs;
	struct qos_dom_prefix *pfx;
	size_t npfx;
};

void qos_domain_free(struct qos_domain *d);

/*
 * The domain file @root, read from @path (for messages), into @d: every
 * entry checked (names, rates, unknown routers, duplicate interfaces,
 * peers, overlapping prefixes), the profiles not yet (qos_domain_resolve
 * in domain/broker.h). The first error names the file and the entry.
 */
int qos_domain_parse(json_object *root, const char *path, struct qos_domain *d, char *err,
		     size_t errlen);

int qos_domain_router(const struct qos_domain *d, const char *name);
/* The interface @router/@dev of @d, or NULL. */
const struct qos_dom_iface *qos_domain_iface(const struct qos_domain *d, const char *router,
					     const char *dev);
/* The declared prefix holding the whole of @family/@addr/@plen, the
 * longest one; NULL if none does. */
const struct qos_dom_prefix *qos_domain_prefix_of(const struct qos_domain *d, int family,
						  const uint8_t *addr, uint8_t plen);
/* Whether the two prefixes share an address. */
bool qos_prefix_overlap(const struct qos_dom_prefix *a, const struct qos_dom_prefix *b);

/* One hop of a path: the router and the interface it sends out of. */
struct qos_dom_hop {
	const struct qos_dom_iface *ifc;	/* points into the domain */
};

/*
 * The path from @src (router, the interface its hosts are on) to @dst
 * (router, and the interface towards the destination's hosts), over the
 * declared links: the fewest routers; of paths as short, the one whose
 * routers' names, compared one after the other from the source, are
 * smallest (strcmp), and of parallel links the smallest interface name.
 * The hops are the egress interfaces: a link to the next router at every
 * router but the last, @dst_dev at the last. -ENETUNREACH if no path,
 * -ENOENT if @dst_dev is not declared, -E2BIG beyond @max hops.
 */
int qos_domain_path(const struct qos_domain *d, const char *src, const char *dst,
		    const char *dst_dev, struct qos_dom_hop *hops, size_t max, size_t *n);

/* Values, each to and from JSON (see Documentation/domain.rst). */
json_object *qos_dom_iface_json(const struct qos_dom_iface *i);
int qos_dom_iface_from_json(json_object *o, struct qos_dom_iface *i);
json_object *qos_dom_prefix_json(const struct qos_dom_prefix *p);
int qos_dom_prefix_from_json(json_object *o, struct qos_dom_prefix *p);
json_object *qos_dom_router_json(const char *name);

/* A ledger: what the reservations admitted on one interface take. */
struct qos_dom_entry {
	char id[QOS_NAME_MAX + 1];
	uint64_t rate_bps;
	uint64_t burst_bytes;		/* b + M */
	uint64_t end_unix_ns;		/* 0: none */
};

struct qos_dom_ledger {
	struct qos_dom_entry *e;
	size_t n;
};

void qos_dom_ledger_free(struct qos_dom_ledger *l);
json_object *qos_dom_ledger_json(const struct qos_dom_ledger *l, const struct qos_resv_sum *s);
int qos_dom_ledger_from_json(json_object *o, struct qos_dom_ledger *l);
/* Drop the entries that ended at @now; sum the others. */
struct qos_resv_sum qos_dom_ledger_live(struct qos_dom_ledger *l, uint64_t now);
int qos_dom_ledger_add(struct qos_dom_ledger *l, const struct qos_dom_entry *e);
/* Remove entry @id; whether it was there. */
bool qos_dom_ledger_del(struct qos_dom_ledger *l, const char *id);

/*
 * Admit @q, reservation @id ending at @end_unix_ns (0: none), on every hop
 * of @hops, whose ledgers are @l (entries ended at @now dropped): 0
 * (QOS_RESV_ADMIT) with the entry added to every ledger and the sums after
 * it in @s; or the verdict of the first hop that refuses, *@at its index
 * and @s[*@at] its sum without @q (a class with no reserve-class refuses
 * by rate); or -ENOMEM.
 */
int qos_domain_admit(const struct qos_dom_hop *hops, size_t n, struct qos_dom_ledger *l,
		     struct qos_resv_sum *s, const struct qos_resv_req *q, const char *id,
		     uint64_t end_unix_ns, uint64_t now, size_t *at);

/* Add @v (consumed, NULL: ENOMEM) to object @o as @key: 0 or -ENOMEM. */
int qos_dom_json_add(json_object *o, const char *key, json_object *v);

/* The key of reservation @id for the router of hop @hop of its path:
 * /qosctl/router/R/resv/ID at the first (the edge, which installs it),
 * /qosctl/router/R/transit/ID further on (checked for drift only). */
const char *qos_dom_hop_key(char *buf, size_t len, const char *router, const char *id,
			    size_t hop);

/* Keys: "/qosctl/ledger/r1/eth1" into @buf. */
const char *qos_dom_key(char *buf, size_t len, const char *base, const char *a, const char *b);

#endif /* __QOS_DOMAIN_SCHEMA_H */
