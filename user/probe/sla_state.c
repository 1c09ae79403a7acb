// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * SLA verdicts from the probe to `qosctl show`, through files.
 *
 * The probe runs without privilege (a systemd DynamicUser), so its
 * directory cannot be root's: systemd makes it, RuntimeDirectory=
 * qosctl-probe/%i, owned by the unit's user inside PROBE_STATE_DIR, which
 * it makes root's and 0755. What show trusts follows from that chain: only
 * root can add to PROBE_STATE_DIR, so a probe directory there was made or
 * handed out by root; only its owner can add to a probe directory that is
 * writable by no one else, so a file there owned by that owner (or root),
 * not a symlink, with one link, is the probe's. Anything else is refused
 * with a warning and left out. Every step goes through the directory fds,
 * with O_NOFOLLOW, and checks what it opened (fstat), not a path.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "lib/file.h"
#include "lib/names.h"
#include "lib/util.h"
#include "probe/sla_state.h"

/* The state of a sender is a few hundred bytes. */
#define PSTATE_MAX_SIZE		65536
/* About 104 days: longer than probe send's longest window (100000 packets
 * 60 s apart, 69 days), and PROBE_STALE_WINDOWS times it cannot wrap. A
 * longer window is not a probe's. */
#define PSTATE_MAX_WINDOW_NS	(1ULL << 53)

const char *const pstate_verdict_names[] = {
	[PSTATE_MET] = "met", [PSTATE_VIOLATED] = "violated", [PSTATE_STALE] = "stale",
};

static void file_name(uint64_t netns, int ifindex, char *buf, size_t len)
{
	snprintf(buf, len, "%016" PRIx64 "-%d.sla", netns, ifindex);
}

/* Why the directory or file @st, owned by someone other than @uid (any
 * owner if @uid is -1) or writable by group or others, is refused; NULL if
 * it is not. */
static const char *untrusted(const struct stat *st, uid_t uid, char *buf, size_t len)
{
	if (uid != (uid_t)-1 && st->st_uid != uid) {
		snprintf(buf, len, "owned by uid %u, not %u", st->st_uid, uid);
		return buf;
	}
	if (st->st_mode & 022) {
		snprintf(buf, len, "mode %04o, writable by group or others", st->st_mode & 07777);
		return buf;
	}
	return NULL;
}

/* Open directory @name in @at (AT_FDCWD: a path), no symlink; made with
 * mode 0755 if missing and @make. *@made says whether it was. */
static int open_dir(int at, const char *name, bool make, bool *made)
{
	int fd;

	*made = false;
	fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 || errno != ENOENT || !make)
		return fd < 0 ? -errno : fd;
	if (!mkdirat(at, name, 0755))
		*made = true;
	else if (errno != EEXIST)
		return -errno;
	fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Whatever the umask: show, run by root, reads it either way, but
	 * the mode is what the documentation says. */
	if (*made)
		fchmod(fd, 0755);
	return fd;
}

/* A directory name of our own: never "." or "..", nor hidden. */
static bool name_ok(const char *s)
{
	return qos_name_ok(s, sizeof(((struct pstate_pub *)0)->dir) - 1) && s[0] != '.';
}

int pstate_open(struct pstate_pub *p, const char *name, const char *ifname, uint64_t window_ns,
		char *err, size_t errlen)
{
	char why[64], esc[QOS_ESC_LEN];
	uint64_t netns;
	struct stat st;
	int base, ifindex, r;
	bool made;

	memset(p, 0, sizeof(*p));
	p->dirfd = -1;
	if (!name_ok(name)) {
		snprintf(err, errlen, "state '%s': expected 1-%zu of " QOS_NAME_CHARS
			 ", not starting with '.'", qos_esc(name, esc, sizeof(esc)),
			 sizeof(p->dir) - 1);
		return -EINVAL;
	}
	ifindex = if_nametoindex(ifname);
	if (!ifindex) {
		snprintf(err, errlen, "dev %s: %s", ifname, strerror(errno));
		return -ENODEV;
	}
	r = qos_netns_cookie(&netns);
	if (r) {
		snprintf(err, errlen, "the network namespace's cookie: %s", strerror(-r));
		return r;
	}
	base = open_dir(AT_FDCWD, PROBE_STATE_DIR, geteuid() == 0, &made);
	if (base < 0) {
		snprintf(err, errlen, "%s: %s", PROBE_STATE_DIR,
			 base == -ELOOP || base == -ENOTDIR ? "a symlink or not a directory: refused" :
			 strerror(-base));
		return base;
	}
	if (fstat(base, &st) || untrusted(&st, 0, why, sizeof(why))) {
		snprintf(err, errlen, "%s: %s: refused", PROBE_STATE_DIR, why);
		close(base);
		return -EPERM;
	}
	p->dirfd = open_dir(base, name, true, &p->made_dir);
	close(base);
	if (p->dirfd < 0) {
		r = p->dirfd;
		snprintf(err, errlen, "%s/%s: %s", PROBE_STATE_DIR, name,
			 r == -ELOOP || r == -ENOTDIR ? "a symlink or not a directory: refused" :
			 strerror(-r));
		return r;
	}
	if (fstat(p->dirfd, &st) || untrusted(&st, geteuid(), why, sizeof(why))) {
		snprintf(err, errlen, "%s/%s: %s: refused", PROBE_STATE_DIR, name, why);
		close(p->dirfd);
		p->dirfd = -1;
		return -EPERM;
	}
	snprintf(p->dir, sizeof(p->dir), "%s", name);
	file_name(netns, ifindex, p->file, sizeof(p->file));
	p->window_ns = window_ns;
	return 0;
}

