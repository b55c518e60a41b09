/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A holder with two threads blocked in read() on the target (a FIFO) while
 * another thread of it runs the cut, and the revoker dies at each step of
 * the cut (REVOKE_FAULT points, as in test-unit-death.c). The kernel lets a
 * dead tracer's tracees go all at once: the reader must not take up its
 * read() on the old file before the injecting thread's program has replaced
 * the descriptor, or it takes a byte written after the cut (issue 8, seen in
 * the kill trials under load). A byte per reader is written into the FIFO
 * once the holder is free: after a cut they must still be in the FIFO and
 * each read must have failed with EBADF; with the holder untouched each read
 * returns one. Every thread must come back with its registers and mask.
 *
 * Two programs: the real cut (rv_cut_holder), and one that sleeps 300 ms
 * before its dup3 (an injecting thread the scheduler does not run for a
 * while, as under load). Without the siblings' own way home the second
 * fails at every point between the registers and the dup3, on every run.
 */
#include <pthread.h>
#include <sys/stat.h>

#include "unit-ptrace.h"

#define HOLD_FD	    70
#define NREADERS    2
#define STUB_DELAY  300000000l /* ns before the slow program's dup3 */
#define MAIN_BLOCK  SIGUSR2
#define SIB_BLOCK_A SIGUSR1
#define SIB_BLOCK_B (SIGRTMIN + 3)

enum { PROG_CUT, PROG_SLOW, NPROGS };
static const char *const prog_name[] = {"cut", "slow"};

struct shared {
	volatile int stop;	      /* the main thread's loop ends */
	volatile pid_t tid[NREADERS]; /* the readers' */
};

struct report {
	int bad_regs;  /* the main thread: a register changed behind its back */
	int fd_fifo;   /* HOLD_FD still is the FIFO */
	int mask_main; /* its mask is what it set */
	struct {
		long ret; /* read(): the raw result */
		char byte;
		int bad_regs; /* a register changed across its read() */
		int mask;     /* its mask is what it set */
	} r[NREADERS];
};

static struct shared *g_sh;
static char g_fifo[64];
static struct report g_rep;

/* read(FD, BYTE, 1) with values in the callee-saved registers that it must
 * find again, however the call was restarted. */
static long checked_read(int fd, char *byte, int *bad)
{
	register long r12 __asm__("r12") = 0x1212121212121212l;
	register long r13 __asm__("r13") = 0x1313131313131313l;
	register long r14 __asm__("r14") = 0x1414141414141414l;
	register long r15 __asm__("r15") = 0x1515151515151515l;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret), "+r"(r12), "+r"(r13), "+r"(r14), "+r"(r15)
			 : "a"((long)SYS_read), "D"((long)fd), "S"(byte), "d"(1l)
			 : "rcx", "r11", "memory");
	*bad = r12 != 0x1212121212121212l || r13 != 0x1313131313131313l ||
	       r14 != 0x1414141414141414l || r15 != 0x1515151515151515l;
	return ret;
}

/* Spins with values in general and SSE registers until *STOP; 1 if any
 * changed behind its back. */
static int register_loop(volatile int *stop)
{
	int bad = 0;

	__asm__ volatile("movabs $0x1111111111111111, %%r12\n\t"
			 "movabs $0x2222222222222222, %%r13\n\t"
			 "movq %%r12, %%xmm8\n\t"
			 "1:\n\t"
			 "movq %%xmm8, %%rax\n\t"
			 "cmp %%r12, %%rax\n\t"
			 "jne 2f\n\t"
			 "movabs $0x2222222222222222, %%rax\n\t"
			 "cmp %%rax, %%r13\n\t"
			 "jne 2f\n\t"
			 "cmpl $0, (%[stop])\n\t"
			 "je 1b\n\t"
			 "jmp 3f\n\t"
			 "2: movl $1, %[bad]\n\t"
			 "3:\n\t"
			 : [bad] "+m"(bad)
			 : [stop] "r"(stop)
			 : "rax", "r12", "r13", "xmm8", "memory", "cc");
	return bad;
}

static void *reader(void *arg)
{
	int i = (int)(intptr_t)arg;
	sigset_t mine, now;

	sigemptyset(&mine);
	sigaddset(&mine, SIB_BLOCK_A);
	sigaddset(&mine, SIB_BLOCK_B);
	pthread_sigmask(SIG_SETMASK, &mine, NULL);
	g_sh->tid[i] = (pid_t)syscall(SYS_gettid);
	g_rep.r[i].ret = checked_read(HOLD_FD, &g_rep.r[i].byte, &g_rep.r[i].bad_regs);
	pthread_sigmask(SIG_SETMASK, NULL, &now);
	g_rep.r[i].mask = sigismember(&now, SIB_BLOCK_A) && sigismember(&now, SIB_BLOCK_B) &&
			  !sigismember(&now, MAIN_BLOCK) && !sigismember(&now, SIGBUS);
	return NULL;
}

