/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The engine: resolve the targets, check permission, find the holders, stop
 * every one of them, look again until nothing new appears, cut, release.
 *
 * All or nothing: until the cut starts nothing has been changed, so any
 * holder that cannot be stopped, any reference this engine cannot reach,
 * any process that may hold a target but cannot be looked at, and any
 * holder whose program cannot be placed make the call fail with EBUSY and
 * release everyone untouched (unless REVOKE_BEST_EFFORT asked to cut the
 * rest).
 *
 * Each call runs in a thread of its own (run_thread): the caller waits for
 * it until the end of the budget and no longer, so a path lookup stuck on a
 * hung FUSE server cannot hold the caller; and the thread, being the holders'
 * tracer, detaches whatever is left when it exits (a holder still inside a
 * program past the deadline finishes it and goes home by itself).
 */
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/kcmp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <termios.h>

#include "budget.h"
#include "refkind.h"
#include "scan_proc.h"
#include "target.h"
#include "wake.h"

/* A stable set of holders should appear within a couple of rounds; this only
 * bounds a pathological stream of new processes opening the file anew. */
#define RV_MAX_ROUNDS 16

struct rv_run {
	struct rv_request req;
	struct rv_budget budget;
	struct rv_target *targets;
	size_t ntargets;
	int *ignore_fds;
	struct rv_holders holders;
	/* REVOKE_MOUNT: swap, loop and other namespaces' users (mount.c),
	 * never stopped; the dead directory; how many mounts went. */
	struct rv_holders others;
	struct rv_dead_dir dead_dir;
	size_t nunmounted;
	uint64_t max_stopped_ns;
	int discovery;
	int engine;
	struct rv_bpf *bpf; /* the BPF scanner, loaded once for every scan */
	int lock_fd;
	/* For whom: the caller's uid, or the helper's client's. Its own calls
	 * and root's are believed (lock.c): calls_fd registers this one. */
	uid_t requester;
	int calls_fd;
	struct rv_calls calls;

	/* Where it failed, for the report. */
	int failed_phase;
	pid_t failed_pid;
	char failed_detail[128];

	/* Shared with the caller's thread (under mu). */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int phase;  /* what the worker does now */
	pid_t busy; /* with which process, or 0 */
	bool done;  /* the worker finished: result and report are set */
	bool gone;  /* the caller stopped waiting: the worker frees everything */
	/* Past the point of no return (commit()): the caller waits for the
	 * worker to finish, whatever the time. */
	bool committed;
	int result;
	struct revoke_report *report;
	bool want_report;
};

static void set_phase(struct rv_run *run, int phase, pid_t pid)
{
	pthread_mutex_lock(&run->mu);
	run->phase = phase;
	run->busy = pid;
	pthread_mutex_unlock(&run->mu);
}

static bool abandoned(struct rv_run *run)
{
	bool gone;

	pthread_mutex_lock(&run->mu);
	gone = run->gone;
	pthread_mutex_unlock(&run->mu);
	return gone;
}

static void fail_at(struct rv_run *run, int phase, pid_t pid, const char *detail)
{
	if (run->failed_phase)
		return;
	run->failed_phase = phase;
	run->failed_pid = pid;
	snprintf(run->failed_detail, sizeof(run->failed_detail), "%s", detail ? detail : "");
}

/*
 * The point of no return, just before the first change to any holder (or
 * file, or mount): every check that can refuse was made. From here the call
 * finishes everything it planned and the caller waits for it, however late;
 * each wait stays bounded (RV_FINISH_NS). Before it, a timeout or a caller
 * that stopped waiting refuses the call with nothing changed. Returns the
 * finishing deadline in *RET_FINISH.
 */
static int commit(struct rv_run *run, uint64_t *ret_finish)
{
	uint64_t now = rv_now_ns();
	int r = 0;

	pthread_mutex_lock(&run->mu);
	if (run->gone)
		r = -ECANCELED;
	else if (now > rv_budget_deadline(&run->budget, RV_PH_COMMIT))
		r = -ETIMEDOUT;
	else
		run->committed = true;
	pthread_mutex_unlock(&run->mu);
	if (r == -ETIMEDOUT)
		fail_at(run, RV_PH_CUT, 0, "too little time left to cut: nothing was changed");
	if (r < 0)
		return r;
	if (ret_finish)
		*ret_finish = now + RV_FINISH_NS;
	return 0;
}

static int commit_hook(void *arg, uint64_t *ret_finish)
{
	return commit(arg, ret_finish);
}

/* ---- classifying references ------------------------------------------- */

static bool shares_kept_description(const struct rv_run *run, const struct rv_holder *h,
				    const struct revoke_ref *ref)
{
	if (ref->type != REVOKE_REF_FD)
		return false;
	/* The helper's client keeps the descriptors it sent us until we
	 * answer: its own lookups, as our O_PATH descriptors are ours. */
	for (size_t t = 0; run->req.fds && t < run->ntargets; t++)
		if (run->targets[t].path_fd >= 0 &&
		    syscall(SYS_kcmp, getpid(), h->pub.pid, KCMP_FILE, run->targets[t].path_fd,
			    ref->fd) == 0)
			return true;
	if (run->req.keep_fd < 0)
		return false;
	return syscall(SYS_kcmp, getpid(), h->pub.pid, KCMP_FILE, run->req.keep_fd, ref->fd) == 0;
}

/* Decide, for freshly scanned refs, which are kept and which this engine
 * cannot reach. Returns the number of unreachable refs. */
static void unreachable_ref(struct revoke_ref *ref, int error, size_t *count)
{
	ref->state = REVOKE_STATE_UNREACHABLE;
	ref->error = error;
	(*count)++;
}

/* Whether the userspace engine can cut REF of H (a cwd or root, of a
 * directory or on a mount, needs the dead directory within the holder's
 * reach). */
static bool cuttable(const struct rv_run *run, struct rv_holder *h, const struct revoke_ref *ref,
		     int *ret_error)
{
	const struct rv_refkind *k = rv_refkind(ref->type);
	bool mount = ref->target < run->ntargets && run->targets[ref->target].mount;
	const char *why = NULL;

	*ret_error = EOPNOTSUPP;
	if (!k || !k->add_cut)
		return false;
	if (k->check) {
		char why_buf[sizeof(h->pub.reason)];
		int e = k->check(h, ref, why_buf, sizeof(why_buf));

		if (e) {
			*ret_error = e;
			if (!h->pub.reason[0])
				snprintf(h->pub.reason, sizeof(h->pub.reason), "%s", why_buf);
			return false;
		}
	}
	/* Code the holder runs: a SIGBUS there would kill it, which a
	 * forced unmount must not do. */
	if (mount && ref->type == REVOKE_REF_MAP && (ref->prot & PROT_EXEC)) {
		*ret_error = ETXTBSY;
		return false;
	}
	if (ref->type == REVOKE_REF_CWD || ref->type == REVOKE_REF_ROOT) {
		bool chroot = false;

		for (size_t i = 0; i < h->pub.nrefs; i++)
			chroot |= h->pub.refs[i].type == REVOKE_REF_ROOT;
		h->dead_dir_how =
		    h->self ? RV_DEAD_DIR_PATH : rv_dead_dir_how(h->pub.pid, chroot, &why);
		if (h->dead_dir_how < 0) {
			/* No status: it exited (and holds nothing any more). */
			*ret_error = -h->dead_dir_how == ESRCH || -h->dead_dir_how == ENOENT
					 ? ESRCH
					 : EOPNOTSUPP;
			h->dead_dir_how = RV_DEAD_DIR_NONE;
			if (why && !h->pub.reason[0])
				snprintf(h->pub.reason, sizeof(h->pub.reason), "%s", why);
			return false;
		}
	}
	return true;
}

/*
 * A mount target's mappings that run code: an executable mapping, and every
 * file mapping that abuts it, transitively (an ELF object's segments are
 * laid out back to back: its read-only data would fault as surely as its
 * text). Refs are sorted by start within their type.
 */
