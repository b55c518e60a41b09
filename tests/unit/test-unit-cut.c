/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of the cut (lib/cut/) in a stopped victim and in the caller:
 * dead descriptors and SIGBUS mappings, exactly as the victim sees them.
 */
#include <linux/capability.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <seccomp.h>
#include <setjmp.h>

#include "unit-ptrace.h"

static int v_fd = -1;
static void v_hold_fd(int in, int out)
{
	char c, buf[4];

	xwrite(out, &v_fd, sizeof(v_fd));
	while (read(in, &c, 1) == 1) {
		int rep[2];
		rep[0] = (int)read(v_fd, buf, 1);
		rep[1] = errno;
		xwrite(out, rep, sizeof(rep));
	}
}

static void v_seccomp_hold_fd(int in, int out)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);

	/* Every syscall a cut injects would kill it; it only reads and writes. */
	if (!ctx || seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(dup3), 0) < 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(openat), 0) < 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(close), 0) < 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(fcntl), 0) < 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(memfd_create), 0) < 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(mmap), 0) < 0 ||
	    seccomp_load(ctx) < 0)
		_exit(3);
	v_hold_fd(in, out);
}

static void test_seccomp_victim_survives(void)
{
	struct victim v;
	struct revoke_ref ref = {.type = REVOKE_REF_FD};
	struct rv_holder h;
	struct rv_tracee *t;
	int fd, rep[2], r;

	v_fd = make_tmpfile(4096, 'a');
	CHECK(fcntl(v_fd, F_SETFD, 0) == 0, "fcntl");
	victim_start_pipes(&v, v_seccomp_hold_fd);
	xread(v.out, &fd, sizeof(fd));
	t = stop(v.pid);
	ref.fd = fd;
	h = holder(v.pid, &ref, 1);
	r = rv_cut_holder(&h, t);
	CHECK(r == 0 && ref.state == REVOKE_STATE_CUT, "cut = %d, state %d error %d", r, ref.state,
	      ref.error);
	release(t);
	xwrite(v.in, "x", 1);
	xread(v.out, rep, sizeof(rep));
	CHECK(rep[0] == -1 && rep[1] == EBADF, "read on the cut fd gave %d (%s)", rep[0],
	      strerror(rep[1]));
}

/* Without CAP_SYS_ADMIN the filter cannot be suspended: refuse to touch it. */
static void test_seccomp_needs_cap_sys_admin(void)
{
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2];
	struct rv_tracee *t = NULL;
	struct victim v;
	char reason[128];
	int fd, r;

	v_fd = make_tmpfile(4096, 'a');
	victim_start_pipes(&v, v_seccomp_hold_fd);
	xread(v.out, &fd, sizeof(fd));
	CHECK(syscall(SYS_capget, &hdr, data) == 0, "capget: %m");
	data[CAP_SYS_ADMIN / 32].effective &= ~(1u << (CAP_SYS_ADMIN % 32));
	CHECK(syscall(SYS_capset, &hdr, data) == 0, "capset: %m");
	r = rv_tracee_stop(v.pid, -1, after_ms(2000), &t, reason);
	CHECK(r == -EPERM && !t, "stop = %d (%s), want -EPERM", r, reason);
	CHECK(strstr(reason, "seccomp") && strstr(reason, "CAP_SYS_ADMIN"), "reason '%s'", reason);
	CHECK(tracer_of(v.pid) == 0, "victim left traced");
}

struct fd_checks {
	int rd, wr, ioc, mm, getfd_a, getfd_b, openat_err, newfd, close_a;
	char link[256]; /* what the cut fd points to */
};

