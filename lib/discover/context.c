/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A /proc scan's context (the targets as the readers compare them) and its
 * workers (their buffers): one for a whole-system scan (proc_all.c), one for
 * the rescan of one process (proc_one.c).
 */
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/eventfd.h>
#include <sys/statfs.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/kcmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "kinds/refkind.h"
#include "discover/proc.h"
#include "kinds/target.h"

void rv_proc_worker_done(struct scan_worker *w)
{
	rv_holders_free(&w->hs);
	rv_holder_clear(&w->tmp);
	free(w->buf);
	free(w->keys);
	free(w->peek);
}

int rv_proc_worker_init(struct scan_worker *w, struct scan_ctx *ctx)
{
	w->ctx = ctx;
	w->tmp.pidfd = -1;
	w->bufsize = 65536;
	w->buf = malloc(w->bufsize);
	return w->buf ? 0 : -ENOMEM;
}

void rv_proc_ctx_done(struct scan_ctx *ctx)
{
	if (ctx->names)
		for (size_t t = 0; t < ctx->ntargets; t++)
			free(ctx->names[t].real);
	free(ctx->names);
	free(ctx->pids);
	ctx->proc_fd = safe_close(ctx->proc_fd);
}

/*
 * Whether a maps line can be dismissed by its inode number, saving the
 * statx of map_files/START-END (a tenth of the scan's syscalls) on every
 * line that is no target's. maps shows the inode of the user's file (6.9+:
 * file_user_inode; before, that of the mapped file, which is the user's
 * except on overlayfs), and stat() the same number on every filesystem
 * whose getattr reports i_ino. Both are checked here for each target: i_ino from the
 * "ino:" of its O_PATH descriptor's fdinfo (5.14+) equals st_ino, and it
 * is on a block device's filesystem, not on one with an anonymous device
 * (overlayfs among them; statfs could tell, but blocks on a hung FUSE
 * server). Otherwise every distinct mapped file is statx'ed.
 */
static bool maps_by_ino(const struct rv_target *targets, size_t ntargets)
{
	for (size_t t = 0; t < ntargets; t++) {
		char text[1024];
		_cleanup_close_ int fd = -1;
		struct rv_fdinfo fi;
		ssize_t n;

		if (targets[t].path_fd < 0 || major(targets[t].dev) == 0)
			return false;
		fd = rv_proc_open(RV_PROC_SELF, 0, O_RDONLY, "fdinfo/%d", targets[t].path_fd);
		if (fd < 0)
			return false;
		n = read(fd, text, sizeof(text) - 1);
		if (n <= 0)
			return false;
		text[n] = '\0';
		if (rv_parse_fdinfo(text, &fi) < 0 || fi.ino == 0 ||
		    fi.ino != (uint64_t)targets[t].ino)
			return false;
	}
	return true;
}

int rv_proc_ctx_init(struct scan_ctx *ctx, const struct rv_target *targets, size_t ntargets,
		     const struct rv_scan_opts *opts)
{
	const char *root = opts && opts->proc_root ? opts->proc_root : rv_proc_root;
	_cleanup_close_ int efd = -1;
	struct statfs sfs;
	struct stat st;

	*ctx = (struct scan_ctx){
	    .targets = targets, .ntargets = ntargets, .opts = opts, .self = getpid()};
	ctx->proc_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ctx->proc_fd < 0)
		return negative_errno();
	ctx->procfs = fstatfs(ctx->proc_fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC;
	ctx->pidfd_max = rv_pidfd_max(); /* before the workers: they only read it */
	/* io_uring rings are anon inodes: learn that filesystem's st_dev so
	 * that only fds on it need a readlink. */
	efd = eventfd(0, EFD_CLOEXEC);
	if (efd >= 0 && fstat(efd, &st) == 0) {
		ctx->anon_dev = st.st_dev;
		ctx->have_anon_dev = true;
	}
	ctx->by_mount = rv_targets_have_mount(targets, ntargets);
	ctx->maps_by_dev = ctx->by_mount;
	for (size_t t = 0; t < ntargets; t++)
		ctx->maps_by_dev &= targets[t].mount && targets[t].maps_dev_exact;
	ctx->maps_by_ino = !ctx->by_mount && maps_by_ino(targets, ntargets);
	ctx->names = calloc(ntargets ? ntargets : 1, sizeof(*ctx->names));
	if (!ctx->names)
		return -ENOMEM;
	for (size_t t = 0; t < ntargets; t++) {
		char real[4096];
		ssize_t n = -1;
		const char *base;

		if (targets[t].path_fd >= 0)
			n = rv_proc_readlink(RV_PROC_SELF, 0, real, sizeof(real), "fd/%d",
					     targets[t].path_fd);
		if (n > 0) {
			static const char deleted[] = " (deleted)";
			size_t dl = sizeof(deleted) - 1;

			real[n] = '\0';
			if ((size_t)n > dl && strcmp(real + n - dl, deleted) == 0)
				real[n - dl] = '\0';
			ctx->names[t].real = strdup(real);
			if (!ctx->names[t].real)
				return -ENOMEM;
		}
		if (!ctx->names[t].real && targets[t].mount && targets[t].path) {
			ctx->names[t].real = strdup(targets[t].path);
			if (!ctx->names[t].real)
				return -ENOMEM;
		}
		base = ctx->names[t].real ? ctx->names[t].real : targets[t].path;
		if (base && strrchr(base, '/'))
			base = strrchr(base, '/') + 1;
		ctx->names[t].base = base && *base ? base : NULL;
	}
	return 0;
}

