/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The engine: resolve the targets, check permission, find the holders, stop
 * every one of them, rescan until nothing new appears, cut, release.
 *
 * All or nothing: until the cut starts nothing has been changed, so any
 * holder that cannot be stopped or any reference this engine cannot reach
 * makes the call fail with EBUSY and release everyone untouched (unless
 * REVOKE_BEST_EFFORT asked to cut the rest).
 */
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/kcmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <termios.h>

#include "internal.h"

/* A stable set of holders should appear within a couple of rounds; this only
 * bounds a pathological stream of new processes opening the file anew. */
#define RV_MAX_ROUNDS 16

struct rv_run {
	const struct rv_request *req;
	struct rv_target *targets;
	size_t ntargets;
	int *ignore_fds;
	struct rv_holders holders;
	uint64_t start_ns, deadline_ns;
	uint64_t max_stopped_ns;
	int discovery;
	int engine;
	struct rv_bpf *bpf; /* the BPF scanner, loaded once for every scan */
};

static void targets_free(struct rv_target *t, size_t n)
{
	if (!t)
		return;
	for (size_t i = 0; i < n; i++) {
		safe_close(t[i].path_fd);
		free(t[i].path);
	}
	free(t);
}

static int target_from_fd(int fd, const char *path, struct rv_target *ret)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return negative_errno();
	/* eventfd, epoll, timerfd, signalfd... all share one anonymous inode:
	 * "every file on this inode" would be every such file in the system. */
	if ((st.st_mode & S_IFMT) == 0)
		return -EINVAL;
	ret->dev = st.st_dev;
	ret->ino = st.st_ino;
	ret->mode = st.st_mode;
	ret->uid = st.st_uid;
	ret->rdev = st.st_rdev;
	ret->path = strdup(path);
	if (!ret->path)
		return -ENOMEM;
	return 0;
}

/* The path is resolved once, by the kernel, into an O_PATH descriptor: lookup
 * errors (EFAULT for a bad pointer too) come from open(2) itself, and every
 * later step works on that descriptor, so a rename cannot swap the target. */
static int resolve_targets(const struct rv_request *req, struct rv_target **ret, size_t *ret_n)
{
	struct rv_target *t;
	size_t n = req->paths ? req->npaths : 1;
	int r;

	t = calloc(n, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		t[i].path_fd = -1;

	if (!req->paths) {
		char link[64], buf[4096];
		ssize_t len;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", req->fd);
		len = readlink(link, buf, sizeof(buf) - 1);
		if (len < 0)
			len = snprintf(buf, sizeof(buf), "fd %d", req->fd);
		buf[len] = 0;
		r = target_from_fd(req->fd, buf, &t[0]);
		if (r < 0)
			goto fail;
	} else {
		for (size_t i = 0; i < n; i++) {
			int flags = O_PATH | O_CLOEXEC;

			if (req->flags & REVOKE_NOFOLLOW)
				flags |= O_NOFOLLOW;
			t[i].path_fd = open(req->paths[i], flags);
			if (t[i].path_fd < 0) {
				r = negative_errno();
				goto fail;
			}
			/* The kernel read the string, so it is safe to read here. */
			r = target_from_fd(t[i].path_fd, req->paths[i], &t[i]);
			if (r < 0)
				goto fail;
		}
	}
	*ret = t;
	*ret_n = n;
	return 0;
fail:
	targets_free(t, n);
	return r;
}

static bool has_cap_fowner(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};

	if (syscall(SYS_capget, &hdr, data) < 0)
		return false;
	return data[CAP_TO_INDEX(CAP_FOWNER)].effective & CAP_TO_MASK(CAP_FOWNER);
}

/* The 2006 contract: the caller's fsuid owns the inode, or CAP_FOWNER. */
static int check_permission(const struct rv_target *t, size_t n)
{
	uid_t fsuid = (uid_t)setfsuid((uid_t)-1); /* -1 is never valid: only reads it */
	bool fowner = has_cap_fowner();

	for (size_t i = 0; i < n; i++)
		if (t[i].uid != fsuid && !fowner)
			return -EPERM;
	return 0;
}

