/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A selection of holders (revoke_opts.pids, uids, cgroup): only those
 * processes are holders. Applied to what discovery found, before anyone is
 * stopped, so that a process outside the selection is never stopped; one
 * whose descriptors could not be looked at but whose uid or cgroup shows it
 * is outside is no uninspected process either (an unprivileged user's
 * `revoke --uid $USER` needs no helper). Every criterion given must hold.
 *
 * The cgroup is a cgroup2 subtree, named by a directory of a cgroup2 file
 * system or by its path as /proc/PID/cgroup prints it ("0::/a/b"); both are
 * read relative to the caller's cgroup namespace, as /proc/PID/cgroup is.
 */
#include <fcntl.h>
#include <libmount.h>
#include <linux/magic.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "kinds/select.h"

/* The cgroup2 mount whose root is the root of our cgroup namespace's
 * hierarchy, or (FOR_PATH) the one PATH is on: its mount point in *RET_TARGET
 * and its root in *RET_ROOT (malloc'd). -ENOENT when there is none. */
static int cgroup2_mount(const char *for_path, char **ret_target, char **ret_root)
{
	struct libmnt_table *tb = mnt_new_table();
	struct libmnt_fs *fs = NULL;
	struct libmnt_iter *it = mnt_new_iter(MNT_ITER_FORWARD);
	int r = -ENOENT;

	if (!tb || !it) {
		r = -ENOMEM;
		goto out;
	}
	if (mnt_table_parse_mtab(tb, NULL) < 0) {
		r = -EIO;
		goto out;
	}
	if (for_path) {
		fs = mnt_table_find_mountpoint(tb, for_path, MNT_ITER_BACKWARD);
		if (fs && strcmp(mnt_fs_get_fstype(fs) ?: "", "cgroup2") != 0)
			fs = NULL;
	} else
		while (mnt_table_next_fs(tb, it, &fs) == 0)
			if (strcmp(mnt_fs_get_fstype(fs) ?: "", "cgroup2") == 0 &&
			    strcmp(mnt_fs_get_root(fs) ?: "", "/") == 0)
				break;
			else
				fs = NULL;
	if (fs) {
		*ret_target = strdup(mnt_fs_get_target(fs));
		*ret_root = strdup(mnt_fs_get_root(fs) ?: "/");
		r = *ret_target && *ret_root ? 0 : -ENOMEM;
	}
out:
	mnt_free_iter(it);
	mnt_unref_table(tb);
	return r;
}

/* "/a/b/" -> "/a/b", "//" -> "/" (in place). */
static void trim_slashes(char *p)
{
	size_t n = strlen(p);

	while (n > 1 && p[n - 1] == '/')
		p[--n] = '\0';
}

/* The cgroup path of NAME: a cgroup2 directory, or a cgroup path found
 * under the cgroup2 mount. */
