/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The client of revoked(8): when the caller cannot reach every holder itself
 * (other users' processes), the call goes to the privileged helper, which
 * applies the owner rule to the descriptors we send and runs the engine.
 */
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "helper/proto.h"
#include "internal.h"
#include "kinds/target.h"
#include "kinds/refkind.h"

/* The helper's answer takes the engine's whole budget, and a little for the
 * way there and back (a loaded machine, the helper forking). */
#define TRANSPORT_SLACK_NS 2000000000ull

/* secure_getenv: a set-uid program linked with us must not be pointed at
 * a helper of its user's choosing. */
static const char *socket_path(void)
{
	const char *env = secure_getenv("REVOKE_HELPER_SOCKET");

	return env && *env ? env : RV_HELPER_SOCKET;
}

static int helper_connect(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	_cleanup_close_ int fd = -1;
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return negative_errno();
	/* A full backlog says EAGAIN at once on a non-blocking unix socket. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return negative_errno();
	/* Only root's helper is believed: anyone else's could only lie. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return negative_errno();
	if (cred.uid != 0)
		return -ECONNREFUSED;
	return TAKE_FD(fd);
}

static int send_request(int sock, const struct rv_helper_req *hr, const int *fds)
{
	uint8_t buf[RV_HELPER_REQ_MAX];
	size_t len;
	union {
		char buf[CMSG_SPACE(sizeof(int) * RV_HELPER_MAX_FDS)];
		struct cmsghdr align;
	} control = {0};
	struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *c;

	len = rv_helper_encode_request(hr, buf);
	iov.iov_len = len;
	msg.msg_control = control.buf;
	msg.msg_controllen = CMSG_SPACE(sizeof(int) * hr->nfds);
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * hr->nfds);
	memcpy(CMSG_DATA(c), fds, sizeof(int) * hr->nfds);
	/* A fresh connection's buffer is empty: this does not block. */
	if (sendmsg(sock, &msg, MSG_NOSIGNAL) != (ssize_t)len)
		return errno == EAGAIN ? -EAGAIN : negative_errno();
	return 0;
}

static int wait_readable(int fd, uint64_t deadline)
{
	for (;;) {
		uint64_t now = rv_now_ns();
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int r;

		if (now >= deadline)
			return -ETIMEDOUT;
		r = poll(&p, 1, (int)((deadline - now + 999999) / 1000000));
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return negative_errno();
	}
}

/* The reply, header and body, reassembled from its datagrams. */
static int recv_reply(int sock, uint64_t deadline, int *ret_result, struct revoke_report **ret)
{
	_cleanup_free_ uint8_t *buf = NULL;
	size_t len = 0, want = 0, cap = 0;
	int r;

	for (;;) {
		struct iovec iov;
		struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
		ssize_t n;

		if (cap - len < RV_HELPER_CHUNK) {
			uint8_t *p = realloc(buf, len + RV_HELPER_CHUNK);

			if (!p)
				return -ENOMEM;
			buf = p;
			cap = len + RV_HELPER_CHUNK;
		}
		r = wait_readable(sock, deadline);
		if (r < 0)
			return r;
		iov = (struct iovec){buf + len, RV_HELPER_CHUNK};
		n = recvmsg(sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0)
			return negative_errno();
		if (n == 0 || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
			return -EBADMSG; /* ended early, or not our helper's datagrams */
		len += (size_t)n;
		if (!want) {
			size_t body;

			r = rv_helper_parse_reply_header(buf, len, &body);
			if (r < 0)
				return r;
			want = RV_HELPER_HEADER_SIZE + body;
		}
		if (len > want)
			return -EBADMSG;
		if (len == want)
			return rv_helper_parse_reply(buf, len, ret_result, ret);
	}
}

/* Whether a helper that hung up before our request went had answered
 * EAGAIN first: it does, at once, to a uid with too many connections
 * pending (revoked.c), and its answer is still there to read. Without
 * this, the tenth of ten requests at once came back as "no helper". */
static bool refused_busy(int sock)
{
	struct revoke_report *rep = NULL;
	int result = 0;
	bool busy =
	    recv_reply(sock, rv_now_ns() + 100000000ull, &result, &rep) >= 0 && result == EAGAIN;

	rv_report_destroy(rep);
	return busy;
}

/* Our own lookups (the descriptors we sent) are in the helper's report as
 * descriptors of ours (kept, or found when listing); they are not the
 * caller's business, as the engine's own are not in its reports. */
static void drop_own_lookups(struct revoke_report *rep, const int *fds, size_t nfds, int keep)
{
	pid_t self = getpid();

	for (size_t i = 0; i < rep->nholders; i++) {
		struct revoke_holder *h = &rep->holders[i];
		size_t k = 0;

		if (h->pid != self)
			continue;
		for (size_t j = 0; j < h->nrefs; j++) {
			bool own = false;

			for (size_t f = 0; f < nfds; f++)
				own |= (int)f != keep && rv_refkind_of(&h->refs[j])->in_table &&
				       h->refs[j].fd == fds[f];
			if (!own)
				h->refs[k++] = h->refs[j];
		}
		h->nrefs = k;
		if (k == 0) {
			free(h->refs);
			memmove(h, h + 1, (rep->nholders - i - 1) * sizeof(*h));
			rep->nholders--;
			i--;
		}
	}
}

/*
 * The paths looked up here, with the caller's own permissions (EACCES,
 * ENOENT... are the caller's), bounded as the engine's are: FDS[i], and their
 * numbers in RET_SENT. A lookup again for a retry names whatever the paths
 * name then, as a new call would (the helper checks the owner of what it is
 * sent).
 */
static int lookup(const struct rv_request *req, size_t n, uint64_t deadline, int *fds,
		  int *ret_sent)
{
	int r = 0;

	for (size_t i = 0; i < n && r >= 0; i++) {
		r = rv_open_bounded(
		    req->paths[i],
		    O_PATH | O_CLOEXEC | (req->flags & REVOKE_NOFOLLOW ? O_NOFOLLOW : 0), deadline);
		fds[i] = r;
		if (r >= 0)
			ret_sent[i] = r;
	}
	if (r < 0)
		for (size_t i = 0; i < n; i++)
			fds[i] = safe_close(fds[i]);
	return r < 0 ? r : 0;
}

int rv_helper_run(const struct rv_request *req, struct revoke_report **ret_report)
{
	uint64_t deadline = rv_now_ns() + (uint64_t)req->timeout_ms * 1000000u;
	size_t n = req->paths ? req->npaths : 1;
	struct rv_helper_req hr = {
	    .flags = req->flags & ~(REVOKE_HELPER | REVOKE_NO_HELPER),
	    .timeout_ms = (uint32_t)req->timeout_ms,
	    .nfds = (uint32_t)n,
	    /* REVOKE_DESCRIPTION: the description sent is the
	     * target, kept by no one. */
	    .keep = req->paths || (req->flags & REVOKE_DESCRIPTION) ? RV_HELPER_KEEP_NONE : 0,
	    .npids = (uint32_t)req->npids,
	    .nuids = (uint32_t)req->nuids};
	int fds[RV_HELPER_MAX_FDS], sent[RV_HELPER_MAX_FDS];
	struct revoke_report *rep = NULL;
	unsigned int backoff_ms = 20;
	int r = 0, result = 0;
	pid_t helper = 0;
	/* Our lookups, here and in flight, are the call's own (lock.c): the
	 * helper's engine neither cuts nor counts them, nor another's. Not for
	 * frevoke's descriptor, which is the caller's and must not be taken
	 * over by a number we open before we send it. */
	_held_fd_ int calls = req->paths ? rv_calls_register() : -1;

	if (n > RV_HELPER_MAX_FDS || req->npids > RV_SELECT_MAX || req->nuids > RV_SELECT_MAX)
		return -E2BIG;
	for (size_t i = 0; i < req->npids; i++)
		hr.pids[i] = req->pids[i];
	for (size_t i = 0; i < req->nuids; i++)
		hr.uids[i] = req->uids[i];
	if (req->cgroup) {
		if (strlen(req->cgroup) > RV_HELPER_MAX_CGROUP)
			return -ENAMETOOLONG;
		strcpy(hr.cgroup, req->cgroup);
	}
	if (req->flags & REVOKE_MOUNT)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		fds[i] = sent[i] = -1;
	if (req->paths)
		r = lookup(req, n, deadline, fds, sent);
	else
		fds[0] = sent[0] = req->fd;
	for (; r >= 0;) {
		_cleanup_close_ int sock = -1;
		struct ucred cred;
		socklen_t clen = sizeof(cred);

		/* Again after EAGAIN. */
		if (req->paths && fds[0] < 0)
			r = lookup(req, n, deadline, fds, sent);
		if (r >= 0)
			r = sock = helper_connect(socket_path());
		if (r >= 0)
			r = send_request(sock, &hr, fds);
		if ((r == -EPIPE || r == -ECONNRESET) && refused_busy(sock))
			r = -EAGAIN;
		/* Sent: the helper has its own copies. Ours, kept while we
		 * wait, would be holders to another request for the same file
		 * where no registration (lock.c) says whose they are. */
		for (size_t i = 0; req->paths && i < n; i++)
			fds[i] = safe_close(fds[i]);
		if (r >= 0 && getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0)
			helper = cred.pid;
		if (r >= 0)
			r = recv_reply(sock, deadline + TRANSPORT_SLACK_NS, &result, &rep);
		if (r >= 0 && result == EAGAIN) {
			/* Too many requests from us, or from everyone, just
			 * now: again within the budget. */
			rv_report_destroy(TAKE_PTR(rep));
			r = -EAGAIN;
		}
		if (r != -EAGAIN || rv_now_ns() + backoff_ms * 1000000ull >= deadline)
			break;
		poll(NULL, 0, (int)backoff_ms);
		backoff_ms = backoff_ms < 400 ? backoff_ms * 2 : 400;
		r = 0;
	}
	for (size_t i = 0; req->paths && i < n; i++)
		safe_close(fds[i]);
	if (r < 0)
		return r;
	if (rep) {
		drop_own_lookups(rep, sent, n, req->paths ? -1 : 0);
		if (!rep->helper_pid)
			rep->helper_pid = helper;
		/* Targets named as the caller named them, as the engine's own
		 * reports do (the helper only saw descriptors). */
		for (size_t i = 0; req->paths && i < n && i < rep->ntargets; i++) {
			char *p = strdup(req->paths[i]);

			if (p) {
				free(rep->targets[i].path);
				rep->targets[i].path = p;
			}
		}
		if (ret_report)
			*ret_report = rep;
		else
			rv_report_destroy(rep);
	}
	return -result;
}

bool rv_helper_present(void)
{
	struct stat st;

	return stat(socket_path(), &st) == 0 && S_ISSOCK(st.st_mode);
}

/* Whether the connection itself failed (no helper there), as opposed to an
 * answer from it. */
bool rv_helper_unanswered(int r)
{
	return r == -ENOENT || r == -ECONNREFUSED || r == -ENOTSOCK || r == -EACCES ||
	       r == -ECONNRESET || r == -EPIPE || r == -EBADMSG || r == -EPROTONOSUPPORT;
}
