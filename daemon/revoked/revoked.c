/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * revoked - the privileged helper of librevoke: revokes a file for an
 * unprivileged client that owns it, in every process of every user (the 2006
 * rule: the caller owns the file, or is root).
 *
 * One process, one poll loop, nothing in it that can block: connections are
 * non-blocking, a request is one datagram (helper-proto.h) read once it is
 * there, and each accepted request is served by a child process of its own
 * (the engine runs there; this loop only counts, limits and reaps). The
 * limits: requests running at once (all, and per uid), requests per uid and
 * second, how long a connection may take to send its request, the size of
 * a request, and each child's time (the request's own timeout, at most
 * --max-timeout, plus a grace; the engine leaves holders whole if killed).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "helper/proto.h"
#include "internal.h"
#include "revoked.h"

#define MAX_PENDING	    256
#define MAX_PENDING_PER_UID 8
#define PENDING_NS	    2000000000ull /* to send the request after connecting */
#define GRACE_NS	    5000000000ull /* beyond a request's timeout, before SIGKILL */
#define NBUCKETS	    1024

struct pending {
	int fd;
	struct ucred cred;
	uint64_t since;
};

struct child {
	pid_t pid;
	uid_t uid;
	uint64_t kill_at;
};

struct bucket {
	uid_t uid;
	bool used;
	double tokens;
	uint64_t last;
	unsigned int running;
};

static struct revoked_limits limits = {
    .max_running = 8,
    .max_running_per_uid = 2,
    .rate_per_uid = 10,
    .max_timeout_ms = 30000,
};
static struct pending pending[MAX_PENDING];
static size_t npending;
static struct child *children;
static struct bucket buckets[NBUCKETS];

static struct bucket *bucket_of(uid_t uid, uint64_t now)
{
	struct bucket *free_b = NULL, *oldest = NULL;

	for (size_t i = 0; i < NBUCKETS; i++) {
		struct bucket *b = &buckets[i];

		if (b->used && b->uid == uid)
			return b;
		if (!b->used && !free_b)
			free_b = b;
		if (b->used && !b->running && (!oldest || b->last < oldest->last))
			oldest = b;
	}
	/* Full of uids: the one idle longest is forgotten (it had a full
	 * bucket again after a second anyway). */
	if (!free_b)
		free_b = oldest;
	if (!free_b)
		return NULL;
	*free_b =
	    (struct bucket){.uid = uid, .used = true, .tokens = limits.rate_per_uid, .last = now};
	return free_b;
}

/* Whether UID may start a request now: EAGAIN when it sent more than its
 * rate, or runs as many as it may, or everyone's slots are taken. */
static int admit(uid_t uid, uint64_t now, unsigned int running, struct bucket **ret)
{
	struct bucket *b = bucket_of(uid, now);

	if (!b)
		return EAGAIN;
	b->tokens += (double)(now - b->last) / 1e9 * limits.rate_per_uid;
	if (b->tokens > limits.rate_per_uid)
		b->tokens = limits.rate_per_uid;
	b->last = now;
	if (b->tokens < 1)
		return EAGAIN;
	b->tokens -= 1;
	if (running >= limits.max_running || b->running >= limits.max_running_per_uid)
		return EAGAIN;
	*ret = b;
	return 0;
}

static void drop_pending(size_t i)
{
	safe_close(pending[i].fd);
	pending[i] = pending[--npending];
}

static void close_fds(int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		safe_close(fds[i]);
}

/*
 * Read P's request. Returns 1 when a request was taken (*RET_HR, RET_FDS),
 * 0 when nothing is there yet, or an errno for the client (the request was
 * malformed: too long, too many descriptors, not a request).
 */
static int read_request(struct pending *p, struct rv_helper_req *ret_hr, int *ret_fds,
			size_t *ret_nfds)
{
	uint8_t buf[RV_HELPER_REQ_MAX + 1];
	union {
		char buf[CMSG_SPACE(sizeof(int) * RV_HELPER_MAX_FDS)];
		struct cmsghdr align;
	} control;
	struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = control.buf,
			     .msg_controllen = sizeof(control.buf)};
	size_t nfds = 0;
	ssize_t n;
	int r;

	n = recvmsg(p->fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : ECONNRESET;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		size_t k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (nfds < RV_HELPER_MAX_FDS)
				ret_fds[nfds++] = fd;
			else
				safe_close(fd);
		}
	}
	if (n == 0) {
		close_fds(ret_fds, nfds);
		return ECONNRESET;
	}
	if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		close_fds(ret_fds, nfds);
		return EMSGSIZE;
	}
	r = rv_helper_parse_request(buf, (size_t)n, ret_hr);
	if (r == 0 && ret_hr->nfds != nfds)
		r = -EBADMSG;
	if (r < 0) {
		close_fds(ret_fds, nfds);
		return -r;
	}
	*ret_nfds = nfds;
	return 1;
}

