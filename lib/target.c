/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Targets: resolving them, telling them apart, and who may revoke them. */
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "target.h"

void rv_targets_free(struct rv_target *t, size_t n)
{
	if (!t)
		return;
	for (size_t i = 0; i < n; i++) {
		safe_close(t[i].path_fd);
		free(t[i].path);
	}
	free(t);
}

static int target_from_fd(int fd, const char *path, const struct rv_guard *guard,
			  struct rv_target *ret)
{
	struct statx stx;

	/* DONT_SYNC: the inode cache answers; a FUSE server is not asked. */
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC,
		  STATX_TYPE | STATX_MODE | STATX_INO | STATX_UID, &stx) < 0)
		return negative_errno();
	/* eventfd, epoll, timerfd, signalfd... all share one anonymous inode:
	 * "every file on this inode" would be every such file in the system. */
	if ((stx.stx_mode & S_IFMT) == 0)
		return -EINVAL;
	/* A descriptor an earlier revoke left: its memfd is that holder's own,
	 * and "revoking" it again would only replace one dead file by another.
	 * Say what it is instead. */
	if (rv_is_dead_fd(fd))
		return -EBADF;
	ret->dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	ret->ino = stx.stx_ino;
	ret->mode = stx.stx_mode;
	ret->uid = stx.stx_uid;
	ret->rdev = makedev(stx.stx_rdev_major, stx.stx_rdev_minor);
	if (guard)
		pthread_mutex_lock(guard->mu);
	ret->path = guard && *guard->gone ? NULL : strdup(path);
	if (guard)
		pthread_mutex_unlock(guard->mu);
	return ret->path ? 0 : -ENOMEM;
}

int rv_targets_resolve(const struct rv_request *req, const struct rv_guard *guard,
		       struct rv_target **ret, size_t *ret_n)
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
		r = target_from_fd(req->fd, buf, NULL, &t[0]);
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
			/* The kernel read the string, so it is safe to read here
			 * (while our caller waits for us). */
			r = target_from_fd(t[i].path_fd, req->paths[i], guard, &t[i]);
			if (r < 0)
				goto fail;
		}
	}
	*ret = t;
	*ret_n = n;
	return 0;
fail:
	rv_targets_free(t, n);
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

int rv_targets_check_permission(const struct rv_target *t, size_t n)
{
	uid_t fsuid = (uid_t)setfsuid((uid_t)-1); /* -1 is never valid: only reads it */
	bool fowner = has_cap_fowner();

	for (size_t i = 0; i < n; i++)
		if (t[i].uid != fsuid && !fowner)
			return -EPERM;
	return 0;
}
