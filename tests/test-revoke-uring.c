/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Conformance: io_uring registered (fixed) files. The userspace engine
 * empties the slot in the holder (cut.c): afterwards a read through the slot
 * fails with EBADF and no byte arrives, a read in flight on the file ends
 * (ECANCELED), other slots keep their files. A ring that refuses the update
 * (restricted) is unreachable and the whole call is refused, every holder
 * left as it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <liburing.h>

#include "harness.h"
#include "revoke.h"
#include "conform.h"

/* What the ring victim builds (set before spawn; the fork inherits it). */
static struct {
	unsigned int setup_flags; /* io_uring_queue_init flags */
	bool restrict_ring;	  /* R_DISABLED, restrictions without FILES_UPDATE, enabled */
	bool stay_disabled;	  /* R_DISABLED and left so until CMD_ENABLE */
	bool sparse;		  /* a sparse table of 8: target in slot 5, decoy in slot 2 */
	bool keep_fd;		  /* keeps its ordinary descriptor of the target too */
	bool two_rings;		  /* a second ring: decoy in slot 0, target in slot 1 */
	bool ring_thread;	  /* ring made (and used) by a second thread */
	bool ring_thread_exits;	  /* ... which then exits: the leader answers CMD_FD_READ */
	bool pending;		  /* the target is a FIFO; a fixed read waits on it */
	bool close_ring;	  /* IORING_REGISTER_RING_FDS, then the ring's fd closed */
	bool fork_child;	  /* a forked child shares the ring (fd and mappings) */
} cfg;

static pid_t cfg_child; /* the victim's forked child (fork_child) */

enum { CMD_RING_READ = 10, CMD_FD_READ, CMD_ENABLE, CMD_PENDING };

static char decoy[160];

/* A fixed-file read through SLOT of RING: v[0] result, v[1] first byte. */
static struct msg ring_read(struct io_uring *ring, int slot)
{
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	char buf[8] = {0};
	int r;

	io_uring_prep_read(sqe, slot, buf, 5, 0);
	sqe->flags |= IOSQE_FIXED_FILE;
	r = io_uring_submit(ring);
	if (r < 0)
		return MSG(r, 0);
	r = io_uring_wait_cqe(ring, &cqe);
	if (r == 0) {
		r = cqe->res;
		io_uring_cqe_seen(ring, cqe);
	}
	return MSG(r, buf[0]);
}

/* Debian 12's liburing 2.3 declares these but does not export them. */
static int register_restrictions(struct io_uring *ring, struct io_uring_restriction *res,
				 unsigned int n)
{
	return syscall(SYS_io_uring_register, ring->ring_fd, IORING_REGISTER_RESTRICTIONS, res, n) <
		       0
		   ? -errno
		   : 0;
}

static int enable_rings(struct io_uring *ring)
{
	return syscall(SYS_io_uring_register, ring->ring_fd, IORING_REGISTER_ENABLE_RINGS, NULL,
		       0) < 0
		   ? -errno
		   : 0;
}

static int setup_ring(struct io_uring *ring, int fd, int dfd, int *ret_slot)
{
	struct io_uring_params p = {.flags = cfg.setup_flags};
	int r;

	if (cfg.restrict_ring || cfg.stay_disabled)
		p.flags |= IORING_SETUP_R_DISABLED;
	r = io_uring_queue_init_params(8, ring, &p);
	if (r < 0)
		return r;
	if (cfg.sparse) {
		r = io_uring_register_files_sparse(ring, 8);
		if (r == 0)
			r = io_uring_register_files_update(ring, 2, &dfd, 1);
		if (r == 1)
			r = io_uring_register_files_update(ring, 5, &fd, 1);
		*ret_slot = 5;
		r = r == 1 ? 0 : r < 0 ? r : -EIO;
	} else {
		r = io_uring_register_files(ring, &fd, 1);
		*ret_slot = 0;
	}
	if (r < 0)
		return r;
	if (cfg.restrict_ring) {
		/* Reads may be submitted; no registration is allowed. */
		struct io_uring_restriction res[] = {
		    {.opcode = IORING_RESTRICTION_SQE_OP, .sqe_op = IORING_OP_READ},
		    {.opcode = IORING_RESTRICTION_SQE_FLAGS_ALLOWED, .sqe_flags = IOSQE_FIXED_FILE},
		};

		r = register_restrictions(ring, res, 2);
		if (r == 0)
			r = enable_rings(ring);
	}
	return r;
}

