/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Stopping every thread of a process with ptrace (PTRACE_SEIZE +
 * PTRACE_INTERRUPT, re-listing /proc/PID/task until no new thread appears),
 * and letting it go again. See ../shared/notes/injection.md.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "tracee.h"

#define PF_EXITING   0x00000004u
#define PF_IO_WORKER 0x00000010u
#define PF_KTHREAD   0x00200000u

/* Re-listing /proc/PID/task stops when a round finds no new thread; a
 * process spawning threads faster than we stop them gives up here. */
#define MAX_ROUNDS    64
#define MAX_ANCESTORS 256

/* ---- threads we could not detach yet ----------------------------------- */

/* Only the thread that seized a tracee may detach it, so the list is per
 * thread; the engine runs each call in a thread of its own, whose exit
 * detaches whatever is left. */
static __thread pid_t orphans[256];
static __thread size_t norphans;

void rv_tracee_reap_orphans(void)
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

void rv_tracee_orphan(pid_t tid)
{
	/* A full list means this thread exits with them still traced, which
	 * detaches them too. */
	if (norphans < ARRAY_SIZE(orphans))
		orphans[norphans++] = tid;
}

/* ---- /proc ------------------------------------------------------------ */

int rv_read_status(pid_t pid, pid_t tid, struct rv_proc_status *ret)
{
	char buf[4096];
	int l = rv_proc_read_task_text(pid, tid, "status", buf, sizeof(buf));

	return l < 0 ? l : rv_parse_status(buf, ret);
}

static int read_stat(pid_t pid, pid_t tid, struct rv_proc_stat *ret)
{
	char buf[1024];
	int l = rv_proc_read_task_text(pid, tid, "stat", buf, sizeof(buf));

	return l < 0 ? l : rv_parse_stat(buf, ret);
}

/* A thread past the point where it can be seized: exiting or a zombie
 * (or already reaped). */
static bool thread_exiting(pid_t pid, pid_t tid)
{
	struct rv_proc_status st;
	struct rv_proc_stat pst;
	int r;

	r = rv_read_status(pid, tid, &st);
	if (r == -ESRCH || r == -ENOENT)
		return true;
	if (r == 0 && (st.state == 'Z' || st.state == 'X'))
		return true;
	r = read_stat(pid, tid, &pst);
	return r == -ESRCH || r == -ENOENT || (r == 0 && (pst.flags & PF_EXITING));
}

static void add_tracer(pid_t tracer, pid_t *v, size_t cap, size_t *n)
{
	struct rv_proc_status tst;

	if (tracer > 0 && *n < cap && rv_read_status(tracer, 0, &tst) == 0)
		v[(*n)++] = tst.tgid;
}

/* Stopping a tracer of ours (or of an ancestor, which then waits on it
 * while we wait on the ancestor) would hang both. Lists the thread groups
 * tracing any thread of ours or an ancestor (read once per batch). */
static size_t our_tracers(pid_t *v, size_t cap)
{
	struct rv_proc_status st;
	size_t n = 0;
	pid_t pid;
	DIR *d = rv_proc_opendir(RV_PROC_SELF, 0, "task");
	struct dirent *de;

	while (d && (de = readdir(d))) {
		int tid;

		if (rv_parse_int(de->d_name, &tid) == 0 && rv_read_status(getpid(), tid, &st) == 0)
			add_tracer(st.tracer, v, cap, &n);
	}
	if (d)
		closedir(d);
	if (rv_read_status(getpid(), 0, &st) < 0)
		return n;
	pid = st.ppid;
	for (int depth = 0; depth < MAX_ANCESTORS && pid > 0; depth++) {
		if (rv_read_status(pid, 0, &st) < 0)
			break; /* an ancestor vanished: nothing left to check above it */
		add_tracer(st.tracer, v, cap, &n);
		pid = st.ppid;
	}
	return n;
}

/* ---- the stop phase ------------------------------------------------------ */

struct rv_thread *rv_tracee_thread(struct rv_tracee *t, pid_t tid)
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

/* The thread ids in /proc/PID/task: *RET (malloc'd), *RET_N; -errno.
 * getdents64 without opendir(), whose fstat is one syscall more per holder. */
