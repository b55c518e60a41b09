/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Running a program (prog.c) in a stopped holder through the stub, and
 * taking the holder home.
 *
 * Placing the program and entering the stub: infect.c.
 *
 * The program ends with the stop signal, whose delivery stops the thread for
 * us inside get_signal(): one stop for the whole program. There we read the
 * results and cure: the original mask (which the stub puts back itself when
 * the thread is released right after: rv_run_state.restore), then the
 * original registers (a thread stopped inside a syscall is restarted by the
 * kernel itself as the stop is left, with its restart block intact: no
 * EINTR, no early wake), then the code and the stack bytes. The signal is
 * discarded as we go on; a signal of the holder's own that the stub's mask
 * held back, and that stops the thread before the stub's signal does, is
 * that stop, and is handed on as we let go.
 * Where no signal qualifies (place.c), the thread is stepped from syscall
 * to syscall (PTRACE_SYSCALL) until the program's end marker.
 */
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "tracee.h"

/* ---- the run phase ---------------------------------------------------- */

static int resume(struct rv_tracee *t, int sig)
{
	struct rv_run_state *rs = &t->run;

	if (ptrace(PTRACE_CONT, t->inj->tid, NULL, (void *)(long)sig) < 0) {
		int r = negative_errno();

		snprintf(rs->why, sizeof(rs->why), "cannot resume thread %d: %s", t->inj->tid,
			 strerror(-r));
		return t->broken = r;
	}
	t->where = RUNNING;
	t->inj->awaited = true;
	if (t->run.entered)
		rv_fault("running");
	return 1;
}

/* The control block and the program's ops (not the siblings'), as the
 * stub left them: *RET_CTL (malloc'd), or -errno. */
static int read_ctl(struct rv_tracee *t, struct rv_stub_ctl **ret_ctl)
{
	struct rv_run_state *rs = &t->run;
	const size_t P = 2;
	size_t len = sizeof(struct rv_stub_ctl) + (P + rs->prog->nops) * sizeof(struct rv_op);
	struct rv_stub_ctl *ctl = malloc(len);
	int r;

	if (!ctl)
		return -ENOMEM;
	r = rv_mem_read(t, rs->ctl_addr, ctl, len);
	if (r < 0) {
		free(ctl);
		return r;
	}
	*ret_ctl = ctl;
	return 0;
}

static void done(struct rv_tracee *t)
{
	if (t->done_fn)
		t->done_fn(t, t->done_arg);
	if (t->release_when_done) {
		t->released_ns = rv_now_ns();
		rv_tracee_detach_all(t);
	}
}

/* ---- back into the thread's own call (arch.h, rv_arch_restart_prepared) ---- */

/* Only after the last program: the syscall-entry stop it ends at is no
 * place to run another one from. */
static bool wants_reentry(const struct rv_tracee *t)
{
	return rv_arch_restart_prepared && t->last_program && !t->compat && !t->rseq_abort &&
	       rv_arch_syscall_nr(&t->saved) >= 0 && rv_arch_syscall_restarts(&t->saved);
}

static int reenter_resume(struct rv_tracee *t, int sig)
{
	if (ptrace(PTRACE_SYSCALL, t->inj->tid, NULL, (void *)(long)sig) < 0) {
		int r = negative_errno();

		snprintf(t->run.why, sizeof(t->run.why), "cannot resume thread %d: %s", t->inj->tid,
			 strerror(-r));
		return t->broken = r;
	}
	t->where = RUNNING;
	t->inj->awaited = true;
	return 1;
}

/* From the stub's stop signal, with every other signal still blocked: the
 * stub goes on to its rt_sigreturn, which stops at its entry. Whatever
 * arrives meanwhile stays pending. If we die, the rt_sigreturn goes home. */
static int reenter_start(struct rv_tracee *t)
{
	t->run.reentering = true;
	return reenter_resume(t, 0);
}

/* At the entry of the stub's rt_sigreturn: the thread's mask (pending
 * signals are seen again as the stop is left), then its call instead of
 * the rt_sigreturn. */
