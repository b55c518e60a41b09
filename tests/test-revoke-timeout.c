/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The timeout bounds everything, and says what it was waiting for: a path
 * whose lookup blocks on a FUSE server that stopped answering
 * (tests/helper-fusehang), and a holder stuck in a request to it (it cannot
 * be stopped: the call fails naming the pid and its state). Each call ends
 * within its timeout and a bounded overrun.
 */
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "conform.h"

static char mnt[64] = "/tmp/revoke-fuse-XXXXXX", file[96];
static pid_t daemon_pid = -1, prober = -1;

/* Mounts the helper's filesystem; SKIPs where FUSE cannot be used. */
static void fuse_up(void)
{
	char helper[256];
	struct stat st;
	int status;

	if (access("/dev/fuse", R_OK | W_OK) < 0)
		SKIP("no /dev/fuse");
	snprintf(helper, sizeof(helper), "%s/tests/helper-fusehang", REVOKE_BUILDDIR);
	if (access(helper, X_OK) < 0)
		SKIP("%s not built (no libfuse3)", helper);
	CHECK(mkdtemp(mnt), "mkdtemp: %s", strerror(errno));
	snprintf(file, sizeof(file), "%s/file", mnt);
	daemon_pid = fork();
	CHECK(daemon_pid >= 0, "fork: %s", strerror(errno));
	if (daemon_pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl(helper, helper, mnt, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 1000 && stat(file, &st) < 0; i++) {
		if (waitpid(daemon_pid, &status, WNOHANG) == daemon_pid) {
			daemon_pid = -1;
			rmdir(mnt);
			SKIP("%s could not mount (status %d): FUSE mounts not permitted here",
			     helper, status);
		}
		usleep(5000);
	}
	CHECK(stat(file, &st) == 0, "the FUSE helper did not mount %s", mnt);
}

/* From now on every request blocks; a prober makes sure it does. */
static void fuse_hang(void)
{
	kill(daemon_pid, SIGUSR1);
	prober = fork();
	CHECK(prober >= 0, "fork: %s", strerror(errno));
	if (prober == 0) {
		struct stat st;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		stat(file, &st);
		_exit(0);
	}
	for (int i = 0; i < 2000 && proc_state(prober) != 'S' && proc_state(prober) != 'D'; i++)
		usleep(1000);
}

/* Runs after the checks too (the case's process group dies with it, but
 * the mount does not). */
static void fuse_down(void)
{
	if (prober > 0)
		kill(prober, SIGKILL);
	if (daemon_pid > 0) {
		kill(daemon_pid, SIGKILL); /* aborts the connection: blocked requests fail */
		waitpid(daemon_pid, NULL, 0);
	}
	if (umount2(mnt, MNT_DETACH) < 0 && errno != EINVAL && errno != ENOENT) {
		pid_t u = fork();

		if (u == 0) {
			execlp("fusermount3", "fusermount3", "-u", "-z", mnt, (char *)NULL);
			_exit(127);
		}
		waitpid(u, NULL, 0);
	}
	rmdir(mnt);
}

static int revoke_timed(const char *path, unsigned int flags, int timeout_ms,
			struct revoke_report **rep, uint64_t *ret_ns)
{
	struct revoke_opts o = {
	    .sz = sizeof(o), .flags = flags, .timeout_ms = timeout_ms, .keep_fd = -1};
	uint64_t t0 = now_ns();
	int r = revoke_ex(&path, 1, &o, rep);
	int e = errno;

	*ret_ns = now_ns() - t0;
	errno = e;
	return r;
}

/* Overrun allowed by the library (5 %), plus scheduling slack for a loaded
 * machine: a bound, not a measure (bench/ measures). */
#define BOUND_NS(ms) ((uint64_t)(ms)*1000000u * 13 / 10)

static void t_lookup_on_hung_fuse(void)
{
	struct revoke_report *rep = NULL;
	uint64_t ns;
	int r, e;

	fuse_up();
	fuse_hang();
	for (int list = 0; list < 2; list++) {
		r = revoke_timed(file, list ? REVOKE_LIST_ONLY : 0, 1000, &rep, &ns);
		e = errno;
		if (r == 0 || e != ETIMEDOUT || ns > BOUND_NS(1000) || !rep ||
		    rep->failed_phase != REVOKE_PHASE_RESOLVE) {
			fuse_down();
			CHECK(r == -1 && e == ETIMEDOUT,
			      "%s of a path on a hung FUSE server: %d (%s)",
			      list ? "list" : "revoke", r, strerror(e));
			CHECK(ns <= BOUND_NS(1000), "a 1 s timeout took %llu ms",
			      (unsigned long long)(ns / 1000000));
			CHECK(rep && rep->failed_phase == REVOKE_PHASE_RESOLVE,
			      "the report does not say it was looking the path up (phase %d)",
			      rep ? rep->failed_phase : -1);
		}
		revoke_report_free(rep);
		rep = NULL;
	}
	fuse_down();
}

/* The command too: it exits on time (its lookup is not a thread of its own,
 * which would keep the process from exiting) and says what it waited for. */
static void t_command_on_hung_fuse(void)
{
	char cmd[256], err[512] = "";
	int pipefd[2], status = 0;
	uint64_t t0, ns;
	ssize_t n;
	pid_t pid;

	fuse_up();
	fuse_hang();
	snprintf(cmd, sizeof(cmd), "%s/tools/revoke", REVOKE_BUILDDIR);
	CHECK(pipe2(pipefd, O_CLOEXEC) == 0, "pipe2: %s", strerror(errno));
	t0 = now_ns();
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(pipefd[1], 2);
		execl(cmd, cmd, "-t", "1", file, (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	/* Until end of file: nothing of the command may keep its stderr open
	 * (a pipeline would wait for it). */
	{
		size_t got = 0;
		struct pollfd p = {.fd = pipefd[0], .events = POLLIN};

		while (got < sizeof(err) - 1 && poll(&p, 1, 3000) > 0) {
			n = read(pipefd[0], err + got, sizeof(err) - 1 - got);
			if (n <= 0)
				break;
			got += (size_t)n;
		}
		err[got] = '\0';
	}
	for (int i = 0; i < 3000 && waitpid(pid, &status, WNOHANG) == 0; i++)
		usleep(1000);
	ns = now_ns() - t0;
	if (waitpid(pid, &status, WNOHANG) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		fuse_down();
		CHECK(false, "revoke -t 1 still running after %llu ms",
		      (unsigned long long)(ns / 1000000));
	}
	close(pipefd[0]);
	fuse_down();
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1, "revoke -t 1 exited with 0x%x",
	      status);
	CHECK(ns <= BOUND_NS(1000), "revoke -t 1 took %llu ms", (unsigned long long)(ns / 1000000));
	CHECK(strstr(err, "timed out after 1.0 s looking the paths up"), "its message: %s", err);
}

/* A holder in a read the hung server never answers cannot be stopped: the
 * call gives up on it at the end of the stop's share and names it. */
static void v_fuse_reader(int sock)
{
	char b[16];
	int fd = open(file, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		_exit(2);
	send_msg(sock, MSG(getpid(), fd));
	victim_recv(sock);
	(void)read(fd, b, sizeof(b));
	victim_recv(sock);
}

static void t_holder_stuck_in_fuse(void)
{
	struct revoke_report *rep = NULL;
	struct victim v;
	char target[64];
	uint64_t ns;
	int r, e, fd;

	fuse_up();
	v = spawn(v_fuse_reader);
	fd = (int)recv_msg(&v).v[1];
	fuse_hang();
	send_msg(v.sock, MSG(CMD_GO));
	for (int i = 0; i < 2000 && proc_state(v.pid) != 'S' && proc_state(v.pid) != 'D'; i++)
		usleep(1000);
	/* The target is the file on the hung filesystem; its lookup would hang
	 * too, so it is named through the holder's descriptor (/proc/PID/fd
	 * resolves without asking the server). */
	snprintf(target, sizeof(target), "/proc/%d/fd/%d", (int)v.pid, fd);
	r = revoke_timed(target, 0, 1000, &rep, &ns);
	e = errno;
	if (r == 0 || ns > BOUND_NS(1000) || !rep || rep->failed_pid != v.pid ||
	    rep->failed_phase != REVOKE_PHASE_STOP) {
		fuse_down();
		CHECK(r == -1 && (e == EBUSY || e == ETIMEDOUT),
		      "revoke with a holder stuck on the hung server: %d (%s)", r, strerror(e));
		CHECK(ns <= BOUND_NS(1000), "a 1 s timeout took %llu ms",
		      (unsigned long long)(ns / 1000000));
		CHECK(rep && rep->failed_phase == REVOKE_PHASE_STOP && rep->failed_pid == v.pid,
		      "the report says phase %d pid %d, not stopping pid %d",
		      rep ? rep->failed_phase : -1, rep ? rep->failed_pid : -1, (int)v.pid);
	}
	CHECK(strcmp(rep->failed_detail, "state D") == 0 ||
		  strcmp(rep->failed_detail, "state S") == 0,
	      "the report's detail \"%s\"", rep->failed_detail);
	revoke_report_free(rep);
	fuse_down();
}

/* A holder of the FUSE file (fd in v[1]) that answers reads. */
static void v_fuse_holder(int sock)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		_exit(2);
	send_msg(sock, MSG(getpid(), fd));
	holder_loop(sock, fd);
}

/*
 * Past the point of no return the call finishes what it began, however
 * late: each holder's dup3 waits for the slow server's flush (60 ms, one at
 * a time), so cutting 20 holders outlasts a 600 ms timeout. Every holder is
 * cut and the report says so (the caller used to stop waiting at the
 * timeout with the worker mid-cut: some holders cut, the call reported as
 * timed out with nothing done; issue 13, item 1).
 */
static void t_cut_outlasts_timeout(void)
{
	struct revoke_report *rep = NULL;
	struct victim v[20];
	size_t cut = 0;
	uint64_t ns;
	int r, e;

	setenv("FUSEHANG_FLUSH_MS", "60", 1);
	fuse_up();
	unsetenv("FUSEHANG_FLUSH_MS");
	for (size_t i = 0; i < 20; i++) {
		v[i] = spawn(v_fuse_holder);
		recv_msg(&v[i]);
	}
	r = revoke_timed(file, REVOKE_ENGINE_USERSPACE, 600, &rep, &ns);
	e = errno;
	for (size_t i = 0; rep && i < rep->nholders; i++)
		cut += rep->holders[i].state == REVOKE_STATE_CUT;
	fprintf(stderr, "  revoke took %.2f s for a 0.6 s timeout, %zu holders cut\n", ns / 1e9,
		cut);
	CHECK(r == 0, "revoke: %s (%zu holders cut, report's phase %d)", strerror(e), cut,
	      rep ? rep->failed_phase : -1);
	CHECK(cut == 20, "the report says %zu of 20 holders cut", cut);
	for (size_t i = 0; i < 20; i++)
		CHECK_CUT(&v[i]);
	revoke_report_free(rep);
	fuse_down();
}

TEST_MAIN("revoke-timeout", {"lookup_on_hung_fuse", t_lookup_on_hung_fuse, 60},
	  {"command_on_hung_fuse", t_command_on_hung_fuse, 60},
	  {"holder_stuck_in_fuse", t_holder_stuck_in_fuse, 60},
	  {"cut_outlasts_timeout", t_cut_outlasts_timeout, 60})