struct ring_ctx {
	int sock, fd, dfd;
};

static void *ring_main(void *arg)
{
	struct ring_ctx *c = arg;
	struct io_uring ring, ring2;
	int slot = 0, r;
	static char pbuf[8];

	r = setup_ring(&ring, c->fd, c->dfd, &slot);
	if (r == 0 && cfg.two_rings) {
		int fds[2] = {c->dfd, c->fd};

		r = io_uring_queue_init(8, &ring2, 0);
		if (r == 0)
			r = io_uring_register_files(&ring2, fds, 2);
	}
	if (r < 0) {
		send_msg(c->sock, MSG(r));
		victim_recv(c->sock);
		_exit(0);
	}
	if (cfg.pending) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		struct io_uring_cqe *cqe;

		io_uring_prep_read(sqe, slot, pbuf, sizeof(pbuf), 0);
		sqe->flags |= IOSQE_FIXED_FILE;
		sqe->user_data = 42;
		if (io_uring_submit(&ring) != 1 || io_uring_peek_cqe(&ring, &cqe) != -EAGAIN)
			_exit(5); /* it must wait for data */
	}
	if (!cfg.keep_fd)
		close(c->fd); /* only the ring holds the file now */
	if (cfg.close_ring) {
		/* liburing enters the ring through its registered index now */
		r = io_uring_register_ring_fd(&ring);
		if (r != 1) {
			send_msg(c->sock, MSG(r < 0 ? r : -EIO));
			victim_recv(c->sock);
			_exit(0);
		}
		close(ring.ring_fd);
	}
	if (cfg.fork_child) {
		pid_t parent = getpid(), child = fork();

		if (child < 0)
			_exit(2);
		if (child == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(1);
			for (;;)
				pause();
		}
		cfg_child = child;
	}
	send_msg(c->sock, MSG(getpid(), ring.ring_fd, slot, cfg.two_rings ? ring2.ring_fd : -1,
			      (int64_t)syscall(SYS_gettid), cfg_child));
	if (cfg.ring_thread_exits)
		return NULL; /* the ring stays, its submitter gone */
	for (int i = 0; i < 100; i++) {
		struct msg m = victim_recv(c->sock), a;

		switch (m.v[0]) {
		case CMD_RING_READ:
			a = m.v[1] ? ring_read(&ring2, (int)m.v[2]) : ring_read(&ring, (int)m.v[2]);
			send_msg(c->sock, a);
			break;
		case CMD_FD_READ: {
			char b[8] = {0};
			ssize_t n = pread(c->fd, b, 5, 0);

			send_msg(c->sock, MSG(n, n < 0 ? errno : 0, b[0]));
			break;
		}
		case CMD_ENABLE:
			send_msg(c->sock, MSG(enable_rings(&ring)));
			break;
		case CMD_PENDING: {
			/* The read that was waiting: how it ended, within 2 s. */
			struct __kernel_timespec ts = {2, 0};
			struct io_uring_cqe *cqe;

			r = io_uring_wait_cqe_timeout(&ring, &cqe, &ts);
			if (r == 0) {
				a = MSG(cqe->res, pbuf[0], (int64_t)cqe->user_data);
				io_uring_cqe_seen(&ring, cqe);
			} else
				a = MSG(r, pbuf[0], -1);
			send_msg(c->sock, a);
			break;
		}
		default:
			_exit(0);
		}
	}
	return NULL;
}

static void v_ring(int sock)
{
	struct ring_ctx c = {.sock = sock};
	pthread_t t;

	c.fd = open(tpath, O_RDWR | O_CLOEXEC); /* a FIFO opened O_RDWR does not wait */
	c.dfd = open(decoy, O_RDONLY | O_CLOEXEC);
	if (c.fd < 0 || c.dfd < 0)
		_exit(2);
	if (!cfg.ring_thread) {
		ring_main(&c);
		return;
	}
	/* The leader only waits: the ring is another thread's. */
	if (pthread_create(&t, NULL, ring_main, &c) != 0)
		_exit(2);
	pthread_join(t, NULL);
	if (cfg.ring_thread_exits)
		holder_loop(sock, c.fd);
}