static void mark_code(const struct rv_run *run, struct rv_holder *h, size_t *unreachable)
{
	for (bool changed = true; changed;) {
		changed = false;
		for (size_t i = 0; i < h->pub.nrefs; i++) {
			struct revoke_ref *ref = &h->pub.refs[i];
			bool code = false;

			if (ref->type != REVOKE_REF_MAP || ref->state != REVOKE_STATE_FOUND ||
			    ref->target >= run->ntargets || !run->targets[ref->target].mount)
				continue;
			for (size_t j = 0; j < h->pub.nrefs && !code; j++) {
				const struct revoke_ref *o = &h->pub.refs[j];

				code = o->type == REVOKE_REF_MAP && o->target == ref->target &&
				       o->state == REVOKE_STATE_UNREACHABLE &&
				       o->error == ETXTBSY &&
				       (o->end == ref->start || o->start == ref->end);
			}
			if (code) {
				unreachable_ref(ref, ETXTBSY, unreachable);
				changed = true;
			}
		}
	}
}

static size_t classify_holder(const struct rv_run *run, struct rv_holder *h, bool native)
{
	size_t unreachable = 0;
	int error;

	for (size_t i = 0; i < h->pub.nrefs; i++) {
		struct revoke_ref *ref = &h->pub.refs[i];

		if (ref->state != REVOKE_STATE_FOUND)
			continue;
		if (shares_kept_description(run, h, ref))
			ref->state = REVOKE_STATE_KEPT;
		else if (!native && !cuttable(run, h, ref, &error)) {
			if (error == ESRCH && !h->tracee) {
				/* It exited since the scan: a process that is gone
				 * holds nothing, which refuses nothing. */
				h->pub.reason[0] = 0;
				rv_holder_clear(h);
				return 0;
			}
			unreachable_ref(ref, error, &unreachable);
		}
	}
	if (!native)
		mark_code(run, h, &unreachable);
	return unreachable;
}

static size_t classify_all(const struct rv_run *run, bool native)
{
	size_t unreachable = 0;

	for (size_t i = 0; i < run->holders.n; i++)
		unreachable += classify_holder(run, &run->holders.v[i], native);
	return unreachable + run->others.n;
}

static size_t count_uninspected(const struct rv_run *run)
{
	size_t n = 0;

	for (size_t i = 0; i < run->holders.n; i++)
		n += run->holders.v[i].uninspected;
	return n;
}

/* Mark every ref of H in state FROM with STATE (and ERROR). */
static void holder_mark(struct rv_holder *h, int from, int state, int error)
{
	for (size_t i = 0; i < h->pub.nrefs; i++)
		if (h->pub.refs[i].state == from) {
			h->pub.refs[i].state = state;
			h->pub.refs[i].error = error;
		}
}

static void mark_all(struct rv_run *run, int from, int state, int error)
{
	for (size_t i = 0; i < run->holders.n; i++)
		holder_mark(&run->holders.v[i], from, state, error);
}

/* ---- scanning ------------------------------------------------------------ */

static void scan_opts(struct rv_run *run, int phase, struct rv_scan_opts *o)
{
	*o = (struct rv_scan_opts){
	    .proc_root = "/proc",
	    .deadline_ns = rv_budget_deadline(&run->budget, phase),
	    .flags = run->req.flags & (REVOKE_DISCOVERY_PROC | REVOKE_DISCOVERY_BPF),
	    .ignore_fds = run->ignore_fds,
	    .nignore_fds = run->ntargets,
	    .bpf = &run->bpf,
	};
}

/* ---- other revoke calls ------------------------------------------------ */

/*
 * What other revoke calls hold only for their call (lock.c): their O_PATH
 * lookups of a target, and descriptors in flight to the helper, are no
 * holders' and are neither cut nor counted, so that concurrent revokes of
 * one file never fail each other. Such a process that holds a target in any
 * other way is not stopped (it may be stopping others: two that stop each
 * other never run again): the call is refused, naming it. Looks at the
 * holders from FROM on.
 */
static void drop_revoke_calls(struct rv_run *run, size_t from)
{
	struct rv_scan_opts so;

	if (from >= run->holders.n || rv_calls_of(run->requester, &run->calls) < 0 || !run->calls.n)
		return;
	scan_opts(run, RV_PH_SCAN, &so);
	for (size_t i = from; i < run->holders.n; i++) {
		struct rv_holder *h = &run->holders.v[i];
		size_t k = 0;

		if (h->uninspected || h->other_user || h->tracee ||
		    !rv_calls_has(&run->calls, h->pub.pid))
			continue;
		/* The first scan may have left the descriptors' flags unread. */
		if (!h->self && rv_scan_pid(run->targets, run->ntargets, &so, h) == -ESRCH) {
			rv_holder_clear(h);
			continue;
		}
		for (size_t j = 0; j < h->pub.nrefs; j++) {
			const struct revoke_ref *ref = &h->pub.refs[j];

			if ((ref->type == REVOKE_REF_FD && (ref->open_flags & O_PATH)) ||
			    ref->type == REVOKE_REF_INFLIGHT)
				continue;
			h->pub.refs[k++] = *ref;
		}
		h->pub.nrefs = k;
		if (h->self || k == 0)
			continue;
		h->pub.error = EBUSY;
		snprintf(h->pub.reason, sizeof(h->pub.reason),
			 "pid %d is inside a revoke call of its own: not stopped", (int)h->pub.pid);
	}
}

/* Holders refused before anyone was stopped (drop_revoke_calls). */
static size_t count_refused(const struct rv_run *run)
{
	size_t n = 0;

	for (size_t i = 0; i < run->holders.n; i++) {
		const struct rv_holder *h = &run->holders.v[i];

		n += h->pub.error && h->pub.nrefs && !h->tracee && !h->uninspected;
	}
	return n;
}

/* ---- stopping ---------------------------------------------------------- */

/* The process and detail in a stop failure's reason ("thread 123 would not
 * stop (state D)"), for the timeout message. */
static void note_stop_failure(struct rv_run *run, const struct rv_holder *h, int error)
{
	const char *state = strstr(h->pub.reason, "(state ");

	if (error != ETIMEDOUT)
		return;
	if (state) {
		char detail[16];

		snprintf(detail, sizeof(detail), "%.*s", (int)strcspn(state + 1, ")"), state + 1);
		fail_at(run, RV_PH_STOP, h->pub.pid, detail);
	} else
		fail_at(run, RV_PH_STOP, h->pub.pid, h->pub.reason);
}

/* The helper's client, which holds nothing but the descriptors it sent us
 * (kept): nothing of it is cut, so it is not stopped either (it may be
 * traced itself, by strace for one, and could not be). */
static bool only_kept(const struct rv_run *run, const struct rv_holder *h)
{
	if (!run->req.fds || h->pub.nrefs == 0)
		return false;
	for (size_t i = 0; i < h->pub.nrefs; i++)
		if (h->pub.refs[i].state != REVOKE_STATE_KEPT)
			return false;
	return true;
}