static bool ref_reachable(const struct revoke_ref *ref)
{
	return ref->type == REVOKE_REF_FD || ref->type == REVOKE_REF_MAP;
}

static bool shares_kept_description(const struct rv_run *run, const struct rv_holder *h,
				    const struct revoke_ref *ref)
{
	if (run->req->keep_fd < 0 || ref->type != REVOKE_REF_FD)
		return false;
	return syscall(SYS_kcmp, getpid(), h->pub.pid, KCMP_FILE, run->req->keep_fd, ref->fd) == 0;
}

/* Decide, for freshly scanned refs, which are kept and which this engine
 * cannot reach. Returns the number of unreachable refs. */
static size_t classify_holder(const struct rv_run *run, struct rv_holder *h)
{
	size_t unreachable = 0;

	for (size_t i = 0; i < h->pub.nrefs; i++) {
		struct revoke_ref *ref = &h->pub.refs[i];

		if (ref->state != REVOKE_STATE_FOUND)
			continue;
		if (shares_kept_description(run, h, ref))
			ref->state = REVOKE_STATE_KEPT;
		else if (!ref_reachable(ref)) {
			ref->state = REVOKE_STATE_UNREACHABLE;
			ref->error = EOPNOTSUPP;
			unreachable++;
		}
	}
	return unreachable;
}

/* A scan never waits on a process, only on /proc, so its deadline guards
 * against a hung filesystem rather than measuring the caller's patience: on
 * a loaded machine a short --timeout must not turn a rescan of already
 * stopped holders into a failure. */
#define RV_MIN_SCAN_NS (2000ull * 1000000u)

static int scan_opts(struct rv_run *run, struct rv_scan_opts *o)
{
	uint64_t min = rv_now_ns() + RV_MIN_SCAN_NS;

	*o = (struct rv_scan_opts){
	    .proc_root = "/proc",
	    .deadline_ns = run->deadline_ns > min ? run->deadline_ns : min,
	    .flags = run->req->flags & (REVOKE_DISCOVERY_PROC | REVOKE_DISCOVERY_BPF),
	    .ignore_fds = run->ignore_fds,
	    .nignore_fds = run->ntargets,
	    .bpf = &run->bpf,
	};
	return 0;
}

/* Mark every still-open ref of H with STATE (and ERROR). */
static void holder_mark(struct rv_holder *h, int from, int state, int error)
{
	for (size_t i = 0; i < h->pub.nrefs; i++)
		if (h->pub.refs[i].state == from) {
			h->pub.refs[i].state = state;
			h->pub.refs[i].error = error;
		}
}

/* Stop every holder not stopped yet, all at once. Returns the number that failed. */
static size_t stop_all(struct rv_run *run)
{
	/* Waiting for a holder that never stops (D state, vfork parent) must
	 * not eat the time the rescans and the cut still need: stops get the
	 * first three quarters of the budget. */
	uint64_t stop_deadline = run->start_ns + (run->deadline_ns - run->start_ns) / 4 * 3;
	_cleanup_free_ struct rv_stop_req *reqs = calloc(run->holders.n + 1, sizeof(*reqs));
	_cleanup_free_ size_t *idx = calloc(run->holders.n + 1, sizeof(*idx));
	size_t n = 0, failed = 0;
	int r = -ENOMEM;

	for (size_t i = 0; reqs && idx && i < run->holders.n; i++) {
		struct rv_holder *h = &run->holders.v[i];

		if (h->self || h->tracee || h->pub.error)
			continue;
		/* What the scan read moments ago; a change since (a tracer came,
		 * a vfork began) shows at the seize or the wait, as it would
		 * after a fresh read. */
		reqs[n] = (struct rv_stop_req){.pid = h->pub.pid,
					       .pidfd = h->pidfd,
					       .have_status = true,
					       .status = {.tgid = h->pub.pid,
							  .state = h->state,
							  .tracer = h->tracer,
							  .seccomp = h->seccomp}};
		idx[n++] = i;
	}
	if (reqs && idx)
		r = rv_tracees_stop(reqs, n, stop_deadline);
	if (r < 0) {
		/* Nothing was stopped. */
		for (size_t i = 0; i < run->holders.n; i++) {
			struct rv_holder *h = &run->holders.v[i];

			if (h->self || h->tracee || h->pub.error)
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
			failed++;
			continue;
		}
		h->tracee = reqs[k].tracee;
	}
	return failed;
}

