/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * "Did you mean ...?": the known words closest to a mistyped one.
 */
#ifndef __QOS_SUGGEST_H
#define __QOS_SUGGEST_H

#include <stddef.h>

#define QOS_SUGGEST_MAX 3

/*
 * Edit distance with adjacent transpositions (optimal string alignment):
 * "rat" -> "rate" is 1, "lsit" -> "list" is 1. Words longer than
 * QOS_SUGGEST_LEN are compared on their first QOS_SUGGEST_LEN bytes.
 */
#define QOS_SUGGEST_LEN 64
int qos_edit_distance(const char *a, const char *b);

/* The best candidates offered so far; zero-initialise, then _add each. */
struct qos_suggest {
	const char *word;
	const char *best[QOS_SUGGEST_MAX];
	int n;
	int score;
};

void qos_suggest_init(struct qos_suggest *s, const char *word);
void qos_suggest_add(struct qos_suggest *s, const char *cand);

/* " (did you mean 'a' or 'b'?)", or "" when nothing was close enough. */
const char *qos_suggest_fmt(const struct qos_suggest *s, char *buf, size_t len);

#endif /* __QOS_SUGGEST_H */
