/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The revoker dies at every step of a cut (lib/tracee/fault.c points,
 * REVOKE_FAULT): each holder must go on exactly as it was, or fully cut —
 * never half (its descriptor and its mapping of the file agree), never with
 * the stub's registers or mask, never with a syscall result made up, never
 * stopped or traced.
 *
 * The tracer is a child of the case, killed by SIGKILL at the named point;
 * the victim is another child (so its PDEATHSIG follows the case, not the
 * tracer), in one of three shapes: a register/FPU checking loop, a nanosleep
 * (a restart block), a pipe read.
 */
#include <math.h>
#include <setjmp.h>

#include "unit-ptrace.h"

/* M_SLOW: a register loop that catches every signal the stub could stop
 * with (place.c), so the cut is stepped with PTRACE_SYSCALL instead. */
enum { M_REGS, M_SLEEP, M_READ, M_SLOW, M_AVX, NMODES };
static const char *const mode_name[] = {"registers", "nanosleep", "read", "slow path", "avx"};

#define HOLD_FD 70

static char g_path[64];
static int g_mode;
static volatile int *g_flag;
static sigjmp_buf g_jmp;

struct report {
	int bad_regs; /* M_REGS: a register changed behind its back */
	long ret;     /* M_SLEEP, M_READ: the syscall's result */
	int err;
	uint64_t ns;   /* M_SLEEP: how long it slept */
	char byte;     /* M_READ */
	int fd_state;  /* 1 the file, 2 dead (memfd revoked), 0 else */
	int map_state; /* 1 read the file's byte, 2 SIGBUS, 0 else */
	int mask_same; /* the signal mask is what it set */
	int handled;   /* M_SLOW: handler runs (there must be none) */
};

static volatile sig_atomic_t g_handled;
static void on_any(int sig)
{
	(void)sig;
	g_handled++;
}

static void on_bus(int sig)
{
	(void)sig;
	siglongjmp(g_jmp, 1);
}

#ifdef __x86_64__
/* Busy loop holding values in general, SSE and x87 registers; 1 if any
 * changed behind its back. Stops when *flag becomes non-zero. */
static int register_loop(volatile int *flag)
{
	int bad = 0;
	double pi = 0;

	__asm__ volatile("movabs $0x1111111111111111, %%r12\n\t"
			 "movabs $0x2222222222222222, %%r13\n\t"
			 "movq %%r12, %%xmm8\n\t"
			 "movq %%r13, %%xmm9\n\t"
			 "fldpi\n\t"
			 "1:\n\t"
			 "movq %%xmm8, %%rax\n\t"
			 "cmp %%r12, %%rax\n\t"
			 "jne 2f\n\t"
			 "movq %%xmm9, %%rax\n\t"
			 "cmp %%r13, %%rax\n\t"
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
			 : "rax", "r12", "r13", "xmm8", "xmm9", "memory", "cc");
	return bad || pi != M_PI;
}

/* The upper half of a vector register, which the signal frame's XSAVE image
 * carries (FXRSTOR alone would zero it): ymm10 = four copies of a value,
 * checked in its high half. 1 if it changed. */
__attribute__((target("avx2"))) static int avx_loop(volatile int *flag)
{
	int bad = 0;

	__asm__ volatile("movabs $0x3333333344444444, %%r12\n\t"
			 "vmovq %%r12, %%xmm0\n\t"
			 "vpbroadcastq %%xmm0, %%ymm10\n\t"
			 "1:\n\t"
			 "vextracti128 $1, %%ymm10, %%xmm0\n\t"
			 "vmovq %%xmm0, %%rax\n\t"
			 "cmp %%r12, %%rax\n\t"
			 "jne 2f\n\t"
			 "cmpl $0, (%[flag])\n\t"
			 "je 1b\n\t"
			 "jmp 3f\n\t"
			 "2: movl $1, %[bad]\n\t"
			 "3:\n\t"
			 : [bad] "+m"(bad)
			 : [flag] "r"(flag)
			 : "rax", "r12", "xmm0", "xmm10", "memory", "cc");
	return bad;
}

#else
/* aarch64: values in callee-saved general (x19, x20) and FP/SIMD (d8, d9)
 * registers, compared with each other. 1 if any changed. */
