// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * etcd's v3 API through its JSON gateway, on libcurl and json-c
 * (etcd.h). Base64 through glibc's libresolv (b64_ntop, b64_pton).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#include <arpa/inet.h>
#include <resolv.h>

#include <curl/curl.h>
#include <json-c/json.h>

#include "domain/etcd.h"
#include "lib/json.h"

struct qos_etcd {
	char *url[QOS_ETCD_MAX_ENDPOINTS];
	size_t n;
	size_t cur;
	CURL *h;
	struct curl_slist *hdrs;
	unsigned int timeout_ms;
	char *ca, *cert, *key;
	struct qos_etcd_hdr hdr;
	int retry_err;		/* why the last member was left */
	char msg[512];
	char curl_err[CURL_ERROR_SIZE];	/* libcurl's detail of the last failure */
	char why[CURL_ERROR_SIZE + 128];	/* curl_why()'s */
};

struct qos_etcd_txn {
	json_object *root;	/* {"compare": [], "success": [], "failure": []} */
	int err;
};

static int etcd_fail(struct qos_etcd *e, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int etcd_fail(struct qos_etcd *e, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return err;
}

/* Base64 of @len bytes at @p as a json-c string; NULL on ENOMEM. */
static json_object *b64_string(const void *p, size_t len)
{
	size_t cap = (len + 2) / 3 * 4 + 1;
	char *s = malloc(cap);
	json_object *o;

	if (!s)
		return NULL;
	if (b64_ntop(p, len, s, cap) < 0) {
		free(s);
		return NULL;
	}
	o = json_object_new_string(s);
	free(s);
	return o;
}

/* Decode base64 @s into a NUL-terminated malloc()ed buffer. */
static int b64_decode(const char *s, char **out, size_t *len)
{
	size_t cap = strlen(s) / 4 * 3 + 4;
	int n;

	*out = malloc(cap);
	if (!*out)
		return -ENOMEM;
	n = b64_pton(s, (unsigned char *)*out, cap);
	if (n < 0) {
		free(*out);
		*out = NULL;
		return -EINVAL;
	}
	(*out)[n] = '\0';
	*len = n;
	return 0;
}

static json_object *int64_string(int64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%lld", (long long)v);
	return json_object_new_string(buf);
}

/* An int64 field etcd writes as a string (absent: 0). */
static int64_t get_i64(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return 0;
	return json_object_get_int64(v);
}

static uint64_t get_u64(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return 0;
	return json_object_get_uint64(v);
}

static void parse_hdr(json_object *o, struct qos_etcd_hdr *h)
{
	json_object *hdr = NULL;

	memset(h, 0, sizeof(*h));
	if (!json_object_object_get_ex(o, "header", &hdr))
		return;
	h->cluster_id = get_u64(hdr, "cluster_id");
	h->member_id = get_u64(hdr, "member_id");
	h->revision = get_i64(hdr, "revision");
	h->raft_term = get_u64(hdr, "raft_term");
}

static void kv_free(struct qos_etcd_kv *kv)
{
	free(kv->key);
	free(kv->value);
	memset(kv, 0, sizeof(*kv));
}

static int parse_kv(json_object *o, struct qos_etcd_kv *kv)
{
	json_object *v;
	int err;

	memset(kv, 0, sizeof(*kv));
	if (!json_object_object_get_ex(o, "key", &v))
		return -EINVAL;
	err = b64_decode(json_object_get_string(v), &kv->key, &kv->key_len);
	if (err)
		return err;
	if (json_object_object_get_ex(o, "value", &v))
		err = b64_decode(json_object_get_string(v), &kv->value, &kv->value_len);
	else
		err = b64_decode("", &kv->value, &kv->value_len);
	if (err) {
		kv_free(kv);
		return err;
	}
	kv->create_revision = get_i64(o, "create_revision");
	kv->mod_revision = get_i64(o, "mod_revision");
	kv->version = get_i64(o, "version");
	kv->lease = get_i64(o, "lease");
	return 0;
}

void qos_etcd_kvs_free(struct qos_etcd_kvs *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		kv_free(&r->kv[i]);
	free(r->kv);
	memset(r, 0, sizeof(*r));
}

static int parse_kvs(json_object *o, struct qos_etcd_kvs *r)
{
	json_object *a, *m;
	size_t i, n;
	int err;

	memset(r, 0, sizeof(*r));
	parse_hdr(o, &r->hdr);
	r->count = get_i64(o, "count");
	if (json_object_object_get_ex(o, "more", &m))
		r->more = json_object_get_boolean(m);
	if (!json_object_object_get_ex(o, "kvs", &a))
		return 0;
	n = json_object_array_length(a);
	r->kv = calloc(n ? n : 1, sizeof(*r->kv));
	if (!r->kv)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		err = parse_kv(json_object_array_get_idx(a, i), &r->kv[i]);
		if (err) {
			qos_etcd_kvs_free(r);
			return err;
		}
		r->n++;
	}
	return 0;
}

