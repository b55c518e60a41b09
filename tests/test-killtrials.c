/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kill trials: the revoke command is killed in the middle of a revocation,
 * and no holder may be the worse for it.
 *
 * Each trial forks a fresh set of holders (children of this test, with
 * PR_SET_PDEATHSIG) of several shapes, all holding the target file FILE (two
 * descriptors, and mappings for the mappers) and, for the FIFO readers, the
 * target FIFO; runs `tools/revoke --timeout T FILE FIFO`; sends it a signal
 * at a chosen delay; then checks every holder:
 *
 *   - the command is gone: SIGKILL kills it at once; SIGTERM, SIGINT, SIGHUP,
 *     SIGPIPE must make it finish or roll back within --timeout and exit by
 *     re-raising the signal (so the status says "killed by signal N");
 *   - within a grace of 2 s every holder thread is neither stopped (unless it
 *     is the SIGSTOPped holder, which must still be T) nor traced;
 *   - every thread's signal mask (SigBlk) is what it was;
 *   - the descriptor table has the same numbers; a descriptor that was not a
 *     target is the same file; the target descriptors are all still the
 *     targets or all dead (allocated, no longer a target): never half;
 *   - every mapping of FILE is there with the same range, all intact or all
 *     replaced;
 *   - the holders' own checks (registers after a spin, FIFO read() results,
 *     nanosleep never early nor EINTR, a mapping access gives the byte or
 *     SIGBUS to a handler) found nothing; every thread makes progress (the
 *     FIFO readers once bytes are written; the stopped holder once continued);
 *     asked to, every holder exits with status 0;
 *   - after SIGTERM/SIGINT/SIGHUP/SIGPIPE: all holders cut, or none.
 *
 * The delays are spread over [0, D], D the duration of a full run measured
 * first (one trial per slice of D, at a seeded random point in its slice). A
 * trial counts as conclusive only when the signal landed during the
 * revocation: a holder was traced when it was sent, or a holder was cut (or
 * damaged) by a command that did not finish. A case passes only with no
 * damaged holder and enough conclusive trials.
 *
 * One line per (signal, shape): kill.sigkill_fifo, ... and kill.SIG_command
 * for the command's own promises. Defaults fit CI (~1 minute); --long is the
 * soak (200 holders, 60 trials per signal). --help lists the knobs.
 */
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sysmacros.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>

#include "busy.h"

#ifndef REVOKE_BUILDDIR
#error "REVOKE_BUILDDIR must be defined by the build"
#endif

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

/* ---- options ------------------------------------------------------------------ */

static const int all_signals[] = {SIGKILL, SIGTERM, SIGINT, SIGHUP, SIGPIPE};
#define NSIGS (int)(sizeof(all_signals) / sizeof(all_signals[0]))

static struct {
	int holders;
	int trials[NSIGS];
	bool want[NSIGS];
	double timeout_s;
	double budget_s;
	uint64_t seed;
	int min_conclusive_pct;
	bool verbose;
} opt = {
    .holders = 48,
    .trials = {16, 8, 8, 8, 8},
    .want = {true, true, true, true, true},
    .timeout_s = 3,
    .budget_s = 45,
    .seed = 1,
    .min_conclusive_pct = 25,
};

/* ---- the files ---------------------------------------------------------------- */

static char tdir[64], file_path[128], fifo_path[128], out_path[128];
static dev_t file_dev, fifo_dev;
static ino_t file_ino, fifo_ino;
static bool have_avx;
static pid_t driver_pid;
/* The holders' sleeps grow with their number, so that all of them together
 * wake the machine about as often as 48 do. */
static uint64_t pace = 1;

static uint8_t file_byte(uint64_t off)
{
	return (uint8_t)(off * 7 + 3);
}

static __attribute__((noreturn, format(printf, 1, 2))) void die(const char *fmt, ...)
{
	va_list ap;

	printf("FAIL kill.setup: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	_exit(1);
}

static void make_files(void)
{
	uint8_t buf[3 * PAGE];
	struct stat st;
	int fd;

	snprintf(tdir, sizeof(tdir), "/tmp/revoke-kill-XXXXXX");
	if (!mkdtemp(tdir))
		die("mkdtemp: %s", strerror(errno));
	snprintf(file_path, sizeof(file_path), "%s/file", tdir);
	snprintf(fifo_path, sizeof(fifo_path), "%s/fifo", tdir);
	snprintf(out_path, sizeof(out_path), "%s/revoke.out", tdir);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = file_byte(i);
	fd = open(file_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf) || fstat(fd, &st) < 0)
		die("create %s: %s", file_path, strerror(errno));
	close(fd);
	file_dev = st.st_dev;
	file_ino = st.st_ino;
}

/* A new FIFO inode for each trial: no byte of an earlier trial can linger. */
static void make_fifo(void)
{
	struct stat st;

	unlink(fifo_path);
	if (mkfifo(fifo_path, 0600) < 0 || stat(fifo_path, &st) < 0)
		die("mkfifo %s: %s", fifo_path, strerror(errno));
	fifo_dev = st.st_dev;
	fifo_ino = st.st_ino;
}

