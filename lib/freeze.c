/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Freezing the holders: waiting for vfork parents, stopping every holder at
 * once, looking again until no new holder appears (forks, new threads, dups),
 * and letting them go again. Other revoke calls found among the holders are
 * sorted out here (lock.c: what they hold for their own call is no holder's).
 */
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/kcmp.h>
#include <pthread.h>
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
#include "discover/proc.h"
#include "run.h"
#include "kinds/refkind.h"

/* A stable set of holders should appear within a couple of rounds; this only
 * bounds a pathological stream of new processes opening the file anew. */
#define RV_MAX_ROUNDS 16

/*
 * What other revoke calls hold only for their call (lock.c): their O_PATH
 * lookups of a target, and descriptors in flight to the helper, are no
 * holders' and are neither cut nor counted, so that concurrent revokes of
 * one file never fail each other. Such a process that holds a target in any
 * other way is not stopped (it may be stopping others: two that stop each
 * other never run again): the call is refused, naming it. Looks at the
 * holders from FROM on.
 */
void rv_drop_revoke_calls(struct rv_run *run, size_t from)
{
	struct rv_scan_opts so;

	if (from >= run->holders.n || rv_calls_of(run->requester, &run->calls) < 0 || !run->calls.n)
		return;
	rv_run_scan_opts(run, RV_PH_SCAN, &so);
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

			if (rv_ref_maybe_lookup(ref))
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
		rv_run_fail(run, RV_PH_STOP, h->pub.pid, detail);
	} else
		rv_run_fail(run, RV_PH_STOP, h->pub.pid, h->pub.reason);
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

/* Nothing of H is to be cut: a narrower target (one description, a
 * recheck) left it only references it cannot decide about, which are left
 * alone. (One with an unreachable reference is stopped as ever: what a
 * rescan finds in it counts.) */
static bool nothing_to_cut(const struct rv_holder *h)
{
	for (size_t i = 0; i < h->pub.nrefs; i++)
		if (h->pub.refs[i].state != REVOKE_STATE_UNKNOWN)
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
		    nothing_to_cut(h))
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
			    only_kept(run, h) || nothing_to_cut(h))
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
	/* New holders outside the selection, or that are other revoke calls
	 * holding nothing of ours, or refused without a stop: none is one to
	 * stop next round. */
	/* From 0: the caller's own refs came back with the scan (it is always
	 * "stopped"), and it may be outside the selection. */
	rv_select_filter(&run->select, &run->holders, 0);
	rv_narrow_refs(run, RV_PH_STOP);
	rv_drop_revoke_calls(run, n);
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
			rv_run_fail(run, RV_PH_STOP, h->pub.pid, h->pub.reason);
			refused++;
		}
		if (!waiting)
			return refused;
		usleep(2000);
	}
}

int rv_freeze(struct rv_run *run, size_t *ret_failed)
{
	struct rv_scan_opts so;
	size_t failed = 0;
	int r;

	rv_run_phase(run, RV_PH_STOP, 0);
	failed = wait_vfork_parents(run);
	if (failed && !(run->req.flags & REVOKE_BEST_EFFORT)) {
		*ret_failed = failed;
		return 0;
	}

	for (int round = 0; round < RV_MAX_ROUNDS; round++) {
		struct rv_holders fresh = {};
		size_t added = 0;

		rv_run_phase(run, RV_PH_STOP, 0);
		failed += stop_all(run);
		if (failed && !(run->req.flags & REVOKE_BEST_EFFORT))
			break; /* the call is refused: no need to look further */
		rv_run_step(run, REVOKE_STEP_RESCAN);
		rv_run_scan_opts(run, RV_PH_CUT, &so);
		so.flags |= RV_SCAN_NO_PIDFD;
		r = rv_scan(run->targets, run->ntargets, &so, &fresh);
		if (r >= 0)
			r = merge_scan(run, &fresh, &added);
		rv_holders_free(&fresh);
		if (r == -ETIMEDOUT)
			rv_run_fail(run, RV_PH_STOP, 0, "looking at the stopped holders again");
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

void rv_note_stopped(struct rv_run *run, struct rv_holder *h)
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
		rv_note_stopped(run, h);
		if (ts)
			ts[k++] = h->tracee;
		else
			(void)rv_tracee_release(h->tracee);
		h->tracee = NULL;
	}
	rv_tracees_release(ts, k);
}

void rv_release_all(struct rv_run *run)
{
	_cleanup_free_ struct rv_holder **hs = calloc(run->holders.n + 1, sizeof(*hs));

	for (size_t i = 0; i < run->holders.n; i++)
		if (run->holders.v[i].tracee) {
			rv_run_step(run, REVOKE_STEP_RELEASE);
			break;
		}

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
