/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Discovery (lib/scan*.c) against real victims: forked children of the test
 * (PR_SET_PDEATHSIG) that hold the targets in every way a process can.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <liburing.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "fork.h"
#include "harness.h"
#include "internal.h"
#include "proc.h"

#ifndef REVOKE_BUILDDIR
#define REVOKE_BUILDDIR "."
#endif

/* Shared with the victims: what they did, where. */
struct shared {
	pid_t pid[4];
	uint64_t addr[4];
	int fd[4];
};
static struct shared *sh;
static int ready_w = -1;
static struct rv_target tgt[2];

static void setup_shared(void)
{
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sh != MAP_FAILED, "mmap shared: %m");
}

static void signal_ready(void)
{
	CHECK(write(ready_w, "r", 1) == 1, "ready: %m");
}

/* Forks a victim running FN(ARG); returns once it called signal_ready(). */
static pid_t spawn(void (*fn)(void *), void *arg)
{
	pid_t pid;
	int p[2];
	char c;

	CHECK(pipe2(p, O_CLOEXEC) == 0, "pipe: %m");
	pid = test_fork();
	CHECK(pid >= 0, "fork: %m");
	if (pid == 0) {
		close(p[0]);
		ready_w = p[1];
		/* The test's own O_PATH descriptors of the targets are not the victim's. */
		for (size_t i = 0; i < ARRAY_SIZE(tgt); i++)
			if (tgt[i].path)
				close(tgt[i].path_fd);
		fn(arg);
		for (;;)
			pause();
	}
	close(p[1]);
	CHECK(read(p[0], &c, 1) == 1, "victim %d died before it was ready", pid);
	close(p[0]);
	return pid;
}

/* Until PID sleeps (after its ready byte it still has to reach pause()):
 * a liveness bound of 2 s, not a timing assertion. */