static int reenter(struct rv_tracee *t)
{
	struct rv_run_state *rs = &t->run;
	pid_t tid = t->inj->tid;
	int r = 0;

	rs->reentering = false;
	if (ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof(t->sigmask), &t->sigmask) < 0)
		r = negative_errno();
	rv_fault("reenter-mask");
	if (r == 0)
		r = rv_arch_reenter_syscall(tid, &t->saved);
	if (r < 0) {
		/* Still the rt_sigreturn, or the call with the stub's way home
		 * after it (aarch64-stub.h): either needs the stub's memory,
		 * which stays; the thread goes on without us. */
		if (ptrace(PTRACE_DETACH, tid, NULL, NULL) == 0 || errno == ESRCH)
			t->inj->gone = true;
		t->inj->awaited = false;
		done(t);
		return 0;
	}
	rs->entered = false;
	rv_fault("reentered");
	rv_sib_cure(t);
	rv_run_uninfect(t);
	done(t);
	return 0;
}

static int reenter_feed(struct rv_tracee *t, int status)
{
	int sig = WSTOPSIG(status), ev = status >> 16;

	if (ev == 0 && sig == (SIGTRAP | 0x80)) {
		struct rv_regs regs;

		t->where = AT_SYSCALL_STOP;
		if (rv_arch_get_regs(t->inj->tid, &regs) == 0 &&
		    rv_arch_syscall_nr(&regs) == SYS_rt_sigreturn &&
		    rv_arch_sp(&regs) == t->run.sigreturn_sp)
			return reenter(t);
		return reenter_resume(t, 0);
	}
	t->where = AT_SIGNAL_STOP;
	if (ev == PTRACE_EVENT_STOP) {
		if (rv_is_stop_sig(sig))
			t->group_stopped = true;
		return reenter_resume(t, 0);
	}
	/* Only the stub's stop signal is unblocked, and the holder ignores
	 * it: a copy from elsewhere is dropped. */
	return reenter_resume(t, rv_is_stop_sig(sig) ? sig : 0);
}

/* The program is over and the thread at a stop in get_signal: read the
 * results (unless the caller just did: CTL, at the stub's stop signal or at
 * DELIVER, a signal of the holder's own to hand on as we let go), then
 * cure. */
static int finish(struct rv_tracee *t, struct rv_stub_ctl *ctl_read, int deliver)
{
	struct rv_run_state *rs = &t->run;
	struct rv_prog *p = rs->prog;
	const size_t P = 2;
	_cleanup_free_ struct rv_stub_ctl *ctl = ctl_read;
	bool at_stop_signal = ctl_read != NULL && !deliver;
	int r = 0;

	t->where = AT_SIGNAL_STOP;
	t->inj->awaited = false;
	t->inj->detach_sig = deliver;
	rv_fault("stopped");
	if (!ctl)
		r = read_ctl(t, &ctl);
	if (r == 0 && (ctl->magic != RV_STUB_MAGIC || !ctl->done))
		r = -EPROTO;
	if (r == 0) {
		for (size_t i = 0; i < p->nops; i++) {
			p->ops[i].state = ctl->ops[P + i].state;
			p->ops[i].res = ctl->ops[P + i].res;
		}
		p->failed = ctl->failed >= (int)P ? ctl->failed - (int)P : ctl->failed;
		p->done = true;
		/* The stub read the thread's mask from the frame; it put it
		 * back before it chose (stop_sig) or before a signal of the
		 * holder's could get through. */
		t->sigmask = ctl->orig_mask;
		t->mask_saved = true;
		rs->mask_back = rs->restore && (ctl->stop_sig >= 0 || deliver);
	}
	if (r == 0 && at_stop_signal && wants_reentry(t))
		return reenter_start(t);
	{
		int q = rv_run_cure(t);

		if (q < 0)
			return q;
	}
	if (r < 0) {
		snprintf(rs->why, sizeof(rs->why), "cannot read the cut's results: %s",
			 strerror(-r));
		return r;
	}
	done(t);
	return 0;
}