static void v_holder(int in, int out)
{
	sigset_t mine, now;
	pthread_t th[NREADERS];
	char link[64], target[256];
	ssize_t n;
	int fd = open(g_fifo, O_RDWR | O_CLOEXEC); /* a writer too: read() waits */

	(void)in;
	if (fd < 0 || dup2(fd, HOLD_FD) != HOLD_FD)
		_exit(3);
	close(fd);
	sigemptyset(&mine);
	sigaddset(&mine, MAIN_BLOCK);
	sigprocmask(SIG_SETMASK, &mine, NULL);
	for (int i = 0; i < NREADERS; i++)
		if (pthread_create(&th[i], NULL, reader, (void *)(intptr_t)i) != 0)
			_exit(3);
	xwrite(out, "r", 1);
	g_rep.bad_regs = register_loop(&g_sh->stop);
	for (int i = 0; i < NREADERS; i++)
		pthread_join(th[i], NULL);
	snprintf(link, sizeof(link), "/proc/self/fd/%d", HOLD_FD);
	n = readlink(link, target, sizeof(target) - 1);
	target[n > 0 ? n : 0] = '\0';
	g_rep.fd_fifo = strcmp(target, g_fifo) == 0;
	sigprocmask(SIG_SETMASK, NULL, &now);
	g_rep.mask_main = sigismember(&now, MAIN_BLOCK) && !sigismember(&now, SIB_BLOCK_A) &&
			  !sigismember(&now, SIB_BLOCK_B);
	xwrite(out, &g_rep, sizeof(g_rep));
}

/* dup3 of an O_PATH /dev/null over HOLD_FD, after a sleep. */
static struct rv_prog *slow_prog(void)
{
	const struct timespec ts = {0, STUB_DELAY};
	struct rv_prog *p = rv_prog_new();
	long a[6] = {0};
	int off, op, d;

	if (!p)
		_exit(12);
	off = rv_prog_data(p, &ts, sizeof(ts));
	a[0] = off;
	op = rv_prog_add(p, RV_OP_SYSCALL, SYS_nanosleep, a, 0, -1, -1);
	rv_prog_arg_is_data(p, op, 0);
	off = rv_prog_data(p, "/dev/null", sizeof("/dev/null"));
	a[0] = AT_FDCWD;
	a[1] = off;
	a[2] = O_PATH | O_CLOEXEC;
	d = rv_prog_add(p, RV_OP_SYSCALL, SYS_openat, a, RV_OPF_REQUIRED, -1, -1);
	rv_prog_arg_is_data(p, d, 1);
	a[0] = 0;
	a[1] = HOLD_FD;
	a[2] = 0;
	a[3] = F_DUPFD;
	rv_prog_add(p, RV_OP_DUP_OVER, 0, a, RV_OPF_REQUIRED, d, 0);
	if (rv_prog_add(p, RV_OP_SYSCALL, SYS_close, NULL, RV_OPF_CLEANUP | RV_OPF_IF_REF_OK, d,
			0) < 0)
		_exit(12);
	return p;
}

/* The revoker: stops the holder and cuts HOLD_FD, dying at POINT. */
static void tracer(pid_t pid, int prog, const char *point)
{
	struct revoke_ref ref = {.type = REVOKE_REF_FD, .fd = HOLD_FD};
	struct rv_tracee *t = NULL;
	struct rv_holder h;
	char reason[128];

	if (point)
		setenv("REVOKE_FAULT", point, 1);
	if (rv_tracee_stop(pid, -1, after_ms(5000), &t, reason) < 0)
		_exit(10);
	if (prog == PROG_SLOW) {
		if (rv_tracee_run(t, slow_prog()) < 0)
			_exit(11);
	} else {
		h = holder(pid, &ref, 1);
		if (rv_cut_holder(&h, t) < 0)
			_exit(11);
	}
	rv_tracee_release(t);
	_exit(0);
}

static bool traced_or_stopped(pid_t pid, pid_t tid)
{
	char s = task_state(pid, tid);

	return tracer_of(pid) != 0 || s == 't' || s == 'T';
}

static bool any_traced_or_stopped(pid_t pid)
{
	if (traced_or_stopped(pid, pid))
		return true;
	for (int i = 0; i < NREADERS; i++)
		if (traced_or_stopped(pid, g_sh->tid[i]))
			return true;
	return false;
}