static void wait_sleeping(pid_t pid)
{
	for (int i = 0; i < 2000; i++) {
		char state = proc_state(pid);

		CHECK(state, "read /proc/%d/stat: %m", pid);
		if (state == 'S')
			return;
		usleep(1000);
	}
	test_fail("victim %d did not go to sleep in 2 s", pid);
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static char tmpdir[] = "/tmp/rv-scan-XXXXXX";

static struct rv_target make_target(const char *name, size_t size)
{
	char path[256];
	struct stat st;
	int fd;

	if (tmpdir[sizeof(tmpdir) - 2] == 'X')
		CHECK(mkdtemp(tmpdir), "mkdtemp: %m");
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	CHECK(fd >= 0, "create %s: %m", path);
	CHECK(ftruncate(fd, (off_t)size) == 0, "truncate: %m");
	close(fd);
	fd = open(path, O_PATH | O_CLOEXEC);
	CHECK(fd >= 0 && fstat(fd, &st) == 0, "stat %s: %m", path);
	return (struct rv_target){.dev = st.st_dev,
				  .ino = st.st_ino,
				  .mode = st.st_mode,
				  .uid = st.st_uid,
				  .path_fd = fd,
				  .path = strdup(path)};
}

static struct rv_target target_of(const char *path)
{
	struct stat st;
	int fd = open(path, O_PATH | O_CLOEXEC);

	CHECK(fd >= 0 && fstat(fd, &st) == 0, "stat %s: %m", path);
	return (struct rv_target){.dev = st.st_dev,
				  .ino = st.st_ino,
				  .mode = st.st_mode,
				  .uid = st.st_uid,
				  .path_fd = fd,
				  .path = strdup(path)};
}

static void cleanup_target(const struct rv_target *t)
{
	if (S_ISDIR(t->mode))
		rmdir(t->path);
	else
		unlink(t->path);
	rmdir(tmpdir);
}

/* Processes the /proc scanner could not look at, listed as possible
 * holders (pid 1 of some sandboxes, even for root): the tests below count
 * real holders, so they go. test_unprivileged checks them. */
static size_t drop_uninspected(struct rv_holders *hs)
{
	size_t k = 0, dropped = 0;

	for (size_t i = 0; i < hs->n; i++) {
		if (hs->v[i].uninspected) {
			rv_holder_clear(&hs->v[i]);
			dropped++;
			continue;
		}
		hs->v[k++] = hs->v[i];
	}
	hs->n = k;
	return dropped;
}

/* Scans through /proc, leaving the targets' own O_PATH fds out, and the
 * processes it could not look at. */
static int scan_all(const struct rv_target *t, size_t n, struct rv_holders *hs)
{
	int ign[8];
	struct rv_scan_opts o = {.proc_root = "/proc",
				 .flags = REVOKE_DISCOVERY_PROC,
				 .ignore_fds = ign,
				 .nignore_fds = n,
				 .deadline_ns = rv_now_ns() + 20ull * 1000000000};

	for (size_t i = 0; i < n; i++)
		ign[i] = t[i].path_fd;
	return rv_scan(t, n, &o, hs);
}

static int scan(const struct rv_target *t, size_t n, struct rv_holders *hs)
{
	int r = scan_all(t, n, hs);

	drop_uninspected(hs);
	return r;
}

static struct rv_holder *holder(struct rv_holders *hs, pid_t pid)
{
	return rv_holders_find(hs, pid);
}

static struct revoke_ref *ref_of(struct rv_holder *h, int type, int fd, unsigned int target)
{
	for (size_t i = 0; h && i < h->pub.nrefs; i++)
		if (h->pub.refs[i].type == type && h->pub.refs[i].fd == fd &&
		    h->pub.refs[i].target == target)
			return &h->pub.refs[i];
	return NULL;
}

static size_t count(struct rv_holder *h, int type)
{
	size_t n = 0;

	for (size_t i = 0; h && i < h->pub.nrefs; i++)
		n += h->pub.refs[i].type == type;
	return n;
}

static void check_sorted(const struct rv_holders *hs)
{
	for (size_t i = 0; i < hs->n; i++) {
		const struct rv_holder *h = &hs->v[i];

		CHECK(i == 0 || hs->v[i - 1].pub.pid < h->pub.pid, "holders not sorted by pid");
		CHECK(h->pidfd >= 0, "holder %d has no pidfd", h->pub.pid);
		for (size_t j = 1; j < h->pub.nrefs; j++) {
			const struct revoke_ref *a = &h->pub.refs[j - 1], *b = &h->pub.refs[j];
			CHECK(a->type < b->type || (a->type == b->type && a->fd < b->fd) ||
				  (a->type == b->type && a->fd == b->fd && a->start <= b->start),
			      "refs of %d not sorted", h->pub.pid);
		}
	}
}

/* ---- fds ------------------------------------------------------------ */

static void victim_fds(void *arg)
{
	int fd;

	(void)arg;
	fd = open(tgt[0].path, O_RDWR | O_APPEND | O_CLOEXEC);
	CHECK(fd >= 0, "open: %m");
	CHECK(lseek(fd, 5, SEEK_SET) == 5, "lseek");
	CHECK(dup3(fd, 50, O_CLOEXEC) == 50, "dup3");
	CHECK(dup2(fd, 51) == 51, "dup2");
	close(fd);
	fd = open(tgt[0].path, O_PATH);
	CHECK(fd >= 0 && dup2(fd, 52) == 52, "O_PATH");
	close(fd);
	pid_t child = test_fork(); /* inherits 50, 51, 52 */
	if (child == 0) {
		for (;;)
			pause();
	}
	sh->pid[0] = child;
	signal_ready();
}

static void test_fds(void)
{
	struct rv_holders hs = {0};
	struct revoke_ref *r;
	struct rv_holder *h;
	pid_t v;

	setup_shared();
	tgt[0] = make_target("fds", 100);
	v = spawn(victim_fds, NULL);
	wait_sleeping(v); /* its state is checked below */
	CHECK(scan(tgt, 1, &hs) == REVOKE_DISC_PROC, "scan");
	check_sorted(&hs);
	h = holder(&hs, v);
	CHECK(h, "victim %d not found", v);
	CHECK(h->pub.nrefs == 3 && count(h, REVOKE_REF_FD) == 3, "victim has %zu refs",
	      h->pub.nrefs);
	r = ref_of(h, REVOKE_REF_FD, 50, 0);
	CHECK(r && r->fd_flags == FD_CLOEXEC && (r->open_flags & O_ACCMODE) == O_RDWR &&
		  (r->open_flags & O_APPEND) && !(r->open_flags & O_CLOEXEC) && r->offset == 5,
	      "fd 50: fd_flags %d open_flags %o offset %" PRIu64, r ? r->fd_flags : -1,
	      r ? r->open_flags : -1, r ? r->offset : 0);
	CHECK(r->state == REVOKE_STATE_FOUND && r->error == 0, "state");
	r = ref_of(h, REVOKE_REF_FD, 51, 0);
	CHECK(r && r->fd_flags == 0 && r->offset == 5, "fd 51 (dup2 clears FD_CLOEXEC)");
	r = ref_of(h, REVOKE_REF_FD, 52, 0);
	CHECK(r && (r->open_flags & O_PATH), "fd 52 is O_PATH");
	char comm[16];
	snprintf(comm, sizeof(comm), "%s", program_invocation_short_name);
	CHECK(h->pub.uid == getuid() && strcmp(h->pub.comm, comm) == 0 && !h->self &&
		  !h->zombie_leader && h->tracer == 0 && h->state == 'S',
	      "holder fields: uid %u comm '%s' state %c", h->pub.uid, h->pub.comm, h->state);
	h = holder(&hs, sh->pid[0]);
	CHECK(h && count(h, REVOKE_REF_FD) == 3, "inheriting child %d", sh->pid[0]);
	CHECK(!holder(&hs, getpid()), "the test's O_PATH fd was not ignored");
	rv_holders_free(&hs);
	cleanup_target(&tgt[0]);
}

/* ---- mappings ------------------------------------------------------- */

static void victim_maps(void *arg)
{
	long pg = sysconf(_SC_PAGESIZE);
	int fd = open(tgt[0].path, O_RDWR | O_CLOEXEC);
	void *a, *b;

	(void)arg;
	CHECK(fd >= 0, "open: %m");
	a = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	b = mmap(NULL, (size_t)pg, PROT_READ, MAP_PRIVATE, fd, pg * 2);
	CHECK(a != MAP_FAILED && b != MAP_FAILED, "mmap: %m");
	close(fd); /* a mapping-only holder */
	sh->addr[0] = (uintptr_t)a;
	sh->addr[1] = (uintptr_t)b;
	signal_ready();
}

static void test_maps(void)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	struct rv_holders hs = {0};
	struct revoke_ref *r;
	struct rv_holder *h;
	pid_t v;

	setup_shared();
	tgt[0] = make_target("maps", 3 * pg);
	v = spawn(victim_maps, NULL);
	CHECK(scan(tgt, 1, &hs) >= 0, "scan");
	h = holder(&hs, v);
	CHECK(h && h->pub.nrefs == 2 && count(h, REVOKE_REF_MAP) == 2, "victim: %zu refs",
	      h ? h->pub.nrefs : 0);
	for (size_t i = 0; i < 2; i++) {
		r = &h->pub.refs[i];
		if (r->start == sh->addr[0])
			CHECK(r->end == sh->addr[0] + 2 * pg &&
				  r->prot == (PROT_READ | PROT_WRITE) &&
				  r->map_flags == MAP_SHARED && r->offset == 0 && r->fd == -1,
			      "shared mapping fields");
		else
			CHECK(r->start == sh->addr[1] && r->end == sh->addr[1] + pg &&
				  r->prot == PROT_READ && r->map_flags == MAP_PRIVATE &&
				  r->offset == 2 * pg,
			      "private mapping fields: %" PRIx64 "-%" PRIx64, r->start, r->end);
	}
	rv_holders_free(&hs);
	cleanup_target(&tgt[0]);
}

