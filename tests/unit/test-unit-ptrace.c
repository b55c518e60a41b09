/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of stopping processes and running syscalls in them (lib/ptrace.c,
 * lib/inject.c, lib/arch): what the victim sees afterwards must be exactly
 * what it would have seen without us.
 */
#include <math.h>
#include <pthread.h>

#include "unit-ptrace.h"

/* ---- cases ------------------------------------------------------------------ */

static void test_remote_getpid(void)
{
	struct victim v;
	struct rv_tracee *t = NULL;
	char reason[128];
	int pidfd, val, r;

	victim_start_pipes(&v, v_echo);
	wait_in_syscall(v.pid, v.pid, SYS_read);
	pidfd = (int)syscall(SYS_pidfd_open, v.pid, 0);
	CHECK(pidfd >= 0, "pidfd_open: %m");
	r = rv_tracee_stop(v.pid, pidfd, after_ms(5000), &t, reason);
	CHECK(r == 0, "stop = %d (%s)", r, reason);
	CHECK(task_state(v.pid, v.pid) == 't', "state %c, want t", task_state(v.pid, v.pid));
	CHECK(remote(t, SYS_getpid, 0, 0, 0) == v.pid, "remote getpid");
	CHECK(remote(t, SYS_gettid, 0, 0, 0) == v.pid, "remote gettid");
	CHECK(remote(t, SYS_close, 9999, 0, 0) == -EBADF, "remote close(9999) must give -EBADF");
	release(t);
	CHECK(tracer_of(v.pid) == 0, "still traced after release");
	xwrite(v.in, "p", 1);
	xread(v.out, &val, sizeof(val));
	CHECK(val == v.pid, "victim answers %d", val);
}

/* Busy loop holding values in general, SSE and x87 registers; 1 if any
 * changed behind its back. Stops when *flag becomes non-zero. */
static int register_loop(volatile int *flag)
{
	int bad = 0;
	double pi = 0;

	__asm__ volatile("movabs $0x1111111111111111, %%r12\n\t"
			 "movabs $0x2222222222222222, %%r13\n\t"
			 "movq %%r12, %%xmm8\n\t"
			 "movq %%r13, %%xmm0\n\t"
			 "punpcklqdq %%xmm0, %%xmm8\n\t" /* xmm8 = {r12, r13} */
			 "movq %%r13, %%xmm9\n\t"
			 "movq %%r12, %%xmm0\n\t"
			 "punpcklqdq %%xmm0, %%xmm9\n\t" /* xmm9 = {r13, r12} */
			 "fldpi\n\t"
			 "1:\n\t"
			 "movq %%xmm8, %%rax\n\t"
			 "cmp %%r12, %%rax\n\t"
			 "jne 2f\n\t"
			 "pshufd $0x4e, %%xmm8, %%xmm0\n\t"
			 "movq %%xmm0, %%rax\n\t"
			 "cmp %%r13, %%rax\n\t"
			 "jne 2f\n\t"
			 "movq %%xmm9, %%rax\n\t"
			 "cmp %%r13, %%rax\n\t"
			 "jne 2f\n\t"
			 "pshufd $0x4e, %%xmm9, %%xmm0\n\t"
			 "movq %%xmm0, %%rax\n\t"
			 "cmp %%r12, %%rax\n\t"
			 "jne 2f\n\t"
			 "movabs $0x1111111111111111, %%rax\n\t"
			 "cmp %%rax, %%r12\n\t"
			 "jne 2f\n\t"
			 "cmpl $0, (%[flag])\n\t"
			 "je 1b\n\t"
			 "jmp 3f\n\t"
			 "2: movl $1, %[bad]\n\t"
			 "3: fstpl %[pi]\n\t"
			 : [bad] "+m"(bad), [pi] "=m"(pi)
			 : [flag] "r"(flag)
			 : "rax", "r12", "r13", "xmm0", "xmm8", "xmm9", "memory", "cc");
	return bad || pi != M_PI;
}

static volatile int *shared_flag;

static void v_registers(int in, int out)
{
	int bad = register_loop(shared_flag);

	(void)in;
	xwrite(out, &bad, sizeof(bad));
}

static void test_registers_intact(void)
{
	struct victim v;
	int bad = -1;

	shared_flag = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shared_flag != MAP_FAILED, "mmap: %m");
	victim_start_pipes(&v, v_registers);
	msleep(50);
	for (int i = 0; i < 30; i++) {
		struct rv_tracee *t = stop(v.pid);

		CHECK(remote(t, SYS_getpid, 0, 0, 0) == v.pid, "remote getpid");
		CHECK(remote(t, SYS_getppid, 0, 0, 0) == getpid(), "remote getppid");
		release(t);
		msleep(2);
	}
	*shared_flag = 1;
	xread(v.out, &bad, sizeof(bad));
	CHECK(bad == 0, "the victim's registers changed");
}

