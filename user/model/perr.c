// SPDX-License-Identifier: LGPL-2.1-or-later
/* Profile errors and warnings, "FILE:LINE: KEY: message" (model/perr.h). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>

#include "lib/util.h"
#include "model/perr.h"
#include "model/profile.h"

int qos_profile_errf(char *err, size_t len, const struct qos_profile *p, int line,
		     const char *key, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(err, len, "%s:%d: %s: %s", p->path, line, key, msg);
	return -EINVAL;
}

void qos_profile_rate_check(const struct qos_profile *p, int line, const char *key,
			    const char *v, uint64_t bps, uint64_t link_bps)
{
	char where[PATH_MAX + 64];

	snprintf(where, sizeof(where), "%s:%d: %s:", p->path, line, key);
	qos_rate_check(where, v, bps, link_bps);
}