/* ---- cwd, root, exe, two targets in one pass -------------------------- */

static void victim_dirs(void *arg)
{
	(void)arg;
	CHECK(chdir(tgt[0].path) == 0, "chdir: %m");
	if (geteuid() == 0)
		CHECK(chroot(tgt[0].path) == 0, "chroot: %m");
	signal_ready();
}

static void test_cwd_root_exe(void)
{
	struct rv_holders hs = {0};
	struct rv_holder *h;
	char exe[4096];
	ssize_t n;
	pid_t v;

	CHECK(mkdtemp(tmpdir), "mkdtemp");
	tgt[0] = target_of(tmpdir);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	CHECK(n > 0, "readlink exe");
	exe[n] = '\0';
	tgt[1] = target_of(exe);
	v = spawn(victim_dirs, NULL);
	CHECK(scan(tgt, 2, &hs) >= 0, "scan");
	h = holder(&hs, v);
	CHECK(h, "victim not found");
	CHECK(ref_of(h, REVOKE_REF_CWD, -1, 0), "cwd");
	if (geteuid() == 0)
		CHECK(ref_of(h, REVOKE_REF_ROOT, -1, 0), "root");
	CHECK(ref_of(h, REVOKE_REF_EXE, -1, 1), "exe (second target)");
	CHECK(count(h, REVOKE_REF_MAP) > 0, "the executable's mappings");
	for (size_t i = 0; i < h->pub.nrefs; i++)
		CHECK(h->pub.refs[i].type == REVOKE_REF_MAP ? h->pub.refs[i].target == 1
							    : h->pub.refs[i].fd == -1,
		      "ref %zu", i);
	/* The test itself runs that executable too: found in the same pass. */
	h = holder(&hs, getpid());
	CHECK(h && h->self && ref_of(h, REVOKE_REF_EXE, -1, 1), "self holds the exe");
	rv_holders_free(&hs);
	reap(v);
	rmdir(tmpdir);
}