/* Without a vDSO the stub goes into the tail of an executable segment of
 * the program: the program still runs, and every executable byte of the
 * victim is as it was after the release. */
static void v_registers_no_vdso(int in, int out)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int bad = 2;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long a, b;
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &a, &b) == 2 &&
		    munmap((void *)a, b - a) == 0)
			bad = 0;
	}
	if (f)
		fclose(f);
	xwrite(out, &bad, sizeof(bad));
	if (bad == 0)
		v_registers(in, out);
}

/* Every r-x mapping of PID, concatenated (at most SIZE bytes). */
static size_t read_text_maps(pid_t pid, uint8_t *buf, size_t size)
{
	char path[64], line[512];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	CHECK(f, "open maps: %m");
	while (fgets(line, sizeof(line), f)) {
		unsigned long a, b;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s", &a, &b, perms) != 3 || perms[2] != 'x')
			continue;
		for (unsigned long p = a; p < b && n + 4096 <= size; p += 4096) {
			struct iovec l = {buf + n, 4096}, r = {(void *)p, 4096};

			if (process_vm_readv(pid, &l, 1, &r, 1, 0) == 4096)
				n += 4096;
		}
	}
	fclose(f);
	return n;
}

static void test_no_vdso(void)
{
	static uint8_t before[32 << 20], after[32 << 20];
	struct victim v;
	int bad = -1;

	shared_flag = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shared_flag != MAP_FAILED, "mmap: %m");
	victim_start_pipes(&v, v_registers_no_vdso);
	xread(v.out, &bad, sizeof(bad));
	CHECK(bad == 0, "victim could not unmap its vDSO");
	msleep(20);
	for (int i = 0; i < 10; i++) {
		struct rv_tracee *t = stop(v.pid);
		size_t nb = read_text_maps(v.pid, before, sizeof(before)), na;

		CHECK(nb > 0, "no text read");
		CHECK(remote(t, SYS_getpid, 0, 0, 0) == v.pid, "remote getpid");
		release(t);
		t = stop(v.pid);
		na = read_text_maps(v.pid, after, sizeof(after));
		release(t);
		CHECK(na == nb && memcmp(before, after, nb) == 0, "the victim's text changed");
	}
	*shared_flag = 1;
	xread(v.out, &bad, sizeof(bad));
	CHECK(bad == 0, "the victim's registers changed");
}

static void test_read_restarts(void)
{
	struct victim v;
	struct rv_regs a, b;
	uint8_t stack_a[1024], stack_b[1024];
	struct {
		long ret;
		int err;
		char data[8];
	} rep;

	victim_start_pipes(&v, v_read_once);
	wait_in_syscall(v.pid, v.pid, SYS_read);
	for (int round = 0; round < 2; round++) {
		struct rv_tracee *t = stop(v.pid);
		struct rv_regs *r = round ? &b : &a;
		uint8_t *s = round ? stack_b : stack_a;
		struct iovec l = {s, 1024}, rm;

		CHECK(rv_arch_get_regs(v.pid, r) == 0, "get regs");
		rm = (struct iovec){(void *)(rv_arch_sp(r) - 1024), 1024};
		CHECK(process_vm_readv(v.pid, &l, 1, &rm, 1, 0) == 1024, "process_vm_readv: %m");
		CHECK(remote(t, SYS_getpid, 0, 0, 0) == v.pid, "remote getpid");
		release(t);
		wait_in_syscall(v.pid, v.pid, SYS_read);
	}
	CHECK(memcmp(&a, &b, sizeof(a)) == 0, "registers differ after release");
	CHECK(memcmp(stack_a, stack_b, sizeof(stack_a)) == 0,
	      "stack below sp differs after release");
	xwrite(v.in, "hello", 5);
	xread(v.out, &rep, sizeof(rep));
	CHECK(rep.ret == 5 && memcmp(rep.data, "hello", 5) == 0, "read gave %ld (%s)", rep.ret,
	      strerror(rep.err));
}

static void v_nanosleep(int in, int out)
{
	struct timespec req = {1, 500000000}, rem;
	struct {
		long ret;
		int err;
		uint64_t ns;
	} rep;
	uint64_t t0 = rv_now_ns();

	(void)in;
	rep.ret = syscall(SYS_nanosleep, &req, &rem);
	rep.err = rep.ret < 0 ? errno : 0;
	rep.ns = rv_now_ns() - t0;
	xwrite(out, &rep, sizeof(rep));
}