struct ring_victim {
	struct victim v;
	int ring, slot, ring2;
	pid_t tid, child;
};

static struct ring_victim spawn_ring(void)
{
	struct ring_victim rv = {.v = spawn(v_ring)};
	struct msg m = recv_msg(&rv.v);

	if (m.v[0] == -ENOSYS || m.v[0] == -EPERM)
		SKIP("io_uring not available here (%s)", strerror((int)-m.v[0]));
	if (m.v[0] == -EINVAL && (cfg.setup_flags || cfg.sparse || cfg.restrict_ring))
		SKIP("this kernel lacks an io_uring feature the case needs (setup flags %#x%s%s): "
		     "%s",
		     cfg.setup_flags, cfg.sparse ? ", sparse tables" : "",
		     cfg.restrict_ring ? ", restrictions" : "", strerror(EINVAL));
	CHECK(m.v[0] > 0, "io_uring setup: %s", strerror((int)-m.v[0]));
	rv.ring = (int)m.v[1];
	rv.slot = (int)m.v[2];
	rv.ring2 = (int)m.v[3];
	rv.tid = (pid_t)m.v[4];
	rv.child = (pid_t)m.v[5];
	return rv;
}

static struct msg ask_ring(const struct ring_victim *rv, int second, int slot)
{
	send_msg(rv->v.sock, MSG(CMD_RING_READ, second, slot));
	return recv_msg(&rv->v);
}

static void setup_files(void)
{
	make_scratch();
	make_file(tpath, "hello", 0);
	snprintf(decoy, sizeof(decoy), "%s/decoy", tdir);
	make_file(decoy, "decoy", 0);
}

static int revoke_with(const char *path, unsigned int flags, struct revoke_report **rep)
{
	const char *paths[] = {path};
	struct revoke_opts o = {.sz = sizeof(o), .flags = flags, .keep_fd = -1};

	return revoke_ex(paths, 1, &o, rep);
}

/* The URING ref of PID on RING: present, its slot SLOT, state STATE. */
static void check_uring_ref(const struct revoke_report *rep, pid_t pid, int ring, int slot,
			    int state)
{
	const struct revoke_holder *h = find_holder(rep, pid);
	const struct revoke_ref *ref = NULL;

	CHECK(h, "holder %d missing from the report", (int)pid);
	for (size_t i = 0; i < h->nrefs; i++)
		if (h->refs[i].type == REVOKE_REF_URING && h->refs[i].fd == ring)
			ref = &h->refs[i];
	CHECK(ref, "holder %d: no uring ref on ring fd %d", (int)pid, ring);
	CHECK(ref->offset == (uint64_t)slot, "uring ref slot %llu, the file is in slot %d",
	      (unsigned long long)ref->offset, slot);
	CHECK(ref->state == state, "uring ref state %s (error %s, reason '%s'), expected %s",
	      revoke_state_name(ref->state), strerror(ref->error), h->reason,
	      revoke_state_name(state));
}

/* The ring's read through SLOT fails with EBADF and reads nothing. */
#define CHECK_RING_CUT(rv, second, slot)                                                           \
	do {                                                                                       \
		struct msg m_ = ask_ring(rv, second, slot);                                        \
		CHECK(                                                                             \
		    m_.v[0] == -EBADF && m_.v[1] == 0,                                             \
		    "fixed-file read through slot %d gave %lld (%s), expected EBADF and no byte",  \
		    slot, (long long)m_.v[0], m_.v[0] < 0 ? strerror((int)-m_.v[0]) : "bytes");    \
	} while (0)

#define CHECK_RING_READS(rv, second, slot, c)                                                      \
	do {                                                                                       \
		struct msg m_ = ask_ring(rv, second, slot);                                        \
		CHECK(m_.v[0] == 5 && m_.v[1] == (c),                                              \
		      "fixed-file read through slot %d gave %lld (%s), expected 5 bytes", slot,    \
		      (long long)m_.v[0], m_.v[0] < 0 ? strerror((int)-m_.v[0]) : "");             \
	} while (0)

