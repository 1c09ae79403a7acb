/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Everything the BPF programs and qosctl share, for qosctl's side:
 * qos_consts.h (sizes, enums, flag bits), qos_shared.h (map keys and
 * values, the device configuration) and qos_meta.h (what qosctl installed,
 * which the data path never reads). The BPF programs include the part
 * they need.
 */
#ifndef __QOS_COMMON_H
#define __QOS_COMMON_H

#include "qos_consts.h"
#include "qos_meta.h"
#include "qos_shared.h"

#endif /* __QOS_COMMON_H */
