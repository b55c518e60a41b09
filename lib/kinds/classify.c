/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Classifying the references a scan found: kept (frevoke's description, the
 * helper's client's own), unreachable for this engine (and why), or to cut.
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
#include "kinds/description.h"
#include "kinds/refkind.h"
#include "kinds/target.h"
#include "run.h"

static bool shares_kept_description(const struct rv_run *run, const struct rv_holder *h,
				    const struct revoke_ref *ref)
{
	if (ref->type != REVOKE_REF_FD)
		return false;
	/* The helper's client keeps the descriptors it sent us until we
	 * answer: its own lookups, as our O_PATH descriptors are ours. But a
	 * description it sent is the target itself. */
	for (size_t t = 0;
	     run->req.fds && !(run->req.flags & REVOKE_DESCRIPTION) && t < run->ntargets; t++)
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
void rv_ref_unreachable(struct revoke_ref *ref, int error, size_t *count)
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
void rv_mark_code(const struct rv_run *run, struct rv_holder *h, size_t *unreachable)
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
				rv_ref_unreachable(ref, ETXTBSY, unreachable);
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
			rv_ref_unreachable(ref, error, &unreachable);
		}
	}
	if (!native)
		rv_mark_code(run, h, &unreachable);
	return unreachable;
}

size_t rv_classify_all(const struct rv_run *run, bool native)
{
	size_t unreachable = 0;

	for (size_t i = 0; i < run->holders.n; i++)
		unreachable += classify_holder(run, &run->holders.v[i], native);
	return unreachable + run->others.n;
}

/*
 * The references a narrower target leaves to cut, in every holder (a rescan
 * replaced the stopped holders' refs): one open file description
 * (description.c), the holders who may no longer hold the file (recheck.c).
 * Before anyone is stopped, and after every rescan.
 */
void rv_narrow_refs(struct rv_run *run, int phase)
{
	uint64_t deadline = rv_budget_deadline(&run->budget, phase);

	for (size_t i = 0; i < run->holders.n; i++) {
		struct rv_holder *h = &run->holders.v[i];
		char why[sizeof(h->pub.reason)] = "";
		int r = 0;

		if (h->other_user || h->uninspected || !h->pub.nrefs)
			continue;
		if (run->req.flags & REVOKE_DESCRIPTION)
			r = rv_description_narrow(rv_run_description_fd(run), h, why, sizeof(why));
		if (r == 0 && h->pub.nrefs && (run->req.flags & REVOKE_RECHECK))
			r = rv_recheck_narrow(&run->recheck, h, deadline, why, sizeof(why));
		if (r == -ESRCH) { /* gone: it holds nothing */
			rv_holder_clear(h);
			h->pub.reason[0] = '\0';
		} else if (r < 0) { /* could not be decided: uninspected, never guessed */
			rv_holder_clear(h);
			h->uninspected = true;
			snprintf(h->pub.reason, sizeof(h->pub.reason), "%s", why);
		}
	}
}
