/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One open file description everywhere (REVOKE_DESCRIPTION, revoke
 * --description; issue 18, part 2): every descriptor that shares it is cut,
 * in every process and the caller's own, whether it got there by dup, fork,
 * SCM_RIGHTS or pidfd_getfd; another open of the same file, in the same
 * processes or others, keeps reading. A mapping made through it is reported
 * (state unknown: /proc cannot tell which description made it), not cut. It
 * combines with a selection; bad input changes nothing.
 */
#include <liburing.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "conform.h"
#include "terminal.h"

static int frevoke_desc(int fd, unsigned int flags, const pid_t *pids, size_t npids,
			struct revoke_report **rep)
{
	struct revoke_opts o = {.sz = sizeof(o),
				.flags = REVOKE_DESCRIPTION | flags,
				.keep_fd = -1,
				.pids = pids,
				.npids = npids};

	for (int i = 0;; i++) {
		int r = frevoke_ex(fd, &o, rep);

		if (!(r == -1 && errno == ETIMEDOUT && i < 2))
			return r;
		if (rep) {
			revoke_report_free(*rep);
			*rep = NULL;
		}
	}
}

static void shared_file(void)
{
	make_scratch();
	test_make_file(tpath, "hello", 0);
}

/* FD of victim V reads "hello" (WANT 0) or fails with EBADF (WANT EBADF). */
#define CHECK_VFD(v, vfd, want)                                                                    \
	do {                                                                                       \
		struct victim_res r_ =                                                             \
		    victim_call(v, VICTIM_REQ(.op = VOP_PREAD, .fd = (vfd), .len = 5, .arg = 0));  \
		if (want)                                                                          \
			CHECK(r_.ret == -1 && r_.err == (want),                                    \
			      "pid %d fd %d: pread gave %ld (%s), expected %s", (int)(v)->pid,     \
			      (int)(vfd), r_.ret, strerror(r_.err), strerror(want));               \
		else                                                                               \
			CHECK(r_.ret == 5 && memcmp(r_.data, "hello", 5) == 0,                     \
			      "pid %d fd %d: pread gave %ld (%s), not 'hello'", (int)(v)->pid,     \
			      (int)(vfd), r_.ret, strerror(r_.err));                               \
	} while (0)

/* Our own FD reads "hello" (WANT 0) or fails with EBADF. */
static void check_own(int fd, int want)
{
	char b[8] = {0};
	ssize_t n = pread(fd, b, 5, 0);

	if (want)
		CHECK(n == -1 && errno == want, "our fd %d: pread gave %zd (%m), expected %s", fd,
		      n, strerror(want));
	else
		CHECK(n == 5 && memcmp(b, "hello", 5) == 0, "our fd %d: pread gave %zd (%m)", fd,
		      n);
}

/*
 * The description D reaches A by SCM_RIGHTS, is dup'd there, and A forks C
 * (which inherits both); A also opens the file anew, and B is a holder of
 * another open; we keep D, a pidfd_getfd copy of A's, and another open O.
 * Every copy of D is cut, ours included; A's other open, B's and O read on.
 */