void rv_tracee_when_done(struct rv_tracee *t, void (*fn)(struct rv_tracee *t, void *arg), void *arg,
			 bool release, bool last)
{
	t->done_fn = fn;
	t->done_arg = arg;
	t->release_when_done = release;
	t->last_program = release || last;
}

const struct rv_prog *rv_tracee_prog(const struct rv_tracee *t)
{
	return t ? t->run.prog : NULL;
}

static int run_start(struct rv_tracee *t)
{
	struct rv_run_state *rs = &t->run;
	int r;

	rs->ending = false;
	rs->reentering = false;
	rs->end_seen = false;
	rs->started_ns = rv_now_ns();
	rs->run_deadline = rv_stop_deadline(t->deadline_ns);
	if (!rs->prog)
		return 0;
	if (!rs->prepared) {
		r = rv_run_prepare(t);
		if (r < 0)
			return r;
	}
	/* The stub puts the mask back itself when the thread is let go right
	 * after its program: a call less. Not when it stays stopped (another
	 * program, a hang-up to wait for), when a group-stop or siblings are
	 * to be put back as they were, or on the way back into its call. */
	r = rv_run_enter(t, t->release_when_done && t->last_program && !t->group_stopped &&
				!rs->nsibs && !wants_reentry(t));
	if (r < 0)
		return r;
	return resume(t, 0);
}

/* A signal the kernel forces on a fault of the code it stopped in. */
static bool fault_signal(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
	       sig == SIGTRAP || sig == SIGSYS;
}

/*
 * SIG stopped the thread on its way into the stub, before the stub's first
 * call blocked every signal (it was pending, or came just then). It must not
 * reach a handler on the stub's registers: the thread's own mask goes into
 * the frame (the first call then saves nothing), every signal is blocked,
 * and SIG, handed back, is queued again by the kernel (ptrace_signal() of a
 * blocked signal), its siginfo kept. Rare: three ptrace calls.
 */
static int requeue(struct rv_tracee *t, int sig)
{
	struct rv_run_state *rs = &t->run;
	pid_t tid = t->inj->tid;
	const int64_t none = 0;
	uint64_t mask;
	int r;

	if (ptrace(PTRACE_GETSIGMASK, tid, (void *)sizeof(mask), &mask) < 0)
		return t->broken = negative_errno();
	/* In this order: if we die in between, the stub's first call sets
	 * the mask and the frame has the thread's own. */
	r = rv_mem_write(t, rs->frame_mask, &mask, sizeof(mask));
	if (r == 0)
		r = rv_mem_write(t,
				 rs->ctl_addr + offsetof(struct rv_stub_ctl, ops) +
				     offsetof(struct rv_op, args) + 2 * sizeof(int64_t),
				 &none, sizeof(none));
	if (r < 0)
		return t->broken = r;
	t->sigmask = mask;
	t->mask_saved = true;
	if (ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof(rs->run_mask), &rs->run_mask) < 0)
		return t->broken = negative_errno();
	return resume(t, sig);
}

