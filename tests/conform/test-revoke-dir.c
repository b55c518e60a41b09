/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Conformance: revoking a directory D (issue 11, item 5). Every reference to
 * D's inode is cut: a descriptor of it becomes a dead one, a process whose
 * current directory is D and one chrooted into D are moved into the dead
 * directory (empty and deleted: getcwd() and relative lookups fail with
 * ENOENT). A process whose cwd is a subdirectory of D holds no reference to
 * D's inode and is left alone, as BSD's revoke(2) leaves it; the files under
 * D are untouched. The userspace engine: the native revoke(2) does not move
 * current or root directories.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "revoke.h"
#include "call.h"
#include "fork.h"
#include "proc.h"
#include "scratch.h"
#include "victim.h"

static struct victim_res v_path_op(struct victim *v, int op, const char *path, int flags)
{
	struct victim_req q = {.op = op, .flags = flags};

	snprintf(q.path, sizeof(q.path), "%s", path);
	return victim_call(v, &q);
}

static void v_must(struct victim *v, int op, const char *path)
{
	struct victim_res r = v_path_op(v, op, path, 0);

	CHECK(r.ret >= 0, "victim %d: op %d on %s: %s", (int)v->pid, op, path, strerror(r.err));
}

static struct stat stat_fd(struct victim *v, int fd, const char *who)
{
	struct victim_res r = victim_call(v, VICTIM_REQ(.op = VOP_FSTAT, .fd = fd));
	struct stat st;

	CHECK(r.ret == 0, "%s: fstat: %s", who, strerror(r.err));
	memcpy(&st, r.data, sizeof(st));
	return st;
}

/* "." of V is an empty, deleted directory that is neither D nor "/". */
static void check_in_dead_dir(struct victim *v, const char *who, const struct stat *d)
{
	struct victim_res r = v_path_op(v, VOP_OPEN, ".", O_RDONLY | O_DIRECTORY);
	struct stat st, root;

	CHECK(stat("/", &root) == 0, "stat /: %m");
	CHECK(r.ret >= 0, "%s: open(\".\"): %s", who, strerror(r.err));
	st = stat_fd(v, (int)r.ret, who);
	victim_call(v, VICTIM_REQ(.op = VOP_CLOSE, .fd = (int)r.ret));
	CHECK(S_ISDIR(st.st_mode) && st.st_nlink == 0,
	      "%s: \".\" is not a deleted directory (mode 0%o, %lu links)", who, st.st_mode,
	      (unsigned long)st.st_nlink);
	CHECK(!(st.st_dev == d->st_dev && st.st_ino == d->st_ino), "%s: \".\" is still D", who);
	CHECK(!(st.st_dev == root.st_dev && st.st_ino == root.st_ino), "%s: \".\" is the real root",
	      who);
	r = victim_call(v, VICTIM_REQ(.op = VOP_GETCWD));
	CHECK(r.ret == -1 && r.err == ENOENT, "%s: getcwd gave %ld (%s) '%.*s', not ENOENT", who,
	      r.ret, strerror(r.err), (int)r.len, r.data);
	r = v_path_op(v, VOP_OPEN, "inside", O_RDONLY);
	CHECK(r.ret == -1 && r.err == ENOENT, "%s: open(\"inside\") gave %ld (%s), not ENOENT", who,
	      r.ret, strerror(r.err));
}

static const struct revoke_ref *ref_of(const struct revoke_report *rep, pid_t pid, int type)
{
	for (size_t i = 0; i < rep->nholders; i++) {
		const struct revoke_holder *h = revoke_report_holder(rep, i);

		for (size_t j = 0; h->pid == pid && j < h->nrefs; j++)
			if (revoke_report_ref(rep, h, j)->type == type)
				return revoke_report_ref(rep, h, j);
	}
	return NULL;
}