static void t_everywhere(void)
{
	struct victim a, b, c;
	struct revoke_report *rep = NULL;
	int d, o, copy, pidfd, a_fd, a_dup, a_other;

	shared_file();
	/* Made before our descriptors, which they would inherit. */
	victim_start(&a);
	b = victim_run(holder_main);
	recv_msg(&b);
	d = open(tpath, O_RDWR | O_CLOEXEC);
	o = open(tpath, O_RDONLY | O_CLOEXEC);
	CHECK(d >= 0 && o >= 0, "open: %m");
	a_fd = victim_send_fd(&a, d);
	a_dup = (int)victim_call(&a, VICTIM_REQ(.op = VOP_DUP, .fd = a_fd)).ret;
	a_other = victim_open(&a, tpath, O_RDONLY);
	CHECK(a_dup >= 0, "dup in the victim failed");
	victim_spawn(&a, VOP_FORK, &c);
	pidfd = (int)syscall(SYS_pidfd_open, a.pid, 0);
	copy = pidfd >= 0 ? (int)syscall(SYS_pidfd_getfd, pidfd, a_fd, 0) : -1;
	CHECK(copy >= 0, "pidfd_getfd: %m");

	CHECK(frevoke_desc(d, 0, NULL, 0, &rep) == 0, "frevoke_ex(REVOKE_DESCRIPTION): %m");
	CHECK_VFD(&a, a_fd, EBADF);
	CHECK_VFD(&a, a_dup, EBADF);
	CHECK_VFD(&c, a_fd, EBADF);
	CHECK_VFD(&c, a_dup, EBADF);
	check_own(d, EBADF);
	check_own(copy, EBADF);
	CHECK_VFD(&a, a_other, 0);
	CHECK_VFD(&c, a_other, 0);
	check_own(o, 0);
	CHECK_READS(&b);
	CHECK(!find_holder(rep, b.pid), "the holder of another open is in the report");
	CHECK(find_holder(rep, a.pid) && find_holder(rep, c.pid) && find_holder(rep, getpid()),
	      "a holder of the description is missing from the report");
	CHECK(proc_status_field(b.pid, "TracerPid") == 0, "the other open's holder left traced");
	revoke_report_free(rep);
	close(pidfd);
}

/* With a selection: only the selected process's copies; ours and another
 * process's copy of the same description are left, and so is the selected
 * process's other open. */
static void t_with_pid(void)
{
	struct victim a, b;
	int d, a_fd, b_fd, a_other;
	pid_t sel[1];

	shared_file();
	victim_start(&a);
	victim_start(&b);
	d = open(tpath, O_RDWR | O_CLOEXEC);
	CHECK(d >= 0, "open: %m");
	a_fd = victim_send_fd(&a, d);
	b_fd = victim_send_fd(&b, d);
	a_other = victim_open(&a, tpath, O_RDONLY);
	sel[0] = a.pid;
	CHECK(frevoke_desc(d, 0, sel, 1, NULL) == 0, "frevoke_ex(DESCRIPTION, --pid): %m");
	CHECK_VFD(&a, a_fd, EBADF);
	CHECK_VFD(&a, a_other, 0);
	CHECK_VFD(&b, b_fd, 0);
	check_own(d, 0);
	CHECK(proc_status_field(b.pid, "TracerPid") == 0, "the unselected holder left traced");
}

/* A mapping made through the description: /proc cannot tell which
 * description made it, so it is reported (unknown) and left mapped by the
 * userspace engine; the call still cuts the descriptors and succeeds. */
static void t_mapping_unknown(void)
{
	struct revoke_report *rep = NULL;
	const struct revoke_ref *ref;
	struct victim a;
	struct victim_res m, l;
	int d, a_fd;

	shared_file();
	victim_start(&a);
	d = open(tpath, O_RDWR | O_CLOEXEC);
	CHECK(d >= 0, "open: %m");
	a_fd = victim_send_fd(&a, d);
	m = victim_call(&a, VICTIM_REQ(.op = VOP_MMAP, .fd = a_fd, .len = 4096, .prot = PROT_READ,
				       .flags = MAP_SHARED, .arg = 0));
	CHECK(m.ret != -1, "mmap in the victim: %s", strerror(m.err));
	CHECK(frevoke_desc(d, 0, NULL, 0, &rep) == 0, "frevoke_ex(DESCRIPTION) with a mapping: %m");
	CHECK_VFD(&a, a_fd, EBADF);
	ref = find_ref(find_holder(rep, a.pid), REVOKE_REF_MAP);
	CHECK(ref && ref->state == REVOKE_STATE_UNKNOWN, "the mapping is reported as %s",
	      ref ? revoke_state_name(ref->state) : "nothing");
	CHECK(strcmp(revoke_state_name(REVOKE_STATE_UNKNOWN), "unknown") == 0, "state name");
	l = victim_call(&a, VICTIM_REQ(.op = VOP_LOAD, .arg = m.ret));
	/* The kernel's revokeat(AT_REVOKE_FILE_ONLY) revokes the description
	 * itself, wherever it went: its mapping faults (still reported
	 * unknown: which mappings it made, no one here could tell). */
	if (engine_native())
		CHECK(l.sig == SIGBUS, "the kernel left the mapping: signal %d, byte %ld", l.sig,
		      l.ret);
	else
		CHECK(l.sig == 0 && l.ret == 'h', "the mapping was touched: signal %d, byte %ld",
		      l.sig, l.ret);
	revoke_report_free(rep);
}