static int run_feed(struct rv_tracee *t, struct rv_thread *th, int status)
{
	struct rv_run_state *rs = &t->run;
	int sig, ev;

	if (status == -1 || WIFEXITED(status) || WIFSIGNALED(status)) {
		th->gone = true;
		th->awaited = false;
		if (th != t->inj)
			return 1;
		rs->entered = false; /* its memory went with it */
		snprintf(rs->why, sizeof(rs->why), "exited");
		return t->broken = -ESRCH;
	}
	if (th != t->inj)
		return 1;
	if (rs->reentering)
		return reenter_feed(t, status);
	sig = WSTOPSIG(status);
	ev = status >> 16;
	if (ev == PTRACE_EVENT_STOP) {
		t->where = AT_SIGNAL_STOP;
		if (rv_is_stop_sig(sig))
			t->group_stopped = true;
		if (rs->ending)
			return finish(t, NULL, 0);
		return resume(t, 0); /* a group-stop on the way: go on */
	}
	t->where = AT_SIGNAL_STOP;
	if (ev == 0) {
		struct rv_stub_ctl *ctl = NULL;

		/* The stub's stop signal once its program is over; a copy from
		 * elsewhere of the same signal is ignored by the holder anyway.
		 * The whole block at once: it has the results too. */
		if (read_ctl(t, &ctl) == 0) {
			if (ctl->done && ctl->stop_sig == sig && !rv_is_stop_sig(sig))
				return finish(t, ctl, 0);
			/* The stub put the mask back: the holder's own signal
			 * (SIGSTOP is never blocked: not a sign of that). */
			if (ctl->done && rs->restore && sig != SIGSTOP)
				return finish(t, ctl, sig);
			/* Before the stub's first call blocked them all. */
			if (!ctl->done && ctl->ran == 0 && sig != SIGSTOP && !fault_signal(sig)) {
				free(ctl);
				return requeue(t, sig);
			}
			free(ctl);
		}
	}
	if (rv_is_stop_sig(sig))
		return resume(t, sig); /* it group-stops, then goes on */
	/* Every other signal is blocked while the stub runs: this one was
	 * forced by the stub itself (a fault). Put the thread back now; the
	 * signal is discarded as it goes on. */
	snprintf(rs->why, sizeof(rs->why), "the cut's code faulted in thread %d (signal %d)",
		 th->tid, sig);
	finish(t, NULL, 0);
	return -EFAULT;
}

static int run_timeout(struct rv_tracee *t)
{
	struct rv_run_state *rs = &t->run;
	struct rv_proc_status st = {.state = '?'};

	if (rs->reentering) {
		/* The cut is made; on its way to the rt_sigreturn, the thread
		 * goes home by itself with the stub's memory. */
		rs->reentering = false;
		ptrace(PTRACE_INTERRUPT, t->inj->tid, NULL, NULL);
		t->abandoned = true;
		done(t);
		return 0;
	}
	rv_read_status(t->pid, t->inj->tid, &st);
	snprintf(rs->why, sizeof(rs->why), "thread %d did not finish the cut (state %c)",
		 t->inj->tid, st.state);
	if (t->where != RUNNING) {
		/* At a stop (a group-stop we did not resume): put it back. */
		rv_run_cure(t);
		return -ETIMEDOUT;
	}
	/* Inside one of the program's syscalls (a close() that a hung FUSE
	 * server holds up): it finishes the program and goes home by itself;
	 * it is detached when it stops, or when this thread exits. */
	ptrace(PTRACE_INTERRUPT, t->inj->tid, NULL, NULL);
	t->abandoned = true;
	return -ETIMEDOUT;
}

/* A stub that found no stop signal sleeps for us to notice it is done:
 * looked at once it has run for a while, then every sweep. */
static int run_poll(struct rv_tracee *t, bool *progress)
{
	struct rv_run_state *rs = &t->run;
	struct {
		uint32_t done;
		int32_t stop_mode, stop_sig;
	} end;

	if (t->where != RUNNING || rs->ending || rs->end_seen ||
	    rv_now_ns() - rs->started_ns < 2000000)
		return 1;
	if (rv_mem_read(t, rs->ctl_addr + offsetof(struct rv_stub_ctl, done), &end, sizeof(end)) <
		0 ||
	    !end.done || end.stop_sig < 0)
		return 1;
	/* A stop signal is on its way: its stop will come, nothing to poll. */
	rs->end_seen = end.stop_sig > 0;
	if (end.stop_sig != 0)
		return 1;
	if (ptrace(PTRACE_INTERRUPT, t->inj->tid, NULL, NULL) < 0)
		return t->broken = negative_errno();
	rs->ending = true;
	*progress = true;
	return 1;
}

static uint64_t run_deadline(const struct rv_tracee *t)
{
	return t->run.run_deadline;
}

