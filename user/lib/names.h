/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Names an operator gives (classes, rules, reservations, probe states) and
 * how any text reaches a terminal or a scraper.
 */
#ifndef __QOS_NAMES_H
#define __QOS_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The longest name, whatever field holds it (some hold fewer). */
#define QOS_NAME_MAX		64
/* What qos_name_ok() takes, for error messages. */
#define QOS_NAME_CHARS		"letters, digits, '.', '_', ':' or '-'"

/*
 * 1 to @max bytes (at most QOS_NAME_MAX) of [A-Za-z0-9._:-]: safe in a
 * file name, a table, JSON and a Prometheus label, and never a terminal
 * escape. Checked where a name enters: profile, command line, JSON.
 */
bool qos_name_ok(const char *s, size_t max);

/* Room for qos_esc() of a name of QOS_NAME_MAX bytes. */
#define QOS_ESC_LEN		(4 * QOS_NAME_MAX + 1)

/*
 * @s for a table or a message: printable ASCII as it is, a backslash
 * doubled, any other byte as \xNN, cut to fit @len. Returns @buf.
 */
const char *qos_esc(const char *s, char *buf, size_t len);

/* @s to @f with any byte that is not printable ASCII as \xNN (a backslash
 * kept as it is): every message qosctl prints goes through it. */
void qos_fputs_printable(const char *s, FILE *f);

/* @v as a Prometheus label value, without the quotes: backslash, double
 * quote and newline escaped as the text exposition format asks. */
void qos_prom_escape(FILE *f, const char *v);

#endif /* __QOS_NAMES_H */
