/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Conformance: paths as another process sees them (revoke_opts.ns_pid, issue
 * 11, item 4). Each case makes a container: a child that unshares its mount
 * and pid namespaces and forks the namespace's init, which mounts a tmpfs on
 * /tmp (private: the host never sees it; /tmp because the QEMU guest has
 * it) and serves victim requests (tests/lib/victim.h); the file
 * /tmp/revoke-ns-secret exists only there. Its
 * holders are init (pid 1 in there), with a descriptor, and a child of it
 * (pid 2) with a shared mapping.
 *
 * revoke_ex("/tmp/revoke-ns-secret", ns_pid = init's host pid) cuts both
 * (EBADF, SIGBUS), and the report gives each holder's pid in both
 * namespaces; a relative path is taken from the container's cwd; the same
 * path without ns_pid is ENOENT (the host has no such file), a path the
 * container does not have is ENOENT, a pid with no process is ESRCH, and an
 * unprivileged caller (uid 65534) against the root container gets EPERM,
 * even for a path that is not there. An absolute symlink in the container
 * and "/.." resolve at its root. An unprivileged caller on its own process
 * (no CAP_SYS_CHROOT: openat2) is confined to its root, and a relative path
 * to its cwd (EXDEV).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

#define SECRET "/tmp/revoke-ns-secret"

/* The container's init as a victim: V->pid is its pid on the host. */
static void container_start(struct victim *v)
{
	int sp[2], pp[2];
	pid_t c, init = 0;

	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == 0, "socketpair: %m");
	CHECK(pipe2(pp, O_CLOEXEC) == 0, "pipe: %m");
	c = test_fork();
	CHECK(c >= 0, "fork: %m");
	if (c == 0) {
		pid_t p;
		int status;

		close(sp[0]);
		if (unshare(CLONE_NEWNS | CLONE_NEWPID) < 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
			_exit(3);
		p = test_fork();
		if (p == 0) {
			if (mount("revoke-ns", "/tmp", "tmpfs", 0, "mode=1777") < 0)
				_exit(4);
			victim_become(sp[1]); /* PDEATHSIG: gone with us */
		}
		(void)!write(pp[1], &p, sizeof(p));
		while (waitpid(p, &status, 0) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(sp[1]);
	close(pp[1]);
	CHECK(read(pp[0], &init, sizeof(init)) == (ssize_t)sizeof(init) && init > 0,
	      "the container did not start (unshare or mount failed in it)");
	close(pp[0]);
	v->pid = init;
	v->sock = sp[0];
	/* Its init answers from inside: pid 1 there. */
	CHECK(victim_call(v, VICTIM_REQ(.op = VOP_PING)).ret == 1, "init is not pid 1 in there");
}

static int ns_revoke(const char *path, pid_t ns, unsigned int flags, struct revoke_report **rep)
{
	struct revoke_opts opts = {.sz = sizeof(opts), .flags = flags, .keep_fd = -1, .ns_pid = ns};

	return test_revoke_ex(&path, 1, &opts, rep);
}

/* Holder of REP whose pid in its namespace is NSPID; *RET_PID its host pid. */
static const struct revoke_holder *holder_by_nspid(const struct revoke_report *rep, pid_t nspid)
{
	CHECK(rep->sz >= offsetof(struct revoke_report, holder_nspids) + sizeof(pid_t *) &&
		  rep->holder_nspids,
	      "the report has no holder_nspids");
	for (size_t i = 0; i < rep->nholders; i++)
		if (rep->holder_nspids[i] == nspid)
			return revoke_report_holder(rep, i);
	return NULL;
}

static void t_ns_container_cut(void)
{
	struct revoke_report *rep = NULL;
	const struct revoke_holder *h;
	struct victim init, child;
	struct victim_res r;
	struct stat st;
	int fd, rc, e;
	uint64_t map;

	container_start(&init);
	CHECK(stat(SECRET, &st) < 0 && errno == ENOENT, "%s exists on the host", SECRET);
	fd = victim_open(&init, SECRET, O_RDWR | O_CREAT);
	r = victim_write(&init, fd, "secret");
	CHECK(r.ret == 6, "write: %s", strerror(r.err));
	victim_spawn(&init, VOP_FORK, &child);
	CHECK(child.pid == 2, "the child is pid %d in there, not 2", (int)child.pid);
	r = victim_call(&child, VICTIM_REQ(.op = VOP_MMAP, .fd = fd, .len = 4096,
					   .prot = PROT_READ | PROT_WRITE, .flags = MAP_SHARED));
	CHECK(r.ret != -1, "mmap: %s", strerror(r.err));
	map = (uint64_t)r.ret;
	victim_call(&child, VICTIM_REQ(.op = VOP_CLOSE, .fd = fd));

	/* As the host sees it, there is no such file. */
	rc = ns_revoke(SECRET, 0, 0, NULL);
	CHECK(rc == -1 && errno == ENOENT, "revoke %s from the host: %d (%s), not ENOENT", SECRET,
	      rc, strerror(errno));

	rc = ns_revoke(SECRET, init.pid, REVOKE_LIST_ONLY, &rep);
	e = errno;
	CHECK(rc == 0 && rep, "list --ns: %s", strerror(e));
	h = holder_by_nspid(rep, 1);
	CHECK(h && h->pid == init.pid, "no holder with pid %d here and 1 there", (int)init.pid);
	h = holder_by_nspid(rep, 2);
	CHECK(h && h->pid != 2 && h->pid > 0, "no holder with pid 2 in the container");
	revoke_report_free(rep);
	rep = NULL;

	rc = ns_revoke(SECRET, init.pid, 0, &rep);
	e = errno;
	CHECK(rc == 0, "revoke --ns %d %s: %s", (int)init.pid, SECRET, strerror(e));
	h = holder_by_nspid(rep, 1);
	CHECK(h && h->pid == init.pid && h->state == REVOKE_STATE_CUT, "init: %s",
	      h ? revoke_state_name(h->state) : "not reported");
	h = holder_by_nspid(rep, 2);
	CHECK(h && h->state == REVOKE_STATE_CUT, "pid 2 in there: %s",
	      h ? revoke_state_name(h->state) : "not reported");
	revoke_report_free(rep);

	r = victim_read(&init, fd, 6);
	CHECK(r.ret == -1 && r.err == EBADF, "init: read gave %ld (%s), not EBADF", r.ret,
	      strerror(r.err));
	r = victim_call(&child, VICTIM_REQ(.op = VOP_LOAD, .arg = (long)map));
	CHECK(r.sig == SIGBUS, "child: a load from the mapping raised signal %d, not SIGBUS",
	      r.sig);

	/* A relative path: from the container's current directory. */
	r = victim_call(&init, VICTIM_REQ(.op = VOP_CHDIR, .path = "/tmp"));
	CHECK(r.ret == 0, "chdir: %s", strerror(r.err));
	fd = victim_open(&init, "revoke-ns-secret", O_RDONLY);
	rc = ns_revoke("revoke-ns-secret", init.pid, 0, NULL);
	CHECK(rc == 0, "revoke --ns %d revoke-ns-secret: %s", (int)init.pid, strerror(errno));
	r = victim_read(&init, fd, 6);
	CHECK(r.ret == -1 && r.err == EBADF, "init: read after the relative revoke gave %ld (%s)",
	      r.ret, strerror(r.err));
}

/* Absolute symlinks and ".." stop at the container's root: the walk is its. */
static void t_ns_symlink_in_root(void)
{
	struct revoke_report *rep = NULL;
	struct victim init;
	char link[96];
	int fd, rc;

	container_start(&init);
	fd = victim_open(&init, SECRET, O_RDWR | O_CREAT);
	/* Made from here, through its root: a link only the container can follow. */
	snprintf(link, sizeof(link), "/proc/%d/root/tmp/link", (int)init.pid);
	CHECK(symlink(SECRET, link) == 0, "symlink %s: %m", link);
	rc = ns_revoke("/tmp/link", init.pid, REVOKE_LIST_ONLY, &rep);
	CHECK(rc == 0 && rep && rep->nholders == 1 && rep->holders[0].pid == init.pid,
	      "list /tmp/link as the container: %d (%s), %zu holders", rc, strerror(errno),
	      rep ? rep->nholders : 0);
	revoke_report_free(rep);
	rc = ns_revoke("/../../tmp/../tmp/revoke-ns-secret", init.pid, 0, NULL);
	CHECK(rc == 0, "revoke /../../tmp/../tmp/revoke-ns-secret: %s", strerror(errno));
	CHECK(victim_read(&init, fd, 1).err == EBADF, "init's descriptor was not cut");
}

/* An unprivileged caller (no CAP_SYS_CHROOT) on its own process: openat2,
 * RESOLVE_IN_ROOT for absolute paths, RESOLVE_BENEATH its cwd for relative
 * ones. Best effort: other users' processes cannot be looked at. */
static void as_nobody_own(void *arg)
{
	const char *dir = arg;
	struct victim v;
	char path[160];
	int fd, rc;

	victim_start(&v);
	CHECK(victim_call(&v, VICTIM_REQ(.op = VOP_CHDIR, .path = "/tmp/own")).ret == 0, "chdir");
	fd = victim_open(&v, "f", O_RDWR | O_CREAT);
	rc = ns_revoke("../own/f", v.pid, REVOKE_BEST_EFFORT, NULL);
	CHECK(rc == -1 && errno == EXDEV, "a relative path out of its cwd: %d (%s), not EXDEV", rc,
	      strerror(errno));
	CHECK(victim_read(&v, fd, 1).ret == 0, "the descriptor changed after a refused call");
	rc = ns_revoke("f", v.pid, REVOKE_BEST_EFFORT, NULL);
	CHECK(rc == 0, "revoke f from its cwd as uid %d: %s", TEST_NOBODY, strerror(errno));
	CHECK(victim_read(&v, fd, 1).err == EBADF, "not cut by the relative revoke");
	fd = victim_open(&v, "f", O_RDWR);
	snprintf(path, sizeof(path), "%s/f", dir);
	rc = ns_revoke(path, v.pid, REVOKE_BEST_EFFORT, NULL);
	CHECK(rc == 0, "revoke %s at its root as uid %d: %s", path, TEST_NOBODY, strerror(errno));
	CHECK(victim_read(&v, fd, 1).err == EBADF, "not cut by the absolute revoke");
}

static void t_ns_unprivileged_openat2(void)
{
	if (geteuid() != 0)
		SKIP("needs root to drop to uid %d", TEST_NOBODY);
	test_scratch();
	CHECK(mkdir("/tmp/own", 0755) == 0 && chown("/tmp/own", TEST_NOBODY, TEST_NOBODY) == 0,
	      "mkdir /tmp/own: %m");
	test_as_nobody(as_nobody_own, "/tmp/own");
}

static void t_ns_errors(void)
{
	struct victim init;
	pid_t gone;
	int rc, status;

	container_start(&init);
	rc = ns_revoke("/tmp/not-there", init.pid, 0, NULL);
	CHECK(rc == -1 && errno == ENOENT, "a path the container lacks: %d (%s), not ENOENT", rc,
	      strerror(errno));
	rc = ns_revoke(SECRET, init.pid, REVOKE_MOUNT, NULL);
	CHECK(rc == -1 && errno == EINVAL, "ns_pid with REVOKE_MOUNT: %d (%s), not EINVAL", rc,
	      strerror(errno));
	{
		struct revoke_opts o = {.sz = sizeof(o), .keep_fd = -1, .ns_pid = init.pid};

		rc = frevoke_ex(0, &o, NULL);
		CHECK(rc == -1 && errno == EINVAL, "frevoke_ex with ns_pid: %d (%s), not EINVAL",
		      rc, strerror(errno));
	}
	gone = test_fork();
	CHECK(gone >= 0, "fork: %m");
	if (gone == 0)
		_exit(0);
	CHECK(waitpid(gone, &status, 0) == gone, "waitpid: %m");
	rc = ns_revoke(SECRET, gone, 0, NULL);
	CHECK(rc == -1 && errno == ESRCH, "a pid with no process: %d (%s), not ESRCH", rc,
	      strerror(errno));
}

static pid_t g_init;

static void as_nobody(void *arg)
{
	int rc;

	(void)arg;
	rc = ns_revoke(SECRET, g_init, 0, NULL);
	CHECK(rc == -1 && errno == EPERM, "uid %d against a root container: %d (%s), not EPERM",
	      TEST_NOBODY, rc, strerror(errno));
	rc = ns_revoke("/tmp/not-there", g_init, REVOKE_LIST_ONLY, NULL);
	CHECK(rc == -1 && errno == EPERM,
	      "uid %d: a path that is not there gave %d (%s), not EPERM (it must learn nothing)",
	      TEST_NOBODY, rc, strerror(errno));
}

static void t_ns_unprivileged_eperm(void)
{
	struct victim init;
	int fd;

	if (geteuid() != 0)
		SKIP("needs root to make a container and to drop to uid %d", TEST_NOBODY);
	container_start(&init);
	fd = victim_open(&init, SECRET, O_RDWR | O_CREAT);
	g_init = init.pid;
	test_as_nobody(as_nobody, NULL);
	CHECK(victim_read(&init, fd, 1).ret == 0, "init's descriptor changed");
}

TEST_MAIN("revoke-nspid", {"ns_container_cut", t_ns_container_cut, 30},
	  {"ns_symlink_in_root", t_ns_symlink_in_root, 30},
	  {"ns_unprivileged_openat2", t_ns_unprivileged_openat2, 30},
	  {"ns_errors", t_ns_errors, 30}, {"ns_unprivileged_eperm", t_ns_unprivileged_eperm, 30}, )