const struct rv_phase rv_phase_run = {
    .start = run_start,
    .feed = run_feed,
    .timeout = run_timeout,
    .poll = run_poll,
    .deadline = run_deadline,
};

struct prepare_args {
	struct rv_prog **progs;
	struct rv_arena *arena;
	int *ret;
};

static void prepare_mine(struct rv_tracee **ts, size_t n, void *arg)
{
	const struct prepare_args *a = arg;

	for (size_t i = 0; i < n; i++) {
		int r = 0;

		if (!rv_tracee_mine(ts[i]) || !a->progs[i])
			continue;
		ts[i]->run.prog = a->progs[i];
		rv_run_use_arena(ts[i], a->arena);
		r = rv_run_prepare(ts[i]);
		if (r < 0)
			ts[i]->run.prog = NULL;
		if (a->ret)
			a->ret[i] = r;
	}
}

int rv_tracees_prepare(struct rv_tracee **ts, struct rv_prog **progs, size_t n, int *ret)
{
	struct prepare_args a = {.progs = progs, .ret = ret};
	size_t size = 0;

	for (size_t i = 0; ret && i < n; i++)
		ret[i] = 0;
	/* One arena for every owner's holders (its allocations are atomic). */
	for (size_t i = 0; i < n; i++)
		if (ts[i] && progs[i])
			size += rv_run_bound(ts[i], progs[i]);
	if (size)
		a.arena = rv_arena_new(size);
	rv_pool_dispatch(ts, n, prepare_mine, &a);
	rv_arena_put(a.arena);
	return 0;
}

static void unprepare_mine(struct rv_tracee **ts, size_t n, void *arg)
{
	(void)arg;
	for (size_t i = 0; i < n; i++) {
		if (!rv_tracee_mine(ts[i]) || !ts[i]->run.prepared)
			continue;
		rv_run_uninfect(ts[i]);
		ts[i]->run.prepared = false;
		ts[i]->run.prog = NULL;
	}
}

void rv_tracees_unprepare(struct rv_tracee **ts, size_t n)
{
	rv_pool_dispatch(ts, n, unprepare_mine, NULL);
}

int rv_tracees_run(struct rv_tracee **ts, struct rv_prog **progs, size_t n, int *ret)
{
	_cleanup_free_ int *rets = calloc(n ? n : 1, sizeof(int));

	if (!rets)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (ts[i] && progs && progs[i])
			ts[i]->run.prog = progs[i];
	rv_batch_drive(ts, n, &rv_phase_run, rets);
	for (size_t i = 0; i < n; i++) {
		if (!ts[i])
			continue;
		ts[i]->run.prog = NULL;
		if (ret)
			ret[i] = rets[i];
	}
	return 0;
}

int rv_tracee_run(struct rv_tracee *t, struct rv_prog *p)
{
	int r = 0, q;

	if (!t || !p)
		return -EINVAL;
	q = rv_tracees_run(&t, &p, 1, &r);
	return q < 0 ? q : r;
}

const char *rv_tracee_why(const struct rv_tracee *t)
{
	return t ? t->run.why : "";
}

int rv_tracee_syscall(struct rv_tracee *t, long nr, long *ret_result, long a0, long a1, long a2,
		      long a3, long a4, long a5)
{
	const long args[6] = {a0, a1, a2, a3, a4, a5};
	struct rv_prog *p = rv_prog_new();
	int r, op;

	if (!p)
		return -ENOMEM;
	op = rv_prog_add(p, RV_OP_SYSCALL, nr, args, 0, -1, -1);
	r = op < 0 ? op : rv_tracee_run(t, p);
	if (r == 0)
		*ret_result = rv_prog_result(p, op, NULL);
	rv_prog_free(p);
	return r;
}

/* ---- release ----------------------------------------------------------------- */

#define RESTOP_WAIT_NS (100 * 1000000ull)

