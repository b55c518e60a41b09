/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One bounded call. The plan runs in a thread of its own (run_thread): the
 * caller waits for it until the end of the budget and no longer, unless it
 * passed the point of no return, so a path lookup stuck on a hung FUSE
 * server cannot hold the caller; and the thread, being the holders' tracer,
 * detaches whatever is left when it exits (a holder still inside a program
 * past the deadline finishes it and goes home by itself). Which way a call
 * goes, the engine or the helper revoked(8), is decided here too.
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
#include "kinds/target.h"
#include "run.h"

static void run_free(struct rv_run *run)
{
	if (!run)
		return;
	rv_release_all(run);
	rv_bpf_free(run->bpf);
	free(run->ignore_fds);
	rv_holders_free(&run->holders);
	rv_holders_free(&run->others);
	rv_dead_dir_remove(&run->dead_dir);
	rv_targets_free(run->targets, run->ntargets);
	safe_close(run->req.ns_root_fd);
	safe_close(run->req.ns_cwd_fd);
	rv_report_destroy(run->report);
	safe_close(run->lock_fd);
	safe_close(run->calls_fd);
	free(run->calls.pids);
	rv_select_done(&run->select);
	rv_recheck_done(&run->recheck);
	free(run->req_pids);
	free(run->req_uids);
	free(run->req_cgroup);
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
	int r = rv_plan(run), rr;
	bool gone;

	/* Everything stopped is released before the caller hears of it. */
	rv_release_all(run);
	if (!run->targets && r == -ETIMEDOUT && run->want_report)
		/* A lookup that did not come back: the report says which phase,
		 * and names the paths as given. */
		(void)timeout_targets(run);
	if (run->targets && run->want_report) {
		rr = rv_plan_report(run, r, &rep);
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
	struct revoke_report *rep = rv_report_new(0, 0);

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
	/* The selection's arrays are the caller's: the worker may outlive
	 * the call (it is left to finish when the caller stops waiting). */
	if (req->npids && !(run->req.pids = run->req_pids = malloc(req->npids * sizeof(pid_t))))
		goto nomem;
	if (req->nuids && !(run->req.uids = run->req_uids = malloc(req->nuids * sizeof(uid_t))))
		goto nomem;
	if (req->cgroup && !(run->req.cgroup = run->req_cgroup = strdup(req->cgroup)))
		goto nomem;
	if (req->npids)
		memcpy(run->req_pids, req->pids, req->npids * sizeof(pid_t));
	if (req->nuids)
		memcpy(run->req_uids, req->uids, req->nuids * sizeof(uid_t));
	run->want_report = ret_report != NULL;
	run->lock_fd = -1;
	run->dead_dir.fd = -1;
	run->requester = req->for_client ? req->client_uid : geteuid();
	/* Before any descriptor of a target exists; frevoke's descriptor
	 * exists already, and must mean what it means now (rv_plan()): after it
	 * is resolved. */
	run->calls_fd = req->fd < 0 ? rv_calls_register() : -1;
	run->req.ns_root_fd = run->req.ns_cwd_fd = -1;
	run->budget = (struct rv_budget){.start_ns = rv_now_ns(),
					 .timeout_ns = (uint64_t)req->timeout_ms * 1000000u};
	run->req.deadline_ns = rv_budget_deadline(&run->budget, RV_PH_RESOLVE);
	run->step = REVOKE_STEP_START;
	run->step_since = run->budget.start_ns;
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
nomem:
	free(run->req_pids);
	free(run->req_uids);
	free(run->req_cgroup);
	free(run);
	return -ENOMEM;
}

/* ---- engine or helper --------------------------------------------------- */

int rv_helper_or_engine(const struct rv_request *req, struct revoke_report **ret_report)
{
	struct revoke_report *rep = NULL;
	uint64_t start = rv_now_ns();
	struct rv_request rest;
	int r, rh;

	if (req->flags & REVOKE_HELPER)
		return rv_helper_run(req, ret_report);
	if ((req->flags & (REVOKE_NO_HELPER | REVOKE_MOUNT)) || !rv_helper_present())
		return rv_engine_run(req, ret_report);
	/* Best effort cuts what it can at once: someone who cannot see
	 * everyone goes straight to the helper, which can. */
	if ((req->flags & REVOKE_BEST_EFFORT) && !rv_has_cap(CAP_SYS_PTRACE)) {
		rh = rv_helper_run(req, ret_report);
		return rv_helper_unanswered(rh) ? rv_engine_run(req, ret_report) : rh;
	}
	/* Otherwise the caller's own engine first: it refuses before changing
	 * anything when some process could not be inspected, which only the
	 * helper can. */
	r = rv_engine_run(req, &rep);
	if (r != -EBUSY || !rep || !rep->nuninspected || rep->failed_phase != REVOKE_PHASE_NONE) {
		if (ret_report)
			*ret_report = rep;
		else
			rv_report_destroy(rep);
		return r;
	}
	rest = *req;
	rest.timeout_ms -= (int)((rv_now_ns() - start) / 1000000u);
	if (rest.timeout_ms <= 0) {
		/* No time left to ask it: the call timed out, with the
		 * engine's report. */
		r = -ETIMEDOUT;
	} else {
		struct revoke_report *hrep = NULL;

		rh = rv_helper_run(&rest, &hrep);
		if (rh == -E2BIG || rh == -EAGAIN) {
			/* More files than one request carries, or a helper that
			 * kept refusing (too many requests): the engine's own
			 * report (who could not be inspected) stands. */
			r = rh;
		} else if (!rv_helper_unanswered(rh)) {
			rv_report_destroy(rep);
			rep = hrep;
			r = rh;
		} else
			rv_report_destroy(hrep);
	}
	if (ret_report)
		*ret_report = rep;
	else
		rv_report_destroy(rep);
	return r;
}
