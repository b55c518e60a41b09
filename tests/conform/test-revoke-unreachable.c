/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Conformance, part 2: references that live outside the fd tables and the
 * mappings — descriptors in flight in SCM_RIGHTS messages, an executable. The
 * userspace engine cannot cut them: it must report them (UNREACHABLE), fail
 * with EBUSY and touch nothing, or with REVOKE_BEST_EFFORT cut the rest. The
 * native engine cuts them. (io_uring fixed files are cut: test-revoke-uring.c,
 * a holder with an io-wq worker thread is here; a working or root directory:
 * test-revoke-dir.c.)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <liburing.h>

#include "harness.h"
#include "revoke.h"
#include "conform.h"

static int revoke_path_with(const char *path, unsigned int flags, struct revoke_report **rep)
{
	const char *paths[] = {path};
	struct revoke_opts o = {.sz = sizeof(o), .flags = flags, .timeout_ms = 0, .keep_fd = -1};

	return revoke_ex(paths, 1, &o, rep);
}

static bool native(const struct revoke_report *rep)
{
	return rep && rep->engine == REVOKE_ENGINE_SYSCALL;
}

/* The ref of TYPE of holder PID: exists, state UNREACHABLE, with an error. */
static const struct revoke_ref *check_unreachable(const struct revoke_report *rep, pid_t pid,
						  int type)
{
	const struct revoke_holder *h = find_holder(rep, pid);
	const struct revoke_ref *ref;

	CHECK(h, "holder %d missing from the report", (int)pid);
	ref = find_ref(h, type);
	CHECK(ref, "holder %d has no %s ref", (int)pid, revoke_ref_type_name(type));
	CHECK(ref->state == REVOKE_STATE_UNREACHABLE, "%s ref state %s, expected unreachable",
	      revoke_ref_type_name(type), revoke_state_name(ref->state));
	CHECK(ref->error != 0, "unreachable %s ref without an error", revoke_ref_type_name(type));
	CHECK(h->state != REVOKE_STATE_CUT, "holder with an unreachable ref summarised as cut");
	return ref;
}

/* ---- an io_uring worker thread in a holder (never returns to user space) ---- */

static void v_uring_worker(int sock)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	char buf[8], b;
	int fd, p[2], r;
	ssize_t n;

	fd = open(tpath, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || pipe2(p, O_CLOEXEC) < 0)
		_exit(2);
	r = io_uring_queue_init(8, &ring, 0);
	if (r < 0) {
		send_msg(sock, MSG(r));
		msg_wait(sock);
		_exit(0);
	}
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_read(sqe, p[0], buf, 1, 0);
	sqe->flags |= IOSQE_ASYNC; /* punt to an io-wq worker, which blocks in the pipe */
	io_uring_submit(&ring);
	send_msg(sock, MSG(getpid(), p[1]));
	msg_wait(sock);
	errno = 0;
	n = read(fd, &b, 1);
	if (write(p[1], "x", 1) != 1)
		_exit(2);
	r = io_uring_wait_cqe(&ring, &cqe);
	if (r == 0)
		r = cqe->res;
	send_msg(sock, MSG(n, n < 0 ? errno : 0, r));
	msg_wait(sock);
}