static int v_fd_b = -1;
static void v_fd_checks(int in, int out)
{
	struct fd_checks c;
	char ch, buf[4], buf2[64];
	int n;

	xwrite(out, &v_fd, sizeof(v_fd));
	xwrite(out, &v_fd_b, sizeof(v_fd_b));
	xread(in, &ch, 1);
	c.rd = read(v_fd, buf, 1) < 0 ? errno : 0;
	c.wr = write(v_fd, "x", 1) < 0 ? errno : 0;
	c.ioc = ioctl(v_fd, FIONREAD, &n) < 0 ? errno : 0;
	c.mm = mmap(NULL, 4096, PROT_READ, MAP_SHARED, v_fd, 0) == MAP_FAILED ? errno : 0;
	c.getfd_a = fcntl(v_fd, F_GETFD);
	c.getfd_b = fcntl(v_fd_b, F_GETFD);
	c.openat_err = openat(v_fd, "x", O_RDONLY | O_CLOEXEC) < 0 ? errno : 0;
	c.newfd = open("/", O_RDONLY | O_CLOEXEC);
	snprintf(buf2, sizeof(buf2), "/proc/self/fd/%d", v_fd);
	memset(c.link, 0, sizeof(c.link));
	if (readlink(buf2, c.link, sizeof(c.link) - 1) < 0)
		c.link[0] = '\0';
	c.close_a = close(v_fd);
	xwrite(out, &c, sizeof(c));
}

/* In a mount namespace of its own, /dev is an empty tmpfs: no /dev/null. */
static void v_fd_checks_no_devnull(int in, int out)
{
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", "/dev", "tmpfs", 0, NULL) < 0)
		_exit(4);
	v_fd_checks(in, out);
}

/* ... and there /dev/null is a directory, which must not become the dead fd. */
static void v_fd_checks_dir_devnull(int in, int out)
{
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", "/dev", "tmpfs", 0, NULL) < 0 || mkdir("/dev/null", 0755) < 0)
		_exit(4);
	v_fd_checks(in, out);
}

static void check_cut_fds(void (*fn)(int in, int out), const char *want_link)
{
	struct victim v;
	struct revoke_ref refs[2] = {{.type = REVOKE_REF_FD, .fd_flags = FD_CLOEXEC},
				     {.type = REVOKE_REF_FD}};
	struct fd_checks c;
	struct rv_holder h;
	struct rv_tracee *t;
	int r;

	v_fd = make_tmpfile(4096, 'a');
	v_fd_b = fcntl(v_fd, F_DUPFD, 20);
	CHECK(v_fd_b >= 0, "dup: %m");
	victim_start_pipes(&v, fn);
	xread(v.out, &refs[0].fd, sizeof(int));
	xread(v.out, &refs[1].fd, sizeof(int));
	t = stop(v.pid);
	h = holder(v.pid, refs, 2);
	r = rv_cut_holder(&h, t);
	CHECK(r == 0, "cut = %d (errors %d %d)", r, refs[0].error, refs[1].error);
	CHECK(refs[0].state == REVOKE_STATE_CUT && refs[1].state == REVOKE_STATE_CUT, "states");
	release(t);
	xwrite(v.in, "x", 1);
	xread(v.out, &c, sizeof(c));
	CHECK(c.rd == EBADF && c.wr == EBADF && c.ioc == EBADF && c.mm == EBADF,
	      "read %d write %d ioctl %d mmap %d, want EBADF", c.rd, c.wr, c.ioc, c.mm);
	CHECK(c.getfd_a == FD_CLOEXEC && c.getfd_b == 0, "F_GETFD %d %d", c.getfd_a, c.getfd_b);
	CHECK(c.openat_err == ENOTDIR, "openat(dead fd) errno %d, want ENOTDIR", c.openat_err);
	CHECK(c.newfd >= 0 && c.newfd != refs[0].fd && c.newfd != refs[1].fd,
	      "open() reused a cut number: %d", c.newfd);
	CHECK(c.close_a == 0, "close(dead fd) = %d", c.close_a);
	CHECK(strcmp(c.link, want_link) == 0, "dead fd is '%s', want '%s'", c.link, want_link);
}

/* The dead descriptor is the holder's own memfd "revoked", never a file
 * anyone else uses (/dev/null was, and revoking a dead descriptor then
 * reached every process's /dev/null). */
#define DEAD_LINK "/memfd:revoked (deleted)"

/* Nothing in /dev is needed, whatever the holder's mount namespace has there. */
static const struct cut_fds_row {
	struct test_row t;
	void (*victim)(int in, int out);
} cut_fds[] = {
    {{"cut_fds", 10}, v_fd_checks},
    {{"cut_fds_no_devnull", 10}, v_fd_checks_no_devnull},
    {{"cut_fds_dir_devnull", 10}, v_fd_checks_dir_devnull},
};