char *qos_etcd_prefix_end(const char *prefix, size_t *len)
{
	size_t n = strlen(prefix);
	char *end = malloc(n + 1);

	if (!end)
		return NULL;
	memcpy(end, prefix, n + 1);
	while (n > 0) {
		if ((unsigned char)end[n - 1] < 0xff) {
			end[n - 1]++;
			break;
		}
		n--;
	}
	/* All 0xff (or empty): every key, etcd's "\0". */
	if (n == 0) {
		end[0] = '\0';
		n = 1;
	}
	*len = n;
	return end;
}

/* "key" and, for a prefix, "range_end" of @o. */
static int add_range(json_object *o, const char *key, unsigned int flags)
{
	json_object *k = b64_string(key, strlen(key));
	char *end;
	size_t len;

	if (!k || json_object_object_add(o, "key", k))
		return -ENOMEM;
	if (!(flags & QOS_ETCD_PREFIX))
		return 0;
	end = qos_etcd_prefix_end(key, &len);
	if (!end)
		return -ENOMEM;
	k = b64_string(end, len);
	free(end);
	if (!k || json_object_object_add(o, "range_end", k))
		return -ENOMEM;
	return 0;
}

static const char *const url_sep = ",";

/*
 * The client key must be no one else's to read, as ssh requires of its
 * keys: a key others can read is a router others can be. The group may
 * read it (Debian's ssl-cert group, 0640), no one may write it but its
 * owner. Refused before any request, with the file, its mode and the fix.
 */
static int key_private(const char *key, char *err, size_t errlen)
{
	struct stat st;

	if (stat(key, &st)) {
		int e = errno;

		snprintf(err, errlen, "--etcd-key %s: %s", key, strerror(e));
		return -e;
	}
	if (st.st_mode & (S_IRWXO | S_IWGRP)) {
		snprintf(err, errlen, "--etcd-key %s: mode %04o: others may read or write it: "
			 "refused (chmod 600 %s)", key, st.st_mode & 07777, key);
		return -EPERM;
	}
	return 0;
}

int qos_etcd_open(struct qos_etcd **ep, const char *urls, const struct qos_etcd_tls *tls,
		  char *err, size_t errlen)
{
	struct qos_etcd *e;
	char *list, *tok, *save = NULL;

	if (tls && tls->key) {
		int ret = key_private(tls->key, err, errlen);

		if (ret)
			return ret;
	}
	if (!urls)
		urls = getenv(QOS_ETCD_ENV);
	if (!urls || !*urls) {
		snprintf(err, errlen, "no etcd endpoints: give --etcd URL[,URL...] or set %s",
			 QOS_ETCD_ENV);
		return -EINVAL;
	}
	/* libcurl's global state, before any handle (not thread-safe: the
	 * first handle is opened before threads start). */
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		snprintf(err, errlen, "etcd client: libcurl does not initialise");
		return -ENOMEM;
	}
	e = calloc(1, sizeof(*e));
	list = strdup(urls);
	if (!e || !list)
		goto nomem;
	for (tok = strtok_r(list, url_sep, &save); tok; tok = strtok_r(NULL, url_sep, &save)) {
		size_t l = strlen(tok);

		if (strncmp(tok, "http://", 7) && strncmp(tok, "https://", 8)) {
			snprintf(err, errlen, "etcd endpoint '%s': not an http:// or https:// URL",
				 tok);
			goto inval;
		}
		if (e->n == QOS_ETCD_MAX_ENDPOINTS) {
			snprintf(err, errlen, "more than %d etcd endpoints", QOS_ETCD_MAX_ENDPOINTS);
			goto inval;
		}
		while (l > 0 && tok[l - 1] == '/')
			tok[--l] = '\0';
		e->url[e->n] = strdup(tok);
		if (!e->url[e->n++])
			goto nomem;
	}
	if (!e->n) {
		snprintf(err, errlen, "no etcd endpoints in '%s'", urls);
		goto inval;
	}
	if (tls && ((tls->ca && !(e->ca = strdup(tls->ca))) ||
		    (tls->cert && !(e->cert = strdup(tls->cert))) ||
		    (tls->key && !(e->key = strdup(tls->key)))))
		goto nomem;
	e->h = curl_easy_init();
	e->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	if (!e->h || !e->hdrs)
		goto nomem;
	e->timeout_ms = QOS_ETCD_TIMEOUT_MS;
	free(list);
	*ep = e;
	return 0;