static int resolve_cgroup(const char *name, char **ret)
{
	_cleanup_free_ char *target = NULL, *root = NULL, *real = NULL, *path = NULL;
	struct statfs sfs;
	struct stat st;
	size_t tlen;
	int r;

	if (strlen(name) >= PATH_MAX)
		return -ENAMETOOLONG;
	real = realpath(name, NULL);
	if (real && statfs(real, &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC) {
		if (stat(real, &st) < 0)
			return negative_errno();
		if (!S_ISDIR(st.st_mode))
			return -ENOTDIR;
		r = cgroup2_mount(real, &target, &root);
		if (r < 0)
			return r;
		tlen = strlen(target);
		if (strncmp(real, target, tlen) != 0)
			return -EINVAL;
		if (asprintf(&path, "%s%s%s", root, strcmp(root, "/") == 0 ? "" : "/",
			     real + tlen + (real[tlen] == '/')) < 0)
			return -ENOMEM;
	} else if (name[0] == '/') {
		/* A path as /proc/PID/cgroup prints it: under the cgroup2 root. */
		_cleanup_free_ char *dir = NULL;

		r = cgroup2_mount(NULL, &target, &root);
		if (r < 0) /* none mounted: a directory that exists is no cgroup */
			return real && r == -ENOENT ? -EINVAL : r;
		if (asprintf(&dir, "%s%s", target, name) < 0)
			return -ENOMEM;
		if (stat(dir, &st) < 0)
			return real ? -EINVAL
				    : negative_errno(); /* a directory elsewhere: not cgroup2 */
		if (!S_ISDIR(st.st_mode))
			return -ENOTDIR;
		path = strdup(name);
		if (!path)
			return -ENOMEM;
	} else
		return real ? -EINVAL : -ENOENT;
	trim_slashes(path);
	*ret = TAKE_PTR(path);
	return 0;
}

int rv_select_init(const struct rv_request *req, struct rv_select *ret)
{
	struct rv_select s = {.any = rv_request_selects(req)};
	int r;

	if (!s.any) {
		*ret = s;
		return 0;
	}
	if (req->npids) {
		s.pids = malloc(req->npids * sizeof(pid_t));
		if (!s.pids)
			return -ENOMEM;
		memcpy(s.pids, req->pids, req->npids * sizeof(pid_t));
		s.npids = req->npids;
	}
	if (req->nuids) {
		s.uids = malloc(req->nuids * sizeof(uid_t));
		if (!s.uids) {
			rv_select_done(&s);
			return -ENOMEM;
		}
		memcpy(s.uids, req->uids, req->nuids * sizeof(uid_t));
		s.nuids = req->nuids;
	}
	if (req->cgroup && *req->cgroup) {
		r = resolve_cgroup(req->cgroup, &s.cgroup);
		if (r < 0) {
			rv_select_done(&s);
			return r;
		}
	}
	*ret = s;
	return 0;
}

void rv_select_done(struct rv_select *s)
{
	free(s->pids);
	free(s->uids);
	free(s->cgroup);
	*s = (struct rv_select){0};
}

/* Whether PID's cgroup (v2, "0::/path") is in the subtree S->cgroup. */
static int in_cgroup(const struct rv_select *s, pid_t pid)
{
	char buf[4096], *line, *save = NULL;
	size_t n = strlen(s->cgroup);
	int r;

	r = rv_proc_read_text(pid, "cgroup", buf, sizeof(buf));
	if (r < 0)
		return r;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *p;

		if (strncmp(line, "0::", 3) != 0)
			continue;
		p = line + 3;
		if (strcmp(s->cgroup, "/") == 0)
			return 1;
		return strncmp(p, s->cgroup, n) == 0 && (p[n] == '\0' || p[n] == '/');
	}
	return 0; /* not in the v2 hierarchy */
}

int rv_select_has(const struct rv_select *s, pid_t pid)
{
	bool in = !s->npids;
	int r;

	if (!s->any)
		return 1;
	for (size_t i = 0; i < s->npids && !in; i++)
		in = s->pids[i] == pid;
	if (!in)
		return 0;
	if (s->nuids) {
		struct rv_proc_status st;

		r = rv_proc_status_of(pid, &st);
		if (r < 0)
			return r;
		in = false;
		for (size_t i = 0; i < s->nuids && !in; i++)
			in = s->uids[i] == st.ruid || s->uids[i] == st.euid;
		if (!in)
			return 0;
	}
	if (s->cgroup)
		return in_cgroup(s, pid);
	return 1;
}

size_t rv_select_filter(const struct rv_select *s, struct rv_holders *hs, size_t from)
{
	size_t dropped = 0;

	for (size_t i = from; s->any && i < hs->n; i++) {
		struct rv_holder *h = &hs->v[i];
		int r;

		if (h->other_user || (!h->pub.nrefs && !h->uninspected))
			continue;
		r = rv_select_has(s, h->self ? getpid() : h->pub.pid);
		if (r > 0)
			continue;
		if (r < 0 && r != -ESRCH && r != -ENOENT) {
			/* Nothing tells whether it is in: it may hold the file,
			 * as a process whose descriptors cannot be read. */
			rv_holder_clear(h);
			h->uninspected = true;
			continue;
		}
		/* Outside (or gone): no holder of this call. */
		rv_holder_clear(h);
		h->uninspected = false;
		h->pub.error = 0;
		h->pub.reason[0] = '\0';
		dropped++;
	}
	return dropped;
}
