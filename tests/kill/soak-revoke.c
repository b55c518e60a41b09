/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Soak: thousands of revocations of one file against busy multithreaded
 * holders, counting everything that must not happen. Not part of CI; see
 * HACKING.md ("Soak"). Usage: soak-revoke --help.
 *
 * Each holder (a forked child with PR_SET_PDEATHSIG) runs nine threads:
 *   cycler    holds the target at fd 100 and maps it; once it sees both cut
 *             (pread EBADF, SIGBUS on the mapping) it opens and maps it again
 *   writer    writes a counter stream into a pipe of its own ...
 *   reader    ... and checks every byte of it (no loss, no duplicate)
 *   rt sender queues SIGRTMIN+1 to the receiver with a sequence number ...
 *   receiver  ... whose handler checks the sequence; SIGUSR1 goes the same
 *             way one at a time (a standard signal is not queued)
 *   mapper    maps, fills, checks and unmaps anonymous memory
 *   compute   the register workload of busy.h (spin and nanosleep)
 *   sleeper   nanosleep never early, never EINTR
 *   main      fstat()s its ten non-target descriptors every 2 ms: same file,
 *             same flags
 * The driver revokes the target (librevoke, or tools/revoke with --command)
 * once every holder holds it again, checks that each holder then saw its cut,
 * and every few revocations looks at each holder from outside: alive, not
 * stopped, not traced, every thread's signal mask as it was, every
 * non-target descriptor the same file (fstat identity through /proc), no
 * descriptor that is neither. At the end every signal sent must have arrived.
 * One PASS/FAIL line per kind of check, then "N passed, N failed, 0 skipped".
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/user.h>
#include <sys/wait.h>

#include "busy.h"
#include "fork.h"
#include "proc.h"
#include "scratch.h"
#include "revoke.h"

#ifndef REVOKE_BUILDDIR
#error "REVOKE_BUILDDIR must be defined by the build"
#endif

#define MAX_HOLDERS 64
#define NTHREADS    9
#define PAGE	    4096
#define FILE_SIZE   (2 * PAGE)

/* Descriptors of every holder: the target, then ten that are not. */
enum {
	FD_T = 100,
	FD_ZERO,
	FD_PIPE_R,
	FD_PIPE_W,
	FD_SOCK0,
	FD_SOCK1,
	FD_MEMFD,
	FD_EVENTFD,
	FD_OTHER, /* a regular file that is not the target */
	FD_DIR,
	FD_LAST = FD_DIR,
};

enum { T_CYCLER, T_WRITER, T_READER, T_RTSEND, T_RECEIVER, T_MAPPER, T_COMPUTE, T_SLEEPER };
static const char *const thread_name[NTHREADS] = {
    "cycler", "writer", "reader", "rt-sender", "receiver", "mapper", "compute", "sleeper", "main"};

enum counter {
	C_CUTS,	      /* cuts the cycler saw */
	C_HALF,	      /* fd cut but mapping intact, or the reverse, twice in a row */
	C_TARGET_BAD, /* the target read back wrong bytes */
	C_PIPE_BYTES,
	C_PIPE_BAD,
	C_RT_SENT,
	C_RT_RECV,
	C_RT_ORDER,
	C_USR_SENT,
	C_USR_RECV,
	C_USR_STALL, /* a SIGUSR1 not delivered within 2 s */
	C_MAPS,
	C_MAP_BAD,
	C_REGS,
	C_REGS_BAD,
	C_SLEEPS,
	C_SLEEP_BAD,
	C_FD_CHECKS,
	C_FD_BAD,
	C_STRAY_SIGBUS,
	NCOUNTERS
};

struct hshared {
	_Atomic int ready;
	_Atomic int holding; /* the cycler holds the target (fd and mapping) */
	_Atomic uint64_t c[NCOUNTERS];
	pid_t tids[NTHREADS];
	_Atomic int nviol;
	char msg[240]; /* the first violation */
};

struct shared {
	_Atomic int stop;
	struct hshared h[MAX_HOLDERS];
};

static struct shared *sh;
static struct hshared *me; /* in a holder */
static char tdir[64], tpath[128], opath[128];
static bool have_avx;
/* The holders' sleeps grow with their number: all of them together keep the
 * machine about as busy as six do. */
static uint64_t pace = 1;

static struct {
	long revocations;
	double seconds;
	int holders;
	int check_every;
	bool command;
	bool sabotage;
	bool best_effort;
	unsigned int discovery;
	int timeout_ms;
} opt = {.revocations = 10000,
	 .holders = 6,
	 .check_every = 10,
	 .timeout_ms = 5000,
	 .discovery = REVOKE_DISCOVERY_PROC};

static uint8_t file_byte(uint64_t off)
{
	return (uint8_t)(off * 13 + 5);
}

static __attribute__((format(printf, 1, 2))) void violation(const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&me->nviol, 1) != 0)
		return;
	va_start(ap, fmt);
	vsnprintf(me->msg, sizeof(me->msg), fmt, ap);
	va_end(ap);
}

static bool stopping(void)
{
	return atomic_load(&sh->stop) != 0;
}

static void count(enum counter c)
{
	atomic_fetch_add(&me->c[c], 1);
}

/* ---- holder threads -------------------------------------------------------- */

