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

#include "revoked.h"

/* What a client may ask for. Mounts are not files one owns; helper flags
 * mean nothing here. */
#define CLIENT_FLAGS                                                                               \
	(REVOKE_BEST_EFFORT | REVOKE_NOFOLLOW | REVOKE_LIST_ONLY | REVOKE_NO_HANGUP |              \
	 REVOKE_ENGINE_USERSPACE | REVOKE_ENGINE_NATIVE | REVOKE_DISCOVERY_PROC |                  \
	 REVOKE_DISCOVERY_BPF | REVOKE_DESCRIPTION | REVOKE_RECHECK)

/* How long a client may take to read its reply. */
#define REPLY_NS 5000000000ull

/* The client's command name, for the log only (the pid is SO_PEERCRED's,
 * from when it connected: a process that exited since shows "?"). */
static void client_comm(pid_t pid, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(buf, size, "?");
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, size - 1);
	safe_close(fd);
	if (n <= 0) {
		snprintf(buf, size, "?");
		return;
	}
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	/* A name is the client's to choose: nothing of it reaches the log as
	 * a control character. */
	for (char *c = buf; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
}

/* "dev M:m ino I path P" of each descriptor, as this process sees it. */
static void describe(const int *fds, size_t nfds, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = 0;
	for (size_t i = 0; i < nfds && len < size; i++) {
		char link[64], path[512];
		struct statx stx;
		ssize_t n;
		int k;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", fds[i]);
		n = readlink(link, path, sizeof(path) - 1);
		if (n < 0)
			n = snprintf(path, sizeof(path), "?");
		path[n] = 0;
		for (char *c = path; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
		if (statx(fds[i], "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_INO | STATX_UID,
			  &stx) < 0)
			k = snprintf(buf + len, size - len, "%sfd %s", i ? ", " : "", path);
		else
			k = snprintf(buf + len, size - len, "%sdev %u:%u ino %llu owner %u path %s",
				     i ? ", " : "", stx.stx_dev_major, stx.stx_dev_minor,
				     (unsigned long long)stx.stx_ino, stx.stx_uid, path);
		if (k < 0)
			break;
		len += (size_t)k;
	}
}

static void outcome(int r, const struct revoke_report *rep, char *buf, size_t size)
{
	size_t holders = 0, cut = 0;

	if (rep)
		for (size_t i = 0; i < rep->nholders; i++) {
			const struct revoke_holder *h = &rep->holders[i];
			bool any = false;

			for (size_t j = 0; j < h->nrefs; j++) {
				cut += h->refs[j].state == REVOKE_STATE_CUT;
				any |= h->refs[j].state == REVOKE_STATE_CUT;
			}
			holders += any;
		}
	if (r == 0)
		snprintf(buf, size, "ok: %zu references cut in %zu processes (engine %s)", cut,
			 holders, rep ? revoke_engine_name(rep->engine) : "none");
	else
		snprintf(buf, size, "failed: %s%s%s", strerror(-r),
			 rep && rep->failed_detail[0] ? ": " : "", rep ? rep->failed_detail : "");
}

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
	struct rv_request req = {
	    .fd = -1,
	    .keep_fd = hr->keep == RV_HELPER_KEEP_NONE ? -1 : fds[hr->keep],
	    .fds = fds,
	    .nfds = nfds,
	    .flags = hr->flags,
	    .timeout_ms = hr->timeout_ms ? (int)hr->timeout_ms : RV_DEFAULT_TIMEOUT_MS,
	    .for_client = true,
	    .client_uid = cred->uid,
	    .pids = hr->pids,
	    .npids = hr->npids,
	    .uids = hr->uids,
	    .nuids = hr->nuids,
	    .cgroup = hr->cgroup[0] ? hr->cgroup : NULL,
	};
	struct revoke_report *rep = NULL;
	char comm[64], files[2048], result[256];
	int r;

	client_comm(cred->pid, comm, sizeof(comm));
	describe(fds, nfds, files, sizeof(files));
	if ((unsigned int)req.timeout_ms > limits->max_timeout_ms)
		req.timeout_ms = (int)limits->max_timeout_ms;
	/* A description is one descriptor's (frevoke_ex's), never a path's. */
	if ((hr->flags & ~CLIENT_FLAGS) ||
	    ((hr->flags & REVOKE_DESCRIPTION) && (nfds != 1 || hr->keep != RV_HELPER_KEEP_NONE))) {
		for (size_t i = 0; i < nfds; i++)
			safe_close(fds[i]);
		r = -EINVAL;
	} else
		/* Takes the descriptors; checks that they are files (not anonymous
		 * inodes, not dead descriptors) the client owns. */
		r = rv_engine_run(&req, &rep);
	if (rep)
		rep->helper_pid = getppid(); /* the loop's pid: the helper, to clients */
	outcome(r, rep, result, sizeof(result));
	syslog(r == 0 ? LOG_NOTICE : LOG_WARNING, "uid %u pid %d (%s): %s%s, flags 0x%x: %s",
	       cred->uid, cred->pid, comm, hr->flags & REVOKE_LIST_ONLY ? "list " : "revoke ",
	       files, hr->flags, result);
	r = send_reply(sock, -r, rep);
	rv_report_destroy(rep);
	if (r < 0) {
		syslog(LOG_WARNING, "uid %u pid %d (%s): reply not sent: %s", cred->uid, cred->pid,
		       comm, strerror(-r));
		return 1;
	}
	return 0;
}