static void one(int prog, const char *point, bool want_cut)
{
	const char *pt = point ? point : "alive";
	const char *pg = prog_name[prog];
	char bytes[NREADERS + 1];
	struct report rep;
	struct victim v;
	uint64_t deadline;
	ssize_t n;
	pid_t tr;
	int status, fd;
	char c;

	snprintf(g_fifo, sizeof(g_fifo), "/tmp/test-unit-sibling-%d", getpid());
	unlink(g_fifo);
	CHECK(mkfifo(g_fifo, 0600) == 0, "mkfifo: %m");
	fd = open(g_fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	CHECK(fd >= 0, "open fifo: %m");
	memset(g_sh, 0, sizeof(*g_sh));
	victim_start_pipes(&v, v_holder);
	xread(v.out, &c, 1);
	for (int i = 0; i < NREADERS; i++) {
		deadline = after_ms(5000);
		while (!g_sh->tid[i] && rv_now_ns() < deadline)
			msleep(1);
		CHECK(g_sh->tid[i], "reader %d never started", i);
		wait_in_syscall(v.pid, g_sh->tid[i], SYS_read);
	}

	tr = test_fork();
	CHECK(tr >= 0, "fork: %m");
	if (tr == 0)
		tracer(v.pid, prog, point);
	CHECK(waitpid(tr, &status, 0) == tr, "wait: %m");
	if (point)
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		      "%s/%s: the revoker was not killed at its fault point (status 0x%x)", pg, pt,
		      status);
	else
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the revoker failed (0x%x)",
		      status);

	/* The kernel detaches a dead tracer's tracees. */
	deadline = after_ms(2000);
	while (any_traced_or_stopped(v.pid) && rv_now_ns() < deadline)
		msleep(1);
	CHECK(!any_traced_or_stopped(v.pid), "%s/%s: still traced or stopped (tracer %d)", pg, pt,
	      tracer_of(v.pid));

	/* Data written after the cut: never the holder's. */
	memset(bytes, 'x', NREADERS);
	CHECK(write(fd, bytes, NREADERS) == NREADERS, "write fifo: %m");
	g_sh->stop = 1;
	xread(v.out, &rep, sizeof(rep));
	CHECK(waitpid(v.pid, &status, 0) == v.pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "%s/%s: the holder did not exit cleanly (0x%x)", pg, pt, status);
	memset(bytes, 0, sizeof(bytes));
	n = read(fd, bytes, sizeof(bytes));
	close(fd);
	unlink(g_fifo);

	CHECK(!rep.bad_regs, "%s/%s: the main thread's registers changed", pg, pt);
	CHECK(rep.mask_main, "%s/%s: the main thread's signal mask changed", pg, pt);
	for (int i = 0; i < NREADERS; i++) {
		CHECK(!rep.r[i].bad_regs, "%s/%s: reader %d: registers changed", pg, pt, i);
		CHECK(rep.r[i].mask, "%s/%s: reader %d: signal mask changed", pg, pt, i);
		if (want_cut)
			CHECK(rep.r[i].ret == -EBADF,
			      "%s/%s: reader %d: read() returned %ld ('%c'), expected EBADF", pg,
			      pt, i, rep.r[i].ret, rep.r[i].ret == 1 ? rep.r[i].byte : '?');
		else
			CHECK(rep.r[i].ret == 1 && rep.r[i].byte == 'x',
			      "%s/%s: untouched holder's reader %d: read() returned %ld, expected "
			      "'x'",
			      pg, pt, i, rep.r[i].ret);
	}
	if (want_cut) {
		CHECK(n == NREADERS,
		      "%s/%s: %zd of the %d bytes written after the cut are in the FIFO", pg, pt,
		      n < 0 ? 0 : n, NREADERS);
		CHECK(!rep.fd_fifo, "%s/%s: descriptor not cut", pg, pt);
	} else {
		CHECK(n < 0 && errno == EAGAIN, "%s/%s: bytes left in the FIFO", pg, pt);
		CHECK(rep.fd_fifo, "%s/%s: descriptor cut", pg, pt);
	}
}

static void run_point(const char *point, bool want_cut)
{
	g_sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(g_sh != MAP_FAILED, "mmap: %m");
	for (int p = 0; p < NPROGS; p++)
		one(p, point, want_cut);
}

/* The points in the order the cut passes them; at siblings-entered the
 * reader waits in the stub for a program that never runs: it goes home after
 * its bounded wait and reads from the file it still has. */
static const struct point_row {
	struct test_row t;
	const char *point; /* the fault point the revoker dies at (NULL: it lives) */
	bool want_cut;
} points[] = {
    {{"tracer_alive", 60}, NULL, true},
    {{"killed_prepared", 60}, "prepared", false},
    {{"killed_siblings_entered", 60}, "siblings-entered", false},
    {{"killed_entered", 60}, "entered", true},
    {{"killed_running", 60}, "running", true},
    {{"killed_stopped", 60}, "stopped", true},
    {{"killed_cure_mask", 60}, "cure-mask", true},
    {{"killed_cured", 60}, "cured", true},
    {{"killed_sibling_cure_mask", 60}, "sibling-cure-mask", true},
};

static void point_case(const void *row)
{
	const struct point_row *p = row;

	run_point(p->point, p->want_cut);
}

TEST_MAIN("unit-sibling", TEST_TABLE(points, point_case))