/* ---- threads and a zombie leader --------------------------------------- */

static void *thread_hold(void *arg)
{
	int fd = open(tgt[0].path, O_RDONLY | O_CLOEXEC);
	void *m;

	CHECK(fd >= 0 && dup2(fd, 60) == 60, "thread open: %m");
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED, "thread mmap: %m");
	sh->addr[0] = (uintptr_t)m;
	signal_ready();
	if (arg) /* the leader exits: wait for it */
		for (;;)
			pause();
	return NULL;
}

static void victim_thread(void *arg)
{
	pthread_t t;

	CHECK(pthread_create(&t, NULL, thread_hold, arg) == 0, "pthread_create");
	if (arg)
		syscall(SYS_exit, 0); /* the leader alone: a zombie while the thread lives */
	pthread_join(t, NULL);
}

static void test_threads(void)
{
	struct rv_holders hs = {0};
	struct rv_holder *h;
	pid_t v;

	setup_shared();
	tgt[0] = make_target("threads", 4096);
	v = spawn(victim_thread, NULL);
	CHECK(scan(tgt, 1, &hs) >= 0, "scan");
	h = holder(&hs, v);
	CHECK(h && ref_of(h, REVOKE_REF_FD, 60, 0) && count(h, REVOKE_REF_MAP) == 1 &&
		  !h->zombie_leader,
	      "fd and mapping opened by a thread");
	rv_holders_free(&hs);
	cleanup_target(&tgt[0]);
}

