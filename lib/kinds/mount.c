/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Mounts as targets (REVOKE_MOUNT, REVOKE_UMOUNT): which mounts a mount
 * point stands for, what keeps a filesystem busy that no process table
 * shows, the sync before and the unmount after (the dead directory that
 * current and root directories are moved to: deaddir.c).
 *
 * Mount tables are read with util-linux's libmount (/proc/self/mountinfo
 * and /proc/PID/mountinfo: text the kernel writes, no filesystem is asked,
 * so a dead NFS or FUSE server cannot hang it); the unmount goes through
 * libmount's context as umount(8) does (utab, umount.<type> helpers).
 */
#include <dirent.h>
#include <fcntl.h>
#include <libmount.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "kinds/target.h"

#ifndef STATX_ATTR_MOUNT_ROOT
#define STATX_ATTR_MOUNT_ROOT 0x00002000
#endif

/* PID's mount table (RV_PROC_SELF: ours), or NULL. */
static struct libmnt_table *table_of(pid_t pid)
{
	struct libmnt_table *tb;
	char mountinfo[64];

	if (rv_proc_path(mountinfo, sizeof(mountinfo), pid, 0, "mountinfo") < 0)
		return NULL;
	tb = mnt_new_table();
	if (!tb)
		return NULL;
	if (mnt_table_parse_file(tb, mountinfo) != 0) {
		mnt_unref_table(tb);
		return NULL;
	}
	return tb;
}

static struct libmnt_fs *fs_by_id(struct libmnt_table *tb, uint64_t id)
{
	struct libmnt_iter *itr = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs = NULL, *found = NULL;

	if (!itr)
		return NULL;
	while (mnt_table_next_fs(tb, itr, &fs) == 0)
		if ((uint64_t)mnt_fs_get_id(fs) == id) {
			found = fs;
			break;
		}
	mnt_free_iter(itr);
	return found;
}

static int add_target(struct rv_target **v, size_t *n, size_t *cap, struct rv_target *t)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		struct rv_target *nv = realloc(*v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = ncap;
	}
	(*v)[(*n)++] = *t;
	return 0;
}

/* Stacking filesystems map the file below: maps shows that one's device. */
static bool maps_dev_exact(struct libmnt_fs *fs)
{
	const char *type = mnt_fs_get_fstype(fs);

	return type && strcmp(type, "overlay") != 0 && strcmp(type, "ecryptfs") != 0 &&
	       strncmp(type, "fuse", 4) != 0;
}

static bool have_id(const struct rv_target *v, size_t n, uint64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].mnt_id == id)
			return true;
	return false;
}

/* Every mount beneath the targets [from, *n) of TB, breadth first. */
static int add_submounts(struct libmnt_table *tb, struct rv_target **v, size_t *n, size_t *cap,
			 size_t from)
{
	struct libmnt_iter *itr = mnt_new_iter(MNT_ITER_FORWARD);
	int r = 0;

	if (!itr)
		return -ENOMEM;
	for (size_t i = from; i < *n && r == 0; i++) {
		struct libmnt_fs *fs = NULL;
		uint64_t parent = (*v)[i].mnt_id;
		unsigned int depth = (*v)[i].depth + 1;

		mnt_reset_iter(itr, MNT_ITER_FORWARD);
		while (r == 0 && mnt_table_next_fs(tb, itr, &fs) == 0) {
			struct rv_target t = {.path_fd = -1, .mount = true, .mode = S_IFDIR};
			uint64_t id = (uint64_t)mnt_fs_get_id(fs);

			if ((uint64_t)mnt_fs_get_parent_id(fs) != parent || id == parent ||
			    have_id(*v, *n, id))
				continue;
			t.mnt_id = id;
			t.depth = depth;
			t.dev = mnt_fs_get_devno(fs);
			t.maps_dev_exact = maps_dev_exact(fs);
			t.path = strdup(mnt_fs_get_target(fs) ? mnt_fs_get_target(fs) : "?");
			if (!t.path)
				r = -ENOMEM;
			else if ((r = add_target(v, n, cap, &t)) < 0)
				free(t.path);
		}
	}
	mnt_free_iter(itr);
	return r;
}