nomem:
	snprintf(err, errlen, "etcd client: %s", strerror(ENOMEM));
	free(list);
	qos_etcd_close(e);
	return -ENOMEM;
inval:
	free(list);
	qos_etcd_close(e);
	return -EINVAL;
}

void qos_etcd_close(struct qos_etcd *e)
{
	size_t i;

	if (!e)
		return;
	for (i = 0; i < e->n; i++)
		free(e->url[i]);
	if (e->h)
		curl_easy_cleanup(e->h);
	curl_slist_free_all(e->hdrs);
	free(e->ca);
	free(e->cert);
	free(e->key);
	free(e);
}

void qos_etcd_set_timeout(struct qos_etcd *e, unsigned int ms)
{
	e->timeout_ms = ms ? ms : QOS_ETCD_TIMEOUT_MS;
}

const char *qos_etcd_errmsg(const struct qos_etcd *e)
{
	return e->msg;
}

const struct qos_etcd_hdr *qos_etcd_last_hdr(const struct qos_etcd *e)
{
	return &e->hdr;
}

const char *qos_etcd_endpoint(const struct qos_etcd *e)
{
	return e->url[e->cur];
}

struct buf {
	char *p;
	size_t len;
	size_t cap;
};

static size_t buf_write(char *data, size_t size, size_t nmemb, void *arg)
{
	struct buf *b = arg;
	size_t n = size * nmemb;

	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char *p = realloc(b->p, cap);

		if (!p)
			return 0;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
	return n;
}

/* The options every request of @h to @url + @path shares. */
static void setup_handle(struct qos_etcd *e, CURL *h, const char *path)
{
	char url[1024];

	snprintf(url, sizeof(url), "%s%s", e->url[e->cur], path);
	curl_easy_reset(h);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, e->hdrs);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)QOS_ETCD_CONNECT_MS);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	e->curl_err[0] = '\0';
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, e->curl_err);
	if (e->ca)
		curl_easy_setopt(h, CURLOPT_CAINFO, e->ca);
	if (e->cert)
		curl_easy_setopt(h, CURLOPT_SSLCERT, e->cert);
	if (e->key)
		curl_easy_setopt(h, CURLOPT_SSLKEY, e->key);
}

/*
 * Why a transfer failed: libcurl's detail when it has one (a TLS alert,
 * say), else its code's text. Over TLS 1.3 a member that wants a client
 * certificate says so after the handshake, and its alert may be lost with
 * the connection: without a certificate, a connection ended so is said to
 * be the likely reason.
 */
static const char *curl_why(struct qos_etcd *e, CURLcode rc)
{
	const char *why = e->curl_err[0] ? e->curl_err : curl_easy_strerror(rc);
	bool ended = rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR ||
		     rc == CURLE_SSL_CONNECT_ERROR || rc == CURLE_GOT_NOTHING;

	if (e->cert || !ended || strncmp(e->url[e->cur], "https://", 8))
		return why;
	snprintf(e->why, sizeof(e->why), "%s (no client certificate was given: a member with "
		 "--client-cert-auth wants --etcd-cert and --etcd-key)", why);
	return e->why;
}

/* gRPC status codes (google.golang.org/grpc/codes) as errno. */
static int grpc_errno(int code, const char *msg)
{
	switch (code) {
	case 3:		/* InvalidArgument */
		return -EINVAL;
	case 4:		/* DeadlineExceeded */
		return -ETIMEDOUT;
	case 5:		/* NotFound */
		return -ENOENT;
	case 7:		/* PermissionDenied */
	case 16:	/* Unauthenticated */
		return -EACCES;
	case 8:		/* ResourceExhausted */
		return -ENOSPC;
	case 11:	/* OutOfRange: compacted, future revision */
		return -ERANGE;
	case 14:	/* Unavailable */
		return msg && strstr(msg, "timed out") ? -ETIMEDOUT : -EAGAIN;
	default:
		return -EIO;
	}
}

