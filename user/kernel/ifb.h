/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The IFB of download shaping (Documentation/design.rst, "Download
 * shaping"): one per device, in the device's network namespace, named
 * "qifb<ifindex of the device>" so that two devices never meet in one
 * name, and known by its own ifindex once created.
 */
#ifndef __QOS_KERNEL_IFB_H
#define __QOS_KERNEL_IFB_H

#include <net/if.h>
#include <stdbool.h>

/* "qifb" + up to 10 digits: within IFNAMSIZ for every ifindex. */
void qos_ifb_name(int dev_ifindex, char name[IF_NAMESIZE]);

/* The device that holds the IFB's name for @dev_ifindex: its ifindex and
 * whether it is an IFB; -ENOENT when the name is free. */
int qos_ifb_find(int dev_ifindex, int *ifindex, bool *is_ifb);

/* Create the IFB of @dev_ifindex, up; its ifindex in @ifindex. */
int qos_ifb_create(int dev_ifindex, int *ifindex);

/* Delete IFB @ifindex if it is still the IFB of @dev_ifindex (name and
 * kind); a device gone already is not an error. */
int qos_ifb_delete(int dev_ifindex, int ifindex);

#endif /* __QOS_KERNEL_IFB_H */