/* Stop every holder not stopped yet, all at once. Returns the number that failed. */
static size_t stop_all(struct rv_run *run)
{
	uint64_t stop_deadline = rv_budget_deadline(&run->budget, RV_PH_STOP);
	_cleanup_free_ struct rv_stop_req *reqs = calloc(run->holders.n + 1, sizeof(*reqs));
	_cleanup_free_ size_t *idx = calloc(run->holders.n + 1, sizeof(*idx));
	size_t n = 0, failed = 0;
	int r = -ENOMEM;

	for (size_t i = 0; reqs && idx && i < run->holders.n; i++) {
		struct rv_holder *h = &run->holders.v[i];

		/* No refs: it exited, or holds only what is no holder's. */
		if (h->self || h->tracee || h->pub.error || h->uninspected || only_kept(run, h) ||
		    !h->pub.nrefs)
			continue;
		/* What the scan read moments ago; a change since (a tracer came,
		 * a vfork began) shows at the seize or the wait, as it would
		 * after a fresh read. */
		reqs[n] = (struct rv_stop_req){.pid = h->pub.pid,
					       .pidfd = h->pidfd,
					       .have_status = h->have_pf_flags,
					       .status = {.tgid = h->pub.pid,
							  .state = h->state,
							  .tracer = h->tracer,
							  .seccomp = h->seccomp},
					       .pf_flags = h->pf_flags,
					       .vdso = h->vdso};
		idx[n++] = i;
	}
	if (reqs && idx)
		r = rv_tracees_stop(reqs, n, stop_deadline);
	if (r < 0) {
		/* Nothing was stopped. */
		for (size_t i = 0; i < run->holders.n; i++) {
			struct rv_holder *h = &run->holders.v[i];

			if (h->self || h->tracee || h->pub.error || h->uninspected ||
			    only_kept(run, h) || !h->pub.nrefs)
				continue;
			h->pub.error = -r;
			failed++;
		}
		return failed;
	}
	for (size_t k = 0; k < n; k++) {
		struct rv_holder *h = &run->holders.v[idx[k]];

		memcpy(h->pub.reason, reqs[k].reason, sizeof(h->pub.reason));
		if (reqs[k].error == ESRCH) {
			/* It exited since the scan: it holds nothing any more. */
			rv_holder_clear(h);
			continue;
		}
		if (reqs[k].error) {
			h->pub.error = reqs[k].error;
			note_stop_failure(run, h, reqs[k].error);
			failed++;
			continue;
		}
		h->tracee = reqs[k].tracee;
	}
	return failed;
}

/*
 * Merge a full scan made while every known holder was stopped: stopped
 * holders (and the caller) get the refs it found, final since their tables
 * can no longer change (every process sharing a table is a holder too, and
 * stopped); those it did not find hold nothing any more; processes that
 * became holders since the last scan (a fork, an fd received over a socket)
 * are added, to be stopped and read next round. Returns how many were added.
 */
static int merge_scan(struct rv_run *run, struct rv_holders *fresh, size_t *ret_added)
{
	size_t n = run->holders.n, added = 0, j = 0;
	long pidfd_max = 0;

	rv_holders_sort(&run->holders);
	rv_holders_sort(fresh);
	for (size_t i = 0; i < n; i++) {
		struct rv_holder *h = &run->holders.v[i];

		while (j < fresh->n && fresh->v[j].pub.pid < h->pub.pid)
			j++;
		if (!h->tracee && !h->self)
			continue; /* not stopped (best effort): keep what it had */
		/* H is stopped: these refs are the final ones. */
		if (j < fresh->n && fresh->v[j].pub.pid == h->pub.pid)
			rv_holder_take_refs(h, &fresh->v[j]);
		else
			rv_holder_clear(h);
	}
	for (j = 0; j < fresh->n; j++) {
		struct rv_holder key = {.pub.pid = fresh->v[j].pub.pid}, *h;

		if (bsearch(&key, run->holders.v, n, sizeof(key), rv_holder_cmp_pid))
			continue;
		h = rv_holders_move_in(&run->holders, &fresh->v[j]);
		if (!h)
			return -ENOMEM;
		/* The rescan leaves pidfds to us (RV_SCAN_NO_PIDFD): only a new
		 * holder needs one. One that exited is found so by its stop. */
		if (h->pidfd < 0 && !h->self && !h->uninspected)
			(void)rv_holder_pidfd(h->pub.pid, &h->pidfd, &pidfd_max);
	}
	/* New holders that are other revoke calls hold nothing of ours, or
	 * are refused without a stop: neither is one to stop next round. */
	drop_revoke_calls(run, n);
	for (size_t i = n; i < run->holders.n; i++)
		added += !run->holders.v[i].uninspected && !run->holders.v[i].pub.error &&
			 run->holders.v[i].pub.nrefs;
	*ret_added = added;
	return 0;
}

/*
 * Stop every holder, then look again with one full scan: a holder may have
 * forked, started a thread or dup'd the descriptor between the scan and its
 * stop. Ends when a scan finds no new holder.
 */
/*
 * Holders whose leader waits in vfork() (vfork.c) before anyone is stopped:
 * their child, often a holder too, must run to its exec or exit, which it
 * could not while stopped. Waits until the stop phase's deadline; a parent
 * still waiting then is refused by name (ETIMEDOUT), touched by nobody.
 * Returns the number refused. A vfork that begins later is waited for by the
 * stop itself (stop.c), which names the child too when it gives up.
 */
static size_t wait_vfork_parents(struct rv_run *run)
{
	uint64_t deadline = rv_budget_deadline(&run->budget, RV_PH_STOP);
	_cleanup_free_ bool *done = calloc(run->holders.n + 1, sizeof(bool));
	_cleanup_free_ pid_t *children = calloc(run->holders.n + 1, sizeof(pid_t));
	size_t refused = 0;

	if (!done || !children)
		return 0; /* the stop waits for them as for any D state */
	for (;;) {
		bool waiting = false;

		for (size_t i = 0; i < run->holders.n; i++) {
			struct rv_holder *h = &run->holders.v[i];
			char state = h->state;

			if (done[i] || h->state != 'D' || h->self || h->uninspected ||
			    h->other_user || h->pub.error || h->tracee)
				continue;
			if (rv_vfork_parent(h->pub.pid, h->pub.pid, &state, &children[i]) <= 0) {
				/* No longer D, or D for something else (the stop
				 * waits for that). */
				h->state = state;
				done[i] = true;
				continue;
			}
			if (rv_now_ns() < deadline) {
				waiting = true;
				continue;
			}
			h->pub.error = ETIMEDOUT;
			snprintf(h->pub.reason, sizeof(h->pub.reason),
				 "pid %d is a vfork parent waiting for pid %d", (int)h->pub.pid,
				 (int)children[i]);
			fail_at(run, RV_PH_STOP, h->pub.pid, h->pub.reason);
			refused++;
		}
		if (!waiting)
			return refused;
		usleep(2000);
	}
}

static int stop_until_stable(struct rv_run *run, size_t *ret_failed)
{
	struct rv_scan_opts so;
	size_t failed = 0;
	int r;

	set_phase(run, RV_PH_STOP, 0);
	failed = wait_vfork_parents(run);
	if (failed && !(run->req.flags & REVOKE_BEST_EFFORT)) {
		*ret_failed = failed;
		return 0;
	}

	for (int round = 0; round < RV_MAX_ROUNDS; round++) {
		struct rv_holders fresh = {};
		size_t added = 0;

		set_phase(run, RV_PH_STOP, 0);
		failed += stop_all(run);
		if (failed && !(run->req.flags & REVOKE_BEST_EFFORT))
			break; /* the call is refused: no need to look further */
		scan_opts(run, RV_PH_CUT, &so);
		so.flags |= RV_SCAN_NO_PIDFD;
		r = rv_scan(run->targets, run->ntargets, &so, &fresh);
		if (r >= 0)
			r = merge_scan(run, &fresh, &added);
		rv_holders_free(&fresh);
		if (r == -ETIMEDOUT)
			fail_at(run, RV_PH_STOP, 0, "looking at the stopped holders again");
		if (r < 0)
			return r;
		if (added == 0)
			break;
		if (round == RV_MAX_ROUNDS - 1)
			return -EBUSY;
	}
	*ret_failed = failed;
	return 0;
}

/* ---- terminals ---------------------------------------------------------- */

/* FD if it is a terminal's; else closed, -ENOTTY. */
static int keep_if_tty(int fd)
{
	struct termios tio;

	if (ioctl(fd, TCGETS, &tio) == 0)
		return fd;
	safe_close(fd);
	return -ENOTTY;
}