void rv_fmt_uint(char *p, unsigned int v)
{
	char tmp[16];
	size_t n = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		*p++ = tmp[--n];
	*p = '\0';
}

static ssize_t read_at(struct scan_worker *w, int dir, const char *name, bool record)
{
	_cleanup_close_ int fd = -1;
	size_t len = 0;

	fd = openat(dir, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return negative_errno();
	for (;;) {
		ssize_t n;

		if (w->bufsize - len < 2) {
			size_t nsize = w->bufsize * 2;
			char *p = realloc(w->buf, nsize);

			if (!p)
				return -ENOMEM;
			w->buf = p;
			w->bufsize = nsize;
		}
		n = read(fd, w->buf + len, w->bufsize - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		if (n == 0)
			break;
		len += (size_t)n;
		/* A seq_file of one record hands all of it to the first read
		 * that has room: no read for the end of file. */
		if (record && len < w->bufsize - 1)
			break;
	}
	w->buf[len] = '\0';
	return (ssize_t)len;
}

ssize_t rv_proc_read_at(struct scan_worker *w, int dir, const char *name)
{
	return read_at(w, dir, name, false);
}

ssize_t rv_proc_read_record_at(struct scan_worker *w, int dir, const char *name)
{
	return read_at(w, dir, name, true);
}

struct revoke_ref *rv_scan_add_ref(struct scan_worker *w, int type, size_t target, int fd)
{
	struct revoke_ref *ref = rv_holder_add_ref(&w->tmp);

	if (!ref)
		return NULL;
	ref->type = type;
	ref->state = REVOKE_STATE_FOUND;
	ref->target = (unsigned int)target;
	ref->fd = fd;
	return ref;
}

bool rv_scan_ref_exists(struct scan_worker *w, int type, size_t target, int fd)
{
	for (size_t i = 0; i < w->tmp.pub.nrefs; i++) {
		const struct revoke_ref *ref = &w->tmp.pub.refs[i];
		if (ref->type == type && ref->target == target && ref->fd == fd)
			return true;
	}
	return false;
}

/* fdinfo/FD of the process whose directory is DIR; fdinfo/ itself is
 * opened once per process (*FDINFO_DIR, closed by the caller). */
int rv_scan_fdinfo_of(struct scan_worker *w, int dir, int *fdinfo_dir, int fd,
		      struct rv_fdinfo *ret)
{
	char name[16];
	ssize_t n;

	if (*fdinfo_dir < 0) {
		*fdinfo_dir = openat(dir, "fdinfo", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (*fdinfo_dir < 0)
			return negative_errno();
	}
	rv_fmt_uint(name, (unsigned int)fd);
	n = rv_proc_read_record_at(w, *fdinfo_dir, name);
	if (n < 0)
		return (int)n;
	return rv_parse_fdinfo(w->buf, ret);
}