static int release_start(struct rv_tracee *t)
{
	if (t->run.entered && t->where == RUNNING) {
		/* Abandoned in the middle of a program: the thread finishes it by
		 * itself; the others go on now. */
		if (t->inj && !t->inj->gone) {
			rv_tracee_orphan(t->inj->tid);
			t->inj->gone = true;
		}
	} else if (t->run.entered)
		rv_run_cure(t);
	rv_tracee_detach_all(t);
	if (!t->group_stopped)
		return 0;
	/* A group-stopped thread we detach goes back to its stop a moment
	 * later: wait for that, so that the caller sees it stopped as it was
	 * (bounded: a SIGCONT while we held it ends the group-stop instead). */
	t->rs_grace = rv_now_ns() + RESTOP_WAIT_NS;
	return 1;
}

static int release_poll(struct rv_tracee *t, bool *progress)
{
	for (size_t i = 0; i < t->n; i++) {
		struct rv_proc_status st;

		if (rv_read_status(t->pid, t->threads[i].tid, &st) < 0)
			continue;
		if (st.state != 'T' && st.state != 'Z' && st.state != 'X')
			return 1;
	}
	*progress = true;
	return 0;
}

static int release_feed(struct rv_tracee *t, struct rv_thread *th, int status)
{
	(void)t;
	(void)th;
	(void)status;
	return 1;
}

static int release_timeout(struct rv_tracee *t)
{
	(void)t;
	return 0;
}

static uint64_t release_deadline(const struct rv_tracee *t)
{
	return t->rs_grace;
}

const struct rv_phase rv_phase_release = {
    .start = release_start,
    .feed = release_feed,
    .timeout = release_timeout,
    .poll = release_poll,
    .deadline = release_deadline,
};

/* In each owner: the orphans it keeps are its own to detach. */
static void release_mine(struct rv_tracee **ts, size_t n, void *arg)
{
	(void)arg;
	rv_batch_drive(ts, n, &rv_phase_release, NULL);
	rv_tracee_reap_orphans();
}

void rv_tracees_release(struct rv_tracee **ts, size_t n)
{
	rv_pool_dispatch(ts, n, release_mine, NULL);
	for (size_t i = 0; i < n; i++)
		rv_tracee_free(ts[i]);
	rv_tracee_reap_orphans();
}

int rv_tracee_release(struct rv_tracee *t)
{
	int r;

	if (!t)
		return 0;
	r = t->broken;
	rv_tracees_release(&t, 1);
	return r < 0 && r != -ESRCH ? r : 0;
}

/* ---- what is done to other threads directly -------------------------------- */

int rv_tracee_thread_regs(const struct rv_tracee *t, size_t i, pid_t *ret_tid,
			  struct rv_regs *ret_regs)
{
	const struct rv_thread *th;

	if (i >= t->n)
		return -ENOENT;
	th = &t->threads[i];
	if (th->gone || !th->stopped)
		return -ESRCH;
	*ret_tid = th->tid;
	if (th == t->inj) {
		*ret_regs = t->saved;
		return 0;
	}
	return rv_arch_get_regs(th->tid, ret_regs);
}

int rv_tracee_complete_syscall(struct rv_tracee *t, pid_t tid, long result, uint64_t addr,
			       const void *buf, size_t len)
{
	struct rv_thread *th = rv_tracee_thread(t, tid);
	struct rv_regs regs;
	int r;

	if (!th || th->gone || !th->stopped || (th == t->inj && (t->run.entered || t->broken)))
		return -ESRCH;
	if (len) {
		struct rv_thread *was = t->inj;

		/* Memory is written through the injecting thread's view. */
		t->inj = th;
		r = rv_mem_write(t, addr, buf, len);
		t->inj = was;
		if (r < 0)
			return r;
	}
	if (th == t->inj)
		regs = t->saved;
	else {
		r = rv_arch_get_regs(tid, &regs);
		if (r < 0)
			return r;
	}
	rv_arch_set_syscall_result(&regs, result);
	r = rv_arch_set_regs(tid, &regs);
	if (r < 0)
		return r;
	if (th == t->inj) {
		t->saved = regs;
		t->in_syscall = false;
	}
	return 0;
}