static int resolve_one(const struct rv_request *req, const char *path, const struct rv_guard *guard,
		       struct libmnt_table *tb, struct rv_target *ret)
{
	int flags = O_PATH | O_CLOEXEC | (req->flags & REVOKE_NOFOLLOW ? O_NOFOLLOW : 0);
	_cleanup_close_ int fd = -1;
	struct libmnt_fs *fs;
	struct statx stx;

	fd = rv_open_bounded(path, flags, req->deadline_ns);
	if (fd < 0)
		return fd;
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC,
		  STATX_TYPE | STATX_MODE | STATX_INO | STATX_UID | STATX_MNT_ID, &stx) < 0)
		return negative_errno();
	if (!(stx.stx_mask & STATX_MNT_ID))
		return -EOPNOTSUPP; /* Linux < 5.8 */
	fs = fs_by_id(tb, stx.stx_mnt_id);
	if (!fs)
		return -EINVAL; /* not a mount of our namespace */
	/* Its root, or the root of a bind mount of a subdirectory: a mount
	 * point either way. Anything else names a file on a mount. */
	if ((stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)
		? !(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT)
		: false)
		return -EINVAL;
	*ret = (struct rv_target){
	    .dev = mnt_fs_get_devno(fs),
	    .ino = stx.stx_ino,
	    .mode = stx.stx_mode,
	    .uid = stx.stx_uid,
	    .mount = true,
	    .mnt_id = stx.stx_mnt_id,
	    .path_fd = -1,
	    .maps_dev_exact = maps_dev_exact(fs),
	};
	if (guard)
		pthread_mutex_lock(guard->mu);
	ret->path = guard && *guard->gone ? NULL : strdup(path);
	if (guard)
		pthread_mutex_unlock(guard->mu);
	if (!ret->path)
		return -ENOMEM;
	ret->path_fd = TAKE_FD(fd);
	return 0;
}

/* FN(pid, its mount table, ARG) once per mount namespace other than ours,
 * with one process of it; stops at FN's first error. */
static int each_other_namespace(int (*fn)(pid_t, struct libmnt_table *, void *), void *arg)
{
	_cleanup_closedir_ DIR *d = rv_proc_opendir(RV_PROC_TOP, 0, ".");
	_cleanup_free_ char(*seen)[64] = NULL;
	char self_ns[64] = "", ns[64];
	size_t nseen = 0, cap = 0;
	struct dirent *e;
	int r = 0;
	ssize_t len;

	len = rv_proc_readlink(RV_PROC_SELF, 0, self_ns, sizeof(self_ns), "ns/mnt");
	if (!d || len <= 0)
		return 0;
	while (r >= 0 && (e = readdir(d))) {
		struct libmnt_table *tb;
		bool dup = false;
		int pid;

		if (rv_parse_int(e->d_name, &pid) < 0)
			continue;
		len = rv_proc_readlink(pid, 0, ns, sizeof(ns), "ns/mnt");
		if (len <= 0) /* a kernel thread, gone, or not ours to see */
			continue;
		if (strcmp(ns, self_ns) == 0)
			continue;
		for (size_t i = 0; i < nseen && !dup; i++)
			dup = strcmp(seen[i], ns) == 0;
		if (dup)
			continue;
		if (nseen == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			char(*sv)[64] = realloc(seen, ncap * sizeof(*sv));

			if (!sv)
				return -ENOMEM;
			seen = sv;
			cap = ncap;
		}
		memcpy(seen[nseen++], ns, sizeof(ns));
		tb = table_of(pid);
		if (!tb)
			continue;
		r = fn(pid, tb, arg);
		mnt_unref_table(tb);
	}
	return r;
}

