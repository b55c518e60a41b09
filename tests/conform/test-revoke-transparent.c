/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Conformance, part 2: holders notice nothing but the cut. Each victim holds
 * the target and is caught in the middle of something (a blocked read, a
 * sleep, a futex wait, pending signals, live registers, a job-control stop, a
 * seccomp filter, many threads); after revoke it must carry on exactly as if
 * nothing had happened, except that its descriptor of the target is dead.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <seccomp.h>
#include <sys/uio.h>

#include "harness.h"
#include "revoke.h"
#ifndef SYS_poll /* architectures with ppoll only */
#define SYS_poll SYS_ppoll
#endif
#ifndef SYS_pause /* glibc's pause() is ppoll(NULL, 0, NULL, NULL) there */
#define SYS_pause SYS_ppoll
#endif

#include "conform.h"

/* ---- a thread blocked in read() on another pipe ---- */

static int g_pipe[2];
static int g_fd = -1;

static void *pipe_reader(void *arg)
{
	int sock = (int)(intptr_t)arg;
	char buf[16] = {0};
	ssize_t n;

	send_msg(sock, MSG(gettid()));
	errno = 0;
	n = read(g_pipe[0], buf, sizeof(buf));
	send_msg(sock, MSG(n, n < 0 ? errno : 0, buf[0]));
	return NULL;
}

static void check_own_fd_dead(int sock)
{
	char b;
	ssize_t r;

	errno = 0;
	r = read(g_fd, &b, 1);
	send_msg(sock, MSG(r, r < 0 ? errno : 0));
}

static void v_blocked_read(int sock)
{
	pthread_t t;

	g_fd = open(tpath, O_RDONLY | O_CLOEXEC);
	if (g_fd < 0)
		_exit(2);
	if (pthread_create(&t, NULL, pipe_reader, (void *)(intptr_t)sock) != 0)
		_exit(2);
	pthread_join(t, NULL);
	check_own_fd_dead(sock);
	msg_wait(sock);
}

/* Check the victim's report of its own target descriptor: read gives EBADF. */
static void check_victim_fd_dead(const struct victim *v)
{
	struct msg m = recv_msg(v);

	CHECK(m.v[0] == -1 && m.v[1] == EBADF, "victim's target fd: read gave %lld (%s), not EBADF",
	      (long long)m.v[0], strerror((int)m.v[1]));
}

/* ... or still reads the file ("hello"). */
static void check_victim_fd_alive(const struct victim *v)
{
	struct msg m = recv_msg(v);

	CHECK(m.v[0] == 1, "victim's target fd: read gave %lld (%s), the file was expected",
	      (long long)m.v[0], strerror((int)m.v[1]));
}

/* A victim whose thread is blocked reading another pipe while it holds the
 * target; BEFORE_REVOKE runs just before the revoke. The read must go on
 * untouched (the 4 bytes written after), the target descriptor be dead. */
static void blocked_read_case(void (*before_revoke)(const struct victim *v))
{
	struct victim v;
	struct msg m;
	pid_t tid;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	CHECK(pipe2(g_pipe, O_CLOEXEC) == 0, "pipe2: %s", strerror(errno));
	v = victim_run(v_blocked_read);
	tid = (pid_t)recv_msg(&v).v[0];
	CHECK(wait_in_syscall(v.pid, tid, SYS_read, -1), "victim thread %d never blocked in read",
	      tid);
	if (before_revoke)
		before_revoke(&v);
	CHECK(revoke_explained(tpath) == 0, "revoke: %s", strerror(errno));
	CHECK(write(g_pipe[1], "data", 4) == 4, "write: %s", strerror(errno));
	m = recv_msg(&v);
	CHECK(m.v[0] == 4 && m.v[2] == 'd', "blocked pipe read returned %lld (%s), not the 4 bytes",
	      (long long)m.v[0], strerror((int)m.v[1]));
	check_victim_fd_dead(&v);
}

/* ---- a kernel without process_vm_readv/writev ----
 * CONFIG_CROSS_MEMORY_ATTACH=n (tinyconfig, some embedded kernels): the
 * revoker's own seccomp filter answers ENOSYS, as such a kernel would. The
 * cut goes through /proc/PID/mem, only where the holder may write. */
static void deny_process_vm_calls(const struct victim *v)
{
	scmp_filter_ctx ctx;

	/* The test process only, after the victim was forked. */
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	CHECK(ctx &&
		  seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(process_vm_readv), 0) ==
		      0 &&
		  seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(process_vm_writev), 0) ==
		      0 &&
		  seccomp_load(ctx) == 0,
	      "seccomp filter not installed");
	seccomp_release(ctx);
	CHECK(process_vm_writev(v->pid, NULL, 0, NULL, 0, 0) < 0 && errno == ENOSYS,
	      "process_vm_writev still answers (%s)", strerror(errno));
}

/* ---- nanosleep spanning a revoke ---- */

#define SLEEP_NS 1500000000ull

static void v_nanosleep(int sock)
{
	struct timespec ts = {.tv_sec = 1, .tv_nsec = 500000000L}, rem = {0, 0};
	uint64_t t0;
	int r, e;

	g_fd = open(tpath, O_RDONLY | O_CLOEXEC);
	if (g_fd < 0)
		_exit(2);
	send_msg(sock, MSG(getpid()));
	t0 = now_ns();
	errno = 0;
	r = nanosleep(&ts, &rem);
	e = r < 0 ? errno : 0;
	send_msg(sock, MSG(r, e, (int64_t)(now_ns() - t0)));
	/* Not before the revoke has returned: on a loaded machine it can take
	 * longer than the sleep, and a read before the cut reads the file. */
	msg_wait(sock);
	check_own_fd_dead(sock);
	msg_wait(sock);
}

static void t_nanosleep_full_length(void)
{
	struct victim v;
	struct msg m;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	v = victim_run(v_nanosleep);
	recv_msg(&v);
	CHECK(wait_in_syscall(v.pid, v.pid, SYS_clock_nanosleep, SYS_nanosleep),
	      "victim never slept in nanosleep");
	CHECK(revoke_explained(tpath) == 0, "revoke: %s", strerror(errno));
	m = recv_msg(&v);
	CHECK(m.v[0] == 0, "nanosleep returned %lld errno %lld (%s)", (long long)m.v[0],
	      (long long)m.v[1], m.v[1] == 512 ? "ERESTARTSYS leaked" : strerror((int)m.v[1]));
	CHECK((uint64_t)m.v[2] >= SLEEP_NS, "nanosleep(1.5 s) slept only %lld ns",
	      (long long)m.v[2]);
	send_msg(v.sock, MSG(CMD_GO));
	check_victim_fd_dead(&v);
}

/* ---- poll() restarts ---- */

static void v_poll(int sock)
{
	struct pollfd pfd;
	int r, e;

	g_fd = open(tpath, O_RDONLY | O_CLOEXEC);
	if (g_fd < 0)
		_exit(2);
	pfd = (struct pollfd){.fd = g_pipe[0], .events = POLLIN};
	send_msg(sock, MSG(getpid()));
	errno = 0;
	r = poll(&pfd, 1, 20000);
	e = r < 0 ? errno : 0;
	send_msg(sock, MSG(r, e, pfd.revents));
	check_own_fd_dead(sock);
	msg_wait(sock);
}

