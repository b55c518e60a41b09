/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A selection of holders (revoke_opts.pids, uids, cgroup; issue 14, part 2):
 * only the processes selected are cut, every other holder keeps reading and
 * is never stopped (one that could not be stopped at all does not fail the
 * call); a selection that matches nobody changes nothing and succeeds; the
 * criteria combine (all must hold); a cgroup is a subtree; bad input is an
 * error naming it before anything is touched; an unprivileged owner's
 * `--uid` of their own needs no helper.
 */
#include <grp.h>
#include <linux/magic.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

#include "conform.h"
#include "terminal.h"

#define NOBODY 65534

static int revoke_sel(const pid_t *pids, size_t npids, const uid_t *uids, size_t nuids,
		      const char *cgroup, unsigned int flags, struct revoke_report **rep)
{
	const char *paths[] = {tpath};
	struct revoke_opts o = {.sz = sizeof(o),
				.flags = flags,
				.keep_fd = -1,
				.pids = pids,
				.npids = npids,
				.uids = uids,
				.nuids = nuids,
				.cgroup = cgroup};

	return revoke_ex(paths, 1, &o, rep);
}

/* A holder of tpath running as uid/gid NOBODY. */
static void v_nobody_holder(int sock)
{
	int fd;

	/* Dumpable, as a program nobody started would be (the uid change
	 * made it non-dumpable: its own user could not look at it). */
	if (test_become(NOBODY, NOBODY, TEST_BECOME_NOGROUPS | TEST_BECOME_DUMPABLE) < 0)
		_exit(2);
	fd = open(tpath, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		_exit(3);
	send_msg(sock, MSG(getpid(), fd));
	holder_loop(sock, fd);
}

/* A file everyone may open, in a directory everyone may search. */
static void shared_file(void)
{
	make_scratch();
	test_make_file(tpath, "hello", 0);
	CHECK(chmod(tdir, 0755) == 0 && chmod(tpath, 0666) == 0, "chmod: %m");
}

static const struct revoke_holder *holder_of(const struct revoke_report *rep, pid_t pid)
{
	return find_holder(rep, pid);
}

/* A vfork parent (state D) holding tpath: no ptrace stop reaches it. */
static void v_vfork_holder(int sock)
{
	int fd = open(tpath, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		_exit(2);
	send_msg(sock, MSG(getpid(), fd));
	if (test_clone_vfork() == 0) {
		close(fd);
		sleep(60);
		_exit(0);
	}
	msg_wait(sock);
	_exit(0);
}

static struct victim vfork_holder(void)
{
	struct victim v = victim_run(v_vfork_holder);

	recv_msg(&v);
	for (int i = 0; i < 500 && proc_state(v.pid) != 'D'; i++)
		msleep(10);
	CHECK(proc_state(v.pid) == 'D', "the vfork parent %d is not waiting (state %c)", (int)v.pid,
	      proc_state(v.pid));
	return v;
}

/* --pid: only that process; another that cannot even be stopped (a vfork
 * parent in D state) is left alone and does not fail the call. */
static void t_pid(void)
{
	struct revoke_report *rep = NULL;
	struct victim a, b, d;
	pid_t sel[1];

	shared_file();
	a = victim_run(holder_main);
	recv_msg(&a);
	b = victim_run(holder_main);
	recv_msg(&b);
	d = vfork_holder();
	sel[0] = a.pid;
	CHECK(revoke_sel(sel, 1, NULL, 0, NULL, 0, &rep) == 0, "revoke --pid %d: %m", (int)a.pid);
	CHECK_CUT(&a);
	CHECK_READS(&b);
	CHECK(holder_of(rep, a.pid) && !holder_of(rep, b.pid) && !holder_of(rep, d.pid),
	      "the report lists holders outside the selection");
	CHECK(proc_state(d.pid) == 'D', "the vfork parent outside the selection was disturbed");
	revoke_report_free(rep);
}

/* --uid: real or effective uid; root's holder stays. */
static void t_uid(void)
{
	struct victim r, n;
	uid_t sel[] = {NOBODY};

	shared_file();
	r = victim_run(holder_main);
	recv_msg(&r);
	n = victim_run(v_nobody_holder);
	recv_msg(&n);
	CHECK(revoke_sel(NULL, 0, sel, 1, NULL, 0, NULL) == 0, "revoke --uid %d: %m", NOBODY);
	CHECK_CUT(&n);
	CHECK_READS(&r);
	CHECK(proc_status_field(r.pid, "TracerPid") == 0, "root's holder left traced");
}

/* All the criteria must hold: nobody's uid and root's pid select nobody: the
 * call succeeds and changes nothing, though a holder that could not be
 * stopped (outside) is there. */
static void t_combined_and_empty(void)
{
	struct revoke_report *rep = NULL;
	struct victim r, n, d;
	uid_t uids[] = {NOBODY};
	pid_t pids[1];

	shared_file();
	r = victim_run(holder_main);
	recv_msg(&r);
	n = victim_run(v_nobody_holder);
	recv_msg(&n);
	d = vfork_holder();
	pids[0] = r.pid;
	CHECK(revoke_sel(pids, 1, uids, 1, NULL, 0, &rep) == 0, "an empty selection: %m");
	CHECK(rep && rep->nholders == 0, "an empty selection reports %zu holders",
	      rep ? rep->nholders : 0);
	CHECK_READS(&r);
	CHECK_READS(&n);
	revoke_report_free(rep);
	/* Both criteria met by one: only it. */
	pids[0] = n.pid;
	CHECK(revoke_sel(pids, 1, uids, 1, NULL, 0, NULL) == 0, "pid and uid: %m");
	CHECK_CUT(&n);
	CHECK_READS(&r);
	CHECK(proc_state(d.pid) == 'D', "the vfork parent outside the selection was disturbed");
}

/* The cgroup2 mount whose root is the hierarchy's root (/sys/fs/cgroup or,
 * on a hybrid layout, /sys/fs/cgroup/unified), or SKIP. */
static const char *cgroup2_root(void)
{
	static const char *const where[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
	struct statfs sfs;

	for (size_t i = 0; i < 2; i++)
		if (statfs(where[i], &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC)
			return where[i];
	SKIP("no cgroup2 file system mounted");
	return NULL;
}

static char cg_dir[128], cg_child[160];

/* Runs after the checks: every process back to the root, the cgroups gone. */
static void cgroup_cleanup(void)
{
	char buf[4096], path[200];
	const char *dirs[] = {cg_child, cg_dir};

	for (size_t k = 0; k < 2; k++) {
		if (!dirs[k][0])
			continue;
		snprintf(path, sizeof(path), "%s/cgroup.procs", dirs[k]);
		if (read_proc(path, buf, sizeof(buf)) == 0) {
			char root[200], *save = NULL;

			snprintf(root, sizeof(root), "%s/cgroup.procs", cgroup2_root());
			for (char *l = strtok_r(buf, "\n", &save); l;
			     l = strtok_r(NULL, "\n", &save)) {
				int fd = open(root, O_WRONLY | O_CLOEXEC);

				if (fd >= 0) {
					(void)!write(fd, l, strlen(l));
					close(fd);
				}
			}
		}
		rmdir(dirs[k]);
	}
}

static void move_to(pid_t pid, const char *dir)
{
	char path[200], num[16];
	int fd, n;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	CHECK(fd >= 0, "open %s: %m", path);
	n = snprintf(num, sizeof(num), "%d", (int)pid);
	CHECK(write(fd, num, (size_t)n) == n, "move %d into %s: %m", (int)pid, dir);
	close(fd);
}

/* --cgroup: a subtree, named by its directory or by its path as
 * /proc/PID/cgroup prints it. */
static void t_cgroup_subtree(void)
{
	const char *root = cgroup2_root();
	char name[64], rel[80];
	struct victim in, out;

	snprintf(name, sizeof(name), "revoke-test-%d", (int)getpid());
	snprintf(cg_dir, sizeof(cg_dir), "%s/%s", root, name);
	snprintf(cg_child, sizeof(cg_child), "%s/child", cg_dir);
	if (mkdir(cg_dir, 0755) < 0)
		SKIP("cannot make a cgroup under %s: %m", root);
	atexit(cgroup_cleanup);
	CHECK(mkdir(cg_child, 0755) == 0, "mkdir %s: %m", cg_child);
	shared_file();
	in = victim_run(holder_main);
	recv_msg(&in);
	out = victim_run(holder_main);
	recv_msg(&out);
	move_to(in.pid, cg_child);
	/* By directory: the child's holder is in its parent's subtree. */
	CHECK(revoke_sel(NULL, 0, NULL, 0, cg_dir, 0, NULL) == 0, "revoke --cgroup %s: %m", cg_dir);
	CHECK_CUT(&in);
	CHECK_READS(&out);
	/* By path, as /proc/PID/cgroup prints it. */
	in = victim_run(holder_main);
	recv_msg(&in);
	move_to(in.pid, cg_child);
	snprintf(rel, sizeof(rel), "/%s/child", name);
	CHECK(revoke_sel(NULL, 0, NULL, 0, rel, 0, NULL) == 0, "revoke --cgroup %s: %m", rel);
	CHECK_CUT(&in);
	CHECK_READS(&out);
}

/* Bad input: an error naming it, nothing touched. */
static void t_bad_input(void)
{
	pid_t many[65], zero[1] = {0};
	struct victim v;
	int r, e;

	shared_file();
	v = victim_run(holder_main);
	recv_msg(&v);
	for (int i = 0; i < 65; i++)
		many[i] = 1 + i;
	r = revoke_sel(NULL, 0, NULL, 0, "/no/such/cgroup", 0, NULL);
	e = errno;
	CHECK(r == -1 && e == ENOENT, "a cgroup that does not exist: %d (%s)", r, strerror(e));
	r = revoke_sel(NULL, 0, NULL, 0, tdir, 0, NULL);
	e = errno;
	CHECK(r == -1 && e == EINVAL, "a directory that is no cgroup: %d (%s)", r, strerror(e));
	r = revoke_sel(many, 65, NULL, 0, NULL, 0, NULL);
	e = errno;
	CHECK(r == -1 && e == E2BIG, "65 pids: %d (%s)", r, strerror(e));
	r = revoke_sel(zero, 1, NULL, 0, NULL, 0, NULL);
	e = errno;
	CHECK(r == -1 && e == EINVAL, "pid 0: %d (%s)", r, strerror(e));
	r = revoke_sel(many, 1, NULL, 0, NULL, REVOKE_MOUNT, NULL);
	e = errno;
	CHECK(r == -1 && e == EINVAL, "a selection with REVOKE_MOUNT: %d (%s)", r, strerror(e));
	CHECK_READS(&v);
}

/* An unprivileged owner: the plain revoke cannot look at root's holder and
 * refuses (the userspace engine; the kernel's looks at no process and cuts
 * both); `--uid` of their own needs no helper, cuts their own holder and
 * leaves root's. */
static void t_unprivileged_own_uid(void)
{
	struct victim r, n;
	int p[2];
	pid_t pid;
	int res[4] = {-9, -9, -9, -9}, st;

	shared_file();
	CHECK(chown(tpath, NOBODY, NOBODY) == 0, "chown: %m");
	r = victim_run(holder_main);
	recv_msg(&r);
	n = victim_run(v_nobody_holder);
	recv_msg(&n);
	CHECK(pipe2(p, O_CLOEXEC) == 0, "pipe: %m");
	pid = test_fork();
	CHECK(pid >= 0, "fork: %m");
	if (pid == 0) {
		uid_t me[] = {NOBODY};

		if (test_become(NOBODY, NOBODY, TEST_BECOME_NOGROUPS) < 0)
			_exit(2);
		/* The kernel's revoke looks at no process: there the plain
		 * revoke would cut root's holder too. */
		if (!engine_native()) {
			res[0] = revoke_sel(NULL, 0, NULL, 0, NULL, REVOKE_NO_HELPER, NULL);
			res[1] = res[0] < 0 ? errno : 0;
		}
		struct revoke_report *rep = NULL;

		res[2] = revoke_sel(NULL, 0, me, 1, NULL, REVOKE_NO_HELPER, &rep);
		res[3] = res[2] < 0 ? errno : 0;
		for (size_t i = 0; res[2] < 0 && rep && i < rep->nholders; i++)
			fprintf(stderr, "  holder %d (%s): state %d, %s\n",
				(int)rep->holders[i].pid, rep->holders[i].comm,
				rep->holders[i].state, rep->holders[i].reason);
		_exit(write(p[1], res, sizeof(res)) == sizeof(res) ? 0 : 1);
	}
	close(p[1]);
	CHECK(read(p[0], res, sizeof(res)) == sizeof(res), "the unprivileged caller died");
	close(p[0]);
	waitpid(pid, &st, 0);
	if (!engine_native())
		CHECK(res[0] == -1 && res[1] == EBUSY,
		      "plain revoke as nobody: %d (%s), expected EBUSY", res[0], strerror(res[1]));
	CHECK(res[2] == 0, "revoke --uid nobody as nobody: %s", strerror(res[3]));
	CHECK_CUT(&n);
	CHECK_READS(&r);
}

/* --list of a selection lists only it. */
static void t_list(void)
{
	struct revoke_report *rep = NULL;
	struct victim r, n;
	uid_t sel[] = {NOBODY};

	shared_file();
	r = victim_run(holder_main);
	recv_msg(&r);
	n = victim_run(v_nobody_holder);
	recv_msg(&n);
	CHECK(revoke_sel(NULL, 0, sel, 1, NULL, REVOKE_LIST_ONLY, &rep) == 0, "list --uid: %m");
	CHECK(rep && holder_of(rep, n.pid) && !holder_of(rep, r.pid),
	      "the listing of uid %d shows root's holder, or not nobody's", NOBODY);
	revoke_report_free(rep);
	CHECK_READS(&r);
	CHECK_READS(&n);
}

/* A terminal held by two processes, one selected: no hangup (it would reach
 * the other's open too): the other reads on (EAGAIN, not EOF or EIO). */
static void t_terminal(void)
{
	struct victim a, b;
	struct victim_res r;
	char slave[64];
	int master, afd, bfd;
	pid_t sel[1];

	make_scratch();
	victim_start(&a);
	victim_start(&b);
	master = test_pty(slave, sizeof(slave));
	afd = victim_open(&a, slave, O_RDWR | O_NOCTTY | O_NONBLOCK);
	bfd = victim_open(&b, slave, O_RDWR | O_NOCTTY | O_NONBLOCK);
	sel[0] = a.pid;
	strcpy(tpath, slave);
	CHECK(revoke_sel(sel, 1, NULL, 0, NULL, 0, NULL) == 0, "revoke --pid of a pty: %m");
	r = victim_call(&a, VICTIM_REQ(.op = VOP_READ, .fd = afd, .len = 1));
	CHECK(r.ret == -1 && r.err == EBADF, "the selected holder: read gave %ld (%s)", r.ret,
	      strerror(r.err));
	r = victim_call(&b, VICTIM_REQ(.op = VOP_READ, .fd = bfd, .len = 1));
	CHECK(r.ret == -1 && r.err == EAGAIN,
	      "the other holder: read gave %ld (%s), not EAGAIN (hung up?)", r.ret,
	      strerror(r.err));
	close(master);
}

TEST_MAIN("revoke-select", {"pid", t_pid, 30}, {"uid", t_uid, 30},
	  {"combined_and_empty", t_combined_and_empty, 30},
	  {"cgroup_subtree", t_cgroup_subtree, 30}, {"bad_input", t_bad_input, 30},
	  {"unprivileged_own_uid", t_unprivileged_own_uid, 30}, {"list", t_list, 30},
	  {"terminal", t_terminal, 30}, )