/*
 * An error answer of etcd. 3.4's gateway (grpc-gateway v1) says
 * {"error": "...", "code": N, "message": "..."}, in a stream {"error":
 * {"grpc_code": N, "message": "..."}}; 3.5's (grpc-gateway v2) drops the
 * "error" member: {"code": N, "message": "...", "details": []}, in a stream
 * {"error": {"code": N, "message": "..."}}. An answer has a "header"; an
 * error has none.
 */
static int answer_error(struct qos_etcd *e, json_object *o)
{
	json_object *err = NULL, *m = NULL, *c = NULL;
	const char *msg;

	if (!json_object_object_get_ex(o, "error", &err) &&
	    (json_object_object_get_ex(o, "header", NULL) ||
	     !json_object_object_get_ex(o, "code", NULL) ||
	     !json_object_object_get_ex(o, "message", NULL)))
		return 0;
	if (err && json_object_is_type(err, json_type_object)) {
		json_object_object_get_ex(err, "message", &m);
		if (!json_object_object_get_ex(err, "grpc_code", &c))
			json_object_object_get_ex(err, "code", &c);
	} else {
		json_object_object_get_ex(o, "message", &m);
		json_object_object_get_ex(o, "code", &c);
	}
	msg = m ? json_object_get_string(m) : err ? json_object_get_string(err) : "?";
	return etcd_fail(e, grpc_errno(c ? json_object_get_int(c) : 2, msg), "etcd %s: %s",
			 e->url[e->cur], msg);
}

/* Whether the request reached no member: safe to send to the next one. */
static bool not_sent(CURL *h, CURLcode rc)
{
	long sent = 0;

	if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
	    rc == CURLE_SSL_CONNECT_ERROR)
		return true;
	curl_easy_getinfo(h, CURLINFO_REQUEST_SIZE, &sent);
	return sent == 0;
}

/* One request to the current endpoint: 0 with *@resp, 1 to try the next
 * endpoint, or -errno. */
