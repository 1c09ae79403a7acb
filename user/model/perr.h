/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How a profile names what is wrong in it: "FILE:LINE: KEY: message", for
 * errors and for warnings alike. Every file of the profile model reports
 * through it, so none of them calls another for its messages.
 */
#ifndef __QOS_MODEL_PERR_H
#define __QOS_MODEL_PERR_H

#include <stddef.h>
#include <stdint.h>

struct qos_profile;

/* Write "FILE:LINE: KEY: message" into @err; returns -EINVAL. Every
 * profile error goes through it, so all name the file, line and key. */
int qos_profile_errf(char *err, size_t len, const struct qos_profile *p, int line,
		     const char *key, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Warn (qos_rate_check) about rate @v of @key at @line, resolved to @bps
 * (against @link_bps for a share, else 0): "FILE:LINE: KEY: ...". */
void qos_profile_rate_check(const struct qos_profile *p, int line, const char *key,
			    const char *v, uint64_t bps, uint64_t link_bps);

#endif /* __QOS_MODEL_PERR_H */