static void remove_files(void)
{
	unlink(fifo_path);
	unlink(file_path);
	unlink(out_path);
	rmdir(tdir);
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
		busy_sleep_ns(5000000 * pace);
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
		uint64_t t0 = busy_now_ns(), dt;
		long r;

		r = syscall(SYS_nanosleep, &req, NULL);
		dt = busy_now_ns() - t0;
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
		busy_sleep_ns(2000000 * pace);
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

static __attribute__((noreturn)) void holder_main(int h, enum kind kind)
{
	struct worker_arg args[MAX_WORKERS];
	pthread_t th[MAX_WORKERS];
	int null, p[2];
	bool fifo = false;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != driver_pid)
		_exit(91);
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

/* ---- the driver's view of one holder ------------------------------------------- */

enum damage_tag {
	D_DEATH,
	D_STOPPED,
	D_TRACED,
	D_SIGBLK,
	D_HALF,
	D_FDS,
	D_MAPS,
	D_REGS,
	D_FIFO,
	D_SLEEP,
	D_MAPBYTE,
	D_PROGRESS,
	D_EXIT,
	D_OTHER,
	NTAGS
};
static const char *const tag_name[NTAGS] = {"died",
					    "left stopped",
					    "left traced",
					    "signal mask changed",
					    "half cut",
					    "descriptors changed",
					    "mappings changed",
					    "registers changed",
					    "FIFO read() result",
					    "nanosleep early/EINTR",
					    "wrong mapped byte",
					    "no progress",
					    "did not exit cleanly",
					    "other"};

struct holder {
	pid_t pid;
	enum kind kind;
	int status_fd; /* /proc/PID/status, for the sample at kill time */
	int ntids;
	pid_t tids[MAX_WORKERS + 2];
	uint64_t sigblk[MAX_WORKERS + 2];
	int nfds;
	struct busy_fd fds[MAX_FDS];
	bool reaped;
	int wstatus;
	/* outcome */
	int fds_target, fds_dead; /* target descriptors still the target / dead */
	int maps_intact, maps_replaced;
	bool damaged;
	unsigned int tags;
	char damage[400];
};

static struct holder *holders;
static int nholders;

static __attribute__((format(printf, 3, 4))) void damage(struct holder *h, enum damage_tag tag,
							 const char *fmt, ...)
{
	size_t len = strlen(h->damage);
	va_list ap;

	h->damaged = true;
	h->tags |= 1u << tag;
	if (len + 8 >= sizeof(h->damage))
		return;
	if (len)
		len += (size_t)snprintf(h->damage + len, sizeof(h->damage) - len, "; ");
	va_start(ap, fmt);
	vsnprintf(h->damage + len, sizeof(h->damage) - len, fmt, ap);
	va_end(ap);
}

static bool is_target(dev_t dev, ino_t ino)
{
	return (dev == file_dev && ino == file_ino) || (dev == fifo_dev && ino == fifo_ino);
}

static void spawn_holders(int n)
{
	nholders = n;
	memset(sh, 0, sizeof(*sh));
	for (int h = 0; h < n; h++) {
		enum kind kind = h == n - 1 ? K_STOPPED : (enum kind)(h % K_STOPPED);
		struct holder *x = &holders[h];
		pid_t pid;

		memset(x, 0, sizeof(*x));
		x->kind = kind;
		x->status_fd = -1;
		for (int i = 0; i < kinds[kind].n; i++)
			sh->slot[h][i].work = kinds[kind].w[i];
		fflush(NULL);
		pid = fork();
		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (pid == 0)
			holder_main(h, kind);
		x->pid = pid;
	}
}

static bool holders_ready(uint64_t deadline)
{
	for (int h = 0; h < nholders; h++)
		for (int i = 0; i < kinds[holders[h].kind].n; i++)
			while (!atomic_load(&sh->slot[h][i].ready)) {
				if (busy_now_ns() > deadline)
					return false;
				busy_sleep_ns(200000);
			}
	return true;
}

static char task_state(pid_t pid, pid_t tid)
{
	struct busy_task t;

	return busy_task_read(pid, tid, &t) < 0 ? '?' : t.state;
}

/* Everything the checks compare with, taken once the holders run. */
static void snapshot(void)
{
	for (int h = 0; h < nholders; h++) {
		struct holder *x = &holders[h];
		char path[64];

		x->ntids = busy_tasks(x->pid, x->tids, MAX_WORKERS + 2);
		if (x->ntids != kinds[x->kind].n)
			die("holder %d (%s) has %d threads, expected %d", x->pid,
			    kind_name[x->kind], x->ntids, kinds[x->kind].n);
		for (int i = 0; i < x->ntids; i++) {
			struct busy_task t;

			if (busy_task_read(x->pid, x->tids[i], &t) < 0)
				die("holder %d: cannot read task %d", x->pid, x->tids[i]);
			x->sigblk[i] = t.sigblk;
		}
		x->nfds = busy_fds(x->pid, x->fds, MAX_FDS);
		if (x->nfds < 0)
			die("holder %d: cannot list its descriptors", x->pid);
		snprintf(path, sizeof(path), "/proc/%d/status", x->pid);
		x->status_fd = open(path, O_RDONLY | O_CLOEXEC);
	}
}

static void close_status_fds(void)
{
	for (int h = 0; h < nholders; h++)
		if (holders[h].status_fd >= 0) {
			close(holders[h].status_fd);
			holders[h].status_fd = -1;
		}
}

/* How many holders are traced right now (stops counting at the first when FAST). */
static int count_traced(bool fast)
{
	int n = 0;

	for (int h = 0; h < nholders; h++)
		if (holders[h].status_fd >= 0 && busy_status_fd_tracer(holders[h].status_fd) != 0) {
			n++;
			if (fast)
				break;
		}
	return n;
}

static bool reap(struct holder *x, bool block)
{
	if (x->reaped)
		return true;
	if (waitpid(x->pid, &x->wstatus, block ? 0 : WNOHANG) == x->pid)
		x->reaped = true;
	return x->reaped;
}

static void describe_status(int st, char *buf, size_t size)
{
	if (WIFSIGNALED(st))
		snprintf(buf, size, "killed by signal %d (%s)", WTERMSIG(st),
			 sigabbrev_np(WTERMSIG(st)) ? sigabbrev_np(WTERMSIG(st)) : "?");
	else
		snprintf(buf, size, "exit status %d", WEXITSTATUS(st));
}

/* Until no holder thread is traced or in a ptrace stop any more, at most the grace. */
static void wait_released(void)
{
	uint64_t deadline = busy_now_ns() + GRACE_NS;

	for (int h = 0; h < nholders; h++) {
		struct holder *x = &holders[h];

		for (int i = 0; i < x->ntids; i++)
			for (;;) {
				struct busy_task t;

				if (reap(x, false) || busy_task_read(x->pid, x->tids[i], &t) < 0)
					break;
				if (t.tracer == 0 && t.state != 't')
					break;
				if (busy_now_ns() > deadline)
					return;
				busy_sleep_ns(1000000);
			}
	}
}

static void check_threads(struct holder *x)
{
	pid_t tids[MAX_WORKERS + 2];
	int n = busy_tasks(x->pid, tids, MAX_WORKERS + 2);

	if (n != x->ntids || memcmp(tids, x->tids, sizeof(pid_t) * (size_t)n) != 0)
		damage(x, D_DEATH, "pid %d has %d threads, had %d", x->pid, n, x->ntids);
	for (int i = 0; i < x->ntids; i++) {
		struct busy_task t;

		if (busy_task_read(x->pid, x->tids[i], &t) < 0)
			continue;
		if (t.tracer != 0)
			damage(x, D_TRACED,
			       "pid %d tid %d still traced by %d 2 s after the command "
			       "ended",
			       x->pid, x->tids[i], t.tracer);
		if (x->kind == K_STOPPED) {
			if (t.state != 'T')
				damage(x, D_STOPPED,
				       "pid %d tid %d (SIGSTOPped) is in state %c, expected T",
				       x->pid, x->tids[i], t.state);
		} else if (t.state == 't' || t.state == 'T') {
			damage(x, D_STOPPED, "pid %d tid %d left in state %c", x->pid, x->tids[i],
			       t.state);
		}
		/* A mapper inside its SIGBUS handler has SIGBUS blocked for a
		 * moment: only a mask that stays wrong is damage. */
		for (int tries = 0; (t.sigblk & ~(1ULL << (SIGBUS - 1))) == x->sigblk[i] &&
				    t.sigblk != x->sigblk[i] && tries < 100;
		     tries++) {
			busy_sleep_ns(1000000);
			if (busy_task_read(x->pid, x->tids[i], &t) < 0)
				break;
		}
		if (t.sigblk != x->sigblk[i])
			damage(x, D_SIGBLK, "pid %d tid %d SigBlk %016" PRIx64 ", was %016" PRIx64,
			       x->pid, x->tids[i], t.sigblk, x->sigblk[i]);
	}
}

static void check_fds(struct holder *x)
{
	struct busy_fd now[MAX_FDS];
	int n = busy_fds(x->pid, now, MAX_FDS), i = 0, j = 0;

	x->fds_target = x->fds_dead = 0;
	if (n < 0)
		return;
	while (i < x->nfds || j < n) {
		if (j >= n || (i < x->nfds && x->fds[i].fd < now[j].fd)) {
			damage(x, D_FDS, "pid %d fd %d was closed", x->pid, x->fds[i].fd);
			i++;
		} else if (i >= x->nfds || now[j].fd < x->fds[i].fd) {
			char link[80], path[64];
			ssize_t l;

			snprintf(path, sizeof(path), "/proc/%d/fd/%d", x->pid, now[j].fd);
			l = readlink(path, link, sizeof(link) - 1);
			link[l > 0 ? l : 0] = '\0';
			damage(x, D_FDS, "pid %d has a new fd %d (%s)", x->pid, now[j].fd, link);
			j++;
		} else {
			const struct busy_fd *a = &x->fds[i], *b = &now[j];

			if (is_target(a->dev, a->ino)) {
				if (b->dev == a->dev && b->ino == a->ino)
					x->fds_target++;
				else
					x->fds_dead++;
			} else if (a->dev != b->dev || a->ino != b->ino) {
				damage(x, D_FDS,
				       "pid %d fd %d changed from %u:%u/%lu to %u:%u/%lu (not a "
				       "target)",
				       x->pid, a->fd, major(a->dev), minor(a->dev),
				       (unsigned long)a->ino, major(b->dev), minor(b->dev),
				       (unsigned long)b->ino);
			}
			i++;
			j++;
		}
	}
	if (x->fds_target && x->fds_dead)
		damage(x, D_HALF, "pid %d half cut: %d target descriptors intact, %d dead", x->pid,
		       x->fds_target, x->fds_dead);
}

static void check_maps(struct holder *x, int h)
{
	char path[64], *buf = NULL, *line;
	size_t cap = 0;
	FILE *f;

	x->maps_intact = x->maps_replaced = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", x->pid);
	f = fopen(path, "re");
	if (!f)
		return;
	{
		size_t len = 0;
		char chunk[4096];
		size_t r;

		while ((r = fread(chunk, 1, sizeof(chunk), f)) > 0) {
			char *nb = realloc(buf, len + r + 1);

			if (!nb)
				break;
			buf = nb;
			memcpy(buf + len, chunk, r);
			len += r;
			cap = len;
		}
		if (buf)
			buf[cap] = '\0';
	}
	fclose(f);
	if (!buf)
		return;
	for (int i = 0; i < kinds[x->kind].n; i++) {
		const struct slot *s = &sh->slot[h][i];

		if (s->work != W_MMAP)
			continue;
		for (int k = 0; k < 2; k++) {
			char want[64], mf[96];
			struct stat st;
			bool found = false;

			snprintf(want, sizeof(want), "%" PRIx64 "-%" PRIx64 " ", s->map_start[k],
				 s->map_end[k]);
			for (line = buf; line && *line;
			     line = strchr(line, '\n'), line = line ? line + 1 : NULL)
				if (strncmp(line, want, strlen(want)) == 0)
					found = true;
			if (!found) {
				damage(x, D_MAPS,
				       "pid %d mapping %" PRIx64 "-%" PRIx64 " gone or split",
				       x->pid, s->map_start[k], s->map_end[k]);
				continue;
			}
			snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, x->pid,
				 s->map_start[k], s->map_end[k]);
			if (stat(mf, &st) == 0 && is_target(st.st_dev, st.st_ino))
				x->maps_intact++;
			else
				x->maps_replaced++;
		}
	}
	free(buf);
	if (x->maps_intact && x->maps_replaced)
		damage(x, D_HALF, "pid %d half cut: %d mappings intact, %d replaced", x->pid,
		       x->maps_intact, x->maps_replaced);
}