/* An answer that needs no child: the error alone, if the socket takes it
 * now (it is a fresh connection: its buffer is empty). */
static void reply_error(int fd, int error)
{
	_cleanup_free_ uint8_t *buf = NULL;
	size_t len;

	if (rv_helper_encode_reply(error, NULL, &buf, &len) == 0)
		(void)send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
}

static size_t nchildren;

static void reap(void)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		for (size_t i = 0; i < nchildren; i++) {
			struct bucket *b;

			if (children[i].pid != pid)
				continue;
			b = bucket_of(children[i].uid, rv_now_ns());
			if (b && b->running)
				b->running--;
			if (WIFSIGNALED(status))
				syslog(LOG_ERR, "request of uid %u (worker %d) killed by signal %d",
				       children[i].uid, pid, WTERMSIG(status));
			children[i] = children[--nchildren];
			break;
		}
}

static void start(struct pending *p, const struct rv_helper_req *hr, int *fds, size_t nfds,
		  int listen_fd, int sig_fd, const sigset_t *old_mask)
{
	uint64_t now = rv_now_ns();
	struct bucket *b = NULL;
	int go[2], ready[2], error;
	pid_t pid;

	/* The previous request's worker has replied and may be exiting, its
	 * SIGCHLD not read yet: a client sending requests one after the other
	 * would otherwise meet its own finished request as still running. */
	reap();
	error = admit(p->cred.uid, now, (unsigned int)nchildren, &b);
	if (error) {
		syslog(LOG_WARNING, "uid %u pid %d: refused: too many requests", p->cred.uid,
		       p->cred.pid);
		reply_error(p->fd, error);
		close_fds(fds, nfds);
		return;
	}
	if (pipe2(go, O_CLOEXEC) < 0) {
		reply_error(p->fd, errno);
		close_fds(fds, nfds);
		return;
	}
	if (pipe2(ready, O_CLOEXEC) < 0) {
		reply_error(p->fd, errno);
		close_fds(fds, nfds);
		safe_close(go[0]);
		safe_close(go[1]);
		return;
	}
	pid = fork();
	if (pid < 0) {
		error = errno;
		syslog(LOG_ERR, "uid %u pid %d: fork: %m", p->cred.uid, p->cred.pid);
		reply_error(p->fd, error);
		close_fds(fds, nfds);
		safe_close(go[0]);
		safe_close(go[1]);
		safe_close(ready[0]);
		safe_close(ready[1]);
		return;
	}
	if (pid == 0) {
		char c;

		/* A revoke call of our own before the parent lets go of the
		 * descriptors: another request's worker that looks at us
		 * meanwhile sees the client's lookups as a call's, never as a
		 * holder's to cut (lib/lock.c). Held until we exit. */
		(void)rv_calls_register();
		(void)!write(ready[1], "r", 1);
		safe_close(ready[0]);
		safe_close(ready[1]);
		safe_close(go[1]);
		safe_close(listen_fd);
		safe_close(sig_fd);
		for (size_t i = 0; i < npending; i++)
			if (&pending[i] != p)
				safe_close(pending[i].fd);
		sigprocmask(SIG_SETMASK, old_mask, NULL);
		/* Until the parent has dropped its copies of the descriptors:
		 * it is no holder of them when we look. */
		while (read(go[0], &c, 1) < 0 && errno == EINTR)
			;
		safe_close(go[0]);
		_exit(revoked_serve(p->fd, &p->cred, hr, fds, nfds, &limits));
	}
	safe_close(go[0]);
	safe_close(ready[1]);
	{
		/* Bounded: a child that cannot register (no /run) still runs. */
		struct pollfd rp = {.fd = ready[0], .events = POLLIN};
		char c;

		if (poll(&rp, 1, 1000) == 1)
			(void)!read(ready[0], &c, 1);
		safe_close(ready[0]);
	}
	close_fds(fds, nfds);
	safe_close(go[1]);
	b->running++;
	children[nchildren++] = (struct child){
	    .pid = pid,
	    .uid = p->cred.uid,
	    .kill_at = now +
		       (uint64_t)(hr->timeout_ms && hr->timeout_ms < limits.max_timeout_ms
				      ? hr->timeout_ms
				      : limits.max_timeout_ms) *
			   1000000u +
		       GRACE_NS,
	};
}

