/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The driver's side of tests/kill/test-killtrials.c (included there only): the
 * target files, forking the holders, the snapshot taken before each run and
 * every check made on each holder after it (struct holder collects what was
 * found, tagged by kind of damage).
 */
#ifndef REVOKE_TEST_KILLTRIALS_CHECKS_H
#define REVOKE_TEST_KILLTRIALS_CHECKS_H

#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "killtrials-holders.h"
#include "scratch.h"

/* ---- the files ------------------------------------------------------------------ */

static char tdir[64], out_path[128];
static dev_t file_dev, fifo_dev;
static ino_t file_ino, fifo_ino;

static __attribute__((noreturn, format(printf, 1, 2))) void die(const char *fmt, ...)
{
	va_list ap;

	printf("FAIL kill.setup: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (tdir[0]) { /* the holders die with the driver; their files go now */
		unlink(fifo_path);
		unlink(file_path);
		unlink(out_path);
		rmdir(tdir);
	}
	_exit(1);
}

static void make_files(void)
{
	uint8_t buf[3 * PAGE];
	struct stat st;
	int fd;

	test_scratch_dir(tdir, sizeof(tdir), "/tmp/revoke-kill-XXXXXX");
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
					    "mapping access wrong",
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
	struct proc_fd fds[MAX_FDS];
	bool reaped;
	int wstatus;
	/* outcome */
	int fds_target, fds_dead; /* target descriptors still the target / dead */
	int maps_intact, maps_replaced;
	int map_state[MAX_WORKERS]; /* per mapper thread: 1 intact, 2 replaced, 3 both */
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
		pid = test_fork();
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
				if (now_ns() > deadline)
					return false;
				sleep_ns(200000);
			}
	return true;
}

