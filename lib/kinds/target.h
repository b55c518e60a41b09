/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a revocation is aimed at, and the one test of whether something a
 * scanner found is it. Today a target is an inode; a mount (every inode
 * under a mount) is the next kind.
 */
#ifndef REVOKE_TARGET_H
#define REVOKE_TARGET_H

#include <pthread.h>
#include <sys/sysmacros.h>

#include <sys/stat.h>

#include "internal.h"

/* Resolve what REQ names into TS (calloc'd, *RET_N of them): each path
 * once, by the kernel, into an O_PATH descriptor, so that lookup errors
 * (EFAULT for a bad pointer too) come from open(2) itself and a rename
 * cannot swap the target later; identity from statx without syncing (a
 * hung FUSE or NFS server cannot stall it). A dead descriptor left by an
 * earlier revoke, an anonymous inode (eventfd, epoll... all share one), or a
 * device every process shares is refused (-EBADF, -EINVAL). */
/* The caller's path strings are read in user space only under GUARD, and not
 * at all once *GONE (its caller stopped waiting and may have freed them). */
struct rv_guard {
	pthread_mutex_t *mu;
	const bool *gone;
};
int rv_targets_resolve(const struct rv_request *req, const struct rv_guard *guard,
		       struct rv_target **ret, size_t *ret_n);
void rv_targets_free(struct rv_target *t, size_t n);

/* open(PATH, FLAGS) made in a process of its own that is given up at
 * DEADLINE (-ETIMEDOUT): a lookup stuck on a hung FUSE or NFS server cannot
 * hold the caller. */
int rv_open_bounded(const char *path, int flags, uint64_t deadline);
/* The same as another process sees PATH: ROOT_FD and CWD_FD from rv_ns_open
 * (both -1: as we see it). */
int rv_open_bounded_in(const char *path, int flags, uint64_t deadline, int root_fd, int cwd_fd);
/* O_PATH descriptors of process PID's root and current directory: -ESRCH
 * (no such process), -EPERM (no ptrace read access to it). */
int rv_ns_open(pid_t pid, int *ret_root, int *ret_cwd);

/* Is RDEV a character device every process shares (/dev/null, /dev/tty...)?
 * Such targets are refused with -EINVAL. */
bool rv_shared_device(dev_t rdev);

/* T's device in the kernel's s_dev encoding. */
static inline unsigned int rv_target_kdev(const struct rv_target *t)
{
	return major(t->dev) << 20 | minor(t->dev);
}

/* The one matching function: does the file (DEV, INO), reached through
 * mount MNT_ID, belong to T? An inode target is the inode whatever the
 * mount; a mount target is the mount whatever the inode. MNT_ID 0 means
 * unknown (a maps line, without map_files): a mount target then takes
 * every file of its filesystem, the closest the text allows. */
static inline bool rv_target_match(const struct rv_target *t, dev_t dev, uint64_t ino,
				   uint64_t mnt_id)
{
	if (t->mount)
		return mnt_id ? mnt_id == t->mnt_id : t->dev == dev;
	return t->dev == dev && (uint64_t)t->ino == ino;
}

/* The same, with the device in the kernel's own encoding (s_dev: major << 20
 * | minor), as BPF iterators and epoll's fdinfo show it; no mount known. */
static inline bool rv_target_match_kdev(const struct rv_target *t, unsigned int kdev, uint64_t ino)
{
	if (t->mount)
		return rv_target_kdev(t) == kdev;
	return rv_target_kdev(t) == kdev && (uint64_t)t->ino == ino;
}

/*
 * A character or block device is the same file whatever node opened it: a
 * file of mode MODE and device number RDEV is an alias of device target T
 * (another node of it: a container's mknod'ed /dev, a second devtmpfs).
 */
static inline bool rv_target_alias(const struct rv_target *t, mode_t mode, dev_t rdev)
{
	return !t->mount && (S_ISCHR(t->mode) || S_ISBLK(t->mode)) &&
	       (t->mode & S_IFMT) == (mode & S_IFMT) && t->rdev == rdev;
}

/* Does any of the N targets name a mount? */
static inline bool rv_targets_have_mount(const struct rv_target *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].mount)
			return true;
	return false;
}

/* The statx() mnt id of STX, or 0 when the kernel did not give it (< 5.8). */
#define rv_stx_mnt_id(stx) ((stx)->stx_mask & STATX_MNT_ID ? (stx)->stx_mnt_id : 0)

/* Look TG's path up again (bounded, as the first time): after a concurrent
 * revoke of the same file cut our own O_PATH descriptor of it. Only the same
 * inode will do (-EBUSY). */
int rv_target_reopen(const struct rv_request *req, struct rv_target *tg);

/* Whether the caller has capability CAP in its effective set. */
bool rv_has_cap(int cap);

/* The caller's fsuid owns every target, or it holds CAP_FOWNER (the 2006
 * contract). -EPERM. */
int rv_targets_check_permission(const struct rv_target *t, size_t n);

/* The same rule for a client of the helper: UID owns every target, or is
 * 0 (its CAP_FOWNER is not known here; root's is the common case). -EPERM. */
int rv_targets_check_owner(const struct rv_target *t, size_t n, uid_t uid);

#endif