static void cut_fds_case(const void *row)
{
	check_cut_fds(((const struct cut_fds_row *)row)->victim, DEAD_LINK);
}

/* Without /proc in the holder's mount namespace the dead descriptor cannot
 * be made: the cut fails before touching anything, and says so. */
static void v_hold_no_proc(int in, int out)
{
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", "/proc", "tmpfs", 0, NULL) < 0)
		_exit(4);
	v_hold_fd(in, out);
}

static void test_no_proc_changes_nothing(void)
{
	struct victim v;
	struct revoke_ref ref = {.type = REVOKE_REF_FD};
	struct rv_holder h;
	struct rv_tracee *t;
	int fd, rep[2], r;

	v_fd = make_tmpfile(4096, 'a');
	victim_start_pipes(&v, v_hold_no_proc);
	xread(v.out, &fd, sizeof(fd));
	t = stop(v.pid);
	ref.fd = fd;
	h = holder(v.pid, &ref, 1);
	r = rv_cut_holder(&h, t);
	CHECK(r == -ENOENT && ref.state == REVOKE_STATE_FAILED && ref.error == ENOENT,
	      "cut = %d, state %d, error %d", r, ref.state, ref.error);
	release(t);
	xwrite(v.in, "x", 1);
	xread(v.out, rep, sizeof(rep));
	CHECK(rep[0] >= 0, "read on the untouched fd gave %d (%s)", rep[0], strerror(rep[1]));
}

static sigjmp_buf fault_jmp;
static void on_fault(int sig)
{
	siglongjmp(fault_jmp, sig);
}

/* The signal a one-byte load at P raises, or 0 with the byte in *val. */
static int probe(volatile const char *p, char *val)
{
	struct sigaction sa = {.sa_handler = on_fault, .sa_flags = SA_NODEFER};
	int sig;

	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	sig = sigsetjmp(fault_jmp, 1);
	if (sig == 0)
		*val = *p;
	signal(SIGBUS, SIG_DFL);
	signal(SIGSEGV, SIG_DFL);
	return sig;
}

static void v_maps(int in, int out)
{
	char *m1 = mmap(NULL, 8192, PROT_READ, MAP_SHARED, v_fd, 0);
	char *m2 = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, v_fd, 0);
	int rep[4];
	char ch, val = 0;

	xwrite(out, &m1, sizeof(m1));
	xwrite(out, &m2, sizeof(m2));
	xread(in, &ch, 1);
	rep[0] = probe(m1 + 4096, &val);
	rep[1] = probe(m2 + 4096, &val);
	rep[2] = val;
	rep[3] = probe(m1, &val);
	xwrite(out, rep, sizeof(rep));
}

static void test_cut_map(void)
{
	struct victim v;
	struct revoke_ref ref = {
	    .type = REVOKE_REF_MAP, .prot = PROT_READ, .map_flags = MAP_SHARED};
	char *m1, *m2;
	struct rv_holder h;
	struct rv_tracee *t;
	int rep[4], r;

	v_fd = make_tmpfile(8192, 'm');
	victim_start_pipes(&v, v_maps);
	xread(v.out, &m1, sizeof(m1));
	xread(v.out, &m2, sizeof(m2));
	CHECK(m1 != MAP_FAILED && m2 != MAP_FAILED, "victim mmap failed");
	t = stop(v.pid);
	ref.start = (uint64_t)m1;
	ref.end = ref.start + 8192;
	h = holder(v.pid, &ref, 1);
	r = rv_cut_holder(&h, t);
	CHECK(r == 0 && ref.state == REVOKE_STATE_CUT, "cut = %d error %d", r, ref.error);
	release(t);
	xwrite(v.in, "x", 1);
	xread(v.out, rep, sizeof(rep));
	CHECK(rep[0] == SIGBUS && rep[3] == SIGBUS, "cut mapping raised %d/%d, want SIGBUS", rep[0],
	      rep[3]);
	CHECK(rep[1] == 0 && rep[2] == 'm', "other mapping: signal %d byte %d", rep[1], rep[2]);
}

static int mt_data[2], mt_cut[2];
static uint32_t *mt_futex;
static int mt_out;