static void test_zombie_leader(void)
{
	struct rv_holders hs = {0};
	struct rv_holder *h;
	pid_t v;

	setup_shared();
	tgt[0] = make_target("zombie", 4096);
	v = spawn(victim_thread, (void *)1);
	for (int i = 0;; i++) { /* wait for the leader's exit to show */
		char state = proc_state(v);

		CHECK(state && i < 2000, "victim gone or leader not a zombie");
		if (state == 'Z')
			break;
		usleep(1000);
	}
	CHECK(scan(tgt, 1, &hs) >= 0, "scan");
	h = holder(&hs, v);
	CHECK(h && h->zombie_leader, "zombie leader %d not found through its thread", v);
	CHECK(ref_of(h, REVOKE_REF_FD, 60, 0), "the live thread's fd");
	CHECK(count(h, REVOKE_REF_MAP) == 1 && h->pub.refs[h->pub.nrefs - 1].start == sh->addr[0],
	      "the live thread's mapping");
	rv_holders_free(&hs);
	cleanup_target(&tgt[0]);
}

/* ---- processes coming and going during the scan ------------------------ */

static void victim_churn(void *arg)
{
	(void)arg;
	signal_ready();
	for (;;) {
		pid_t p = test_fork();

		if (p == 0) {
			int fd = open(tgt[0].path, O_RDONLY | O_CLOEXEC);
			(void)fd;
			_exit(0);
		}
		if (p > 0)
			waitpid(p, NULL, 0);
	}
}

static void victim_open(void *arg)
{
	int fd = open(tgt[0].path, O_RDONLY);

	(void)arg;
	CHECK(fd >= 0 && dup2(fd, 70) == 70, "open");
	close(fd);
	signal_ready();
}

static void test_churn(void)
{
	pid_t churn[2], v;

	tgt[0] = make_target("churn", 10);
	v = spawn(victim_open, NULL);
	churn[0] = spawn(victim_churn, NULL);
	churn[1] = spawn(victim_churn, NULL);
	for (int i = 0; i < 10; i++) {
		struct rv_holders hs = {0};
		struct rv_holder *h;
		int r = scan(tgt, 1, &hs);

		CHECK(r >= 0, "scan %d failed: %d", i, r);
		h = holder(&hs, v);
		CHECK(h && ref_of(h, REVOKE_REF_FD, 70, 0), "stable victim lost in scan %d", i);
		rv_holders_free(&hs);
	}
	reap(churn[0]);
	reap(churn[1]);
	cleanup_target(&tgt[0]);
}

/* ---- the caller itself, ignore_fds --------------------------------------- */

static void test_self_ignore(void)
{
	struct rv_holders hs = {0};
	struct rv_holder *h;
	int fd;

	tgt[0] = make_target("self", 10);
	fd = open(tgt[0].path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "open");
	CHECK(scan(tgt, 1, &hs) >= 0, "scan");
	h = holder(&hs, getpid());
	CHECK(h && h->self && h->pub.nrefs == 1 && ref_of(h, REVOKE_REF_FD, fd, 0),
	      "self: only fd %d, not the ignored O_PATH fd %d", fd, tgt[0].path_fd);
	rv_holders_free(&hs);
	close(fd);
	CHECK(scan(tgt, 1, &hs) >= 0 && hs.n == 0, "nothing held any more: %zu holders", hs.n);
	rv_holders_free(&hs);
	cleanup_target(&tgt[0]);
}

/* ---- rv_scan_pid, deadline ------------------------------------------------- */

static void test_scan_pid(void)
{
	struct rv_holders hs = {0};
	struct rv_scan_opts o = {.proc_root = "/proc", .flags = REVOKE_DISCOVERY_PROC};
	struct rv_holder *h;
	pid_t v;

	tgt[0] = make_target("scanpid", 10);
	v = spawn(victim_open, NULL);
	CHECK(scan(tgt, 1, &hs) >= 0, "scan");
	h = holder(&hs, v);
	CHECK(h && h->pub.nrefs == 1, "victim");
	/* Pretend the scan saw more: the rescan replaces the refs. */
	CHECK(rv_holder_add_ref(h) && h->pub.nrefs == 2, "add_ref");
	CHECK(rv_scan_pid(tgt, 1, &o, h) == 0, "rescan");
	CHECK(h->pub.nrefs == 1 && ref_of(h, REVOKE_REF_FD, 70, 0), "rescan refs: %zu",
	      h->pub.nrefs);
	reap(v);
	CHECK(rv_scan_pid(tgt, 1, &o, h) == -ESRCH, "gone");
	rv_holders_free(&hs);

	o.deadline_ns = 1; /* long past */
	CHECK(rv_scan(tgt, 1, &o, &hs) == -ETIMEDOUT && hs.n == 0, "deadline");
	cleanup_target(&tgt[0]);
}