/* A fixed file only the ring holds, and another process's descriptor. */
static void t_fixed_read_after_revoke(void)
{
	struct revoke_report *rep = NULL;
	struct ring_victim u;
	struct victim b;
	int r, e;

	setup_files();
	u = spawn_ring();
	CHECK_RING_READS(&u, 0, u.slot, 'h');
	b = spawn(holder_main);
	recv_msg(&b);
	r = revoke_with(tpath, 0, &rep);
	e = errno;
	CHECK(r == 0, "revoke_ex: %s", strerror(e));
	if (!(rep && rep->engine == REVOKE_ENGINE_SYSCALL))
		check_uring_ref(rep, u.v.pid, u.ring, u.slot, REVOKE_STATE_CUT);
	CHECK(proc_status_field(u.v.pid, "TracerPid") == 0, "ring holder left traced");
	CHECK_RING_CUT(&u, 0, u.slot);
	CHECK_CUT(&b);
	revoke_report_free(rep);
}

/* The holder has its descriptor and the ring's slot: both cut. */
static void t_fixed_and_fd(void)
{
	struct ring_victim u;
	struct msg m;

	setup_files();
	cfg.keep_fd = true;
	u = spawn_ring();
	CHECK(revoke_explained(tpath) == 0, "revoke: %s", strerror(errno));
	CHECK_RING_CUT(&u, 0, u.slot);
	send_msg(u.v.sock, MSG(CMD_FD_READ));
	m = recv_msg(&u.v);
	CHECK(m.v[0] == -1 && m.v[1] == EBADF, "the holder's fd: pread gave %lld (%s), not EBADF",
	      (long long)m.v[0], strerror((int)m.v[1]));
}

/* A sparse table: the target's slot is emptied, the decoy's stays. */
static void t_sparse_table(void)
{
	struct revoke_report *rep = NULL;
	struct ring_victim u;

	setup_files();
	cfg.sparse = true;
	u = spawn_ring();
	CHECK(u.slot == 5, "slot %d", u.slot);
	CHECK(revoke_with(tpath, 0, &rep) == 0, "revoke_ex: %s", strerror(errno));
	if (!(rep && rep->engine == REVOKE_ENGINE_SYSCALL))
		check_uring_ref(rep, u.v.pid, u.ring, 5, REVOKE_STATE_CUT);
	CHECK_RING_CUT(&u, 0, 5);
	CHECK_RING_READS(&u, 0, 2, 'd');
	revoke_report_free(rep);
}

/* Two rings in one process, the target in a different slot of each. */
static void t_two_rings(void)
{
	struct revoke_report *rep = NULL;
	struct ring_victim u;

	setup_files();
	cfg.two_rings = true;
	u = spawn_ring();
	CHECK(revoke_with(tpath, 0, &rep) == 0, "revoke_ex: %s", strerror(errno));
	if (!(rep && rep->engine == REVOKE_ENGINE_SYSCALL)) {
		check_uring_ref(rep, u.v.pid, u.ring, 0, REVOKE_STATE_CUT);
		check_uring_ref(rep, u.v.pid, u.ring2, 1, REVOKE_STATE_CUT);
	}
	CHECK_RING_CUT(&u, 0, 0);
	CHECK_RING_CUT(&u, 1, 1);
	CHECK_RING_READS(&u, 1, 0, 'd');
	revoke_report_free(rep);
}

/* A ring shared with a forked child: both hold the slot; both cut. */
static void t_shared_after_fork(void)
{
	struct revoke_report *rep = NULL;
	struct ring_victim u;

	setup_files();
	cfg.fork_child = true;
	u = spawn_ring();
	CHECK(u.child > 0, "no child");
	CHECK(revoke_with(tpath, 0, &rep) == 0, "revoke_ex: %s", strerror(errno));
	if (!(rep && rep->engine == REVOKE_ENGINE_SYSCALL)) {
		check_uring_ref(rep, u.v.pid, u.ring, u.slot, REVOKE_STATE_CUT);
		check_uring_ref(rep, u.child, u.ring, u.slot, REVOKE_STATE_CUT);
	}
	CHECK(proc_status_field(u.child, "TracerPid") == 0, "the child left traced");
	CHECK_RING_CUT(&u, 0, u.slot);
	revoke_report_free(rep);
}