/* pidfd_getfd copy of one holder's descriptor of TARGET, to hang a tty up. */
static int grab_tty(struct rv_run *run, unsigned int target)
{
	for (size_t i = 0; i < run->holders.n; i++) {
		struct rv_holder *h = &run->holders.v[i];

		for (size_t j = 0; j < h->pub.nrefs; j++) {
			struct revoke_ref *ref = &h->pub.refs[j];
			int fd;

			if (ref->type != REVOKE_REF_FD || ref->target != target ||
			    ref->state != REVOKE_STATE_FOUND)
				continue;
			if (h->self)
				fd = fcntl(ref->fd, F_DUPFD_CLOEXEC, 3);
			else if (h->pidfd >= 0)
				fd = (int)syscall(SYS_pidfd_getfd, h->pidfd, ref->fd, 0);
			else
				continue;
			if (fd < 0)
				continue;
			return keep_if_tty(fd);
		}
	}
	return -ENOENT;
}

/* ---- cutting and releasing --------------------------------------------- */

static void note_stopped(struct rv_run *run, struct rv_holder *h)
{
	h->pub.stopped_ns = rv_tracee_stopped_ns(h->tracee);
	if (h->pub.stopped_ns > run->max_stopped_ns)
		run->max_stopped_ns = h->pub.stopped_ns;
}

/* Release HS[0..N) (those still stopped), noting how long each was. */
static void release_holders(struct rv_run *run, struct rv_holder **hs, size_t n)
{
	_cleanup_free_ struct rv_tracee **ts = calloc(n + 1, sizeof(*ts));
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		struct rv_holder *h = hs[i];

		if (!h->tracee)
			continue;
		note_stopped(run, h);
		if (ts)
			ts[k++] = h->tracee;
		else
			(void)rv_tracee_release(h->tracee);
		h->tracee = NULL;
	}
	rv_tracees_release(ts, k);
}

static void release_all(struct rv_run *run)
{
	_cleanup_free_ struct rv_holder **hs = calloc(run->holders.n + 1, sizeof(*hs));

	if (!hs) {
		for (size_t i = 0; i < run->holders.n; i++) {
			struct rv_holder *h = &run->holders.v[i];

			release_holders(run, &h, 1);
		}
		return;
	}
	for (size_t i = 0; i < run->holders.n; i++)
		hs[i] = &run->holders.v[i];
	release_holders(run, hs, run->holders.n);
}

/* A holder's program is over: wake its epoll waiters if everything was cut. */
static void cut_done(struct rv_holder *h, bool all_cut, void *arg)
{
	(void)arg;
	if (all_cut && h->wake) {
		rv_wake_apply(h, h->wake);
		h->wake = NULL;
	}
}

/* Cut every stopped holder (and the caller); returns how many failed, or
 * -EBUSY when all or nothing refused before anything ran. */
static int cut_all(struct rv_run *run, size_t *ret_failed)
{
	int ttys[run->ntargets];
	bool hangup = run->req.keep_fd < 0 && !(run->req.flags & REVOKE_NO_HANGUP);
	unsigned int flags = run->req.flags & REVOKE_BEST_EFFORT ? 0 : RV_CUT_ALL_OR_NOTHING;
	_cleanup_free_ struct rv_holder **hs = calloc(run->holders.n + 1, sizeof(*hs));
	_cleanup_free_ int *rets = calloc(run->holders.n + 1, sizeof(*rets));
	struct rv_cut_hooks hooks = {.done = cut_done,
				     .dead_dir = run->dead_dir.fd >= 0 ? &run->dead_dir : NULL,
				     .commit = commit_hook,
				     .arg = run};
	struct rv_wake **wakes;
	size_t failed = 0, n = 0;
	bool any_tty = false;
	int r;

	if (!hs || !rets)
		return -ENOMEM;
	for (size_t t = 0; t < run->ntargets; t++) {
		ttys[t] = hangup && S_ISCHR(run->targets[t].mode) ? grab_tty(run, t) : -1;
		any_tty |= ttys[t] >= 0;
	}
	for (size_t i = 0; i < run->holders.n; i++) {
		struct rv_holder *h = &run->holders.v[i];

		if (h->self || h->tracee)
			hs[n++] = h;
	}
	set_phase(run, RV_PH_CUT, 0);
	/* Threads waiting in epoll_wait on sets where a descriptor to be cut is
	 * registered: learnt now, while the registrations still exist, and
	 * woken as each holder's cut is over. */
	wakes = calloc(n ? n : 1, sizeof(*wakes));
	for (size_t k = 0; wakes && k < n; k++) {
		(void)rv_wake_collect(hs[k], run->targets, run->ntargets, &wakes[k]);
		hs[k]->wake = wakes[k];
	}
	/* Each holder goes on the moment its cut is over, unless a terminal is
	 * to be hung up first or the mount to be unmounted (everyone stays
	 * stopped until then). */
	hooks.release = !any_tty && !(run->req.flags & REVOKE_UMOUNT);
	r = rv_cut_holders(hs, n, flags, &hooks, rets);
	for (size_t k = 0; wakes && k < n; k++) {
		rv_wake_free(hs[k]->wake); /* those not applied */
		hs[k]->wake = NULL;
	}
	free(wakes);
	for (size_t k = 0; k < n; k++)
		if (hs[k]->tracee)
			note_stopped(run, hs[k]);
	for (size_t k = 0; r >= 0 && k < n; k++) {
		if (rets[k] == -ESRCH && !hs[k]->self) {
			/* Killed while being cut (SIGKILL reaches stopped
			 * tracees): it holds nothing any more. */
			rv_holder_clear(hs[k]);
			continue;
		}
		if (rets[k] < 0) {
			failed++;
			if (rets[k] == -ETIMEDOUT)
				fail_at(run, RV_PH_CUT, hs[k]->pub.pid, hs[k]->pub.reason);
		}
	}
	/* A hangup reaches the open files of the tty that no descriptor table
	 * shows (in flight, /dev/tty). It needs CAP_SYS_ADMIN; without it the
	 * cut descriptors are all we do. */
	for (size_t t = 0; t < run->ntargets; t++) {
		if (ttys[t] < 0)
			continue;
		if (r >= 0)
			(void)ioctl(ttys[t], TIOCVHANGUP);
		safe_close(ttys[t]);
	}
	if (r < 0)
		return r;
	*ret_failed = failed;
	return 0;
}

/* ---- the report ----------------------------------------------------------- */

static int summarise(const struct rv_holder *h)
{
	static const int worst_first[] = {REVOKE_STATE_FAILED,	REVOKE_STATE_UNREACHABLE,
					  REVOKE_STATE_SKIPPED, REVOKE_STATE_FOUND,
					  REVOKE_STATE_CUT,	REVOKE_STATE_KEPT};

	if (h->uninspected)
		return REVOKE_STATE_UNINSPECTED;
	for (size_t s = 0; s < ARRAY_SIZE(worst_first); s++)
		for (size_t i = 0; i < h->pub.nrefs; i++)
			if (h->pub.refs[i].state == worst_first[s])
				return worst_first[s];
	return h->pub.error ? REVOKE_STATE_FAILED : REVOKE_STATE_CUT;
}

