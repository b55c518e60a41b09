/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The plan of one call, in the worker thread: lock -> resolve -> permission
 * -> scan -> (freeze -> classify -> cut | native) -> after -> report.
 *
 * All or nothing: until the point of no return nothing has been changed, so
 * any holder that cannot be stopped, any reference this engine cannot reach,
 * any process that may hold a target but cannot be looked at, and any holder
 * whose program cannot be placed make the call fail with EBUSY and release
 * everyone untouched (unless REVOKE_BEST_EFFORT asked to cut the rest).
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
#include "kinds/target.h"
#include "run.h"
#include "kinds/refkind.h"

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

struct pid_pair {
	pid_t pid, nspid;
};

static int cmp_pair(const void *a, const void *b)
{
	const struct pid_pair *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Each holder's pid in its own namespace, in the report's (pid) order, from
 * PAIRS (what the scan saw, in any order): or else (a holder no scan
 * described) from its status now; 0 for one gone meanwhile. */
static void fill_nspids(struct pid_pair *pairs, struct revoke_report *rep)
{
	if (rep->nholders > 1)
		qsort(pairs, rep->nholders, sizeof(*pairs), cmp_pair);
	for (size_t i = 0; i < rep->nholders; i++) {
		struct rv_proc_status st;

		rep->holder_nspids[i] = pairs[i].nspid;
		if (!pairs[i].nspid && rep->holders[i].pid > 0 &&
		    rv_proc_status_of(rep->holders[i].pid, &st) == 0)
			rep->holder_nspids[i] = st.nspid_inner;
	}
}

int rv_plan_report(struct rv_run *run, int error, struct revoke_report **ret)
{
	_cleanup_free_ struct pid_pair *pairs = NULL;
	struct revoke_report *rep;
	size_t n = 0;

	rv_run_step(run, REVOKE_STEP_REPORT);
	if (run->others.n && rv_holders_merge(&run->holders, &run->others) < 0)
		return -ENOMEM;
	pairs = calloc(run->holders.n + 1, sizeof(*pairs));
	if (!pairs)
		return -ENOMEM;
	rep = rv_report_new(run->ntargets, run->holders.n);
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
		pairs[n] = (struct pid_pair){h->pub.pid, h->nspid};
		rep->holders[n++] = h->pub;
		h->pub.refs = NULL;
		h->pub.nrefs = 0;
	}
	rep->nholders = n;
	/* Holders found by a rescan were appended. */
	if (n > 1)
		qsort(rep->holders, n, sizeof(*rep->holders), cmp_holder_pid);
	fill_nspids(pairs, rep);
	rep->engine = run->engine;
	rep->discovery = run->discovery;
	rep->error = error < 0 ? -error : 0;
	rv_run_step(run, -1);
	rep->elapsed_ns = run->step_since - run->budget.start_ns;
	memcpy(rep->step_ns, run->step_ns, sizeof(run->step_ns));
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
	/* revoke(2) revokes from everyone: a selection is the userspace
	 * engine's, and so is a recheck of the holders' credentials; one
	 * description, everywhere, is revokeat(AT_REVOKE_FILE_ONLY)'s
	 * (decided here, before anything is touched). */
	if (rv_request_selects(req) || (req->flags & REVOKE_RECHECK))
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

	rv_run_phase(run, RV_PH_LOCK, 0);
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
		rv_run_fail(run, RV_PH_LOCK, owner, detail);
		return -ETIMEDOUT;
	}
	return 0;
}

/* Whether a holder has what revoke(2) does not reach: its cwd or root on a
 * target (not a mount: revoke(2) revokes open files, and these are none), or
 * a device target through another node of it (an alias). */