static void *mt_reader(void *arg)
{
	int fd = (int)(intptr_t)arg, rep[3] = {fd};
	char buf[8];

	rep[1] = (int)read(fd, buf, 5);
	rep[2] = rep[1] < 0 ? errno : 0;
	xwrite(mt_out, rep, sizeof(rep));
	return NULL;
}

static void *mt_waiter(void *arg)
{
	int rep[3] = {-1};

	(void)arg;
	rep[1] = (int)syscall(SYS_futex, mt_futex, FUTEX_WAIT, 0, NULL, NULL, 0);
	rep[2] = rep[1] < 0 ? errno : 0;
	xwrite(mt_out, rep, sizeof(rep));
	return NULL;
}

static void v_threads(int in, int out)
{
	pthread_t a, b, c;
	pid_t tids[3] = {0};
	char ch;

	mt_out = out;
	pthread_create(&a, NULL, mt_reader, (void *)(intptr_t)mt_data[0]);
	pthread_create(&b, NULL, mt_reader, (void *)(intptr_t)mt_cut[0]);
	pthread_create(&c, NULL, mt_waiter, NULL);
	(void)tids;
	xwrite(out, "r", 1);
	while (read(in, &ch, 1) == 1)
		;
}

static void test_threads(void)
{
	struct victim v;
	struct revoke_ref ref = {.type = REVOKE_REF_FD};
	struct rv_holder h;
	struct rv_tracee *t;
	char c;
	int rep[3], r, got = 0;
	pid_t tids[8];
	int ntids = 0;

	mt_futex = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(mt_futex != MAP_FAILED, "mmap: %m");
	CHECK(pipe2(mt_data, O_CLOEXEC) == 0 && pipe2(mt_cut, O_CLOEXEC) == 0, "pipe: %m");
	victim_start_pipes(&v, v_threads);
	xread(v.out, &c, 1);
	for (int i = 0; i < 2000 && ntids < 4; i++) {
		ntids = proc_tasks(v.pid, tids, 8);
		if (ntids < 4)
			msleep(1);
	}
	CHECK(ntids == 4, "victim has %d threads", ntids);
	for (int i = 0; i < ntids; i++)
		wait_in_syscall(v.pid, tids[i], -1);
	t = stop(v.pid);
	for (int i = 0; i < ntids; i++)
		CHECK(task_state(v.pid, tids[i]) == 't', "thread %d state %c", tids[i],
		      task_state(v.pid, tids[i]));
	ref.fd = mt_cut[0];
	h = holder(v.pid, &ref, 1);
	r = rv_cut_holder(&h, t);
	CHECK(r == 0 && ref.state == REVOKE_STATE_CUT, "cut = %d error %d", r, ref.error);
	release(t);
	/* The reader of the cut fd wakes up to EBADF; the others go back to
	 * sleep in their restarted syscalls, to be woken below. */
	xread(v.out, rep, sizeof(rep));
	CHECK(rep[0] == mt_cut[0] && rep[1] == -1 && rep[2] == EBADF,
	      "cut reader: fd %d got %d (%s)", rep[0], rep[1], strerror(rep[2]));
	for (int i = 0; i < ntids; i++)
		wait_in_syscall(v.pid, tids[i], -1);
	xwrite(mt_data[1], "hello", 5);
	__atomic_store_n(mt_futex, 1, __ATOMIC_SEQ_CST);
	for (int i = 0; i < 100 && got == 0; i++) {
		got = (int)syscall(SYS_futex, mt_futex, FUTEX_WAKE, 1, NULL, NULL, 0);
		if (got == 0)
			msleep(10);
	}
	CHECK(got == 1, "futex waiter not found");
	for (int i = 0; i < 2; i++) {
		xread(v.out, rep, sizeof(rep));
		if (rep[0] == mt_data[0])
			CHECK(rep[1] == 5, "data reader got %d (%s)", rep[1], strerror(rep[2]));
		else
			CHECK(rep[1] == 0, "futex wait gave %d (%s)", rep[1], strerror(rep[2]));
	}
}

static int zl_in, zl_out;

static void *zl_thread(void *arg)
{
	(void)arg;
	v_hold_fd(zl_in, zl_out);
	_exit(0);
}

