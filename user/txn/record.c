// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Transaction records: a header and the two plans, encoded by
 * qos_plan_encode(), in one file replaced atomically.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "txn/record.h"

#define REC_MAGIC	0x716f7372	/* "qosr" */

struct rec_hdr {
	uint32_t magic;
	uint32_t state;
	uint64_t deadline_ns;
	int64_t keeper;
	uint64_t keeper_start;
	uint64_t prev_len;
	uint64_t next_len;
};

int qos_rec_encode(const struct qos_rec *rec, void **bufp, size_t *lenp)
{
	struct rec_hdr h = {
		.magic = REC_MAGIC,
		.state = rec->state,
		.deadline_ns = rec->deadline_ns,
		.keeper = rec->keeper,
		.keeper_start = rec->keeper_start,
	};
	struct qos_plan next = rec->next;
	void *pb = NULL, *nb = NULL;
	char *buf = NULL;
	size_t pl, nl;
	int ret;

	memset(&next.rules, 0, sizeof(next.rules));
	ret = qos_plan_encode(&rec->prev, &pb, &pl);
	ret = ret ?: qos_plan_encode(&next, &nb, &nl);
	if (ret)
		goto out;
	h.prev_len = pl;
	h.next_len = nl;
	buf = malloc(sizeof(h) + pl + nl);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), pb, pl);
	memcpy(buf + sizeof(h) + pl, nb, nl);
	*bufp = buf;
	*lenp = sizeof(h) + pl + nl;
out:
	free(pb);
	free(nb);
	return ret;
}

int qos_rec_write(const struct qos_dev *dev, const struct qos_rec *rec)
{
	size_t len;
	void *buf;
	int ret;

	ret = qos_rec_encode(rec, &buf, &len);
	if (ret)
		return ret;
	ret = qos_dev_file_write(dev, "txn", buf, len);
	free(buf);
	return ret;
}

/* The header, then the two plans: each length checked against what is
 * left, never summed (two lengths near 2^64 would wrap to the file's). */
int qos_rec_decode(const void *data, size_t len, struct qos_rec *rec)
{
	const char *buf = data;
	struct rec_hdr h;
	int ret;

	memset(rec, 0, sizeof(*rec));
	if (len < sizeof(h))
		return -EINVAL;
	memcpy(&h, buf, sizeof(h));
	len -= sizeof(h);
	if (h.magic != REC_MAGIC || h.prev_len > len || h.next_len != len - h.prev_len ||
	    (h.state != QOS_REC_APPLYING && h.state != QOS_REC_CONFIRM))
		return -EINVAL;
	rec->state = h.state;
	rec->deadline_ns = h.deadline_ns;
	rec->keeper = h.keeper;
	rec->keeper_start = h.keeper_start;
	ret = qos_plan_decode(buf + sizeof(h), h.prev_len, &rec->prev);
	ret = ret ?: qos_plan_decode(buf + sizeof(h) + h.prev_len, h.next_len, &rec->next);
	if (ret)
		qos_rec_free(rec);
	return ret;
}

size_t qos_rec_max_len(void)
{
	return sizeof(struct rec_hdr) + 2 * qos_plan_max_len();
}

int qos_rec_read(const struct qos_dev *dev, struct qos_rec *rec)
{
	size_t len;
	void *buf;
	int ret;

	memset(rec, 0, sizeof(*rec));
	ret = qos_dev_file_read(dev, "txn", &buf, &len, qos_rec_max_len());
	if (ret == -EFBIG)
		return -EINVAL;
	if (ret)
		return ret;
	ret = qos_rec_decode(buf, len, rec);
	free(buf);
	return ret;
}

int qos_rec_remove(const struct qos_dev *dev)
{
	return qos_dev_file_unlink(dev, "txn");
}

void qos_rec_free(struct qos_rec *rec)
{
	qos_plan_free(&rec->prev);
	qos_plan_free(&rec->next);
}

uint64_t qos_proc_start(pid_t pid)
{
	unsigned long long start = 0;
	char path[64], buf[1024], *p;
	size_t n;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* The command name may hold spaces and parentheses: fields are
	 * counted from the last ')'. starttime is field 22. */
	p = strrchr(buf, ')');
	for (i = 2; p && i < 22; i++)
		p = strchr(p + 1, ' ');
	if (p)
		sscanf(p + 1, "%llu", &start);
	return start;
}

bool qos_proc_alive(pid_t pid, uint64_t start)
{
	return pid > 0 && start && qos_proc_start(pid) == start;
}
