/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef __QOS_OUT_PROFILES_H
#define __QOS_OUT_PROFILES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model/profile.h"

/* A profile directory, in search order. */
struct qos_profile_dir_row {
	const char *path;
	const char *origin;		/* "local", "built-in", ... */
	int err;			/* errno of opening it, 0 */
};

/* A profile found in one of them. */
struct qos_profile_row {
	const char *name;
	int dir;			/* index of its directory */
	const char *path;
	const char *desc;		/* its description, or why it does not load */
	bool ok;			/* it loads */
	const char *hidden_by;		/* the path of the profile found first, or NULL */
};

/* `qosctl list`: each directory, then its profiles (text), or the two
 * lists (JSON). 0 or -errno. */
int qos_profiles_print(FILE *f, bool json, const struct qos_profile_dir_row *dirs, int ndirs,
		       const struct qos_profile_row *prof, size_t n);

/* `qosctl validate`: profile @p checked at MTU @mtu (given, or assumed
 * if not @mtu_given), with the rates of @plan at link rate @bps if not 0.
 * 0 or -errno. */
int qos_validate_print(FILE *f, bool json, const struct qos_profile *p, uint64_t bps,
		       uint32_t mtu, bool mtu_given, const struct qos_class_plan *plan);

#endif /* __QOS_OUT_PROFILES_H */
