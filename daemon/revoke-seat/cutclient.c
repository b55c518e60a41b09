/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * revoke-seat's side of the cutter (cutter.c): one connection, kept; a
 * request that meets a dead connection (the cutter was killed, or restarted)
 * is sent once more on a new one, which systemd's socket activation answers
 * with a new cutter (a revocation done twice cuts nothing the second time).
 * With no cutter socket at all (revoke-seat run by hand as root) the
 * revocations run in this process.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include "seat.h"

/* The bound on an answer beyond the revocation's own timeout. */
#define SLACK_MS 5000

static int conn = -1;
static bool in_process_said;

static const char *socket_path(void)
{
	const char *env = getenv("REVOKE_SEAT_CUTTER");

	return env && *env ? env : CUT_SOCKET;
}

static int connect_cutter(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	const char *path = socket_path();
	int fd;

	if (strcmp(path, "-") == 0 || strlen(path) >= sizeof(sa.sun_path))
		return -ENOENT;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

/* REQ to the cutter, its answer in REPLY: the answer's length, -ENOENT or
 * -ECONNREFUSED when there is no cutter, or another -errno. */
static int call(const char *req, size_t len, char *reply, size_t size, unsigned int timeout_ms)
{
	int r = 0;

	for (int attempt = 0; attempt < 2; attempt++) {
		struct pollfd p;
		ssize_t n;

		if (conn < 0) {
			conn = connect_cutter();
			if (conn < 0) {
				r = conn;
				conn = -1;
				return r;
			}
		}
		if (send(conn, req, len, MSG_NOSIGNAL) < 0) {
			r = -errno;
			conn = (close(conn), -1);
			continue;
		}
		p = (struct pollfd){.fd = conn, .events = POLLIN};
		n = poll(&p, 1, (int)(timeout_ms + SLACK_MS));
		if (n == 0) {
			/* It goes on alone; a new connection for the next. */
			conn = (close(conn), -1);
			return -ETIMEDOUT;
		}
		n = n < 0 ? -1 : recv(conn, reply, size, 0);
		if (n > 0)
			return (int)n;
		r = n < 0 ? -errno : -ECONNRESET;
		say(LOG_WARNING,
		    "the cutter (%s) went away in the middle of a request (%s); asking "
		    "again",
		    socket_path(), strerror(-r));
		conn = (close(conn), -1);
	}
	return r;
}

static bool no_cutter(int r)
{
	if (r != -ENOENT && r != -ECONNREFUSED)
		return false;
	if (!in_process_said) {
		say(LOG_NOTICE, "no cutter at %s: revoking in this process", socket_path());
		in_process_said = true;
	}
	return true;
}

int seat_list_held(uid_t uid, unsigned int timeout_ms, const struct seat_device *devs, size_t n,
		   bool *held)
{
	static struct cut_request q;
	static char req[CUT_MSG_MAX], reply[CUT_MSG_MAX];
	int len, r, e;

	if (n > CUT_MAX_DEVS)
		return -E2BIG;
	q = (struct cut_request){.list = true, .uid = uid, .timeout_ms = timeout_ms, .ndevs = n};
	for (size_t i = 0; i < n; i++)
		snprintf(q.devs[i], CUT_DEV_MAX, "%s", devs[i].devnode);
	len = cut_request_format(&q, req, sizeof(req));
	if (len < 0)
		return len;
	r = call(req, (size_t)len, reply, sizeof(reply), timeout_ms);
	if (r < 0 && no_cutter(r)) {
		const char *paths[CUT_MAX_DEVS];

		for (size_t i = 0; i < n; i++)
			paths[i] = devs[i].devnode;
		return cut_list_held(uid, timeout_ms, paths, n, held);
	}
	if (r < 0)
		return r;
	if (cut_error_parse(reply, (size_t)r, &e) == 0)
		return -e;
	return cut_held_parse(reply, (size_t)r, n, held);
}

void seat_cut(uid_t uid, unsigned int timeout_ms, bool dry_run, const char *dev,
	      struct cut_result *res)
{
	struct cut_request q = {
	    .uid = uid, .timeout_ms = timeout_ms, .dry_run = dry_run, .ndevs = 1};
	char req[CUT_MSG_MAX], reply[CUT_MSG_MAX];
	int len, r, e;

	q = (struct cut_request){
	    .uid = uid, .timeout_ms = timeout_ms, .dry_run = dry_run, .ndevs = 1};
	snprintf(q.devs[0], CUT_DEV_MAX, "%s", dev);
	len = cut_request_format(&q, req, sizeof(req));
	r = len < 0 ? len : call(req, (size_t)len, reply, sizeof(reply), timeout_ms);
	if (r < 0 && no_cutter(r)) {
		cut_device(uid, timeout_ms, dry_run, dev, res);
		return;
	}
	if (r >= 0 && cut_error_parse(reply, (size_t)r, &e) == 0)
		r = -e;
	else if (r >= 0 && cut_reply_parse(reply, (size_t)r, res) == 0)
		return;
	else if (r >= 0)
		r = -EBADMSG;
	*res = (struct cut_result){.error = -r};
	snprintf(res->why, sizeof(res->why), "the cutter (%s): %s", socket_path(), strerror(-r));
}

void seat_cut_all(uid_t uid, unsigned int timeout_ms, bool dry_run, const struct seat_device *devs,
		  size_t n, struct cut_all_result *res)
{
	static struct cut_request q;
	static char req[CUT_MSG_MAX], reply[CUT_MSG_MAX];
	int len, r, e;

	memset(res, 0, sizeof(*res));
	if (n > CUT_MAX_DEVS) {
		res->error = E2BIG;
		snprintf(res->why, sizeof(res->why), "more than %d devices", CUT_MAX_DEVS);
		return;
	}
	q = (struct cut_request){
	    .all = true, .uid = uid, .timeout_ms = timeout_ms, .dry_run = dry_run, .ndevs = n};
	for (size_t i = 0; i < n; i++)
		snprintf(q.devs[i], CUT_DEV_MAX, "%s", devs[i].devnode);
	len = cut_request_format(&q, req, sizeof(req));
	r = len < 0 ? len : call(req, (size_t)len, reply, sizeof(reply), timeout_ms);
	if (r < 0 && no_cutter(r)) {
		const char *paths[CUT_MAX_DEVS];

		for (size_t i = 0; i < n; i++)
			paths[i] = devs[i].devnode;
		cut_devices(uid, timeout_ms, dry_run, paths, n, res);
		return;
	}
	if (r >= 0 && cut_error_parse(reply, (size_t)r, &e) == 0)
		r = -e;
	else if (r >= 0 && cut_all_parse(reply, (size_t)r, n, res) == 0)
		return;
	else if (r >= 0)
		r = -EBADMSG;
	memset(res, 0, sizeof(*res));
	res->error = -r;
	snprintf(res->why, sizeof(res->why), "the cutter (%s): %s", socket_path(), strerror(-r));
}

/* The cutter's socket starts the cutter on the first connection: made at
 * start, so that the first revocation does not wait for it. */
void seat_cutter_connect(void)
{
	if (conn < 0) {
		conn = connect_cutter();
		if (conn < 0)
			conn = -1;
	}
}