static void t_poll_restarts(void)
{
	struct victim v;
	struct msg m;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	CHECK(pipe2(g_pipe, O_CLOEXEC) == 0, "pipe2: %s", strerror(errno));
	v = victim_run(v_poll);
	recv_msg(&v);
	CHECK(wait_in_syscall(v.pid, v.pid, SYS_poll, SYS_ppoll), "victim never blocked in poll");
	CHECK(revoke_explained(tpath) == 0, "revoke: %s", strerror(errno));
	/* Nothing may come back before the data does. */
	CHECK(recv_msg_timeout(v.sock, &m, 300) == -ETIMEDOUT,
	      "poll returned before any data: %lld (%s)", (long long)m.v[0], strerror((int)m.v[1]));
	CHECK(write(g_pipe[1], "x", 1) == 1, "write: %s", strerror(errno));
	m = recv_msg(&v);
	CHECK(m.v[0] == 1 && (m.v[2] & POLLIN), "poll returned %lld (%s) revents %#llx",
	      (long long)m.v[0], strerror((int)m.v[1]), (long long)m.v[2]);
	check_victim_fd_dead(&v);
}

/* ---- futex wait restarts ---- */

static _Atomic int *g_word;

static void v_futex(int sock)
{
	long r;
	int e;

	g_fd = open(tpath, O_RDONLY | O_CLOEXEC);
	if (g_fd < 0)
		_exit(2);
	send_msg(sock, MSG(getpid()));
	errno = 0;
	r = syscall(SYS_futex, g_word, FUTEX_WAIT, 0, NULL, NULL, 0);
	e = r < 0 ? errno : 0;
	send_msg(sock, MSG(r, e, *g_word));
	check_own_fd_dead(sock);
	msg_wait(sock);
}

static void t_futex_restarts(void)
{
	struct victim v;
	struct msg m;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	g_word = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(g_word != MAP_FAILED, "mmap: %s", strerror(errno));
	v = victim_run(v_futex);
	recv_msg(&v);
	CHECK(wait_in_syscall(v.pid, v.pid, SYS_futex, -1), "victim never waited in futex");
	CHECK(revoke_explained(tpath) == 0, "revoke: %s", strerror(errno));
	CHECK(recv_msg_timeout(v.sock, &m, 300) == -ETIMEDOUT,
	      "futex wait returned before the wake: %lld (%s)", (long long)m.v[0],
	      strerror((int)m.v[1]));
	CHECK(wait_in_syscall(v.pid, v.pid, SYS_futex, -1), "victim not back in futex wait");
	*g_word = 1;
	syscall(SYS_futex, g_word, FUTEX_WAKE, 1, NULL, NULL, 0);
	m = recv_msg(&v);
	/* 0 when woken; EAGAIN would only mean the word changed before it slept again. */
	CHECK((m.v[0] == 0 || m.v[1] == EAGAIN) && m.v[2] == 1,
	      "futex wait returned %lld errno %lld (%s), word %lld", (long long)m.v[0],
	      (long long)m.v[1], strerror((int)m.v[1]), (long long)m.v[2]);
	check_victim_fd_dead(&v);
}

/* ---- queued signals survive ---- */

static volatile sig_atomic_t g_nrt, g_nusr1, g_rtsum;

static void on_rt(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	g_nrt++;
	g_rtsum += si->si_value.sival_int;
}

static void on_usr1(int sig)
{
	(void)sig;
	g_nusr1++;
}

static bool g_block_signals = true;

static void v_signals(int sock)
{
	struct sigaction sa = {.sa_sigaction = on_rt, .sa_flags = SA_SIGINFO | SA_RESTART};
	struct sigaction su = {.sa_handler = on_usr1, .sa_flags = SA_RESTART};
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	sigaddset(&set, SIGUSR1);
	if (g_block_signals)
		sigprocmask(SIG_BLOCK, &set, NULL);
	sigaction(SIGRTMIN, &sa, NULL);
	sigaction(SIGUSR1, &su, NULL);
	g_fd = open(tpath, O_RDONLY | O_CLOEXEC);
	if (g_fd < 0)
		_exit(2);
	send_msg(sock, MSG(getpid()));
	msg_wait(sock); /* CMD_GO */
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	send_msg(sock, MSG(g_nrt, g_nusr1, g_rtsum));
	check_own_fd_dead(sock);
	msg_wait(sock);
}

static pid_t g_sig_target;

/* Queues SIGRTMIN 5 times and SIGUSR1 once; with ARG, once the target is stopped. */
static void *signal_sender(void *arg)
{
	if (arg)
		wait_traced(g_sig_target);
	for (int i = 1; i <= 5; i++)
		sigqueue(g_sig_target, SIGRTMIN, (union sigval){.sival_int = i});
	kill(g_sig_target, SIGUSR1);
	return NULL;
}

static void check_signal_counts(const struct victim *v)
{
	struct msg m;

	send_msg(v->sock, MSG(CMD_GO));
	m = recv_msg(v);
	CHECK(m.v[0] == 5 && m.v[2] == 15,
	      "realtime signal delivered %lld times (values sum %lld), not 5", (long long)m.v[0],
	      (long long)m.v[2]);
	CHECK(m.v[1] == 1, "pending SIGUSR1 delivered %lld times, not once", (long long)m.v[1]);
	check_victim_fd_dead(v);
}

static void t_signals_pending_kept(void)
{
	struct victim v;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	v = victim_run(v_signals);
	recv_msg(&v);
	g_sig_target = v.pid;
	signal_sender(NULL);
	CHECK(wait_in_syscall(v.pid, v.pid, SYS_recvfrom, SYS_poll), "victim never blocked");
	CHECK(revoke_explained(tpath) == 0, "revoke: %s", strerror(errno));
	check_signal_counts(&v);
}

/* Signals (blocked in the victim) queued by a thread while revoke runs. */
static void t_signals_queued_during(void)
{
	struct victim v;
	pthread_t t;
	int r;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	v = victim_run(v_signals);
	recv_msg(&v);
	g_sig_target = v.pid;
	CHECK(wait_in_syscall(v.pid, v.pid, SYS_recvfrom, SYS_poll), "victim never blocked");
	CHECK(pthread_create(&t, NULL, signal_sender, "stopped") == 0, "pthread_create");
	r = revoke(tpath);
	pthread_join(t, NULL);
	CHECK(r == 0, "revoke: %s", strerror(errno));
	check_signal_counts(&v);
}

/* The same signals, not blocked: the handler runs for each, none is swallowed by a stop. */
static void t_signals_unblocked_during(void)
{
	struct victim v;
	pthread_t t;
	int r;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	g_block_signals = false;
	v = victim_run(v_signals);
	recv_msg(&v);
	g_sig_target = v.pid;
	CHECK(wait_in_syscall(v.pid, v.pid, SYS_recvfrom, SYS_poll), "victim never blocked");
	CHECK(pthread_create(&t, NULL, signal_sender, "stopped") == 0, "pthread_create");
	r = revoke(tpath);
	pthread_join(t, NULL);
	CHECK(r == 0, "revoke: %s", strerror(errno));
	msleep(100);
	check_signal_counts(&v);
}

/* ---- registers ---- */

#ifdef __x86_64__
struct regbox {
	volatile int *flag;
	uint64_t count;
	uint8_t xin[256];
	uint8_t xout[256];
	double fin[8];
	double fout[8];
	uint64_t gin[11];
	uint64_t gout[11];
};

#define O(f) [f] "i"(offsetof(struct regbox, f))