static void test_nanosleep_full(void)
{
	struct victim v;
	struct {
		long ret;
		int err;
		uint64_t ns;
	} rep;

	victim_start_pipes(&v, v_nanosleep);
	wait_in_syscall(v.pid, v.pid, SYS_nanosleep);
	for (int i = 0; i < 3; i++) {
		struct rv_tracee *t = stop(v.pid);
		CHECK(remote(t, SYS_getpid, 0, 0, 0) == v.pid, "remote getpid");
		release(t);
		msleep(100);
	}
	xread(v.out, &rep, sizeof(rep));
	CHECK(rep.ret == 0, "nanosleep returned %ld errno %d", rep.ret, rep.err);
	CHECK(rep.ns >= 1500000000ull, "slept only %llu ns", (unsigned long long)rep.ns);
}

static volatile sig_atomic_t handled;
static void on_signal(int sig)
{
	(void)sig;
	handled++;
}

/* pause() returns -ERESTARTNOHAND: with a handled signal pending at release
 * it must give EINTR (restarting by hand would lose it). */
static void v_pause(int in, int out)
{
	struct {
		long ret;
		int err, handled;
	} rep;

	(void)in;
	signal(SIGUSR1, on_signal);
	rep.ret = pause();
	rep.err = errno;
	rep.handled = handled;
	xwrite(out, &rep, sizeof(rep));
}

static void test_pause_eintr(void)
{
	struct victim v;
	struct rv_tracee *t;
	struct {
		long ret;
		int err, handled;
	} rep;

	victim_start_pipes(&v, v_pause);
	wait_in_syscall(v.pid, v.pid, SYS_pause);
	t = stop(v.pid);
	CHECK(kill(v.pid, SIGUSR1) == 0, "kill: %m");
	CHECK(remote(t, SYS_getpid, 0, 0, 0) == v.pid, "remote getpid");
	release(t);
	xread(v.out, &rep, sizeof(rep));
	CHECK(rep.ret == -1 && rep.err == EINTR && rep.handled == 1,
	      "pause gave %ld errno %d, handler ran %d times", rep.ret, rep.err, rep.handled);
}

static void test_sigstopped_stays_stopped(void)
{
	struct victim v;
	struct rv_tracee *t;
	int status, val;
	char st = '?';

	victim_start_pipes(&v, v_echo);
	CHECK(kill(v.pid, SIGSTOP) == 0, "kill: %m");
	CHECK(waitpid(v.pid, &status, WUNTRACED) == v.pid && WIFSTOPPED(status), "waitpid");
	t = stop(v.pid);
	CHECK(remote(t, SYS_getpid, 0, 0, 0) == v.pid, "remote getpid");
	release(t);
	/* Stopped as soon as release returns, and staying so. */
	for (int i = 0; i < 5; i++) {
		st = task_state(v.pid, v.pid);
		CHECK(st == 'T', "state %c after release, want T", st);
		msleep(40);
	}
	CHECK(st == 'T', "state %c after release, want T", st);
	CHECK(kill(v.pid, SIGCONT) == 0, "kill: %m");
	xwrite(v.in, "p", 1);
	xread(v.out, &val, sizeof(val));
	CHECK(val == v.pid, "victim answers %d", val);
}

/* A SIGSTOP sent while we hold the victim is not lost: it is stopped after. */
static void test_sigstop_during_injection(void)
{
	struct victim v;
	struct rv_tracee *t;
	int status, val;
	char st = '?';

	victim_start_pipes(&v, v_echo);
	wait_in_syscall(v.pid, v.pid, SYS_read);
	t = stop(v.pid);
	CHECK(remote(t, SYS_getpid, 0, 0, 0) == v.pid, "remote getpid");
	CHECK(kill(v.pid, SIGSTOP) == 0, "kill: %m");
	for (int i = 0; i < 3; i++)
		CHECK(remote(t, SYS_getpid, 0, 0, 0) == v.pid, "remote getpid");
	release(t);
	st = task_state(v.pid, v.pid);
	CHECK(st == 'T', "state %c after release, want T", st);
	CHECK(waitpid(v.pid, &status, WUNTRACED) == v.pid && WIFSTOPPED(status) &&
		  WSTOPSIG(status) == SIGSTOP,
	      "parent not told of the stop");
	CHECK(kill(v.pid, SIGCONT) == 0, "kill: %m");
	xwrite(v.in, "p", 1);
	xread(v.out, &val, sizeof(val));
	CHECK(val == v.pid, "victim answers %d", val);
}

static void v_count_rt(int in, int out)
{
	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
	char c;

	sigaction(SIGRTMIN, &sa, NULL);
	xwrite(out, "r", 1);
	while (read(in, &c, 1) == 1) {
		int n = handled;
		xwrite(out, &n, sizeof(n));
	}
}