/* Take over FRESH's refs (H is stopped: these are the final ones). */
static void holder_take_refs(struct rv_holder *h, struct rv_holder *fresh)
{
	free(h->pub.refs);
	h->pub.refs = TAKE_PTR(fresh->pub.refs);
	h->pub.nrefs = fresh->pub.nrefs;
	h->refs_cap = fresh->refs_cap;
	h->zombie_leader = fresh->zombie_leader;
	fresh->pub.nrefs = 0;
	fresh->refs_cap = 0;
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

	rv_holders_sort(&run->holders);
	rv_holders_sort(fresh);
	for (size_t i = 0; i < n; i++) {
		struct rv_holder *h = &run->holders.v[i];

		while (j < fresh->n && fresh->v[j].pub.pid < h->pub.pid)
			j++;
		if (!h->tracee && !h->self)
			continue; /* not stopped (best effort): keep what it had */
		if (j < fresh->n && fresh->v[j].pub.pid == h->pub.pid)
			holder_take_refs(h, &fresh->v[j]);
		else
			rv_holder_clear(h);
	}
	for (j = 0; j < fresh->n; j++) {
		struct rv_holder key = {.pub.pid = fresh->v[j].pub.pid}, *h;

		if (bsearch(&key, run->holders.v, n, sizeof(key), rv_holder_cmp_pid))
			continue;
		h = rv_holders_add(&run->holders, key.pub.pid);
		if (!h)
			return -ENOMEM;
		/* Move it over; fresh no longer owns the refs or the pidfd. */
		*h = fresh->v[j];
		fresh->v[j].pub.refs = NULL;
		fresh->v[j].pub.nrefs = 0;
		fresh->v[j].pidfd = -1;
		h->tracee = NULL;
		added++;
	}
	*ret_added = added;
	return 0;
}

/*
 * Stop every holder, then look again with one full scan: a holder may have
 * forked, started a thread or dup'd the descriptor between the scan and its
 * stop. Ends when a scan finds no new holder.
 */