static void v_zombie_leader(int in, int out)
{
	pthread_t th;

	zl_in = in;
	zl_out = out;
	pthread_create(&th, NULL, zl_thread, NULL);
	pthread_exit(NULL);
}

/* The leader has exited, a thread holds the fd: /proc/PID/fd is gone. */
static void test_zombie_leader_cut(void)
{
	struct victim v;
	struct revoke_ref ref = {.type = REVOKE_REF_FD};
	struct rv_holder h;
	struct rv_tracee *t;
	int fd, rep[2], r;

	v_fd = make_tmpfile(4096, 'a');
	victim_start_pipes(&v, v_zombie_leader);
	xread(v.out, &fd, sizeof(fd));
	for (int i = 0; i < 2000 && task_state(v.pid, v.pid) != 'Z'; i++)
		msleep(1);
	CHECK(task_state(v.pid, v.pid) == 'Z', "leader not a zombie");
	t = stop(v.pid);
	ref.fd = fd;
	h = holder(v.pid, &ref, 1);
	r = rv_cut_holder(&h, t);
	CHECK(r == 0 && ref.state == REVOKE_STATE_CUT, "cut = %d, error %d", r, ref.error);
	release(t);
	xwrite(v.in, "x", 1);
	xread(v.out, rep, sizeof(rep));
	CHECK(rep[0] == -1 && rep[1] == EBADF, "read on the cut fd gave %d (%s)", rep[0],
	      strerror(rep[1]));
}

static void check_self_cut(int flags)
{
	struct revoke_ref refs[2] = {{.type = REVOKE_REF_FD, .fd_flags = flags},
				     {.type = REVOKE_REF_MAP, .prot = PROT_READ}};
	struct rv_holder h;
	char *m, buf[4], val;
	int fd, r;

	fd = make_tmpfile(8192, 's');
	CHECK(fcntl(fd, F_SETFD, flags) == 0, "fcntl");
	m = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED, "mmap: %m");
	refs[0].fd = fd;
	refs[1].start = (uint64_t)m;
	refs[1].end = refs[1].start + 8192;
	h = holder(getpid(), refs, 2);
	h.self = true;
	r = rv_cut_holder(&h, NULL);
	CHECK(r == 0 && refs[0].state == REVOKE_STATE_CUT && refs[1].state == REVOKE_STATE_CUT,
	      "cut = %d errors %d %d", r, refs[0].error, refs[1].error);
	CHECK(read(fd, buf, 1) < 0 && errno == EBADF, "read on the cut fd");
	CHECK(fcntl(fd, F_GETFD) == flags, "F_GETFD %d", fcntl(fd, F_GETFD));
	CHECK(probe(m, &val) == SIGBUS, "cut mapping did not raise SIGBUS");
	CHECK(close(fd) == 0, "close: %m");
}

static void test_self_cut(void)
{
	check_self_cut(FD_CLOEXEC);
}

static void test_self_cut_seccomp_errno(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);

	CHECK(ctx && seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(dup3), 0) == 0 &&
		  seccomp_load(ctx) == 0,
	      "seccomp");
	CHECK(dup3(0, 100, 0) < 0 && errno == EPERM, "filter not active");
	check_self_cut(0);
}

/* ---- batches ----------------------------------------------------------------- */

#define NBATCH 50

/* Whether the victims' tracers are NTRACERS distinct threads of ours: a
 * tracee's owner is the thread that seized it (TracerPid names the thread). */
static void check_tracers(const struct victim *v, int n, int ntracers)
{
	pid_t ours[128], seen[NBATCH];
	int nours = proc_tasks(getpid(), ours, 128), nseen = 0;

	for (int i = 0; i < n; i++) {
		pid_t tp = tracer_of(v[i].pid);
		bool known = false, mine = false;

		for (int k = 0; k < nseen; k++)
			known |= seen[k] == tp;
		for (int k = 0; k < nours; k++)
			mine |= ours[k] == tp;
		CHECK(mine, "victim %d traced by %d, not a thread of ours", i, (int)tp);
		if (!known)
			seen[nseen++] = tp;
	}
	CHECK(nseen == ntracers, "%d tracer threads, want %d", nseen, ntracers);
}

