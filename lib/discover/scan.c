/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Discovery entry points and the /proc reader for one process.
 *
 * rv_scan picks the BPF iterators when they can be used (unless /proc is
 * forced) and falls back to /proc silently when they cannot; rv_scan_pid
 * always reads /proc (one process, already stopped).
 *
 * Reading one process: its fd table, mappings, cwd, root and exe, plus the
 * references no fd table shows (io_uring fixed files, fds in flight in
 * SCM_RIGHTS messages). Identity is (st_dev, st_ino) of what a /proc link
 * resolves to, never a name. Cost when it holds nothing: open /proc/PID
 * (O_PATH), read stat, getdents of fd/ into a reused buffer, ONE statx per
 * fd (relative to the fd/ directory), read maps, one statx per distinct
 * mapped file, three statx for cwd/root/exe. Each fd that matches costs a
 * read of fdinfo/N more (its flags and position), unless RV_SCAN_NO_FDINFO;
 * sockets cost a read of fdinfo/N (scm_fds), anon inodes a readlink (io_uring).
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
#include "discover/scan_proc.h"
#include "kinds/target.h"

#ifndef HAVE_BPF
#define HAVE_BPF 0
#endif

#define PF_KTHREAD  0x00200000u
#define STATX_FLAGS AT_STATX_DONT_SYNC
#define STATX_MASK  (STATX_TYPE | STATX_INO | STATX_MNT_ID)

int rv_pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* The highest descriptor a holder may keep as its pidfd: a quarter of
 * RLIMIT_NOFILE (at least 32, at most 256) stays free for the scan's and the
 * cut's own passing descriptors. */
long rv_pidfd_max(void)
{
	struct rlimit rl;
	rlim_t reserve;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur > INT_MAX)
		return INT_MAX;
	reserve = rl.rlim_cur / 4 < 32 ? 32 : rl.rlim_cur / 4 > 256 ? 256 : rl.rlim_cur / 4;
	return (long)rl.rlim_cur - (long)reserve - 1;
}

int rv_holder_pidfd(pid_t pid, int *pidfd, long *max)
{
	if (*max == 0)
		*max = rv_pidfd_max();
	if (*pidfd < 0) {
		*pidfd = rv_pidfd_open(pid);
		/* Out of descriptors (3000 holders against the default soft
		 * limit of 1024): the holder goes without a pidfd. */
		if (*pidfd < 0 && errno != ENOSYS && errno != EMFILE && errno != ENFILE)
			return negative_errno();
	}
	if (*pidfd > *max)
		*pidfd = safe_close(*pidfd);
	return 0;
}

