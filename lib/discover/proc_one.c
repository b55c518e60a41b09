/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The /proc reader for one process: its fd table, mappings, cwd, root and
 * exe, plus the references no fd table shows (io_uring fixed files, fds in
 * flight in SCM_RIGHTS messages). Identity is (st_dev, st_ino) of what a
 * /proc link resolves to, never a name. Cost when it holds nothing: open
 * /proc/PID (O_PATH), read stat, getdents of fd/ into a reused buffer, ONE
 * statx per fd (relative to the fd/ directory), read maps, one statx per
 * distinct mapped file, three statx for cwd/root/exe. Each fd that matches
 * costs a read of fdinfo/N more (its flags and position), unless
 * RV_SCAN_NO_FDINFO; sockets cost a read of fdinfo/N (scm_fds), anon inodes
 * a readlink (io_uring). The scan's context and workers (proc_all.c reads
 * every process with them).
 *
 * Every statx uses AT_STATX_DONT_SYNC and asks only for type and inode, so
 * a file on a FUSE or NFS filesystem whose server stopped answering is
 * identified from the inode cache instead of blocking the scan.
 */
#include <fcntl.h>
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

#ifndef HAVE_BPF
#define HAVE_BPF 0
#endif

#define PF_KTHREAD  0x00200000u
#define STATX_FLAGS AT_STATX_DONT_SYNC
#define STATX_MASK  (STATX_TYPE | STATX_INO | STATX_MNT_ID)
#include <linux/magic.h>
#include <sys/eventfd.h>
#include <sys/statfs.h>

static int add_fd_ref(struct scan_worker *w, int dir, int *fdinfo_dir, int fd, size_t target)
{
	struct rv_fdinfo fi;
	struct revoke_ref *ref;
	int r;

	if (w->ctx->opts && (w->ctx->opts->flags & RV_SCAN_NO_FDINFO))
		return rv_scan_add_ref(w, REVOKE_REF_FD, target, fd) ? 0 : -ENOMEM;
	r = rv_scan_fdinfo_of(w, dir, fdinfo_dir, fd, &fi);
	if (r < 0) /* closed in between: nothing to report */
		return rv_gone_errno(-r) || rv_hidden_errno(-r) || r == -EINVAL ? 0 : r;
	ref = rv_scan_add_ref(w, REVOKE_REF_FD, target, fd);
	if (!ref)
		return -ENOMEM;
	ref->fd_flags = (fi.flags & O_CLOEXEC) ? FD_CLOEXEC : 0;
	ref->open_flags = fi.flags & ~O_CLOEXEC;
	ref->offset = fi.pos;
	return 0;
}

static bool ignored_fd(const struct rv_scan_opts *o, int fd)
{
	for (size_t i = 0; o && i < o->nignore_fds; i++)
		if (o->ignore_fds[i] == fd)
			return true;
	return false;
}

static int scan_fds(struct scan_worker *w, int dir, pid_t pid, int *pidfd)
{
	struct scan_ctx *ctx = w->ctx;
	/* A dirent of a name of up to 10 digits: 19 + 11 bytes, 8-aligned. */
	enum { FD_RECLEN_MAX = 32 };
	_cleanup_close_ int fdd = -1, fdinfo_dir = -1;
	bool self = pid == ctx->self, last;

	fdd = openat(dir, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fdd < 0 && rv_hidden_errno(errno))
		w->hidden = true;
	if (fdd < 0)
		return rv_gone_errno(errno)	? -ESRCH
		       : rv_hidden_errno(errno) ? 0
						: negative_errno();
	for (;;) {
		long n = syscall(SYS_getdents64, fdd, w->dents, sizeof(w->dents));

		if (n < 0)
			return rv_gone_errno(errno)	? -ESRCH
			       : rv_hidden_errno(errno) ? 0
							: negative_errno();
		if (n == 0)
			return 0;
		/* proc_readfd_common stops only when the buffer is full or
		 * the table ends: with room for two more names left, this was
		 * all of it and the getdents that would say so is saved. */
		last = ctx->procfs && (size_t)n + 2 * FD_RECLEN_MAX <= sizeof(w->dents);
		for (long off = 0; off < n;) {
			struct linux_dirent64 *d =
			    (struct linux_dirent64 *)(void *)(w->dents + off);
			struct statx stx;
			dev_t dev;
			int fd, r;

			off += d->d_reclen;
			if (rv_parse_int(d->d_name, &fd) < 0)
				continue; /* "." and ".." */
			if (self && ignored_fd(ctx->opts, fd))
				continue;
			if (statx(fdd, d->d_name, STATX_FLAGS, STATX_MASK, &stx) < 0)
				continue; /* closed meanwhile, or not ours to see */
			dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
			for (size_t t = 0; t < ctx->ntargets; t++) {
				bool alias = false;

				if (!rv_target_match(&ctx->targets[t], dev, stx.stx_ino,
						     rv_stx_mnt_id(&stx)) &&
				    !(alias = rv_target_alias(
					  &ctx->targets[t], stx.stx_mode,
					  makedev(stx.stx_rdev_major, stx.stx_rdev_minor))))
					continue;
				r = add_fd_ref(w, dir, &fdinfo_dir, fd, t);
				if (r < 0)
					return r;
				w->tmp.alias |= alias;
			}
			r = 0;
			if (S_ISSOCK(stx.stx_mode))
				r = rv_scan_check_inflight(w, dir, &fdinfo_dir, pid, fd, pidfd);
			else if (ctx->have_anon_dev && dev == ctx->anon_dev)
				r = rv_scan_check_uring(w, dir, &fdinfo_dir, fdd, d->d_name, fd);
			if (r < 0)
				return r;
		}
		if (last)
			return 0;
	}
}

