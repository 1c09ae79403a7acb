// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libcurl and libmicrohttpd, loaded when first called rather than at every
 * start of qosctl. Only the domain commands and the agent talk to etcd and
 * only the exporter serves HTTP, yet the dynamic loader mapped and
 * relocated both, with gnutls, krb5, ldap and some twenty more libraries
 * behind them, for every command: 8 ms of each `qosctl apply` on the
 * machines of Documentation/performance.rst ("Apply latency"), a third of
 * a re-apply.
 *
 * The functions qosctl calls are defined here under the libraries' own
 * names (the binary is not linked against them), so the callers keep the
 * headers' declarations and type checks; each looks its function up in
 * the library, opened once with dlopen(). A library that cannot be opened
 * makes its entry points fail as they document failure (curl_global_init()
 * and curl_easy_init() with an error, MHD_start_daemon() with NULL), and
 * the reason is printed once on stderr.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include <curl/curl.h>
#include <microhttpd.h>

#include "qos_features.h"

struct lazylib {
	const char *soname;
	pthread_once_t once;
	void *h;
};

static struct lazylib curl = { QOS_LIBCURL_SONAME, PTHREAD_ONCE_INIT, NULL };
static struct lazylib mhd = { QOS_LIBMHD_SONAME, PTHREAD_ONCE_INIT, NULL };

static void open_curl(void)
{
	curl.h = dlopen(curl.soname, RTLD_LAZY | RTLD_LOCAL);
	if (!curl.h)
		fprintf(stderr, "qosctl: %s\n", dlerror());
}

static void open_mhd(void)
{
	mhd.h = dlopen(mhd.soname, RTLD_LAZY | RTLD_LOCAL);
	if (!mhd.h)
		fprintf(stderr, "qosctl: %s\n", dlerror());
}

static void *lazy_sym(struct lazylib *l, void (*open_fn)(void), const char *name)
{
	pthread_once(&l->once, open_fn);
	return l->h ? dlsym(l->h, name) : NULL;
}

/* The function @name of @lib, typed as its declaration, or NULL. */
#define CURL_FN(name) ((__typeof__(&name))lazy_sym(&curl, open_curl, #name))
#define MHD_FN(name) ((__typeof__(&name))lazy_sym(&mhd, open_mhd, #name))

CURLcode curl_global_init(long flags)
{
	__typeof__(&curl_global_init) fn = CURL_FN(curl_global_init);

	return fn ? fn(flags) : CURLE_FAILED_INIT;
}

CURL *curl_easy_init(void)
{
	__typeof__(&curl_easy_init) fn = CURL_FN(curl_easy_init);

	return fn ? fn() : NULL;
}

/* The one argument after @opt is of the type the option's number range
 * says (curl.h, CURLOPTTYPE_*), as libcurl itself reads it. */
CURLcode(curl_easy_setopt)(CURL *h, CURLoption opt, ...)
{
	__typeof__(&curl_easy_setopt) fn = CURL_FN(curl_easy_setopt);
	CURLcode rc;
	va_list ap;

	if (!fn)
		return CURLE_FAILED_INIT;
	va_start(ap, opt);
	if (opt < CURLOPTTYPE_OBJECTPOINT)
		rc = fn(h, opt, va_arg(ap, long));
	else if (opt >= CURLOPTTYPE_OFF_T && opt < CURLOPTTYPE_BLOB)
		rc = fn(h, opt, va_arg(ap, curl_off_t));
	else
		rc = fn(h, opt, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

/* Every CURLINFO_* is given a pointer to where the answer goes. */
CURLcode(curl_easy_getinfo)(CURL *h, CURLINFO info, ...)
{
	__typeof__(&curl_easy_getinfo) fn = CURL_FN(curl_easy_getinfo);
	CURLcode rc;
	va_list ap;

	if (!fn)
		return CURLE_FAILED_INIT;
	va_start(ap, info);
	rc = fn(h, info, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

CURLcode curl_easy_perform(CURL *h)
{
	__typeof__(&curl_easy_perform) fn = CURL_FN(curl_easy_perform);

	return fn ? fn(h) : CURLE_FAILED_INIT;
}

void curl_easy_reset(CURL *h)
{
	__typeof__(&curl_easy_reset) fn = CURL_FN(curl_easy_reset);

	if (fn)
		fn(h);
}

void curl_easy_cleanup(CURL *h)
{
	__typeof__(&curl_easy_cleanup) fn = CURL_FN(curl_easy_cleanup);

	if (fn)
		fn(h);
}

const char *curl_easy_strerror(CURLcode rc)
{
	__typeof__(&curl_easy_strerror) fn = CURL_FN(curl_easy_strerror);

	return fn ? fn(rc) : "libcurl not loaded";
}

struct curl_slist *curl_slist_append(struct curl_slist *l, const char *s)
{
	__typeof__(&curl_slist_append) fn = CURL_FN(curl_slist_append);

	return fn ? fn(l, s) : NULL;
}

void curl_slist_free_all(struct curl_slist *l)
{
	__typeof__(&curl_slist_free_all) fn = CURL_FN(curl_slist_free_all);

	if (fn)
		fn(l);
}

/* The options go on as the va_list MHD_start_daemon_va() takes. */
struct MHD_Daemon *MHD_start_daemon(unsigned int flags, uint16_t port,
				    MHD_AcceptPolicyCallback apc, void *apc_cls,
				    MHD_AccessHandlerCallback dh, void *dh_cls, ...)
{
	__typeof__(&MHD_start_daemon_va) fn = MHD_FN(MHD_start_daemon_va);
	struct MHD_Daemon *d;
	va_list ap;

	if (!fn)
		return NULL;
	va_start(ap, dh_cls);
	d = fn(flags, port, apc, apc_cls, dh, dh_cls, ap);
	va_end(ap);
	return d;
}

void MHD_stop_daemon(struct MHD_Daemon *d)
{
	__typeof__(&MHD_stop_daemon) fn = MHD_FN(MHD_stop_daemon);

	if (fn)
		fn(d);
}

/* qosctl asks only for the kinds of information that take no argument
 * after @type (the socket context, the connection's fd). */
const union MHD_ConnectionInfo *MHD_get_connection_info(struct MHD_Connection *c,
							enum MHD_ConnectionInfoType type, ...)
{
	__typeof__(&MHD_get_connection_info) fn = MHD_FN(MHD_get_connection_info);

	return fn ? fn(c, type) : NULL;
}

struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buf,
						     enum MHD_ResponseMemoryMode mode)
{
	__typeof__(&MHD_create_response_from_buffer) fn = MHD_FN(MHD_create_response_from_buffer);

	return fn ? fn(size, buf, mode) : NULL;
}

enum MHD_Result MHD_add_response_header(struct MHD_Response *r, const char *header,
					const char *content)
{
	__typeof__(&MHD_add_response_header) fn = MHD_FN(MHD_add_response_header);

	return fn ? fn(r, header, content) : MHD_NO;
}

enum MHD_Result MHD_queue_response(struct MHD_Connection *c, unsigned int status,
				   struct MHD_Response *r)
{
	__typeof__(&MHD_queue_response) fn = MHD_FN(MHD_queue_response);

	return fn ? fn(c, status, r) : MHD_NO;
}

void MHD_destroy_response(struct MHD_Response *r)
{
	__typeof__(&MHD_destroy_response) fn = MHD_FN(MHD_destroy_response);

	if (fn)
		fn(r);
}