/* IORING_SETUP_SINGLE_ISSUER, made by the thread the cut runs in. */
static void t_single_issuer(void)
{
	setup_files();
	cfg.setup_flags = IORING_SETUP_SINGLE_ISSUER;
	struct ring_victim u = spawn_ring();

	CHECK(revoke_explained(tpath) == 0, "revoke: %s", strerror(errno));
	CHECK_RING_CUT(&u, 0, u.slot);
}

/*
 * A SINGLE_ISSUER ring of a thread other than the leader (where the cut
 * runs). Kernels that let only the submitter register (6.x after 6.1) refuse
 * the update from the leader: the ref is unreachable and the call refused
 * before anyone is cut (all or nothing: the other holder still reads); where
 * the kernel lets any thread register, the slot is cut.
 */
static void *probe_thread(void *arg)
{
	struct io_uring *ring = arg;
	int skip = IORING_REGISTER_FILES_SKIP;

	return (void *)(intptr_t)io_uring_register_files_update(ring, 0, &skip, 1);
}

static bool submitter_only(void)
{
	struct io_uring ring;
	pthread_t t;
	void *res;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || io_uring_queue_init(2, &ring, IORING_SETUP_SINGLE_ISSUER) < 0)
		return false;
	CHECK(io_uring_register_files(&ring, &fd, 1) == 0, "register");
	CHECK(pthread_create(&t, NULL, probe_thread, &ring) == 0, "pthread_create");
	pthread_join(t, &res);
	io_uring_queue_exit(&ring);
	close(fd);
	return (intptr_t)res == -EEXIST;
}

static void t_single_issuer_other_thread(void)
{
	struct revoke_report *rep = NULL;
	bool strict = submitter_only();
	struct ring_victim u;
	struct victim b;
	int r, e;

	setup_files();
	cfg.setup_flags = IORING_SETUP_SINGLE_ISSUER;
	cfg.ring_thread = true;
	u = spawn_ring();
	CHECK(u.tid != u.v.pid, "the ring is the leader's");
	b = spawn(holder_main);
	recv_msg(&b);
	r = revoke_with(tpath, 0, &rep);
	e = errno;
	CHECK(rep, "no report (%s)", strerror(e));
	if (rep->engine == REVOKE_ENGINE_SYSCALL || !strict) {
		CHECK(r == 0, "revoke_ex: %s", strerror(e));
		CHECK_RING_CUT(&u, 0, u.slot);
		CHECK_CUT(&b);
		revoke_report_free(rep);
		return;
	}
	CHECK(r == -1,
	      "revoke_ex succeeded, though the kernel takes the update only from thread %d",
	      (int)u.tid);
	CHECK(e == EBUSY, "revoke_ex failed with %s, expected EBUSY", strerror(e));
	check_uring_ref(rep, u.v.pid, u.ring, u.slot, REVOKE_STATE_UNREACHABLE);
	CHECK(proc_status_field(u.v.pid, "TracerPid") == 0, "ring holder left traced");
	CHECK_RING_READS(&u, 0, u.slot, 'h');
	/* All or nothing: refused before anyone was cut. */
	CHECK_READS(&b);
	revoke_report_free(rep);
}

/*
 * A SINGLE_ISSUER ring whose submitter thread exited: the holder is
 * single-threaded, yet its leader (where the cut runs) may not update the
 * ring on kernels that let only the submitter register. Found out before
 * anyone is changed: the other holder still reads (the cut used to find it
 * out in the holder's own program, after the others were cut).
 */
