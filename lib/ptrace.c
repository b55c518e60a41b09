/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Stopping every thread of a process with ptrace and letting it go again
 * (inject.c runs syscalls in it meanwhile). See ../shared/notes/injection.md.
 */
#include <dirent.h>
#include <sched.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

#include "tracee.h"

#define PF_EXITING   0x00000004u
#define PF_IO_WORKER 0x00000010u
#define PF_KTHREAD   0x00200000u

/* Re-listing /proc/PID/task stops when a round finds no new thread; a
 * process spawning threads faster than we stop them gives up here. */
#define MAX_ROUNDS     64
#define MAX_ANCESTORS  256
#define RESTOP_WAIT_NS (100 * 1000000ull)

/* Threads seized but never stopped (D state after the interrupt): only the
 * thread that seized them may detach them, so the list is per thread. */
static __thread pid_t orphans[256];
static __thread size_t norphans;

static void reap_orphans(void)
{
	for (size_t i = 0; i < norphans;) {
		int status;
		pid_t p = waitpid(orphans[i], &status, __WALL | WNOHANG);

		if (p == 0 && ptrace(PTRACE_DETACH, orphans[i], NULL, NULL) < 0) {
			i++;
			continue;
		}
		if (p > 0 && WIFSTOPPED(status)) {
			/* A signal on its way in goes on with it, not dropped. */
			long sig = status >> 16 == 0 && WSTOPSIG(status) != (SIGTRAP | 0x80)
				       ? WSTOPSIG(status)
				       : 0;
			ptrace(PTRACE_DETACH, orphans[i], NULL, (void *)sig);
		}
		orphans[i] = orphans[--norphans];
	}
}

static void add_orphan(pid_t tid)
{
	if (norphans < ARRAY_SIZE(orphans))
		orphans[norphans++] = tid;
}

/* Polls without a busy core: a few yields (the tracee usually stops within
 * microseconds), then sleeps doubling up to 1 ms, never past DEADLINE.
 * Returns false when the deadline has passed. */
bool rv_ptrace_backoff(unsigned int *n, uint64_t deadline)
{
	uint64_t now = rv_now_ns(), ns;

	if (now >= deadline)
		return false;
	if ((*n)++ < 16) {
		sched_yield();
		return true;
	}
	ns = 10000ull << (*n - 16 < 7 ? *n - 16 : 7);
	if (ns > deadline - now)
		ns = deadline - now;
	nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = (long)ns}, NULL);
	return true;
}

int rv_ptrace_wait(pid_t tid, uint64_t deadline, int *ret_status)
{
	unsigned int n = 0;

	for (;;) {
		int status;
		pid_t p = waitpid(tid, &status, __WALL | WNOHANG);

		if (p == tid) {
			*ret_status = status;
			return 1;
		}
		if (p < 0 && errno != EINTR)
			return negative_errno();
		if (!rv_ptrace_backoff(&n, deadline))
			return 0;
	}
}

static ssize_t read_text(const char *path, char *buf, size_t size)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t l;

	if (fd < 0)
		return errno == ENOENT ? -ESRCH : negative_errno();
	l = read(fd, buf, size - 1);
	if (l < 0)
		return negative_errno();
	buf[l] = '\0';
	return l;
}

static int read_status(pid_t pid, pid_t tid, struct rv_proc_status *ret)
{
	char path[64], buf[4096];
	ssize_t l;

	if (tid > 0)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/status", pid);
	l = read_text(path, buf, sizeof(buf));
	if (l < 0)
		return (int)l;
	return rv_parse_status(buf, ret);
}