static int list_tasks(pid_t pid, pid_t **ret, size_t *ret_n)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ pid_t *v = NULL;
	size_t n = 0, cap = 0;
	union {
		struct dirent64 align;
		char buf[4096];
	} u;

	fd = rv_proc_open(pid, 0, O_RDONLY | O_DIRECTORY, "task");
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : negative_errno();
	for (;;) {
		ssize_t l = syscall(SYS_getdents64, fd, u.buf, sizeof(u.buf));

		if (l <= 0)
			break; /* an error ends the list, as readdir() did */
		for (ssize_t off = 0; off < l;) {
			struct dirent64 *de = (struct dirent64 *)(void *)(u.buf + off);
			int tid;

			off += de->d_reclen;
			if (rv_parse_int(de->d_name, &tid) < 0)
				continue;
			if (n == cap) {
				size_t ncap = cap ? cap * 2 : 8;
				pid_t *nv = realloc(v, ncap * sizeof(*nv));

				if (!nv)
					return -ENOMEM;
				v = nv;
				cap = ncap;
			}
			v[n++] = tid;
		}
	}
	*ret = TAKE_PTR(v);
	*ret_n = n;
	return 0;
}

/* Where the interrupt makes a blocked call return (epoll_pwait's EINTR), the
 * registers keep no first argument: /proc has it while the thread blocks. */
static void read_pre_syscall(pid_t pid, struct rv_thread *th)
{
	char buf[256];

	th->have_pre = rv_proc_read_task_text(pid, th->tid, "syscall", buf, sizeof(buf)) > 0 &&
		       rv_parse_syscall(buf, &th->pre) == 0;
}

/* The first argument of the call REGS show TID returned from, when the
 * registers lost it: what /proc showed before the interrupt, if the rest
 * of that call is what the registers hold. -1 otherwise. */
long rv_tracee_lost_arg0(const struct rv_tracee *t, pid_t tid, const struct rv_regs *regs)
{
	const struct rv_thread *th = NULL;

	for (size_t i = 0; i < t->n && !th; i++)
		if (t->threads[i].tid == tid)
			th = &t->threads[i];
	if (!th || !th->have_pre || th->pre.nr != rv_arch_syscall_nr(regs))
		return -1;
	for (unsigned int a = 1; a < 6; a++)
		if (th->pre.args[a] != (uint64_t)rv_arch_syscall_arg(regs, a))
			return -1;
	return (long)th->pre.args[0];
}

/* TID is uninterruptible (a vfork parent, I/O): PTRACE_INTERRUPT would not
 * stop it, and a seized thread we cannot wait for we cannot detach either.
 * Wait for it unseized, until the deadline: 0, or -ETIMEDOUT with the
 * reason. */
static int wait_unseized(struct rv_tracee *t, pid_t tid, const struct rv_proc_status *st)
{
	if (rv_now_ns() >= t->deadline_ns) {
		pid_t child = 0;
		char state;

		if (rv_vfork_parent(t->pid, tid, &state, &child) > 0)
			snprintf(t->reason, 128, "pid %d is a vfork parent waiting for pid %d",
				 t->pid, child);
		else
			snprintf(t->reason, 128, "thread %d would not stop (state %c)", tid,
				 st->state);
		return -ETIMEDOUT;
	}
	t->seize_again = true;
	t->unseized_tid = tid;
	return 0;
}

/* PTRACE_SEIZE of TID failed with R: the reason, and the error to return. */
static int seize_refused(struct rv_tracee *t, pid_t tid, int r, long opts)
{
	struct rv_proc_status st;

	if (r == -EPERM && rv_read_status(t->pid, tid, &st) == 0 && st.tracer != 0)
		snprintf(t->reason, 128, "already traced by pid %d", st.tracer);
	else if (r == -EPERM && (opts & PTRACE_O_SUSPEND_SECCOMP) && prctl(PR_GET_SECCOMP) > 0)
		/* The kernel refuses PTRACE_O_SUSPEND_SECCOMP to a tracer that
		 * is under a filter itself, whatever its capabilities (a
		 * systemd unit's SystemCallFilter=, ProtectKernelTunables=). */
		snprintf(t->reason, 128,
			 "under a seccomp filter, which a revoker under one cannot suspend");
	else if (r == -EPERM && (opts & PTRACE_O_SUSPEND_SECCOMP))
		snprintf(t->reason, 128,
			 "under a seccomp filter; suspending it needs CAP_SYS_ADMIN");
	else if (r == -EINVAL && (opts & PTRACE_O_SUSPEND_SECCOMP))
		snprintf(t->reason, 128, "under a seccomp filter; kernel cannot suspend it");
	else
		snprintf(t->reason, 128, "cannot trace thread %d: %s", tid, strerror(-r));
	return r == -EINVAL ? -EPERM : r;
}