static void t_single_issuer_submitter_gone(void)
{
	struct revoke_report *rep = NULL;
	bool strict = submitter_only();
	struct ring_victim u;
	struct victim b;
	int r, e;

	setup_files();
	cfg.setup_flags = IORING_SETUP_SINGLE_ISSUER;
	cfg.ring_thread = cfg.ring_thread_exits = cfg.keep_fd = true;
	u = spawn_ring();
	b = spawn(holder_main);
	recv_msg(&b);
	for (int i = 0; i < 200 && proc_status_field(u.v.pid, "Threads") != 1; i++)
		msleep(10);
	CHECK(proc_status_field(u.v.pid, "Threads") == 1, "the ring's thread did not exit");
	r = revoke_with(tpath, 0, &rep);
	e = errno;
	CHECK(rep, "no report (%s)", strerror(e));
	if (rep->engine == REVOKE_ENGINE_SYSCALL || !strict) {
		CHECK(r == 0, "revoke_ex: %s", strerror(e));
		CHECK_CUT(&b);
		revoke_report_free(rep);
		return;
	}
	CHECK(r == -1 && e == EBUSY, "revoke_ex returned %d (%s), expected EBUSY", r, strerror(e));
	check_uring_ref(rep, u.v.pid, u.ring, u.slot, REVOKE_STATE_FAILED);
	/* All or nothing: refused before anyone was cut. */
	CHECK_READS(&b);
	CHECK_READS(&u.v);
	CHECK(proc_status_field(u.v.pid, "TracerPid") == 0, "ring holder left traced");
	CHECK(proc_status_field(b.pid, "TracerPid") == 0, "holder left traced");
	revoke_report_free(rep);
}

/* A ring created R_DISABLED and not enabled yet: cut; once enabled, the
 * slot reads nothing. */
static void t_disabled_ring(void)
{
	struct ring_victim u;
	struct msg m;

	setup_files();
	cfg.stay_disabled = true;
	u = spawn_ring();
	CHECK(revoke_explained(tpath) == 0, "revoke: %s", strerror(errno));
	send_msg(u.v.sock, MSG(CMD_ENABLE));
	m = recv_msg(&u.v);
	CHECK(m.v[0] == 0, "enable: %s", strerror((int)-m.v[0]));
	CHECK_RING_CUT(&u, 0, u.slot);
}

/* A restricted ring takes no FILES_UPDATE: unreachable, the call refused,
 * every holder left as it was. */
static void t_restricted_refused(void)
{
	struct revoke_report *rep = NULL;
	const struct revoke_holder *h;
	struct ring_victim u;
	struct victim b;
	int r, e;

	setup_files();
	cfg.restrict_ring = true;
	u = spawn_ring();
	CHECK_RING_READS(&u, 0, u.slot, 'h');
	b = spawn(holder_main);
	recv_msg(&b);
	r = revoke_with(tpath, 0, &rep);
	e = errno;
	CHECK(rep, "no report (%s)", strerror(e));
	if (rep->engine == REVOKE_ENGINE_SYSCALL) {
		CHECK(r == 0, "native revoke_ex: %s", strerror(e));
		CHECK_RING_CUT(&u, 0, u.slot);
		revoke_report_free(rep);
		return;
	}
	CHECK(r == -1 && e == EBUSY, "revoke_ex returned %d (%s), expected EBUSY", r, strerror(e));
	check_uring_ref(rep, u.v.pid, u.ring, u.slot, REVOKE_STATE_UNREACHABLE);
	h = find_holder(rep, u.v.pid);
	CHECK(strstr(h->reason, "restricted"), "reason '%s' does not say the ring is restricted",
	      h->reason);
	CHECK(proc_status_field(u.v.pid, "TracerPid") == 0, "ring holder left traced");
	CHECK_RING_READS(&u, 0, u.slot, 'h');
	CHECK(proc_status_field(b.pid, "TracerPid") == 0, "other holder left traced");
	CHECK_READS(&b);
	revoke_report_free(rep);
}

/*
 * A read in flight on the fixed file (the target a FIFO, nothing written):
 * the revoke ends it (ECANCELED, no byte), and bytes written afterwards do
 * not arrive through the ring. The writer is the caller's own descriptor,
 * kept by frevoke.
 */