/* The kernel's PF_* flags of a thread (field 9 of stat, after the comm). */
static int read_pf_flags(pid_t pid, pid_t tid, unsigned long *ret)
{
	char path[64], buf[1024], *p, *end;
	unsigned long v;
	ssize_t l;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	l = read_text(path, buf, sizeof(buf));
	if (l < 0)
		return (int)l;
	p = strrchr(buf, ')');
	if (!p)
		return -EINVAL;
	for (int field = 2; field < 9; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -EINVAL;
	}
	errno = 0;
	v = strtoul(p + 1, &end, 10);
	if (errno || end == p + 1 || *end != ' ')
		return -EINVAL;
	*ret = v;
	return 0;
}

/* Stopping a tracer of ours (or of an ancestor, which then waits on it
 * while we wait on the ancestor) would hang both. Lists the thread groups
 * tracing us or an ancestor (read once per batch); returns how many. */
static size_t our_tracers(pid_t *v, size_t cap)
{
	char path[64] = "/proc/thread-self/status", buf[4096];
	size_t n = 0;

	for (int depth = 0; depth < MAX_ANCESTORS; depth++) {
		struct rv_proc_status st, tst;
		const char *p;
		char *nl;
		int ppid;

		if (read_text(path, buf, sizeof(buf)) < 0 || rv_parse_status(buf, &st) < 0)
			break; /* an ancestor vanished: nothing left to check above it */
		if (st.tracer > 0 && read_status(st.tracer, 0, &tst) == 0 && n < cap)
			v[n++] = tst.tgid;
		/* PPid: from the same text, one read per ancestor. */
		p = strstr(buf, "\nPPid:");
		if (!p)
			break;
		p += strlen("\nPPid:");
		p += strspn(p, " \t");
		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		if (rv_parse_int(p, &ppid) < 0 || ppid <= 0)
			break;
		snprintf(path, sizeof(path), "/proc/%d/status", ppid);
	}
	return n;
}

static struct rv_thread *find_thread(struct rv_tracee *t, pid_t tid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->threads[i].tid == tid)
			return &t->threads[i];
	return NULL;
}

static int add_thread(struct rv_tracee *t, pid_t tid)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 8;
		struct rv_thread *v = realloc(t->threads, cap * sizeof(*v));
		ptrdiff_t inj = t->inj ? t->inj - t->threads : -1;

		if (!v)
			return -ENOMEM;
		t->threads = v;
		t->cap = cap;
		if (inj >= 0)
			t->inj = &v[inj];
	}
	t->threads[t->n++] = (struct rv_thread){.tid = tid};
	return 0;
}

/* Seize and interrupt every thread of the task list not seized yet.
 * *ret_again: some thread could not be seized yet (D state) or is new:
 * list the tasks again once the seized ones stopped. */