/* ---- io_uring fixed files, SCM_RIGHTS in flight ------------------------------ */

static struct io_uring ring;

static void victim_uring(void *arg)
{
	int fd = open(tgt[0].path, O_RDONLY | O_CLOEXEC), r;

	(void)arg;
	CHECK(fd >= 0, "open");
	r = io_uring_queue_init(4, &ring, 0);
	if (r < 0)
		SKIP("io_uring_queue_init: %s (kernel without io_uring?)", strerror(-r));
	CHECK(io_uring_register_files(&ring, &fd, 1) == 0, "register_files");
	close(fd); /* only the ring holds it now */
	sh->fd[0] = ring.ring_fd;
	signal_ready();
}

static void test_uring(void)
{
	struct rv_holders hs = {0};
	struct rv_holder *h;
	pid_t v;

	setup_shared();
	tgt[0] = make_target("uring", 10);
	v = spawn(victim_uring, NULL);
	CHECK(scan(tgt, 1, &hs) >= 0, "scan");
	h = holder(&hs, v);
	CHECK(h && h->pub.nrefs == 1 && ref_of(h, REVOKE_REF_URING, sh->fd[0], 0),
	      "registered file on ring fd %d not reported", sh->fd[0]);
	rv_holders_free(&hs);
	cleanup_target(&tgt[0]);
}

static void victim_inflight(void *arg)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = "x", .iov_len = 1};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	int sv[2], fd;

	(void)arg;
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0, "socketpair");
	fd = open(tgt[0].path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "open");
	/* Plain data first: the peek must get past it. */
	CHECK(write(sv[0], "data", 4) == 4, "write");
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	CHECK(sendmsg(sv[0], &msg, 0) == 1, "sendmsg: %m");
	close(fd); /* the sender's copy is gone */
	close(sv[0]);
	sh->fd[0] = sv[1];
	signal_ready();
}

static void test_inflight(void)
{
	struct rv_holders hs = {0};
	struct rv_holder *h;
	pid_t v;

	setup_shared();
	tgt[0] = make_target("inflight", 10);
	v = spawn(victim_inflight, NULL);
	CHECK(scan(tgt, 1, &hs) >= 0, "scan");
	h = holder(&hs, v);
	CHECK(h && h->pub.nrefs == 1 && ref_of(h, REVOKE_REF_INFLIGHT, sh->fd[0], 0),
	      "fd in flight on socket %d not reported", sh->fd[0]);
	rv_holders_free(&hs);
	/* Peeking left the message in place. */
	{
		char name[64], buf[1024];
		int fd, n;

		snprintf(name, sizeof(name), "/proc/%d/fdinfo/%d", v, sh->fd[0]);
		fd = open(name, O_RDONLY | O_CLOEXEC);
		n = (int)read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = '\0';
		CHECK(strstr(buf, "scm_fds: 1"), "message consumed: %s", buf);
	}
	/* And nothing the scan borrowed stayed in this process. */
	CHECK(scan(tgt, 1, &hs) >= 0 && !holder(&hs, getpid()), "leaked a received fd");
	rv_holders_free(&hs);
	cleanup_target(&tgt[0]);
}

/* ---- an unprivileged caller: others' /proc entries are hidden, not errors --- */