static void test_signals_delivered(void)
{
	struct victim v;
	struct rv_tracee *t;
	char c;
	int n = -1;

	victim_start_pipes(&v, v_count_rt);
	xread(v.out, &c, 1);
	wait_in_syscall(v.pid, v.pid, SYS_read);
	t = stop(v.pid);
	for (int i = 0; i < 5; i++)
		CHECK(sigqueue(v.pid, SIGRTMIN, (union sigval){i}) == 0, "sigqueue: %m");
	CHECK(remote(t, SYS_getpid, 0, 0, 0) == v.pid, "remote getpid");
	for (int i = 0; i < 5; i++)
		CHECK(sigqueue(v.pid, SIGRTMIN, (union sigval){i}) == 0, "sigqueue: %m");
	CHECK(remote(t, SYS_getpid, 0, 0, 0) == v.pid, "remote getpid");
	release(t);
	xwrite(v.in, "c", 1);
	xread(v.out, &n, sizeof(n));
	CHECK(n == 10, "handler ran %d times, want 10", n);
}

/* Signals on their way in as we stop the victim (signal-delivery stops
 * before the interrupt stop) are handed back, none lost. */
static void test_signals_racing_stop(void)
{
	struct victim v;
	char c;
	int n = -1;

	victim_start_pipes(&v, v_count_rt);
	xread(v.out, &c, 1);
	for (int round = 0; round < 20; round++) {
		struct rv_tracee *t;

		for (int i = 0; i < 3; i++)
			CHECK(sigqueue(v.pid, SIGRTMIN, (union sigval){i}) == 0, "sigqueue: %m");
		t = stop(v.pid);
		CHECK(remote(t, SYS_getpid, 0, 0, 0) == v.pid, "remote getpid");
		release(t);
	}
	xwrite(v.in, "c", 1);
	xread(v.out, &n, sizeof(n));
	CHECK(n == 60, "handler ran %d times, want 60", n);
}

static void test_already_traced(void)
{
	struct victim v;
	struct rv_tracee *t = NULL;
	char reason[128], want[64], c;
	int p[2], r;
	pid_t tracer;

	victim_start_pipes(&v, v_echo);
	CHECK(pipe2(p, O_CLOEXEC) == 0, "pipe: %m");
	tracer = test_fork();
	CHECK(tracer >= 0, "fork: %m");
	if (tracer == 0) {
		if (ptrace(PTRACE_SEIZE, v.pid, NULL, NULL) < 0)
			_exit(1);
		xwrite(p[1], "s", 1);
		pause();
		_exit(0);
	}
	close(p[1]);
	xread(p[0], &c, 1);
	r = rv_tracee_stop(v.pid, -1, after_ms(2000), &t, reason);
	snprintf(want, sizeof(want), "already traced by pid %d", tracer);
	CHECK(r == -EPERM && !t, "stop = %d, want -EPERM", r);
	CHECK(strcmp(reason, want) == 0, "reason '%s'", reason);
}

/* Stopping a process that traces us would hang both. */
static void test_tracer_of_caller_refused(void)
{
	struct rv_tracee *t = NULL;
	char reason[128], c;
	int p[2], r;
	pid_t tracer, parent = getpid();

	CHECK(pipe2(p, O_CLOEXEC) == 0, "pipe: %m");
	tracer = test_fork();
	CHECK(tracer >= 0, "fork: %m");
	if (tracer == 0) {
		if (ptrace(PTRACE_SEIZE, parent, NULL, NULL) < 0)
			_exit(1);
		xwrite(p[1], "s", 1);
		pause();
		_exit(0);
	}
	close(p[1]);
	xread(p[0], &c, 1);
	CHECK(tracer_of(getpid()) == tracer, "not traced by the child");
	r = rv_tracee_stop(tracer, -1, after_ms(2000), &t, reason);
	CHECK(r == -EPERM && !t, "stop = %d, want -EPERM", r);
	CHECK(strcmp(reason, "traces the caller or one of its ancestors") == 0, "reason '%s'",
	      reason);
	CHECK(tracer_of(tracer) == 0, "the tracer was left traced");
}

/* A pidfd naming a process that is gone: the pid (alive) is someone else. */
static void test_pidfd_detects_reuse(void)
{
	struct victim v;
	struct rv_tracee *t = NULL;
	char reason[128];
	pid_t gone = test_fork();
	int pidfd, r;

	CHECK(gone >= 0, "fork: %m");
	if (gone == 0)
		_exit(0);
	pidfd = (int)syscall(SYS_pidfd_open, gone, 0);
	CHECK(pidfd >= 0, "pidfd_open: %m");
	CHECK(waitpid(gone, NULL, 0) == gone, "waitpid: %m");
	victim_start_pipes(&v, v_echo);
	r = rv_tracee_stop(v.pid, pidfd, after_ms(2000), &t, reason);
	CHECK(r == -ESRCH && !t, "stop = %d (%s), want -ESRCH", r, reason);
	CHECK(tracer_of(v.pid) == 0, "victim left traced");
}