static int seize_new(struct rv_tracee *t, char reason[128], bool *ret_again)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	int r = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", t->pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : negative_errno();
	*ret_again = false;
	while ((de = readdir(d))) {
		struct rv_proc_status st;
		unsigned long pf = 0;
		long opts = PTRACE_O_TRACESYSGOOD;
		int tid;

		if (rv_parse_int(de->d_name, &tid) < 0 || find_thread(t, tid))
			continue;
		if (tid == t->pid && t->have_leader_st) {
			/* The checks just read it: the same file. */
			st = t->leader_st;
			r = 0;
		} else
			r = read_status(t->pid, tid, &st);
		t->have_leader_st = false;
		if (r == 0 && st.state == 'D') {
			/* Uninterruptible (a vfork parent, I/O): PTRACE_INTERRUPT
			 * would not stop it, and a seized thread we cannot wait
			 * for we cannot detach either. Wait for it unseized, until
			 * the deadline (the caller's). */
			if (rv_now_ns() >= t->deadline_ns) {
				snprintf(reason, 128, "thread %d would not stop (state %c)", tid,
					 st.state);
				r = -ETIMEDOUT;
				goto out;
			}
			*ret_again = true;
			continue;
		}
		if (r == -ESRCH)
			continue;
		if (r < 0)
			goto out;
		if (st.state == 'Z' || st.state == 'X')
			continue; /* a zombie leader: its live threads carry the process */
		if (st.tracer != 0) {
			snprintf(reason, 128, "already traced by pid %d", st.tracer);
			r = -EPERM;
			goto out;
		}
		r = read_pf_flags(t->pid, tid, &pf);
		if (r == -ESRCH)
			continue;
		if (r < 0)
			goto out;
		/* io_uring workers never return to user space; exiting threads
		 * cannot be seized. */
		if (pf & (PF_IO_WORKER | PF_KTHREAD | PF_EXITING))
			continue;
		/* Seccomp filters apply to injected syscalls (a RET_KILL on
		 * dup3 would kill the holder): suspend them, or refuse. */
		if (st.seccomp != 0)
			opts |= PTRACE_O_SUSPEND_SECCOMP;
		if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)opts) < 0) {
			if (errno == ESRCH)
				continue;
			r = negative_errno();
			if (r == -EPERM && read_status(t->pid, tid, &st) == 0 && st.tracer != 0)
				snprintf(reason, 128, "already traced by pid %d", st.tracer);
			else if (r == -EPERM && (opts & PTRACE_O_SUSPEND_SECCOMP))
				snprintf(
				    reason, 128,
				    "under a seccomp filter; suspending it needs CAP_SYS_ADMIN");
			else if (r == -EINVAL && (opts & PTRACE_O_SUSPEND_SECCOMP))
				snprintf(reason, 128,
					 "under a seccomp filter; kernel cannot suspend it");
			else
				snprintf(reason, 128, "cannot trace thread %d: %s", tid,
					 strerror(-r));
			if (r == -EINVAL)
				r = -EPERM;
			goto out;
		}
		r = add_thread(t, tid);
		if (r < 0) {
			ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
			add_orphan(tid); /* detached by the next call once it stops */
			snprintf(reason, 128, "out of memory");
			goto out;
		}
		if (t->stop_start_ns == 0)
			t->stop_start_ns = rv_now_ns();
		if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0)
			t->threads[t->n - 1].gone = true; /* died between seize and interrupt */
		*ret_again = true;
		t->found_new = true;
	}
	r = 0;
out:
	closedir(d);
	return r;
}

/* One look at every seized thread not stopped yet, without waiting.
 * Returns a thread still to stop, or NULL when all did (or are gone);
 * *ret_progress is set when some stop arrived. */
static struct rv_thread *poll_stopped(struct rv_tracee *t, bool *ret_progress)
{
	struct rv_thread *late = NULL;

	for (size_t i = 0; i < t->n; i++) {
		struct rv_thread *th = &t->threads[i];
		int status;
		pid_t p;

		if (th->stopped || th->gone)
			continue;
		p = waitpid(th->tid, &status, __WALL | WNOHANG);
		if (p < 0 && errno == ECHILD) {
			th->gone = true;
			continue;
		}
		if (p <= 0) {
			late = th;
			continue;
		}
		*ret_progress = true;
		if (WIFEXITED(status) || WIFSIGNALED(status))
			th->gone = true;
		else if (WIFSTOPPED(status) && status >> 16 == PTRACE_EVENT_STOP) {
			if (rv_is_stop_sig(WSTOPSIG(status)))
				t->group_stopped = true;
			/* Also a group-stop (SIGSTOP): the kernel reinstates it
			 * when we detach. */
			th->stopped = true;
		} else if (WIFSTOPPED(status) && status >> 16 == 0 &&
			   WSTOPSIG(status) != (SIGTRAP | 0x80)) {
			/* A signal on its way in before our interrupt: give
			 * it back; the interrupt stop follows. */
			ptrace(PTRACE_CONT, th->tid, NULL, (void *)(long)WSTOPSIG(status));
			late = th;
		} else {
			ptrace(PTRACE_CONT, th->tid, NULL, NULL);
			late = th;
		}
	}
	return late;
}