static int pidfd_getfd_(int pidfd, int fd)
{
	return (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
}

int rv_pidfd_alive(int pidfd)
{
	return syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0 ? negative_errno() : 0;
}

static void fmt_uint(char *p, unsigned int v)
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

static struct revoke_ref *add_ref(struct scan_worker *w, int type, size_t target, int fd)
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

static bool ref_exists(struct scan_worker *w, int type, size_t target, int fd)
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
static int fdinfo_of(struct scan_worker *w, int dir, int *fdinfo_dir, int fd, struct rv_fdinfo *ret)
{
	char name[16];
	ssize_t n;

	if (*fdinfo_dir < 0) {
		*fdinfo_dir = openat(dir, "fdinfo", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (*fdinfo_dir < 0)
			return negative_errno();
	}
	fmt_uint(name, (unsigned int)fd);
	n = rv_proc_read_record_at(w, *fdinfo_dir, name);
	if (n < 0)
		return (int)n;
	return rv_parse_fdinfo(w->buf, ret);
}

static int add_fd_ref(struct scan_worker *w, int dir, int *fdinfo_dir, int fd, size_t target)
{
	struct rv_fdinfo fi;
	struct revoke_ref *ref;
	int r;

	if (w->ctx->opts && (w->ctx->opts->flags & RV_SCAN_NO_FDINFO))
		return add_ref(w, REVOKE_REF_FD, target, fd) ? 0 : -ENOMEM;
	r = fdinfo_of(w, dir, fdinfo_dir, fd, &fi);
	if (r < 0) /* closed in between: nothing to report */
		return rv_gone_errno(-r) || rv_hidden_errno(-r) || r == -EINVAL ? 0 : r;
	ref = add_ref(w, REVOKE_REF_FD, target, fd);
	if (!ref)
		return -ENOMEM;
	ref->fd_flags = (fi.flags & O_CLOEXEC) ? FD_CLOEXEC : 0;
	ref->open_flags = fi.flags & ~O_CLOEXEC;
	ref->offset = fi.pos;
	return 0;
}

static bool uring_name_matches(const struct target_names *tn, const struct rv_target *t,
			       const char *name)
{
	if (t->mount) {
		/* Anything under the mount point (6.x gives full paths; the
		 * older bare names cannot tell). */
		size_t len = tn->real ? strlen(tn->real) : 0;

		if (len == 1) /* the root mount: every full path */
			return name[0] == '/';
		return len && strncmp(name, tn->real, len) == 0 &&
		       (name[len] == '/' || name[len] == '\0');
	}
	if (strchr(name, '/'))
		return (tn->real && strcmp(name, tn->real) == 0) ||
		       (t->path && t->path[0] == '/' && strcmp(name, t->path) == 0);
	/* Before Linux 6.x the list shows the dentry name only: the best
	 * that can be done is comparing last components. */
	return tn->base && strcmp(name, tn->base) == 0;
}

/* An anon inode: if it is an io_uring, look for the targets among its
 * registered files. fdinfo lists only names, so names are compared; the
 * list is empty when the ring's lock was busy at that moment. */
static int check_uring(struct scan_worker *w, int dir, int *fdinfo_dir, int fdd, const char *fdname,
		       int fd)
{
	static const char uring[] = "anon_inode:[io_uring]";
	struct scan_ctx *ctx = w->ctx;
	const char *cursor = NULL;
	char link[64], name[4096];
	uint32_t slot = 0;
	ssize_t n;
	int r;

	n = readlinkat(fdd, fdname, link, sizeof(link) - 1);
	if (n != (ssize_t)strlen(uring) || memcmp(link, uring, (size_t)n) != 0)
		return 0;
	if (w->nring_fds < ARRAY_SIZE(w->ring_fds))
		w->ring_fds[w->nring_fds] = fd;
	w->nring_fds++;
	r = fdinfo_of(w, dir, fdinfo_dir, fd, &(struct rv_fdinfo){0});
	if (r < 0)
		return rv_gone_errno(-r) || rv_hidden_errno(-r) || r == -EINVAL ? 0 : r;
	/* One ref per slot: the cut empties slots (cut.c). A name that
	 * matches two targets (a mount and a file on it) is one slot, cut once. */
	while ((r = rv_fdinfo_next_user_slot(w->buf, &cursor, name, sizeof(name), &slot)) != 1) {
		if (r < 0)
			continue; /* a name too long to be a target's */
		for (size_t t = 0; t < ctx->ntargets; t++) {
			struct revoke_ref *ref;

			if (!uring_name_matches(&ctx->names[t], &ctx->targets[t], name))
				continue;
			ref = add_ref(w, REVOKE_REF_URING, t, fd);
			if (!ref)
				return -ENOMEM;
			ref->offset = slot;
			break;
		}
	}
	return 0;
}

/*
 * A unix socket whose receive queue holds SCM_RIGHTS fds: take a copy of the
 * socket (pidfd_getfd) and peek at the first message that carries fds. Only
 * that one message is seen (MSG_PEEK stops at it, and moving SO_PEEK_OFF
 * would disturb the owner's own peeking; if the owner itself set SO_PEEK_OFF
 * our peek starts at, and advances, its offset). When the copy is refused
 * (no ptrace permission over the owner) nothing can be said and nothing is
 * reported. Known hazard: closing a received fd runs the file's ->flush, so
 * a FUSE file in flight whose server hangs would block this close.
 */
static int check_inflight(struct scan_worker *w, int dir, int *fdinfo_dir, pid_t pid, int fd,
			  int *pidfd)
{
	enum { PEEK_SIZE = 65536, MAX_FDS = 253 /* SCM_MAX_FD */ };
	struct scan_ctx *ctx = w->ctx;
	union {
		char buf[CMSG_SPACE(MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} control;
	_cleanup_close_ int sock = -1;
	struct iovec iov;
	struct msghdr msg = {0};
	struct rv_fdinfo fi;
	int r = 0;

	r = fdinfo_of(w, dir, fdinfo_dir, fd, &fi);
	if (r == -EMFILE || r == -ENFILE || r == -ENOMEM)
		return r;
	if (r < 0 || fi.scm_fds <= 0)
		return 0;
	if (*pidfd < 0) {
		*pidfd = rv_pidfd_open(pid);
		if (*pidfd < 0)
			return errno == EMFILE || errno == ENFILE || errno == ENOMEM ? -errno : 0;
	}
	sock = pidfd_getfd_(*pidfd, fd);
	if (sock < 0)
		return errno == EMFILE || errno == ENFILE || errno == ENOMEM ? -errno : 0;
	if (!w->peek) {
		w->peek = malloc(PEEK_SIZE);
		if (!w->peek)
			return -ENOMEM;
	}
	iov = (struct iovec){.iov_base = w->peek, .iov_len = PEEK_SIZE};
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = control.buf;
	msg.msg_controllen = sizeof(control.buf);
	if (recvmsg(sock, &msg, MSG_PEEK | MSG_DONTWAIT | MSG_CMSG_CLOEXEC) < 0)
		return 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		size_t nfds;
		int *fds;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		fds = (int *)(void *)CMSG_DATA(c);
		nfds = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < nfds; i++) {
			struct statx stx;

			if (r == 0 &&
			    statx(fds[i], "", AT_EMPTY_PATH | STATX_FLAGS, STATX_MASK, &stx) == 0)
				for (size_t t = 0; t < ctx->ntargets; t++)
					if (rv_target_match(
						&ctx->targets[t],
						makedev(stx.stx_dev_major, stx.stx_dev_minor),
						stx.stx_ino, rv_stx_mnt_id(&stx)) &&
					    !ref_exists(w, REVOKE_REF_INFLIGHT, t, fd) &&
					    !add_ref(w, REVOKE_REF_INFLIGHT, t, fd))
						r = -ENOMEM;
			close(fds[i]);
		}
	}
	return r;
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
			for (size_t t = 0; t < ctx->ntargets; t++)
				if (rv_target_match(&ctx->targets[t], dev, stx.stx_ino,
						    rv_stx_mnt_id(&stx))) {
					r = add_fd_ref(w, dir, &fdinfo_dir, fd, t);
					if (r < 0)
						return r;
				}
			r = 0;
			if (S_ISSOCK(stx.stx_mode))
				r = check_inflight(w, dir, &fdinfo_dir, pid, fd, pidfd);
			else if (ctx->have_anon_dev && dev == ctx->anon_dev)
				r = check_uring(w, dir, &fdinfo_dir, fdd, d->d_name, fd);
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
			ref = add_ref(w, REVOKE_REF_MAP, t, -1);
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

/*
 * A ring it maps but holds no descriptor of (registered with
 * IORING_REGISTER_RING_FDS and closed, or passed on): no fdinfo lists its
 * registered files, so it may hold any target. One URING ref without a
 * descriptor per target, which the userspace engine cannot cut (cut.c).
 * Dup'd descriptors of one ring count once.
 */
static int check_fdless_rings(struct scan_worker *w, pid_t pid)
{
	unsigned int held = w->nring_fds;

	if (w->ring_maps == 0 || held < w->ring_maps)
		goto fdless;
	for (unsigned int i = 1; i < w->nring_fds && i < ARRAY_SIZE(w->ring_fds); i++)
		for (unsigned int j = 0; j < i; j++)
			if (syscall(SYS_kcmp, pid, pid, KCMP_FILE, w->ring_fds[j],
				    w->ring_fds[i]) == 0) {
				held--;
				break;
			}
	if (w->ring_maps <= held)
		return 0;
fdless:
	/* Without the anon inodes' device no ring descriptor was recognised. */
	if (w->ring_maps == 0 || !w->ctx->have_anon_dev)
		return 0;
	for (size_t t = 0; t < w->ctx->ntargets; t++)
		if (!add_ref(w, REVOKE_REF_URING, t, -1))
			return -ENOMEM;
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
			    !add_ref(w, k[i].type, t, -1))
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
	w->tmp.vdso = 0;
	w->hidden = false;
	w->nring_fds = w->ring_maps = 0;
	fmt_uint(name, (unsigned int)pid);
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
	r = check_fdless_rings(w, pid);
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
		const char *what;
		struct statx stx;

		switch (ref->type) {
		case REVOKE_REF_FD:
			n = snprintf(name, sizeof(name), "%d/fd/%d", pid, ref->fd);
			break;
		case REVOKE_REF_CWD:
		case REVOKE_REF_ROOT:
		case REVOKE_REF_EXE:
			what = ref->type == REVOKE_REF_CWD    ? "cwd"
			       : ref->type == REVOKE_REF_ROOT ? "root"
							      : "exe";
			n = snprintf(name, sizeof(name), "%d/%s", pid, what);
			break;
		default:
			continue;
		}
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

#if HAVE_BPF
/* Errors that mean "BPF is not available here", not "the scan failed". */
static int bpf_unavailable(int r)
{
	return r == -EOPNOTSUPP || r == -EPERM || r == -ENOSYS || r == -EACCES;
}
#endif

#if !HAVE_BPF
void rv_bpf_free(struct rv_bpf *b)
{
	(void)b;
}
#endif

int rv_scan(const struct rv_target *targets, size_t ntargets, const struct rv_scan_opts *opts,
	    struct rv_holders *ret)
{
	unsigned int flags = opts ? opts->flags : 0;
	int r;

	if ((flags & REVOKE_DISCOVERY_PROC) && (flags & REVOKE_DISCOVERY_BPF))
		return -EINVAL;

	/* The iterators compare (dev, ino); a mount needs the mount of each
	 * file, which /proc gives. */
	if (rv_targets_have_mount(targets, ntargets)) {
		if (flags & REVOKE_DISCOVERY_BPF)
			return -EOPNOTSUPP;
		flags |= REVOKE_DISCOVERY_PROC;
	}
	if (!(flags & REVOKE_DISCOVERY_PROC)) {
#if HAVE_BPF
		r = rv_scan_bpf(targets, ntargets, opts, ret);
		if (r >= 0)
			return REVOKE_DISC_BPF;
		if ((flags & REVOKE_DISCOVERY_BPF) || !bpf_unavailable(r))
			return r;
#else
		if (flags & REVOKE_DISCOVERY_BPF)
			return -EOPNOTSUPP; /* built without BPF */
#endif
	}

	r = rv_scan_proc(targets, ntargets, opts, ret);
	if (r < 0)
		return r;
	return REVOKE_DISC_PROC;
}

int rv_scan_pid(const struct rv_target *targets, size_t ntargets, const struct rv_scan_opts *opts,
		struct rv_holder *h)
{
	return rv_scan_proc_pid(targets, ntargets, opts, h);
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