static void block_pingpong(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGRTMIN + 1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

static void cycler(void)
{
	volatile uint8_t *map = NULL;
	uint64_t i = 0;
	int mixed = 0;

	while (!stopping()) {
		uint8_t buf[16], b;
		ssize_t n;
		bool fd_cut, map_cut;
		uint64_t off = (i++ * 97) % FILE_SIZE;

		if (!map) {
			int fd = open(tpath, O_RDWR | O_CLOEXEC);

			if (fd < 0 || dup3(fd, FD_T, O_CLOEXEC) < 0) {
				violation("cycler: cannot open the target again: %s",
					  strerror(errno));
				sleep_ns(100000000);
				continue;
			}
			close(fd);
			map = mmap(NULL, FILE_SIZE, PROT_READ, MAP_SHARED, FD_T, 0);
			if (map == MAP_FAILED) {
				violation("cycler: mmap: %s", strerror(errno));
				map = NULL;
				continue;
			}
			atomic_store(&me->holding, 1);
		}
		n = pread(FD_T, buf, sizeof(buf), (off_t)(off & ~15ULL));
		fd_cut = n < 0 && errno == EBADF;
		if (n == (ssize_t)sizeof(buf)) {
			for (int k = 0; k < 16; k++)
				if (buf[k] != file_byte((off & ~15ULL) + (uint64_t)k)) {
					count(C_TARGET_BAD);
					violation(
					    "cycler: pread of the target gave byte %#x at %#" PRIx64
					    ", expected %#x",
					    buf[k], (uint64_t)((off & ~15ULL) + (uint64_t)k),
					    file_byte((off & ~15ULL) + (uint64_t)k));
					break;
				}
		} else if (!fd_cut) {
			count(C_TARGET_BAD);
			violation("cycler: pread returned %zd (%s)", n,
				  n < 0 ? strerror(errno) : "short");
		}
		map_cut = busy_probe(map + off, &b) != 0;
		if (!map_cut && b != file_byte(off)) {
			count(C_TARGET_BAD);
			violation("cycler: mapped byte %#x at %#" PRIx64 ", expected %#x", b, off,
				  file_byte(off));
		}
		if (fd_cut && map_cut) {
			munmap((void *)map, FILE_SIZE);
			map = NULL;
			mixed = 0;
			atomic_store(&me->holding, 0);
			count(C_CUTS);
			continue;
		}
		/* A revocation between the two looks shows one of each once;
		 * twice in a row is a holder cut in half. */
		if (fd_cut != map_cut) {
			if (++mixed >= 2) {
				count(C_HALF);
				violation("cycler: %s cut but %s intact",
					  fd_cut ? "descriptor" : "mapping",
					  fd_cut ? "mapping" : "descriptor");
			}
		} else {
			mixed = 0;
		}
		sleep_ns(1000000 * pace);
	}
}

static void writer(void)
{
	uint64_t seq = 0, chunk[64];

	while (!stopping()) {
		size_t done = 0;

		for (int k = 0; k < 64; k++)
			chunk[k] = seq++;
		while (done < sizeof(chunk) && !stopping()) {
			ssize_t n = write(FD_PIPE_W, (char *)chunk + done, sizeof(chunk) - done);

			if (n > 0)
				done += (size_t)n;
			else if (!(n < 0 && errno == EAGAIN)) {
				count(C_PIPE_BAD);
				violation("writer: write returned %zd (%s)", n,
					  n < 0 ? strerror(errno) : "nothing written");
				return;
			}
		}
		sleep_ns(1000000 * pace);
	}
}

static void reader(void)
{
	uint64_t expect = 0, v;
	uint8_t part[sizeof(uint64_t)];
	size_t have = 0;
	uint8_t buf[4096];

	while (!stopping()) {
		struct pollfd pfd = {.fd = FD_PIPE_R, .events = POLLIN};
		ssize_t n;

		if (poll(&pfd, 1, 100) <= 0)
			continue; /* a timeout, to look at the stop flag */
		n = read(FD_PIPE_R, buf, sizeof(buf));
		if (n < 0) {
			count(C_PIPE_BAD);
			violation("reader: read failed: %s", strerror(errno));
			return;
		}
		atomic_fetch_add(&me->c[C_PIPE_BYTES], (uint64_t)n);
		for (ssize_t k = 0; k < n; k++) {
			part[have++] = buf[k];
			if (have < sizeof(part))
				continue;
			have = 0;
			memcpy(&v, part, sizeof(v));
			if (v != expect) {
				count(C_PIPE_BAD);
				violation("reader: pipe gave %" PRIu64 ", expected %" PRIu64, v,
					  expect);
				expect = v;
			}
			expect++;
		}
	}
}

static _Atomic int rt_expect;
static pthread_t receiver_thread;

static void on_rt(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (si->si_value.sival_int != atomic_load(&rt_expect))
		count(C_RT_ORDER);
	atomic_store(&rt_expect, si->si_value.sival_int + 1);
	count(C_RT_RECV);
}

static void on_usr1(int sig)
{
	(void)sig;
	count(C_USR_RECV);
}

static void rt_sender(void)
{
	int seq = 0;
	uint64_t usr_since = 0;

	while (!stopping()) {
		/* SIGRTMIN+1 is queued: at most 16 in flight. */
		if (atomic_load(&me->c[C_RT_SENT]) - atomic_load(&me->c[C_RT_RECV]) < 16) {
			union sigval v = {.sival_int = seq};

			if (pthread_sigqueue(receiver_thread, SIGRTMIN + 1, v) == 0) {
				seq++;
				count(C_RT_SENT);
			}
		}
		/* SIGUSR1 is not queued: one at a time, the next once it arrived. */
		if (atomic_load(&me->c[C_USR_SENT]) == atomic_load(&me->c[C_USR_RECV])) {
			if (pthread_kill(receiver_thread, SIGUSR1) == 0) {
				count(C_USR_SENT);
				usr_since = now_ns();
			}
		} else if (now_ns() - usr_since > 2000000000ULL) {
			/* Late, not lost (a holder may stay stopped up to the
			 * timeout): only the final counts decide. */
			count(C_USR_STALL);
			usr_since = now_ns();
		}
		sleep_ns(1000000 * pace);
	}
}

static void receiver(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGRTMIN + 1);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	while (!stopping()) {
		struct timespec ts = {0, (long)(1000000 * pace)};

		nanosleep(&ts, NULL); /* EINTR is expected here: the handlers run */
	}
	/* Let what is in flight arrive before the counts are compared. */
	for (int k = 0;
	     k < 2000 && (atomic_load(&me->c[C_RT_SENT]) != atomic_load(&me->c[C_RT_RECV]) ||
			  atomic_load(&me->c[C_USR_SENT]) != atomic_load(&me->c[C_USR_RECV]));
	     k++)
		sleep_ns(1000000);
}