static void __attribute__((noinline)) spin_with_registers(struct regbox *b)
{
	__asm__ volatile(
	    /* xmm0-15 */
	    "movdqu %c[xin]+0(%%rdi), %%xmm0\n\t"
	    "movdqu %c[xin]+16(%%rdi), %%xmm1\n\t"
	    "movdqu %c[xin]+32(%%rdi), %%xmm2\n\t"
	    "movdqu %c[xin]+48(%%rdi), %%xmm3\n\t"
	    "movdqu %c[xin]+64(%%rdi), %%xmm4\n\t"
	    "movdqu %c[xin]+80(%%rdi), %%xmm5\n\t"
	    "movdqu %c[xin]+96(%%rdi), %%xmm6\n\t"
	    "movdqu %c[xin]+112(%%rdi), %%xmm7\n\t"
	    "movdqu %c[xin]+128(%%rdi), %%xmm8\n\t"
	    "movdqu %c[xin]+144(%%rdi), %%xmm9\n\t"
	    "movdqu %c[xin]+160(%%rdi), %%xmm10\n\t"
	    "movdqu %c[xin]+176(%%rdi), %%xmm11\n\t"
	    "movdqu %c[xin]+192(%%rdi), %%xmm12\n\t"
	    "movdqu %c[xin]+208(%%rdi), %%xmm13\n\t"
	    "movdqu %c[xin]+224(%%rdi), %%xmm14\n\t"
	    "movdqu %c[xin]+240(%%rdi), %%xmm15\n\t"
	    /* the whole x87 stack */
	    "fldl %c[fin]+0(%%rdi)\n\t"
	    "fldl %c[fin]+8(%%rdi)\n\t"
	    "fldl %c[fin]+16(%%rdi)\n\t"
	    "fldl %c[fin]+24(%%rdi)\n\t"
	    "fldl %c[fin]+32(%%rdi)\n\t"
	    "fldl %c[fin]+40(%%rdi)\n\t"
	    "fldl %c[fin]+48(%%rdi)\n\t"
	    "fldl %c[fin]+56(%%rdi)\n\t"
	    /* general registers, the syscall-clobbered ones included */
	    "mov %c[gin]+0(%%rdi), %%rbx\n\t"
	    "mov %c[gin]+8(%%rdi), %%rdx\n\t"
	    "mov %c[gin]+16(%%rdi), %%rsi\n\t"
	    "mov %c[gin]+24(%%rdi), %%r8\n\t"
	    "mov %c[gin]+32(%%rdi), %%r9\n\t"
	    "mov %c[gin]+40(%%rdi), %%r10\n\t"
	    "mov %c[gin]+48(%%rdi), %%r11\n\t"
	    "mov %c[gin]+56(%%rdi), %%r12\n\t"
	    "mov %c[gin]+64(%%rdi), %%r13\n\t"
	    "mov %c[gin]+72(%%rdi), %%r14\n\t"
	    "mov %c[gin]+80(%%rdi), %%r15\n\t"
	    "movabs $0x400000000, %%rcx\n\t"
	    "1:\n\t"
	    "mov (%%rdi), %%rax\n\t"
	    "mov (%%rax), %%eax\n\t"
	    "test %%eax, %%eax\n\t"
	    "jnz 2f\n\t"
	    "pause\n\t"
	    "dec %%rcx\n\t"
	    "jnz 1b\n\t"
	    "2:\n\t"
	    "mov %%rcx, %c[count](%%rdi)\n\t"
	    "mov %%rbx, %c[gout]+0(%%rdi)\n\t"
	    "mov %%rdx, %c[gout]+8(%%rdi)\n\t"
	    "mov %%rsi, %c[gout]+16(%%rdi)\n\t"
	    "mov %%r8, %c[gout]+24(%%rdi)\n\t"
	    "mov %%r9, %c[gout]+32(%%rdi)\n\t"
	    "mov %%r10, %c[gout]+40(%%rdi)\n\t"
	    "mov %%r11, %c[gout]+48(%%rdi)\n\t"
	    "mov %%r12, %c[gout]+56(%%rdi)\n\t"
	    "mov %%r13, %c[gout]+64(%%rdi)\n\t"
	    "mov %%r14, %c[gout]+72(%%rdi)\n\t"
	    "mov %%r15, %c[gout]+80(%%rdi)\n\t"
	    "fstpl %c[fout]+0(%%rdi)\n\t"
	    "fstpl %c[fout]+8(%%rdi)\n\t"
	    "fstpl %c[fout]+16(%%rdi)\n\t"
	    "fstpl %c[fout]+24(%%rdi)\n\t"
	    "fstpl %c[fout]+32(%%rdi)\n\t"
	    "fstpl %c[fout]+40(%%rdi)\n\t"
	    "fstpl %c[fout]+48(%%rdi)\n\t"
	    "fstpl %c[fout]+56(%%rdi)\n\t"
	    "movdqu %%xmm0, %c[xout]+0(%%rdi)\n\t"
	    "movdqu %%xmm1, %c[xout]+16(%%rdi)\n\t"
	    "movdqu %%xmm2, %c[xout]+32(%%rdi)\n\t"
	    "movdqu %%xmm3, %c[xout]+48(%%rdi)\n\t"
	    "movdqu %%xmm4, %c[xout]+64(%%rdi)\n\t"
	    "movdqu %%xmm5, %c[xout]+80(%%rdi)\n\t"
	    "movdqu %%xmm6, %c[xout]+96(%%rdi)\n\t"
	    "movdqu %%xmm7, %c[xout]+112(%%rdi)\n\t"
	    "movdqu %%xmm8, %c[xout]+128(%%rdi)\n\t"
	    "movdqu %%xmm9, %c[xout]+144(%%rdi)\n\t"
	    "movdqu %%xmm10, %c[xout]+160(%%rdi)\n\t"
	    "movdqu %%xmm11, %c[xout]+176(%%rdi)\n\t"
	    "movdqu %%xmm12, %c[xout]+192(%%rdi)\n\t"
	    "movdqu %%xmm13, %c[xout]+208(%%rdi)\n\t"
	    "movdqu %%xmm14, %c[xout]+224(%%rdi)\n\t"
	    "movdqu %%xmm15, %c[xout]+240(%%rdi)\n\t"
	    :
	    : "D"(b), O(xin), O(xout), O(fin), O(fout), O(gin), O(gout), O(count)
	    : "rax", "rbx", "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "r12", "r13", "r14",
	      "r15", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
	      "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "st", "st(1)", "st(2)", "st(3)",
	      "st(4)", "st(5)", "st(6)", "st(7)", "memory", "cc");
}

static void v_registers(int sock)
{
	struct regbox *b = calloc(1, sizeof(*b));
	int64_t xbad = 0, fbad = 0, gbad = 0;

	if (!b)
		_exit(2);
	b->flag = (volatile int *)g_word;
	for (int i = 0; i < 256; i++)
		b->xin[i] = (uint8_t)(i * 7 + 3);
	for (int i = 0; i < 8; i++)
		b->fin[i] = 1.25 + i * 3.5;
	for (int i = 0; i < 11; i++)
		b->gin[i] = 0x0123456789abcdefull ^ ((uint64_t)(i + 1) * 0x1111111111111111ull);
	g_fd = open(tpath, O_RDONLY | O_CLOEXEC);
	if (g_fd < 0)
		_exit(2);
	send_msg(sock, MSG(getpid()));
	spin_with_registers(b);
	for (int i = 0; i < 16; i++)
		if (memcmp(b->xin + 16 * i, b->xout + 16 * i, 16) != 0)
			xbad |= 1ll << i;
	for (int i = 0; i < 8; i++)
		if (b->fout[i] != b->fin[7 - i])
			fbad |= 1ll << i;
	for (int i = 0; i < 11; i++)
		if (b->gout[i] != b->gin[i])
			gbad |= 1ll << i;
	send_msg(sock, MSG(xbad, fbad, gbad, (int64_t)b->count));
	check_own_fd_dead(sock);
	msg_wait(sock);
}

