/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Conformance: vfork parents. A holder in vfork() waits uninterruptibly for
 * its child, which has a copy of its descriptors (so holds the file too)
 * until it execs. The revoke waits for the child within its budget, then
 * cuts; when the budget runs out it refuses by name ("pid N is a vfork
 * parent waiting for pid M"): the call fails with EBUSY, the parent's error
 * is ETIMEDOUT, nobody is touched. It never hangs.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <pthread.h>

#include "harness.h"
#include "revoke.h"
#include "conform.h"

#ifndef REVOKE_BUILDDIR
#error "REVOKE_BUILDDIR must be defined by the build"
#endif

/* What the vfork child does (set before spawn). */
static struct {
	bool keep;	 /* the parent's descriptor is not O_CLOEXEC: the child keeps it */
	bool never_exec; /* sleeps 20 s and exits instead */
} cfg;

static char go[160]; /* a FIFO: the child execs once its open returns */

static void v_vfork(int sock)
{
	int fd = open(tpath, O_RDWR | (cfg.keep ? 0 : O_CLOEXEC));
	pid_t pid;

	if (fd < 0)
		_exit(2);
	send_msg(sock, MSG(getpid(), fd));
	if (cfg.never_exec)
		pid = test_vfork((const struct test_vf_step[]){VF_SLEEP(20), VF_EXIT(0)});
	else
		/* Until the test opens GO; then sleep, in our environment: in
		 * the QEMU guest, sleep finds its libraries through
		 * LD_LIBRARY_PATH (without it, it died at once and its
		 * descriptors with it). */
		pid = test_vfork((const struct test_vf_step[]){
		    VF_OPEN_WAIT(go, O_RDONLY),
		    VF_EXEC("/bin/sleep", ((char *const[]){"sleep", "30", NULL}), 0)});
	send_msg(sock, MSG(pid));
	holder_loop(sock, fd);
}

struct vfork_victim {
	struct victim v;
	int fd;
	pid_t child;
};

static struct vfork_victim spawn_vfork(void)
{
	struct vfork_victim vv;
	int i;

	snprintf(go, sizeof(go), "%s/go", tdir);
	CHECK(mkfifo(go, 0600) == 0, "mkfifo: %s", strerror(errno));
	vv.v = victim_run(v_vfork);

	vv.fd = (int)recv_msg(&vv.v).v[1];
	for (i = 0; i < 500 && proc_state(vv.v.pid) != 'D'; i++)
		usleep(1000);
	CHECK(proc_state(vv.v.pid) == 'D', "vfork parent %d not in its wait (state %c)",
	      (int)vv.v.pid, proc_state(vv.v.pid));
	vv.child = proc_child_of(vv.v.pid);
	CHECK(vv.child > 0, "no child of vfork parent %d", (int)vv.v.pid);
	return vv;
}

/* The userspace engine's waits are what is tested: the native syscalls
 * (the QEMU guest) stop nobody, and a vfork parent is no obstacle to them. */
static int revoke_with(unsigned int flags, int timeout_ms, struct revoke_report **rep)
{
	const char *paths[] = {tpath};
	struct revoke_opts o = {.sz = sizeof(o),
				.flags = flags | REVOKE_ENGINE_USERSPACE,
				.timeout_ms = timeout_ms,
				.keep_fd = -1};

	return revoke_ex(paths, 1, &o, rep);
}

/* The revoke, in a thread of the test. */
struct call {
	pthread_t thread;
	int r, e;
	struct revoke_report *rep;
};

static void *call_revoke(void *arg)
{
	struct call *c = arg;

	c->r = revoke_with(0, 10000, &c->rep);
	c->e = errno;
	return NULL;
}

/* Whether this process holds the per-uid revoke lock (lib/lock.c): the
 * revoke in the thread is past its wait for other revokes. */
static bool holding_lock(void)
{
	char path[64], line[256], want[64];
	struct stat st;
	bool found = false;
	FILE *f;

	if (geteuid() == 0)
		snprintf(path, sizeof(path), "/run/librevoke.lock");
	else
		snprintf(path, sizeof(path), "/run/user/%u/librevoke.lock", (unsigned)geteuid());
	if (stat(path, &st) < 0)
		return false;
	snprintf(want, sizeof(want), " %d %02x:%02x:%llu ", (int)getpid(), major(st.st_dev),
		 minor(st.st_dev), (unsigned long long)st.st_ino);
	f = fopen("/proc/locks", "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "FLOCK") && strstr(line, want);
	fclose(f);
	return found;
}

/*
 * The child execs a second after the revoke got its lock (while the revoke
 * is at the holders, past its scan), or as soon as the revoke stops it: a
 * revoke that stops the child, a holder too until its exec, waits for the
 * parent until its timeout. It must wait for the child instead, then cut
 * the parent, which sees EBADF.
 */
static struct call revoke_while_child_waits(const struct vfork_victim *vv)
{
	struct call c = {0};
	int i, fd;

	CHECK(pthread_create(&c.thread, NULL, call_revoke, &c) == 0, "pthread_create");
	for (i = 0; i < 20000 && !holding_lock(); i++)
		usleep(500);
	CHECK(holding_lock(), "the revoke never took its lock");
	/* A second for the scan; a revoke that stops the child ends it. */
	for (i = 0; i < 1000 && proc_status_field(vv->child, "TracerPid") == 0; i++)
		usleep(1000);
	fd = open(go, O_WRONLY | O_CLOEXEC); /* the child's open returns: it execs */
	CHECK(fd >= 0, "open %s: %s", go, strerror(errno));
	pthread_join(c.thread, NULL);
	close(fd);

	CHECK(c.r == 0, "revoke_ex: %s (vfork parent: '%s')", strerror(c.e),
	      find_holder(c.rep, vv->v.pid) ? find_holder(c.rep, vv->v.pid)->reason : "");
	return c;
}

static void t_child_execs(void)
{
	struct vfork_victim vv;
	struct call c;
	struct msg m;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	vv = spawn_vfork();
	c = revoke_while_child_waits(&vv);
	m = recv_msg(&vv.v); /* vfork returned */
	CHECK(m.v[0] == vv.child, "vfork returned %lld, the child is %d", (long long)m.v[0],
	      (int)vv.child);
	CHECK(proc_status_field(vv.v.pid, "TracerPid") == 0, "vfork parent left traced");
	CHECK_CUT(&vv.v);
	kill(vv.child, SIGKILL);
	revoke_report_free(c.rep);
}

/* The child keeps its copy across the exec: both are cut. */
static void t_child_holds_too(void)
{
	struct vfork_victim vv;
	char link[64], buf[256];
	struct call c;
	ssize_t n;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	cfg.keep = true;
	vv = spawn_vfork();
	c = revoke_while_child_waits(&vv);
	CHECK(find_holder(c.rep, vv.child) &&
		  find_holder(c.rep, vv.child)->state == REVOKE_STATE_CUT,
	      "the child %d (after its exec) is not reported cut", (int)vv.child);
	recv_msg(&vv.v);
	CHECK_CUT(&vv.v);
	snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)vv.child, vv.fd);
	n = readlink(link, buf, sizeof(buf) - 1);
	CHECK(n > 0, "readlink %s: %s", link, strerror(errno));
	buf[n] = '\0';
	CHECK(strstr(buf, "revoked"), "the child's fd %d is %s, not the dead file", vv.fd, buf);
	CHECK(proc_status_field(vv.child, "TracerPid") == 0, "the child left traced");
	kill(vv.child, SIGKILL);
	revoke_report_free(c.rep);
}