static void mapper(void)
{
	uint64_t round = 0;

	while (!stopping()) {
		size_t len = (size_t)(1 + round % 16) * PAGE;
		uint8_t *p =
		    mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			count(C_MAP_BAD);
			violation("mapper: mmap: %s", strerror(errno));
			sleep_ns(10000000);
			continue;
		}
		for (size_t k = 0; k < len; k += 64)
			p[k] = (uint8_t)(round + k);
		if (mprotect(p, len, PROT_READ) < 0) {
			count(C_MAP_BAD);
			violation("mapper: mprotect: %s", strerror(errno));
		}
		for (size_t k = 0; k < len; k += 64)
			if (p[k] != (uint8_t)(round + k)) {
				count(C_MAP_BAD);
				violation("mapper: byte %zu is %#x, expected %#x", k, p[k],
					  (uint8_t)(round + k));
				break;
			}
		munmap(p, len);
		count(C_MAPS);
		round++;
		sleep_ns(1000000 * pace);
	}
}

static void compute(void)
{
	uint64_t state = (uint64_t)getpid() << 20;
	struct busy_regs in;
	char what[160];

	while (!stopping()) {
		busy_regs_fill(&in, &state);
		if (busy_regs_check(&in, 100000, have_avx, what, sizeof(what)) < 0) {
			count(C_REGS_BAD);
			violation("compute: %s", what);
		}
		busy_regs_fill(&in, &state);
		if (busy_regs_nanosleep(&in, 2000000 * pace, have_avx, what, sizeof(what)) < 0) {
			count(C_REGS_BAD);
			violation("compute: %s", what);
		}
		count(C_REGS);
	}
}

static void sleeper(void)
{
	while (!stopping()) {
		struct timespec req = {0, (long)(3000000 * pace)};
		uint64_t t0 = now_ns(), dt;
		long r = syscall(SYS_nanosleep, &req, NULL);

		dt = now_ns() - t0;
		if (r != 0 || dt < 3000000 * pace) {
			count(C_SLEEP_BAD);
			violation("sleeper: nanosleep(3 ms) returned %ld (%s) after %" PRIu64 " us",
				  r, r < 0 ? strerror(errno) : "no error", dt / 1000);
		}
		count(C_SLEEPS);
	}
}

struct fdid {
	dev_t dev;
	ino_t ino;
	mode_t mode;
	int fdflags, flflags;
};

static int fd_identity(int fd, struct fdid *ret)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -1;
	ret->dev = st.st_dev;
	ret->ino = st.st_ino;
	ret->mode = st.st_mode;
	ret->fdflags = fcntl(fd, F_GETFD);
	ret->flflags = fcntl(fd, F_GETFL);
	return 0;
}

static void *thread_main(void *p)
{
	int which = (int)(intptr_t)p;

	me->tids[which] = (pid_t)syscall(SYS_gettid);
	if (which != T_RECEIVER)
		block_pingpong();
	switch (which) {
	case T_CYCLER:
		cycler();
		break;
	case T_WRITER:
		writer();
		break;
	case T_READER:
		reader();
		break;
	case T_RTSEND:
		rt_sender();
		break;
	case T_RECEIVER:
		receiver();
		break;
	case T_MAPPER:
		mapper();
		break;
	case T_COMPUTE:
		compute();
		break;
	case T_SLEEPER:
		sleeper();
		break;
	}
	return NULL;
}

static void place(int fd, int to)
{
	if (fd < 0 || dup3(fd, to, 0) < 0)
		_exit(90);
	close(fd);
}

