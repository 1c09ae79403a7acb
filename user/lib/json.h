/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one serialisation every JSON qosctl writes uses: the print layer's
 * documents (out/print.c) and the files others read (probe/pstate.c).
 */
#ifndef __QOS_LIB_JSON_H
#define __QOS_LIB_JSON_H

struct json_object;

/* @o as one line, without escaping '/'; owned by @o. NULL on ENOMEM. */
const char *qos_json_text(struct json_object *o);

#endif /* __QOS_LIB_JSON_H */
