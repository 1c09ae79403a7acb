/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The SLA verdicts of `probe send --continuous dev IFACE`, published for
 * `qosctl show dev IFACE`: after every window the probe replaces (temp file,
 * rename) "<netns cookie>-<ifindex>.sla" in its own directory under
 * PROBE_STATE_DIR, and show reads every probe's file for its device, trusting
 * only what the directory chain says the probe wrote
 * (Documentation/assurance.rst, "The verdict in qosctl show").
 */
#ifndef __QOS_PROBE_SLA_STATE_H
#define __QOS_PROBE_SLA_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probe/sla_metrics.h"

#define PROBE_STATE_DIR		"/run/qosctl-probe"
/* A verdict older than this many of its windows is shown as stale. */
#define PROBE_STALE_WINDOWS	3

/* The probe's side: its directory, opened and checked once. */
struct pstate_pub {
	int dirfd;
	char dir[64];			/* the probe's directory, under PROBE_STATE_DIR */
	char file[64];			/* "<netns cookie>-<ifindex>.sla" */
	bool made_dir;			/* made by this process: removed at its end */
	uint64_t window_ns;		/* the longest a window can take */
};

/* Open (as root: create) PROBE_STATE_DIR/@name for the device @ifname of
 * this network namespace. -errno, @err says. */
int pstate_open(struct pstate_pub *p, const char *name, const char *ifname, uint64_t window_ns,
		char *err, size_t errlen);
/* Replace the file with @t's last window. -errno. */
int pstate_publish(struct pstate_pub *p, const struct pm_target *t);
/* Remove the file (and the directory, if made here): the probe stopped. */
void pstate_close(struct pstate_pub *p);

enum pstate_verdict { PSTATE_MET, PSTATE_VIOLATED, PSTATE_STALE };

/* One SLA of one probe, as show reads it. */
struct pstate_sla {
	char probe[64];			/* the probe's directory name */
	char target[64];
	char family[8];
	char cls[QOS_CLASS_NAME_LEN];
	uint64_t delay_p99_bound_ns;	/* 0: no bound */
	double loss_bound_pct;		/* < 0: no bound */
	int64_t delay_p99_ns;
	double loss_pct;
	uint64_t windows;
	uint64_t age_ns;		/* since the last window ended */
	enum pstate_verdict verdict;
};

extern const char *const pstate_verdict_names[];

/* The SLAs of probe @probe's JSON state @text (a string), appended to *@v
 * (*@n of them). False if it is not a probe's state: malformed, a window
 * longer than probe send makes, more SLAs than classes. */
bool pstate_parse(const char *probe, const char *text, struct pstate_sla **v, int *n);

/*
 * The SLAs published for device (@netns, @ifindex): their number (in
 * *@out, malloc()ed), or -errno when PROBE_STATE_DIR itself cannot be
 * trusted. A probe's directory or file that cannot be trusted or read is
 * left out, with a warning naming it.
 */
int pstate_read(uint64_t netns, int ifindex, struct pstate_sla **out, char *err, size_t errlen);

#endif /* __QOS_PROBE_SLA_STATE_H */