static int register_loop(volatile int *flag)
{
	int bad = 0;

	__asm__ volatile("mov x19, #0x1111\n\t"
			 "movk x19, #0x2222, lsl #16\n\t"
			 "movk x19, #0x3333, lsl #32\n\t"
			 "movk x19, #0x4444, lsl #48\n\t"
			 "mvn x20, x19\n\t"
			 "fmov d8, x19\n\t"
			 "fmov d9, x20\n\t"
			 "1:\n\t"
			 "fmov x9, d8\n\t"
			 "cmp x9, x19\n\t"
			 "b.ne 2f\n\t"
			 "fmov x9, d9\n\t"
			 "cmp x9, x20\n\t"
			 "b.ne 2f\n\t"
			 "mvn x9, x20\n\t"
			 "cmp x9, x19\n\t"
			 "b.ne 2f\n\t"
			 "ldr w10, [%[flag]]\n\t"
			 "cbz w10, 1b\n\t"
			 "b 3f\n\t"
			 "2: mov %w[bad], #1\n\t"
			 "3:\n\t"
			 : [bad] "+r"(bad)
			 : [flag] "r"(flag)
			 : "x9", "x10", "x19", "x20", "v8", "v9", "memory", "cc");
	return bad;
}
#endif

static void v_holder(int in, int out)
{
	struct report rep = {0};
	sigset_t mine, now;
	char link[64], target[256];
	volatile char *m;
	int fd = open(g_path, O_RDWR | O_CLOEXEC);
	ssize_t n;

	if (fd < 0 || dup2(fd, HOLD_FD) != HOLD_FD)
		_exit(3);
	close(fd);
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, HOLD_FD, 0);
	if (m == MAP_FAILED)
		_exit(3);
	/* A mask of its own, which must come back exactly. */
	sigemptyset(&mine);
	sigaddset(&mine, SIGUSR2);
	sigaddset(&mine, SIGRTMIN + 3);
	sigprocmask(SIG_SETMASK, &mine, NULL);
	signal(SIGBUS, on_bus);
	if (g_mode == M_SLOW) {
		static const int all[] = {SIGURG,  SIGWINCH, SIGCHLD, SIGPIPE, SIGHUP,	 SIGUSR1,
					  SIGALRM, SIGTERM,  SIGINT,  SIGQUIT, SIGPROF,	 SIGVTALRM,
					  SIGXCPU, SIGXFSZ,  SIGIO,   SIGPWR,  SIGSTKFLT};

		for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
			signal(all[i], on_any);
	}
	xwrite(out, "r", 1);

	switch (g_mode) {
	case M_REGS:
	case M_SLOW:
		rep.bad_regs = register_loop(g_flag);
		rep.handled = g_handled;
		break;
	case M_AVX:
#ifdef __x86_64__
		rep.bad_regs = __builtin_cpu_supports("avx2") ? avx_loop(g_flag) : 0;
#endif
		break;
	case M_SLEEP: {
		struct timespec req = {1, 200000000};
		uint64_t t0 = rv_now_ns();

		rep.ret = syscall(SYS_nanosleep, &req, NULL);
		rep.err = rep.ret < 0 ? errno : 0;
		rep.ns = rv_now_ns() - t0;
		break;
	}
	case M_READ:
		rep.ret = read(in, &rep.byte, 1);
		rep.err = rep.ret < 0 ? errno : 0;
		break;
	}

	snprintf(link, sizeof(link), "/proc/self/fd/%d", HOLD_FD);
	n = readlink(link, target, sizeof(target) - 1);
	target[n > 0 ? n : 0] = '\0';
	rep.fd_state = strcmp(target, g_path) == 0			 ? 1
		       : strcmp(target, "/memfd:revoked (deleted)") == 0 ? 2
									 : 0;
	if (sigsetjmp(g_jmp, 1) == 0)
		rep.map_state = m[0] == 'd' ? 1 : 0;
	else
		rep.map_state = 2;
	sigprocmask(SIG_SETMASK, NULL, &now);
	rep.mask_same = sigismember(&now, SIGUSR2) && sigismember(&now, SIGRTMIN + 3) &&
			!sigismember(&now, SIGUSR1) && !sigismember(&now, SIGBUS);
	xwrite(out, &rep, sizeof(rep));
}