int pstate_publish(struct pstate_pub *p, const struct pm_target *t)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	const struct pm_sla *sla = t->sla;
	const char *s;
	unsigned int i;
	int r;

	json_object_object_add(o, "target", json_object_new_string(t->target));
	json_object_object_add(o, "family", json_object_new_string(t->family));
	json_object_object_add(o, "window_ns", json_object_new_uint64(p->window_ns));
	json_object_object_add(o, "windows", json_object_new_uint64(t->windows));
	json_object_object_add(o, "end_boottime_ns", json_object_new_uint64(qos_boottime_ns()));
	for (i = 0; i < t->n; i++) {
		const struct pm_stream *m = &t->m[i];
		json_object *e;

		if (m->sla_met < 0)
			continue;
		e = json_object_new_object();
		json_object_object_add(e, "class", json_object_new_string(t->s[i].name));
		json_object_object_add(e, "delay_p99_bound_ns", sla->delay_p99_ns ?
				       json_object_new_uint64(sla->delay_p99_ns) : NULL);
		json_object_object_add(e, "loss_bound_pct", sla->loss_ratio >= 0 ?
				       json_object_new_double(sla->loss_ratio * 100) : NULL);
		json_object_object_add(e, "delay_p99_ns", json_object_new_int64(m->p99_ns));
		json_object_object_add(e, "loss_pct", json_object_new_double(m->loss_ratio * 100));
		json_object_object_add(e, "met", json_object_new_boolean(m->sla_met));
		json_object_array_add(a, e);
	}
	json_object_object_add(o, "sla", a);
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	r = qos_file_replace(p->dirfd, p->file, s, strlen(s), 0644);
	json_object_put(o);
	return r;
}