static int cmp_holder_pid(const void *a, const void *b)
{
	const struct revoke_holder *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

static struct revoke_report *report_new(size_t ntargets, size_t nholders)
{
	struct revoke_report *rep = calloc(1, sizeof(*rep));

	if (!rep)
		return NULL;
	rep->targets = calloc(ntargets ? ntargets : 1, sizeof(*rep->targets));
	rep->holders = calloc(nholders ? nholders : 1, sizeof(*rep->holders));
	rep->holder_nspids = calloc(nholders ? nholders : 1, sizeof(*rep->holder_nspids));
	if (!rep->targets || !rep->holders || !rep->holder_nspids) {
		free(rep->targets);
		free(rep->holders);
		free(rep->holder_nspids);
		free(rep);
		return NULL;
	}
	rep->sz = sizeof(*rep);
	rep->holder_size = sizeof(struct revoke_holder);
	rep->ref_size = sizeof(struct revoke_ref);
	return rep;
}

static int build_report(struct rv_run *run, int error, struct revoke_report **ret)
{
	struct revoke_report *rep;
	size_t n = 0;

	if (run->others.n && rv_holders_merge(&run->holders, &run->others) < 0)
		return -ENOMEM;
	rep = report_new(run->ntargets, run->holders.n);
	if (!rep)
		return -ENOMEM;
	rep->ntargets = run->ntargets;
	for (size_t t = 0; t < run->ntargets; t++) {
		rep->targets[t] = (struct revoke_target){
		    .path = TAKE_PTR(run->targets[t].path),
		    .dev = run->targets[t].dev,
		    .ino = run->targets[t].ino,
		    .mode = run->targets[t].mode,
		    .uid = run->targets[t].uid,
		};
	}
	for (size_t i = 0; i < run->holders.n; i++) {
		struct rv_holder *h = &run->holders.v[i];

		/* Holders that exited or dropped the file in the meantime. */
		if (h->pub.nrefs == 0 && !h->pub.error && !h->uninspected)
			continue;
		h->pub.state = summarise(h);
		if (h->uninspected) {
			h->pub.error = EACCES;
			rep->nuninspected++;
		}
		rep->holders[n++] = h->pub;
		h->pub.refs = NULL;
		h->pub.nrefs = 0;
	}
	rep->nholders = n;
	/* Holders found by a rescan were appended. */
	if (n > 1)
		qsort(rep->holders, n, sizeof(*rep->holders), cmp_holder_pid);
	for (size_t i = 0; i < n; i++) {
		struct rv_proc_status st;

		/* Read now, not at scan time: BPF discovery reads no status. A
		 * holder gone meanwhile has none (0). */
		if (rep->holders[i].pid > 0 && rv_proc_status_of(rep->holders[i].pid, &st) == 0)
			rep->holder_nspids[i] = st.nspid_inner;
	}
	rep->engine = run->engine;
	rep->discovery = run->discovery;
	rep->error = error < 0 ? -error : 0;
	rep->elapsed_ns = rv_now_ns() - run->budget.start_ns;
	rep->max_stopped_ns = run->max_stopped_ns;
	rep->timeout_ns = run->budget.timeout_ns;
	rep->nunmounted = run->nunmounted;
	if (error < 0) {
		rep->failed_phase = run->failed_phase;
		rep->failed_pid = run->failed_pid;
		memcpy(rep->failed_detail, run->failed_detail, sizeof(rep->failed_detail));
	}
	*ret = rep;
	return 0;
}

/* ---- the native engine ------------------------------------------------- */

/*
 * A fresh descriptor of tty target T for the native engine's hangup, or < 0.
 * The syscalls revoke every file of the inode but not /dev/tty's (another
 * inode), which only a hangup reaches; a holder's copy (pidfd_getfd) would be
 * revoked with the rest, so the tty is opened anew and kept by frevoke().
 * Only when a holder has it open, so that the open cannot be the one that
 * brings a line up (DTR on a serial port); never the TTYAUX devices
 * (/dev/tty, /dev/console, /dev/ptmx), whose open means another tty.
 */
static int native_tty(const struct rv_run *run, size_t t)
{
	const struct rv_target *tg = &run->targets[t];
	bool held = false;
	char link[64];
	int fd;

	if (run->req.keep_fd >= 0 || (run->req.flags & REVOKE_NO_HANGUP) || !S_ISCHR(tg->mode) ||
	    major(tg->rdev) == 5)
		return -1;
	for (size_t i = 0; i < run->holders.n && !held; i++) {
		const struct rv_holder *h = &run->holders.v[i];

		for (size_t j = 0; j < h->pub.nrefs && !held; j++)
			held = h->pub.refs[j].type == REVOKE_REF_FD && h->pub.refs[j].target == t;
	}
	if (!held)
		return -1;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", tg->path_fd);
	fd = open(link, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	return fd < 0 ? -1 : keep_if_tty(fd);
}

/*
 * frevoke() of our own O_PATH descriptor: every file of the inode but that
 * one, without /proc and without opening the file.
 *
 * EBADF means a revoke of the same file ran meanwhile: it marked every file
 * of the inode open when it collected them, our descriptor included, so
 * everything that was open when this call began is revoked already. Only
 * files opened since may not be: once more with a fresh descriptor. Ten
 * callers at once revoke each other's descriptors over and over (the guest
 * saw four attempts fail), so after a bounded number of attempts the latest
 * of those revokes is taken as ours, which it is for every file this call
 * promises to cover. A path that no longer names the inode: the same.
 */
static int native_revoke_target(struct rv_run *run, size_t t)
{
	struct rv_target *tg = &run->targets[t];
	int tty = native_tty(run, t), r;

	if (tty >= 0) {
		r = rv_native_frevoke(tty);
		/* Needs CAP_SYS_ADMIN; without it the revoke is all we do. Files
		 * revoked above are no longer tty files to it. */
		if (r >= 0)
			(void)ioctl(tty, TIOCVHANGUP);
		safe_close(tty);
		if (r != -EBADF)
			return r;
	}
	for (int attempt = 0; attempt < 8; attempt++) {
		r = rv_native_frevoke(tg->path_fd);
		if (r != -EBADF)
			return r;
		r = rv_target_reopen(&run->req, tg);
		if (r == -EBUSY || r == -ENOENT)
			return 0;
		if (r < 0)
			return r;
	}
	return 0;
}

static int run_native(struct rv_run *run)
{
	size_t dirs = 0;
	int r = 0;

	run->engine = REVOKE_ENGINE_SYSCALL;
	classify_all(run, true);
	/* The kernel reaches every open file, in flight ones too. */
	mark_all(run, REVOKE_STATE_UNREACHABLE, REVOKE_STATE_FOUND, 0);
	/* But not a cwd or root, which are no open files (here only when
	 * REVOKE_ENGINE_NATIVE was asked for: see work()). */
	for (size_t i = 0; i < run->holders.n; i++)
		for (size_t j = 0; j < run->holders.v[i].pub.nrefs; j++) {
			struct revoke_ref *ref = &run->holders.v[i].pub.refs[j];

			if (ref->state == REVOKE_STATE_FOUND &&
			    (ref->type == REVOKE_REF_CWD || ref->type == REVOKE_REF_ROOT))
				unreachable_ref(ref, EOPNOTSUPP, &dirs);
		}
	if (dirs && !(run->req.flags & REVOKE_BEST_EFFORT)) {
		mark_all(run, REVOKE_STATE_FOUND, REVOKE_STATE_SKIPPED, 0);
		return -EBUSY;
	}
	set_phase(run, RV_PH_CUT, 0);
	r = commit(run, NULL);
	if (r < 0) {
		mark_all(run, REVOKE_STATE_FOUND, REVOKE_STATE_SKIPPED, 0);
		return r;
	}
	for (size_t t = 0; t < run->ntargets && r >= 0; t++)
		r = run->req.fd >= 0 ? rv_native_frevoke(run->req.fd)
				     : native_revoke_target(run, t);
	mark_all(run, REVOKE_STATE_FOUND, r < 0 ? REVOKE_STATE_FAILED : REVOKE_STATE_CUT,
		 r < 0 ? -r : 0);
	return r < 0 ? r : dirs ? -EBUSY : 0;
}

/* After the cut: unmount, deepest first. On failure, the report says which
 * mount and the first process found still holding it. */
static int unmount_all(struct rv_run *run, int cut, bool native)
{
	struct rv_holders still = {};
	struct rv_scan_opts so;
	char detail[128] = "";
	int r;

	set_phase(run, RV_PH_UMOUNT, 0);
	/* Our own descriptors of the mount points would keep them busy. */
	for (size_t t = 0; t < run->ntargets; t++)
		run->targets[t].path_fd = safe_close(run->targets[t].path_fd);
	r = rv_mounts_umount(run->targets, run->ntargets, native, &run->nunmounted, detail);
	if (r == 0)
		return cut;
	scan_opts(run, RV_PH_UMOUNT, &so);
	so.nignore_fds = 0;
	if (r == -EBUSY && rv_scan(run->targets, run->ntargets, &so, &still) >= 0) {
		const struct rv_holder *h = NULL;
		char d[128];

		for (size_t i = 0; i < still.n && !h; i++)
			if (still.v[i].pub.nrefs)
				h = &still.v[i];
		if (h) {
			snprintf(d, sizeof(d), "%.60s: still held by pid %d (%.40s)", detail,
				 h->pub.pid, h->pub.comm);
			fail_at(run, RV_PH_UMOUNT, h->pub.pid, d);
		}
		/* Whoever holds it now and was no holder we knew (a process
		 * that walked into the mount by its path meanwhile) is in the
		 * report, not cut. */
		for (size_t i = 0; i < still.n; i++) {
			struct rv_holder *n;

			if (!still.v[i].pub.nrefs || still.v[i].uninspected ||
			    rv_holders_find(&run->holders, still.v[i].pub.pid))
				continue;
			n = rv_holders_move_in(&run->holders, &still.v[i]);
			if (!n)
				break;
			holder_mark(n, REVOKE_STATE_FOUND, REVOKE_STATE_FAILED, EBUSY);
			snprintf(n->pub.reason, sizeof(n->pub.reason),
				 "reached the mount while the holders were being cut");
		}
	}
	fail_at(run, RV_PH_UMOUNT, 0, detail);
	rv_holders_free(&still);
	return r;
}

/*
 * The kernel's forced unmount (umount2 UMOUNT_REVOKE), deepest mount first:
 * it syncs, revokes every file opened through the mount, moves cwd and root
 * to a dead directory and unmounts. It refuses a program running from the
 * mount, a swap file, a loop device's backing file; so does this, from the
 * scan, before the first mount goes.
 */
static int run_native_umount(struct rv_run *run)
{
	size_t refused = run->others.n;
	int r;

	run->engine = REVOKE_ENGINE_SYSCALL;
	for (size_t i = 0; i < run->holders.n; i++) {
		struct rv_holder *h = &run->holders.v[i];

		for (size_t j = 0; j < h->pub.nrefs; j++) {
			struct revoke_ref *ref = &h->pub.refs[j];

			if (ref->state != REVOKE_STATE_FOUND)
				continue;
			if (ref->type == REVOKE_REF_EXE)
				unreachable_ref(ref, EOPNOTSUPP, &refused);
			else if (ref->type == REVOKE_REF_MAP && (ref->prot & PROT_EXEC))
				unreachable_ref(ref, ETXTBSY, &refused);
		}
		mark_code(run, h, &refused);
	}
	if ((refused || count_uninspected(run)) && !(run->req.flags & REVOKE_BEST_EFFORT)) {
		mark_all(run, REVOKE_STATE_FOUND, REVOKE_STATE_SKIPPED, 0);
		return -EBUSY;
	}
	r = commit(run, NULL);
	if (r < 0) {
		mark_all(run, REVOKE_STATE_FOUND, REVOKE_STATE_SKIPPED, 0);
		return r;
	}
	r = unmount_all(run, 0, true);
	/* Everything on a mount that went is cut; the rest stays (the kernel
	 * changes nothing when it refuses). */
	for (size_t i = 0; i < run->holders.n; i++) {
		struct rv_holder *h = &run->holders.v[i];

		for (size_t j = 0; j < h->pub.nrefs; j++) {
			struct revoke_ref *ref = &h->pub.refs[j];

			if (ref->state != REVOKE_STATE_FOUND)
				continue;
			ref->state = r == 0 ? REVOKE_STATE_CUT : REVOKE_STATE_FAILED;
			ref->error = r == 0 ? 0 : -r;
		}
	}
	return r < 0 ? r : refused ? -EBUSY : 0;
}

/* ---- the userspace engine ------------------------------------------------ */

/* The dead directory, when a cwd or root is to be moved into it. */
static int make_dead_dir(struct rv_run *run)
{
	for (size_t i = 0; i < run->holders.n; i++) {
		const struct rv_holder *h = &run->holders.v[i];

		if (!h->tracee && !h->self)
			continue;
		for (size_t j = 0; j < h->pub.nrefs; j++) {
			const struct revoke_ref *ref = &h->pub.refs[j];

			if (ref->state == REVOKE_STATE_FOUND &&
			    (ref->type == REVOKE_REF_CWD || ref->type == REVOKE_REF_ROOT))
				return rv_dead_dir_make(run->targets, run->ntargets,
							&run->dead_dir);
		}
	}
	return 0;
}

static int refuse(struct rv_run *run)
{
	release_all(run);
	for (size_t i = 0; i < run->holders.n; i++) {
		struct rv_holder *h = &run->holders.v[i];

		holder_mark(h, REVOKE_STATE_FOUND,
			    h->pub.error ? REVOKE_STATE_FAILED : REVOKE_STATE_SKIPPED,
			    h->pub.error);
	}
	return -EBUSY;
}

/*
 * Holders whose program outlived its (finishing) wait go on with it by
 * themselves: the report says what they did, as /proc shows it a moment
 * later, not a guess. Returns how many such holders are now seen fully cut.
 */
static size_t verify_unfinished(struct rv_run *run)
{
	uint64_t deadline = rv_now_ns() + RV_VERIFY_NS;
	size_t done = 0;

	for (size_t i = 0; i < run->holders.n; i++) {
		struct rv_holder *h = &run->holders.v[i];
		bool unfinished = false;

		for (size_t j = 0; j < h->pub.nrefs; j++)
			unfinished |= h->pub.refs[j].state == REVOKE_STATE_FAILED &&
				      h->pub.refs[j].error == ETIMEDOUT;
		if (!unfinished || h->pub.error)
			continue;
		if (rv_cut_verify(h, deadline) == 0) {
			done++;
			h->pub.reason[0] = 0;
		} else
			snprintf(h->pub.reason, sizeof(h->pub.reason),
				 "its cut had not ended when the call did: it finishes it alone");
	}
	return done;
}

/* Whether the cut went far enough for REVOKE_UMOUNT to unmount: all of it,
 * or what best effort could reach while nothing else failed. */
static bool unmount_ok(const struct rv_run *run, bool some_not_cut)
{
	return !some_not_cut || ((run->req.flags & REVOKE_BEST_EFFORT) && !run->failed_phase);
}

static int run_ptrace(struct rv_run *run)
{
	bool umount = run->req.flags & REVOKE_UMOUNT;
	bool best_effort = run->req.flags & REVOKE_BEST_EFFORT;
	size_t unreachable, uninspected, not_stopped = 0, not_cut = 0;
	int r;

	run->engine = REVOKE_ENGINE_PTRACE;
	unreachable = classify_all(run, false) + count_refused(run);
	uninspected = count_uninspected(run);
	/* Nothing stopped yet: refusing now touches nobody. */
	if ((unreachable || uninspected) && !best_effort)
		return refuse(run);

	r = stop_until_stable(run, &not_stopped);
	if (r < 0) {
		release_all(run);
		mark_all(run, REVOKE_STATE_FOUND, REVOKE_STATE_SKIPPED, 0);
		return r;
	}
	/* The rescans replaced refs of stopped holders: classify them again. */
	unreachable = classify_all(run, false) + count_refused(run);
	uninspected = count_uninspected(run);
	if ((unreachable || not_stopped || uninspected) && !best_effort)
		return refuse(run);

	for (size_t i = 0; i < run->holders.n; i++) {
		struct rv_holder *h = &run->holders.v[i];

		if (h->pub.error)
			holder_mark(h, REVOKE_STATE_FOUND, REVOKE_STATE_FAILED, h->pub.error);
	}
	r = make_dead_dir(run);
	if (r < 0) {
		release_all(run);
		mark_all(run, REVOKE_STATE_FOUND, REVOKE_STATE_SKIPPED, 0);
		return r;
	}
	r = cut_all(run, &not_cut);
	if (r == -EBUSY)
		return refuse(run);
	if (r == -ETIMEDOUT || r == -ECANCELED) {
		/* Refused at the point of no return: nothing was changed. */
		release_all(run);
		rv_dead_dir_remove(&run->dead_dir);
		mark_all(run, REVOKE_STATE_FOUND, REVOKE_STATE_SKIPPED, 0);
		return r;
	}
	/* An unmount goes while the holders are still stopped: released, one
	 * that loops would walk back into the mount by its path (a cwd is
	 * inherited by every child it forks) before the unmount. */
	if (r >= 0 && umount && unmount_ok(run, unreachable || not_stopped || not_cut)) {
		r = unmount_all(run, unreachable || not_stopped || not_cut ? -EBUSY : 0, false);
		umount = false;
	}
	set_phase(run, RV_PH_RELEASE, 0);
	release_all(run);
	not_cut -= verify_unfinished(run);
	/* Every holder that was to move is in it, or never will be. */
	rv_dead_dir_remove(&run->dead_dir);
	if (r < 0)
		return r;
	/* With REVOKE_BEST_EFFORT, processes that could not be looked at are
	 * reported (state uninspected), not a failure: nothing known was left. */
	r = unreachable || not_stopped || not_cut ? -EBUSY : 0;
	/* Holders that finished their cut alone (verify_unfinished). */
	if (umount && unmount_ok(run, r < 0))
		r = unmount_all(run, r, false);
	return r;
}

/* Copies of a mount in other namespaces: the kernel's forced unmount takes
 * only the mount it is given; the userspace engine cuts those too. */
static bool any_foreign(const struct rv_run *run)
{
	for (size_t t = 0; t < run->ntargets; t++)
		if (run->targets[t].foreign)
			return true;
	return false;
}

static bool native_wanted(const struct rv_request *req)
{
	const char *env = getenv("REVOKE_ENGINE");

	if (req->flags & (REVOKE_LIST_ONLY | REVOKE_ENGINE_USERSPACE | REVOKE_MOUNT))
		return false;
	if (env && strcmp(env, "ptrace") == 0 && !(req->flags & REVOKE_ENGINE_NATIVE))
		return false;
	return true;
}

/* One userspace revoke (or unmount) at a time per user (lock.c). */
static int take_lock(struct rv_run *run)
{
	uint64_t waited = 0;
	pid_t owner = 0;

	set_phase(run, RV_PH_LOCK, 0);
	run->lock_fd = rv_engine_lock(run->requester, rv_budget_deadline(&run->budget, RV_PH_LOCK),
				      &owner, &waited);
	if (run->lock_fd == -ETIMEDOUT) {
		struct rv_proc_status st;
		char detail[128];

		run->lock_fd = -1;
		/* Whose and how long, as it was: the bound is the lock's share
		 * of the timeout, not the timeout. */
		if (owner > 0 && rv_proc_status_of(owner, &st) == 0)
			snprintf(detail, sizeof(detail),
				 "%.1f s for another revoke by uid %u (pid %d)",
				 (double)waited / 1e9, (unsigned)st.ruid, (int)owner);
		else
			snprintf(detail, sizeof(detail), "%.1f s for another revoke",
				 (double)waited / 1e9);
		fail_at(run, RV_PH_LOCK, owner, detail);
		return -ETIMEDOUT;
	}
	return 0;
}

/* Whether a holder has its cwd or root on a target (not a mount): revoke(2)
 * revokes open files, and these are none. */
static bool any_dir_ref(const struct rv_run *run)
{
	for (size_t i = 0; i < run->holders.n; i++)
		for (size_t j = 0; j < run->holders.v[i].pub.nrefs; j++) {
			const struct revoke_ref *ref = &run->holders.v[i].pub.refs[j];

			if (ref->type == REVOKE_REF_CWD || ref->type == REVOKE_REF_ROOT)
				return true;
		}
	return false;
}

/* Before anything is looked at: a revoke by the same user that holds the
 * lock is stopping and cutting, and what it does is over when we look. */
static int lock_and_reopen(struct rv_run *run)
{
	const struct rv_request *req = &run->req;
	int r = take_lock(run);

	if (r < 0)
		return r;
	/* That revoke may have cut our own O_PATH descriptors (we held its
	 * target): look the paths up again, same inodes only. */
	for (size_t t = 0; req->paths && t < run->ntargets; t++)
		if (rv_is_dead_fd(run->targets[t].path_fd)) {
			r = rv_target_reopen(req, &run->targets[t]);
			if (r < 0)
				return r;
		}
	/* Our own descriptors of the targets are no holders'. */
	free(run->ignore_fds);
	run->ignore_fds = calloc(run->ntargets, sizeof(int));
	if (!run->ignore_fds)
		return -ENOMEM;
	for (size_t t = 0; t < run->ntargets; t++)
		run->ignore_fds[t] = run->targets[t].path_fd;
	return 0;
}

/* The scan: who holds what. */
static int scan_holders(struct rv_run *run, bool ptrace_cut)
{
	struct rv_scan_opts so;
	int r;

	set_phase(run, RV_PH_SCAN, 0);
	scan_opts(run, RV_PH_SCAN, &so);
	/* The ptrace engine reads every stopped holder again before cutting:
	 * the first scan only needs to say who holds what. */
	if (ptrace_cut)
		so.flags |= RV_SCAN_NO_FDINFO;
	r = rv_scan(run->targets, run->ntargets, &so, &run->holders);
	if (r == -ETIMEDOUT)
		fail_at(run, RV_PH_SCAN, 0, "");
	if (r < 0)
		return r;
	run->discovery = r;
	drop_revoke_calls(run, 0);
	return abandoned(run) ? -ECANCELED : 0;
}

/* The whole call, in the worker thread. Returns 0 or -errno; sets
 * run->report when the targets were resolved. */
static int work(struct rv_run *run)
{
	const struct rv_request *req = &run->req;
	const struct rv_guard guard = {&run->mu, &run->gone};
	bool list = req->flags & REVOKE_LIST_ONLY, native;
	int r;

	/* First of all: frevoke's descriptor means what it means now, before
	 * this library opens anything that could take a freed number. */
	/* Two unmounts of one mount: the one that resolves its mount point
	 * while the other cuts and unmounts would hold it (an O_PATH descriptor
	 * of its root, or one in flight from the lookup), and make it fail.
	 * Mount points are resolved under the lock: the second finds no mount. */
	if ((req->flags & REVOKE_MOUNT) && !list) {
		r = take_lock(run);
		if (r < 0)
			return r;
	}
	set_phase(run, RV_PH_RESOLVE, 0);
	if (req->ns_pid) {
		r = rv_ns_open(req->ns_pid, &run->req.ns_root_fd, &run->req.ns_cwd_fd);
		if (r < 0)
			return r;
	}
	if (req->flags & REVOKE_MOUNT)
		r = rv_mounts_resolve(req, &guard, &run->targets, &run->ntargets);
	else
		r = rv_targets_resolve(req, &guard, &run->targets, &run->ntargets);
	if (r == -ETIMEDOUT)
		fail_at(run, RV_PH_RESOLVE, 0, "");
	if (r < 0)
		return r;
	if (run->calls_fd < 0 && req->fd >= 0)
		run->calls_fd = rv_calls_register();
	if (req->flags & REVOKE_MOUNT)
		native = (req->flags & REVOKE_UMOUNT) && !list &&
			 !(req->flags & REVOKE_ENGINE_USERSPACE) && rv_native_umount_available() &&
			 !any_foreign(run);
	else
		native = native_wanted(req) && rv_native_available();
	if ((req->flags & REVOKE_ENGINE_NATIVE) && !native)
		return -ENOSYS; /* after the lookup errors, as the syscall would */
	if (req->flags & REVOKE_MOUNT)
		/* Whose files are on a mount is no one's question: cutting
		 * them all is the unmounter's privilege. Listing is anyone's. */
		r = list || rv_has_cap(CAP_SYS_ADMIN) ? 0 : -EPERM;
	else if (req->for_client)
		r = rv_targets_check_owner(run->targets, run->ntargets, req->client_uid);
	else
		r = rv_targets_check_permission(run->targets, run->ntargets);
	if (r < 0) {
		rv_targets_free(run->targets, run->ntargets);
		run->targets = NULL;
		run->ntargets = 0;
		return r;
	}
	if (!list && !native && run->lock_fd < 0) {
		r = lock_and_reopen(run);
		if (r < 0)
			return r;
	}
	if (!run->ignore_fds) {
		run->ignore_fds = calloc(run->ntargets, sizeof(int));
		if (!run->ignore_fds)
			return -ENOMEM;
		for (size_t t = 0; t < run->ntargets; t++)
			run->ignore_fds[t] = run->targets[t].path_fd;
	}

	if ((req->flags & REVOKE_UMOUNT) && !list && !native) {
		/* Before anything is cut: what was acknowledged is on disk. */
		set_phase(run, RV_PH_SYNC, 0);
		r = rv_mounts_sync(run->targets, run->ntargets,
				   rv_budget_deadline(&run->budget, RV_PH_SYNC));
		if (r < 0) {
			fail_at(run, RV_PH_SYNC, 0, "");
			return r;
		}
	}

	r = scan_holders(run, !native && !list);
	if (r < 0)
		return r;
	if (native && !(req->flags & (REVOKE_ENGINE_NATIVE | REVOKE_MOUNT)) && any_dir_ref(run)) {
		/* Only the userspace engine moves a cwd or root (to the dead
		 * directory). Nothing was changed yet: it takes the call over,
		 * from the lock on, with a scan of its own. */
		native = false;
		r = lock_and_reopen(run);
		if (r < 0)
			return r;
		rv_holders_free(&run->holders);
		r = scan_holders(run, true);
		if (r < 0)
			return r;
	}

	if (req->flags & REVOKE_MOUNT) {
		r = rv_mounts_other_users(run->targets, run->ntargets, &run->others);
		if (r < 0)
			return r;
	}
	/* A dry run of an unmount: would it go ahead? Everything must be
	 * cuttable and nothing else may hold it. */
	if (list && (req->flags & REVOKE_UMOUNT))
		return classify_all(run, false) ||
			       (count_uninspected(run) && !(req->flags & REVOKE_BEST_EFFORT))
			   ? -EBUSY
			   : 0;
	/* A listing that could not look everywhere is no proof that nobody
	 * holds the file. */
	if (list)
		return count_uninspected(run) && !(req->flags & REVOKE_BEST_EFFORT) ? -EBUSY : 0;
	if (native && (req->flags & REVOKE_MOUNT))
		return run_native_umount(run);
	if (native)
		return run_native(run);
	return run_ptrace(run);
}

static void run_free(struct rv_run *run)
{
	if (!run)
		return;
	release_all(run);
	rv_bpf_free(run->bpf);
	free(run->ignore_fds);
	rv_holders_free(&run->holders);
	rv_holders_free(&run->others);
	rv_dead_dir_remove(&run->dead_dir);
	rv_targets_free(run->targets, run->ntargets);
	safe_close(run->req.ns_root_fd);
	safe_close(run->req.ns_cwd_fd);
	revoke_report_free(run->report);
	safe_close(run->lock_fd);
	safe_close(run->calls_fd);
	free(run->calls.pids);
	pthread_cond_destroy(&run->cv);
	pthread_mutex_destroy(&run->mu);
	free(run);
}

/* Targets that are only the paths as given (no lookup came back). */
static int timeout_targets(struct rv_run *run)
{
	size_t n = run->req.paths ? run->req.npaths : 0;
	struct rv_target *t = calloc(n ? n : 1, sizeof(*t));

	if (!t || !n) {
		free(t);
		return -ENOMEM;
	}
	pthread_mutex_lock(&run->mu);
	for (size_t i = 0; i < n; i++) {
		t[i].path_fd = -1;
		t[i].path = run->gone ? NULL : strdup(run->req.paths[i]);
	}
	pthread_mutex_unlock(&run->mu);
	run->targets = t;
	run->ntargets = n;
	return 0;
}

static void *run_thread(void *arg)
{
	struct rv_run *run = arg;
	struct revoke_report *rep = NULL;
	int r = work(run), rr;
	bool gone;

	/* Everything stopped is released before the caller hears of it. */
	release_all(run);
	if (!run->targets && r == -ETIMEDOUT && run->want_report)
		/* A lookup that did not come back: the report says which phase,
		 * and names the paths as given. */
		(void)timeout_targets(run);
	if (run->targets && run->want_report) {
		rr = build_report(run, r, &rep);
		if (rr < 0 && r == 0)
			r = rr;
	}
	pthread_mutex_lock(&run->mu);
	run->result = r;
	run->report = rep;
	run->done = true;
	gone = run->gone;
	pthread_cond_signal(&run->cv);
	pthread_mutex_unlock(&run->mu);
	if (gone)
		run_free(run);
	/* Whatever is still traced (a holder inside a program past the
	 * deadline) is detached as this thread exits. */
	return NULL;
}

/* The report of a call the caller stopped waiting for. */
static int timeout_report(struct rv_run *run, struct revoke_report **ret)
{
	struct revoke_report *rep = report_new(0, 0);

	if (!rep)
		return -ENOMEM;
	rep->error = ETIMEDOUT;
	rep->elapsed_ns = rv_now_ns() - run->budget.start_ns;
	rep->timeout_ns = run->budget.timeout_ns;
	rep->failed_phase = run->phase;
	rep->failed_pid = run->busy;
	*ret = rep;
	return 0;
}

int rv_engine_run(const struct rv_request *req, struct revoke_report **ret_report)
{
	struct rv_run *run = calloc(1, sizeof(*run));
	pthread_condattr_t ca;
	pthread_attr_t pa;
	pthread_t th;
	struct timespec until;
	uint64_t end;
	int r;

	if (!run)
		return -ENOMEM;
	run->req = *req;
	run->want_report = ret_report != NULL;
	run->lock_fd = -1;
	run->dead_dir.fd = -1;
	run->requester = req->for_client ? req->client_uid : geteuid();
	/* Before any descriptor of a target exists; frevoke's descriptor
	 * exists already, and must mean what it means now (work()): after it
	 * is resolved. */
	run->calls_fd = req->fd < 0 ? rv_calls_register() : -1;
	run->req.ns_root_fd = run->req.ns_cwd_fd = -1;
	run->budget = (struct rv_budget){.start_ns = rv_now_ns(),
					 .timeout_ns = (uint64_t)req->timeout_ms * 1000000u};
	run->req.deadline_ns = rv_budget_deadline(&run->budget, RV_PH_RESOLVE);
	pthread_mutex_init(&run->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&run->cv, &ca);
	pthread_condattr_destroy(&ca);

	pthread_attr_init(&pa);
	pthread_attr_setstacksize(&pa, 1u << 20);
	r = -pthread_create(&th, &pa, run_thread, run);
	pthread_attr_destroy(&pa);
	if (r < 0) {
		run_free(run);
		return r;
	}

	end = rv_budget_hard_end(&run->budget);
	until = (struct timespec){.tv_sec = (time_t)(end / 1000000000u),
				  .tv_nsec = (long)(end % 1000000000u)};
	pthread_mutex_lock(&run->mu);
	while (!run->done) {
		/* Past the point of no return the worker finishes what it began
		 * (each of its waits bounded): leaving now would let the caller
		 * exit and end it between two holders. */
		if (run->committed)
			pthread_cond_wait(&run->cv, &run->mu);
		else if (pthread_cond_timedwait(&run->cv, &run->mu, &until) == ETIMEDOUT &&
			 !run->committed)
			break;
	}
	if (!run->done) {
		/* Stuck in the kernel (a lookup on a hung server): the thread
		 * finishes whenever it can, changes nothing more, and frees
		 * everything itself. */
		run->gone = true;
		if (ret_report)
			(void)timeout_report(run, ret_report);
		pthread_mutex_unlock(&run->mu);
		pthread_detach(th);
		return -ETIMEDOUT;
	}
	pthread_mutex_unlock(&run->mu);
	pthread_join(th, NULL);
	r = run->result;
	if (ret_report && run->report)
		*ret_report = TAKE_PTR(run->report);
	run_free(run);
	return r;
}