#elif defined(__aarch64__)
/* v0-v31 and the general registers but x0 (the box), x16-x17 (the loop's),
 * x18 (the platform register), x29-x30 (frame and link). */
#define NGREGS 25
struct regbox {
	volatile int *flag;
	uint64_t count;
	uint8_t xin[512];
	uint8_t xout[512];
	uint64_t gin[NGREGS];
	uint64_t gout[NGREGS];
};

#define O(f) [f] "i"(offsetof(struct regbox, f))
/* clang-format off */
#define QPAIRS(op)                                                             \
	op " q0, q1, [x16, #0]\n\t"     op " q2, q3, [x16, #32]\n\t"            \
	op " q4, q5, [x16, #64]\n\t"    op " q6, q7, [x16, #96]\n\t"            \
	op " q8, q9, [x16, #128]\n\t"   op " q10, q11, [x16, #160]\n\t"         \
	op " q12, q13, [x16, #192]\n\t" op " q14, q15, [x16, #224]\n\t"         \
	op " q16, q17, [x16, #256]\n\t" op " q18, q19, [x16, #288]\n\t"         \
	op " q20, q21, [x16, #320]\n\t" op " q22, q23, [x16, #352]\n\t"         \
	op " q24, q25, [x16, #384]\n\t" op " q26, q27, [x16, #416]\n\t"         \
	op " q28, q29, [x16, #448]\n\t" op " q30, q31, [x16, #480]\n\t"
#define XREGS(op)                                                              \
	op " x1, x2, [x16, #0]\n\t"     op " x3, x4, [x16, #16]\n\t"            \
	op " x5, x6, [x16, #32]\n\t"    op " x7, x8, [x16, #48]\n\t"            \
	op " x9, x10, [x16, #64]\n\t"   op " x11, x12, [x16, #80]\n\t"          \
	op " x13, x14, [x16, #96]\n\t"  op " x15, x19, [x16, #112]\n\t"         \
	op " x20, x21, [x16, #128]\n\t" op " x22, x23, [x16, #144]\n\t"         \
	op " x24, x25, [x16, #160]\n\t" op " x26, x27, [x16, #176]\n\t"

static void __attribute__((noinline)) spin_with_registers(struct regbox *b)
{
	register struct regbox *x0 __asm__("x0") = b;

	__asm__ volatile(
	    "add x16, x0, #%c[xin]\n\t"
	    QPAIRS("ldp")
	    "add x16, x0, #%c[gin]\n\t"
	    XREGS("ldp")
	    "ldr x28, [x16, #192]\n\t"
	    "movz x16, #0x4, lsl #32\n\t"
	    "1:\n\t"
	    "ldr x17, [x0]\n\t"
	    "ldr w17, [x17]\n\t"
	    "cbnz w17, 2f\n\t"
	    "yield\n\t"
	    "subs x16, x16, #1\n\t"
	    "b.ne 1b\n\t"
	    "2:\n\t"
	    "str x16, [x0, #%c[count]]\n\t"
	    "add x16, x0, #%c[gout]\n\t"
	    XREGS("stp")
	    "str x28, [x16, #192]\n\t"
	    "add x16, x0, #%c[xout]\n\t"
	    QPAIRS("stp")
	    :
	    : "r"(x0), O(xin), O(xout), O(gin), O(gout), O(count)
	    : "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13",
	      "x14", "x15", "x16", "x17", "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26",
	      "x27", "x28", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10",
	      "v11", "v12", "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22",
	      "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31", "memory", "cc");
}
/* clang-format on */

static void v_registers(int sock)
{
	struct regbox *b = calloc(1, sizeof(*b));
	int64_t xbad = 0, gbad = 0;

	if (!b)
		_exit(2);
	b->flag = (volatile int *)g_word;
	for (int i = 0; i < 512; i++)
		b->xin[i] = (uint8_t)(i * 7 + 3);
	for (int i = 0; i < NGREGS; i++)
		b->gin[i] = 0x0123456789abcdefull ^ ((uint64_t)(i + 1) * 0x1111111111111111ull);
	g_fd = open(tpath, O_RDONLY | O_CLOEXEC);
	if (g_fd < 0)
		_exit(2);
	send_msg(sock, MSG(getpid()));
	spin_with_registers(b);
	for (int i = 0; i < 32; i++)
		if (memcmp(b->xin + 16 * i, b->xout + 16 * i, 16) != 0)
			xbad |= 1ll << i;
	for (int i = 0; i < NGREGS; i++)
		if (b->gout[i] != b->gin[i])
			gbad |= 1ll << i;
	send_msg(sock, MSG(xbad, 0, gbad, (int64_t)b->count));
	check_own_fd_dead(sock);
	msg_wait(sock);
}

#endif /* __x86_64__, __aarch64__ */

static void t_registers_intact(void)
{
#if !defined(__x86_64__) && !defined(__aarch64__)
	SKIP("the register check is written for x86_64 and aarch64");
#else
	struct victim v;
	struct msg m;
	char path[64], buf[64];

	make_scratch();
	test_make_file(tpath, "hello", 0);
	g_word = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(g_word != MAP_FAILED, "mmap: %s", strerror(errno));
	v = victim_run(v_registers);
	recv_msg(&v);
	/* Let it reach the loop: running in user space, not in a syscall. */
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)v.pid);
	for (int i = 0; i < 500; i++) {
		msleep(10);
		if (read_proc(path, buf, sizeof(buf)) == 0 && strncmp(buf, "running", 7) == 0)
			break;
	}
	msleep(50);
	CHECK(revoke_explained(tpath) == 0, "revoke: %s", strerror(errno));
	*g_word = 1;
	m = recv_msg(&v);
	CHECK(m.v[3] != 0, "the register loop ran out before the revoke ended");
#ifdef __x86_64__
	CHECK(m.v[0] == 0, "xmm registers changed (mask %#llx)", (long long)m.v[0]);
	CHECK(m.v[1] == 0, "x87 registers changed (mask %#llx)", (long long)m.v[1]);
	CHECK(m.v[2] == 0, "general registers changed (mask %#llx: rbx rdx rsi r8-r15)",
	      (long long)m.v[2]);
#else
	CHECK(m.v[0] == 0, "SIMD registers changed (mask %#llx: v0-v31)", (long long)m.v[0]);
	CHECK(m.v[2] == 0, "general registers changed (mask %#llx: x1-x15 x19-x28)",
	      (long long)m.v[2]);
#endif
	check_victim_fd_dead(&v);
#endif
}

/* ---- a SIGSTOPped holder stays stopped ---- */

static void v_idle(int sock)
{
	g_fd = open(tpath, O_RDONLY | O_CLOEXEC);
	if (g_fd < 0)
		_exit(2);
	send_msg(sock, MSG(getpid(), g_fd));
	msg_wait(sock);
	check_own_fd_dead(sock);
	msg_wait(sock);
}

