/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Between the files of the profile model only: the INI reader
 * (profile_read.c) hands each key to the key handlers (profile_keys.c),
 * then the loaded profile to the checks (profile_check.c). Other layers
 * include model/profile.h.
 */
#ifndef __QOS_MODEL_PROFILE_INT_H
#define __QOS_MODEL_PROFILE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "model/profile.h"

struct parse_ctx {
	struct qos_profile *p;
	FILE *f;
	int line;		/* line being handled, counted by our reader */
	int section_line;	/* line of the last [section] header */
	char *err;
	size_t errlen;
	bool failed;
	void *sections;		/* tsearch() tree of struct section_seen */
	bool in_key;		/* a key was given since the header: libinih's prev_name */
	bool continued;		/* the line continues the value of that key */
	unsigned int nkeys;
	struct {
		char name[64];	/* libinih cuts names at 49 characters */
		int line;
	} keys[64];		/* of the current section; none has half as many */
};

/*
 * The parse's first error, "FILE:LINE: KEY: message" at the line being
 * read; later ones are dropped. Returns 0, libinih's "stop".
 */
int qos_parse_fail(struct parse_ctx *c, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* One key of @section, read once: 1, or qos_parse_fail()'s 0. */
int qos_profile_key(struct parse_ctx *c, const char *section, const char *key, const char *v);

/*
 * Everything a profile must hold whatever the link: classes and their ids,
 * DSCPs and named classes, the rules, the policers, CBQ's parameters
 * mapped onto HTB and the schedulers' constraints. Error as perr.h.
 */
int qos_profile_check(struct qos_profile *p, char *err, size_t errlen);

#endif /* __QOS_MODEL_PROFILE_INT_H */
