// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The print layer: one call per field, text and JSON (see print.h).
 *
 * JSON is built as a json-c tree with a stack of open containers and
 * written once, at close, with the program's one flag set (lib/json.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdlib.h>

#include "lib/json.h"
#include "lib/util.h"
#include "out/print.h"

#define QP_DEPTH 16

struct qos_pr {
	FILE *f;
	bool json;
	bool implicit;	/* the top-level object was opened by a member */
	int err;
	int depth;
	struct json_object *root;
	struct json_object *stack[QP_DEPTH];
};

static struct qos_pr *pr_new(FILE *f, bool json)
{
	struct qos_pr *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->f = f;
	p->json = json;
	return p;
}

struct qos_pr *qos_pr_open(FILE *f, bool json)
{
	return pr_new(f, json);
}

struct qos_pr *qos_pr_open_tree(void)
{
	return pr_new(NULL, true);
}

bool qos_pr_json(const struct qos_pr *p)
{
	return p->json;
}

FILE *qos_pr_file(const struct qos_pr *p)
{
	return p->f;
}

static void pr_fail(struct qos_pr *p, int err)
{
	if (!p->err)
		p->err = err;
}

/* Attach @v at the current place; consumes @v. NULL is JSON null if
 * @null, else a failed allocation. */
static void pr_attach_v(struct qos_pr *p, const char *key, struct json_object *v,
			bool null)
{
	struct json_object *top;

	if (p->err) {
		json_object_put(v);
		return;
	}
	if (!v && !null) {
		pr_fail(p, -ENOMEM);
		return;
	}
	if (!p->depth) {
		/* A scalar at the top level opens the implicit object. */
		if (p->root || !key) {
			json_object_put(v);
			pr_fail(p, -EINVAL);
			return;
		}
		p->root = json_object_new_object();
		if (!p->root) {
			json_object_put(v);
			pr_fail(p, -ENOMEM);
			return;
		}
		p->implicit = true;
		p->stack[p->depth++] = p->root;
	}
	top = p->stack[p->depth - 1];
	if (json_object_is_type(top, json_type_array)) {
		if (json_object_array_add(top, v))
			goto nomem;
	} else {
		if (!key || json_object_object_add(top, key, v))
			goto nomem;
	}
	return;
nomem:
	json_object_put(v);
	pr_fail(p, key || json_object_is_type(top, json_type_array) ? -ENOMEM : -EINVAL);
}

static void pr_attach(struct qos_pr *p, const char *key, struct json_object *v)
{
	pr_attach_v(p, key, v, false);
}

static void pr_open(struct qos_pr *p, const char *key, struct json_object *c)
{
	if (!p->json || p->err) {
		json_object_put(c);
		return;
	}
	if (!c) {
		pr_fail(p, -ENOMEM);
		return;
	}
	if (p->depth == QP_DEPTH) {
		json_object_put(c);
		pr_fail(p, -EINVAL);
		return;
	}
	if (!p->depth && !p->root) {
		if (key) {
			/* Named container at the top: inside the implicit object. */
			p->root = json_object_new_object();
			if (!p->root) {
				json_object_put(c);
				pr_fail(p, -ENOMEM);
				return;
			}
			p->implicit = true;
			p->stack[p->depth++] = p->root;
		} else {
			p->root = c;
			p->stack[p->depth++] = c;
			return;
		}
	} else if (!p->depth) {
		json_object_put(c);
		pr_fail(p, -EINVAL);
		return;
	}
	pr_attach(p, key, json_object_get(c));
	if (!p->err)
		p->stack[p->depth++] = c;
	json_object_put(c);
}

static void pr_close(struct qos_pr *p, enum json_type t)
{
	if (!p->json || p->err)
		return;
	if (!p->depth || !json_object_is_type(p->stack[p->depth - 1], t)) {
		pr_fail(p, -EINVAL);
		return;
	}
	p->depth--;
}

void qos_pr_open_object(struct qos_pr *p, const char *key)
{
	pr_open(p, key, p->json ? json_object_new_object() : NULL);
}