static void t_sigstopped_stays_stopped(void)
{
	struct victim v;
	struct stat st;
	int fd, i;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	CHECK(stat(tpath, &st) == 0, "stat: %s", strerror(errno));
	v = victim_run(v_idle);
	fd = (int)recv_msg(&v).v[1];
	CHECK(kill(v.pid, SIGSTOP) == 0, "kill: %s", strerror(errno));
	for (i = 0; i < 500 && proc_state(v.pid) != 'T'; i++)
		msleep(10);
	CHECK(proc_state(v.pid) == 'T', "victim did not stop: state %c", proc_state(v.pid));
	CHECK(revoke_explained(tpath) == 0, "revoke: %s", strerror(errno));
	for (i = 0; i < 5; i++) {
		char s = proc_state(v.pid);
		CHECK(s == 'T', "victim state %c after revoke, expected T (stopped)", s);
		msleep(40);
	}
	CHECK(proc_status_field(v.pid, "TracerPid") == 0, "victim still traced");
	CHECK(!proc_fd_is(v.pid, fd, &st), "victim's fd %d still refers to the target", fd);
	CHECK(kill(v.pid, SIGCONT) == 0, "kill: %s", strerror(errno));
	send_msg(v.sock, MSG(CMD_GO));
	check_victim_fd_dead(&v);
}

/* ---- a holder under a seccomp filter that kills on dup3 ---- */

static void v_seccomp(int sock)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);

	if (!ctx || seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(dup3), 0) < 0 ||
	    seccomp_load(ctx) < 0)
		_exit(5);
	seccomp_release(ctx);
	v_idle(sock);
}

static void t_seccomp_kill_dup3_survives(void)
{
	struct victim v;
	struct msg m;

	if (geteuid() != 0)
		SKIP("needs root (PTRACE_O_SUSPEND_SECCOMP)");
	make_scratch();
	test_make_file(tpath, "hello", 0);
	v = victim_run(v_seccomp);
	m = recv_msg(&v);
	(void)m;
	CHECK(proc_status_field(v.pid, "Seccomp") == 2, "victim has no seccomp filter");
	CHECK(wait_in_syscall(v.pid, v.pid, SYS_recvfrom, SYS_poll), "victim never blocked");
	CHECK(revoke_explained(tpath) == 0, "revoke: %s", strerror(errno));
	msleep(50);
	CHECK(proc_state(v.pid) != 'Z' && proc_state(v.pid) != 0, "the seccomp'd victim died");
	send_msg(v.sock, MSG(CMD_GO));
	check_victim_fd_dead(&v);
	CHECK(proc_status_field(v.pid, "Seccomp") == 2, "victim's seccomp filter gone");
}

/* ---- many threads, some blocked in read on the target FIFO ---- */

#define NTHREADS 8
#define NREADERS 4

static int g_go[2];
static int g_sock;

static void *fifo_thread(void *arg)
{
	int idx = (int)(intptr_t)arg;
	char b;
	ssize_t r;

	if (idx >= NREADERS) /* wait for the test's go, then touch the fd */
		while (read(g_go[0], &b, 1) < 0 && errno == EINTR)
			;
	errno = 0;
	r = read(g_fd, &b, 1);
	send_msg(g_sock, MSG(idx, r, r < 0 ? errno : 0));
	return NULL;
}

static _Atomic pid_t g_tids[NTHREADS];

static void *fifo_thread_start(void *arg)
{
	g_tids[(intptr_t)arg] = gettid();
	return fifo_thread(arg);
}

static void v_threads(int sock)
{
	pthread_t t[NTHREADS];

	g_sock = sock;
	g_fd = open(tpath, O_RDWR | O_CLOEXEC);
	if (g_fd < 0 || pipe2(g_go, O_CLOEXEC) < 0)
		_exit(2);
	for (intptr_t i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, fifo_thread_start, (void *)i) != 0)
			_exit(2);
	for (int i = 0; i < 1000; i++) {
		int n = 0;
		for (int j = 0; j < NTHREADS; j++)
			n += g_tids[j] != 0;
		if (n == NTHREADS)
			break;
		msleep(5);
	}
	send_msg(sock, MSG(g_tids[0], g_tids[1], g_tids[2], g_tids[3], g_tids[4], g_tids[5],
			   g_tids[6], g_tids[7]));
	msg_wait(sock); /* go */
	if (write(g_go[1], "xxxxxxxx", NTHREADS - NREADERS) < 0)
		_exit(2);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	send_msg(sock, MSG(-1, getpid()));
	msg_wait(sock);
}

static void t_many_threads_fifo(void)
{
	struct victim v;
	struct msg m;
	bool seen[NTHREADS] = {false};

	make_scratch();
	CHECK(mkfifo(tpath, 0600) == 0, "mkfifo: %s", strerror(errno));
	v = victim_run(v_threads);
	m = recv_msg(&v);
	for (int i = 0; i < NTHREADS; i++)
		CHECK(m.v[i] > 0, "thread %d never started", i);
	for (int i = 0; i < NREADERS; i++)
		CHECK(wait_in_syscall(v.pid, (pid_t)m.v[i], SYS_read, -1),
		      "thread %d never blocked in read", i);
	for (int i = NREADERS; i < NTHREADS; i++)
		CHECK(wait_in_syscall(v.pid, (pid_t)m.v[i], SYS_read, -1),
		      "thread %d never blocked", i);
	CHECK(revoke_explained(tpath) == 0, "revoke: %s", strerror(errno));
	for (int i = 0; i < NREADERS; i++) {
		m = recv_msg(&v);
		CHECK(m.v[0] >= 0 && m.v[0] < NREADERS && !seen[m.v[0]], "unexpected report %lld",
		      (long long)m.v[0]);
		seen[m.v[0]] = true;
		CHECK(m.v[1] == -1 && m.v[2] == EBADF,
		      "reader thread %lld: blocked read returned %lld (%s), not EBADF",
		      (long long)m.v[0], (long long)m.v[1], strerror((int)m.v[2]));
	}
	send_msg(v.sock, MSG(CMD_GO));
	for (int i = NREADERS; i < NTHREADS; i++) {
		m = recv_msg(&v);
		CHECK(m.v[0] >= NREADERS && m.v[0] < NTHREADS && !seen[m.v[0]],
		      "unexpected report %lld", (long long)m.v[0]);
		seen[m.v[0]] = true;
		CHECK(m.v[1] == -1 && m.v[2] == EBADF,
		      "thread %lld: read returned %lld (%s), not EBADF", (long long)m.v[0],
		      (long long)m.v[1], strerror((int)m.v[2]));
	}
	m = recv_msg(&v);
	CHECK(m.v[0] == -1 && m.v[1] == v.pid, "victim did not survive");
}

/* ---- a holder whose main thread has exited (zombie leader) ---- */

static void *leader_gone_thread(void *arg)
{
	int sock = (int)(intptr_t)arg;

	send_msg(sock, MSG(gettid()));
	msg_wait(sock);
	check_own_fd_dead(sock);
	msg_wait(sock);
	_exit(0);
}

static void v_leader_gone(int sock)
{
	pthread_t t;

	g_fd = open(tpath, O_RDONLY | O_CLOEXEC);
	if (g_fd < 0)
		_exit(2);
	if (pthread_create(&t, NULL, leader_gone_thread, (void *)(intptr_t)sock) != 0)
		_exit(2);
	pthread_exit(NULL);
}

static void t_zombie_leader_threads(void)
{
	struct victim v;
	pid_t tid;
	int i;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	v = victim_run(v_leader_gone);
	tid = (pid_t)recv_msg(&v).v[0];
	for (i = 0; i < 500 && proc_state(v.pid) != 'Z'; i++)
		msleep(10);
	CHECK(proc_state(v.pid) == 'Z', "leader did not exit");
	CHECK(wait_in_syscall(v.pid, tid, SYS_recvfrom, SYS_poll), "thread never blocked");
	CHECK(revoke_explained(tpath) == 0, "revoke: %s", strerror(errno));
	send_msg(v.sock, MSG(CMD_GO));
	check_victim_fd_dead(&v);
}