/* The child never execs within the timeout: refused by name, within the
 * timeout, nobody touched; the library and the command say the same. */
static void t_child_never_execs(void)
{
	struct revoke_report *rep = NULL;
	const struct revoke_holder *h;
	char want[128], cmd[512], out[4096] = "";
	struct vfork_victim vv;
	struct victim b;
	struct stat st;
	size_t n;
	int r, e, status = 0;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	CHECK(stat(tpath, &st) == 0, "stat: %s", strerror(errno));
	cfg.never_exec = true;
	b = victim_run(holder_main);
	recv_msg(&b);
	vv = spawn_vfork();
	snprintf(want, sizeof(want), "pid %d is a vfork parent waiting for pid %d", (int)vv.v.pid,
		 (int)vv.child);

	/* Another session's revoke may hold the lock longer than this
	 * timeout's share for it: that is no answer, ask again. */
	for (int i = 0; i < 10; i++) {
		revoke_report_free(rep);
		rep = NULL;
		r = revoke_with(0, 1000, &rep);
		e = errno;
		if (!rep || rep->failed_phase != REVOKE_PHASE_LOCK)
			break;
	}
	CHECK(r == -1 && e == EBUSY, "revoke_ex returned %d (%s), expected EBUSY", r, strerror(e));
	h = find_holder(rep, vv.v.pid);
	CHECK(h, "vfork parent %d missing from the report", (int)vv.v.pid);
	CHECK(h->error == ETIMEDOUT, "its error %d (%s), expected ETIMEDOUT", h->error,
	      strerror(h->error));
	CHECK(strcmp(h->reason, want) == 0, "its reason '%s', expected '%s'", h->reason, want);
	CHECK(proc_fd_is(vv.v.pid, vv.fd, &st), "the parent's fd no longer refers to the target");
	CHECK(proc_status_field(vv.v.pid, "TracerPid") == 0, "vfork parent left traced");
	CHECK(proc_status_field(vv.child, "TracerPid") == 0, "vfork child left traced");
	CHECK(proc_state(vv.child) != 't' && proc_state(vv.child) != 'T', "the child left stopped");
	CHECK(proc_status_field(b.pid, "TracerPid") == 0, "other holder left traced");
	CHECK_READS(&b);
	revoke_report_free(rep);

	snprintf(cmd, sizeof(cmd), "%s/tools/revoke", REVOKE_BUILDDIR);
	for (int i = 0; i < 10; i++) {
		int pipefd[2];
		pid_t pid;

		CHECK(pipe2(pipefd, O_CLOEXEC) == 0, "pipe2: %s", strerror(errno));
		pid = test_fork();
		CHECK(pid >= 0, "fork: %s", strerror(errno));
		if (pid == 0) {
			dup2(pipefd[1], 1);
			dup2(pipefd[1], 2);
			execl(cmd, "revoke", "--engine", "ptrace", "--timeout", "1", tpath,
			      (char *)NULL);
			/* The QEMU guest has the suite, not the build tree:
			 * the command is on its PATH. */
			execlp("revoke", "revoke", "--engine", "ptrace", "--timeout", "1", tpath,
			       (char *)NULL);
			_exit(127);
		}
		close(pipefd[1]);
		n = 0;
		for (ssize_t got; n < sizeof(out) - 1 &&
				  (got = read(pipefd[0], out + n, sizeof(out) - 1 - n)) > 0;)
			n += (size_t)got;
		out[n] = '\0';
		close(pipefd[0]);
		CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
		if (!strstr(out, "waiting for another revoke"))
			break;
	}
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1, "revoke --timeout 1 exited %#x: %s",
	      status, out);
	CHECK(strstr(out, want), "revoke --timeout 1 does not say '%s':\n%s", want, out);
	CHECK_READS(&b);
	kill(vv.child, SIGKILL);
}

TEST_MAIN("revoke-vfork", {"child_execs", t_child_execs, 30},
	  {"child_holds_too", t_child_holds_too, 30},
	  {"child_never_execs", t_child_never_execs, 30}, )
