/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What revoke-seat and its cutter say to each other: one datagram each way
 * (SOCK_SEQPACKET), text.
 *   list UID TIMEOUT_MS DEV...     -> held 0|1...   (one digit per DEV)
 *   cut UID TIMEOUT_MS DRY DEV     -> result ERRNO HOLDERS REFS ELAPSED_US
 *                                     PIDS
 *                                     WHY
 *   cutall UID TIMEOUT_MS DRY DEV... -> results ERRNO ELAPSED_US N
 *                                     HOLDERS REFS PIDS   (one line per DEV)
 *                                     WHY
 * or "error ERRNO" for a request the cutter refuses. Devices are paths
 * under /dev/ without white space or "..". Parsers are strict and pure: a
 * message is taken only as its format writes it (one spelling: no extra
 * space, no leading zero), checked by writing it again.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "seat.h"

bool cut_dev_valid(const char *dev)
{
	size_t n = strlen(dev);

	if (strncmp(dev, "/dev/", 5) != 0 || n >= CUT_DEV_MAX || strstr(dev, "/../") ||
	    (n >= 3 && strcmp(dev + n - 3, "/..") == 0))
		return false;
	for (const char *p = dev; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return false;
	return true;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *ret)
{
	char *end;
	unsigned long long v;

	if (!s || *s < '0' || *s > '9')
		return -EBADMSG;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -EBADMSG;
	*ret = v;
	return 0;
}

/* Whether BUF (LEN bytes) is what the format wrote (N, its length or -errno). */
static bool same(const char *msg, size_t len, const char *again, int n)
{
	return n >= 0 && (size_t)n == len && memcmp(msg, again, len) == 0;
}

int cut_request_format(const struct cut_request *q, char *buf, size_t size)
{
	size_t len;
	int n;

	if (q->list)
		n = snprintf(buf, size, "list %u %u", (unsigned)q->uid, q->timeout_ms);
	else if (q->all)
		n = snprintf(buf, size, "cutall %u %u %d", (unsigned)q->uid, q->timeout_ms,
			     (int)q->dry_run);
	else
		n = snprintf(buf, size, "cut %u %u %d", (unsigned)q->uid, q->timeout_ms,
			     (int)q->dry_run);
	if (n < 0 || (size_t)n >= size)
		return -E2BIG;
	len = (size_t)n;
	if (!q->ndevs || q->ndevs > CUT_MAX_DEVS || (!q->list && !q->all && q->ndevs != 1))
		return -EINVAL;
	for (size_t i = 0; i < q->ndevs; i++) {
		if (!cut_dev_valid(q->devs[i]))
			return -EINVAL;
		n = snprintf(buf + len, size - len, " %s", q->devs[i]);
		if (n < 0 || (size_t)n >= size - len)
			return -E2BIG;
		len += (size_t)n;
	}
	return (int)len;
}

int cut_request_parse(const char *msg, size_t len, struct cut_request *ret)
{
	static char buf[CUT_MSG_MAX + 1];
	static struct cut_request q;
	char *save = NULL, *w[4 + CUT_MAX_DEVS];
	uint64_t v;
	size_t nw = 0, first;

	if (len == 0 || len > CUT_MSG_MAX || memchr(msg, 0, len))
		return -EBADMSG;
	memcpy(buf, msg, len);
	buf[len] = 0;
	memset(&q, 0, sizeof(q));
	for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		if (nw == sizeof(w) / sizeof(w[0]))
			return -EBADMSG;
		w[nw++] = t;
	}
	if (nw < 4)
		return -EBADMSG;
	if (strcmp(w[0], "list") == 0)
		q.list = true;
	else if (strcmp(w[0], "cutall") == 0)
		q.all = true;
	else if (strcmp(w[0], "cut") != 0)
		return -EBADMSG;
	if (parse_u64(w[1], (uid_t)-2, &v) < 0)
		return -EBADMSG;
	q.uid = (uid_t)v;
	if (parse_u64(w[2], 600000, &v) < 0 || v == 0)
		return -EBADMSG;
	q.timeout_ms = (unsigned int)v;
	first = 3;
	if (!q.list) {
		if ((q.all ? nw < 5 : nw != 5) || parse_u64(w[3], 1, &v) < 0)
			return -EBADMSG;
		q.dry_run = v;
		first = 4;
	}
	for (size_t i = first; i < nw; i++) {
		if (!cut_dev_valid(w[i]))
			return -EBADMSG;
		snprintf(q.devs[q.ndevs++], CUT_DEV_MAX, "%s", w[i]);
	}
	if (!q.ndevs)
		return -EBADMSG;
	{
		static char again[CUT_MSG_MAX + 1];

		if (!same(msg, len, again, cut_request_format(&q, again, sizeof(again))))
			return -EBADMSG;
	}
	*ret = q;
	return 0;
}