static void t_dir_refs_cut(void)
{
	const char *tmp = test_scratch();
	struct revoke_opts opts = {
	    .sz = sizeof(opts), .flags = REVOKE_ENGINE_USERSPACE, .keep_fd = -1};
	struct revoke_report *rep = NULL;
	struct victim cwd, root, fdh, sub;
	char d[128], path[192];
	const char *paths[1] = {d};
	struct stat dst, sst;
	struct victim_res r;
	const struct revoke_ref *ref;
	int dfd, rc, e;

	snprintf(d, sizeof(d), "%s/d", tmp);
	CHECK(mkdir(d, 0755) == 0, "mkdir %s: %m", d);
	snprintf(path, sizeof(path), "%s/sub", d);
	CHECK(mkdir(path, 0755) == 0, "mkdir %s: %m", path);
	snprintf(path, sizeof(path), "%s/inside", d);
	test_write_file(path, "inside");
	snprintf(path, sizeof(path), "%s/sub/deeper", d);
	test_write_file(path, "deeper");
	CHECK(stat(d, &dst) == 0, "stat %s: %m", d);

	victim_start(&cwd);
	v_must(&cwd, VOP_CHDIR, d);
	victim_start(&root);
	v_must(&root, VOP_CHROOT, d);
	victim_start(&fdh);
	dfd = victim_open(&fdh, d, O_RDONLY | O_DIRECTORY);
	victim_start(&sub);
	snprintf(path, sizeof(path), "%s/sub", d);
	v_must(&sub, VOP_CHDIR, path);

	rc = test_revoke_ex(paths, 1, &opts, &rep);
	e = errno;
	CHECK(rc == 0, "revoke_ex(%s): %s", d, strerror(e));
	CHECK(rep, "no report");
	ref = ref_of(rep, cwd.pid, REVOKE_REF_CWD);
	CHECK(ref && ref->state == REVOKE_STATE_CUT, "cwd ref of pid %d: %s", (int)cwd.pid,
	      ref ? revoke_state_name(ref->state) : "absent");
	ref = ref_of(rep, root.pid, REVOKE_REF_ROOT);
	CHECK(ref && ref->state == REVOKE_STATE_CUT, "root ref of pid %d: %s", (int)root.pid,
	      ref ? revoke_state_name(ref->state) : "absent");
	ref = ref_of(rep, fdh.pid, REVOKE_REF_FD);
	CHECK(ref && ref->state == REVOKE_STATE_CUT && ref->fd == dfd, "fd ref of pid %d: %s",
	      (int)fdh.pid, ref ? revoke_state_name(ref->state) : "absent");
	for (size_t i = 0; i < rep->nholders; i++)
		CHECK(revoke_report_holder(rep, i)->pid != sub.pid,
		      "pid %d (cwd in a subdirectory) reported as a holder", (int)sub.pid);
	revoke_report_free(rep);

	check_in_dead_dir(&cwd, "cwd holder", &dst);
	check_in_dead_dir(&root, "chroot holder", &dst);
	/* The chrooted one: "/" is the dead directory too, nothing leads out. */
	r = v_path_op(&root, VOP_OPEN, "/inside", O_RDONLY);
	CHECK(r.ret == -1 && r.err == ENOENT, "chroot holder: open(\"/inside\") gave %ld (%s)",
	      r.ret, strerror(r.err));
	r = v_path_op(&root, VOP_OPEN, "/..", O_RDONLY | O_DIRECTORY);
	if (r.ret >= 0) {
		struct stat up = stat_fd(&root, (int)r.ret, "chroot holder");

		CHECK(!(up.st_dev == dst.st_dev && up.st_ino == dst.st_ino),
		      "chroot holder: \"/..\" leads back to D");
	}

	r = victim_call(&fdh, VICTIM_REQ(.op = VOP_GETDENTS, .fd = dfd));
	CHECK(r.ret == -1 && r.err == EBADF, "fd holder: getdents gave %ld (%s), not EBADF", r.ret,
	      strerror(r.err));

	/* The cwd in a subdirectory: untouched, and so is D's content. */
	r = victim_call(&sub, VICTIM_REQ(.op = VOP_GETCWD));
	CHECK(r.ret == 0 && strcmp(r.data, path) == 0,
	      "subdirectory holder: getcwd gave '%.*s' (%s)", (int)r.len, r.data, strerror(r.err));
	r = v_path_op(&sub, VOP_OPEN, "deeper", O_RDONLY);
	CHECK(r.ret >= 0, "subdirectory holder: open(\"deeper\"): %s", strerror(r.err));
	snprintf(path, sizeof(path), "%s/inside", d);
	CHECK(stat(path, &sst) == 0 && sst.st_size == 6, "%s changed: %m", path);
	CHECK(stat(d, &sst) == 0 && sst.st_ino == dst.st_ino, "D itself changed: %m");
}

TEST_MAIN("revoke-dir", {"dir_refs_cut", t_dir_refs_cut, 30}, )
