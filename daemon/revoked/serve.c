/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* revoked: one request, in a child process of its own (revoked.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <syslog.h>
#include <unistd.h>

#include "helper/policy.h"
#include "revoked.h"

/* How long a client may take to read its reply. */
#define REPLY_NS 5000000000ull

static int send_reply(int sock, int result, const struct revoke_report *rep)
{
	_cleanup_free_ uint8_t *buf = NULL;
	uint64_t deadline = rv_now_ns() + REPLY_NS;
	size_t len, off = 0;
	int r;

	r = rv_helper_encode_reply(result, rep, &buf, &len);
	if (r < 0) {
		/* A report too large to send: the result alone. */
		r = rv_helper_encode_reply(result, NULL, &buf, &len);
		if (r < 0)
			return r;
	}
	while (off < len) {
		size_t n = len - off < RV_HELPER_CHUNK ? len - off : RV_HELPER_CHUNK;
		struct pollfd p = {.fd = sock, .events = POLLOUT};
		uint64_t now = rv_now_ns();
		ssize_t k;

		k = send(sock, buf + off, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (k == (ssize_t)n) {
			off += n;
			continue;
		}
		if (k >= 0)
			return -EIO; /* a datagram is all or nothing */
		if (errno != EAGAIN && errno != EINTR)
			return negative_errno();
		if (now >= deadline)
			return -ETIMEDOUT;
		(void)poll(&p, 1, (int)((deadline - now) / 1000000u) + 1);
	}
	return 0;
}

int revoked_serve(int sock, const struct ucred *cred, const struct rv_helper_req *hr, int *fds,
		  size_t nfds, const struct revoked_limits *limits)
{
	struct revoke_report *rep = NULL;
	char comm[64], files[2048], line[2560];
	struct rv_request req;
	int r;

	/* Before the engine takes the descriptors. */
	rv_helper_policy_log_files(cred->pid, fds, nfds, comm, sizeof(comm), files, sizeof(files));
	r = rv_helper_policy_request(hr, cred->uid, fds, nfds, limits->max_timeout_ms, &req);
	if (r < 0) {
		for (size_t i = 0; i < nfds; i++)
			safe_close(fds[i]);
	} else
		r = rv_engine_run(&req, &rep);
	if (rep)
		rep->helper_pid = getppid(); /* the loop's pid: the helper, to clients */
	rv_helper_policy_log_line(cred->uid, cred->pid, comm, hr->flags, files, r, rep, line,
				  sizeof(line));
	syslog(r == 0 ? LOG_NOTICE : LOG_WARNING, "%s", line);
	r = send_reply(sock, -r, rep);
	rv_report_destroy(rep);
	if (r < 0) {
		syslog(LOG_WARNING, "uid %u pid %d (%s): reply not sent: %s", cred->uid, cred->pid,
		       comm, strerror(-r));
		return 1;
	}
	return 0;
}
