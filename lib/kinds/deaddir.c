/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The dead directory: an empty, read-only directory off the targets, where a
 * holder's current or root directory on a revoked mount is moved (a cwd or
 * root cannot be closed, only replaced), and how each holder can reach it.
 */
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "kinds/target.h"

int rv_dead_dir_make(const struct rv_target *t, size_t n, struct rv_dead_dir *ret)
{
	static const char *const bases[] = {"/run", "/dev/shm", "/tmp", "/var/tmp"};

	for (size_t b = 0; b < ARRAY_SIZE(bases); b++) {
		struct rv_dead_dir d = {.fd = -1, .pid = getpid()};
		struct statx stx;
		bool on_target = false;

		if (statx(AT_FDCWD, bases[b], AT_STATX_DONT_SYNC, STATX_TYPE | STATX_MNT_ID, &stx) <
			0 ||
		    !S_ISDIR(stx.stx_mode) || access(bases[b], W_OK) < 0)
			continue;
		for (size_t i = 0; i < n; i++)
			on_target |=
			    rv_target_match(&t[i], makedev(stx.stx_dev_major, stx.stx_dev_minor),
					    stx.stx_ino, rv_stx_mnt_id(&stx));
		if (on_target)
			continue;
		snprintf(d.path, sizeof(d.path), "%s/.revoke-dead.XXXXXX", bases[b]);
		if (!mkdtemp(d.path))
			continue;
		/* Searchable by every holder (their chdir), writable by none. */
		d.fd = open(d.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (d.fd < 0 || chmod(d.path, 0555) < 0) {
			int r = negative_errno();

			safe_close(d.fd);
			rmdir(d.path);
			return r;
		}
		*ret = d;
		return 0;
	}
	return -ENOENT;
}

void rv_dead_dir_remove(struct rv_dead_dir *d)
{
	if (d->fd < 0)
		return;
	(void)rmdir(d->path);
	d->fd = safe_close(d->fd);
}

static bool same_link(pid_t pid, const char *name)
{
	char a[64], b[64];
	ssize_t la, lb;

	la = rv_proc_readlink(pid, 0, a, sizeof(a), "ns/%s", name);
	lb = rv_proc_readlink(RV_PROC_SELF, 0, b, sizeof(b), "ns/%s", name);
	return la > 0 && la == lb && memcmp(a, b, (size_t)la) == 0;
}

static bool same_root(pid_t pid)
{
	struct statx a, b;
	unsigned int mask = STATX_INO | STATX_MNT_ID;

	return rv_proc_statx(pid, 0, AT_STATX_DONT_SYNC, mask, &a, "root") == 0 &&
	       rv_proc_statx(RV_PROC_SELF, 0, AT_STATX_DONT_SYNC, mask, &b, "root") == 0 &&
	       a.stx_ino == b.stx_ino && a.stx_dev_major == b.stx_dev_major &&
	       a.stx_dev_minor == b.stx_dev_minor && rv_stx_mnt_id(&a) == rv_stx_mnt_id(&b);
}

int rv_dead_dir_how(pid_t pid, bool need_chroot, const char **why)
{
	struct rv_proc_status st;
	int r;

	r = rv_proc_status_of(pid, &st);
	if (r < 0) {
		*why = "its status could not be read";
		return r;
	}
	/* chroot(2) needs CAP_SYS_CHROOT in the holder itself. */
	if (need_chroot && !(st.have_cap_eff && (st.cap_eff >> CAP_SYS_CHROOT & 1))) {
		*why = "its root cannot be moved without CAP_SYS_CHROOT";
		return -EOPNOTSUPP;
	}
	if (same_link(pid, "mnt") && same_root(pid))
		return RV_DEAD_DIR_PATH;
	/* Elsewhere (chrooted, another mount namespace) the path means
	 * nothing: it takes our descriptor with pidfd_getfd(), which needs
	 * our pid in its pid namespace and ptrace rights over us. */
	if (same_link(pid, "pid") &&
	    ((st.have_cap_eff && (st.cap_eff >> CAP_SYS_PTRACE & 1)) || st.ruid == getuid()))
		return RV_DEAD_DIR_PIDFD;
	/* A process on its way out has lost its namespaces and root first
	 * (and its cwd with them): gone, not elsewhere. */
	r = rv_proc_status_of(pid, &st);
	if (r < 0 || st.state == 'Z' || st.state == 'X')
		return -ESRCH;
	*why = "it sees another file tree (chroot or mount namespace) and may not take a "
	       "descriptor from us";
	return -EOPNOTSUPP;
}