static void test_unprivileged(void)
{
	pid_t child, v;
	int status;

	if (geteuid() != 0)
		SKIP("needs root to drop to 65534");
	tgt[0] = make_target("unpriv", 10);
	CHECK(chown(tgt[0].path, 65534, 65534) == 0 && chown(tmpdir, 65534, 65534) == 0, "chown");
	child = test_fork();
	CHECK(child >= 0, "fork");
	if (child == 0) {
		struct rv_holders hs = {0};

		/* Dumpable again: changing uids cleared it, which would hide
		 * even our own victim's /proc entries; an ordinary user's
		 * processes are dumpable. */
		CHECK(test_become(65534, 65534, TEST_BECOME_DUMPABLE) == 0, "drop");
		v = spawn(victim_open, NULL);
		CHECK(scan_all(tgt, 1, &hs) >= 0, "unprivileged scan failed");
		CHECK(holder(&hs, v) && ref_of(holder(&hs, v), REVOKE_REF_FD, 70, 0) &&
			  !holder(&hs, v)->uninspected,
		      "own victim not found");
		/* Every other user's process may hold the file as far as we can
		 * tell: each is listed as uninspected, none silently skipped. The
		 * test's parent (root) is one. */
		CHECK(holder(&hs, getppid()) && holder(&hs, getppid())->uninspected &&
			  holder(&hs, getppid())->pub.nrefs == 0 &&
			  holder(&hs, getppid())->pub.uid == 0,
		      "root's process %d not listed as uninspected", getppid());
		rv_holders_free(&hs);
		_exit(0);
	}
	CHECK(waitpid(child, &status, 0) == child, "wait");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "unprivileged child failed");
	cleanup_target(&tgt[0]);
}

/* ---- a FUSE server that stopped answering -------------------------------- */

static void victim_fuse(void *arg)
{
	const char *path = arg;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *m;

	CHECK(fd >= 0 && dup2(fd, 80) == 80, "open %s: %m", path);
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED, "mmap fuse file: %m");
	signal_ready();
}