static pid_t zl_tid;
static int zl_in, zl_out;

static void *zl_thread(void *arg)
{
	(void)arg;
	zl_tid = (pid_t)syscall(SYS_gettid);
	xwrite(zl_out, &zl_tid, sizeof(zl_tid));
	v_echo(zl_in, zl_out);
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

/* A leader that has exited while a thread lives on: stop and inject there. */
static void test_zombie_leader(void)
{
	struct victim v;
	struct rv_tracee *t;
	pid_t tid;
	int val;

	victim_start_pipes(&v, v_zombie_leader);
	xread(v.out, &tid, sizeof(tid));
	for (int i = 0; i < 2000 && task_state(v.pid, v.pid) != 'Z'; i++)
		msleep(1);
	CHECK(task_state(v.pid, v.pid) == 'Z', "leader not a zombie");
	wait_in_syscall(v.pid, tid, SYS_read);
	t = stop(v.pid);
	CHECK(remote(t, SYS_getpid, 0, 0, 0) == v.pid, "remote getpid");
	CHECK(remote(t, SYS_gettid, 0, 0, 0) == tid, "injected in the wrong thread");
	release(t);
	xwrite(v.in, "p", 1);
	xread(v.out, &val, sizeof(val));
	CHECK(val == v.pid, "victim answers %d", val);
}

/* A thread running 32-bit code (far jump to the compat code segment) of a
 * 64-bit process: its stack and files are above 4 GiB, out of the 32-bit
 * stub's reach (32-bit processes are tests/test-revoke-ia32.c's). */
static void v_compat(int in, int out)
{
	uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	struct __attribute__((packed)) {
		uint32_t off;
		uint16_t sel;
	} far;
	int ok = code != MAP_FAILED;

	(void)in;
	xwrite(out, &ok, sizeof(ok));
	if (!ok)
		return;
	code[0] = 0xeb; /* jmp . */
	code[1] = 0xfe;
	far.off = (uint32_t)(uintptr_t)code;
	far.sel = 0x23; /* __USER32_CS */
	/* Where the jump faults, die of it (not in ASan's handler): the case
	 * tells that from a compat task. */
	signal(SIGSEGV, SIG_DFL);
	__asm__ volatile("ljmpl *%0" : : "m"(far));
}

/* Refused when stopped (its stack pointer is above 4 GiB), or, where the
 * CPU shows only its low half, no syscall runs (no 32-bit place for the
 * stub): either way it is left spinning as it was, untraced. */
static void test_compat_refused(void)
{
	struct victim v;
	struct rv_tracee *t = NULL;
	char reason[128];
	int ok = 0, r;

	victim_start_pipes(&v, v_compat);
	xread(v.out, &ok, sizeof(ok));
	CHECK(ok, "victim could not map 32-bit code");
	msleep(50);
	r = rv_tracee_stop(v.pid, -1, after_ms(2000), &t, reason);
	if (r == -ESRCH) {
		int status;

		/* Some virtual machines (this project's PVM guests) have no
		 * 32-bit code segment: no compat task to refuse. */
		if (waitpid(v.pid, &status, 0) == v.pid && WIFSIGNALED(status) &&
		    WTERMSIG(status) == SIGSEGV)
			SKIP("this machine cannot run 32-bit code (a far jump to __USER32_CS "
			     "faults)");
	}
	if (r == 0) {
		long res = 0;
		int q = rv_tracee_syscall(t, SYS_getpid, &res, 0, 0, 0, 0, 0, 0);

		CHECK(q < 0, "a syscall ran in 32-bit code of a 64-bit process: %ld", res);
		rv_tracee_release(t);
	} else {
		CHECK(r == -EOPNOTSUPP && !t, "stop = %d (%s), want -EOPNOTSUPP", r, reason);
		CHECK(strstr(reason, "32-bit"), "reason '%s'", reason);
	}
	CHECK(tracer_of(v.pid) == 0, "victim left traced");
	CHECK(task_state(v.pid, v.pid) == 'R', "victim state %c, want R (spinning)",
	      task_state(v.pid, v.pid));
}

/* Another holder may have used up the time: stopping and injecting, which
 * take microseconds, still get a short grace; waiting for a D-state thread
 * does not. */
static void test_deadline_passed(void)
{
	struct victim v;
	struct rv_tracee *t = NULL;
	char reason[128];
	int r;

	victim_start_pipes(&v, v_echo);
	wait_in_syscall(v.pid, v.pid, SYS_read);
	r = rv_tracee_stop(v.pid, -1, rv_now_ns() - 1, &t, reason);
	CHECK(r == 0, "stop after the deadline = %d (%s)", r, reason);
	CHECK(remote(t, SYS_getpid, 0, 0, 0) == v.pid, "remote getpid");
	release(t);
	CHECK(tracer_of(v.pid) == 0, "victim left traced");
}

static void v_vfork(int in, int out)
{
	pid_t c = test_vfork((const struct test_vf_step[]){VF_READ(in), VF_EXIT(0)});

	xwrite(out, "b", 1);
	waitpid(c, NULL, 0);
	v_echo(in, out);
}

static int vt_pipe[2];

static void *vt_thread(void *arg)
{
	(void)arg;
	test_vfork((const struct test_vf_step[]){VF_READ(vt_pipe[0]), VF_EXIT(0)});
	return NULL;
}

static void v_vfork_thread(int in, int out)
{
	pthread_t th;

	pthread_create(&th, NULL, vt_thread, NULL);
	v_echo(in, out);
}

/* One thread stuck in vfork: the others, stopped already, are let go. */
static void test_vfork_thread_times_out(void)
{
	struct victim v;
	struct rv_tracee *t = NULL;
	char reason[128], path[64];
	pid_t tid = 0;
	int r, val;

	CHECK(pipe2(vt_pipe, O_CLOEXEC) == 0, "pipe: %m");
	victim_start_pipes(&v, v_vfork_thread);
	for (int i = 0; i < 2000 && !tid; i++) {
		pid_t tids[8];
		int n = proc_tasks(v.pid, tids, 8);

		for (int k = 0; k < n; k++)
			if (tids[k] != v.pid && task_state(v.pid, tids[k]) == 'D')
				tid = tids[k];
		if (!tid)
			msleep(1);
	}
	CHECK(tid > 0, "no thread in D state");
	wait_in_syscall(v.pid, v.pid, SYS_read);
	r = rv_tracee_stop(v.pid, -1, after_ms(300), &t, reason);
	CHECK(r == -ETIMEDOUT && !t, "stop = %d (%s), want -ETIMEDOUT", r, reason);
	/* Named with its child (lib/vfork.c). */
	snprintf(path, sizeof(path), "pid %d is a vfork parent waiting for pid ", v.pid);
	CHECK(strncmp(reason, path, strlen(path)) == 0 && atoi(reason + strlen(path)) > 0,
	      "reason '%s'", reason);
	CHECK(tracer_of(v.pid) == 0, "leader left traced");
	xwrite(v.in, "p", 1);
	xread(v.out, &val, sizeof(val));
	CHECK(val == v.pid, "victim answers %d", val);
	xwrite(vt_pipe[1], "x", 1);
}

static void test_vfork_parent_times_out(void)
{
	struct victim v;
	struct rv_tracee *t = NULL;
	char reason[128], want[64], c;
	uint64_t deadline;
	int r, val;

	victim_start_pipes(&v, v_vfork);
	for (int i = 0; i < 2000 && task_state(v.pid, v.pid) != 'D'; i++)
		msleep(1);
	CHECK(task_state(v.pid, v.pid) == 'D', "vfork parent not in D state");
	deadline = after_ms(300);
	r = rv_tracee_stop(v.pid, -1, deadline, &t, reason);
	CHECK(r == -ETIMEDOUT && !t, "stop = %d, want -ETIMEDOUT", r);
	CHECK(rv_now_ns() < deadline + 200000000ull, "returned long after the deadline");
	snprintf(want, sizeof(want), "pid %d is a vfork parent waiting for pid ", v.pid);
	CHECK(strncmp(reason, want, strlen(want)) == 0 && atoi(reason + strlen(want)) > 0,
	      "reason '%s'", reason);
	CHECK(tracer_of(v.pid) == 0, "victim left traced");
	xwrite(v.in, "v", 1); /* the vfork child exits */
	xread(v.out, &c, 1);
	CHECK(c == 'b', "victim did not come back from vfork");
	xwrite(v.in, "p", 1);
	xread(v.out, &val, sizeof(val));
	CHECK(val == v.pid, "victim answers %d", val);
}

static void test_zombie(void)
{
	struct rv_tracee *t = NULL;
	char reason[128];
	siginfo_t si;
	pid_t pid = test_fork();
	int r;

	CHECK(pid >= 0, "fork: %m");
	if (pid == 0)
		_exit(0);
	CHECK(waitid(P_PID, pid, &si, WEXITED | WNOWAIT) == 0, "waitid: %m");
	r = rv_tracee_stop(pid, -1, after_ms(1000), &t, reason);
	CHECK(r == -ESRCH && !t, "stop(zombie) = %d (%s)", r, reason);
}

static void test_self_refused(void)
{
	struct rv_tracee *t = NULL;
	char reason[128];
	int r = rv_tracee_stop(getpid(), -1, after_ms(1000), &t, reason);

	CHECK(r == -EPERM && !t, "stop(self) = %d", r);
}

/* ---- batches ----------------------------------------------------------------- */

#define NBATCH 50

struct nanosleep_rep {
	long ret;
	int err;
	uint64_t ns;
};

/* Fifty victims of several kinds and a vfork parent stopped together: the
 * vfork parent times out by the deadline, the rest stop; each runs a syscall;
 * one is killed meanwhile; all are let go together, each as it was. */
static void test_batch_stop_release(void)
{
	struct victim v[NBATCH], vf;
	struct rv_stop_req q[NBATCH + 1];
	struct rv_tracee *ts[NBATCH + 1];
	char want[128], c;
	const int killed = 1;
	uint64_t deadline;
	int r, status, val, bad = -1;

	shared_flag = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shared_flag != MAP_FAILED, "mmap: %m");
	for (int i = 0; i < NBATCH; i++) {
		switch (i % 10) {
		case 5:
			victim_start_pipes(&v[i], v_nanosleep);
			break;
		case 7:
			victim_start_pipes(&v[i], v_registers);
			break;
		default:
			victim_start_pipes(&v[i], v_echo);
		}
	}
	victim_start_pipes(&vf, v_vfork);
	for (int i = 0; i < NBATCH; i++) {
		if (i % 10 == 5)
			wait_in_syscall(v[i].pid, v[i].pid, SYS_nanosleep);
		else if (i % 10 != 7)
			wait_in_syscall(v[i].pid, v[i].pid, SYS_read);
		if (i % 10 == 3) {
			CHECK(kill(v[i].pid, SIGSTOP) == 0, "kill: %m");
			CHECK(waitpid(v[i].pid, &status, WUNTRACED) == v[i].pid &&
				  WIFSTOPPED(status),
			      "waitpid");
		}
		q[i] = (struct rv_stop_req){.pid = v[i].pid, .pidfd = -1};
	}
	for (int i = 0; i < 2000 && task_state(vf.pid, vf.pid) != 'D'; i++)
		msleep(1);
	CHECK(task_state(vf.pid, vf.pid) == 'D', "vfork parent not in D state");
	q[NBATCH] =
	    (struct rv_stop_req){.pid = vf.pid, .pidfd = (int)syscall(SYS_pidfd_open, vf.pid, 0)};

	deadline = after_ms(300);
	r = rv_tracees_stop(q, NBATCH + 1, deadline);
	CHECK(r == 0, "rv_tracees_stop = %d", r);
	CHECK(rv_now_ns() < deadline + 200000000ull, "returned long after the deadline");
	snprintf(want, sizeof(want), "pid %d is a vfork parent waiting for pid ", vf.pid);
	CHECK(q[NBATCH].error == ETIMEDOUT && !q[NBATCH].tracee, "vfork parent: error %d",
	      q[NBATCH].error);
	CHECK(strncmp(q[NBATCH].reason, want, strlen(want)) == 0 &&
		  atoi(q[NBATCH].reason + strlen(want)) > 0,
	      "reason '%s'", q[NBATCH].reason);
	CHECK(tracer_of(vf.pid) == 0, "vfork parent left traced");
	for (int i = 0; i < NBATCH; i++) {
		CHECK(q[i].error == 0 && q[i].tracee, "victim %d: error %d (%s)", i, q[i].error,
		      q[i].reason);
		CHECK(tracer_of(v[i].pid) == getpid(), "victim %d not traced by us", i);
		CHECK(remote(q[i].tracee, SYS_getpid, 0, 0, 0) == v[i].pid, "remote getpid");
		ts[i] = q[i].tracee;
	}
	ts[NBATCH] = NULL;
	CHECK(kill(v[killed].pid, SIGKILL) == 0, "kill: %m");
	rv_tracees_release(ts, NBATCH + 1);

	*shared_flag = 1;
	for (int i = 0; i < NBATCH; i++) {
		struct nanosleep_rep rep;

		if (i == killed)
			continue;
		CHECK(tracer_of(v[i].pid) == 0, "victim %d left traced", i);
		switch (i % 10) {
		case 3:
			CHECK(task_state(v[i].pid, v[i].pid) == 'T', "victim %d state %c, want T",
			      i, task_state(v[i].pid, v[i].pid));
			CHECK(kill(v[i].pid, SIGCONT) == 0, "kill: %m");
			break;
		case 5:
			xread(v[i].out, &rep, sizeof(rep));
			CHECK(rep.ret == 0 && rep.ns >= 1500000000ull,
			      "nanosleep gave %ld errno %d after %llu ns", rep.ret, rep.err,
			      (unsigned long long)rep.ns);
			continue;
		case 7:
			xread(v[i].out, &bad, sizeof(bad));
			CHECK(bad == 0, "victim %d: registers changed", i);
			continue;
		}
		xwrite(v[i].in, "p", 1);
		xread(v[i].out, &val, sizeof(val));
		CHECK(val == v[i].pid, "victim %d answers %d", i, val);
	}
	/* As its tracer we may have collected its end already. */
	status = 0;
	r = waitpid(v[killed].pid, &status, 0);
	CHECK((r == v[killed].pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) ||
		  (r < 0 && errno == ECHILD),
	      "killed victim: waitpid %d status %#x", r, status);
	xwrite(vf.in, "v", 1); /* the vfork child exits */
	xread(vf.out, &c, 1);
	CHECK(c == 'b', "vfork victim did not come back");
	xwrite(vf.in, "p", 1);
	xread(vf.out, &val, sizeof(val));
	CHECK(val == vf.pid, "vfork victim answers %d", val);
}