/* Everything the checks compare with, taken once the holders run. */
static void snapshot(void)
{
	for (int h = 0; h < nholders; h++) {
		struct holder *x = &holders[h];
		char path[64];

		x->ntids = proc_tasks(x->pid, x->tids, MAX_WORKERS + 2);
		if (x->ntids != kinds[x->kind].n)
			die("holder %d (%s) has %d threads, expected %d", x->pid,
			    kind_name[x->kind], x->ntids, kinds[x->kind].n);
		for (int i = 0; i < x->ntids; i++) {
			struct proc_task t;

			if (proc_task_status(x->pid, x->tids[i], &t) < 0)
				die("holder %d: cannot read task %d", x->pid, x->tids[i]);
			x->sigblk[i] = t.sigblk;
		}
		x->nfds = proc_fds(x->pid, x->fds, MAX_FDS);
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
		if (holders[h].status_fd >= 0 && proc_status_fd_tracer(holders[h].status_fd) != 0) {
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

/* Until no holder thread is traced or in a ptrace stop any more, at most the grace. */
static void wait_released(void)
{
	uint64_t deadline = now_ns() + GRACE_NS;

	for (int h = 0; h < nholders; h++) {
		struct holder *x = &holders[h];

		for (int i = 0; i < x->ntids; i++)
			for (;;) {
				struct proc_task t;

				if (reap(x, false) || proc_task_status(x->pid, x->tids[i], &t) < 0)
					break;
				if (t.tracer == 0 && t.state != 't')
					break;
				if (now_ns() > deadline)
					return;
				sleep_ns(1000000);
			}
	}
	/* An engine may leave a holder running code of its own that puts
	 * it back by itself (a stub ending in rt_sigreturn): that takes
	 * microseconds, but give a holder whose mask is not back yet up to
	 * 100 ms before judging it. A mask left wrong stays wrong. */
	for (int round = 0; round < 10; round++) {
		bool settled = true;

		for (int h = 0; h < nholders && settled; h++) {
			struct holder *x = &holders[h];

			for (int i = 0; i < x->ntids && settled && !x->reaped; i++) {
				struct proc_task t;

				if (proc_task_status(x->pid, x->tids[i], &t) == 0 &&
				    (t.sigblk & ~(1ULL << (SIGBUS - 1))) != x->sigblk[i])
					settled = false;
			}
		}
		if (settled)
			break;
		sleep_ns(10000000);
	}
}

static void check_threads(struct holder *x)
{
	pid_t tids[MAX_WORKERS + 2];
	int n = proc_tasks(x->pid, tids, MAX_WORKERS + 2);

	if (n != x->ntids || memcmp(tids, x->tids, sizeof(pid_t) * (size_t)n) != 0)
		damage(x, D_DEATH, "pid %d has %d threads, had %d", x->pid, n, x->ntids);
	for (int i = 0; i < x->ntids; i++) {
		struct proc_task t;

		if (proc_task_status(x->pid, x->tids[i], &t) < 0)
			continue;
		if (t.tracer != 0)
			damage(x, D_TRACED,
			       "pid %d tid %d still traced by %d 2 s after the command "
			       "ended",
			       x->pid, x->tids[i], t.tracer);
		if (x->kind == K_STOPPED) {
			/* Detached by the command's death, each thread is woken
			 * to re-enter the group stop: R until it runs, which on
			 * a loaded machine can take a while. A group stop that
			 * was lost leaves it running for good. */
			for (int tries = 0; t.state != 'T' && tries < 200; tries++) {
				sleep_ns(10000000);
				if (proc_task_status(x->pid, x->tids[i], &t) < 0)
					break;
			}
			if (t.state != 'T')
				damage(x, D_STOPPED,
				       "pid %d tid %d (SIGSTOPped) is in state %c, expected T",
				       x->pid, x->tids[i], t.state);
		} else if (t.state == 't' || t.state == 'T') {
			damage(x, D_STOPPED, "pid %d tid %d left in state %c", x->pid, x->tids[i],
			       t.state);
		}
		if (x->kind == K_STOPPED)
			continue; /* its mask once continued: check_sigblk() */
		/* A mapper inside its SIGBUS handler has SIGBUS blocked for a
		 * moment: only a mask that stays wrong is damage. */
		for (int tries = 0; (t.sigblk & ~(1ULL << (SIGBUS - 1))) == x->sigblk[i] &&
				    t.sigblk != x->sigblk[i] && tries < 100;
		     tries++) {
			sleep_ns(1000000);
			if (proc_task_status(x->pid, x->tids[i], &t) < 0)
				break;
		}
		if (t.sigblk != x->sigblk[i])
			damage(x, D_SIGBLK, "pid %d tid %d SigBlk %016" PRIx64 ", was %016" PRIx64,
			       x->pid, x->tids[i], t.sigblk, x->sigblk[i]);
	}
}

/* The signal mask of every thread of X is what it was. */
static void check_sigblk(struct holder *x)
{
	for (int i = 0; i < kinds[x->kind].n; i++) {
		struct proc_task t;

		if (proc_task_status(x->pid, x->tids[i], &t) < 0)
			continue;
		if (t.sigblk != x->sigblk[i])
			damage(x, D_SIGBLK, "pid %d tid %d SigBlk %016" PRIx64 ", was %016" PRIx64,
			       x->pid, x->tids[i], t.sigblk, x->sigblk[i]);
	}
}

static void check_fds(struct holder *x)
{
	struct proc_fd now[MAX_FDS];
	int n = proc_fds(x->pid, now, MAX_FDS), i = 0, j = 0;

	x->fds_target = x->fds_dead = 0;
	if (n < 0)
		return;
	while (i < x->nfds || j < n) {
		if (j >= n || (i < x->nfds && x->fds[i].fd < now[j].fd)) {
			damage(x, D_FDS, "pid %d fd %d was closed", x->pid, x->fds[i].fd);
			i++;
		} else if (i >= x->nfds || now[j].fd < x->fds[i].fd) {
			char link[80];

			if (proc_fd_link(x->pid, now[j].fd, link, sizeof(link)) < 0)
				link[0] = '\0';
			damage(x, D_FDS, "pid %d has a new fd %d (%s)", x->pid, now[j].fd, link);
			j++;
		} else {
			const struct proc_fd *a = &x->fds[i], *b = &now[j];

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
			if (stat(mf, &st) == 0 && is_target(st.st_dev, st.st_ino)) {
				x->maps_intact++;
				x->map_state[i] |= 1;
			} else {
				x->maps_replaced++;
				x->map_state[i] |= 2;
			}
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
		/* Checked after the progress checks: the mapper has touched both
		 * mappings since the command ended. */
		if (s->work == W_MMAP && x->map_state[i] == 1 && atomic_load(&s->sigbus))
			damage(x, D_MAPBYTE, "pid %d tid %d (mmap): SIGBUS from intact mappings",
			       x->pid, s->tid);
		if (s->work == W_MMAP && x->map_state[i] == 2 && !atomic_load(&s->sigbus))
			damage(x, D_MAPBYTE,
			       "pid %d tid %d (mmap): replaced mappings raised no SIGBUS", x->pid,
			       s->tid);
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
	deadline = now_ns() + GRACE_NS;
	for (int h = 0; h < nholders; h++) {
		struct holder *x = &holders[h];
		bool intact = !x->reaped && fifo_intact(x);

		for (int i = 0; i < kinds[x->kind].n; i++) {
			struct slot *s = &sh->slot[h][i];
			int st;

			if (s->work != W_FIFO || x->reaped)
				continue;
			while ((st = atomic_load(&s->fifo)) == FIFO_WAITING && now_ns() < deadline)
				sleep_ns(1000000);
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
	uint64_t before[MAX_HOLDERS][MAX_WORKERS], deadline = now_ns() + GRACE_NS;

	for (int h = 0; h < nholders; h++)
		for (int i = 0; i < kinds[holders[h].kind].n; i++)
			before[h][i] = atomic_load(&sh->slot[h][i].progress);
	for (int h = 0; h < nholders; h++) {
		struct holder *x = &holders[h];

		if (x->reaped || (x->kind == K_STOPPED) != stopped_ones)
			continue;
		for (int i = 0; i < kinds[x->kind].n; i++) {
			struct slot *s = &sh->slot[h][i];

			while (atomic_load(&s->progress) == before[h][i] && now_ns() < deadline)
				sleep_ns(1000000);
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
	uint64_t deadline = now_ns() + GRACE_NS;

	atomic_store(&sh->exit_now, 1);
	for (int h = 0; h < nholders; h++) {
		struct holder *x = &holders[h];
		bool was_reaped = x->reaped;

		while (!reap(x, false) && now_ns() < deadline)
			sleep_ns(1000000);
		if (!x->reaped) {
			damage(x, D_EXIT, "pid %d did not exit within 2 s when asked (state %c)",
			       x->pid, task_state(x->pid, x->pid));
			kill(x->pid, SIGKILL);
			reap(x, true);
		} else if (!was_reaped &&
			   !(WIFEXITED(x->wstatus) && WEXITSTATUS(x->wstatus) == 0)) {
			char st[64];

			test_describe_status(x->wstatus, st, sizeof(st));
			damage(x, D_EXIT, "pid %d asked to exit: %s", x->pid, st);
		}
	}
	close_status_fds();
}

#endif