/* ---- a handled signal during the revoke interrupts a read (EINTR), or,
 * with SA_RESTART, the same read goes on after the handler ---- */

static bool g_sa_restart;

static void v_signalled_read(int sock)
{
	struct sigaction su = {.sa_handler = on_usr1, .sa_flags = g_sa_restart ? SA_RESTART : 0};
	char c = 0;
	ssize_t n;

	sigaction(SIGUSR1, &su, NULL);
	g_fd = open(tpath, O_RDONLY | O_CLOEXEC);
	if (g_fd < 0)
		_exit(2);
	send_msg(sock, MSG(getpid()));
	errno = 0;
	n = read(g_pipe[0], &c, 1);
	send_msg(sock, MSG(n, n < 0 ? errno : 0, g_nusr1, c));
	msg_wait(sock); /* the signal may have come before the revoke: wait for its end */
	check_own_fd_dead(sock);
	msg_wait(sock);
}

static void *usr1_sender(void *arg)
{
	(void)arg;
	wait_traced(g_sig_target);
	kill(g_sig_target, SIGUSR1);
	return NULL;
}

static void signal_during_read(bool restart, int rounds)
{
	g_sa_restart = restart;
	make_scratch();
	test_make_file(tpath, "hello", 0);
	CHECK(pipe2(g_pipe, O_CLOEXEC) == 0, "pipe2: %s", strerror(errno));
	for (int round = 0; round < rounds; round++) {
		struct victim v = victim_run(v_signalled_read);
		pthread_t t;
		struct msg m;
		int r;

		recv_msg(&v);
		CHECK(wait_in_syscall(v.pid, v.pid, SYS_read, -1), "victim never blocked in read");
		g_sig_target = v.pid;
		CHECK(pthread_create(&t, NULL, usr1_sender, NULL) == 0, "pthread_create");
		r = revoke_explained(tpath);
		pthread_join(t, NULL);
		CHECK(r == 0, "round %d: revoke: %s", round, strerror(errno));
		if (!restart) {
			m = recv_msg(&v);
			CHECK(m.v[0] == -1 && m.v[1] == EINTR && m.v[2] == 1,
			      "round %d: read returned %lld (%s) with the handler run %lld times; "
			      "expected EINTR once",
			      round, (long long)m.v[0], strerror((int)m.v[1]), (long long)m.v[2]);
		} else {
			/* Nothing to read yet: the read must still be waiting. */
			CHECK(recv_msg_timeout(v.sock, &m, 200) == -ETIMEDOUT,
			      "round %d: read returned %lld (%s) before there was anything to read",
			      round, (long long)m.v[0], strerror((int)m.v[1]));
			CHECK(write(g_pipe[1], "z", 1) == 1, "write: %s", strerror(errno));
			m = recv_msg(&v);
			CHECK(m.v[0] == 1 && m.v[3] == 'z' && m.v[2] == 1,
			      "round %d: read returned %lld (%s) byte %#llx with the handler run "
			      "%lld "
			      "times; expected the byte after one handler run",
			      round, (long long)m.v[0], strerror((int)m.v[1]), (long long)m.v[3],
			      (long long)m.v[2]);
		}
		send_msg(v.sock, MSG(CMD_GO));
		check_victim_fd_dead(&v);
		close(v.sock);
		unlink(tpath);
		test_make_file(tpath, "hello", 0);
	}
}

/* ---- a SIGSTOP that arrives during the revoke is not lost ---- */

static void *stop_sender(void *arg)
{
	(void)arg;
	wait_traced(g_sig_target);
	kill(g_sig_target, SIGSTOP);
	return NULL;
}

static void t_sigstop_during_revoke_kept(void)
{
	make_scratch();
	test_make_file(tpath, "hello", 0);
	for (int round = 0; round < 4; round++) {
		struct victim v = victim_run(v_idle);
		pthread_t t;
		int r, i;

		recv_msg(&v);
		CHECK(wait_in_syscall(v.pid, v.pid, SYS_recvfrom, SYS_poll),
		      "victim never blocked");
		g_sig_target = v.pid;
		CHECK(pthread_create(&t, NULL, stop_sender, NULL) == 0, "pthread_create");
		r = revoke_explained(tpath);
		pthread_join(t, NULL);
		CHECK(r == 0, "round %d: revoke: %s", round, strerror(errno));
		for (i = 0; i < 200 && proc_state(v.pid) != 'T'; i++)
			msleep(10);
		CHECK(proc_state(v.pid) == 'T', "round %d: SIGSTOP lost: victim state %c", round,
		      proc_state(v.pid));
		CHECK(proc_status_field(v.pid, "TracerPid") == 0, "round %d: victim left traced",
		      round);
		CHECK(kill(v.pid, SIGCONT) == 0, "kill: %s", strerror(errno));
		send_msg(v.sock, MSG(CMD_GO));
		check_victim_fd_dead(&v);
		close(v.sock);
		unlink(tpath);
		test_make_file(tpath, "hello", 0);
	}
}

/* ---- a CLONE_FILES sibling blocked in read on the target FIFO ---- */

static int clone_files_child(void *arg)
{
	int sock = (int)(intptr_t)arg;
	struct timespec ts = {.tv_sec = 30, .tv_nsec = 0};
	char b;
	ssize_t r;

	send_msg(sock, MSG(getpid()));
	errno = 0;
	r = read(g_fd, &b, 1);
	send_msg(sock, MSG(r, r < 0 ? errno : 0));
	nanosleep(&ts, NULL);
	return 0;
}

static void v_clone_files(int sock)
{
	g_fd = open(tpath, O_RDWR | O_CLOEXEC);
	if (g_fd < 0)
		_exit(2);
	if (test_clone(clone_files_child, (void *)(intptr_t)sock, CLONE_FILES) < 0)
		_exit(2);
	msg_wait(sock);
}

static void t_clone_files_blocked_reader(void)
{
	struct victim v;
	struct msg m;
	pid_t child;
	int r;

	make_scratch();
	CHECK(mkfifo(tpath, 0600) == 0, "mkfifo: %s", strerror(errno));
	v = victim_run(v_clone_files);
	child = (pid_t)recv_msg(&v).v[0];
	CHECK(child != v.pid, "no CLONE_FILES process");
	CHECK(wait_in_syscall(child, child, SYS_read, -1),
	      "CLONE_FILES process never blocked in read");
	CHECK(revoke_explained(tpath) == 0, "revoke: %s", strerror(errno));
	r = recv_msg_timeout(v.sock, &m, 3000);
	CHECK(r == 0, "the CLONE_FILES process is still blocked in read on the revoked FIFO");
	CHECK(m.v[0] == -1 && m.v[1] == EBADF, "its read returned %lld (%s), not EBADF",
	      (long long)m.v[0], strerror((int)m.v[1]));
}

/* ---- waitpid() for a child restarts ---- */

static void v_waiter(int sock)
{
	pid_t child, r;
	int status = 0, e;

	g_fd = open(tpath, O_RDONLY | O_CLOEXEC);
	if (g_fd < 0)
		_exit(2);
	child = test_fork();
	if (child == 0) {
		char b;

		while (read(g_pipe[0], &b, 1) < 0 && errno == EINTR)
			;
		_exit(42);
	}
	send_msg(sock, MSG(getpid(), child));
	errno = 0;
	r = waitpid(child, &status, 0);
	e = r < 0 ? errno : 0;
	send_msg(sock, MSG(r, e, status));
	check_own_fd_dead(sock);
	msg_wait(sock);
}