/* Per-request results: a zombie, the caller, a non-process among live ones. */
static void test_batch_stop_mixed(void)
{
	struct victim v[3];
	struct rv_stop_req q[6];
	struct rv_tracee *ts[6] = {};
	siginfo_t si;
	pid_t z = test_fork();
	int r, val;

	CHECK(z >= 0, "fork: %m");
	if (z == 0)
		_exit(0);
	CHECK(waitid(P_PID, z, &si, WEXITED | WNOWAIT) == 0, "waitid: %m");
	for (int i = 0; i < 3; i++) {
		victim_start_pipes(&v[i], v_echo);
		wait_in_syscall(v[i].pid, v[i].pid, SYS_read);
	}
	q[0] = (struct rv_stop_req){.pid = v[0].pid, .pidfd = -1};
	q[1] = (struct rv_stop_req){.pid = z, .pidfd = -1};
	q[2] = (struct rv_stop_req){.pid = v[1].pid, .pidfd = -1};
	q[3] = (struct rv_stop_req){.pid = getpid(), .pidfd = -1};
	q[4] = (struct rv_stop_req){.pid = v[2].pid, .pidfd = -1};
	q[5] = (struct rv_stop_req){.pid = v[2].pid, .pidfd = -1}; /* twice: already traced */
	r = rv_tracees_stop(q, 6, after_ms(5000));
	CHECK(r == 0, "rv_tracees_stop = %d", r);
	CHECK(q[1].error == ESRCH && !q[1].tracee, "zombie: error %d", q[1].error);
	CHECK(q[3].error == EPERM && !q[3].tracee, "self: error %d", q[3].error);
	CHECK(q[5].error == EPERM && !q[5].tracee, "twice: error %d (%s)", q[5].error, q[5].reason);
	for (int i = 0; i < 6; i += 2) {
		CHECK(q[i].error == 0 && q[i].tracee, "victim: error %d (%s)", q[i].error,
		      q[i].reason);
		ts[i] = q[i].tracee;
	}
	CHECK(tracer_of(v[2].pid) == getpid(), "victim 2 not traced by us");
	rv_tracees_release(ts, 6);
	for (int i = 0; i < 3; i++) {
		CHECK(tracer_of(v[i].pid) == 0, "victim %d left traced", i);
		xwrite(v[i].in, "p", 1);
		xread(v[i].out, &val, sizeof(val));
		CHECK(val == v[i].pid, "victim %d answers %d", i, val);
	}
}