static void test_fuse_hang(void)
{
	char mnt[] = "/tmp/rv-fuse-XXXXXX", file[64], helper[4096];
	pid_t daemon, victim = -1, prober = -1, checker = -1;
	int status = -1, ok = 0;
	struct stat st;

	if (access("/dev/fuse", R_OK | W_OK) < 0)
		SKIP("no /dev/fuse");
	snprintf(helper, sizeof(helper), "%s/tests/helper-fusehang", REVOKE_BUILDDIR);
	if (access(helper, X_OK) < 0)
		SKIP("%s not built (no libfuse3)", helper);
	CHECK(mkdtemp(mnt), "mkdtemp");
	snprintf(file, sizeof(file), "%s/file", mnt);
	daemon = test_fork();
	CHECK(daemon >= 0, "fork");
	if (daemon == 0) {
		execl(helper, helper, mnt, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 1000 && stat(file, &st) < 0; i++) {
		if (waitpid(daemon, &status, WNOHANG) == daemon) {
			rmdir(mnt);
			SKIP("%s could not mount (status %d): FUSE mounts not permitted here",
			     helper, status);
		}
		usleep(5000);
	}
	if (stat(file, &st) < 0)
		goto cleanup; /* mounting failed: reported below */
	victim = spawn(victim_fuse, file);
	tgt[0] = target_of(file);

	/* Hang the server, and make sure it is hung: the prober's stat()
	 * needs a GETATTR (attributes are never cached) and blocks in it. */
	kill(daemon, SIGUSR1);
	prober = test_fork();
	if (prober == 0) {
		stat(file, &st);
		_exit(0);
	}

	checker = test_fork();
	if (checker == 0) {
		struct rv_holders hs = {0};
		struct rv_holder *h;
		int r;

		r = scan(tgt, 1, &hs);
		CHECK(r >= 0, "scan: %s", strerror(-r));
		h = holder(&hs, victim);
		CHECK(h && ref_of(h, REVOKE_REF_FD, 80, 0) && count(h, REVOKE_REF_MAP) == 1,
		      "victim of the hung filesystem not reported");
		_exit(0);
	}
	/* Bounded wait, below the case's alarm, so that cleanup always runs. */
	for (int i = 0; i < 1500; i++) {
		if (waitpid(checker, &status, WNOHANG) == checker) {
			ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
			checker = -1;
			break;
		}
		usleep(10000);
	}
cleanup:
	if (checker > 0)
		kill(checker, SIGKILL);
	if (victim > 0)
		kill(victim, SIGKILL);
	if (prober > 0)
		kill(prober, SIGKILL);
	kill(daemon, SIGKILL); /* aborts the connection: blocked requests fail */
	waitpid(daemon, NULL, 0);
	if (checker > 0)
		waitpid(checker, &status, 0);
	if (umount2(mnt, MNT_DETACH) < 0 && errno != EINVAL && errno != ENOENT) {
		pid_t u = test_fork();
		if (u == 0) {
			execlp("fusermount3", "fusermount3", "-u", "-z", mnt, (char *)NULL);
			_exit(127);
		}
		waitpid(u, NULL, 0);
	}
	rmdir(mnt);
	CHECK(victim > 0, "the FUSE helper did not mount %s", mnt);
	CHECK(checker < 0, "the scan blocked on the hung FUSE server");
	CHECK(ok, "the scan failed (status %d)", status);
}

/* ---- more holders than descriptors ------------------------------------ */

/* Each holder keeps a pidfd; with more holders than RLIMIT_NOFILE allows
 * (3000 against the default 1024) they go without one, and none is missed. */
static void test_rlimit_nofile(void)
{
	enum { N = 100 };
	struct rlimit rl = {.rlim_cur = 64, .rlim_max = 64};
	struct rv_holders hs = {0};
	pid_t pids[N];
	size_t with_pidfd = 0;
	int p[2], r;

	tgt[0] = make_target("nofile", 10);
	CHECK(pipe2(p, O_CLOEXEC) == 0, "pipe: %m");
	for (int i = 0; i < N; i++) {
		pids[i] = test_fork();
		CHECK(pids[i] >= 0, "fork: %m");
		if (pids[i] == 0) {
			close(tgt[0].path_fd);
			if (open(tgt[0].path, O_RDONLY) < 0 || write(p[1], "r", 1) != 1)
				_exit(1);
			for (;;)
				pause();
		}
	}
	close(p[1]);
	for (int i = 0; i < N; i++) {
		char c;
		CHECK(read(p[0], &c, 1) == 1, "victim died before it was ready");
	}
	close(p[0]);
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "setrlimit: %m");
	r = scan(tgt, 1, &hs);
	CHECK(r == REVOKE_DISC_PROC, "scan with RLIMIT_NOFILE 64: %d (%s)", r,
	      r < 0 ? strerror(-r) : "");
	for (int i = 0; i < N; i++)
		CHECK(holder(&hs, pids[i]) && count(holder(&hs, pids[i]), REVOKE_REF_FD) == 1,
		      "holder %d of %d missed", i, N);
	CHECK(hs.n == N, "%zu holders, %d expected", hs.n, N);
	for (size_t i = 0; i < hs.n; i++)
		with_pidfd += hs.v[i].pidfd >= 0;
	CHECK(with_pidfd > 0 && with_pidfd < N, "%zu holders with a pidfd", with_pidfd);
	rv_holders_free(&hs);
	for (int i = 0; i < N; i++)
		reap(pids[i]);
	cleanup_target(&tgt[0]);
}

TEST_MAIN("unit-scan", {"fds", test_fds, 30}, {"maps", test_maps, 30},
	  {"cwd_root_exe", test_cwd_root_exe, 30}, {"threads", test_threads, 30},
	  {"zombie_leader", test_zombie_leader, 30}, {"churn", test_churn, 60},
	  {"self_ignore_fds", test_self_ignore, 30}, {"scan_pid", test_scan_pid, 30},
	  {"uring", test_uring, 30}, {"inflight", test_inflight, 30},
	  {"unprivileged", test_unprivileged, 30}, {"fuse_hang", test_fuse_hang, 40},
	  {"rlimit_nofile", test_rlimit_nofile, 60})