enum { CMD_RING_READ = 10 };

/* Receives the description (SCM_RIGHTS), registers it in an io_uring's
 * fixed-file slot 0 and closes the descriptor: only the slot holds it. Then
 * reads through the slot on CMD_RING_READ: v[0] the result, v[1] the byte. */
static void v_ring_slot(int sock)
{
	struct io_uring ring;
	int fd = -1, r;
	char c;

	if (msg_recv_fd(sock, &c, 1, &fd) != 1 || fd < 0)
		_exit(2);
	r = io_uring_queue_init(4, &ring, 0);
	if (r == 0)
		r = io_uring_register_files(&ring, &fd, 1);
	close(fd);
	send_msg(sock, MSG(r, ring.ring_fd));
	for (;;) {
		struct msg m = msg_wait(sock);
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		struct io_uring_cqe *cqe;
		char buf[8] = {0};

		if (m.v[0] != CMD_RING_READ)
			_exit(0);
		io_uring_prep_read(sqe, 0, buf, 5, 0);
		sqe->flags |= IOSQE_FIXED_FILE;
		r = io_uring_submit(&ring);
		if (r >= 0 && (r = io_uring_wait_cqe(&ring, &cqe)) == 0) {
			r = cqe->res;
			io_uring_cqe_seen(&ring, cqe);
		}
		send_msg(sock, MSG(r, buf[0]));
	}
}

/* An io_uring fixed-file slot that holds the description: discovery cannot
 * tell which description a slot holds, so it is reported (unknown), not
 * cut, and reads on; the descriptors are cut and the call succeeds. */
static void t_uring_slot_unknown(void)
{
	struct revoke_report *rep = NULL;
	const struct revoke_ref *ref;
	struct victim a, r;
	struct msg m;
	int d, a_fd;

	shared_file();
	victim_start(&a);
	r = victim_run(v_ring_slot);
	d = open(tpath, O_RDWR | O_CLOEXEC);
	CHECK(d >= 0, "open: %m");
	a_fd = victim_send_fd(&a, d);
	CHECK(msg_send_fd(r.sock, "x", 1, d) == 0, "send the description: %m");
	m = recv_msg(&r);
	if (m.v[0] == -ENOSYS || m.v[0] == -EPERM)
		SKIP("io_uring not available here (%s)", strerror((int)-m.v[0]));
	CHECK(m.v[0] == 0, "io_uring setup: %s", strerror((int)-m.v[0]));
	CHECK(frevoke_desc(d, 0, NULL, 0, &rep) == 0, "frevoke_ex(DESCRIPTION) with a slot: %m");
	CHECK_VFD(&a, a_fd, EBADF);
	ref = find_ref(find_holder(rep, r.pid), REVOKE_REF_URING);
	CHECK(ref && ref->state == REVOKE_STATE_UNKNOWN, "the slot is reported as %s",
	      ref ? revoke_state_name(ref->state) : "nothing");
	send_msg(r.sock, MSG(CMD_RING_READ));
	m = recv_msg(&r);
	if (engine_native()) /* the description itself revoked: the slot too */
		CHECK(m.v[0] == -EBADF, "the kernel left the slot: a fixed read gave %lld (%s)",
		      (long long)m.v[0], m.v[0] < 0 ? strerror((int)-m.v[0]) : "data");
	else
		CHECK(m.v[0] == 5 && m.v[1] == 'h',
		      "the slot was touched: a fixed read gave %lld (%s)", (long long)m.v[0],
		      m.v[0] < 0 ? strerror((int)-m.v[0]) : "data");
	revoke_report_free(rep);
}