static void release_threads(struct rv_tracee *t)
{
	for (size_t i = 0; i < t->n; i++) {
		struct rv_thread *th = &t->threads[i];

		if (th->gone)
			continue;
		if (ptrace(PTRACE_DETACH, th->tid, NULL, (void *)(long)th->detach_sig) < 0 &&
		    errno == ESRCH) {
			/* Not in a ptrace stop (yet): an interrupt is pending. */
			int status;

			if (waitpid(th->tid, &status, __WALL | WNOHANG) == th->tid &&
			    WIFSTOPPED(status))
				ptrace(PTRACE_DETACH, th->tid, NULL, NULL);
			else if (kill(th->tid, 0) == 0 || errno != ESRCH)
				add_orphan(th->tid);
		}
	}
}

static void tracee_free(struct rv_tracee *t)
{
	for (size_t i = 0; i < t->nscratch; i++)
		free(t->scratch[i].saved);
	free(t->scratch);
	free(t->threads);
	free(t);
}

/* What can be checked before touching the process. */
static int check_req(struct rv_stop_req *q, const pid_t *tracers, size_t ntracers,
		     struct rv_proc_status *ret_st)
{
	struct rv_proc_status st;
	int r;

	if (q->pid <= 0)
		return -EINVAL;
	if (q->pid == getpid()) {
		snprintf(q->reason, 128, "is the calling process");
		return -EPERM;
	}
	if (q->have_status) {
		st = q->status;
		r = 0;
	} else
		r = read_status(q->pid, 0, &st);
	if (r < 0) {
		if (r == -ESRCH)
			snprintf(q->reason, 128, "exited");
		return r;
	}
	if (st.tgid != q->pid) {
		snprintf(q->reason, 128, "not a process (a thread of %d)", st.tgid);
		return -ESRCH;
	}
	if (st.tracer != 0) {
		snprintf(q->reason, 128, "already traced by pid %d", st.tracer);
		return -EPERM;
	}
	for (size_t i = 0; i < ntracers; i++)
		if (tracers[i] == q->pid) {
			snprintf(q->reason, 128, "traces the caller or one of its ancestors");
			return -EPERM;
		}
	if (q->pidfd >= 0 && syscall(SYS_pidfd_send_signal, q->pidfd, 0, NULL, 0) < 0) {
		snprintf(q->reason, 128, "exited");
		return -ESRCH;
	}
	*ret_st = st;
	return 0;
}

/* Every thread stopped and no new one: pick the injecting thread. */
static int tracee_finish(struct rv_tracee *t, char reason[128])
{
	int r;

	/* The process behind the pid may have died and the pid been reused
	 * before we seized it; the pidfd still names the original. */
	if (t->pidfd >= 0 && syscall(SYS_pidfd_send_signal, t->pidfd, 0, NULL, 0) < 0) {
		snprintf(reason, 128, "exited (pid reused)");
		return -ESRCH;
	}
	for (size_t i = 0; i < t->n; i++)
		if (!t->threads[i].gone && (!t->inj || t->threads[i].tid == t->pid))
			t->inj = &t->threads[i];
	if (!t->inj) {
		snprintf(reason, 128, "exited");
		return -ESRCH;
	}
	r = rv_arch_get_regs(t->inj->tid, &t->saved);
	if (r < 0) {
		snprintf(reason, 128, "cannot read registers of thread %d", t->inj->tid);
		return r;
	}
	if (!rv_arch_is_native(&t->saved)) {
		snprintf(reason, 128, "a 32-bit (compat) process");
		return -EOPNOTSUPP;
	}
	t->in_syscall = rv_arch_syscall_nr(&t->saved) >= 0;
	t->where = AT_SIGNAL_STOP;
	return 0;
}

static void stop_failed(struct rv_stop_req *q, struct rv_tracee **w, int r)
{
	release_threads(*w);
	tracee_free(*w);
	*w = NULL;
	q->error = -r;
}

