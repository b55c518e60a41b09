/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One call's shared state (struct rv_run, run.h) and the protocol between
 * its worker and its caller: the phase it is in, whether the caller stopped
 * waiting, the point of no return, where it failed; and the small helpers
 * every step of the plan uses on it.
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
#include "run.h"

/* The step a phase starts with (the rescan and the cut's second half are
 * marked where they begin, inside their phases). */
static int phase_step(int phase)
{
	switch (phase) {
	case RV_PH_RESOLVE:
		return REVOKE_STEP_RESOLVE;
	case RV_PH_LOCK:
		return REVOKE_STEP_LOCK;
	case RV_PH_SCAN:
		return REVOKE_STEP_SCAN;
	case RV_PH_STOP:
		return REVOKE_STEP_STOP;
	case RV_PH_CUT:
		return REVOKE_STEP_PLACE;
	case RV_PH_RELEASE:
		return REVOKE_STEP_RELEASE;
	case RV_PH_SYNC:
		return REVOKE_STEP_SYNC;
	case RV_PH_UMOUNT:
		return REVOKE_STEP_UMOUNT;
	}
	return -1;
}

void rv_run_step(struct rv_run *run, int step)
{
	uint64_t now = rv_now_ns();

	if (run->step >= 0 && run->step < REVOKE_STEP_COUNT)
		run->step_ns[run->step] += now - run->step_since;
	run->step = step;
	run->step_since = now;
}

void rv_run_phase(struct rv_run *run, int phase, pid_t pid)
{
	int step = phase_step(phase);

	if (step >= 0 && step != run->step)
		rv_run_step(run, step);
	pthread_mutex_lock(&run->mu);
	run->phase = phase;
	run->busy = pid;
	pthread_mutex_unlock(&run->mu);
}

bool rv_run_abandoned(struct rv_run *run)
{
	bool gone;

	pthread_mutex_lock(&run->mu);
	gone = run->gone;
	pthread_mutex_unlock(&run->mu);
	return gone;
}

void rv_run_fail(struct rv_run *run, int phase, pid_t pid, const char *detail)
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
int rv_run_commit(struct rv_run *run, uint64_t *ret_finish)
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
		rv_run_fail(run, RV_PH_CUT, 0, "too little time left to cut: nothing was changed");
	if (r < 0)
		return r;
	rv_run_step(run, REVOKE_STEP_CUT);
	if (ret_finish)
		*ret_finish = now + RV_FINISH_NS;
	return 0;
}

size_t rv_run_uninspected(const struct rv_run *run)
{
	size_t n = 0;

	for (size_t i = 0; i < run->holders.n; i++)
		n += run->holders.v[i].uninspected;
	return n;
}

/* Mark every ref of H in state FROM with STATE (and ERROR). */
void rv_holder_mark(struct rv_holder *h, int from, int state, int error)
{
	for (size_t i = 0; i < h->pub.nrefs; i++)
		if (h->pub.refs[i].state == from) {
			h->pub.refs[i].state = state;
			h->pub.refs[i].error = error;
		}
}

void rv_run_mark_all(struct rv_run *run, int from, int state, int error)
{
	for (size_t i = 0; i < run->holders.n; i++)
		rv_holder_mark(&run->holders.v[i], from, state, error);
}

void rv_run_scan_opts(struct rv_run *run, int phase, struct rv_scan_opts *o)
{
	*o = (struct rv_scan_opts){
	    .proc_root = rv_proc_root,
	    .deadline_ns = rv_budget_deadline(&run->budget, phase),
	    .flags = run->req.flags & (REVOKE_DISCOVERY_PROC | REVOKE_DISCOVERY_BPF),
	    .ignore_fds = run->ignore_fds,
	    .nignore_fds = run->ntargets,
	    .bpf = &run->bpf,
	};
}

/* Holders refused before anyone was stopped (drop_revoke_calls). */
size_t rv_run_refused(const struct rv_run *run)
{
	size_t n = 0;

	for (size_t i = 0; i < run->holders.n; i++) {
		const struct rv_holder *h = &run->holders.v[i];

		n += h->pub.error && h->pub.nrefs && !h->tracee && !h->uninspected;
	}
	return n;
}