static void accept_all(int listen_fd)
{
	for (;;) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		unsigned int same = 0;
		int fd;

		fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			safe_close(fd);
			continue;
		}
		for (size_t i = 0; i < npending; i++)
			same += pending[i].cred.uid == cred.uid;
		/* Connections that send nothing hold a slot for PENDING_NS at
		 * most, and one uid only a few of them. */
		if (npending == MAX_PENDING || same >= MAX_PENDING_PER_UID) {
			reply_error(fd, EAGAIN);
			safe_close(fd);
			continue;
		}
		pending[npending++] =
		    (struct pending){.fd = fd, .cred = cred, .since = rv_now_ns()};
	}
}

/* The socket appears at PATH only once it listens, with its mode: bound
 * under a temporary name (umask 0111: 0666 from the start), then renamed,
 * so that a client never meets it refusing (ECONNREFUSED, or EACCES before
 * a chmod). */
static int listen_on(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char tmp[sizeof(sa.sun_path)];
	struct stat st;
	mode_t old_umask;
	int fd, r;

	if (snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid()) >= (int)sizeof(tmp)) {
		fprintf(stderr, "revoked: %s: socket path too long\n", path);
		return -1;
	}
	strcpy(sa.sun_path, tmp);
	if (strcmp(path, RV_HELPER_SOCKET) == 0)
		(void)mkdir("/run/revoke", 0755);
	/* A socket left by an earlier run is replaced; anything else stays. */
	if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
		fprintf(stderr, "revoked: %s: exists and is not a socket\n", path);
		return -1;
	}
	(void)unlink(tmp);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "revoked: socket: %m\n");
		return -1;
	}
	old_umask = umask(0111);
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old_umask);
	if (r < 0 || listen(fd, 128) < 0 || rename(tmp, path) < 0) {
		fprintf(stderr, "revoked: %s: %m\n", path);
		(void)unlink(tmp);
		safe_close(fd);
		return -1;
	}
	return fd;
}

/* Socket activation (sd_listen_fds(3)): LISTEN_PID is us and LISTEN_FDS 1,
 * the socket at fd 3. Read by hand: ten lines, against a dependency. */
static int activated_socket(void)
{
	const char *pid = getenv("LISTEN_PID"), *n = getenv("LISTEN_FDS");
	int type = 0;
	socklen_t len = sizeof(type);

	if (!pid || !n || strtol(pid, NULL, 10) != getpid())
		return -1;
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (strcmp(n, "1") != 0 || getsockopt(3, SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
	    type != SOCK_SEQPACKET) {
		fprintf(stderr, "revoked: expected one SOCK_SEQPACKET socket from systemd\n");
		return -2;
	}
	if (fcntl(3, F_SETFD, FD_CLOEXEC) < 0 || fcntl(3, F_SETFL, O_NONBLOCK) < 0)
		return -2;
	return 3;
}

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "Usage: revoked [options]\n\n"
	    "Revoke files for their unprivileged owners, in every process (librevoke's helper).\n\n"
	    "Options:\n"
	    " -s, --socket PATH         listen on PATH (default: the socket systemd passes,\n"
	    "                             else " RV_HELPER_SOCKET ")\n"
	    " -j, --max-running N       requests served at once (default 8)\n"
	    " -u, --max-per-user N      of them, from one uid (default 2)\n"
	    " -r, --rate N              requests per uid and second (default 10)\n"
	    " -t, --max-timeout SECS    longest timeout a request may ask for (default 30)\n"
	    " -e, --stderr              log to standard error too (besides syslog)\n"
	    " -h, --help                display this help\n"
	    " -V, --version             display version\n\n"
	    "Clients find the socket at $REVOKE_HELPER_SOCKET or " RV_HELPER_SOCKET ".\n"
	    "See revoked(8).\n");
}