void pstate_close(struct pstate_pub *p)
{
	int base;

	if (p->dirfd < 0)
		return;
	unlinkat(p->dirfd, p->file, 0);
	close(p->dirfd);
	p->dirfd = -1;
	if (!p->made_dir)
		return;
	base = open(PROBE_STATE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (base >= 0) {
		unlinkat(base, p->dir, AT_REMOVEDIR);
		close(base);
	}
}

static bool get_u64(json_object *o, const char *k, uint64_t *v)
{
	json_object *x;

	if (!json_object_object_get_ex(o, k, &x) || !json_object_is_type(x, json_type_int))
		return false;
	*v = json_object_get_uint64(x);
	return true;
}

/* A number, or null (-1) when @null_ok. */
static bool get_num(json_object *o, const char *k, bool null_ok, double *v)
{
	json_object *x;

	if (!json_object_object_get_ex(o, k, &x))
		return false;
	if (!x) {
		*v = -1;
		return null_ok;
	}
	if (!json_object_is_type(x, json_type_int) && !json_object_is_type(x, json_type_double))
		return false;
	*v = json_object_get_double(x);
	return true;
}

static bool get_str(json_object *o, const char *k, char *buf, size_t len)
{
	json_object *x;

	if (!json_object_object_get_ex(o, k, &x) || !json_object_is_type(x, json_type_string) ||
	    (size_t)json_object_get_string_len(x) >= len)
		return false;
	snprintf(buf, len, "%s", json_object_get_string(x));
	return true;
}

bool pstate_parse(const char *probe, const char *text, struct pstate_sla **v, int *n)
{
	json_object *o = json_tokener_parse(text), *a, *e;
	uint64_t window, windows, end, now = qos_boottime_ns();
	struct pstate_sla base = {}, *nv;
	bool ok = false;
	size_t i;

	if (!o || !get_str(o, "target", base.target, sizeof(base.target)) ||
	    !get_str(o, "family", base.family, sizeof(base.family)) ||
	    !get_u64(o, "window_ns", &window) || !get_u64(o, "windows", &windows) ||
	    !get_u64(o, "end_boottime_ns", &end) || !json_object_object_get_ex(o, "sla", &a) ||
	    !json_object_is_type(a, json_type_array) || window > PSTATE_MAX_WINDOW_NS ||
	    json_object_array_length(a) > QOS_MAX_CLASSES)
		goto out;
	snprintf(base.probe, sizeof(base.probe), "%.63s", probe);
	base.windows = windows;
	base.age_ns = now > end ? now - end : 0;
	for (i = 0; i < json_object_array_length(a); i++) {
		struct pstate_sla s = base;
		double bound, p99;
		json_object *x;

		e = json_object_array_get_idx(a, i);
		if (!get_str(e, "class", s.cls, sizeof(s.cls)) ||
		    !get_num(e, "delay_p99_bound_ns", true, &bound) ||
		    !get_num(e, "loss_bound_pct", true, &s.loss_bound_pct) ||
		    !get_num(e, "delay_p99_ns", false, &p99) ||
		    !get_num(e, "loss_pct", false, &s.loss_pct) ||
		    !json_object_object_get_ex(e, "met", &x) ||
		    !json_object_is_type(x, json_type_boolean))
			goto out;
		s.delay_p99_bound_ns = bound > 0 ? (uint64_t)bound : 0;
		s.delay_p99_ns = p99;
		if (s.age_ns > PROBE_STALE_WINDOWS * window)
			s.verdict = PSTATE_STALE;
		else
			s.verdict = json_object_get_boolean(x) ? PSTATE_MET : PSTATE_VIOLATED;
		nv = realloc(*v, (*n + 1) * sizeof(**v));
		if (!nv)
			goto out;
		*v = nv;
		(*v)[(*n)++] = s;
	}
	ok = true;
out:
	json_object_put(o);
	return ok;
}

/* One probe's directory @name in @base: its SLAs for the device's @file. */
static void read_probe(int base, const char *name, const char *file, struct pstate_sla **v,
		       int *n)
{
	char why[64], *text = NULL;
	struct stat dst, fst;
	size_t len;
	int dfd, fd;

	if (!name_ok(name) || fstatat(base, name, &dst, AT_SYMLINK_NOFOLLOW))
		return;
	if (S_ISLNK(dst.st_mode)) {
		qos_warn("%s/%s: a symlink: refused", PROBE_STATE_DIR, name);
		return;
	}
	if (!S_ISDIR(dst.st_mode))
		return;
	dfd = openat(base, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return;
	if (fstat(dfd, &dst) || untrusted(&dst, -1, why, sizeof(why))) {
		qos_warn("%s/%s: %s: refused", PROBE_STATE_DIR, name, why);
		goto out;
	}
	/* O_NONBLOCK: a FIFO planted in its place must not hang show. */
	fd = openat(dfd, file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP)
			qos_warn("%s/%s/%s: a symlink: refused", PROBE_STATE_DIR, name, file);
		else if (errno != ENOENT)
			qos_warn("%s/%s/%s: %s", PROBE_STATE_DIR, name, file, strerror(errno));
		goto out;
	}
	if (fstat(fd, &fst))
		snprintf(why, sizeof(why), "%s", strerror(errno));
	else if (!S_ISREG(fst.st_mode))
		snprintf(why, sizeof(why), "not a regular file");
	else if (fst.st_nlink != 1)
		snprintf(why, sizeof(why), "%ju links", (uintmax_t)fst.st_nlink);
	else if (fst.st_size > PSTATE_MAX_SIZE)
		snprintf(why, sizeof(why), "%jd bytes", (intmax_t)fst.st_size);
	else if (!untrusted(&fst, fst.st_uid ? dst.st_uid : 0, why, sizeof(why)))
		why[0] = 0;
	/* The cap again where it is read: the file may have grown since. */
	if (!why[0] && !qos_file_read_fd(fd, (void **)&text, &len, PSTATE_MAX_SIZE)) {
		if (!pstate_parse(name, text, v, n))
			qos_warn("%s/%s/%s: not a probe's state: refused", PROBE_STATE_DIR,
				 name, file);
		free(text);
	} else if (why[0]) {
		qos_warn("%s/%s/%s: %s: refused", PROBE_STATE_DIR, name, file, why);
	}
	close(fd);
out:
	close(dfd);
}

static int cmp(const void *a, const void *b)
{
	const struct pstate_sla *x = a, *y = b;

	return strcmp(x->probe, y->probe) ?: strcmp(x->cls, y->cls);
}

int pstate_read(uint64_t netns, int ifindex, struct pstate_sla **out, char *err, size_t errlen)
{
	struct pstate_sla *v = NULL;
	char file[64], why[64];
	struct dirent *de;
	struct stat st;
	int base, n = 0;
	DIR *d;

	*out = NULL;
	base = open(PROBE_STATE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (base < 0 && errno == ENOENT)
		return 0;
	if (base < 0) {
		snprintf(err, errlen, "%s: %s", PROBE_STATE_DIR,
			 errno == ELOOP || errno == ENOTDIR ?
			 "a symlink or not a directory: refused" : strerror(errno));
		return -EPERM;
	}
	if (fstat(base, &st) || untrusted(&st, 0, why, sizeof(why))) {
		snprintf(err, errlen, "%s: %s: refused", PROBE_STATE_DIR, why);
		close(base);
		return -EPERM;
	}
	d = fdopendir(dup(base));
	if (!d) {
		snprintf(err, errlen, "%s: %s", PROBE_STATE_DIR, strerror(errno));
		close(base);
		return -errno;
	}
	file_name(netns, ifindex, file, sizeof(file));
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			read_probe(base, de->d_name, file, &v, &n);
	closedir(d);
	close(base);
	if (n)
		qsort(v, n, sizeof(*v), cmp);
	*out = v;
	return n;
}