/* FNV-1a of a maps line's path, when mount targets need it (else 0). */
static uint32_t path_hash(const struct scan_worker *w, const struct rv_maps_entry *e)
{
	uint32_t h = 2166136261u;

	if (!w->ctx->by_mount || !e->path)
		return 0;
	for (const char *p = e->path; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	return h;
}

static struct map_key *map_key_find(struct scan_worker *w, const struct rv_maps_entry *e)
{
	uint32_t ph = path_hash(w, e);

	/* Lines of one file are usually adjacent: look from the end. */
	for (size_t i = w->nkeys; i-- > 0;) {
		struct map_key *k = &w->keys[i];
		if (k->text_ino == e->ino && k->major == e->dev_major && k->minor == e->dev_minor &&
		    k->path_hash == ph)
			return k;
	}
	return NULL;
}

static int map_key_add(struct scan_worker *w, const struct rv_maps_entry *e, dev_t dev,
		       uint64_t ino, uint64_t mnt_id)
{
	if (w->nkeys == w->keys_cap) {
		size_t ncap = w->keys_cap ? w->keys_cap * 2 : 32;
		struct map_key *k = realloc(w->keys, ncap * sizeof(*k));

		if (!k)
			return -ENOMEM;
		w->keys = k;
		w->keys_cap = ncap;
	}
	w->keys[w->nkeys++] =
	    (struct map_key){e->dev_major, e->dev_minor, e->ino, dev, ino, mnt_id, path_hash(w, e)};
	return 0;
}

static bool target_dev(const struct scan_ctx *ctx, dev_t dev)
{
	for (size_t t = 0; t < ctx->ntargets; t++)
		if (ctx->targets[t].dev == dev)
			return true;
	return false;
}

static bool target_ino(const struct scan_ctx *ctx, uint64_t ino)
{
	for (size_t t = 0; t < ctx->ntargets; t++)
		if ((uint64_t)ctx->targets[t].ino == ino)
			return true;
	return false;
}

/*
 * File-backed mappings. The dev:ino text of maps is the inode the pages
 * come from, which differs from what stat() reports on overlayfs and btrfs
 * subvolumes, so each distinct file is identified by statx of
 * map_files/START-END (once per process; only files with a target's inode
 * number when ctx->maps_by_ino says that number alone can rule one out).
 * Following map_files needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE; without them (EPERM/EACCES),
 * and for a zombie leader (whose task directory has no map_files), the maps text is compared with
 * the target's st_dev/st_ino instead, which is exact on every filesystem but those.
 */
static int scan_maps(struct scan_worker *w, int dir, bool have_map_files)
{
	struct scan_ctx *ctx = w->ctx;
	ssize_t len;
	char *line, *next;

	len = rv_proc_read_at(w, dir, "maps");
	if (len < 0 && rv_hidden_errno((int)-len))
		w->hidden = true;
	if (len < 0)
		return rv_gone_errno((int)-len)	    ? -ESRCH
		       : rv_hidden_errno((int)-len) ? 0
						    : (int)len;
	w->nkeys = 0;
	for (line = w->buf; line && *line; line = next) {
		struct rv_maps_entry e;
		struct map_key *k;
		int r;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (rv_parse_maps_line(line, &e) < 0)
			continue;
		/* IORING_OFF_SQ_RING: one such mapping per ring */
		if (e.offset == 0 && e.path && strcmp(e.path, "anon_inode:[io_uring]") == 0)
			w->ring_maps++;
		if (e.ino == 0) {
			if (e.path && strcmp(e.path, "[vdso]") == 0)
				w->tmp.vdso = e.start;
			continue;
		}
		k = map_key_find(w, &e);
		if (!k) {
			dev_t dev = makedev(e.dev_major, e.dev_minor);
			uint64_t ino = e.ino, mnt_id = 0;

			if (have_map_files && (!ctx->maps_by_ino || target_ino(ctx, e.ino)) &&
			    (!ctx->maps_by_dev || target_dev(ctx, dev)) &&
			    !atomic_load_explicit(&ctx->map_files_denied, memory_order_relaxed)) {
				struct statx stx;
				char name[64];

				snprintf(name, sizeof(name), "map_files/%" PRIx64 "-%" PRIx64,
					 e.start, e.end);
				if (statx(dir, name, STATX_FLAGS, STATX_MASK, &stx) == 0) {
					dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
					ino = stx.stx_ino;
					mnt_id = rv_stx_mnt_id(&stx);
				} else if (errno == EPERM)
					atomic_store(&ctx->map_files_denied, 1);
				else if (rv_gone_errno(errno))
					continue; /* unmapped meanwhile */
			}
			r = map_key_add(w, &e, dev, ino, mnt_id);
			if (r < 0)
				return r;
			k = &w->keys[w->nkeys - 1];
		}
		for (size_t t = 0; t < ctx->ntargets; t++) {
			struct revoke_ref *ref;

			if (!rv_target_match(&ctx->targets[t], k->dev, k->ino, k->mnt_id))
				continue;
			ref = rv_scan_add_ref(w, REVOKE_REF_MAP, t, -1);
			if (!ref)
				return -ENOMEM;
			ref->start = e.start;
			ref->end = e.end;
			ref->offset = e.offset;
			ref->prot = e.prot;
			ref->map_flags = e.map_flags;
		}
	}
	return 0;
}

/* The kinds found through a /proc/PID/<link> (refkind.c: cwd, root, exe). */
static int scan_links(struct scan_worker *w, int dir)
{
	struct scan_ctx *ctx = w->ctx;
	size_t nk;
	const struct rv_refkind *k = rv_refkinds(&nk);

	for (size_t i = 0; i < nk; i++) {
		struct statx stx;

		if (k[i].found_in != RV_FOUND_LINK)
			continue;
		if (statx(dir, k[i].link, STATX_FLAGS, STATX_MASK, &stx) < 0)
			continue; /* gone, hidden, or no exe (kernel thread) */
		for (size_t t = 0; t < ctx->ntargets; t++)
			if (rv_target_match(&ctx->targets[t],
					    makedev(stx.stx_dev_major, stx.stx_dev_minor),
					    stx.stx_ino, rv_stx_mnt_id(&stx)) &&
			    !rv_scan_add_ref(w, k[i].type, t, -1))
				return -ENOMEM;
	}
	return 0;
}

/* A zombie leader's own entries are empty: find a live thread's task dir. */
static int open_live_thread(struct scan_worker *w, int pdir, pid_t pid)
{
	_cleanup_close_ int task = -1;

	task = openat(pdir, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (task < 0)
		return rv_gone_errno(errno) || rv_hidden_errno(errno) ? -ESRCH : negative_errno();
	for (;;) {
		long n = syscall(SYS_getdents64, task, w->dents, sizeof(w->dents));

		if (n <= 0)
			return n < 0 && !rv_gone_errno(errno) ? negative_errno() : -ESRCH;
		for (long off = 0; off < n;) {
			struct linux_dirent64 *d =
			    (struct linux_dirent64 *)(void *)(w->dents + off);
			_cleanup_close_ int tdir = -1;
			struct rv_proc_stat st;
			int tid;

			off += d->d_reclen;
			if (rv_parse_int(d->d_name, &tid) < 0 || tid == pid)
				continue;
			tdir = openat(task, d->d_name, O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (tdir < 0 || rv_proc_read_record_at(w, tdir, "stat") < 0 ||
			    rv_parse_stat(w->buf, &st) < 0 || st.state == 'Z' || st.state == 'X')
				continue;
			return TAKE_FD(tdir);
		}
	}
}

/*
 * Collects the refs of PID into w->tmp (emptied first). Returns 0 (with
 * *ret_st filled), -ESRCH when the process is gone or holds nothing that can
 * be looked at (kernel thread, zombie), or -errno.
 */
int rv_proc_scan_one(struct scan_worker *w, pid_t pid, int *pidfd, struct rv_proc_stat *ret_st)
{
	struct scan_ctx *ctx = w->ctx;
	_cleanup_close_ int pdir = -1, tdir = -1;
	struct rv_proc_stat st;
	char name[16];
	ssize_t n;
	int dir, r;

	w->tmp.pub.nrefs = 0;
	w->tmp.zombie_leader = false;
	w->tmp.alias = false;
	w->tmp.vdso = 0;
	w->hidden = false;
	w->nring_fds = w->ring_maps = 0;
	rv_fmt_uint(name, (unsigned int)pid);
	pdir = openat(ctx->proc_fd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pdir < 0)
		return rv_gone_errno(errno) ? -ESRCH : negative_errno();
	n = rv_proc_read_record_at(w, pdir, "stat");
	if (n < 0) /* out of fds or memory is not "gone": holders would be missed */
		return rv_gone_errno((int)-n) || rv_hidden_errno((int)-n) ? -ESRCH : (int)n;
	if (rv_parse_stat(w->buf, &st) < 0)
		return -ESRCH;
	/* Kernel threads have no user fds or mappings worth a look. */
	if (st.flags & PF_KTHREAD)
		return -ESRCH;
	dir = pdir;
	if (st.state == 'Z' || st.state == 'X') {
		if (st.num_threads <= 1)
			return -ESRCH;
		tdir = open_live_thread(w, pdir, pid);
		if (tdir < 0)
			return tdir;
		dir = tdir;
		w->tmp.zombie_leader = true;
	}
	r = scan_fds(w, dir, pid, pidfd);
	if (r < 0)
		return r;
	r = scan_maps(w, dir, dir == pdir);
	if (r < 0)
		return r;
	r = rv_scan_check_fdless_rings(w, pid);
	if (r < 0)
		return r;
	r = scan_links(w, dir);
	if (r < 0)
		return r;
	*ret_st = st;
	return 0;
}

/* After the pidfd was opened: does the first checkable ref still hold? If
 * not, the pid may have been reused since the scan. */
bool rv_proc_recheck(struct scan_worker *w, pid_t pid)
{
	struct scan_ctx *ctx = w->ctx;
	char name[64];
	int n;

	for (size_t i = 0; i < w->tmp.pub.nrefs; i++) {
		const struct revoke_ref *ref = &w->tmp.pub.refs[i];
		const struct rv_refkind *k = rv_refkind_of(ref);
		struct statx stx;

		if (k->found_in == RV_FOUND_FD_TABLE)
			n = snprintf(name, sizeof(name), "%d/fd/%d", pid, ref->fd);
		else if (k->found_in == RV_FOUND_LINK)
			n = snprintf(name, sizeof(name), "%d/%s", pid, k->link);
		else
			continue;
		if (w->tmp.zombie_leader || n < 0)
			return true; /* the leader's own entries are empty */
		if (statx(ctx->proc_fd, name, STATX_FLAGS, STATX_MASK, &stx) < 0)
			return false;
		return rv_target_match(&ctx->targets[ref->target],
				       makedev(stx.stx_dev_major, stx.stx_dev_minor), stx.stx_ino,
				       rv_stx_mnt_id(&stx));
	}
	return true; /* only mappings, URING or INFLIGHT refs: nothing cheap to recheck */
}

void rv_proc_take_refs(struct scan_worker *w, struct rv_holder *h)
{
	rv_holder_sort_refs(&w->tmp);
	rv_holder_take_refs(h, &w->tmp);
}

int rv_scan_proc_pid(const struct rv_target *targets, size_t ntargets,
		     const struct rv_scan_opts *opts, struct rv_holder *h)
{
	struct rv_scan_opts o = opts ? *opts : (struct rv_scan_opts){0};
	struct scan_worker *w = NULL;
	struct rv_proc_stat st;
	struct scan_ctx ctx;
	int pidfd, r;

	o.flags &= ~RV_SCAN_NO_FDINFO; /* the caller is about to use them */
	r = rv_proc_ctx_init(&ctx, targets, ntargets, &o);
	if (r < 0)
		goto out;
	w = calloc(1, sizeof(*w));
	if (!w) {
		r = -ENOMEM;
		goto out;
	}
	r = rv_proc_worker_init(w, &ctx);
	if (r < 0)
		goto out;
	if (h->pidfd >= 0 && rv_pidfd_alive(h->pidfd) < 0) {
		r = -ESRCH;
		goto out;
	}
	pidfd = h->pidfd;
	r = rv_proc_scan_one(w, h->pub.pid, &pidfd, &st);
	if (pidfd != h->pidfd)
		safe_close(pidfd);
	if (r < 0)
		goto out;
	rv_proc_take_refs(w, h);
out:
	if (w)
		rv_proc_worker_done(w);
	free(w);
	rv_proc_ctx_done(&ctx);
	return r < 0 ? r : 0;
}