static bool parse_uint(const char *s, unsigned int min, unsigned int max, unsigned int *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || !*s || *end || v < min || v > max || *s == '-')
		return false;
	*ret = (unsigned int)v;
	return true;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"socket", required_argument, NULL, 's'},
	    {"max-running", required_argument, NULL, 'j'},
	    {"max-per-user", required_argument, NULL, 'u'},
	    {"rate", required_argument, NULL, 'r'},
	    {"max-timeout", required_argument, NULL, 't'},
	    {"stderr", no_argument, NULL, 'e'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {0},
	};
	const char *path = NULL;
	int c, listen_fd, sig_fd, calls_fd, log_opts = LOG_PID | LOG_NDELAY;
	unsigned int secs;
	sigset_t mask, old_mask;

	while ((c = getopt_long(argc, argv, "s:j:u:r:t:ehV", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			path = optarg;
			break;
		case 'j':
			if (!parse_uint(optarg, 1, 1024, &limits.max_running))
				goto bad;
			break;
		case 'u':
			if (!parse_uint(optarg, 1, 1024, &limits.max_running_per_uid))
				goto bad;
			break;
		case 'r':
			if (!parse_uint(optarg, 1, 100000, &limits.rate_per_uid))
				goto bad;
			break;
		case 't':
			if (!parse_uint(optarg, 1, 3600, &secs))
				goto bad;
			limits.max_timeout_ms = secs * 1000;
			break;
		case 'e':
			log_opts |= LOG_PERROR;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("revoked from revoke %s\n", revoke_version());
			return 0;
		default:
			fprintf(stderr, "Try 'revoked --help' for more information.\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "revoked: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	children = calloc(limits.max_running, sizeof(*children));
	if (!children)
		return 1;
	openlog("revoked", log_opts, LOG_DAEMON);

	listen_fd = path ? -1 : activated_socket();
	if (listen_fd == -2)
		return 1;
	if (listen_fd < 0) {
		if (!path)
			path = RV_HELPER_SOCKET;
		listen_fd = listen_on(path);
		if (listen_fd < 0)
			return 1;
	}

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, &old_mask);
	signal(SIGPIPE, SIG_IGN);
	sig_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sig_fd < 0) {
		fprintf(stderr, "revoked: signalfd: %m\n");
		return 1;
	}
	/* Descriptors in flight to us are the clients' calls' own, not holders
	 * (lib/lock.c): registered as a revoke call for as long as we live. */
	calls_fd = rv_calls_register();
	syslog(LOG_INFO,
	       "listening (at most %u requests at once, %u per uid, %u per uid and second)",
	       limits.max_running, limits.max_running_per_uid, limits.rate_per_uid);

	for (bool stopping = false; !stopping;) {
		struct pollfd pfd[2 + MAX_PENDING];
		uint64_t now = rv_now_ns(), next = now + 1000000000ull;
		size_t np = npending;
		int ms;

		pfd[0] = (struct pollfd){.fd = sig_fd, .events = POLLIN};
		pfd[1] = (struct pollfd){.fd = listen_fd, .events = POLLIN};
		for (size_t i = 0; i < np; i++) {
			pfd[2 + i] = (struct pollfd){.fd = pending[i].fd, .events = POLLIN};
			if (pending[i].since + PENDING_NS < next)
				next = pending[i].since + PENDING_NS;
		}
		for (size_t i = 0; i < nchildren; i++)
			if (children[i].kill_at < next)
				next = children[i].kill_at;
		ms = next > now ? (int)((next - now + 999999) / 1000000) : 0;
		if (poll(pfd, 2 + np, ms) < 0 && errno != EINTR) {
			syslog(LOG_ERR, "poll: %m");
			return 1;
		}
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sig_fd, &si, sizeof(si)) == sizeof(si))
				if (si.ssi_signo != SIGCHLD)
					stopping = true;
			reap();
		}
		now = rv_now_ns();
		/* Backwards: drop_pending moves the last entry into slot i. */
		for (size_t i = np; i-- > 0;) {
			struct rv_helper_req hr;
			int fds[RV_HELPER_MAX_FDS];
			size_t nfds = 0;
			int r;

			if (pfd[2 + i].revents & (POLLIN | POLLHUP | POLLERR)) {
				r = read_request(&pending[i], &hr, fds, &nfds);
				if (r == 1)
					start(&pending[i], &hr, fds, nfds, listen_fd, sig_fd,
					      &old_mask);
				else if (r > 0) {
					if (r != ECONNRESET)
						syslog(LOG_WARNING,
						       "uid %u pid %d: malformed request: %s",
						       pending[i].cred.uid, pending[i].cred.pid,
						       strerror(r));
					reply_error(pending[i].fd, r);
				}
				if (r != 0) {
					drop_pending(i);
					continue;
				}
			}
			if (pending[i].since + PENDING_NS <= now) {
				syslog(LOG_WARNING, "uid %u pid %d: no request within %llu s",
				       pending[i].cred.uid, pending[i].cred.pid,
				       PENDING_NS / 1000000000ull);
				reply_error(pending[i].fd, ETIMEDOUT);
				drop_pending(i);
			}
		}
		if (pfd[1].revents & POLLIN)
			accept_all(listen_fd);
		for (size_t i = 0; i < nchildren; i++)
			if (children[i].kill_at <= now) {
				syslog(LOG_ERR,
				       "request of uid %u (worker %d) overran its timeout: killed",
				       children[i].uid, children[i].pid);
				kill(children[i].pid, SIGKILL);
				children[i].kill_at = UINT64_MAX;
			}
	}
	syslog(LOG_INFO, "stopping; %zu requests still running finish on their own", nchildren);
	if (path)
		(void)unlink(path);
	safe_close(calls_fd);
	return 0;
bad:
	fprintf(stderr, "revoked: invalid value '%s' for --%s\n", optarg,
		c == 'j'   ? "max-running"
		: c == 'u' ? "max-per-user"
		: c == 'r' ? "rate"
			   : "max-timeout");
	return 2;
}