static __attribute__((noreturn)) void holder_main(int h)
{
	struct fdid ids[FD_LAST - FD_ZERO + 1];
	pthread_t th[NTHREADS];
	struct sigaction sa;
	int p[2], sv[2];

	me = &sh->h[h];
	close_range(3, ~0U, 0);
	place(open("/dev/zero", O_RDONLY), FD_ZERO);
	if (pipe(p) < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		_exit(92);
	place(p[0], FD_PIPE_R);
	place(p[1], FD_PIPE_W);
	place(sv[0], FD_SOCK0);
	place(sv[1], FD_SOCK1);
	place(memfd_create("soak", 0), FD_MEMFD);
	place(eventfd(3, 0), FD_EVENTFD);
	place(open(opath, O_RDWR | O_APPEND), FD_OTHER);
	place(open(tdir, O_RDONLY | O_DIRECTORY), FD_DIR);
	fcntl(FD_EVENTFD, F_SETFD, FD_CLOEXEC);
	fcntl(FD_SOCK1, F_SETFL, O_NONBLOCK);
	for (int fd = FD_ZERO; fd <= FD_LAST; fd++)
		if (fd_identity(fd, &ids[fd - FD_ZERO]) < 0)
			_exit(93);

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_rt;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGRTMIN + 1, &sa, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	if (busy_sigbus_install() < 0)
		_exit(94);
	block_pingpong(); /* every thread but the receiver, which unblocks */

	me->tids[NTHREADS - 1] = getpid();
	if (pthread_create(&receiver_thread, NULL, thread_main, (void *)(intptr_t)T_RECEIVER) != 0)
		_exit(95);
	th[T_RECEIVER] = receiver_thread;
	for (int t = 0; t < NTHREADS - 1; t++)
		if (t != T_RECEIVER &&
		    pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t) != 0)
			_exit(95);
	while (!atomic_load(&me->holding))
		sleep_ns(1000000);
	atomic_store(&me->ready, 1);

	/* The main thread checks the non-target descriptors. */
	while (!stopping()) {
		for (int fd = FD_ZERO; fd <= FD_LAST; fd++) {
			const struct fdid *a = &ids[fd - FD_ZERO];
			struct fdid b;

			if (fd_identity(fd, &b) < 0 || b.dev != a->dev || b.ino != a->ino ||
			    b.mode != a->mode || b.fdflags != a->fdflags ||
			    b.flflags != a->flflags) {
				count(C_FD_BAD);
				violation(
				    "main: fd %d changed: dev %lx ino %lu mode %o fd flags %d "
				    "status flags %#x, was dev %lx ino %lu mode %o %d %#x",
				    fd, (unsigned long)b.dev, (unsigned long)b.ino, b.mode,
				    b.fdflags, b.flflags, (unsigned long)a->dev,
				    (unsigned long)a->ino, a->mode, a->fdflags, a->flflags);
			}
		}
		count(C_FD_CHECKS);
		sleep_ns(2000000 * pace);
	}
	for (int t = 0; t < NTHREADS - 1; t++)
		pthread_join(th[t], NULL);
	if (busy_stray_sigbus)
		atomic_fetch_add(&me->c[C_STRAY_SIGBUS], (uint64_t)busy_stray_sigbus);
	_exit(0);
}

/* ---- the driver ---------------------------------------------------------------- */

struct hview {
	pid_t pid;
	bool dead;
	int wstatus;
	uint64_t sigblk[NTHREADS];
	struct proc_fd fds[64];
	int nfds;
};

static struct hview hv[MAX_HOLDERS];
static volatile sig_atomic_t interrupted;
static pid_t driver_child;

/* SIGINT/SIGTERM: the driver stops early and still reports; main passes
 * them on to it. */
static void on_interrupt(int sig)
{
	if (driver_child > 0)
		kill(driver_child, sig);
	interrupted = 1;
}
static dev_t t_dev;
static ino_t t_ino;

struct tallies {
	long done, ok, unobserved, outside_checks, lockwaits;
	char first_lockwait[300];
	long errors[256];
	char first_error[300];
	long crashes, stuck, masks, fds_changed, fds_extra;
	char first_crash[200], first_stuck[200], first_mask[200], first_fd[200];
};

static struct tallies T;