static void t_waitpid_restarts(void)
{
	struct victim v;
	struct msg m;
	pid_t child;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	CHECK(pipe2(g_pipe, O_CLOEXEC) == 0, "pipe2: %s", strerror(errno));
	v = victim_run(v_waiter);
	child = (pid_t)recv_msg(&v).v[1];
	CHECK(wait_in_syscall(v.pid, v.pid, SYS_wait4, SYS_waitid), "victim never waited");
	CHECK(revoke_explained(tpath) == 0, "revoke: %s", strerror(errno));
	CHECK(recv_msg_timeout(v.sock, &m, 300) == -ETIMEDOUT,
	      "waitpid returned before the child exited: %lld (%s)", (long long)m.v[0],
	      strerror((int)m.v[1]));
	CHECK(write(g_pipe[1], "x", 1) == 1, "write: %s", strerror(errno));
	m = recv_msg(&v);
	CHECK(m.v[0] == child && WIFEXITED((int)m.v[2]) && WEXITSTATUS((int)m.v[2]) == 42,
	      "waitpid returned %lld (%s) status %#llx, expected child %d exiting 42",
	      (long long)m.v[0], strerror((int)m.v[1]), (long long)m.v[2], (int)child);
	check_victim_fd_dead(&v);
}

/* ---- pause() is not woken by the revoke, only by the signal ---- */

static void v_pauser(int sock)
{
	struct sigaction su = {.sa_handler = on_usr1, .sa_flags = SA_RESTART};
	int r, e;

	sigaction(SIGUSR1, &su, NULL);
	g_fd = open(tpath, O_RDONLY | O_CLOEXEC);
	if (g_fd < 0)
		_exit(2);
	send_msg(sock, MSG(getpid()));
	errno = 0;
	r = pause();
	e = errno;
	send_msg(sock, MSG(r, e, g_nusr1));
	check_own_fd_dead(sock);
	msg_wait(sock);
}

static void t_pause_not_woken(void)
{
	struct victim v;
	struct msg m;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	v = victim_run(v_pauser);
	recv_msg(&v);
	CHECK(wait_in_syscall(v.pid, v.pid, SYS_pause, SYS_rt_sigsuspend), "victim never paused");
	CHECK(revoke_explained(tpath) == 0, "revoke: %s", strerror(errno));
	CHECK(recv_msg_timeout(v.sock, &m, 300) == -ETIMEDOUT,
	      "pause returned without a signal: %lld (%s)", (long long)m.v[0],
	      strerror((int)m.v[1]));
	CHECK(kill(v.pid, SIGUSR1) == 0, "kill: %s", strerror(errno));
	m = recv_msg(&v);
	CHECK(m.v[0] == -1 && m.v[1] == EINTR && m.v[2] == 1,
	      "pause returned %lld (%s) with the handler run %lld times", (long long)m.v[0],
	      strerror((int)m.v[1]), (long long)m.v[2]);
	check_victim_fd_dead(&v);
}

/* ---- a holder that is itself a tracer keeps its tracee ---- */

static pid_t g_tracee;

static void v_tracer_holder(int sock)
{
	int status = 0, e;
	pid_t r;

	g_fd = open(tpath, O_RDONLY | O_CLOEXEC);
	if (g_fd < 0)
		_exit(2);
	if (ptrace(PTRACE_SEIZE, g_tracee, 0, 0) < 0)
		_exit(2);
	send_msg(sock, MSG(getpid()));
	errno = 0;
	r = waitpid(g_tracee, &status, __WALL);
	e = r < 0 ? errno : 0;
	send_msg(sock, MSG(r, e, status));
	if (r == g_tracee && WIFSTOPPED(status))
		ptrace(PTRACE_CONT, g_tracee, 0, (void *)(long)WSTOPSIG(status));
	check_own_fd_dead(sock);
	msg_wait(sock);
}

static void v_plain(int sock)
{
	struct sigaction su = {.sa_handler = on_usr1, .sa_flags = SA_RESTART};

	sigaction(SIGUSR1, &su, NULL);
	send_msg(sock, MSG(getpid()));
	for (int i = 0; i < 100; i++) {
		msg_wait(sock);
		send_msg(sock, MSG(g_nusr1));
	}
}

static void t_tracer_holder_keeps_tracee(void)
{
	struct victim x, t;
	struct msg m;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	x = victim_run(v_plain);
	recv_msg(&x);
	g_tracee = x.pid;
	t = victim_run(v_tracer_holder);
	recv_msg(&t);
	CHECK(proc_status_field(x.pid, "TracerPid") == t.pid, "tracee not traced by the holder");
	CHECK(wait_in_syscall(t.pid, t.pid, SYS_wait4, SYS_waitid), "tracer never waited");
	CHECK(revoke_explained(tpath) == 0, "revoke: %s", strerror(errno));
	CHECK(proc_status_field(x.pid, "TracerPid") == t.pid,
	      "the holder's tracee now has TracerPid %ld, not the holder %d",
	      proc_status_field(x.pid, "TracerPid"), (int)t.pid);
	CHECK(recv_msg_timeout(t.sock, &m, 300) == -ETIMEDOUT,
	      "the tracer's waitpid returned early: %lld (%s) status %#llx", (long long)m.v[0],
	      strerror((int)m.v[1]), (long long)m.v[2]);
	CHECK(kill(x.pid, SIGUSR1) == 0, "kill: %s", strerror(errno));
	m = recv_msg(&t);
	CHECK(m.v[0] == x.pid && WIFSTOPPED((int)m.v[2]) && WSTOPSIG((int)m.v[2]) == SIGUSR1,
	      "the tracer's waitpid gave %lld (%s) status %#llx, not the tracee's SIGUSR1 stop",
	      (long long)m.v[0], strerror((int)m.v[1]), (long long)m.v[2]);
	check_victim_fd_dead(&t);
	send_msg(x.sock, MSG(CMD_GO));
	m = recv_msg(&x);
	CHECK(m.v[0] == 1, "tracee's handler ran %lld times", (long long)m.v[0]);
}

/* ---- a holder busy in system calls: none fails, none runs twice ---- */

#define NBUSY_TARGETS 5

static char g_busy_log[160];