void qos_pr_close_object(struct qos_pr *p)
{
	pr_close(p, json_type_object);
}

void qos_pr_open_array(struct qos_pr *p, const char *key)
{
	pr_open(p, key, p->json ? json_object_new_array() : NULL);
}

void qos_pr_close_array(struct qos_pr *p)
{
	pr_close(p, json_type_array);
}

static bool pr_text(const struct qos_pr *p, enum qos_pr_where w, const char *fmt)
{
	return !p->json && w != QP_JSON && fmt;
}

static bool pr_json(const struct qos_pr *p, enum qos_pr_where w)
{
	return p->json && w != QP_TEXT;
}

/* The formats are the callers' literals, one conversion each (print.h). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"

void qos_pr_string(struct qos_pr *p, enum qos_pr_where w, const char *key,
		   const char *fmt, const char *v)
{
	if (pr_json(p, w))
		pr_attach_v(p, key, v ? json_object_new_string(v) : NULL, !v);
	else if (pr_text(p, w, fmt))
		fprintf(p->f, fmt, v ? v : "-");
}

void qos_pr_u64(struct qos_pr *p, enum qos_pr_where w, const char *key,
		const char *fmt, uint64_t v)
{
	if (pr_json(p, w))
		pr_attach(p, key, json_object_new_uint64(v));
	else if (pr_text(p, w, fmt))
		fprintf(p->f, fmt, (unsigned long long)v);
}

void qos_pr_s64(struct qos_pr *p, enum qos_pr_where w, const char *key,
		const char *fmt, int64_t v)
{
	if (pr_json(p, w))
		pr_attach(p, key, json_object_new_int64(v));
	else if (pr_text(p, w, fmt))
		fprintf(p->f, fmt, (long long)v);
}

void qos_pr_u32(struct qos_pr *p, enum qos_pr_where w, const char *key,
		const char *fmt, uint32_t v)
{
	if (pr_json(p, w))
		pr_attach(p, key, json_object_new_int64(v));
	else if (pr_text(p, w, fmt))
		fprintf(p->f, fmt, v);
}

void qos_pr_double(struct qos_pr *p, enum qos_pr_where w, const char *key,
		   const char *fmt, double v)
{
	if (pr_json(p, w))
		pr_attach(p, key, json_object_new_double(v));
	else if (pr_text(p, w, fmt))
		fprintf(p->f, fmt, v);
}

void qos_pr_text(struct qos_pr *p, const char *fmt, ...)
{
	va_list ap;

	if (p->json)
		return;
	va_start(ap, fmt);
	vfprintf(p->f, fmt, ap);
	va_end(ap);
}

#pragma GCC diagnostic pop

void qos_pr_bool(struct qos_pr *p, enum qos_pr_where w, const char *key,
		 const char *fmt, bool v)
{
	if (pr_json(p, w))
		pr_attach(p, key, json_object_new_boolean(v));
	else
		qos_pr_string(p, QP_TEXT, key, pr_text(p, w, fmt) ? fmt : NULL,
			      v ? "yes" : "no");
}

void qos_pr_null(struct qos_pr *p, enum qos_pr_where w, const char *key,
		 const char *fmt)
{
	/* json-c's null is the NULL object. */
	if (pr_json(p, w))
		pr_attach_v(p, key, NULL, true);
	else if (pr_text(p, w, fmt)) {
		qos_pr_string(p, QP_TEXT, key, fmt, "-");
	}
}

void qos_pr_u64_opt(struct qos_pr *p, enum qos_pr_where w, const char *key,
		    const char *fmt, uint64_t v, bool set)
{
	if (set)
		qos_pr_u64(p, w, key, fmt, v);
	else
		qos_pr_null(p, w, key, NULL);
}

void qos_pr_double_opt(struct qos_pr *p, enum qos_pr_where w, const char *key,
		       const char *fmt, double v, bool set)
{
	if (set)
		qos_pr_double(p, w, key, fmt, v);
	else
		qos_pr_null(p, w, key, NULL);
}