static void check_own(struct holder *x, int h)
{
	for (int i = 0; i < kinds[x->kind].n; i++) {
		const struct slot *s = &sh->slot[h][i];
		enum damage_tag tag = s->work == W_COMPUTE ? D_REGS
				      : s->work == W_FIFO  ? D_FIFO
				      : s->work == W_SLEEP ? D_SLEEP
							   : D_MAPBYTE;

		if (atomic_load(&s->nviol))
			damage(x, tag, "pid %d tid %d (%s): %s", x->pid, s->tid, work_name[s->work],
			       s->msg);
	}
}

static bool fifo_intact(const struct holder *x)
{
	for (int i = 0; i < x->nfds; i++)
		if (x->fds[i].fd == FD_FIFO) {
			char path[64];
			struct stat st;

			snprintf(path, sizeof(path), "/proc/%d/fd/%d", x->pid, FD_FIFO);
			return stat(path, &st) == 0 && st.st_dev == fifo_dev &&
			       st.st_ino == fifo_ino;
		}
	return false;
}

/* Every reader whose FIFO descriptor is intact gets one byte; every other one
 * must have seen EBADF. */
static void fifo_round(void)
{
	int want = 0, fd;
	uint64_t deadline;

	for (int h = 0; h < nholders; h++) {
		struct holder *x = &holders[h];

		if (x->reaped)
			continue;
		for (int i = 0; i < kinds[x->kind].n; i++)
			if (sh->slot[h][i].work == W_FIFO &&
			    atomic_load(&sh->slot[h][i].fifo) == FIFO_WAITING && fifo_intact(x))
				want++;
	}
	if (want) {
		char bytes[MAX_HOLDERS];

		memset(bytes, 'x', sizeof(bytes));
		fd = open(fifo_path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 || write(fd, bytes, (size_t)want) != want)
			printf("  note: cannot write %d bytes to the FIFO: %s\n", want,
			       strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	deadline = busy_now_ns() + GRACE_NS;
	for (int h = 0; h < nholders; h++) {
		struct holder *x = &holders[h];
		bool intact = !x->reaped && fifo_intact(x);

		for (int i = 0; i < kinds[x->kind].n; i++) {
			struct slot *s = &sh->slot[h][i];
			int st;

			if (s->work != W_FIFO || x->reaped)
				continue;
			while ((st = atomic_load(&s->fifo)) == FIFO_WAITING &&
			       busy_now_ns() < deadline)
				busy_sleep_ns(1000000);
			if (st == FIFO_WAITING)
				damage(x, D_FIFO,
				       "pid %d tid %d FIFO read() still blocked 2 s after %s "
				       "(state %c)",
				       x->pid, s->tid,
				       intact ? "a byte was written for it"
					      : "its descriptor was revoked",
				       task_state(x->pid, s->tid));
			else if (st == FIFO_GOT && !intact)
				damage(x, D_FIFO,
				       "pid %d tid %d FIFO read() returned data through a revoked "
				       "descriptor",
				       x->pid, s->tid);
			else if (st == FIFO_EBADF && intact)
				damage(x, D_FIFO,
				       "pid %d tid %d FIFO read() failed with EBADF, its "
				       "descriptor is intact",
				       x->pid, s->tid);
		}
	}
}

/* Every live thread moves on (the stopped holder once continued). */
static void check_progress(bool stopped_ones)
{
	uint64_t before[MAX_HOLDERS][MAX_WORKERS], deadline = busy_now_ns() + GRACE_NS;

	for (int h = 0; h < nholders; h++)
		for (int i = 0; i < kinds[holders[h].kind].n; i++)
			before[h][i] = atomic_load(&sh->slot[h][i].progress);
	for (int h = 0; h < nholders; h++) {
		struct holder *x = &holders[h];

		if (x->reaped || (x->kind == K_STOPPED) != stopped_ones)
			continue;
		for (int i = 0; i < kinds[x->kind].n; i++) {
			struct slot *s = &sh->slot[h][i];

			while (atomic_load(&s->progress) == before[h][i] &&
			       busy_now_ns() < deadline)
				busy_sleep_ns(1000000);
			if (atomic_load(&s->progress) == before[h][i])
				damage(x, D_PROGRESS,
				       "pid %d tid %d (%s) made no progress in 2 s (state %c)",
				       x->pid, s->tid, work_name[s->work],
				       task_state(x->pid, s->tid));
		}
	}
}

/* Ask every holder to exit; each must, with status 0. Then nothing is left. */
static void finish_holders(void)
{
	uint64_t deadline = busy_now_ns() + GRACE_NS;

	atomic_store(&sh->exit_now, 1);
	for (int h = 0; h < nholders; h++) {
		struct holder *x = &holders[h];
		bool was_reaped = x->reaped;

		while (!reap(x, false) && busy_now_ns() < deadline)
			busy_sleep_ns(1000000);
		if (!x->reaped) {
			damage(x, D_EXIT, "pid %d did not exit within 2 s when asked (state %c)",
			       x->pid, task_state(x->pid, x->pid));
			kill(x->pid, SIGKILL);
			reap(x, true);
		} else if (!was_reaped &&
			   !(WIFEXITED(x->wstatus) && WEXITSTATUS(x->wstatus) == 0)) {
			char st[64];

			describe_status(x->wstatus, st, sizeof(st));
			damage(x, D_EXIT, "pid %d asked to exit: %s", x->pid, st);
		}
	}
	close_status_fds();
}

/* ---- one run of the command ------------------------------------------------------ */

enum when { W_DURING, W_BEFORE, W_AFTER };

struct run {
	int sig;	   /* 0: let it finish */
	bool list_only;	   /* --list: the control run */
	bool watch;	   /* note when the first holder is traced; the delay counts from then */
	bool sabotage;	   /* not the command: a tracer that damages every holder, then dies */
	uint64_t delay_ns; /* from fork to the signal */
	/* results */
	uint64_t duration_ns, kill_ns, first_traced_ns;
	int cmd_status;
	bool cmd_timed_out;
	bool exited_before_kill;
	int traced_at_kill;
	enum when when;
	int ncut, nintact, nhalf, ndamaged;
	char cmd_problem[400];
};

static pid_t start_command(bool list_only)
{
	char timeout[32];
	pid_t pid;

	snprintf(timeout, sizeof(timeout), "%g", opt.timeout_s);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		sigset_t none;
		int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* An ignored signal stays ignored across exec (a test started in
		 * the background by a shell ignores SIGINT; nohup, SIGHUP): the
		 * command must meet every signal with its own disposition. */
		for (int sig = 1; sig < NSIG; sig++)
			if (sig != SIGKILL && sig != SIGSTOP)
				signal(sig, SIG_DFL);
		if (out >= 0) {
			dup2(out, 1);
			dup2(out, 2);
		}
		close_range(3, ~0U, 0);
		if (list_only)
			execl(REVOKE_BUILDDIR "/tools/revoke", "revoke", "--list", "--timeout",
			      timeout, file_path, fifo_path, (char *)NULL);
		else
			execl(REVOKE_BUILDDIR "/tools/revoke", "revoke", "--timeout", timeout,
			      file_path, fifo_path, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/*
 * The self-check's stand-in for the command: a tracer that stops every holder
 * thread, blocks all its signals and flips a bit of rbx (which the register
 * workloads check, in a spin as across a system call), then exits without
 * detaching, as a killed command would. The checks must catch every shape.
 */
static pid_t start_saboteur(void)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid > 0)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (int h = 0; h < nholders; h++)
		for (int i = 0; i < kinds[holders[h].kind].n; i++) {
			const struct slot *s = &sh->slot[h][i];
			uint64_t all = ~0ULL;
			struct user_regs_struct regs;
			int st;

			if (ptrace(PTRACE_SEIZE, s->tid, 0, 0) < 0 ||
			    ptrace(PTRACE_INTERRUPT, s->tid, 0, 0) < 0 ||
			    waitpid(s->tid, &st, __WALL) != s->tid)
				_exit(1);
			if (ptrace(PTRACE_SETSIGMASK, s->tid, sizeof(all), &all) < 0)
				_exit(2);
			if (s->work == W_COMPUTE) {
				if (ptrace(PTRACE_GETREGS, s->tid, 0, &regs) < 0)
					_exit(3);
				regs.rbx ^= 1;
				if (ptrace(PTRACE_SETREGS, s->tid, 0, &regs) < 0)
					_exit(4);
			}
		}
	_exit(0);
}

static void command_output(char *buf, size_t size)
{
	ssize_t n = busy_read_text(out_path, buf, size);
	char *nl;

	if (n <= 0) {
		snprintf(buf, size, "(no output)");
		return;
	}
	/* The last lines say why; keep them on one line. */
	if ((size_t)n > 300)
		memmove(buf, buf + n - 300, 301);
	while ((nl = strchr(buf, '\n')))
		*nl = '|';
}

/* Polls until a holder is traced: how long after T0 that was seen, or 0 when
 * the command CMD exited first. (The polling costs the command some CPU.) */
static uint64_t watch_first_stop(pid_t cmd, uint64_t t0)
{
	for (;;) {
		siginfo_t si = {0};

		if (waitid(P_PID, (id_t)cmd, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		    si.si_pid == cmd)
			return 0;
		if (count_traced(true))
			return busy_now_ns() - t0;
		busy_sleep_ns(200000);
	}
}

/* Runs the command once against fresh holders and checks them. */
static void run_once(struct run *r)
{
	uint64_t t0, end;
	pid_t cmd;
	int st = 0;

	make_fifo();
	spawn_holders(opt.holders);
	if (!holders_ready(busy_now_ns() + 10 * 1000000000ULL))
		die("the holders did not start within 10 s");
	/* The stopped holder: SIGSTOP, and wait until the group stop is complete. */
	{
		struct holder *x = &holders[nholders - 1];
		uint64_t deadline = busy_now_ns() + GRACE_NS;

		kill(x->pid, SIGSTOP);
		for (int i = 0; i < kinds[K_STOPPED].n; i++)
			while (task_state(x->pid, sh->slot[nholders - 1][i].tid) != 'T')
				if (busy_now_ns() > deadline)
					die("holder %d did not stop after SIGSTOP", x->pid);
				else
					busy_sleep_ns(1000000);
	}
	snapshot();

	t0 = busy_now_ns();
	cmd = r->sabotage ? start_saboteur() : start_command(r->list_only);
	if (r->sig) {
		struct timespec ts;
		siginfo_t si = {0};
		uint64_t at = t0 + r->delay_ns;

		if (r->watch) {
			/* DELAY counts from the first stop seen. */
			uint64_t first = watch_first_stop(cmd, t0);

			at = first ? t0 + first + r->delay_ns : 0;
			r->first_traced_ns = first;
		}
		ts.tv_sec = (time_t)(at / 1000000000ULL);
		ts.tv_nsec = (long)(at % 1000000000ULL);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		r->exited_before_kill =
		    waitid(P_PID, (id_t)cmd, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		    si.si_pid == cmd;
		r->traced_at_kill = count_traced(false);
		kill(cmd, r->sig);
		r->kill_ns = busy_now_ns() - t0;
	} else if (r->watch) {
		r->first_traced_ns = watch_first_stop(cmd, t0);
	}
	/* The command must be gone within its timeout (+2 s) of the signal. */
	end = busy_now_ns() + (uint64_t)(opt.timeout_s * 1e9) + GRACE_NS;
	for (;;) {
		pid_t w = waitpid(cmd, &st, WNOHANG);

		if (w == cmd)
			break;
		if (busy_now_ns() > end) {
			r->cmd_timed_out = true;
			kill(cmd, SIGKILL);
			waitpid(cmd, &st, 0);
			break;
		}
		busy_sleep_ns(200000);
	}
	r->duration_ns = busy_now_ns() - t0;
	r->cmd_status = st;

	wait_released();
	for (int h = 0; h < nholders; h++) {
		struct holder *x = &holders[h];

		if (reap(x, false)) {
			char s[64];

			describe_status(x->wstatus, s, sizeof(s));
			damage(x, D_DEATH, "pid %d (%s) died: %s", x->pid, kind_name[x->kind], s);
			continue;
		}
		check_threads(x);
		check_fds(x);
		check_maps(x, h);
	}
	fifo_round();
	check_progress(false);
	{
		struct holder *x = &holders[nholders - 1];

		if (!x->reaped) {
			kill(x->pid, SIGCONT);
			check_progress(true);
		}
	}
	for (int h = 0; h < nholders; h++)
		check_own(&holders[h], h);
	finish_holders();

	r->ncut = r->nintact = r->nhalf = r->ndamaged = 0;
	for (int h = 0; h < nholders; h++) {
		struct holder *x = &holders[h];
		bool cut = x->fds_dead || x->maps_replaced;
		bool intact = x->fds_target || x->maps_intact;

		if (cut && intact)
			r->nhalf++;
		else if (cut)
			r->ncut++;
		else if (intact)
			r->nintact++;
		if (x->damaged)
			r->ndamaged++;
	}
	/* During: a holder was traced when the signal went, or the holders
	 * show that the command was cut short (some cut and some not, half
	 * cut, damaged). After: the command had exited, or (nothing traced,
	 * every holder cut, none damaged) it had released everyone and was
	 * printing its report. Before: nothing traced, nothing touched. */
	if (!r->sig)
		r->when = W_DURING;
	else if (r->exited_before_kill || WIFEXITED(r->cmd_status))
		r->when = W_AFTER;
	else if (r->traced_at_kill || r->nhalf || r->ndamaged || (r->ncut && r->nintact))
		r->when = W_DURING;
	else if (r->ncut)
		r->when = W_AFTER;
	else
		r->when = W_BEFORE;
}

/* ---- the cases ---------------------------------------------------------------------- */

struct tally {
	int trials, during, cutting, before, after, damaging;
	int damaged[NKINDS];
	char example[NKINDS][400];
	int tags[NTAGS]; /* holders damaged, by kind of damage */
	int cmd_bad;
	char cmd_example[400];
};

static void append(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len + 16 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

static const char *signame(int sig)
{
	static char buf[16];
	const char *a = sigabbrev_np(sig);

	snprintf(buf, sizeof(buf), "sig%s", a ? a : "?");
	for (char *p = buf; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	return buf;
}

static void when_text(const struct run *r, char *buf, size_t size)
{
	if (r->watch)
		snprintf(buf, size, "signal %.1f ms after the first stop seen, at %.1f ms",
			 (double)r->delay_ns / 1e6, (double)r->kill_ns / 1e6);
	else
		snprintf(buf, size, "signal at %.1f ms", (double)r->kill_ns / 1e6);
}

static void record_trial(struct tally *t, const struct run *r, int number, uint64_t took)
{
	bool kind_hit[NKINDS] = {false};
	int tags[NTAGS] = {0};
	char cmd[400] = "", st[64], when[96], what[300] = "";

	t->trials++;
	if (r->when == W_DURING)
		t->during++;
	else if (r->when == W_BEFORE)
		t->before++;
	else
		t->after++;
	/* Killed once the cut had begun: some holder cut, half cut or damaged. */
	if (r->when == W_DURING && (r->ncut || r->nhalf || r->ndamaged))
		t->cutting++;
	when_text(r, when, sizeof(when));
	describe_status(r->cmd_status, st, sizeof(st));
	for (int h = 0; h < nholders; h++) {
		const struct holder *x = &holders[h];

		if (!x->damaged)
			continue;
		for (int g = 0; g < NTAGS; g++)
			if (x->tags & (1u << g))
				tags[g]++;
		if (!kind_hit[x->kind]) {
			kind_hit[x->kind] = true;
			t->damaged[x->kind]++;
			if (!t->example[x->kind][0])
				append(t->example[x->kind], sizeof(t->example[x->kind]),
				       "first in trial %d (%s): %.300s", number, when, x->damage);
		}
		if (opt.verbose)
			printf("  %s trial %d: %s: %s\n", signame(r->sig), number,
			       kind_name[x->kind], x->damage);
	}
	if (r->ndamaged)
		t->damaging++;
	for (int g = 0; g < NTAGS; g++)
		if (tags[g]) {
			t->tags[g] += tags[g];
			append(what, sizeof(what), "%s%s %d", what[0] ? ", " : "", tag_name[g],
			       tags[g]);
		}

	/* The command's own promises. */
	if (r->cmd_timed_out)
		append(cmd, sizeof(cmd), "still running %.1f s after %s (--timeout %g): %s",
		       opt.timeout_s + 2, signame(r->sig), opt.timeout_s, st);
	if (r->sig != SIGKILL && r->when != W_AFTER &&
	    !(WIFSIGNALED(r->cmd_status) && WTERMSIG(r->cmd_status) == r->sig))
		append(cmd, sizeof(cmd), "%s%s, expected killed by signal %d", cmd[0] ? "; " : "",
		       st, r->sig);
	if (r->sig != SIGKILL && (r->nhalf || (r->ncut && r->nintact)))
		append(cmd, sizeof(cmd),
		       "%sholders left %d cut, %d untouched, %d half cut (all or none)",
		       cmd[0] ? "; " : "", r->ncut, r->nintact, r->nhalf);
	if (cmd[0]) {
		t->cmd_bad++;
		if (!t->cmd_example[0])
			append(t->cmd_example, sizeof(t->cmd_example),
			       "first in trial %d (%s): %.300s", number, when, cmd);
	}
	if (opt.verbose || r->ndamaged || cmd[0])
		printf(
		    "  %s trial %d (%s, %d holders traced then, %s): command %s; holders %d cut, "
		    "%d untouched, %d half; %d damaged%s%s%s%s [%.1f s]\n",
		    signame(r->sig), number, when, r->traced_at_kill,
		    r->when == W_DURING	  ? "during the revocation"
		    : r->when == W_BEFORE ? "before the first stop"
					  : "after the command finished",
		    st, r->ncut, r->nintact, r->nhalf, r->ndamaged, what[0] ? ": " : "", what,
		    cmd[0] ? "; command: " : "", cmd, (double)took / 1e9);
	fflush(stdout);
}

static int need_during(const struct tally *t)
{
	int need = (t->trials * opt.min_conclusive_pct + 99) / 100;

	return need < 1 ? 1 : need;
}

/* Enough trials landed in the revocation, one at least once the cut had begun. */
static bool conclusive(const struct tally *t)
{
	return t->during >= need_during(t) && t->cutting >= 1;
}

static bool any_damage(const struct tally *t)
{
	for (int k = 0; k < NKINDS; k++)
		if (t->damaged[k])
			return true;
	return t->cmd_bad > 0;
}

static int report(int sig, const struct tally *t, int planned)
{
	int need = need_during(t), failed = 0;
	char landed[300], inconclusive[200] = "", kinds_of_damage[400] = "";

	snprintf(landed, sizeof(landed),
		 "%d trials%s, %d landed during the revocation (%d once the cut had begun), %d "
		 "before it, %d after it",
		 t->trials, t->trials < planned ? " (budget)" : "", t->during, t->cutting,
		 t->before, t->after);
	if (!conclusive(t))
		snprintf(inconclusive, sizeof(inconclusive),
			 "inconclusive: %d of %d trials landed during the revocation (need %d), %d "
			 "once the cut had begun (need 1)",
			 t->during, t->trials, need, t->cutting);
	for (int g = 0; g < NTAGS; g++)
		if (t->tags[g])
			append(kinds_of_damage, sizeof(kinds_of_damage), "%s%s %d",
			       kinds_of_damage[0] ? ", " : "", tag_name[g], t->tags[g]);
	printf("  %s: %s; %d trials damaged holders; damaged holders, by kind of damage: %s\n",
	       signame(sig), landed, t->damaging, kinds_of_damage[0] ? kinds_of_damage : "none");
	for (int k = 0; k < NKINDS; k++) {
		if (t->damaged[k]) {
			printf("FAIL kill.%s_%s: %d/%d trials damaged %s holders; %s\n",
			       signame(sig), kind_name[k], t->damaged[k], t->trials, kind_name[k],
			       t->example[k]);
			failed++;
		} else if (inconclusive[0]) {
			printf("FAIL kill.%s_%s: %s; no damage seen\n", signame(sig), kind_name[k],
			       inconclusive);
			failed++;
		} else {
			printf("PASS kill.%s_%s: no %s holder damaged in %s\n", signame(sig),
			       kind_name[k], kind_name[k], landed);
		}
	}
	if (t->cmd_bad) {
		printf("FAIL kill.%s_command: %d/%d trials: %s\n", signame(sig), t->cmd_bad,
		       t->trials, t->cmd_example);
		failed++;
	} else if (inconclusive[0]) {
		printf("FAIL kill.%s_command: %s\n", signame(sig), inconclusive);
		failed++;
	} else {
		printf("PASS kill.%s_command: %s in %s\n", signame(sig),
		       sig == SIGKILL
			   ? "the command died"
			   : "the command exited by the signal within its timeout, holders "
			     "all cut or all untouched,",
		       landed);
	}
	fflush(stdout);
	return failed;
}

static uint64_t median3(uint64_t a, uint64_t b, uint64_t c)
{
	return a > b ? (b > c ? b : a > c ? c : a) : (a > c ? a : b > c ? c : b);
}

/* A full run must cut every holder and damage none; a --list run must touch
 * none. Three full runs give the median duration *RET_DURATION; three
 * watched ones (polling for the first stop, as half the trials do) give
 * *RET_WINDOW, the median time from the first stop seen to the end. */
static int calibrate(uint64_t *ret_duration, uint64_t *ret_window)
{
	uint64_t d[3], w[3];
	char out[400], st[64];
	int failed = 0;

	for (int i = 0; i < 7; i++) {
		struct run r = {.list_only = i == 0, .watch = i >= 4};

		run_once(&r);
		describe_status(r.cmd_status, st, sizeof(st));
		command_output(out, sizeof(out));
		if (!WIFEXITED(r.cmd_status) || WEXITSTATUS(r.cmd_status) != 0 || r.ndamaged ||
		    (r.list_only ? r.nintact != nholders : r.ncut != nholders)) {
			printf("FAIL kill.calibration: %s run: command %s, %d of %d holders cut, "
			       "%d untouched, %d half, %d damaged; output: %s\n",
			       r.list_only ? "--list" : "full", st, r.ncut, nholders, r.nintact,
			       r.nhalf, r.ndamaged, out);
			for (int h = 0; h < nholders; h++)
				if (holders[h].damaged)
					printf("  %s\n", holders[h].damage);
			failed++;
		}
		if (i >= 1 && i <= 3)
			d[i - 1] = r.duration_ns;
		if (i >= 4)
			w[i - 4] = r.first_traced_ns ? r.duration_ns - r.first_traced_ns : 0;
	}
	*ret_duration = median3(d[0], d[1], d[2]);
	*ret_window = median3(w[0], w[1], w[2]);
	if (!failed)
		printf("PASS kill.calibration: %d holders: --list touched none; 6 full runs cut "
		       "all, damaged none (%.1f, %.1f, %.1f ms; from the first stop seen to the "
		       "end %.1f, %.1f, %.1f ms)\n",
		       nholders, (double)d[0] / 1e6, (double)d[1] / 1e6, (double)d[2] / 1e6,
		       (double)w[0] / 1e6, (double)w[1] / 1e6, (double)w[2] / 1e6);
	fflush(stdout);
	return failed;
}

/* The checks themselves: a dying tracer that blocks every signal of every
 * holder thread and changes a register must be caught in every shape. */
static int selfcheck(void)
{
	struct run r = {.sabotage = true};
	bool hit[NKINDS] = {false};
	char missed[200] = "";

	run_once(&r);
	for (int h = 0; h < nholders; h++)
		if ((holders[h].tags & (1u << D_SIGBLK)) &&
		    (holders[h].kind == K_FIFO || holders[h].kind == K_SLEEP ||
		     holders[h].kind == K_MMAP || holders[h].kind == K_SIGMASK ||
		     (holders[h].tags & (1u << D_REGS))))
			hit[holders[h].kind] = true;
	for (int k = 0; k < NKINDS; k++)
		if (!hit[k])
			append(missed, sizeof(missed), "%s%s", missed[0] ? ", " : "", kind_name[k]);
	if (missed[0] || !WIFEXITED(r.cmd_status) || WEXITSTATUS(r.cmd_status) != 0) {
		char st[64];

		describe_status(r.cmd_status, st, sizeof(st));
		printf("FAIL kill.selfcheck: a dying tracer that blocked every signal and changed "
		       "rbx went unnoticed in: %s (saboteur %s)\n",
		       missed[0] ? missed : "-", st);
		return 1;
	}
	printf("PASS kill.selfcheck: a dying tracer that blocked every signal and changed rbx is "
	       "caught in every shape (%d of %d holders damaged)\n",
	       r.ndamaged, nholders);
	return 0;
}

static void usage(void)
{
	printf(
	    "usage: test-killtrials [--long] [--holders N] [--trials N | --trials SIG=N,...]\n"
	    "                       [--signals kill,term,int,hup,pipe] [--timeout S] [--budget S]\n"
	    "                       [--seed N] [--min-conclusive PCT] [--verbose]\n"
	    "defaults (CI): 48 holders, 16 SIGKILL trials and 8 for each other signal,\n"
	    "--timeout 3, a budget of 45 s of trials (fewer trials when they would not fit).\n"
	    "--long: 200 holders, 60 trials per signal, no budget (tens of minutes).\n"
	    "The environment variable REVOKE_KILLTRIALS adds options (e.g. \"--long\").\n");
}

static int sig_index(const char *name)
{
	static const char *const names[NSIGS] = {"kill", "term", "int", "hup", "pipe"};

	if (strncasecmp(name, "sig", 3) == 0)
		name += 3;
	for (int i = 0; i < NSIGS; i++)
		if (strcasecmp(name, names[i]) == 0)
			return i;
	return -1;
}

static void parse_options(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"long", no_argument, NULL, 'L'},
	    {"holders", required_argument, NULL, 'n'},
	    {"trials", required_argument, NULL, 't'},
	    {"signals", required_argument, NULL, 's'},
	    {"timeout", required_argument, NULL, 'T'},
	    {"budget", required_argument, NULL, 'b'},
	    {"seed", required_argument, NULL, 'S'},
	    {"min-conclusive", required_argument, NULL, 'm'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'L':
			opt.holders = 200;
			for (int i = 0; i < NSIGS; i++)
				opt.trials[i] = 60;
			opt.budget_s = 0;
			break;
		case 'n':
			opt.holders = atoi(optarg);
			if (opt.holders < NKINDS || opt.holders > MAX_HOLDERS)
				die("--holders: %d to %d", NKINDS, MAX_HOLDERS);
			break;
		case 't':
			if (strchr(optarg, '=')) {
				char *copy = strdup(optarg), *tok, *save = NULL;

				for (tok = strtok_r(copy, ",", &save); tok;
				     tok = strtok_r(NULL, ",", &save)) {
					char *eq = strchr(tok, '=');
					int i;

					if (!eq)
						die("--trials: SIG=N,...");
					*eq = '\0';
					i = sig_index(tok);
					if (i < 0)
						die("--trials: unknown signal %s", tok);
					opt.trials[i] = atoi(eq + 1);
				}
				free(copy);
			} else {
				for (int i = 0; i < NSIGS; i++)
					opt.trials[i] = atoi(optarg);
			}
			break;
		case 's': {
			char *copy = strdup(optarg), *tok, *save = NULL;

			for (int i = 0; i < NSIGS; i++)
				opt.want[i] = false;
			for (tok = strtok_r(copy, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				int i = sig_index(tok);

				if (i < 0)
					die("--signals: unknown signal %s", tok);
				opt.want[i] = true;
			}
			free(copy);
			break;
		}
		case 'T':
			opt.timeout_s = atof(optarg);
			break;
		case 'b':
			opt.budget_s = atof(optarg);
			break;
		case 'S':
			opt.seed = strtoull(optarg, NULL, 0);
			break;
		case 'm':
			opt.min_conclusive_pct = atoi(optarg);
			break;
		case 'v':
			opt.verbose = true;
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
	uint64_t duration, window = 0;
	uint64_t rng = opt.seed;
	int failed = 0, total = 0, number = 0;

	make_files();
	if (calibrate(&duration, &window) + selfcheck()) {
		remove_files();
		return 1;
	}
	for (int i = 0; i < NSIGS; i++)
		if (opt.want[i])
			total += opt.trials[i];
	printf("  %d holders; a third of the trials spread over [0, %.1f ms] from the start, the "
	       "others over [0, %.1f ms] from the first stop seen; seed %" PRIu64
	       ", --timeout %g\n",
	       opt.holders, (double)duration / 1e6, (double)window / 1e6, opt.seed, opt.timeout_s);
	if (opt.budget_s > 0)
		printf("  budget: %.0f s for %d trials, shared by the signals in proportion\n",
		       opt.budget_s, total);
	fflush(stdout);

	for (int i = 0; i < NSIGS; i++) {
		struct tally t;
		int n = opt.trials[i];
		uint64_t t_sig = busy_now_ns();
		double share = total ? opt.budget_s * 1e9 * n / total : 0;

		if (!opt.want[i] || n <= 0)
			continue;
		memset(&t, 0, sizeof(t));
		for (int k = 0; k < 2 * n; k++) {
			/* A third of the trials: one per slice of [0, D] from the
			 * start of the command; the others one per slice of [0, W]
			 * from the moment a holder is seen traced (W: from then to
			 * the end in the watched calibration runs), where the damage
			 * can happen. Each at a seeded point in its slice. When the
			 * planned N left the case inconclusive (and undamaged), up to
			 * N more from the first stop on, at new points. */
			double u = (double)(busy_mix(&rng) >> 11) / (double)(1ULL << 53);
			bool timed = k < n && k % 3 == 0;
			int ntimed = (n + 2) / 3, slice, slices;
			struct run r = {.sig = all_signals[i], .watch = !timed};
			uint64_t t_trial = busy_now_ns();

			if (timed) {
				slice = k / 3;
				slices = ntimed;
			} else if (k < n) {
				slice = k - k / 3 - 1;
				slices = n - ntimed;
			} else {
				slice = k - n;
				slices = n;
			}
			r.delay_ns = (uint64_t)((double)(timed ? duration : window) * (slice + u) /
						(slices ? slices : 1));
			if (k >= n && (conclusive(&t) || any_damage(&t)))
				break;
			/* The budget bounds the run (damaged holders make a trial
			 * slower: its checks wait out their grace). */
			if (opt.budget_s > 0 && k >= 2 &&
			    (double)(t_trial - t_sig) > (k < n ? share : 1.5 * share))
				break;
			run_once(&r);
			record_trial(&t, &r, ++number, busy_now_ns() - t_trial);
		}
		failed += report(all_signals[i], &t, n);
	}
	remove_files();
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *env = getenv("REVOKE_KILLTRIALS");
	struct rlimit rl;
	pid_t pid;
	int st;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (env && *env) {
		char *copy = strdup(env), *args[32] = {argv[0]}, *save = NULL;
		int n = 1;

		for (char *tok = strtok_r(copy, " ", &save); tok && n < 31;
		     tok = strtok_r(NULL, " ", &save))
			args[n++] = tok;
		parse_options(n, args);
	}
	parse_options(argc, argv);

	if (geteuid() != 0) {
		printf("SKIP kill.trials: needs root (the command must be able to stop every "
		       "holder)\n");
		return 0;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	have_avx = busy_have_avx();
	pace = opt.holders > 48 ? (uint64_t)(opt.holders + 47) / 48 : 1;
	holders = calloc(MAX_HOLDERS, sizeof(*holders));
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!holders || sh == MAP_FAILED)
		die("no memory");

	/* The driver runs in a process group of its own; whatever it leaves
	 * behind (it should leave nothing) dies with it. */
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		driver_pid = getpid();
		_exit(driver());
	}
	setpgid(pid, pid);
	{
		siginfo_t si;

		/* Unreaped until its group is killed, so the group id is not reused. */
		while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
			;
	}
	kill(-pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st)) {
		char s[64];

		describe_status(st, s, sizeof(s));
		printf("FAIL kill.driver: %s\n", s);
		return 1;
	}
	return WEXITSTATUS(st);
}
