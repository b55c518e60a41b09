/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The holders of tests/kill/test-killtrials.c (included there only): their shapes,
 * the shared memory where each thread counts its progress and records what
 * went wrong, the workloads (the register workload and SIGBUS probe of
 * tests/lib/busy.h), and holder_main() which a child of the driver runs.
 * See test-killtrials.c for what is checked and why.
 */
#ifndef REVOKE_TEST_KILLTRIALS_HOLDERS_H
#define REVOKE_TEST_KILLTRIALS_HOLDERS_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "busy.h"
#include "fork.h"
#include "proc.h"

#define MAX_HOLDERS 1000
#define MAX_WORKERS 4
#define MAX_FDS	    64
#define GRACE_NS    (2 * 1000000000ULL)
#define PAGE	    4096

/* Fixed descriptor numbers in every holder. */
enum {
	FD_FILE_RO = 20, /* FILE, O_RDONLY */
	FD_FILE_RW,	 /* FILE, O_RDWR|O_CLOEXEC */
	FD_ZERO,	 /* /dev/zero: not a target */
	FD_PIPE_R,	 /* a pipe of its own: not a target */
	FD_PIPE_W,
	FD_FIFO, /* the FIFO (O_RDWR), readers only */
};

/* ---- shapes ----------------------------------------------------------------- */

enum work { W_COMPUTE, W_FIFO, W_SLEEP, W_MMAP };
static const char *const work_name[] = {"compute", "fifo", "sleep", "mmap"};

enum kind { K_COMPUTE, K_FIFO, K_SLEEP, K_MMAP, K_THREADS, K_SIGMASK, K_STOPPED, NKINDS };
static const char *const kind_name[NKINDS] = {"compute", "fifo",    "sleep",  "mmap",
					      "threads", "sigmask", "stopped"};
static const struct {
	int n;
	enum work w[MAX_WORKERS];
} kinds[NKINDS] = {
    [K_COMPUTE] = {1, {W_COMPUTE}},
    [K_FIFO] = {1, {W_FIFO}},
    [K_SLEEP] = {1, {W_SLEEP}},
    [K_MMAP] = {1, {W_MMAP}},
    [K_THREADS] = {4, {W_COMPUTE, W_FIFO, W_SLEEP, W_MMAP}},
    [K_SIGMASK] = {2, {W_SLEEP, W_MMAP}}, /* each thread blocks signals of its own */
    [K_STOPPED] = {2, {W_COMPUTE, W_SLEEP}},
};

/* ---- shared memory, one slot per holder thread ------------------------------- */

enum fifo_state { FIFO_WAITING, FIFO_GOT, FIFO_EBADF, FIFO_BAD };

struct slot {
	_Atomic uint64_t progress;
	_Atomic int ready;
	_Atomic int nviol;
	_Atomic int fifo; /* enum fifo_state */
	_Atomic int sigbus;
	pid_t tid;
	int work;
	uint64_t map_start[2], map_end[2];
	char msg[200]; /* the first violation it saw */
};

struct shared {
	_Atomic int exit_now;
	struct slot slot[MAX_HOLDERS][MAX_WORKERS];
};

static struct shared *sh;

/* ---- what the holders are told ------------------------------------------------ */

static char file_path[128], fifo_path[128]; /* the targets */
static bool have_avx;
/* The holders' sleeps grow with their number, so that all of them together
 * wake the machine about as often as 48 do. */
static uint64_t pace = 1;

static uint8_t file_byte(uint64_t off)
{
	return (uint8_t)(off * 7 + 3);
}

/* ---- the holders (forked children) ---------------------------------------------- */

static __attribute__((format(printf, 2, 3))) void violation(struct slot *s, const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&s->nviol, 1) != 0)
		return;
	va_start(ap, fmt);
	vsnprintf(s->msg, sizeof(s->msg), fmt, ap);
	va_end(ap);
}

static bool exiting(void)
{
	return atomic_load(&sh->exit_now) != 0;
}

static void work_compute(struct slot *s)
{
	uint64_t state = (uint64_t)s->tid * 0x100000001ULL;
	struct busy_regs in;
	char what[160];

	/* A short spin (a stop lands in user mode), then a sleep with every
	 * register loaded (a stop lands in the system call): little CPU, so the
	 * command is not starved. */
	while (!exiting()) {
		busy_regs_fill(&in, &state);
		if (busy_regs_check(&in, 100000, have_avx, what, sizeof(what)) < 0)
			violation(s, "%s", what);
		busy_regs_fill(&in, &state);
		if (busy_regs_nanosleep(&in, 2000000 * pace, have_avx, what, sizeof(what)) < 0)
			violation(s, "%s", what);
		atomic_fetch_add(&s->progress, 1);
	}
}

static void idle(struct slot *s)
{
	while (!exiting()) {
		sleep_ns(5000000 * pace);
		atomic_fetch_add(&s->progress, 1);
	}
}

static void work_fifo(struct slot *s)
{
	uint8_t c = 0;
	ssize_t n;

	/* One byte or EBADF, nothing else; EINTR is damage too (no handler
	 * runs here: SIGBUS is the only one installed). */
	n = read(FD_FIFO, &c, 1);
	if (n == 1 && c == 'x') {
		atomic_store(&s->fifo, FIFO_GOT);
		atomic_fetch_add(&s->progress, 1);
	} else if (n < 0 && errno == EBADF) {
		atomic_store(&s->fifo, FIFO_EBADF);
	} else {
		if (n == 1)
			violation(s, "FIFO read() gave byte %#x, expected 'x'", c);
		else if (n < 0)
			violation(s, "FIFO read() failed with %s, expected 1 byte or EBADF",
				  strerrorname_np(errno) ? strerrorname_np(errno) : "?");
		else
			violation(s, "FIFO read() returned %zd, expected 1 or -1/EBADF", n);
		atomic_store(&s->fifo, FIFO_BAD);
	}
	idle(s);
}