static void t_pending_read(void)
{
	struct ring_victim u;
	struct msg m;
	int wfd;

	make_scratch();
	CHECK(mkfifo(tpath, 0600) == 0, "mkfifo: %s", strerror(errno));
	snprintf(decoy, sizeof(decoy), "%s/decoy", tdir);
	make_file(decoy, "decoy", 0);
	cfg.pending = true;
	u = spawn_ring();
	wfd = open(tpath, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	CHECK(wfd >= 0, "open the FIFO for writing: %s", strerror(errno));
	CHECK(frevoke(wfd) == 0, "frevoke: %s", strerror(errno));
	signal(SIGPIPE, SIG_IGN);
	(void)!write(wfd, "late", 4); /* no reader is left: EPIPE, or bytes nobody gets */
	send_msg(u.v.sock, MSG(CMD_PENDING));
	m = recv_msg(&u.v);
	CHECK(m.v[2] == 42, "the pending read did not complete within 2 s (%lld)",
	      (long long)m.v[0]);
	CHECK(m.v[0] < 0 && m.v[1] == 0,
	      "the pending read gave %lld (%s), expected an error and no byte", (long long)m.v[0],
	      m.v[0] < 0 ? strerror((int)-m.v[0]) : "bytes");
	CHECK_RING_CUT(&u, 0, u.slot);
	close(wfd);
}

/*
 * A ring whose descriptor is closed (IORING_REGISTER_RING_FDS): it still
 * reads through its registered index, but no fdinfo lists its files. The
 * holder may hold the target that way: unreachable, the call refused; with
 * REVOKE_BEST_EFFORT the rest is cut and the call still fails.
 */
static void ring_fd_closed(bool best_effort)
{
	struct revoke_report *rep = NULL;
	const struct revoke_holder *h;
	struct ring_victim u;
	struct victim b;
	int r, e;

	setup_files();
	cfg.close_ring = true;
	u = spawn_ring();
	CHECK_RING_READS(&u, 0, u.slot, 'h');
	b = spawn(holder_main);
	recv_msg(&b);
	r = revoke_with(tpath, best_effort ? REVOKE_BEST_EFFORT : 0, &rep);
	e = errno;
	CHECK(rep, "no report (%s)", strerror(e));
	if (rep->engine == REVOKE_ENGINE_SYSCALL) {
		CHECK(r == 0, "native revoke_ex: %s", strerror(e));
		CHECK_RING_CUT(&u, 0, u.slot);
		revoke_report_free(rep);
		return;
	}
	CHECK(r == -1 && e == EBUSY, "revoke_ex returned %d (%s), expected EBUSY", r, strerror(e));
	check_uring_ref(rep, u.v.pid, -1, 0, REVOKE_STATE_UNREACHABLE);
	h = find_holder(rep, u.v.pid);
	CHECK(strstr(h->reason, "no descriptor"),
	      "reason '%s' does not say the ring has no descriptor", h->reason);
	CHECK(proc_status_field(u.v.pid, "TracerPid") == 0, "ring holder left traced");
	CHECK_RING_READS(&u, 0, u.slot, 'h');
	CHECK(proc_status_field(b.pid, "TracerPid") == 0, "other holder left traced");
	if (best_effort)
		CHECK_CUT(&b);
	else
		CHECK_READS(&b);
	revoke_report_free(rep);
}

static void t_ring_fd_closed_refused(void)
{
	ring_fd_closed(false);
}

static void t_ring_fd_closed_best_effort(void)
{
	ring_fd_closed(true);
}

TEST_MAIN("revoke-uring", {"fixed_read_after_revoke", t_fixed_read_after_revoke, 30},
	  {"fixed_and_fd", t_fixed_and_fd, 30}, {"sparse_table", t_sparse_table, 30},
	  {"two_rings", t_two_rings, 30}, {"shared_after_fork", t_shared_after_fork, 30},
	  {"single_issuer", t_single_issuer, 30},
	  {"single_issuer_other_thread", t_single_issuer_other_thread, 30},
	  {"single_issuer_submitter_gone", t_single_issuer_submitter_gone, 30},
	  {"disabled_ring", t_disabled_ring, 30}, {"restricted_refused", t_restricted_refused, 30},
	  {"pending_read", t_pending_read, 30},
	  {"ring_fd_closed_refused", t_ring_fd_closed_refused, 30},
	  {"ring_fd_closed_best_effort", t_ring_fd_closed_best_effort, 30}, )