int cut_reply_format(const struct cut_result *r, char *buf, size_t size)
{
	char pids[sizeof(r->pids)], why[sizeof(r->why)];
	int n;

	/* One line each: no newline inside. */
	snprintf(pids, sizeof(pids), "%s", r->pids);
	snprintf(why, sizeof(why), "%s", r->why);
	for (char *p = pids; *p; p++)
		if (*p == '\n')
			*p = ' ';
	for (char *p = why; *p; p++)
		if (*p == '\n')
			*p = ' ';
	n = snprintf(buf, size, "result %d %u %u %" PRIu64 "\n%s\n%s", r->error, r->holders,
		     r->refs, r->elapsed_us, pids, why);
	return n < 0 || (size_t)n >= size ? -E2BIG : n;
}

int cut_reply_parse(const char *msg, size_t len, struct cut_result *ret)
{
	static char buf[CUT_MSG_MAX + 1];
	char *l1, *l2, *l3, *save = NULL, *w[5];
	struct cut_result r = {0};
	uint64_t v;
	size_t nw = 0;

	if (len == 0 || len > CUT_MSG_MAX || memchr(msg, 0, len))
		return -EBADMSG;
	memcpy(buf, msg, len);
	buf[len] = 0;
	l1 = buf;
	l2 = strchr(l1, '\n');
	if (!l2)
		return -EBADMSG;
	*l2++ = 0;
	l3 = strchr(l2, '\n');
	if (!l3 || strchr(l3 + 1, '\n'))
		return -EBADMSG;
	*l3++ = 0;
	for (char *t = strtok_r(l1, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		if (nw == 5)
			return -EBADMSG;
		w[nw++] = t;
	}
	if (nw != 5 || strcmp(w[0], "result") != 0 || parse_u64(w[1], 4095, &v) < 0)
		return -EBADMSG;
	r.error = (int)v;
	if (parse_u64(w[2], UINT_MAX, &v) < 0)
		return -EBADMSG;
	r.holders = (unsigned int)v;
	if (parse_u64(w[3], UINT_MAX, &v) < 0)
		return -EBADMSG;
	r.refs = (unsigned int)v;
	if (parse_u64(w[4], UINT64_MAX, &r.elapsed_us) < 0)
		return -EBADMSG;
	if (strlen(l2) >= sizeof(r.pids) || strlen(l3) >= sizeof(r.why))
		return -EBADMSG;
	snprintf(r.pids, sizeof(r.pids), "%s", l2);
	snprintf(r.why, sizeof(r.why), "%s", l3);
	{
		static char again[CUT_MSG_MAX + 1];

		if (!same(msg, len, again, cut_reply_format(&r, again, sizeof(again))))
			return -EBADMSG;
	}
	*ret = r;
	return 0;
}

/* A line's worth of TEXT: no newline inside. */
static void one_line(char *dst, size_t size, const char *text)
{
	snprintf(dst, size, "%s", text);
	for (char *p = dst; *p; p++)
		if (*p == '\n')
			*p = ' ';
}

int cut_all_format(const struct cut_all_result *r, char *buf, size_t size)
{
	char line[600];
	size_t len;
	int n;

	n = snprintf(buf, size, "results %d %" PRIu64 " %zu\n", r->error, r->elapsed_us, r->n);
	if (n < 0 || (size_t)n >= size || r->n > CUT_MAX_DEVS)
		return -E2BIG;
	len = (size_t)n;
	for (size_t i = 0; i < r->n; i++) {
		one_line(line, sizeof(line), r->dev[i].pids);
		n = snprintf(buf + len, size - len, "%u %u %s\n", r->dev[i].holders, r->dev[i].refs,
			     line);
		if (n < 0 || (size_t)n >= size - len)
			return -E2BIG;
		len += (size_t)n;
	}
	one_line(line, sizeof(line), r->why);
	n = snprintf(buf + len, size - len, "%s", line);
	if (n < 0 || (size_t)n >= size - len)
		return -E2BIG;
	return (int)(len + (size_t)n);
}

/* Splits "A B rest" into two numbers and the rest. */
static int two_and_rest(char *line, uint64_t *a, uint64_t *b, char **rest)
{
	char *s1 = strchr(line, ' '), *s2;

	if (!s1)
		return -EBADMSG;
	*s1++ = 0;
	s2 = strchr(s1, ' ');
	if (!s2)
		return -EBADMSG;
	*s2++ = 0;
	if (parse_u64(line, UINT_MAX, a) < 0 || parse_u64(s1, UINT_MAX, b) < 0)
		return -EBADMSG;
	*rest = s2;
	return 0;
}

int cut_all_parse(const char *msg, size_t len, size_t n, struct cut_all_result *ret)
{
	static char buf[CUT_MSG_MAX + 1];
	static struct cut_all_result r;
	char *line, *next, *save = NULL, *w[5];
	size_t nw = 0;
	uint64_t v, a, b;

	if (len == 0 || len > CUT_MSG_MAX || memchr(msg, 0, len) || n > CUT_MAX_DEVS)
		return -EBADMSG;
	memcpy(buf, msg, len);
	buf[len] = 0;
	memset(&r, 0, sizeof(r));
	line = buf;
	next = strchr(line, '\n');
	if (!next)
		return -EBADMSG;
	*next++ = 0;
	for (char *t = strtok_r(line, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		if (nw == 5)
			return -EBADMSG;
		w[nw++] = t;
	}
	if (nw != 4 || strcmp(w[0], "results") != 0 || parse_u64(w[1], 4095, &v) < 0)
		return -EBADMSG;
	r.error = (int)v;
	if (parse_u64(w[2], UINT64_MAX, &r.elapsed_us) < 0 || parse_u64(w[3], n, &v) < 0 || v != n)
		return -EBADMSG;
	r.n = n;
	for (size_t i = 0; i < n; i++) {
		char *rest;

		line = next;
		next = strchr(line, '\n');
		if (!next)
			return -EBADMSG;
		*next++ = 0;
		if (two_and_rest(line, &a, &b, &rest) < 0 || strlen(rest) >= sizeof(r.dev[i].pids))
			return -EBADMSG;
		r.dev[i].holders = (unsigned int)a;
		r.dev[i].refs = (unsigned int)b;
		snprintf(r.dev[i].pids, sizeof(r.dev[i].pids), "%s", rest);
	}
	if (strchr(next, '\n') || strlen(next) >= sizeof(r.why))
		return -EBADMSG;
	snprintf(r.why, sizeof(r.why), "%s", next);
	{
		static char again[CUT_MSG_MAX + 1];

		if (!same(msg, len, again, cut_all_format(&r, again, sizeof(again))))
			return -EBADMSG;
	}
	*ret = r;
	return 0;
}

int cut_held_format(const bool *held, size_t n, char *buf, size_t size)
{
	size_t len = 4;

	if (size < 5 + 2 * n)
		return -E2BIG;
	memcpy(buf, "held", 4);
	for (size_t i = 0; i < n; i++) {
		buf[len++] = ' ';
		buf[len++] = held[i] ? '1' : '0';
	}
	buf[len] = 0;
	return (int)len;
}

int cut_held_parse(const char *msg, size_t len, size_t n, bool *held)
{
	if (len != 4 + 2 * n || memcmp(msg, "held", 4) != 0)
		return -EBADMSG;
	for (size_t i = 0; i < n; i++) {
		char c = msg[5 + 2 * i];

		if (msg[4 + 2 * i] != ' ' || (c != '0' && c != '1'))
			return -EBADMSG;
		held[i] = c == '1';
	}
	return 0;
}

/* "error ERRNO": the cutter refused the request. */
int cut_error_parse(const char *msg, size_t len, int *ret)
{
	char buf[32];
	uint64_t v;

	if (len < 7 || len >= sizeof(buf) || memcmp(msg, "error ", 6) != 0)
		return -EBADMSG;
	memcpy(buf, msg + 6, len - 6);
	buf[len - 6] = 0;
	if (parse_u64(buf, 4095, &v) < 0 || v == 0 || (buf[0] == '0'))
		return -EBADMSG;
	*ret = (int)v;
	return 0;
}