/* --list: only the description's descriptors, nothing changed. */
static void t_list(void)
{
	struct revoke_report *rep = NULL;
	struct victim a, b;
	int d, a_fd;

	shared_file();
	victim_start(&a);
	b = victim_run(holder_main);
	recv_msg(&b);
	d = open(tpath, O_RDWR | O_CLOEXEC);
	CHECK(d >= 0, "open: %m");
	a_fd = victim_send_fd(&a, d);
	CHECK(frevoke_desc(d, REVOKE_LIST_ONLY, NULL, 0, &rep) == 0, "list: %m");
	CHECK(find_holder(rep, a.pid) && !find_holder(rep, b.pid),
	      "the listing is not the description's holders");
	CHECK_VFD(&a, a_fd, 0);
	CHECK_READS(&b);
	revoke_report_free(rep);
}

/* A terminal: two opens of one pty. Revoking one description must not hang
 * the terminal up (a hangup reaches every open of it): the other open reads
 * on (EAGAIN: nothing typed, not EIO). */
static void t_terminal(void)
{
	struct victim a;
	struct victim_res r;
	char slave[64];
	int master, d, o, a_fd;

	make_scratch();
	victim_start(&a);
	master = test_pty(slave, sizeof(slave));
	d = open(slave, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	o = open(slave, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	CHECK(d >= 0 && o >= 0, "open %s: %m", slave);
	a_fd = victim_send_fd(&a, d);
	CHECK(frevoke_desc(d, 0, NULL, 0, NULL) == 0, "frevoke_ex(DESCRIPTION) of a pty: %m");
	r = victim_call(&a, VICTIM_REQ(.op = VOP_READ, .fd = a_fd, .len = 1));
	CHECK(r.ret == -1 && r.err == EBADF, "the victim's copy: read gave %ld (%s)", r.ret,
	      strerror(r.err));
	errno = 0;
	CHECK(read(o, slave, 1) == -1 && errno == EAGAIN,
	      "the other open of the pty: read gave %m, not EAGAIN (hung up?)");
	CHECK(write(master, "x\n", 2) == 2, "write to the master: %m");
	close(master);
}

/* Bad input: an error, nothing changed. */
static void t_bad_input(void)
{
	const char *paths[1];
	struct revoke_opts o = {.sz = sizeof(o), .keep_fd = -1};
	struct victim a;
	int d, a_fd, r, e;

	shared_file();
	victim_start(&a);
	d = open(tpath, O_RDWR | O_CLOEXEC);
	CHECK(d >= 0, "open: %m");
	a_fd = victim_send_fd(&a, d);
	paths[0] = tpath;
	o.flags = REVOKE_DESCRIPTION;
	r = revoke_ex(paths, 1, &o, NULL);
	e = errno;
	CHECK(r == -1 && e == EINVAL, "revoke_ex(path, DESCRIPTION): %d (%s)", r, strerror(e));
	o.flags = REVOKE_DESCRIPTION | REVOKE_RECHECK;
	r = frevoke_ex(d, &o, NULL);
	e = errno;
	CHECK(r == -1 && e == EINVAL, "DESCRIPTION | RECHECK: %d (%s)", r, strerror(e));
	o.flags = REVOKE_DESCRIPTION | REVOKE_MOUNT;
	r = frevoke_ex(d, &o, NULL);
	e = errno;
	CHECK(r == -1 && e == EINVAL, "DESCRIPTION | MOUNT: %d (%s)", r, strerror(e));
	o.flags = REVOKE_DESCRIPTION;
	r = frevoke_ex(987, &o, NULL);
	e = errno;
	CHECK(r == -1 && e == EBADF, "a descriptor that is not open: %d (%s)", r, strerror(e));
	CHECK_VFD(&a, a_fd, 0);
	check_own(d, 0);
}

TEST_MAIN("revoke-description", {"everywhere", t_everywhere, 30}, {"with_pid", t_with_pid, 30},
	  {"mapping_unknown", t_mapping_unknown, 30},
	  {"uring_slot_unknown", t_uring_slot_unknown, 30}, {"list", t_list, 30},
	  {"terminal", t_terminal, 30}, {"bad_input", t_bad_input, 30}, )