/* The revoker: stops the victim and cuts its descriptor and mapping, dying
 * at POINT. */
static void tracer(pid_t pid, const char *point, uint64_t map)
{
	struct revoke_ref refs[2] = {{.type = REVOKE_REF_FD, .fd = HOLD_FD, .fd_flags = FD_CLOEXEC},
				     {.type = REVOKE_REF_MAP,
				      .start = map,
				      .end = map + 4096,
				      .prot = PROT_READ,
				      .map_flags = MAP_SHARED}};
	/* Released at the end of its program, as the engine does: on aarch64
	 * that is when the thread goes back into its call (run.c, reenter). */
	const struct rv_cut_hooks hooks = {.release = true};
	struct rv_tracee *t = NULL;
	struct rv_holder h, *hp = &h;
	char reason[128];
	int r = 0;

	if (point)
		setenv("REVOKE_FAULT", point, 1);
	if (rv_tracee_stop(pid, -1, after_ms(5000), &t, reason) < 0)
		_exit(10);
	h = holder(pid, refs, 2);
	h.tracee = t;
	if (rv_cut_holders(&hp, 1, 0, &hooks, &r) < 0 || r < 0)
		_exit(11);
	rv_tracee_release(t);
	_exit(0);
}

static uint64_t mapping_of(pid_t pid)
{
	char path[64], line[512];
	uint64_t start = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	CHECK(f, "maps: %m");
	while (fgets(line, sizeof(line), f))
		if (strstr(line, g_path)) {
			start = strtoull(line, NULL, 16);
			break;
		}
	fclose(f);
	CHECK(start, "the victim's mapping of the file is not in its maps");
	return start;
}

/* One victim of MODE, one revoker dying at POINT (NULL: not dying). */
static void one(int mode, const char *point, bool want_cut)
{
	struct victim v;
	struct report rep;
	uint64_t map, deadline;
	pid_t tr;
	int status, fd;
	char c;

	snprintf(g_path, sizeof(g_path), "/tmp/test-unit-death-XXXXXX");
	fd = mkostemp(g_path, O_CLOEXEC);
	CHECK(fd >= 0, "mkostemp: %m");
	xwrite(fd, "data", 4);
	close(fd);
	g_mode = mode;
	*g_flag = 0;
	victim_start_pipes(&v, v_holder);
	xread(v.out, &c, 1);
	map = mapping_of(v.pid);
	if (mode == M_SLEEP)
		wait_in_syscall(v.pid, v.pid, SYS_nanosleep);
	else if (mode == M_READ)
		wait_in_syscall(v.pid, v.pid, SYS_read);
	else
		msleep(20);

	tr = test_fork();
	CHECK(tr >= 0, "fork: %m");
	if (tr == 0)
		tracer(v.pid, point, map);
	CHECK(waitpid(tr, &status, 0) == tr, "wait: %m");
	if (point)
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		      "%s/%s: the revoker was not killed at its fault point (status 0x%x)",
		      mode_name[mode], point, status);
	else
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the revoker failed (0x%x)",
		      status);

	/* The kernel detaches a dead tracer's tracees; the holder goes on. */
	deadline = after_ms(2000);
	while ((tracer_of(v.pid) != 0 || task_state(v.pid, v.pid) == 't') && rv_now_ns() < deadline)
		msleep(1);
	CHECK(tracer_of(v.pid) == 0, "%s/%s: still traced", mode_name[mode], point);
	CHECK(task_state(v.pid, v.pid) != 't' && task_state(v.pid, v.pid) != 'T',
	      "%s/%s: still stopped (%c)", mode_name[mode], point, task_state(v.pid, v.pid));

	if (mode == M_REGS || mode == M_SLOW || mode == M_AVX)
		*g_flag = 1;
	if (mode == M_READ)
		xwrite(v.in, "x", 1);
	if (read(v.out, &rep, sizeof(rep)) != (ssize_t)sizeof(rep)) {
		/* Died before its report: say how. */
		CHECK(waitpid(v.pid, &status, 0) == v.pid, "wait: %m");
		CHECK(false, "%s/%s: the holder died (status 0x%x) before its report",
		      mode_name[mode], point ? point : "-", status);
	}
	unlink(g_path);

	CHECK(rep.mask_same, "%s/%s: signal mask changed", mode_name[mode], point ? point : "-");
	if (mode == M_REGS || mode == M_SLOW || mode == M_AVX)
		CHECK(!rep.bad_regs, "%s/%s: registers changed", mode_name[mode], point);
	CHECK(rep.handled == 0, "%s/%s: %d signal handler runs", mode_name[mode], point,
	      rep.handled);
	if (mode == M_SLEEP)
		CHECK(rep.ret == 0 && rep.ns >= 1200000000ull,
		      "%s/%s: nanosleep returned %ld (%s) after %llu ns", mode_name[mode], point,
		      rep.ret, strerror(rep.err), (unsigned long long)rep.ns);
	if (mode == M_READ)
		CHECK(rep.ret == 1 && rep.byte == 'x', "%s/%s: read returned %ld (%s) '%c'",
		      mode_name[mode], point, rep.ret, strerror(rep.err), rep.byte);
	/* Exactly as it was, or fully cut. */
	CHECK(rep.fd_state == (want_cut ? 2 : 1) && rep.map_state == (want_cut ? 2 : 1),
	      "%s/%s: descriptor %s, mapping %s (expected both %s)", mode_name[mode],
	      point ? point : "-",
	      rep.fd_state == 1	  ? "intact"
	      : rep.fd_state == 2 ? "cut"
				  : "other",
	      rep.map_state == 1   ? "intact"
	      : rep.map_state == 2 ? "cut"
				   : "other",
	      want_cut ? "cut" : "intact");
}

