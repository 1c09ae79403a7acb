// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Suggestions for mistyped commands, keys and profile names. A candidate
 * is offered when it is within a third of the word's length in edits (at
 * least one), or when the word is the start of it; the closest win, and
 * ties are all shown, up to QOS_SUGGEST_MAX, as git does.
 */
#include <stdio.h>
#include <string.h>

#include "lib/suggest.h"

static int min3(int a, int b, int c)
{
	int m = a < b ? a : b;

	return m < c ? m : c;
}

int qos_edit_distance(const char *a, const char *b)
{
	int rows[3][QOS_SUGGEST_LEN + 1];
	int *prev2 = rows[0], *prev = rows[1], *cur = rows[2], *t;
	size_t la = strnlen(a, QOS_SUGGEST_LEN), lb = strnlen(b, QOS_SUGGEST_LEN);
	size_t i, j;

	for (j = 0; j <= lb; j++)
		prev[j] = j;
	for (i = 1; i <= la; i++) {
		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			int cost = a[i - 1] != b[j - 1];

			cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    prev2[j - 2] + 1 < cur[j])
				cur[j] = prev2[j - 2] + 1;
		}
		t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

void qos_suggest_init(struct qos_suggest *s, const char *word)
{
	memset(s, 0, sizeof(*s));
	s->word = word;
}

/* Lower is closer; -1: not close enough. */
static int score(const char *word, const char *cand)
{
	size_t len = strlen(word);
	int limit = len / 3 > 1 ? len / 3 : 1;
	int d = qos_edit_distance(word, cand);

	if (d <= limit)
		return d;
	if (len >= 2 && !strncmp(word, cand, len))
		return limit + 1;
	return -1;
}

void qos_suggest_add(struct qos_suggest *s, const char *cand)
{
	int i, sc;

	if (!*s->word || !strcmp(s->word, cand))
		return;
	sc = score(s->word, cand);
	if (sc < 0 || (s->n && sc > s->score))
		return;
	if (!s->n || sc < s->score) {
		s->n = 0;
		s->score = sc;
	}
	for (i = 0; i < s->n; i++)
		if (!strcmp(s->best[i], cand))
			return;
	if (s->n < QOS_SUGGEST_MAX)
		s->best[s->n++] = cand;
}

const char *qos_suggest_fmt(const struct qos_suggest *s, char *buf, size_t len)
{
	size_t off;
	int i;

	if (!s->n) {
		snprintf(buf, len, "%s", "");
		return buf;
	}
	off = snprintf(buf, len, " (did you mean");
	for (i = 0; i < s->n && off < len; i++)
		off += snprintf(buf + off, len - off, "%s'%s'",
				!i ? " " : i == s->n - 1 ? " or " : ", ", s->best[i]);
	if (off < len)
		snprintf(buf + off, len - off, "?)");
	return buf;
}