/* Seize and interrupt every thread of the task list not seized yet.
 * t->seize_again: some thread could not be seized yet (D state) or is new:
 * list the tasks again once the seized ones stopped. */
static int seize_new(struct rv_tracee *t)
{
	_cleanup_free_ pid_t *tids = NULL;
	size_t ntids = 0;
	int r;

	r = list_tasks(t->pid, &tids, &ntids);
	if (r < 0)
		return r;
	t->seize_again = false;
	t->found_new = false;
	t->unseized_tid = 0;
	for (size_t i = 0; i < ntids; i++) {
		struct rv_proc_status st;
		struct rv_proc_stat pst;
		long opts = PTRACE_O_TRACESYSGOOD;
		int tid = tids[i];

		if (rv_tracee_thread(t, tid))
			continue;
		bool leader_known = tid == t->pid && t->have_leader_st;

		if (leader_known) {
			/* The scan just read it: the same file. */
			st = t->leader_st;
			r = 0;
		} else
			r = rv_read_status(t->pid, tid, &st);
		t->have_leader_st = false;
		if (r == 0 && st.state == 'D') {
			r = wait_unseized(t, tid, &st);
			if (r < 0)
				return r;
			continue;
		}
		if (r == -ESRCH)
			continue;
		if (r < 0)
			return r;
		if (st.state == 'Z' || st.state == 'X')
			continue; /* a zombie leader: its live threads carry the process */
		if (st.tracer != 0) {
			snprintf(t->reason, 128, "already traced by pid %d", st.tracer);
			return -EPERM;
		}
		if (leader_known) {
			pst.flags = t->leader_pf;
			r = 0;
		} else
			r = read_stat(t->pid, tid, &pst);
		if (r == -ESRCH)
			continue;
		if (r < 0)
			return r;
		/* io_uring workers never return to user space; exiting threads
		 * cannot be seized. */
		if (pst.flags & (PF_IO_WORKER | PF_KTHREAD | PF_EXITING))
			continue;
		/* Seccomp filters apply to the stub's syscalls (a RET_KILL on
		 * dup3 would kill the holder): suspend them, or refuse. */
		if (st.seccomp != 0)
			opts |= PTRACE_O_SUSPEND_SECCOMP;
		if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)opts) < 0) {
			if (errno == ESRCH)
				continue;
			r = negative_errno();
			/* ptrace_attach refuses a thread that became a zombie
			 * (exit_state) after the reads above: it is gone, not
			 * a refusal. */
			if (r == -EPERM && thread_exiting(t->pid, tid))
				continue;
			return seize_refused(t, tid, r, opts);
		}
		r = add_thread(t, tid);
		if (r < 0) {
			ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
			rv_tracee_orphan(tid); /* detached by the next call once it stops */
			snprintf(t->reason, 128, "out of memory");
			return r;
		}
		if (rv_arch_arg0_lost && st.state == 'S')
			read_pre_syscall(t->pid, &t->threads[t->n - 1]);
		if (t->stop_start_ns == 0)
			t->stop_start_ns = rv_now_ns();
		if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0)
			t->threads[t->n - 1].gone = true; /* died between seize and interrupt */
		else
			t->threads[t->n - 1].awaited = true;
		t->seize_again = true;
		t->found_new = true;
	}
	return 0;
}

void rv_tracee_detach_all(struct rv_tracee *t)
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
				rv_tracee_orphan(th->tid);
		}
		th->gone = true;
	}
}

void rv_tracee_free(struct rv_tracee *t)
{
	if (!t)
		return;
	rv_run_forget(t);
	for (size_t i = 0; i < t->run.nsibs; i++)
		free(t->run.sibs[i].saved_data);
	free(t->run.sibs);
	safe_close(t->mem_fd);
	free(t->threads);
	free(t);
}

/* What can be checked before touching the process. */
static int check_req(struct rv_stop_req *q, pid_t self, const pid_t *tracers, size_t ntracers,
		     struct rv_proc_status *ret_st)
{
	struct rv_proc_status st;
	int r;

