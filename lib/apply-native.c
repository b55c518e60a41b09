/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The native engine: revoke(2)/frevoke(2) and the forced unmount
 * (UMOUNT_REVOKE) when the running kernel has them (native/native.c).
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

#include "kinds/target.h"
#include "run.h"
#include "kinds/refkind.h"

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
	int fd;

	if (run->req.keep_fd >= 0 || (run->req.flags & REVOKE_NO_HANGUP) || !S_ISCHR(tg->mode) ||
	    major(tg->rdev) == 5)
		return -1;
	for (size_t i = 0; i < run->holders.n && !held; i++) {
		const struct rv_holder *h = &run->holders.v[i];

		for (size_t j = 0; j < h->pub.nrefs && !held; j++)
			held =
			    rv_refkind_of(&h->pub.refs[j])->in_table && h->pub.refs[j].target == t;
	}
	if (!held)
		return -1;
	fd = rv_proc_open(RV_PROC_SELF, 0, O_RDWR | O_NOCTTY | O_NONBLOCK, "fd/%d", tg->path_fd);
	return fd < 0 ? -1 : rv_keep_if_tty(fd);
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

int rv_run_native(struct rv_run *run)
{
	size_t dirs = 0;
	int r = 0;

	run->engine = REVOKE_ENGINE_SYSCALL;
	rv_classify_all(run, true);
	/* The kernel reaches every open file, in flight ones too. */
	rv_run_mark_all(run, REVOKE_STATE_UNREACHABLE, REVOKE_STATE_FOUND, 0);
	/* But not a cwd or root, which are no open files, nor a device's other
	 * nodes (here only when REVOKE_ENGINE_NATIVE was asked for: see
	 * rv_plan()). */
	for (size_t i = 0; i < run->holders.n; i++)
		for (size_t j = 0; j < run->holders.v[i].pub.nrefs; j++) {
			struct revoke_ref *ref = &run->holders.v[i].pub.refs[j];

			if (ref->state == REVOKE_STATE_FOUND &&
			    (rv_refkind_of(ref)->dir != RV_DIR_NONE || run->holders.v[i].alias))
				rv_ref_unreachable(ref, EOPNOTSUPP, &dirs);
		}
	if (dirs && !(run->req.flags & REVOKE_BEST_EFFORT)) {
		rv_run_mark_all(run, REVOKE_STATE_FOUND, REVOKE_STATE_SKIPPED, 0);
		return -EBUSY;
	}
	rv_run_phase(run, RV_PH_CUT, 0);
	r = rv_run_commit(run, NULL);
	if (r < 0) {
		rv_run_mark_all(run, REVOKE_STATE_FOUND, REVOKE_STATE_SKIPPED, 0);
		return r;
	}
	for (size_t t = 0; t < run->ntargets && r >= 0; t++)
		r = run->req.flags & REVOKE_DESCRIPTION
			? rv_native_revoke_file(rv_run_description_fd(run))
		    : run->req.fd >= 0 ? rv_native_frevoke(run->req.fd)
				       : native_revoke_target(run, t);
	rv_run_mark_all(run, REVOKE_STATE_FOUND, r < 0 ? REVOKE_STATE_FAILED : REVOKE_STATE_CUT,
			r < 0 ? -r : 0);
	return r < 0 ? r : dirs ? -EBUSY : 0;
}

/*
 * The kernel's forced unmount (umount2 UMOUNT_REVOKE), deepest mount first:
 * it syncs, revokes every file opened through the mount, moves cwd and root
 * to a dead directory and unmounts. It refuses a program running from the
 * mount, a swap file, a loop device's backing file; so does this, from the
 * scan, before the first mount goes.
 */
int rv_run_native_umount(struct rv_run *run)
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
			if (rv_ref_native_refusal(ref))
				rv_ref_unreachable(ref, rv_ref_native_refusal(ref), &refused);
		}
		rv_mark_code(run, h, &refused);
	}
	if ((refused || rv_run_uninspected(run)) && !(run->req.flags & REVOKE_BEST_EFFORT)) {
		rv_run_mark_all(run, REVOKE_STATE_FOUND, REVOKE_STATE_SKIPPED, 0);
		return -EBUSY;
	}
	r = rv_run_commit(run, NULL);
	if (r < 0) {
		rv_run_mark_all(run, REVOKE_STATE_FOUND, REVOKE_STATE_SKIPPED, 0);
		return r;
	}
	r = rv_unmount_all(run, 0, true);
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