/* Fifty victims (descriptors, mappings, some SIGSTOPped, one killed after
 * the stop) and the caller itself cut together, each exactly as alone;
 * with NTRACERS tracer threads (REVOKE_TRACERS), each victim stopped, cut
 * and released by its own. */
static void batch_cut(int ntracers)
{
	struct victim v[NBATCH];
	struct rv_stop_req q[NBATCH];
	struct revoke_ref refs[NBATCH + 1][2];
	struct rv_holder h[NBATCH + 1], *hp[NBATCH + 1];
	struct rv_tracee *ts[NBATCH];
	int rets[NBATCH + 1], status, r, self_fd;
	const int killed = 7;
	siginfo_t si;
	char buf[4];

	v_fd = make_tmpfile(8192, 'm');
	v_fd_b = fcntl(v_fd, F_DUPFD, 20);
	CHECK(v_fd_b >= 0, "dup: %m");
	memset(refs, 0, sizeof(refs));
	for (int i = 0; i < NBATCH; i++) {
		if (i % 10 == 4) {
			char *m1, *m2;

			victim_start_pipes(&v[i], v_maps);
			xread(v[i].out, &m1, sizeof(m1));
			xread(v[i].out, &m2, sizeof(m2));
			CHECK(m1 != MAP_FAILED && m2 != MAP_FAILED, "victim mmap failed");
			refs[i][0] = (struct revoke_ref){.type = REVOKE_REF_MAP,
							 .prot = PROT_READ,
							 .map_flags = MAP_SHARED,
							 .start = (uint64_t)m1,
							 .end = (uint64_t)m1 + 8192};
			h[i] = holder(v[i].pid, refs[i], 1);
		} else {
			victim_start_pipes(&v[i], v_fd_checks);
			refs[i][0] =
			    (struct revoke_ref){.type = REVOKE_REF_FD, .fd_flags = FD_CLOEXEC};
			refs[i][1] = (struct revoke_ref){.type = REVOKE_REF_FD};
			xread(v[i].out, &refs[i][0].fd, sizeof(int));
			xread(v[i].out, &refs[i][1].fd, sizeof(int));
			h[i] = holder(v[i].pid, refs[i], 2);
		}
	}
	for (int i = 0; i < NBATCH; i++) {
		wait_in_syscall(v[i].pid, v[i].pid, SYS_read);
		if (i % 10 == 3) {
			CHECK(kill(v[i].pid, SIGSTOP) == 0, "kill: %m");
			CHECK(waitpid(v[i].pid, &status, WUNTRACED) == v[i].pid &&
				  WIFSTOPPED(status),
			      "waitpid");
		}
		q[i] = (struct rv_stop_req){.pid = v[i].pid, .pidfd = -1};
	}
	if (ntracers > 1) {
		char env[16];
		size_t got;

		snprintf(env, sizeof(env), "%d", ntracers);
		setenv("REVOKE_TRACERS", env, 1);
		got = rv_tracers_begin(NBATCH);
		CHECK(got == (size_t)ntracers, "rv_tracers_begin = %zu", got);
	}
	r = rv_tracees_stop(q, NBATCH, after_ms(5000));
	CHECK(r == 0, "rv_tracees_stop = %d", r);
	check_tracers(v, NBATCH, ntracers);
	for (int i = 0; i < NBATCH; i++) {
		CHECK(q[i].error == 0 && q[i].tracee, "victim %d: error %d (%s)", i, q[i].error,
		      q[i].reason);
		h[i].tracee = ts[i] = q[i].tracee;
		hp[i] = &h[i];
	}
	/* The caller's own descriptor, cut directly. */
	self_fd = fcntl(v_fd, F_DUPFD_CLOEXEC, 3);
	CHECK(self_fd >= 0, "dup: %m");
	refs[NBATCH][0] =
	    (struct revoke_ref){.type = REVOKE_REF_FD, .fd = self_fd, .fd_flags = FD_CLOEXEC};
	h[NBATCH] = holder(getpid(), refs[NBATCH], 1);
	h[NBATCH].self = true;
	hp[NBATCH] = &h[NBATCH];
	/* Killed after its stop: dead by the time of the cut. */
	CHECK(kill(v[killed].pid, SIGKILL) == 0, "kill: %m");
	CHECK(waitid(P_PID, v[killed].pid, &si, WEXITED | WNOWAIT) == 0, "waitid: %m");

	r = rv_cut_holders(hp, NBATCH + 1, 0, NULL, rets);
	CHECK(r == 0, "rv_cut_holders = %d", r);
	for (int i = 0; i <= NBATCH; i++) {
		if (i == killed) {
			CHECK(rets[i] == -ESRCH, "killed victim: cut = %d", rets[i]);
			CHECK(refs[i][0].state == REVOKE_STATE_FAILED && refs[i][0].error == ESRCH,
			      "killed victim: state %d error %d", refs[i][0].state,
			      refs[i][0].error);
			continue;
		}
		CHECK(rets[i] == 0, "holder %d: cut = %d (errors %d %d)", i, rets[i],
		      refs[i][0].error, refs[i][1].error);
		for (size_t j = 0; j < h[i].pub.nrefs; j++)
			CHECK(refs[i][j].state == REVOKE_STATE_CUT, "holder %d ref %zu: state %d",
			      i, j, refs[i][j].state);
	}
	rv_tracees_release(ts, NBATCH);
	rv_tracers_end();
	CHECK(read(self_fd, buf, 1) < 0 && errno == EBADF, "own fd still reads");

	for (int i = 0; i < NBATCH; i++) {
		if (i == killed)
			continue;
		CHECK(tracer_of(v[i].pid) == 0, "victim %d left traced", i);
		if (i % 10 == 3) {
			CHECK(task_state(v[i].pid, v[i].pid) == 'T', "victim %d state %c, want T",
			      i, task_state(v[i].pid, v[i].pid));
			CHECK(kill(v[i].pid, SIGCONT) == 0, "kill: %m");
		}
		xwrite(v[i].in, "x", 1);
		if (i % 10 == 4) {
			int rep[4];

			xread(v[i].out, rep, sizeof(rep));
			CHECK(rep[0] == SIGBUS && rep[3] == SIGBUS,
			      "victim %d: cut mapping raised %d/%d", i, rep[0], rep[3]);
			CHECK(rep[1] == 0 && rep[2] == 'm', "victim %d: other mapping %d %d", i,
			      rep[1], rep[2]);
		} else {
			struct fd_checks c;

			xread(v[i].out, &c, sizeof(c));
			CHECK(c.rd == EBADF && c.wr == EBADF && c.ioc == EBADF && c.mm == EBADF,
			      "victim %d: read %d write %d ioctl %d mmap %d", i, c.rd, c.wr, c.ioc,
			      c.mm);
			CHECK(c.getfd_a == FD_CLOEXEC && c.getfd_b == 0, "victim %d: F_GETFD %d %d",
			      i, c.getfd_a, c.getfd_b);
			CHECK(strcmp(c.link, DEAD_LINK) == 0, "victim %d: dead fd is '%s'", i,
			      c.link);
		}
	}
}

static const struct batch_row {
	struct test_row t;
	int ntracers;
} batch_cuts[] = {
    {{"batch_cut", 30}, 1},
    {{"batch_cut_2_tracers", 30}, 2},
    {{"batch_cut_3_tracers", 30}, 3},
};

static void batch_cut_case(const void *row)
{
	batch_cut(((const struct batch_row *)row)->ntracers);
}

TEST_MAIN("unit-cut", {"seccomp_victim_survives", test_seccomp_victim_survives, 10},
	  {"seccomp_needs_cap_sys_admin", test_seccomp_needs_cap_sys_admin, 10},
	  TEST_TABLE(cut_fds, cut_fds_case),
	  {"no_proc_changes_nothing", test_no_proc_changes_nothing, 10},
	  {"cut_map", test_cut_map, 10}, {"threads", test_threads, 10},
	  {"zombie_leader_cut", test_zombie_leader_cut, 10}, {"self_cut", test_self_cut, 10},
	  {"self_cut_seccomp_errno", test_self_cut_seccomp_errno, 10},
	  TEST_TABLE(batch_cuts, batch_cut_case))
