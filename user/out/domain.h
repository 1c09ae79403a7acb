/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `qosctl domain` as it prints, text and JSON through the print layer:
 * a load's outcome, an admitted reservation, the reservations, the status
 * of the routers and their interfaces.
 */
#ifndef __QOS_OUT_DOMAIN_H
#define __QOS_OUT_DOMAIN_H

#include "domain/broker.h"
#include "out/print.h"

void qos_out_domain_load(struct qos_pr *p, const char *path, const struct qos_load_res *r);
/* One reservation (its value in etcd), with whether each hop installed
 * it if @v has the routers' status (NULL: not shown). */
void qos_out_domain_resv(struct qos_pr *p, json_object *resv, const struct qos_dom_view *v);
void qos_out_domain_resv_list(struct qos_pr *p, const struct qos_dom_view *v);
void qos_out_domain_status(struct qos_pr *p, const struct qos_dom_view *v);

#endif /* __QOS_OUT_DOMAIN_H */