static int count_tasks(pid_t pid)
{
	char path[64];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static void t_uring_worker_in_holder(void)
{
	struct victim v;
	struct msg m;
	int i;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	v = victim_run(v_uring_worker);
	m = recv_msg(&v);
	if (m.v[0] == -ENOSYS || m.v[0] == -EPERM)
		SKIP("io_uring not available here (%s)", strerror((int)-m.v[0]));
	CHECK(m.v[0] > 0, "io_uring setup: %s", strerror((int)-m.v[0]));
	for (i = 0; i < 300 && count_tasks(v.pid) < 2; i++)
		msleep(10);
	CHECK(count_tasks(v.pid) >= 2, "no io-wq worker appeared in the holder");
	CHECK(revoke_explained(tpath) == 0, "revoke: %s", strerror(errno));
	send_msg(v.sock, MSG(CMD_GO));
	m = recv_msg(&v);
	CHECK(m.v[0] == -1 && m.v[1] == EBADF, "holder's fd: read gave %lld (%s), not EBADF",
	      (long long)m.v[0], strerror((int)m.v[1]));
	CHECK(m.v[2] == 1, "the pending io_uring read completed with %lld, not 1 byte",
	      (long long)m.v[2]);
}

/* ---- a descriptor in flight in an SCM_RIGHTS message ---- */

static bool g_close_sender;

static void v_inflight(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {0}, c = 'x';
	struct iovec iov = {.iov_base = &c, .iov_len = 1};
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *cm;
	int sp[2], fd, got = -1;
	ssize_t n;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
		_exit(2);
	fd = open(tpath, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		_exit(2);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	if (sendmsg(sp[0], &mh, 0) != 1)
		_exit(2);
	close(fd); /* the only reference left is the one in flight */
	if (g_close_sender) {
		close(sp[0]); /* only the receiving end, with the message queued, is left */
		sp[0] = -1;
	}
	send_msg(sock, MSG(getpid(), sp[0], sp[1]));
	msg_wait(sock);
	memset(cbuf, 0, sizeof(cbuf));
	mh.msg_controllen = sizeof(cbuf);
	if (recvmsg(sp[1], &mh, MSG_CMSG_CLOEXEC) == 1 && (cm = CMSG_FIRSTHDR(&mh)) &&
	    cm->cmsg_type == SCM_RIGHTS)
		memcpy(&got, CMSG_DATA(cm), sizeof(int));
	if (got < 0)
		_exit(2);
	errno = 0;
	n = pread(got, cbuf, 5, 0);
	send_msg(sock, MSG(n, n < 0 ? errno : 0, cbuf[0]));
	msg_wait(sock);
}

static void inflight_case(unsigned int flags)
{
	struct revoke_report *rep = NULL;
	const struct revoke_ref *ref;
	struct victim v, b;
	struct msg m, info;
	int r, e;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	v = victim_run(v_inflight);
	info = recv_msg(&v);
	b = victim_run(holder_main);
	recv_msg(&b);
	r = revoke_path_with(tpath, flags, &rep);
	e = errno;
	CHECK(rep, "no report (%s)", strerror(e));
	if (native(rep)) {
		CHECK(r == 0, "native revoke_ex: %s", strerror(e));
		send_msg(v.sock, MSG(CMD_GO));
		m = recv_msg(&v);
		CHECK(m.v[0] == -1 && m.v[1] == EBADF,
		      "received descriptor read gave %lld (%s), expected EBADF", (long long)m.v[0],
		      strerror((int)m.v[1]));
		CHECK_CUT(&b);
		revoke_report_free(rep);
		return;
	}
	CHECK(r == -1 && e == EBUSY, "revoke_ex returned %d (%s), expected EBUSY", r, strerror(e));
	ref = check_unreachable(rep, v.pid, REVOKE_REF_INFLIGHT);
	CHECK(ref->fd >= 0 && (ref->fd == info.v[1] || ref->fd == info.v[2]),
	      "inflight ref fd %d is not the socket (%lld/%lld)", ref->fd, (long long)info.v[1],
	      (long long)info.v[2]);
	CHECK(proc_status_field(v.pid, "TracerPid") == 0, "sender left traced");
	if (flags & REVOKE_BEST_EFFORT) {
		const struct revoke_holder *h = find_holder(rep, b.pid);
		CHECK(h && h->state == REVOKE_STATE_CUT, "other holder not reported cut");
		CHECK_CUT(&b);
	} else {
		CHECK(proc_status_field(b.pid, "TracerPid") == 0, "other holder left traced");
		CHECK_READS(&b);
	}
	/* The message was left alone: received, its descriptor still reads. */
	send_msg(v.sock, MSG(CMD_GO));
	m = recv_msg(&v);
	CHECK(m.v[0] == 5 && m.v[2] == 'h', "received descriptor read gave %lld (%s)",
	      (long long)m.v[0], strerror((int)m.v[1]));
	revoke_report_free(rep);
}

/* ---- a directory that is a working directory or a root ---- */

/* ---- a running executable ---- */

static char g_exe[160];

static void v_exec(int sock)
{
	(void)sock;
	execl(g_exe, "sleep", "30", (char *)NULL);
	_exit(127);
}

static void copy_file(const char *from, const char *to, mode_t mode)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out;
	ssize_t n;

	CHECK(in >= 0, "open %s: %s", from, strerror(errno));
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	CHECK(out >= 0, "create %s: %s", to, strerror(errno));
	while ((n = read(in, buf, sizeof(buf))) > 0)
		CHECK(write(out, buf, n) == n, "write: %s", strerror(errno));
	CHECK(n == 0, "read: %s", strerror(errno));
	close(in);
	close(out);
}

static void t_exe_unreachable(void)
{
	struct revoke_report *rep = NULL;
	struct victim v;
	char path[64], link[256];
	int r, e, i;
	ssize_t n = -1;

	make_scratch();
	snprintf(g_exe, sizeof(g_exe), "%s/sleep-copy", tdir);
	copy_file("/bin/sleep", g_exe, 0755);
	v = victim_run(v_exec);
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)v.pid);
	for (i = 0; i < 500; i++) {
		n = readlink(path, link, sizeof(link) - 1);
		if (n > 0) {
			link[n] = 0;
			if (strcmp(link, g_exe) == 0)
				break;
		}
		msleep(10);
	}
	CHECK(i < 500, "victim never ran %s", g_exe);
	CHECK(wait_in_syscall(v.pid, v.pid, SYS_clock_nanosleep, SYS_nanosleep),
	      "sleep never slept");
	r = revoke_path_with(g_exe, 0, &rep);
	e = errno;
	CHECK(rep, "no report (%s)", strerror(e));
	if (native(rep)) {
		const struct revoke_ref *ref = find_ref(find_holder(rep, v.pid), REVOKE_REF_EXE);

		CHECK(r == 0, "native revoke_ex: %s", strerror(e));
		CHECK(ref && ref->state == REVOKE_STATE_CUT,
		      "exe ref not cut by the native engine");
		revoke_report_free(rep);
		return;
	}
	CHECK(r == -1 && e == EBUSY, "revoke_ex returned %d (%s), expected EBUSY", r, strerror(e));
	check_unreachable(rep, v.pid, REVOKE_REF_EXE);
	/* Its text mappings were left alone: it still runs and sleeps. */
	msleep(50);
	CHECK(proc_state(v.pid) == 'S', "victim state %c after the failed revoke",
	      proc_state(v.pid));
	CHECK(proc_status_field(v.pid, "TracerPid") == 0, "victim left traced");
	revoke_report_free(rep);
}

static const struct inflight_row {
	struct test_row t;
	unsigned int flags;
	bool close_sender;
} inflight[] = {
    {{"inflight_ebusy", 30}, 0, false},
    {{"inflight_best_effort", 30}, REVOKE_BEST_EFFORT, false},
    {{"inflight_sender_closed", 30}, 0, true},
};

static void inflight_row(const void *row)
{
	const struct inflight_row *r = row;

	g_close_sender = r->close_sender;
	inflight_case(r->flags);
}

TEST_MAIN("revoke-unreachable", {"uring_worker_in_holder", t_uring_worker_in_holder, 30},
	  TEST_TABLE(inflight, inflight_row), {"exe_unreachable", t_exe_unreachable, 30}, )