TEST_MAIN("unit-ptrace", {"remote_getpid", test_remote_getpid, 10},
	  {"registers_intact", test_registers_intact, 20},
	  {"read_restarts", test_read_restarts, 10}, {"no_vdso", test_no_vdso, 20},
	  {"nanosleep_full", test_nanosleep_full, 10}, {"pause_eintr", test_pause_eintr, 10},
	  {"sigstopped_stays_stopped", test_sigstopped_stays_stopped, 10},
	  {"sigstop_during_injection", test_sigstop_during_injection, 10},
	  {"signals_delivered", test_signals_delivered, 10},
	  {"signals_racing_stop", test_signals_racing_stop, 10},
	  {"already_traced", test_already_traced, 10},
	  {"tracer_of_caller_refused", test_tracer_of_caller_refused, 10},
	  {"deadline_passed", test_deadline_passed, 10},
	  {"vfork_parent_times_out", test_vfork_parent_times_out, 10},
	  {"vfork_thread_times_out", test_vfork_thread_times_out, 10}, {"zombie", test_zombie, 10},
	  {"zombie_leader", test_zombie_leader, 10},
	  {"pidfd_detects_reuse", test_pidfd_detects_reuse, 10},
	  {"compat_refused", test_compat_refused, 10}, {"self_refused", test_self_refused, 10},
	  {"batch_stop_release", test_batch_stop_release, 30},
	  {"batch_stop_mixed", test_batch_stop_mixed, 10})