/* "shared:N" or "master:N" among a mountinfo line's optional fields, or 0. */
static unsigned long peer_group(struct libmnt_fs *fs, const char *key)
{
	const char *p = mnt_fs_get_optional_fields(fs);
	size_t klen = strlen(key);

	while (p && *p) {
		if (strncmp(p, key, klen) == 0 && p[klen] == ':')
			return strtoul(p + klen + 1, NULL, 10);
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	return 0;
}

struct copies {
	struct rv_target **v;
	size_t *n, *cap;
	size_t nours;
	unsigned long *groups; /* the peer group of each of our targets' parent, or 0 */
};

/* A mount in another namespace whose parent is a peer or a slave of the
 * parent of one of ours, of the same filesystem: umount propagates through
 * the parent's peer group (fs/pnode.c), so our unmount takes that copy
 * along, and fails while it is busy. What is reached through it is a
 * target too. */
static int add_copies(pid_t pid, struct libmnt_table *tb, void *arg)
{
	struct copies *c = arg;
	struct libmnt_iter *itr = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs = NULL;
	int r = 0;

	if (!itr)
		return -ENOMEM;
	while (r == 0 && mnt_table_next_fs(tb, itr, &fs) == 0) {
		struct libmnt_fs *parent = fs_by_id(tb, (uint64_t)mnt_fs_get_parent_id(fs));
		unsigned long shared = parent ? peer_group(parent, "shared") : 0;
		unsigned long master = parent ? peer_group(parent, "master") : 0;
		uint64_t id = (uint64_t)mnt_fs_get_id(fs);

		if ((!shared && !master) || have_id(*c->v, *c->n, id))
			continue;
		for (size_t i = 0; i < c->nours && r == 0; i++) {
			struct rv_target t = {.path_fd = -1, .mount = true, .foreign = true};
			char path[4200];

			if (!c->groups[i] || (c->groups[i] != shared && c->groups[i] != master) ||
			    (*c->v)[i].dev != mnt_fs_get_devno(fs))
				continue;
			snprintf(path, sizeof(path), "%s (mount namespace of pid %d)",
				 mnt_fs_get_target(fs) ? mnt_fs_get_target(fs) : "?", pid);
			t.mnt_id = id;
			t.dev = mnt_fs_get_devno(fs);
			t.maps_dev_exact = maps_dev_exact(fs);
			t.mode = S_IFDIR;
			t.depth = (*c->v)[i].depth;
			t.path = strdup(path);
			if (!t.path)
				r = -ENOMEM;
			else if ((r = add_target(c->v, c->n, c->cap, &t)) < 0)
				free(t.path);
			break;
		}
	}
	mnt_free_iter(itr);
	return r;
}

int rv_mounts_resolve(const struct rv_request *req, const struct rv_guard *guard,
		      struct rv_target **ret, size_t *ret_n)
{
	struct libmnt_table *tb = table_of(RV_PROC_SELF);
	struct rv_target *v = NULL;
	size_t n = 0, cap = 0;
	int r = 0;

	if (!tb)
		return -ENOMEM;
	for (size_t i = 0; i < req->npaths && r == 0; i++) {
		struct rv_target t;
		size_t from = n;

		r = resolve_one(req, req->paths[i], guard, tb, &t);
		if (r < 0)
			break;
		if (have_id(v, n, t.mnt_id)) { /* named twice, or beneath another */
			safe_close(t.path_fd);
			free(t.path);
			continue;
		}
		r = add_target(&v, &n, &cap, &t);
		if (r < 0) {
			safe_close(t.path_fd);
			free(t.path);
			break;
		}
		if (!(req->flags & REVOKE_NO_SUBMOUNTS))
			r = add_submounts(tb, &v, &n, &cap, from);
	}
	if (r == 0 && n) {
		_cleanup_free_ unsigned long *groups = calloc(n, sizeof(*groups));
		struct copies c = {&v, &n, &cap, n, groups};
		bool any = false;

		for (size_t i = 0; groups && i < n; i++) {
			struct libmnt_fs *fs = fs_by_id(tb, v[i].mnt_id);
			struct libmnt_fs *parent =
			    fs ? fs_by_id(tb, (uint64_t)mnt_fs_get_parent_id(fs)) : NULL;

			groups[i] = parent ? peer_group(parent, "shared") : 0;
			any |= groups[i] != 0;
		}
		if (!groups)
			r = -ENOMEM;
		else if (any)
			r = each_other_namespace(add_copies, &c);
	}
	mnt_unref_table(tb);
	/* Cutting the mount our own root is on would cut this process, and
	 * every other on it, out of its file tree: no one means that. */
	if (r == 0 && !(req->flags & REVOKE_LIST_ONLY)) {
		struct statx stx;

		if (statx(AT_FDCWD, "/", AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) < 0)
			r = negative_errno();
		else if (have_id(v, n, rv_stx_mnt_id(&stx)))
			r = -EBUSY;
	}
	if (r < 0) {
		rv_targets_free(v, n);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

/* ---- what else keeps it busy ------------------------------------------------ */

static int add_user(struct rv_holders *hs, pid_t pid, const char *comm, int type, size_t target)
{
	struct rv_holder *h = rv_holders_add(hs, pid);
	struct revoke_ref *ref;

	if (!h)
		return -ENOMEM;
	snprintf(h->pub.comm, sizeof(h->pub.comm), "%.63s", comm);
	h->other_user = true;
	ref = rv_holder_add_ref(h);
	if (!ref)
		return -ENOMEM;
	ref->type = type;
	ref->state = REVOKE_STATE_UNREACHABLE;
	ref->error = EBUSY;
	ref->target = (unsigned int)target;
	return 1;
}

/* The target that PATH (a file some kernel user holds) is on, or -1. */
static ssize_t target_of_path(const struct rv_target *t, size_t n, const char *path)
{
	struct statx stx;

	if (statx(AT_FDCWD, path, AT_STATX_DONT_SYNC, STATX_INO | STATX_MNT_ID, &stx) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (rv_target_match(&t[i], makedev(stx.stx_dev_major, stx.stx_dev_minor),
				    stx.stx_ino, rv_stx_mnt_id(&stx)))
			return (ssize_t)i;
	return -1;
}

/* /proc/swaps names files with spaces and such as octal escapes. */
static void unescape(char *s)
{
	char *o = s;

	for (char *p = s; *p; p++) {
		if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
		    p[3] >= '0' && p[3] <= '7') {
			*o++ = (char)((p[1] - '0') << 6 | (p[2] - '0') << 3 | (p[3] - '0'));
			p += 3;
		} else
			*o++ = *p;
	}
	*o = '\0';
}

static int swap_users(const struct rv_target *t, size_t n, struct rv_holders *hs)
{
	_cleanup_fclose_ FILE *f = rv_proc_fopen(RV_PROC_TOP, 0, "swaps");
	char line[4352], name[4096], type[32];
	int added = 0, r;

	if (!f)
		return 0; /* no swap support */
	while (fgets(line, sizeof(line), f)) {
		ssize_t i;

		if (sscanf(line, "%4095s %31s", name, type) != 2 || strcmp(type, "file") != 0)
			continue;
		unescape(name);
		i = target_of_path(t, n, name);
		if (i < 0)
			continue;
		r = add_user(hs, 0, "swap", REVOKE_REF_SWAP, (size_t)i);
		if (r < 0)
			return r;
		added++;
	}
	return added;
}

static int loop_users(const struct rv_target *t, size_t n, struct rv_holders *hs)
{
	_cleanup_closedir_ DIR *d = opendir("/sys/block");
	struct dirent *e;
	int added = 0, r;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char path[300], name[4096];
		_cleanup_fclose_ FILE *f = NULL;
		static const char deleted[] = " (deleted)";
		size_t len;
		ssize_t i;

		if (strncmp(e->d_name, "loop", 4) != 0)
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/loop/backing_file", e->d_name);
		f = fopen(path, "re");
		if (!f || !fgets(name, sizeof(name), f))
			continue;
		len = strcspn(name, "\n");
		name[len] = '\0';
		if (len > sizeof(deleted) - 1 &&
		    strcmp(name + len - (sizeof(deleted) - 1), deleted) == 0)
			name[len - (sizeof(deleted) - 1)] = '\0';
		i = target_of_path(t, n, name);
		if (i < 0)
			continue;
		r = add_user(hs, 0, e->d_name, REVOKE_REF_LOOP, (size_t)i);
		if (r < 0)
			return r;
		added++;
	}
	return added;
}

struct ns_users {
	const struct rv_target *t;
	size_t n;
	struct rv_holders *hs;
	int added;
};

/* The same filesystem mounted in another namespace, not as a copy that our
 * unmount takes along (those are targets): it stays mounted there. */
static int ns_user(pid_t pid, struct libmnt_table *tb, void *arg)
{
	struct ns_users *u = arg;
	struct libmnt_iter *itr = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs = NULL;
	int r = 0;

	if (!itr)
		return -ENOMEM;
	while (r == 0 && mnt_table_next_fs(tb, itr, &fs) == 0) {
		dev_t dev = mnt_fs_get_devno(fs);

		if (have_id(u->t, u->n, (uint64_t)mnt_fs_get_id(fs)))
			continue;
		for (size_t i = 0; i < u->n; i++) {
			char comm[64] = "?";
			_cleanup_fclose_ FILE *f = NULL;

			if (u->t[i].dev != dev)
				continue;
			f = rv_proc_fopen(pid, 0, "comm");
			if (f && fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = '\0';
			r = add_user(u->hs, pid, comm, REVOKE_REF_MOUNT, i);
			if (r > 0) {
				u->added++;
				r = 1; /* one line per namespace */
			}
			break;
		}
	}
	mnt_free_iter(itr);
	return r < 0 ? r : 0;
}

static int namespace_users(const struct rv_target *t, size_t n, struct rv_holders *hs)
{
	struct ns_users u = {t, n, hs, 0};
	int r = each_other_namespace(ns_user, &u);

	return r < 0 ? r : u.added;
}

int rv_mounts_other_users(const struct rv_target *t, size_t n, struct rv_holders *hs)
{
	int (*const kinds[])(const struct rv_target *, size_t,
			     struct rv_holders *) = {swap_users, loop_users, namespace_users};
	int added = 0;

	for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
		int r = kinds[k](t, n, hs);

		if (r < 0)
			return r;
		added += r;
	}
	return added;
}

/* ---- sync and unmount ------------------------------------------------------- */

int rv_mounts_sync(const struct rv_target *t, size_t n, uint64_t deadline)
{
	for (size_t i = 0; i < n; i++) {
		_cleanup_close_ int fd = -1;
		struct statx stx;

		if (t[i].foreign) /* the same filesystem as one of ours */
			continue;
		/* By path, in the lookup process (which has none of our
		 * descriptors: /proc/self/fd/N would name nothing there). */
		fd = rv_open_bounded(t[i].path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, deadline);
		if (fd == -ETIMEDOUT)
			return fd;
		/* A mount shadowed by another, or gone: its own unmount syncs
		 * it (or it needs none). */
		if (fd < 0 ||
		    statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) < 0 ||
		    rv_stx_mnt_id(&stx) != t[i].mnt_id)
			continue;
		if (syncfs(fd) < 0)
			return negative_errno();
	}
	return 0;
}

static int cmp_depth_desc(const void *a, const void *b)
{
	const struct rv_target *x = *(const struct rv_target *const *)a;
	const struct rv_target *y = *(const struct rv_target *const *)b;

	return (x->depth < y->depth) - (x->depth > y->depth);
}

int rv_mounts_umount(const struct rv_target *t, size_t n, bool native, size_t *ret_done,
		     char detail[128])
{
	_cleanup_free_ const struct rv_target **order = calloc(n ? n : 1, sizeof(*order));
	size_t done = 0;
	int r = 0;

	if (!order)
		return -ENOMEM;
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (!t[i].foreign) /* unmounted by propagation, with ours */
			order[k++] = &t[i];
	qsort(order, k, sizeof(*order), cmp_depth_desc);
	for (size_t i = 0; i < k && r == 0; i++) {
		struct libmnt_table *tb = table_of(RV_PROC_SELF);
		struct libmnt_context *cxt;
		struct libmnt_fs *fs;
		char target[4096];
		int rc;

		if (!tb)
			return -ENOMEM;
		fs = fs_by_id(tb, order[i]->mnt_id);
		if (!fs || !mnt_fs_get_target(fs)) { /* gone already */
			mnt_unref_table(tb);
			done++;
			continue;
		}
		snprintf(target, sizeof(target), "%s", mnt_fs_get_target(fs));
		mnt_unref_table(tb);
		if (native) {
			r = rv_native_umount(target);
			if (r < 0)
				snprintf(detail, 128, "%.127s", target);
			else
				done++;
			continue;
		}
		cxt = mnt_new_context();
		if (!cxt)
			return -ENOMEM;
		rc = mnt_context_set_target(cxt, target);
		if (rc == 0)
			rc = mnt_context_umount(cxt);
		if (rc != 0) {
			int err = mnt_context_syscall_called(cxt)
				      ? mnt_context_get_syscall_errno(cxt)
				      : (rc < 0 ? -rc : EINVAL);

			r = err > 0 ? -err : -EIO;
			snprintf(detail, 128, "%.127s", target);
		} else
			done++;
		mnt_free_context(cxt);
	}
	/* The copies in other namespaces went by propagation with the last. */
	if (r == 0)
		done = n;
	*ret_done = done;
	return r;
}