static int post_once(struct qos_etcd *e, const char *path, const char *body, bool idempotent,
		     json_object **resp)
{
	struct buf b = {};
	CURLcode rc;
	int err;

	setup_handle(e, e->h, path);
	curl_easy_setopt(e->h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(e->h, CURLOPT_TIMEOUT_MS, (long)e->timeout_ms);
	curl_easy_setopt(e->h, CURLOPT_WRITEFUNCTION, buf_write);
	curl_easy_setopt(e->h, CURLOPT_WRITEDATA, &b);
	rc = curl_easy_perform(e->h);
	if (rc != CURLE_OK) {
		bool unsent = not_sent(e->h, rc);

		free(b.p);
		if (unsent || idempotent) {
			e->retry_err = unsent ? -ECONNREFUSED : -ETIMEDOUT;
			etcd_fail(e, e->retry_err, "etcd %s: %s", e->url[e->cur],
				  curl_why(e, rc));
			return 1;
		}
		return etcd_fail(e, -ETIMEDOUT, "etcd %s: %s (outcome unknown)", e->url[e->cur],
				 curl_why(e, rc));
	}
	*resp = b.p ? json_tokener_parse(b.p) : NULL;
	if (!*resp) {
		err = etcd_fail(e, -EINVAL, "etcd %s%s: not a JSON answer", e->url[e->cur], path);
		free(b.p);
		return err;
	}
	free(b.p);
	err = answer_error(e, *resp);
	if (err) {
		json_object_put(*resp);
		*resp = NULL;
		/* Another member may have a leader; a write is never resent. */
		e->retry_err = err;
		return err == -EAGAIN && idempotent ? 1 : err;
	}
	parse_hdr(*resp, &e->hdr);
	return 0;
}

/* POST @req to @path, moving to the next endpoint while a member cannot
 * be reached (or, for a read, does not answer). @req is consumed. */
static int etcd_post(struct qos_etcd *e, const char *path, json_object *req, bool idempotent,
		     json_object **resp)
{
	const char *body;
	size_t i;
	int ret = -ECONNREFUSED;

	e->msg[0] = '\0';
	if (!req)
		return etcd_fail(e, -ENOMEM, "etcd client: %s", strerror(ENOMEM));
	body = qos_json_text(req);
	for (i = 0; i < e->n; i++) {
		ret = post_once(e, path, body, idempotent, resp);
		if (ret <= 0)
			break;
		e->cur = (e->cur + 1) % e->n;
		ret = e->retry_err;
	}
	if (!ret)
		e->msg[0] = '\0';
	else if (i == e->n && e->n > 1) {
		char last[sizeof(e->msg)];

		memcpy(last, e->msg, sizeof(last));
		etcd_fail(e, ret, "no etcd endpoint answered (last: %.400s)", last);
	}
	json_object_put(req);
	return ret;
}

static int obj_add(json_object *o, const char *key, json_object *v)
{
	if (!v || json_object_object_add(o, key, v)) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static json_object *range_req(const char *key, unsigned int flags, int64_t rev, int64_t limit)
{
	json_object *o = json_object_new_object();

	if (!o || add_range(o, key, flags) ||
	    (rev && obj_add(o, "revision", int64_string(rev))) ||
	    (limit && obj_add(o, "limit", int64_string(limit))) ||
	    ((flags & QOS_ETCD_KEYS_ONLY) && obj_add(o, "keys_only", json_object_new_boolean(1))) ||
	    ((flags & QOS_ETCD_SERIAL) && obj_add(o, "serializable", json_object_new_boolean(1)))) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

int qos_etcd_get(struct qos_etcd *e, const char *key, unsigned int flags, int64_t rev,
		 int64_t limit, struct qos_etcd_kvs *out)
{
	json_object *resp;
	int err;

	memset(out, 0, sizeof(*out));
	err = etcd_post(e, "/v3/kv/range", range_req(key, flags, rev, limit), true, &resp);
	if (err)
		return err;
	err = parse_kvs(resp, out);
	json_object_put(resp);
	if (err)
		return etcd_fail(e, err, "etcd %s: bad range answer", e->url[e->cur]);
	return 0;
}

static json_object *put_req(const char *key, const void *val, size_t len, int64_t lease)
{
	json_object *o = json_object_new_object();

	if (!o || obj_add(o, "key", b64_string(key, strlen(key))) ||
	    obj_add(o, "value", b64_string(val, len)) ||
	    (lease && obj_add(o, "lease", int64_string(lease)))) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

int qos_etcd_put(struct qos_etcd *e, const char *key, const void *val, size_t len,
		 int64_t lease, struct qos_etcd_hdr *hdr)
{
	json_object *resp;
	int err;

	err = etcd_post(e, "/v3/kv/put", put_req(key, val, len, lease), false, &resp);
	if (err)
		return err;
	if (hdr)
		*hdr = e->hdr;
	json_object_put(resp);
	return 0;
}

static json_object *del_req(const char *key, unsigned int flags)
{
	json_object *o = json_object_new_object();

	if (!o || add_range(o, key, flags)) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

int qos_etcd_del(struct qos_etcd *e, const char *key, unsigned int flags, int64_t *deleted,
		 struct qos_etcd_hdr *hdr)
{
	json_object *resp;
	int err;

	err = etcd_post(e, "/v3/kv/deleterange", del_req(key, flags), false, &resp);
	if (err)
		return err;
	if (deleted)
		*deleted = get_i64(resp, "deleted");
	if (hdr)
		*hdr = e->hdr;
	json_object_put(resp);
	return 0;
}

struct qos_etcd_txn *qos_etcd_txn_new(void)
{
	struct qos_etcd_txn *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->root = json_object_new_object();
	if (!t->root || obj_add(t->root, "compare", json_object_new_array()) ||
	    obj_add(t->root, "success", json_object_new_array()) ||
	    obj_add(t->root, "failure", json_object_new_array())) {
		qos_etcd_txn_free(t);
		return NULL;
	}
	return t;
}

void qos_etcd_txn_free(struct qos_etcd_txn *t)
{
	if (!t)
		return;
	json_object_put(t->root);
	free(t);
}

static void txn_append(struct qos_etcd_txn *t, const char *list, json_object *v)
{
	json_object *a;

	if (t->err || !v) {
		t->err = -ENOMEM;
		json_object_put(v);
		return;
	}
	json_object_object_get_ex(t->root, list, &a);
	if (json_object_array_add(a, v)) {
		json_object_put(v);
		t->err = -ENOMEM;
	}
}

void qos_etcd_txn_cmp(struct qos_etcd_txn *t, const char *key, enum qos_etcd_target target,
		      enum qos_etcd_cmp_op op, int64_t v)
{
	static const char *const targets[] = { "MOD", "CREATE", "VERSION", "LEASE" };
	static const char *const fields[] = { "mod_revision", "create_revision", "version",
					      "lease" };
	static const char *const ops[] = { "EQUAL", "NOT_EQUAL", "LESS", "GREATER" };
	json_object *o = json_object_new_object();

	if (o && (obj_add(o, "key", b64_string(key, strlen(key))) ||
		  obj_add(o, "target", json_object_new_string(targets[target])) ||
		  obj_add(o, "result", json_object_new_string(ops[op])) ||
		  obj_add(o, fields[target], int64_string(v)))) {
		json_object_put(o);
		o = NULL;
	}
	txn_append(t, "compare", o);
}

/* {@name: @req} into the branch. */
static void txn_op(struct qos_etcd_txn *t, bool success, const char *name, json_object *req)
{
	json_object *o = json_object_new_object();

	if (!req || !o || obj_add(o, name, req)) {
		json_object_put(o);
		o = NULL;
	}
	txn_append(t, success ? "success" : "failure", o);
}

void qos_etcd_txn_put(struct qos_etcd_txn *t, bool success, const char *key, const void *val,
		      size_t len, int64_t lease)
{
	txn_op(t, success, "request_put", put_req(key, val, len, lease));
}

void qos_etcd_txn_touch(struct qos_etcd_txn *t, bool success, const char *key)
{
	json_object *o = json_object_new_object();

	if (o && (obj_add(o, "key", b64_string(key, strlen(key))) ||
		  obj_add(o, "ignore_value", json_object_new_boolean(1)))) {
		json_object_put(o);
		o = NULL;
	}
	txn_op(t, success, "request_put", o);
}

void qos_etcd_txn_del(struct qos_etcd_txn *t, bool success, const char *key,
		      unsigned int flags)
{
	txn_op(t, success, "request_delete_range", del_req(key, flags));
}

void qos_etcd_txn_get(struct qos_etcd_txn *t, bool success, const char *key,
		      unsigned int flags)
{
	txn_op(t, success, "request_range", range_req(key, flags, 0, 0));
}

void qos_etcd_txn_res_free(struct qos_etcd_txn_res *r)
{
	size_t i;

	for (i = 0; i < r->nranges; i++)
		qos_etcd_kvs_free(&r->ranges[i]);
	free(r->ranges);
	memset(r, 0, sizeof(*r));
}

static int parse_txn(json_object *resp, struct qos_etcd_txn_res *r)
{
	json_object *a, *v, *rr;
	size_t i, n;
	int err;

	if (json_object_object_get_ex(resp, "succeeded", &v))
		r->succeeded = json_object_get_boolean(v);
	parse_hdr(resp, &r->hdr);
	if (!json_object_object_get_ex(resp, "responses", &a))
		return 0;
	n = json_object_array_length(a);
	r->ranges = calloc(n ? n : 1, sizeof(*r->ranges));
	if (!r->ranges)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (!json_object_object_get_ex(json_object_array_get_idx(a, i), "response_range",
					       &rr))
			continue;
		err = parse_kvs(rr, &r->ranges[r->nranges]);
		if (err)
			return err;
		r->nranges++;
	}
	return 0;
}

int qos_etcd_txn_commit(struct qos_etcd *e, const struct qos_etcd_txn *t,
			struct qos_etcd_txn_res *res)
{
	json_object *resp;
	int err;

	memset(res, 0, sizeof(*res));
	if (t->err)
		return etcd_fail(e, t->err, "etcd transaction: %s", strerror(-t->err));
	err = etcd_post(e, "/v3/kv/txn", json_object_get(t->root), false, &resp);
	if (err)
		return err;
	err = parse_txn(resp, res);
	json_object_put(resp);
	if (err) {
		qos_etcd_txn_res_free(res);
		return etcd_fail(e, err, "etcd %s: bad transaction answer", e->url[e->cur]);
	}
	return 0;
}

int qos_etcd_lease_grant(struct qos_etcd *e, int64_t ttl, int64_t *id, int64_t *granted)
{
	json_object *req = json_object_new_object(), *resp;
	int err;

	if (req && obj_add(req, "TTL", int64_string(ttl))) {
		json_object_put(req);
		req = NULL;
	}
	err = etcd_post(e, "/v3/lease/grant", req, false, &resp);
	if (err)
		return err;
	*id = get_i64(resp, "ID");
	if (granted)
		*granted = get_i64(resp, "TTL");
	json_object_put(resp);
	if (!*id)
		return etcd_fail(e, -EIO, "etcd %s: no lease granted", e->url[e->cur]);
	return 0;
}

static json_object *lease_req(int64_t id)
{
	json_object *req = json_object_new_object();

	if (req && obj_add(req, "ID", int64_string(id))) {
		json_object_put(req);
		return NULL;
	}
	return req;
}

int qos_etcd_lease_revoke(struct qos_etcd *e, int64_t id)
{
	json_object *resp;
	int err;

	err = etcd_post(e, "/v3/lease/revoke", lease_req(id), true, &resp);
	if (err)
		return err;
	json_object_put(resp);
	return 0;
}

/* A streamed answer of one object: {"result": {...}} or an error. */
int qos_etcd_lease_keepalive(struct qos_etcd *e, int64_t id, int64_t *ttl)
{
	json_object *resp, *res;
	int64_t t;
	int err;

	err = etcd_post(e, "/v3/lease/keepalive", lease_req(id), true, &resp);
	if (err)
		return err;
	if (!json_object_object_get_ex(resp, "result", &res)) {
		json_object_put(resp);
		return etcd_fail(e, -EINVAL, "etcd %s: bad keepalive answer", e->url[e->cur]);
	}
	parse_hdr(res, &e->hdr);
	t = get_i64(res, "TTL");
	json_object_put(resp);
	if (ttl)
		*ttl = t;
	if (t <= 0)
		return etcd_fail(e, -ENOENT, "etcd lease %llx: not found (expired or revoked)",
				 (unsigned long long)id);
	return 0;
}

/* The watch stream: objects one after the other, parsed as they come. */
struct watch_ctx {
	struct qos_etcd *e;
	json_tokener *tok;
	int (*fn)(const struct qos_etcd_watch_resp *r, void *arg);
	int (*tick)(void *arg);
	void *arg;
	int ret;		/* why the stream was stopped */
	time_t last_tick;
};

static void watch_resp_free(struct qos_etcd_watch_resp *r)
{
	size_t i;

	for (i = 0; i < r->nev; i++) {
		kv_free(&r->ev[i].kv);
		kv_free(&r->ev[i].prev_kv);
	}
	free(r->ev);
}

static int parse_events(json_object *res, struct qos_etcd_watch_resp *r)
{
	json_object *a, *ev, *v;
	size_t i, n;
	int err;

	if (!json_object_object_get_ex(res, "events", &a))
		return 0;
	n = json_object_array_length(a);
	r->ev = calloc(n ? n : 1, sizeof(*r->ev));
	if (!r->ev)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct qos_etcd_ev *x = &r->ev[i];

		ev = json_object_array_get_idx(a, i);
		if (json_object_object_get_ex(ev, "type", &v) &&
		    !strcmp(json_object_get_string(v), "DELETE"))
			x->type = QOS_ETCD_EV_DELETE;
		r->nev = i + 1;
		if (!json_object_object_get_ex(ev, "kv", &v))
			return -EINVAL;
		err = parse_kv(v, &x->kv);
		if (!err && json_object_object_get_ex(ev, "prev_kv", &v))
			err = parse_kv(v, &x->prev_kv);
		if (err)
			return err;
	}
	return 0;
}

/* One object of the stream: 0 to go on, else why to stop. */
static int watch_object(struct watch_ctx *c, json_object *o)
{
	struct qos_etcd_watch_resp r = {};
	json_object *res, *v;
	int err;

	err = answer_error(c->e, o);
	if (err)
		return err;
	if (!json_object_object_get_ex(o, "result", &res))
		return etcd_fail(c->e, -EINVAL, "etcd %s: bad watch answer", c->e->url[c->e->cur]);
	parse_hdr(res, &r.hdr);
	c->e->hdr = r.hdr;
	if (json_object_object_get_ex(res, "created", &v))
		r.created = json_object_get_boolean(v);
	if (json_object_object_get_ex(res, "canceled", &v))
		r.canceled = json_object_get_boolean(v);
	if (json_object_object_get_ex(res, "fragment", &v))
		r.fragment = json_object_get_boolean(v);
	if (json_object_object_get_ex(res, "cancel_reason", &v))
		r.cancel_reason = json_object_get_string(v);
	r.compact_revision = get_i64(res, "compact_revision");
	err = parse_events(res, &r);
	if (err) {
		watch_resp_free(&r);
		return etcd_fail(c->e, err, "etcd %s: bad watch event", c->e->url[c->e->cur]);
	}
	err = c->fn(&r, c->arg);
	watch_resp_free(&r);
	if (!err && r.canceled)
		err = etcd_fail(c->e, r.compact_revision ? -ERANGE : -ECANCELED,
				"etcd %s: watch canceled%s%s", c->e->url[c->e->cur],
				r.compact_revision ? " (compacted)" : "",
				r.cancel_reason ? r.cancel_reason : "");
	return err;
}

static size_t watch_write(char *data, size_t size, size_t nmemb, void *arg)
{
	struct watch_ctx *c = arg;
	size_t n = size * nmemb, off = 0;

	if (c->ret)
		return 0;	/* stopping: see watch_progress() */
	while (off < n) {
		json_object *o = json_tokener_parse_ex(c->tok, data + off, n - off);
		enum json_tokener_error je = json_tokener_get_error(c->tok);

		if (!o && je == json_tokener_continue)
			return n;
		if (!o) {
			c->ret = etcd_fail(c->e, -EINVAL, "etcd %s: bad watch stream: %s",
					   c->e->url[c->e->cur], json_tokener_error_desc(je));
			return 0;
		}
		off += json_tokener_get_parse_end(c->tok);
		json_tokener_reset(c->tok);
		c->ret = watch_object(c, o);
		json_object_put(o);
		if (c->ret)
			return 0;
	}
	return n;
}

static int watch_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct watch_ctx *c = arg;
	time_t now = time(NULL);

	/* The transfer is stopping already (watch_write() returned short):
	 * keep its reason. libcurl may call this once more before it
	 * returns, and a tick of 0 would turn a compaction or a cancel into
	 * a broken connection. */
	if (c->ret)
		return 1;
	if (!c->tick || now == c->last_tick)
		return 0;
	c->last_tick = now;
	c->ret = c->tick(c->arg);
	return c->ret != 0;
}

static json_object *watch_req(const char *key, unsigned int flags, int64_t start, bool progress)
{
	json_object *o = range_req(key, flags & QOS_ETCD_PREFIX, 0, 0), *w;

	if (!o || (start && obj_add(o, "start_revision", int64_string(start))) ||
	    (progress && obj_add(o, "progress_notify", json_object_new_boolean(1))) ||
	    ((flags & QOS_ETCD_PREV_KV) && obj_add(o, "prev_kv", json_object_new_boolean(1)))) {
		json_object_put(o);
		return NULL;
	}
	w = json_object_new_object();
	if (!w || obj_add(w, "create_request", o)) {
		json_object_put(w);
		return NULL;
	}
	return w;
}

int qos_etcd_watch(struct qos_etcd *e, const char *key, unsigned int flags, int64_t start,
		   bool progress, int (*fn)(const struct qos_etcd_watch_resp *r, void *arg),
		   int (*tick)(void *arg), void *arg)
{
	struct watch_ctx c = { .e = e, .fn = fn, .tick = tick, .arg = arg };
	json_object *req = watch_req(key, flags, start, progress);
	CURL *h = curl_easy_init();
	CURLcode rc;

	e->msg[0] = '\0';
	c.tok = json_tokener_new();
	if (!req || !h || !c.tok) {
		c.ret = etcd_fail(e, -ENOMEM, "etcd watch: %s", strerror(ENOMEM));
		goto out;
	}
	setup_handle(e, h, "/v3/watch");
	curl_easy_setopt(h, CURLOPT_POSTFIELDS,
			 qos_json_text(req));
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, watch_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &c);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, watch_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, &c);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	rc = curl_easy_perform(h);
	if (!c.ret) {
		c.ret = etcd_fail(e, rc == CURLE_OK ? -ECANCELED : -ECONNREFUSED,
				  "etcd %s: watch ended: %s", e->url[e->cur],
				  rc == CURLE_OK ? "stream closed" : curl_why(e, rc));
		/* The next call starts at the next member. */
		if (rc != CURLE_OK)
			e->cur = (e->cur + 1) % e->n;
	}
out:
	if (c.tok)
		json_tokener_free(c.tok);
	if (h)
		curl_easy_cleanup(h);
	json_object_put(req);
	return c.ret;
}
