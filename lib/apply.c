/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The userspace engine's change to the holders: terminals grabbed for their
 * hangup, epoll waiters to wake, the dead directory, one program per holder
 * through the point of no return (run.c), the release, what /proc shows of a
 * cut that outlived its wait, and the unmount while the holders are still
 * stopped.
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
#include "cut/wake.h"
#include "run.h"
#include "kinds/refkind.h"

static int commit_hook(void *arg, uint64_t *ret_finish)
{
	return rv_run_commit(arg, ret_finish);
}

/* FD if it is a terminal's; else closed, -ENOTTY. */
int rv_keep_if_tty(int fd)
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

			if (!rv_refkind_of(ref)->in_table || ref->target != target ||
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
			return rv_keep_if_tty(fd);
		}
	}
	return -ENOENT;
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

struct collect {
	struct rv_run *run;
	struct rv_holder **hs;
	struct rv_wake **wakes;
};

static void collect_one(size_t k, void *arg)
{
	const struct collect *c = arg;

	(void)rv_wake_collect(c->hs[k], c->run->targets, c->run->ntargets, &c->wakes[k]);
	c->hs[k]->wake = c->wakes[k];
}

/* The epoll waiters of HS[0..N): their registers are read by the thread
 * that owns each holder. */
static void collect_wakes(struct rv_run *run, struct rv_holder **hs, size_t n,
			  struct rv_wake **wakes)
{
	_cleanup_free_ struct rv_tracee **ts = calloc(n ? n : 1, sizeof(*ts));
	struct collect c = {.run = run, .hs = hs, .wakes = wakes};

	if (!ts)
		return; /* nobody's waits completed: they see EINTR or time out */
	for (size_t k = 0; k < n; k++)
		ts[k] = hs[k]->tracee;
	rv_tracees_each(ts, n, collect_one, &c);
}

/* Cut every stopped holder (and the caller); returns how many failed, or
 * -EBUSY when all or nothing refused before anything ran. */
static int cut_all(struct rv_run *run, size_t *ret_failed)
{
	int ttys[run->ntargets];
	/* A hangup reaches every open of the terminal: only when every one is
	 * cut, not for one description, a recheck or a selection of holders. */
	bool hangup = run->req.keep_fd < 0 && !rv_request_selects(&run->req) &&
		      !(run->req.flags & (REVOKE_NO_HANGUP | REVOKE_DESCRIPTION | REVOKE_RECHECK));
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
	rv_run_phase(run, RV_PH_CUT, 0);
	/* Threads waiting in epoll_wait on sets where a descriptor to be cut is
	 * registered: learnt now, while the registrations still exist, and
	 * woken as each holder's cut is over. */
	wakes = calloc(n ? n : 1, sizeof(*wakes));
	if (wakes)
		collect_wakes(run, hs, n, wakes);
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
			rv_note_stopped(run, hs[k]);
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
				rv_run_fail(run, RV_PH_CUT, hs[k]->pub.pid, hs[k]->pub.reason);
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

/* After the cut: unmount, deepest first. On failure, the report says which
 * mount and the first process found still holding it. */
int rv_unmount_all(struct rv_run *run, int cut, bool native)
{
	struct rv_holders still = {};
	struct rv_scan_opts so;
	char detail[128] = "";
	int r;

	rv_run_phase(run, RV_PH_UMOUNT, 0);
	/* Our own descriptors of the mount points would keep them busy. */
	for (size_t t = 0; t < run->ntargets; t++)
		run->targets[t].path_fd = safe_close(run->targets[t].path_fd);
	r = rv_mounts_umount(run->targets, run->ntargets, native, &run->nunmounted, detail);
	if (r == 0)
		return cut;
	rv_run_scan_opts(run, RV_PH_UMOUNT, &so);
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
			rv_run_fail(run, RV_PH_UMOUNT, h->pub.pid, d);
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
			rv_holder_mark(n, REVOKE_STATE_FOUND, REVOKE_STATE_FAILED, EBUSY);
			snprintf(n->pub.reason, sizeof(n->pub.reason),
				 "reached the mount while the holders were being cut");
		}
	}
	rv_run_fail(run, RV_PH_UMOUNT, 0, detail);
	rv_holders_free(&still);
	return r;
}

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
			    rv_refkind_of(ref)->dir != RV_DIR_NONE)
				return rv_dead_dir_make(run->targets, run->ntargets,
							&run->dead_dir);
		}
	}
	return 0;
}

static int refuse(struct rv_run *run)
{
	rv_release_all(run);
	for (size_t i = 0; i < run->holders.n; i++) {
		struct rv_holder *h = &run->holders.v[i];

		rv_holder_mark(h, REVOKE_STATE_FOUND,
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
	unreachable = rv_classify_all(run, false) + rv_run_refused(run);
	uninspected = rv_run_uninspected(run);
	/* Nothing stopped yet: refusing now touches nobody. */
	if ((unreachable || uninspected) && !best_effort)
		return refuse(run);

	r = rv_freeze(run, &not_stopped);
	if (r < 0) {
		rv_release_all(run);
		rv_run_mark_all(run, REVOKE_STATE_FOUND, REVOKE_STATE_SKIPPED, 0);
		return r;
	}
	/* The rescans replaced refs of stopped holders: classify them again. */
	unreachable = rv_classify_all(run, false) + rv_run_refused(run);
	uninspected = rv_run_uninspected(run);
	if ((unreachable || not_stopped || uninspected) && !best_effort)
		return refuse(run);

	for (size_t i = 0; i < run->holders.n; i++) {
		struct rv_holder *h = &run->holders.v[i];

		if (h->pub.error)
			rv_holder_mark(h, REVOKE_STATE_FOUND, REVOKE_STATE_FAILED, h->pub.error);
	}
	r = make_dead_dir(run);
	if (r < 0) {
		rv_release_all(run);
		rv_run_mark_all(run, REVOKE_STATE_FOUND, REVOKE_STATE_SKIPPED, 0);
		return r;
	}
	r = cut_all(run, &not_cut);
	if (r == -EBUSY)
		return refuse(run);
	if (r == -ETIMEDOUT || r == -ECANCELED) {
		/* Refused at the point of no return: nothing was changed. */
		rv_release_all(run);
		rv_dead_dir_remove(&run->dead_dir);
		rv_run_mark_all(run, REVOKE_STATE_FOUND, REVOKE_STATE_SKIPPED, 0);
		return r;
	}
	/* An unmount goes while the holders are still stopped: released, one
	 * that loops would walk back into the mount by its path (a cwd is
	 * inherited by every child it forks) before the unmount. */
	if (r >= 0 && umount && unmount_ok(run, unreachable || not_stopped || not_cut)) {
		r = rv_unmount_all(run, unreachable || not_stopped || not_cut ? -EBUSY : 0, false);
		umount = false;
	}
	rv_run_phase(run, RV_PH_RELEASE, 0);
	rv_release_all(run);
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
		r = rv_unmount_all(run, r, false);
	return r;
}

int rv_run_ptrace(struct rv_run *run)
{
	int r;

	/* Tracer threads from the first stop to the last release. */
	rv_tracers_begin(run->holders.n);
	r = run_ptrace(run);
	rv_release_all(run);
	rv_tracers_end();
	return r;
}