	if (q->pid <= 0)
		return -EINVAL;
	if (q->pid == self) {
		snprintf(q->reason, 128, "is the calling process");
		return -EPERM;
	}
	if (q->have_status) {
		st = q->status;
		r = 0;
	} else
		r = rv_read_status(q->pid, 0, &st);
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

/* Every thread stopped and no new one: pick the thread that runs our
 * programs. */
static int stop_finish(struct rv_tracee *t)
{
	struct rv_thread *pick = NULL;
	int r;

	/* The process behind the pid may have died and the pid been reused
	 * before we seized it; the pidfd still names the original. */
	if (t->pidfd >= 0 && syscall(SYS_pidfd_send_signal, t->pidfd, 0, NULL, 0) < 0) {
		snprintf(t->reason, 128, "exited (pid reused)");
		return -ESRCH;
	}
	for (size_t i = 0; i < t->n; i++)
		if (!t->threads[i].gone && (!pick || t->threads[i].tid == t->pid))
			pick = &t->threads[i];
	if (!pick) {
		snprintf(t->reason, 128, "exited");
		return -ESRCH;
	}
	r = rv_run_pick(t, pick);
	if (r < 0)
		snprintf(t->reason, 128, "%s", t->run.why);
	return r;
}

static bool all_stopped(const struct rv_tracee *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (!t->threads[i].stopped && !t->threads[i].gone)
			return false;
	return true;
}

/* Seize what is new; 1 while stops are awaited, 0 once every thread is
 * stopped and the injecting thread picked, -errno. */
static int stop_advance(struct rv_tracee *t)
{
	while (all_stopped(t)) {
		int r;

		if (!t->seize_again)
			return stop_finish(t);
		if (t->rounds == MAX_ROUNDS) {
			snprintf(t->reason, 128, "keeps creating threads");
			return -ETIMEDOUT;
		}
		r = seize_new(t);
		if (r < 0)
			return r;
		if (t->found_new) {
			t->rounds++;
			t->wait_deadline = rv_stop_deadline(t->deadline_ns);
		} else if (t->seize_again)
			return 1; /* a thread in D state: look again next sweep */
	}
	return 1;
}

static int stop_start(struct rv_tracee *t)
{
	t->seize_again = true;
	return stop_advance(t);
}

static int stop_poll(struct rv_tracee *t, bool *progress)
{
	size_t n = t->n;
	int r;

	/* Only when waiting for a thread to leave the D state. */
	if (!all_stopped(t) || !t->seize_again)
		return 1;
	r = stop_advance(t);
	if (r != 1 || t->n != n)
		*progress = true;
	return r;
}

static int stop_feed(struct rv_tracee *t, struct rv_thread *th, int status)
{
	if (status == -1 || WIFEXITED(status) || WIFSIGNALED(status)) {
		th->gone = true;
		th->awaited = false;
	} else if (WIFSTOPPED(status) && status >> 16 == PTRACE_EVENT_STOP) {
		/* Also a group-stop (SIGSTOP): the kernel reinstates it when we
		 * detach. */
		if (rv_is_stop_sig(WSTOPSIG(status)))
			t->group_stopped = true;
		th->stopped = true;
		th->awaited = false;
	} else if (WIFSTOPPED(status) && status >> 16 == 0 &&
		   WSTOPSIG(status) != (SIGTRAP | 0x80)) {
		/* A signal on its way in before our interrupt: give it back;
		 * the interrupt stop follows. */
		ptrace(PTRACE_CONT, th->tid, NULL, (void *)(long)WSTOPSIG(status));
		return 1;
	} else {
		ptrace(PTRACE_CONT, th->tid, NULL, NULL);
		return 1;
	}
	return stop_advance(t);
}

static int stop_timeout(struct rv_tracee *t)
{
	for (size_t i = 0; i < t->n; i++) {
		struct rv_thread *th = &t->threads[i];
		struct rv_proc_status st = {.state = '?'};

		if (th->stopped || th->gone)
			continue;
		rv_read_status(t->pid, th->tid, &st);
		snprintf(t->reason, 128, "thread %d would not stop (state %c)", th->tid, st.state);
		return -ETIMEDOUT;
	}
	/* The deadline can pass while the seized threads are waited for and
	 * the one in the D state was never seized: name it all the same. */
	if (t->unseized_tid) {
		struct rv_proc_status st = {.state = '?'};
		pid_t child = 0;
		char state;

		if (rv_vfork_parent(t->pid, t->unseized_tid, &state, &child) > 0) {
			snprintf(t->reason, 128, "pid %d is a vfork parent waiting for pid %d",
				 t->pid, child);
			return -ETIMEDOUT;
		}
		rv_read_status(t->pid, t->unseized_tid, &st);
		snprintf(t->reason, 128, "thread %d would not stop (state %c)", t->unseized_tid,
			 st.state);
		return -ETIMEDOUT;
	}
	snprintf(t->reason, 128, "thread would not stop");
	return -ETIMEDOUT;
}

static uint64_t stop_deadline(const struct rv_tracee *t)
{
	/* A round of stops gets at least RV_STOP_WAIT_MIN_NS; waiting for a
	 * thread to leave the D state, only the caller's deadline. */
	if (all_stopped(t))
		return t->deadline_ns;
	return t->wait_deadline > t->deadline_ns ? t->wait_deadline : t->deadline_ns;
}

static const struct rv_phase phase_stop = {
    .start = stop_start,
    .feed = stop_feed,
    .timeout = stop_timeout,
    .poll = stop_poll,
    .deadline = stop_deadline,
};

/* Those that could not be stopped go on as they were, let go by their
 * owners (freed after: the others' threads still look at every entry). */
static void release_failed(struct rv_tracee **ts, size_t n, void *arg)
{
	const int *ret = arg;

	for (size_t i = 0; i < n; i++)
		if (rv_tracee_mine(ts[i]) && ret[i] < 0)
			rv_tracee_detach_all(ts[i]);
}

int rv_tracees_stop(struct rv_stop_req *reqs, size_t n, uint64_t deadline_ns)
{
	pid_t tracers[MAX_ANCESTORS], self = getpid();
	size_t ntracers;
	struct rv_tracee **w;
	int *ret;

	rv_tracee_reap_orphans();
	if (deadline_ns == 0)
		deadline_ns = rv_now_ns() + RV_DEFAULT_TIMEOUT_MS * 1000000ull;
	w = calloc(n ? n : 1, sizeof(*w));
	ret = calloc(n ? n : 1, sizeof(*ret));
	if (!w || !ret) {
		free(w);
		free(ret);
		return -ENOMEM;
	}
	ntracers = our_tracers(tracers, ARRAY_SIZE(tracers));
	for (size_t i = 0; i < n; i++) {
		struct rv_stop_req *q = &reqs[i];
		struct rv_proc_status st;
		struct rv_tracee *t;
		int r;

		q->tracee = NULL;
		q->error = 0;
		q->reason[0] = '\0';
		r = check_req(q, self, tracers, ntracers, &st);
		if (r < 0) {
			q->error = -r;
			continue;
		}
		t = calloc(1, sizeof(*t));
		if (!t) {
			for (size_t j = 0; j < i; j++)
				rv_tracee_free(w[j]);
			free(w);
			free(ret);
			return -ENOMEM;
		}
		t->pid = q->pid;
		rv_tracer_assign(t);
		t->pidfd = q->pidfd;
		t->mem_fd = -1;
		t->deadline_ns = deadline_ns;
		t->wait_deadline = rv_stop_deadline(deadline_ns);
		t->leader_st = st;
		/* The flags come with a scan's status (have_status); a status read
		 * here has none: the stat file then tells. */
		t->have_leader_st = q->have_status;
		t->leader_pf = q->pf_flags;
		t->vdso_hint = q->vdso;
		t->reason = q->reason;
		w[i] = t;
	}

	rv_batch_drive(w, n, &phase_stop, ret);
	for (size_t i = 0; i < n; i++)
		if (w[i] && ret[i] < 0) {
			rv_pool_dispatch(w, n, release_failed, ret);
			break;
		}

	for (size_t i = 0; i < n; i++) {
		struct rv_tracee *t = w[i];

		if (!t)
			continue;
		t->reason = NULL;
		if (ret[i] < 0) {
			rv_tracee_free(t);
			reqs[i].error = -ret[i];
			continue;
		}
		reqs[i].reason[0] = '\0';
		reqs[i].tracee = t;
	}
	free(w);
	free(ret);
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

void rv_tracee_extend_deadline(struct rv_tracee *t, uint64_t deadline_ns)
{
	if (t && t->deadline_ns < deadline_ns)
		t->deadline_ns = deadline_ns;
}

uint64_t rv_tracee_stopped_ns(const struct rv_tracee *t)
{
	if (!t || !t->stop_start_ns)
		return 0;
	return (t->released_ns ? t->released_ns : rv_now_ns()) - t->stop_start_ns;
}

pid_t rv_tracee_tid(const struct rv_tracee *t)
{
	return t && t->inj ? t->inj->tid : -1;
}