static void work_sleep(struct slot *s)
{
	uint64_t len = (2000000 + (uint64_t)(s->tid % 4) * 1000000) * pace; /* 2-5 ms */

	while (!exiting()) {
		struct timespec req = {0, (long)len};
		uint64_t t0 = now_ns(), dt;
		long r;

		r = syscall(SYS_nanosleep, &req, NULL);
		dt = now_ns() - t0;
		if (r != 0)
			violation(s, "nanosleep(%" PRIu64 " us) returned %ld (%s)", len / 1000, r,
				  r < 0 ? strerrorname_np(errno) : "no error");
		else if (dt < len)
			violation(s, "nanosleep(%" PRIu64 " us) returned after %" PRIu64 " us",
				  len / 1000, dt / 1000);
		atomic_fetch_add(&s->progress, 1);
	}
}

static void work_mmap(struct slot *s)
{
	const uint8_t *m[2];
	uint64_t off[2] = {0, PAGE};
	size_t len[2] = {2 * PAGE, PAGE};
	unsigned int i = 0;

	m[0] = mmap(NULL, len[0], PROT_READ, MAP_SHARED, FD_FILE_RO, 0);
	m[1] = mmap(NULL, len[1], PROT_READ, MAP_PRIVATE, FD_FILE_RO, PAGE);
	if (m[0] == MAP_FAILED || m[1] == MAP_FAILED) {
		violation(s, "mmap: %s", strerror(errno));
		idle(s);
		return;
	}
	for (int k = 0; k < 2; k++) {
		s->map_start[k] = (uint64_t)(uintptr_t)m[k];
		s->map_end[k] = (uint64_t)(uintptr_t)m[k] + len[k];
	}
	atomic_store(&s->ready, 1);
	while (!exiting()) {
		for (int k = 0; k < 2; k++) {
			uint64_t o = (i * 97u) % len[k];
			uint8_t b;

			if (busy_probe(m[k] + o, &b) != 0)
				atomic_fetch_add(&s->sigbus, 1);
			else if (b != file_byte(off[k] + o))
				violation(s, "mapping byte %#" PRIx64 " is %#x, expected %#x",
					  off[k] + o, b, file_byte(off[k] + o));
		}
		i++;
		atomic_fetch_add(&s->progress, 1);
		sleep_ns(2000000 * pace);
	}
}

static void block_own_signals(int thread)
{
	sigset_t set;

	sigemptyset(&set);
	if (thread == 0) {
		sigaddset(&set, SIGUSR1);
		sigaddset(&set, SIGWINCH);
		sigaddset(&set, SIGRTMIN + 2);
	} else {
		sigaddset(&set, SIGUSR2);
		sigaddset(&set, SIGALRM);
		sigaddset(&set, SIGTERM);
		sigaddset(&set, SIGRTMAX - 1);
	}
	pthread_sigmask(SIG_SETMASK, &set, NULL);
}

struct worker_arg {
	struct slot *s;
	enum kind kind;
	int index;
};

static void *worker(void *p)
{
	struct worker_arg *a = p;
	struct slot *s = a->s;

	s->tid = (pid_t)syscall(SYS_gettid);
	if (a->kind == K_SIGMASK)
		block_own_signals(a->index);
	if (s->work != W_MMAP) /* the mapper says it is ready once it has mapped */
		atomic_store(&s->ready, 1);
	switch (s->work) {
	case W_COMPUTE:
		work_compute(s);
		break;
	case W_FIFO:
		work_fifo(s);
		break;
	case W_SLEEP:
		work_sleep(s);
		break;
	case W_MMAP:
		work_mmap(s);
		break;
	}
	return NULL;
}

static void move_fd(int fd, int to)
{
	if (fd < 0 || dup3(fd, to, 0) < 0)
		_exit(90);
	close(fd);
}

/* In a child of the driver (test_fork()). */
static __attribute__((noreturn)) void holder_main(int h, enum kind kind)
{
	struct worker_arg args[MAX_WORKERS];
	pthread_t th[MAX_WORKERS];
	int null, p[2];
	bool fifo = false;

	close_range(3, ~0U, 0);
	null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		close(null);
	}
	move_fd(open(file_path, O_RDONLY), FD_FILE_RO);
	move_fd(open(file_path, O_RDWR), FD_FILE_RW);
	if (fcntl(FD_FILE_RW, F_SETFD, FD_CLOEXEC) < 0)
		_exit(92);
	move_fd(open("/dev/zero", O_RDONLY), FD_ZERO);
	if (pipe(p) < 0)
		_exit(93);
	move_fd(p[0], FD_PIPE_R);
	move_fd(p[1], FD_PIPE_W);
	for (int i = 0; i < kinds[kind].n; i++)
		fifo |= kinds[kind].w[i] == W_FIFO;
	if (fifo) /* O_RDWR: a writer itself, so read() waits instead of seeing EOF */
		move_fd(open(fifo_path, O_RDWR), FD_FIFO);
	if (busy_sigbus_install() < 0)
		_exit(94);

	for (int i = 0; i < kinds[kind].n; i++) {
		args[i] = (struct worker_arg){.s = &sh->slot[h][i], .kind = kind, .index = i};
		if (i > 0 && pthread_create(&th[i], NULL, worker, &args[i]) != 0)
			_exit(95);
	}
	worker(&args[0]);
	for (int i = 1; i < kinds[kind].n; i++)
		pthread_join(th[i], NULL);
	_exit(busy_stray_sigbus ? 96 : 0);
}

#endif