static void v_busy_syscalls(int sock)
{
	int fds[NBUSY_TARGETS], log, e0 = 0;
	int64_t n = 0, bad = 0, r0 = 0, dead = 0;
	pid_t me = getpid();

	for (int i = 0; i < NBUSY_TARGETS; i++) {
		char path[200];

		snprintf(path, sizeof(path), "%s.%d", tpath, i);
		fds[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (fds[i] < 0)
			_exit(2);
	}
	log = open(g_busy_log, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (log < 0)
		_exit(2);
	send_msg(sock, MSG(me));
	for (; n < 20000000 && !*g_word; n++) {
		ssize_t r;

		errno = 0;
		r = write(log, "x", 1);
		if (r != 1 || syscall(SYS_getpid) != me) {
			if (!bad++) {
				r0 = r;
				e0 = errno;
			}
			if (r != 1)
				n--; /* count only the bytes that were written */
		}
	}
	for (int i = 0; i < NBUSY_TARGETS; i++) {
		char b;

		dead += read(fds[i], &b, 1) == -1 && errno == EBADF;
	}
	send_msg(sock, MSG(n, bad, r0, e0, dead));
	msg_wait(sock);
}

static void t_busy_syscall_loop(void)
{
	struct victim v;
	struct stat st;
	struct msg m;

	make_scratch();
	for (int i = 0; i < NBUSY_TARGETS; i++) {
		char path[200];

		snprintf(path, sizeof(path), "%s.%d", tpath, i);
		test_make_file(path, "hello", 0);
	}
	snprintf(g_busy_log, sizeof(g_busy_log), "%s/log", tdir);
	test_make_file(g_busy_log, "", 0);
	g_word = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(g_word != MAP_FAILED, "mmap: %s", strerror(errno));
	v = victim_run(v_busy_syscalls);
	recv_msg(&v);
	msleep(20);
	for (int i = 0; i < NBUSY_TARGETS; i++) {
		char path[200];

		snprintf(path, sizeof(path), "%s.%d", tpath, i);
		CHECK(revoke_explained(path) == 0, "revoke %s: %s", path, strerror(errno));
	}
	*g_word = 1;
	m = recv_msg(&v);
	CHECK(m.v[1] == 0, "%lld system calls went wrong, the first returned %lld (%s)",
	      (long long)m.v[1], (long long)m.v[2], strerror((int)m.v[3]));
	CHECK(stat(g_busy_log, &st) == 0, "stat: %s", strerror(errno));
	CHECK(st.st_size == m.v[0], "%lld one-byte writes succeeded but the file has %lld bytes",
	      (long long)m.v[0], (long long)st.st_size);
	CHECK(m.v[4] == NBUSY_TARGETS, "only %lld of the %d revoked fds are dead",
	      (long long)m.v[4], NBUSY_TARGETS);
}

/* ---- a holder blocked in a syscall with almost no stack left below it ---- */

#ifdef __x86_64__
/* read() with the stack pointer at TOP: a coroutine or a sigaltstack handler
 * near the end of its small stack. Nothing may be written far below TOP. */
static long read_on_stack(int fd, void *buf, size_t len, void *top)
{
	long ret;

	__asm__ volatile("mov %%rsp, %%r12\n\t"
			 "mov %[top], %%rsp\n\t"
			 "syscall\n\t"
			 "mov %%r12, %%rsp\n\t"
			 : "=a"(ret)
			 : "a"((long)SYS_read), "D"((long)fd), "S"(buf), "d"(len), [top] "r"(top)
			 : "rcx", "r11", "r12", "memory");
	return ret;
}
#elif defined(__aarch64__)
static long read_on_stack(int fd, void *buf, size_t len, void *top)
{
	register long x8 __asm__("x8") = SYS_read;
	register long x0 __asm__("x0") = fd;
	register long x1 __asm__("x1") = (long)buf;
	register long x2 __asm__("x2") = (long)len;

	__asm__ volatile("mov x19, sp\n\t"
			 "mov sp, %[top]\n\t"
			 "svc #0\n\t"
			 "mov sp, x19\n\t"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), [top] "r"(top)
			 : "x19", "memory");
	return x0;
}
#endif

static void v_tiny_stack(int sock)
{
#if defined(__x86_64__) || defined(__aarch64__)
	long page = sysconf(_SC_PAGESIZE), r;
	char *area =
	    mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char buf[8] = {0};

	if (area == MAP_FAILED || mprotect(area, page, PROT_NONE) < 0)
		_exit(2);
	g_fd = open(tpath, O_RDONLY | O_CLOEXEC);
	if (g_fd < 0)
		_exit(2);
	send_msg(sock, MSG(getpid()));
	/* 64 bytes of stack above a PROT_NONE page. */
	r = read_on_stack(g_pipe[0], buf, sizeof(buf), area + page + 64);
	send_msg(sock, MSG(r, buf[0]));
	check_own_fd_dead(sock);
	msg_wait(sock);
#else
	(void)sock;
	_exit(2);
#endif
}

static void t_tiny_stack_holder(void)
{
#if !defined(__x86_64__) && !defined(__aarch64__)
	SKIP("the stack switch is written for x86_64 and aarch64");
#else
	struct victim v;
	struct msg m;
	int r, e;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	CHECK(pipe2(g_pipe, O_CLOEXEC) == 0, "pipe2: %s", strerror(errno));
	v = victim_run(v_tiny_stack);
	recv_msg(&v);
	CHECK(wait_in_syscall(v.pid, v.pid, SYS_read, -1), "victim never blocked in read");
	r = revoke(tpath);
	e = errno;
	CHECK(write(g_pipe[1], "z", 1) == 1, "write: %s", strerror(errno));
	m = recv_msg(&v);
	CHECK(m.v[0] == 1 && m.v[1] == 'z', "read on the small stack returned %lld",
	      (long long)m.v[0]);
	if (engine_native()) {
		/* The kernel runs nothing in the holder: its stack does not
		 * matter, the descriptor is revoked like any other. */
		CHECK(r == 0, "native revoke of a holder with 64 bytes of stack left: %s",
		      strerror(e));
		check_victim_fd_dead(&v);
		return;
	}
	/* After the victim's survival, so that a failure says both. The cut's
	 * frame and program go below the stack pointer, and there is no room:
	 * refused before anything ran, the descriptor untouched. */
	CHECK(r == -1 && e == EBUSY, "revoke of a holder with 64 bytes of stack left: %d %s", r,
	      strerror(e));
	check_victim_fd_alive(&v);
#endif
}

static const struct blocked_row {
	struct test_row t;
	void (*before_revoke)(const struct victim *v);
} blocked_reads[] = {
    {{"blocked_read_other_pipe", 30}, NULL},
    {{"no_process_vm_calls", 30}, deny_process_vm_calls},
};

static void blocked_read_row(const void *row)
{
	blocked_read_case(((const struct blocked_row *)row)->before_revoke);
}

static const struct signal_row {
	struct test_row t;
	bool restart;
	int rounds;
} signal_reads[] = {
    {{"signal_interrupts_read_during", 60}, false, 10},
    {{"signal_restarts_read_during", 40}, true, 3},
};

static void signal_read_row(const void *row)
{
	const struct signal_row *r = row;

	signal_during_read(r->restart, r->rounds);
}

TEST_MAIN("revoke-transparent", TEST_TABLE(blocked_reads, blocked_read_row),
	  {"nanosleep_full_length", t_nanosleep_full_length, 30},
	  {"poll_restarts", t_poll_restarts, 30}, {"futex_restarts", t_futex_restarts, 30},
	  {"signals_pending_kept", t_signals_pending_kept, 30},
	  {"signals_queued_during", t_signals_queued_during, 30},
	  {"signals_unblocked_during", t_signals_unblocked_during, 30},
	  {"registers_intact", t_registers_intact, 60},
	  {"sigstopped_stays_stopped", t_sigstopped_stays_stopped, 30},
	  {"seccomp_kill_dup3_survives", t_seccomp_kill_dup3_survives, 30},
	  {"many_threads_fifo", t_many_threads_fifo, 30},
	  {"zombie_leader_threads", t_zombie_leader_threads, 30},
	  TEST_TABLE(signal_reads, signal_read_row),
	  {"sigstop_during_revoke_kept", t_sigstop_during_revoke_kept, 40},
	  {"clone_files_blocked_reader", t_clone_files_blocked_reader, 30},
	  {"waitpid_restarts", t_waitpid_restarts, 30}, {"pause_not_woken", t_pause_not_woken, 30},
	  {"tracer_holder_keeps_tracee", t_tracer_holder_keeps_tracee, 30},
	  {"busy_syscall_loop", t_busy_syscall_loop, 60},
	  {"tiny_stack_holder", t_tiny_stack_holder, 30}, )