static void run_modes(const char *point, bool want_cut, unsigned int modes)
{
	g_flag = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(g_flag != MAP_FAILED, "mmap: %m");
	for (int m = 0; m < NMODES; m++)
		if (modes & (1u << m))
			one(m, point, want_cut);
}

static void run_point(const char *point, bool want_cut)
{
#ifdef __x86_64__
	run_modes(point, want_cut, (1u << NMODES) - 1);
#else
	run_modes(point, want_cut, (1u << NMODES) - 1 - (1u << M_AVX));
#endif
}

/* On aarch64 a thread stopped in a call goes back into it instead
 * (killed_reenter_*): the cure is for the others. */
static void run_cure_point(const char *point, bool want_cut)
{
#ifdef __aarch64__
	run_modes(point, want_cut, 1u << M_REGS | 1u << M_SLOW);
#else
	run_point(point, want_cut);
#endif
}

#ifdef __aarch64__
/* aarch64 only: a thread stopped in a call goes back into it through the
 * stub's rt_sigreturn (run.c, reenter; aarch64.c). Killed at its mask, after
 * the syscall number changed (the stub's code after its svc takes the
 * thread home with the call's result), and once it is in its own call. */
static void run_reenter(const char *point, bool want_cut)
{
	run_modes(point, want_cut, 1u << M_SLEEP | 1u << M_READ);
}
#endif

/* The points in order; the first is before any register changed. */
static const struct point_row {
	struct test_row t;
	const char *point; /* the fault point the revoker dies at (NULL: it lives) */
	bool want_cut;
	void (*run)(const char *point, bool want_cut);
} points[] = {
    {{"tracer_alive", 30}, NULL, true, run_point},
    {{"killed_prepared", 30}, "prepared", false, run_point},
    {{"killed_entered", 30}, "entered", true, run_point},
    {{"killed_running", 30}, "running", true, run_point},
    {{"killed_stopped", 30}, "stopped", true, run_point},
    {{"killed_cure_mask", 30}, "cure-mask", true, run_cure_point},
    {{"killed_cured", 30}, "cured", true, run_cure_point},
#ifdef __aarch64__
    {{"killed_reenter_mask", 30}, "reenter-mask", true, run_reenter},
    {{"killed_reenter_switched", 30}, "reenter-switched", true, run_reenter},
    {{"killed_reentered", 30}, "reentered", true, run_reenter},
#endif
};

static void point_case(const void *row)
{
	const struct point_row *p = row;

	p->run(p->point, p->want_cut);
}

TEST_MAIN("unit-death", TEST_TABLE(points, point_case))