static bool needs_userspace(const struct rv_run *run)
{
	for (size_t i = 0; i < run->holders.n; i++) {
		if (run->holders.v[i].alias)
			return true;
		for (size_t j = 0; j < run->holders.v[i].pub.nrefs; j++) {
			const struct revoke_ref *ref = &run->holders.v[i].pub.refs[j];

			if (rv_refkind_of(ref)->dir != RV_DIR_NONE)
				return true;
		}
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
			if (r < 0) {
				rv_run_fail(
				    run, RV_PH_LOCK, 0,
				    "the descriptor sent for it was revoked by another revoke");
				return r;
			}
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

	rv_run_phase(run, RV_PH_SCAN, 0);
	rv_run_scan_opts(run, RV_PH_SCAN, &so);
	/* The ptrace engine reads every stopped holder again before cutting:
	 * the first scan only needs to say who holds what. */
	if (ptrace_cut && !(run->req.flags & REVOKE_RECHECK))
		so.flags |= RV_SCAN_NO_FDINFO; /* a recheck needs each descriptor's mode */
	/* A plain listing reads nothing of the holders after the scan: a pidfd
	 * each (two syscalls, a tenth of a BPF listing) would guard nothing.
	 * A selection, a description or a recheck reads /proc by pid. */
	if ((run->req.flags & REVOKE_LIST_ONLY) && !rv_request_selects(&run->req) &&
	    !(run->req.flags & (REVOKE_DESCRIPTION | REVOKE_RECHECK)))
		so.flags |= RV_SCAN_NO_PIDFD;
	r = rv_scan(run->targets, run->ntargets, &so, &run->holders);
	if (r == -ETIMEDOUT)
		rv_run_fail(run, RV_PH_SCAN, 0, "");
	if (r < 0)
		return r;
	run->discovery = r;
	rv_select_filter(&run->select, &run->holders, 0);
	rv_narrow_refs(run, RV_PH_SCAN);
	rv_drop_revoke_calls(run, 0);
	return rv_run_abandoned(run) ? -ECANCELED : 0;
}

/* The targets, the selection: every lookup error, before anything else. */
static int resolve(struct rv_run *run)
{
	const struct rv_request *req = &run->req;
	const struct rv_guard guard = {&run->mu, &run->gone};
	int r;

	rv_run_phase(run, RV_PH_RESOLVE, 0);
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
		rv_run_fail(run, RV_PH_RESOLVE, 0, "");
	if (r < 0)
		return r;
	if (run->calls_fd < 0 && req->fd >= 0)
		run->calls_fd = rv_calls_register();
	/* After the lookup errors, before anything else: the selection's own
	 * (no such cgroup, not a cgroup2 directory). */
	r = rv_select_init(req, &run->select);
	if (r < 0) {
		char detail[128];

		snprintf(detail, sizeof(detail), "--cgroup %.64s: %s",
			 req->cgroup ? req->cgroup : "",
			 r == -ENOENT	 ? "no such cgroup"
			 : r == -EINVAL	 ? "not a directory of a cgroup2 file system"
			 : r == -ENOTDIR ? "not a directory"
					 : strerror(-r));
		if (req->cgroup)
			rv_run_fail(run, RV_PH_RESOLVE, 0, detail);
		return r;
	}
	if (req->flags & REVOKE_RECHECK) {
		_cleanup_free_ int *fds = calloc(run->ntargets + 1, sizeof(int));

		if (!fds)
			return -ENOMEM;
		for (size_t t = 0; t < run->ntargets; t++)
			fds[t] = run->targets[t].path_fd >= 0 ? run->targets[t].path_fd : req->fd;
		return rv_recheck_init(&run->recheck, fds, run->ntargets);
	}
	return 0;
}

/* Which engine, and whether the caller may: *RET_NATIVE. */
static int choose_engine(struct rv_run *run, bool list, bool *ret_native)
{
	const struct rv_request *req = &run->req;
	bool native;
	int r;

	if (req->flags & REVOKE_MOUNT)
		native = (req->flags & REVOKE_UMOUNT) && !list &&
			 !(req->flags & REVOKE_ENGINE_USERSPACE) && rv_native_umount_available() &&
			 !any_foreign(run);
	else
		native = native_wanted(req) && rv_native_available();
	if ((req->flags & REVOKE_ENGINE_NATIVE) && !native)
		/* after the lookup errors, as the syscall would */
		return rv_request_selects(req) || (req->flags & REVOKE_RECHECK) ? -EOPNOTSUPP
										: -ENOSYS;
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
	*ret_native = native;
	return 0;
}

/* The lock, the targets' own descriptors left out of the scan, and an
 * unmount's sync, before the scan. */
static int prepare(struct rv_run *run, bool list, bool native)
{
	const struct rv_request *req = &run->req;
	int r;

	/* The native engine takes the lock too: of two revokes of one file at
	 * once, the second must scan after the first revoked (a revoked
	 * descriptor is gone from /proc), or both report every holder cut. */
	if (!list && run->lock_fd < 0) {
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
		rv_run_phase(run, RV_PH_SYNC, 0);
		r = rv_mounts_sync(run->targets, run->ntargets,
				   rv_budget_deadline(&run->budget, RV_PH_SYNC));
		if (r < 0) {
			rv_run_fail(run, RV_PH_SYNC, 0, "");
			return r;
		}
	}
	return 0;
}

/* What a listing answers: 0, or -EBUSY when it is no proof. */
static int listed(struct rv_run *run)
{
	const struct rv_request *req = &run->req;
	bool uninspected = rv_run_uninspected(run) && !(req->flags & REVOKE_BEST_EFFORT);

	/* A dry run of an unmount: would it go ahead? Everything must be
	 * cuttable and nothing else may hold it. */
	if (req->flags & REVOKE_UMOUNT)
		return rv_classify_all(run, false) || uninspected ? -EBUSY : 0;
	/* A listing that could not look everywhere is no proof that nobody
	 * holds the file. */
	return uninspected ? -EBUSY : 0;
}

/* The whole call, in the worker thread. Returns 0 or -errno; sets
 * run->report when the targets were resolved. */
int rv_plan(struct rv_run *run)
{
	const struct rv_request *req = &run->req;
	bool list = req->flags & REVOKE_LIST_ONLY, native = false;
	int r;

	/* Two unmounts of one mount: the one that resolves its mount point
	 * while the other cuts and unmounts would hold it (an O_PATH descriptor
	 * of its root, or one in flight from the lookup), and make it fail.
	 * Mount points are resolved under the lock: the second finds no mount. */
	if ((req->flags & REVOKE_MOUNT) && !list) {
		r = take_lock(run);
		if (r < 0)
			return r;
	}
	r = resolve(run);
	if (r < 0)
		return r;
	r = choose_engine(run, list, &native);
	if (r < 0)
		return r;
	r = prepare(run, list, native);
	if (r < 0)
		return r;

	r = scan_holders(run, !native && !list);
	if (r < 0)
		return r;
	if (native && !(req->flags & (REVOKE_ENGINE_NATIVE | REVOKE_MOUNT)) &&
	    needs_userspace(run)) {
		/* Only the userspace engine moves a cwd or root (to the dead
		 * directory) and cuts a device's other nodes. Nothing was
		 * changed yet: it takes the call over, under the lock taken
		 * above, with a scan of its own. */
		native = false;
		r = run->lock_fd < 0 ? lock_and_reopen(run) : 0;
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
	if (list)
		return listed(run);
	if (native && (req->flags & REVOKE_MOUNT))
		return rv_run_native_umount(run);
	if (native)
		return rv_run_native(run);
	return rv_run_ptrace(run);
}
