/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One print layer for text and JSON.
 *
 * Every field is written once, by one call that serves both forms: in
 * text mode the value is printed with the call's format; in JSON mode it
 * becomes a member (or an array element) of one document that is written,
 * as one line, when the printer is closed. The idea is iproute2's
 * lib/json_print.c (print_uint(PRINT_ANY, "limit", "limit %u ", v)); this
 * is our own code, on json-c.
 *
 *	struct qos_pr *p = qos_pr_open(stdout, json);
 *
 *	qos_pr_open_array(p, "classes");
 *	qos_pr_open_object(p, NULL);
 *	qos_pr_string(p, QP_ANY, "name", "class %s ", c->name);
 *	qos_pr_rate(p, QP_ANY, "rate", "rate %s ", c->rate);
 *	qos_pr_u64(p, QP_JSON, "id", NULL, c->id);
 *	qos_pr_nl(p);
 *	qos_pr_close_object(p);
 *	qos_pr_close_array(p);
 *	qos_pr_close(p);
 *
 * QP_ANY prints in both forms, QP_JSON and QP_TEXT in one only. A NULL
 * format with QP_ANY prints nothing in text. Keys are NULL inside arrays.
 * Open and close calls print nothing in text; layout in text is the
 * caller's, through its formats and qos_pr_nl() / qos_pr_text().
 *
 * Numbers: JSON gets the value as it is (a rate in bits per second, a
 * size in bytes, a time in the unit its key names); text gets it rendered
 * (qos_pr_rate() prints "20mbit"). 64-bit counters are JSON integers.
 *
 * Errors (out of memory, unbalanced calls) latch: later calls do nothing
 * and qos_pr_close() returns -ENOMEM or -EINVAL, writing no half
 * document.
 */
#ifndef __QOS_OUT_PRINT_H
#define __QOS_OUT_PRINT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct json_object;
struct qos_pr;

enum qos_pr_where {
	QP_ANY,		/* text and JSON */
	QP_JSON,	/* JSON only */
	QP_TEXT,	/* text only */
};

/* A printer writing to @f, JSON if @json. NULL on ENOMEM. */
struct qos_pr *qos_pr_open(FILE *f, bool json);
/* A JSON printer that writes nothing: qos_pr_take() hands its document. */
struct qos_pr *qos_pr_open_tree(void);
/* Write the JSON document (one line and '\n') and free. 0 or -errno. */
int qos_pr_close(struct qos_pr *p);
/* For qos_pr_open_tree(): the document (caller owns it), printer freed.
 * NULL if an error latched. */
struct json_object *qos_pr_take(struct qos_pr *p);

bool qos_pr_json(const struct qos_pr *p);
FILE *qos_pr_file(const struct qos_pr *p);

/* Containers. @key is NULL at the top level and inside arrays. The top
 * level is an object unless the first call opens an array. */
void qos_pr_open_object(struct qos_pr *p, const char *key);
void qos_pr_close_object(struct qos_pr *p);
void qos_pr_open_array(struct qos_pr *p, const char *key);
void qos_pr_close_array(struct qos_pr *p);

/* Scalars. @fmt takes exactly one conversion of the value's type
 * (%s; %llu / %lld for 64-bit; %u / %d for 32-bit; %g, %.Nf for doubles;
 * %s for qos_pr_bool/rate/size/time, which pass a rendered string). */
void qos_pr_string(struct qos_pr *p, enum qos_pr_where w, const char *key,
		   const char *fmt, const char *v);
void qos_pr_u64(struct qos_pr *p, enum qos_pr_where w, const char *key,
		const char *fmt, uint64_t v);
void qos_pr_s64(struct qos_pr *p, enum qos_pr_where w, const char *key,
		const char *fmt, int64_t v);
void qos_pr_u32(struct qos_pr *p, enum qos_pr_where w, const char *key,
		const char *fmt, uint32_t v);
void qos_pr_double(struct qos_pr *p, enum qos_pr_where w, const char *key,
		   const char *fmt, double v);
/* Text "yes"/"no" through %s, JSON true/false. */
void qos_pr_bool(struct qos_pr *p, enum qos_pr_where w, const char *key,
		 const char *fmt, bool v);
/* JSON null; text prints @fmt with "-" */
void qos_pr_null(struct qos_pr *p, enum qos_pr_where w, const char *key,
		 const char *fmt);
/* A bound or reading that may be absent: @v if @set; else JSON null and
 * nothing in text (@fmt converts the number, not a "-"). */
void qos_pr_u64_opt(struct qos_pr *p, enum qos_pr_where w, const char *key,
		    const char *fmt, uint64_t v, bool set);
void qos_pr_double_opt(struct qos_pr *p, enum qos_pr_where w, const char *key,
		       const char *fmt, double v, bool set);
/* @bps bits per second: JSON the number, text "20mbit" through %s. */
void qos_pr_rate(struct qos_pr *p, enum qos_pr_where w, const char *key,
		 const char *fmt, uint64_t bps);
/* @bytes: JSON the number, text "1514b", "64kb", "2mb" through %s. */
void qos_pr_size(struct qos_pr *p, enum qos_pr_where w, const char *key,
		 const char *fmt, uint64_t bytes);
/* @ns nanoseconds: JSON the number (key should say _ns), text "10ms". */
void qos_pr_time(struct qos_pr *p, enum qos_pr_where w, const char *key,
		 const char *fmt, uint64_t ns);
/* Put an existing json-c value under @key (JSON only); takes a reference. */
void qos_pr_json_value(struct qos_pr *p, const char *key, struct json_object *v);

/* Text only: a newline; free text (printf-style). No-ops in JSON. */
void qos_pr_nl(struct qos_pr *p);
void qos_pr_text(struct qos_pr *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* __QOS_OUT_PRINT_H */