static void note(char *first, size_t size, long *counter, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void note(char *first, size_t size, long *counter, const char *fmt, ...)
{
	va_list ap;

	if ((*counter)++ == 0) {
		va_start(ap, fmt);
		vsnprintf(first, size, fmt, ap);
		va_end(ap);
	}
}

static bool alive(int h)
{
	if (!hv[h].dead && waitpid(hv[h].pid, &hv[h].wstatus, WNOHANG) == hv[h].pid) {
		char s[64];

		hv[h].dead = true;
		test_describe_status(hv[h].wstatus, s, sizeof(s));
		note(T.first_crash, sizeof(T.first_crash), &T.crashes, "holder %d died: %s",
		     hv[h].pid, s);
	}
	return !hv[h].dead;
}

/* Every thread blocks SIGUSR1 and SIGRTMIN+1 but the receiver, which takes them. */
static uint64_t expected_mask(int t)
{
	if (t == T_RECEIVER)
		return 0;
	return (1ULL << (SIGUSR1 - 1)) | (1ULL << (SIGRTMIN + 1 - 1));
}

static void record_baseline(int h)
{
	for (int t = 0; t < NTHREADS; t++)
		hv[h].sigblk[t] = expected_mask(t);
	hv[h].nfds = proc_fds(hv[h].pid, hv[h].fds, 64);
}

/* After a revocation returned: released, masks as they were, the same
 * non-target files, no stray descriptor. */
static void outside_check(int h)
{
	struct proc_fd now[64];
	int n;

	if (!alive(h))
		return;
	T.outside_checks++;
	for (int t = 0; t < NTHREADS; t++) {
		pid_t tid = sh->h[h].tids[t];
		struct proc_task k;

		if (proc_task_status(hv[h].pid, tid, &k) < 0)
			continue;
		if (k.tracer || k.state == 't' || k.state == 'T')
			note(T.first_stuck, sizeof(T.first_stuck), &T.stuck,
			     "holder %d thread %d (%s) in state %c, traced by %d after the call "
			     "returned",
			     hv[h].pid, tid, thread_name[t], k.state, k.tracer);
		/* A handler running blocks its signal for a moment: only a
		 * mask that stays wrong counts. */
		for (int tries = 0; k.sigblk != hv[h].sigblk[t] && tries < 50; tries++) {
			sleep_ns(1000000);
			if (proc_task_status(hv[h].pid, tid, &k) < 0)
				break;
		}
		if (k.sigblk != hv[h].sigblk[t])
			note(T.first_mask, sizeof(T.first_mask), &T.masks,
			     "holder %d thread %d (%s) SigBlk %016" PRIx64 ", was %016" PRIx64,
			     hv[h].pid, tid, thread_name[t], k.sigblk, hv[h].sigblk[t]);
	}
	n = proc_fds(hv[h].pid, now, 64);
	for (int i = 0; i < n; i++) {
		bool known = false;

		for (int j = 0; j < hv[h].nfds; j++)
			if (hv[h].fds[j].fd == now[i].fd) {
				known = true;
				if (now[i].fd != FD_T && (hv[h].fds[j].dev != now[i].dev ||
							  hv[h].fds[j].ino != now[i].ino))
					note(T.first_fd, sizeof(T.first_fd), &T.fds_changed,
					     "holder %d fd %d changed from ino %lu to %lu",
					     hv[h].pid, now[i].fd, (unsigned long)hv[h].fds[j].ino,
					     (unsigned long)now[i].ino);
			}
		/* The cycler's open before its dup3 shows the target for a moment. */
		if (!known && !(now[i].dev == t_dev && now[i].ino == t_ino)) {
			char path[64], link[128];
			ssize_t l;

			snprintf(path, sizeof(path), "/proc/%d/fd/%d", hv[h].pid, now[i].fd);
			l = readlink(path, link, sizeof(link) - 1);
			link[l > 0 ? l : 0] = '\0';
			note(T.first_fd, sizeof(T.first_fd), &T.fds_extra,
			     "holder %d has a descriptor %d it never opened: %s", hv[h].pid,
			     now[i].fd, link);
		}
	}
}

/* --sabotage: a tracer that blocks every signal of holder 0's sleeper and
 * flips rbx in its compute thread, then dies without detaching. The run must
 * then fail (soak.released and soak.registers): it checks the checks. */
static void sabotage(void)
{
	pid_t pid = test_fork();

	if (pid == 0) {
		pid_t tids[2] = {sh->h[0].tids[T_SLEEPER], sh->h[0].tids[T_COMPUTE]};

		for (int i = 0; i < 2; i++) {
			uint64_t all = ~0ULL;
			struct user_regs_struct regs;
			int st;

			if (ptrace(PTRACE_SEIZE, tids[i], 0, 0) < 0 ||
			    ptrace(PTRACE_INTERRUPT, tids[i], 0, 0) < 0 ||
			    waitpid(tids[i], &st, __WALL) != tids[i])
				_exit(1);
			if (i == 0)
				ptrace(PTRACE_SETSIGMASK, tids[i], sizeof(all), &all);
			else if (ptrace(PTRACE_GETREGS, tids[i], 0, &regs) == 0) {
				regs.rbx ^= 1;
				ptrace(PTRACE_SETREGS, tids[i], 0, &regs);
			}
		}
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
	printf("  sabotaged holder %d (its sleeper's signal mask, its compute thread's rbx)\n",
	       hv[0].pid);
}

/* Who holds /run/librevoke.lock (from /proc/locks), for the message. */
static void lock_holder(char *why, size_t size)
{
	char line[256], comm[64] = "?";
	struct stat st;
	FILE *f;

	snprintf(why, size, "waited for /run/librevoke.lock (another revoke on this machine)");
	if (stat("/run/librevoke.lock", &st) < 0 || !(f = fopen("/proc/locks", "re")))
		return;
	while (fgets(line, sizeof(line), f)) {
		char *dev = NULL, *colon;
		int pid = 0;

		if (sscanf(line, "%*d: FLOCK %*s WRITE %d %ms", &pid, &dev) == 2 &&
		    (colon = strrchr(dev, ':')) && strtoul(colon + 1, NULL, 10) == st.st_ino) {
			char path[64];

			snprintf(path, sizeof(path), "/proc/%d/comm", pid);
			if (read_text(path, comm, sizeof(comm)) > 0)
				comm[strcspn(comm, "\n")] = '\0';
			snprintf(why, size, "waited for /run/librevoke.lock, held by pid %d (%s)",
				 pid, comm);
		}
		free(dev);
	}
	fclose(f);
}

#define LOCK_WAIT 254 /* revoke_once: the lock was another's all along */

static int revoke_once(char *why, size_t size)
{
	if (opt.command) {
		char timeout[32];
		int st;
		pid_t pid;

		snprintf(timeout, sizeof(timeout), "%g", opt.timeout_ms / 1000.0);
		pid = test_fork();
		if (pid == 0) {
			int null = open("/dev/null", O_WRONLY);

			for (int sig = 1; sig < NSIG; sig++) /* ignored ones survive exec */
				if (sig != SIGKILL && sig != SIGSTOP)
					signal(sig, SIG_DFL);
			dup2(null, 1);
			execl(REVOKE_BUILDDIR "/tools/revoke", "revoke", "-q",
			      opt.best_effort ? "--best-effort" : "--quiet", "--timeout", timeout,
			      "--discovery",
			      opt.discovery == REVOKE_DISCOVERY_PROC  ? "proc"
			      : opt.discovery == REVOKE_DISCOVERY_BPF ? "bpf"
								      : "auto",
			      tpath, (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid)
			return EIO;
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			return 0;
		test_describe_status(st, why, size);
		return WIFEXITED(st) ? 255 : EINTR;
	} else {
		struct revoke_opts o = {.sz = sizeof(o),
					.flags = opt.discovery | REVOKE_ENGINE_USERSPACE |
						 (opt.best_effort ? REVOKE_BEST_EFFORT : 0),
					.timeout_ms = opt.timeout_ms,
					.keep_fd = -1};
		struct revoke_report *rep = NULL;
		const char *paths[] = {tpath};
		int r = revoke_ex(paths, 1, &o, &rep), err = r < 0 ? errno : 0;

		if (err && rep) {
			bool stopped_any = rep->max_stopped_ns != 0;

			snprintf(why, size, "%s", strerror(err));
			for (size_t i = 0; i < rep->nholders; i++)
				if (rep->holders[i].error) {
					snprintf(why, size, "%s: pid %d: %s", strerror(err),
						 rep->holders[i].pid, rep->holders[i].reason);
					stopped_any = true;
					break;
				}
			/* Holders found, none stopped, none to blame, all skipped: the
			 * call waited half its timeout for the lock another revoke on
			 * this machine held (a scan past the deadline finds none). */
			for (size_t i = 0; i < rep->nholders; i++)
				if (rep->holders[i].state != REVOKE_STATE_SKIPPED)
					stopped_any = true;
			if (err == ETIMEDOUT && !stopped_any && rep->nholders > 0) {
				lock_holder(why, size);
				err = LOCK_WAIT;
			}
		} else if (err) {
			snprintf(why, size, "%s (no report)", strerror(err));
		}
		revoke_report_free(rep);
		return err;
	}
}

static void make_files(void)
{
	uint8_t buf[FILE_SIZE];
	int fd;

	test_scratch_dir(tdir, sizeof(tdir), "/tmp/revoke-soak-XXXXXX");
	snprintf(tpath, sizeof(tpath), "%s/target", tdir);
	snprintf(opath, sizeof(opath), "%s/other", tdir);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = file_byte(i);
	fd = open(tpath, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
		perror(tpath);
		exit(2);
	}
	{
		struct stat st;

		fstat(fd, &st);
		t_dev = st.st_dev;
		t_ino = st.st_ino;
	}
	close(fd);
	fd = open(opath, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(opath);
		exit(2);
	}
	close(fd);
}

static uint64_t sum(enum counter c)
{
	uint64_t s = 0;

	for (int h = 0; h < opt.holders; h++)
		s += atomic_load(&sh->h[h].c[c]);
	return s;
}

static int result(bool ok, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int result(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("%s soak.%s: ", ok ? "PASS" : "FAIL", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	return ok ? 0 : 1;
}

static void usage(void)
{
	printf(
	    "usage: soak-revoke [--revocations N] [--seconds S] [--holders N] [--check-every K]\n"
	    "                   [--command] [--discovery proc|bpf|auto] [--timeout MS] "
	    "[--sabotage]\n"
	    "  --revocations N  how many (default 10000); --seconds S stops earlier\n"
	    "  --holders N      busy holders of 9 threads each (default 6, at most %d)\n"
	    "  --check-every K  look at every holder from outside every K revocations (10)\n"
	    "  --command        run tools/revoke each time instead of calling librevoke\n"
	    "  --discovery      how holders are found (default proc: BPF loads per call)\n"
	    "  --best-effort    processes /proc cannot look at (pid 1 of some sandboxes, even\n"
	    "                   for root) are reported, not a failure\n",
	    MAX_HOLDERS);
}

static void parse(int argc, char **argv)
{
	static const struct option lo[] = {{"revocations", required_argument, NULL, 'n'},
					   {"seconds", required_argument, NULL, 's'},
					   {"holders", required_argument, NULL, 'H'},
					   {"check-every", required_argument, NULL, 'k'},
					   {"command", no_argument, NULL, 'c'},
					   {"discovery", required_argument, NULL, 'd'},
					   {"timeout", required_argument, NULL, 't'},
					   {"help", no_argument, NULL, 'h'},
					   {"sabotage", no_argument, NULL, 'x'},
					   {"best-effort", no_argument, NULL, 'b'},
					   {NULL, 0, NULL, 0}};
	int c;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'n':
			opt.revocations = atol(optarg);
			break;
		case 's':
			opt.seconds = atof(optarg);
			break;
		case 'H':
			opt.holders = atoi(optarg);
			if (opt.holders < 1 || opt.holders > MAX_HOLDERS) {
				usage();
				exit(2);
			}
			break;
		case 'k':
			opt.check_every = atoi(optarg) > 0 ? atoi(optarg) : 1;
			break;
		case 'c':
			opt.command = true;
			break;
		case 'd':
			opt.discovery = strcmp(optarg, "proc") == 0  ? REVOKE_DISCOVERY_PROC
					: strcmp(optarg, "bpf") == 0 ? REVOKE_DISCOVERY_BPF
								     : 0;
			break;
		case 't':
			opt.timeout_ms = atoi(optarg);
			break;
		case 'x':
			opt.sabotage = true;
			break;
		case 'b':
			opt.best_effort = true;
			break;
		case 'h':
			usage();
			exit(0);
		default:
			usage();
			exit(2);
		}
	}
}

static int driver(void)
{
	uint64_t t0 = now_ns(), last_print = t0;
	int failed = 0;
	char why[300];

	make_files();
	memset(sh, 0, sizeof(*sh));
	for (int h = 0; h < opt.holders; h++) {
		hv[h].pid = test_fork();
		if (hv[h].pid < 0) {
			perror("fork");
			return 2;
		}
		if (hv[h].pid == 0)
			holder_main(h);
	}
	for (int h = 0; h < opt.holders; h++) {
		uint64_t deadline = now_ns() + 10000000000ULL;

		while (!atomic_load(&sh->h[h].ready) && alive(h) && now_ns() < deadline)
			sleep_ns(1000000);
		if (!atomic_load(&sh->h[h].ready)) {
			printf("FAIL soak.setup: holder %d did not start\n", hv[h].pid);
			return 1;
		}
		record_baseline(h);
	}
	printf("  %d holders x %d threads; %ld revocations by %s (SIGINT or SIGTERM: stop early "
	       "and report)\n",
	       opt.holders, NTHREADS, opt.revocations, opt.command ? "tools/revoke" : "librevoke");
	fflush(stdout);

	for (long i = 0; i < opt.revocations; i++) {
		uint64_t before[MAX_HOLDERS], deadline;
		int err;

		if ((opt.seconds > 0 && (double)(now_ns() - t0) > opt.seconds * 1e9) || interrupted)
			break;
		/* Every live holder holds the target again. */
		deadline = now_ns() + 2000000000ULL;
		for (int h = 0; h < opt.holders; h++)
			while (alive(h) && !atomic_load(&sh->h[h].holding) && now_ns() < deadline)
				sleep_ns(200000);
		for (int h = 0; h < opt.holders; h++)
			before[h] = atomic_load(&sh->h[h].c[C_CUTS]);
		if (opt.sabotage && i == opt.revocations / 2)
			sabotage();
		err = revoke_once(why, sizeof(why));
		T.done++;
		if (err == LOCK_WAIT) {
			if (T.lockwaits++ == 0)
				snprintf(T.first_lockwait, sizeof(T.first_lockwait), "%s", why);
		} else if (err) {
			T.errors[err & 255]++;
			if (!T.first_error[0])
				snprintf(T.first_error, sizeof(T.first_error),
					 "revocation %ld: %.250s", i, why);
		} else {
			T.ok++;
			/* Every holder that held it must see its cut. */
			deadline = now_ns() + 2000000000ULL;
			for (int h = 0; h < opt.holders; h++) {
				while (alive(h) && atomic_load(&sh->h[h].c[C_CUTS]) == before[h] &&
				       now_ns() < deadline)
					sleep_ns(200000);
				if (alive(h) && atomic_load(&sh->h[h].c[C_CUTS]) == before[h])
					note(why, sizeof(why), &T.unobserved,
					     "revocation %ld returned 0, holder %d still reads the "
					     "target 2 s later",
					     i, hv[h].pid);
			}
		}
		if (i % opt.check_every == 0)
			for (int h = 0; h < opt.holders; h++)
				outside_check(h);
		if (now_ns() - last_print > 10000000000ULL) {
			last_print = now_ns();
			printf("  %ld revocations in %.0f s: %ld failed, %ld crashes, %" PRIu64
			       " violations in holders\n",
			       T.done, (double)(last_print - t0) / 1e9, T.done - T.ok, T.crashes,
			       sum(C_HALF) + sum(C_TARGET_BAD) + sum(C_PIPE_BAD) + sum(C_RT_ORDER) +
				   sum(C_MAP_BAD) + sum(C_REGS_BAD) + sum(C_SLEEP_BAD) +
				   sum(C_FD_BAD));
			fflush(stdout);
		}
	}

	/* Stop, let the signals in flight arrive, and collect the holders. */
	atomic_store(&sh->stop, 1);
	for (int h = 0; h < opt.holders; h++) {
		uint64_t deadline = now_ns() + 10000000000ULL;
		bool was_dead = hv[h].dead;

		while (!hv[h].dead && now_ns() < deadline) {
			if (waitpid(hv[h].pid, &hv[h].wstatus, WNOHANG) == hv[h].pid)
				hv[h].dead = true;
			else
				sleep_ns(1000000);
		}
		if (was_dead)
			continue;
		if (!hv[h].dead) {
			note(T.first_crash, sizeof(T.first_crash), &T.crashes,
			     "holder %d did not exit within 10 s when asked", hv[h].pid);
			kill(hv[h].pid, SIGKILL);
			waitpid(hv[h].pid, &hv[h].wstatus, 0);
			hv[h].dead = true;
		} else if (!(WIFEXITED(hv[h].wstatus) && WEXITSTATUS(hv[h].wstatus) == 0)) {
			char s[64];

			test_describe_status(hv[h].wstatus, s, sizeof(s));
			note(T.first_crash, sizeof(T.first_crash), &T.crashes,
			     "holder %d asked to exit: %s", hv[h].pid, s);
		}
	}

	printf("  %ld revocations in %.0f s, %ld outside checks of a holder\n", T.done,
	       (double)(now_ns() - t0) / 1e9, T.outside_checks);
	for (int h = 0; h < opt.holders; h++)
		if (atomic_load(&sh->h[h].nviol))
			printf("  holder %d: %d violations, the first: %s\n", hv[h].pid,
			       atomic_load(&sh->h[h].nviol), sh->h[h].msg);
	{
		char errs[300] = "";
		size_t len = 0;

		for (int e = 0; e < 256; e++)
			if (T.errors[e] && len < sizeof(errs) - 40)
				len += (size_t)snprintf(errs + len, sizeof(errs) - len, "%s%ld %s",
							len ? ", " : "", T.errors[e],
							e == 255	     ? "exit 1"
							: strerrorname_np(e) ? strerrorname_np(e)
									     : "?");
		/* Turns lost to another revoke on this machine are not the engine's. */
		failed += result(
		    T.ok + T.lockwaits == T.done && T.ok > 0, "revocations",
		    "%ld of %ld succeeded%s%s%s%s; %ld gave up waiting for the lock%s%s", T.ok,
		    T.done, errs[0] ? " (" : "", errs, errs[0] ? "); first: " : "", T.first_error,
		    T.lockwaits, T.lockwaits ? ", first: " : "", T.first_lockwait);
	}
	failed +=
	    result(T.unobserved == 0 && sum(C_HALF) == 0 && sum(C_TARGET_BAD) == 0, "cut",
		   "%" PRIu64 " cuts seen by the holders; %ld successful revocations a holder did "
		   "not see, %" PRIu64 " half cuts, %" PRIu64 " wrong target reads%s%s",
		   sum(C_CUTS), T.unobserved, sum(C_HALF), sum(C_TARGET_BAD),
		   T.unobserved ? "; first: " : "", T.unobserved ? why : "");
	failed += result(T.crashes == 0 && sum(C_STRAY_SIGBUS) == 0, "crashes",
			 "%ld crashed or hung holders, %" PRIu64 " stray SIGBUS%s%s", T.crashes,
			 sum(C_STRAY_SIGBUS), T.crashes ? "; first: " : "", T.first_crash);
	failed += result(sum(C_RT_SENT) == sum(C_RT_RECV) && sum(C_RT_ORDER) == 0 &&
			     sum(C_USR_SENT) == sum(C_USR_RECV),
			 "signals",
			 "SIGRTMIN+1 sent %" PRIu64 ", received %" PRIu64 " (%" PRIu64
			 " out of order); SIGUSR1 sent %" PRIu64 ", received %" PRIu64 " (%" PRIu64
			 " arrived more than 2 s late)",
			 sum(C_RT_SENT), sum(C_RT_RECV), sum(C_RT_ORDER), sum(C_USR_SENT),
			 sum(C_USR_RECV), sum(C_USR_STALL));
	failed +=
	    result(sum(C_FD_BAD) == 0 && T.fds_changed == 0 && T.fds_extra == 0, "descriptors",
		   "%" PRIu64 " checks in the holders found %" PRIu64
		   " changed; from outside %ld changed, %ld never opened by the holder%s%s",
		   sum(C_FD_CHECKS), sum(C_FD_BAD), T.fds_changed, T.fds_extra,
		   T.first_fd[0] ? "; first: " : "", T.first_fd);
	failed += result(sum(C_PIPE_BAD) == 0 && sum(C_MAP_BAD) == 0, "io",
			 "%" PRIu64 " pipe bytes checked, %" PRIu64 " wrong; %" PRIu64
			 " anonymous mappings checked, %" PRIu64 " wrong",
			 sum(C_PIPE_BYTES), sum(C_PIPE_BAD), sum(C_MAPS), sum(C_MAP_BAD));
	failed += result(sum(C_REGS_BAD) == 0 && sum(C_SLEEP_BAD) == 0, "registers",
			 "%" PRIu64 " register workloads, %" PRIu64 " wrong; %" PRIu64
			 " nanosleeps, %" PRIu64 " early or failed",
			 sum(C_REGS), sum(C_REGS_BAD), sum(C_SLEEPS), sum(C_SLEEP_BAD));
	failed += result(T.stuck == 0 && T.masks == 0, "released",
			 "%ld threads found stopped or traced after a call, %ld signal masks "
			 "changed%s%s%s%s",
			 T.stuck, T.masks, T.stuck ? "; first: " : "", T.first_stuck,
			 T.masks ? "; first: " : "", T.first_mask);
	printf("%d passed, %d failed, 0 skipped\n", 8 - failed, failed);
	unlink(tpath);
	unlink(opath);
	rmdir(tdir);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	pid_t pid;
	int st;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse(argc, argv);
	if (geteuid() != 0) {
		printf("SKIP soak.run: needs root\n");
		return 0;
	}
	have_avx = busy_have_avx();
	pace = (uint64_t)(opt.holders + 5) / 6;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 2;
	{
		struct sigaction sa = {.sa_handler = on_interrupt};

		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	pid = test_fork();
	if (pid == 0) {
		setpgid(0, 0);
		_exit(driver());
	}
	driver_child = pid;
	setpgid(pid, pid);
	{
		siginfo_t si;

		while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
			;
	}
	kill(-pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st)) {
		printf("FAIL soak.driver: killed by signal %d\n", WTERMSIG(st));
		return 1;
	}
	return WEXITSTATUS(st);
}