static int stop_until_stable(struct rv_run *run, size_t *ret_failed)
{
	struct rv_scan_opts so;
	size_t failed = 0;
	int r;

	for (int round = 0; round < RV_MAX_ROUNDS; round++) {
		struct rv_holders fresh = {};
		size_t added = 0;

		failed += stop_all(run);
		if (failed && !(run->req->flags & REVOKE_BEST_EFFORT))
			break; /* the call is refused: no need to look further */
		scan_opts(run, &so);
		r = rv_scan(run->targets, run->ntargets, &so, &fresh);
		if (r >= 0)
			r = merge_scan(run, &fresh, &added);
		rv_holders_free(&fresh);
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

/* Release HS[0..N) (those still stopped), noting how long each was. */
static void release_holders(struct rv_run *run, struct rv_holder **hs, size_t n)
{
	_cleanup_free_ struct rv_tracee **ts = calloc(n + 1, sizeof(*ts));
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		struct rv_holder *h = hs[i];

		if (!h->tracee)
			continue;
		h->pub.stopped_ns = rv_tracee_stopped_ns(h->tracee);
		if (h->pub.stopped_ns > run->max_stopped_ns)
			run->max_stopped_ns = h->pub.stopped_ns;
		/* Release failures are already best-effort restores; nothing more
		 * can be done for that process here. Overlapped when memory
		 * allows. */
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

/* Holders cut together, then released together before the next group. */
#define RV_CUT_GROUP 128

/* Count the outcome of H's cut (Q); false when it failed. */
static bool cut_outcome(struct rv_holder *h, int q)
{
	if (q == -ESRCH && !h->self) {
		/* Killed (SIGKILL reaches stopped tracees) while being cut: it
		 * holds nothing any more. */
		rv_holder_clear(h);
		return true;
	}
	return q >= 0;
}

static void cut_all(struct rv_run *run, size_t *ret_failed)
{
	int ttys[run->ntargets];
	bool hangup = run->req->keep_fd < 0 && !(run->req->flags & REVOKE_NO_HANGUP);
	bool early = true;
	size_t failed = 0, n = 0, group;

	for (size_t t = 0; t < run->ntargets; t++) {
		ttys[t] = hangup && S_ISCHR(run->targets[t].mode) ? grab_tty(run, t) : -1;
		if (ttys[t] >= 0)
			early = false;
	}

	_cleanup_free_ struct rv_holder **hs = calloc(run->holders.n + 1, sizeof(*hs));
	_cleanup_free_ int *rets = calloc(run->holders.n + 1, sizeof(*rets));

	for (size_t i = 0; i < run->holders.n; i++) {
		struct rv_holder *h = &run->holders.v[i];

		if (!h->self && !h->tracee)
			continue;
		if (hs && rets)
			hs[n++] = h;
		else if (!cut_outcome(h, rv_cut_holder(h, h->self ? NULL : h->tracee)))
			failed++; /* no memory for the batch: one holder at a time */
	}
	/*
	 * Every holder is stopped: from the first cut on the call is
	 * committed, and a holder that has been cut has nothing left to wait
	 * for. Releasing each group once it is cut shortens the pauses (the
	 * first stopped are cut first). Not when a tty is to be hung up: that
	 * happens while every holder is still stopped.
	 */
	group = early ? RV_CUT_GROUP : (n ? n : 1);
	for (size_t off = 0; off < n; off += group) {
		size_t m = n - off < group ? n - off : group;
		/* The group's injected syscalls in flight together. */
		int r = rv_cut_holders(hs + off, m, rets + off);

		for (size_t k = off; k < off + m; k++) {
			int q = r < 0 ? rv_cut_holder(hs[k], hs[k]->self ? NULL : hs[k]->tracee)
				      : rets[k];

			if (!cut_outcome(hs[k], q))
				failed++;
		}
		if (early)
			release_holders(run, hs + off, m);
	}

	/* While every holder is still stopped: a hangup reaches the open files
	 * of the tty that no descriptor table shows (in flight, /dev/tty). It
	 * needs CAP_SYS_ADMIN; without it the cut descriptors are all we do. */
	for (size_t t = 0; t < run->ntargets; t++) {
		if (ttys[t] < 0)
			continue;
		(void)ioctl(ttys[t], TIOCVHANGUP);
		safe_close(ttys[t]);
	}
	*ret_failed = failed;
}

static int summarise(const struct rv_holder *h)
{
	static const int worst_first[] = {REVOKE_STATE_FAILED,	REVOKE_STATE_UNREACHABLE,
					  REVOKE_STATE_SKIPPED, REVOKE_STATE_FOUND,
					  REVOKE_STATE_CUT,	REVOKE_STATE_KEPT};

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

static int build_report(struct rv_run *run, int error, struct revoke_report **ret)
{
	struct revoke_report *rep;
	size_t n = 0;

	rep = calloc(1, sizeof(*rep));
	if (!rep)
		return -ENOMEM;
	rep->targets = calloc(run->ntargets, sizeof(*rep->targets));
	rep->holders = calloc(run->holders.n ? run->holders.n : 1, sizeof(*rep->holders));
	if (!rep->targets || !rep->holders) {
		free(rep->targets);
		free(rep->holders);
		free(rep);
		return -ENOMEM;
	}
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
		if (h->pub.nrefs == 0 && !h->pub.error)
			continue;
		h->pub.state = summarise(h);
		rep->holders[n++] = h->pub;
		h->pub.refs = NULL;
		h->pub.nrefs = 0;
	}
	rep->nholders = n;
	/* Holders found by a rescan were appended. */
	if (n > 1)
		qsort(rep->holders, n, sizeof(*rep->holders), cmp_holder_pid);
	rep->engine = run->engine;
	rep->discovery = run->discovery;
	rep->error = error < 0 ? -error : 0;
	rep->elapsed_ns = rv_now_ns() - run->start_ns;
	rep->max_stopped_ns = run->max_stopped_ns;
	*ret = rep;
	return 0;
}

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

	if (run->req->keep_fd >= 0 || (run->req->flags & REVOKE_NO_HANGUP) || !S_ISCHR(tg->mode) ||
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
 * The path was resolved again after a concurrent revoke of the same file
 * revoked our O_PATH descriptor too: only the same inode will do.
 */
static int target_reopen(const struct rv_request *req, struct rv_target *tg)
{
	int flags = O_PATH | O_CLOEXEC | (req->flags & REVOKE_NOFOLLOW ? O_NOFOLLOW : 0);
	struct stat st;
	int fd;

	fd = open(tg->path, flags);
	if (fd < 0)
		return negative_errno();
	if (fstat(fd, &st) < 0 || st.st_dev != tg->dev || st.st_ino != tg->ino) {
		safe_close(fd);
		return -EBUSY;
	}
	safe_close(tg->path_fd);
	tg->path_fd = fd;
	return 0;
}

/*
 * frevoke() of our own O_PATH descriptor: every file of the inode but that
 * one, without /proc and without opening the file. A revoke of the same file
 * running at the same time revokes that descriptor too (EBADF): resolve the
 * path again, a bounded number of times.
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
	for (int attempt = 0;; attempt++) {
		r = rv_native_frevoke(tg->path_fd);
		if (r != -EBADF || attempt == 3)
			return r == -EBADF ? -EBUSY : r;
		r = target_reopen(run->req, tg);
		if (r < 0)
			return r;
	}
}

static int run_native(struct rv_run *run)
{
	int r = 0;

	run->engine = REVOKE_ENGINE_SYSCALL;
	for (size_t t = 0; t < run->ntargets && r >= 0; t++)
		r = run->req->fd >= 0 ? rv_native_frevoke(run->req->fd)
				      : native_revoke_target(run, t);
	for (size_t i = 0; i < run->holders.n; i++)
		holder_mark(&run->holders.v[i], REVOKE_STATE_FOUND,
			    r < 0 ? REVOKE_STATE_FAILED : REVOKE_STATE_CUT, r < 0 ? -r : 0);
	return r;
}

static int run_ptrace(struct rv_run *run)
{
	bool best_effort = run->req->flags & REVOKE_BEST_EFFORT;
	size_t unreachable = 0, not_stopped = 0, not_cut = 0;
	_cleanup_close_ int lock = -1;
	int r;

	run->engine = REVOKE_ENGINE_PTRACE;
	for (size_t i = 0; i < run->holders.n; i++)
		unreachable += classify_holder(run, &run->holders.v[i]);
	if (unreachable && !best_effort)
		goto refuse;

	/* Held until the end of the call (closed on return). */
	lock = rv_engine_lock(run->start_ns + (run->deadline_ns - run->start_ns) / 2);
	if (lock == -ETIMEDOUT) {
		for (size_t i = 0; i < run->holders.n; i++)
			holder_mark(&run->holders.v[i], REVOKE_STATE_FOUND, REVOKE_STATE_SKIPPED,
				    0);
		return -ETIMEDOUT;
	}

	r = stop_until_stable(run, &not_stopped);
	if (r < 0) {
		release_all(run);
		for (size_t i = 0; i < run->holders.n; i++)
			holder_mark(&run->holders.v[i], REVOKE_STATE_FOUND, REVOKE_STATE_SKIPPED,
				    0);
		return r;
	}
	/* The rescans replaced refs of stopped holders: classify them again. */
	unreachable = 0;
	for (size_t i = 0; i < run->holders.n; i++)
		unreachable += classify_holder(run, &run->holders.v[i]);
	if ((unreachable || not_stopped) && !best_effort)
		goto refuse;

	for (size_t i = 0; i < run->holders.n; i++) {
		struct rv_holder *h = &run->holders.v[i];

		if (h->pub.error)
			holder_mark(h, REVOKE_STATE_FOUND, REVOKE_STATE_FAILED, h->pub.error);
	}
	cut_all(run, &not_cut);
	release_all(run);
	return unreachable || not_stopped || not_cut ? -EBUSY : 0;

refuse:
	release_all(run);
	for (size_t i = 0; i < run->holders.n; i++) {
		struct rv_holder *h = &run->holders.v[i];

		holder_mark(h, REVOKE_STATE_FOUND,
			    h->pub.error ? REVOKE_STATE_FAILED : REVOKE_STATE_SKIPPED,
			    h->pub.error);
	}
	return -EBUSY;
}

static bool native_wanted(const struct rv_request *req)
{
	const char *env = getenv("REVOKE_ENGINE");

	if (req->flags & (REVOKE_LIST_ONLY | REVOKE_ENGINE_USERSPACE))
		return false;
	if (env && strcmp(env, "ptrace") == 0 && !(req->flags & REVOKE_ENGINE_NATIVE))
		return false;
	return true;
}

int rv_engine_run(const struct rv_request *req, struct revoke_report **ret_report)
{
	struct rv_run run = {.req = req};
	struct rv_scan_opts so;
	int r, rr;

	run.start_ns = rv_now_ns();
	run.deadline_ns = run.start_ns + (uint64_t)req->timeout_ms * 1000000u;

	r = resolve_targets(req, &run.targets, &run.ntargets);
	if (r < 0)
		return r;
	r = check_permission(run.targets, run.ntargets);
	if (r < 0)
		goto out;
	run.ignore_fds = calloc(run.ntargets, sizeof(int));
	if (!run.ignore_fds) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t t = 0; t < run.ntargets; t++)
		run.ignore_fds[t] = run.targets[t].path_fd;

	bool native = native_wanted(req) && rv_native_available();
	if ((req->flags & REVOKE_ENGINE_NATIVE) && !native) {
		r = -ENOSYS;
		goto out;
	}

	scan_opts(&run, &so);
	/* The ptrace engine reads every stopped holder again before cutting:
	 * the first scan only needs to say who holds what. */
	if (!native && !(req->flags & REVOKE_LIST_ONLY))
		so.flags |= RV_SCAN_NO_FDINFO;
	r = rv_scan(run.targets, run.ntargets, &so, &run.holders);
	if (r < 0)
		goto report;
	run.discovery = r;
	r = 0;

	if (req->flags & REVOKE_LIST_ONLY)
		goto report;
	if (native) {
		for (size_t i = 0; i < run.holders.n; i++)
			classify_holder(&run, &run.holders.v[i]);
		/* The kernel reaches every open file, in flight ones too. */
		for (size_t i = 0; i < run.holders.n; i++)
			holder_mark(&run.holders.v[i], REVOKE_STATE_UNREACHABLE, REVOKE_STATE_FOUND,
				    0);
		r = run_native(&run);
	} else
		r = run_ptrace(&run);

report:
	if (ret_report) {
		rr = build_report(&run, r, ret_report);
		if (rr < 0 && r == 0)
			r = rr;
	}
out:
	release_all(&run);
	rv_bpf_free(run.bpf);
	free(run.ignore_fds);
	rv_holders_free(&run.holders);
	targets_free(run.targets, run.ntargets);
	return r;
}