void qos_pr_rate(struct qos_pr *p, enum qos_pr_where w, const char *key,
		 const char *fmt, uint64_t bps)
{
	char buf[32];

	if (pr_json(p, w))
		qos_pr_u64(p, QP_JSON, key, NULL, bps);
	else if (pr_text(p, w, fmt))
		qos_pr_string(p, QP_TEXT, key, fmt, qos_fmt_rate(bps, buf, sizeof(buf)));
}

void qos_pr_size(struct qos_pr *p, enum qos_pr_where w, const char *key,
		 const char *fmt, uint64_t bytes)
{
	char buf[32];

	if (pr_json(p, w)) {
		qos_pr_u64(p, QP_JSON, key, NULL, bytes);
		return;
	}
	if (!pr_text(p, w, fmt))
		return;
	if (bytes >= (1ULL << 20) && !(bytes % (1ULL << 20)))
		snprintf(buf, sizeof(buf), "%llumb", (unsigned long long)(bytes >> 20));
	else if (bytes >= 1024 && !(bytes % 1024))
		snprintf(buf, sizeof(buf), "%llukb", (unsigned long long)(bytes >> 10));
	else
		snprintf(buf, sizeof(buf), "%llub", (unsigned long long)bytes);
	qos_pr_string(p, QP_TEXT, key, fmt, buf);
}

void qos_pr_time(struct qos_pr *p, enum qos_pr_where w, const char *key,
		 const char *fmt, uint64_t ns)
{
	char buf[32];

	if (pr_json(p, w)) {
		qos_pr_u64(p, QP_JSON, key, NULL, ns);
		return;
	}
	if (!pr_text(p, w, fmt))
		return;
	/* Whole seconds or milliseconds as such, else three decimals of the
	 * largest unit that fits; microseconds only below a millisecond. */
	if (ns >= 1000000000ULL && !(ns % 1000000000ULL))
		snprintf(buf, sizeof(buf), "%llus", (unsigned long long)(ns / 1000000000ULL));
	else if (ns >= 1000000000ULL)
		snprintf(buf, sizeof(buf), "%.3fs", ns / 1e9);
	else if (ns >= 1000000ULL && !(ns % 1000000ULL))
		snprintf(buf, sizeof(buf), "%llums", (unsigned long long)(ns / 1000000ULL));
	else if (ns >= 1000000ULL)
		snprintf(buf, sizeof(buf), "%.3fms", ns / 1e6);
	else if (ns >= 1000ULL && !(ns % 1000ULL))
		snprintf(buf, sizeof(buf), "%lluus", (unsigned long long)(ns / 1000ULL));
	else
		snprintf(buf, sizeof(buf), "%lluns", (unsigned long long)ns);
	qos_pr_string(p, QP_TEXT, key, fmt, buf);
}

void qos_pr_json_value(struct qos_pr *p, const char *key, struct json_object *v)
{
	if (p->json)
		pr_attach(p, key, json_object_get(v));
}

void qos_pr_nl(struct qos_pr *p)
{
	if (!p->json)
		fputc('\n', p->f);
}

static void pr_free(struct qos_pr *p)
{
	json_object_put(p->root);
	free(p);
}

int qos_pr_close(struct qos_pr *p)
{
	int err;

	if (!p)
		return -ENOMEM;
	err = p->err;
	if (!err && p->json && p->depth != (p->implicit ? 1 : 0))
		err = -EINVAL;
	if (!err && p->json && p->f) {
		/* Nothing printed at all is still a document: {}. */
		const char *s = p->root ? qos_json_text(p->root) : "{}";

		if (s)
			fprintf(p->f, "%s\n", s);
		else
			err = -ENOMEM;
	}
	pr_free(p);
	return err;
}

struct json_object *qos_pr_take(struct qos_pr *p)
{
	struct json_object *o;

	if (!p)
		return NULL;
	if (p->err || p->depth != (p->implicit ? 1 : 0)) {
		pr_free(p);
		return NULL;
	}
	o = p->root ? p->root : json_object_new_object();
	p->root = NULL;
	pr_free(p);
	return o;
}