int rv_tracees_stop(struct rv_stop_req *reqs, size_t n, uint64_t deadline_ns)
{
	pid_t tracers[MAX_ANCESTORS];
	size_t ntracers, active = 0;
	struct rv_tracee **w;
	unsigned int nb = 0;

	reap_orphans();
	if (deadline_ns == 0)
		deadline_ns = rv_now_ns() + RV_DEFAULT_TIMEOUT_MS * 1000000ull;
	w = calloc(n ? n : 1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	ntracers = our_tracers(tracers, ARRAY_SIZE(tracers));
	for (size_t i = 0; i < n; i++) {
		struct rv_stop_req *q = &reqs[i];
		struct rv_proc_status st;
		struct rv_tracee *t;
		int r;

		q->tracee = NULL;
		q->error = 0;
		q->reason[0] = '\0';
		r = check_req(q, tracers, ntracers, &st);
		if (r < 0) {
			q->error = -r;
			continue;
		}
		t = calloc(1, sizeof(*t));
		if (!t) {
			for (size_t j = 0; j < i; j++)
				if (w[j])
					tracee_free(w[j]);
			free(w);
			return -ENOMEM;
		}
		t->pid = q->pid;
		t->pidfd = q->pidfd;
		t->deadline_ns = deadline_ns;
		t->seize_again = true;
		t->leader_st = st;
		t->have_leader_st = true;
		w[i] = t;
		active++;
	}

	while (active > 0) {
		bool progress = false;

		/* Seize and interrupt everywhere first: the stops then arrive
		 * meanwhile, and the waits below mostly find them there. */
		for (size_t i = 0; i < n; i++) {
			struct rv_tracee *t = w[i];
			int r;

			if (!t || !t->seize_again)
				continue;
			if (t->rounds == MAX_ROUNDS) {
				snprintf(reqs[i].reason, 128, "keeps creating threads");
				stop_failed(&reqs[i], &w[i], -ETIMEDOUT);
				active--;
				continue;
			}
			t->found_new = false;
			r = seize_new(t, reqs[i].reason, &t->seize_again);
			if (r < 0) {
				stop_failed(&reqs[i], &w[i], r);
				active--;
				continue;
			}
			if (t->found_new) {
				t->rounds++;
				t->wait_deadline = rv_stop_deadline(t->deadline_ns);
			}
		}
		for (size_t i = 0; i < n; i++) {
			struct rv_tracee *t = w[i];
			struct rv_thread *late;
			int r;

			if (!t)
				continue;
			late = poll_stopped(t, &progress);
			if (!late) {
				if (t->seize_again)
					continue; /* the task list again, next sweep */
				r = tracee_finish(t, reqs[i].reason);
				if (r < 0)
					stop_failed(&reqs[i], &w[i], r);
				else {
					reqs[i].reason[0] = '\0';
					reqs[i].tracee = t;
					w[i] = NULL;
				}
				active--;
				progress = true;
			} else if (rv_now_ns() >= t->wait_deadline) {
				struct rv_proc_status st = {.state = '?'};

				read_status(t->pid, late->tid, &st);
				snprintf(reqs[i].reason, 128, "thread %d would not stop (state %c)",
					 late->tid, st.state);
				stop_failed(&reqs[i], &w[i], -ETIMEDOUT);
				active--;
			}
		}
		if (progress)
			nb = 0;
		else if (active > 0)
			rv_ptrace_backoff(&nb, UINT64_MAX);
	}
	free(w);
	return 0;
}

int rv_tracee_stop(pid_t pid, int pidfd, uint64_t deadline_ns, struct rv_tracee **ret,
		   char reason[128])
{
	struct rv_stop_req q = {.pid = pid, .pidfd = pidfd};
	int r;

	reason[0] = '\0';
	r = rv_tracees_stop(&q, 1, deadline_ns);
	if (r < 0)
		return r;
	memcpy(reason, q.reason, 128);
	if (q.error)
		return -q.error;
	*ret = q.tracee;
	return 0;
}

uint64_t rv_tracee_stopped_ns(const struct rv_tracee *t)
{
	return t && t->stop_start_ns ? rv_now_ns() - t->stop_start_ns : 0;
}

/* A group-stopped thread we detach goes back to its stop on its own, a
 * moment later: wait for that, so that the caller sees it stopped as it was
 * (bounded: a SIGCONT while we held it ends the group-stop instead). */
static void wait_restopped(struct rv_tracee *t)
{
	uint64_t deadline = rv_now_ns() + RESTOP_WAIT_NS;

	for (size_t i = 0; i < t->n; i++) {
		struct rv_thread *th = &t->threads[i];
		unsigned int n = 0;

		while (!th->gone) {
			struct rv_proc_status st;

			if (read_status(t->pid, th->tid, &st) < 0 || st.state == 'T' ||
			    st.state == 'Z' || st.state == 'X' || !rv_ptrace_backoff(&n, deadline))
				break;
		}
	}
}

pid_t rv_tracee_tid(const struct rv_tracee *t)
{
	return t && t->inj ? t->inj->tid : -1;
}

static void restore_done(struct rv_tracee *t, int r)
{
	t->rs_busy = false;
	t->rs_result = r;
	if (r < 0 && t->where == RUNNING) {
		/* Still inside our syscall: we cannot put it back, but we
		 * must not keep it either. */
		add_orphan(t->inj->tid);
		t->inj->gone = true;
	}
}

/* *RET_FIRST (if not NULL): what restoring ts[0] gave. */
static void release_many(struct rv_tracee **ts, size_t n, int *ret_first)
{
	size_t waiting = 0;
	unsigned int nb = 0;

	for (size_t i = 0; i < n; i++) {
		struct rv_tracee *t = ts[i];
		int r;

		if (!t)
			continue;
		t->rs_result = 0;
		t->rs_busy = false;
		if (!t->inj || t->inj->gone)
			continue;
		r = rv_tracee_restore_start(t);
		if (r == 1) {
			t->rs_busy = true;
			waiting++;
		} else
			restore_done(t, r);
	}
	/* Those that must get back into get_signal() first were all resumed
	 * above: collect their stops in sweeps. */
	while (waiting > 0) {
		bool progress = false;

		for (size_t i = 0; i < n; i++) {
			struct rv_tracee *t = ts[i];
			int status, r;
			pid_t p;

			if (!t || !t->rs_busy)
				continue;
			p = waitpid(t->inj->tid, &status, __WALL | WNOHANG);
			if (p == t->inj->tid) {
				progress = true;
				r = rv_tracee_restore_feed(t, status);
				if (r == 1)
					continue;
			} else if (p < 0 && errno != EINTR)
				r = negative_errno();
			else if (rv_now_ns() >= t->rs_grace)
				r = -ETIMEDOUT;
			else
				continue;
			restore_done(t, r);
			waiting--;
		}
		if (progress)
			nb = 0;
		else if (waiting > 0)
			rv_ptrace_backoff(&nb, UINT64_MAX);
	}
	for (size_t i = 0; i < n; i++)
		if (ts[i])
			release_threads(ts[i]);
	for (size_t i = 0; i < n; i++)
		if (ts[i] && ts[i]->group_stopped)
			wait_restopped(ts[i]);
	if (ret_first && n > 0 && ts[0])
		*ret_first = ts[0]->rs_result;
	for (size_t i = 0; i < n; i++)
		if (ts[i])
			tracee_free(ts[i]);
	reap_orphans();
}

void rv_tracees_release(struct rv_tracee **ts, size_t n)
{
	release_many(ts, n, NULL);
}

int rv_tracee_release(struct rv_tracee *t)
{
	int r = 0;

	if (!t)
		return 0;
	release_many(&t, 1, &r);
	return r;
}
