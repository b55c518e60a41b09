/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Conformance, part 2: races. Holders fork, dup and exit while revoke runs;
 * when revoke returns 0 no process may still hold the target, and a holder
 * that goes away on its own is no reason to fail.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "harness.h"
#include "revoke.h"
#include "conform.h"

/* Every process of the system whose parent chain leads to ROOT (ROOT excluded). */
static size_t descendants(pid_t root, pid_t *out, size_t max)
{
	static pid_t pids[65536], ppids[65536];
	size_t n = 0, nout = 0;
	struct dirent *de;
	DIR *d = opendir("/proc");
	bool grew = true;

	CHECK(d, "opendir /proc: %s", strerror(errno));
	while ((de = readdir(d)) && n < 65536) {
		char path[64], buf[1024], *p;
		long pid = strtol(de->d_name, &p, 10);

		if (*p || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		if (read_proc(path, buf, sizeof(buf)) < 0)
			continue;
		p = strrchr(buf, ')');
		if (!p || strlen(p) < 5)
			continue;
		pids[n] = (pid_t)pid;
		ppids[n] = (pid_t)strtol(p + 4, NULL, 10);
		n++;
	}
	closedir(d);
	/* Closure over the parent relation, bounded by the number of processes. */
	out[nout++] = root;
	for (size_t round = 0; grew && round < n; round++) {
		grew = false;
		for (size_t i = 0; i < n; i++) {
			bool parent_in = false, in = false;
			for (size_t j = 0; j < nout; j++) {
				parent_in |= out[j] == ppids[i];
				in |= out[j] == pids[i];
			}
			if (parent_in && !in && nout < max) {
				out[nout++] = pids[i];
				grew = true;
			}
		}
	}
	memmove(out, out + 1, (nout - 1) * sizeof(*out));
	return nout - 1;
}

/* Which fds of PID refer to the file ST describes: count, first one in *ret_fd. */
static int fds_referring(pid_t pid, const struct stat *st, int *ret_fd)
{
	char path[64];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return 0; /* gone */
	while ((de = readdir(d))) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);

		if (*end || de->d_name[0] == '.')
			continue;
		if (proc_fd_is(pid, (int)fd, st)) {
			if (n++ == 0)
				*ret_fd = (int)fd;
		}
	}
	closedir(d);
	return n;
}

/* ---- a holder that forks continuously ---- */

#define NFORKS 200

static void v_forker(int sock)
{
	int fd = open(tpath, O_RDONLY | O_CLOEXEC);
	pid_t me = getpid();
	int i;

	if (fd < 0)
		_exit(2);
	for (i = 0; i < NFORKS; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != me)
				_exit(0);
			close(sock);
			msleep(30000);
			_exit(0);
		}
		if (i == 5)
			send_msg(sock, MSG(getpid()));
		msleep(4);
	}
	send_msg(sock, MSG(getpid(), i));
	victim_recv(sock);
}

static void t_forking_holder(void)
{
	static pid_t pids[4096];
	struct victim v;
	struct stat st;
	size_t n, holders_checked = 0;
	struct msg m;

	make_scratch();
	make_file(tpath, "hello", 0);
	CHECK(stat(tpath, &st) == 0, "stat: %s", strerror(errno));
	v = spawn(v_forker);
	recv_msg(&v);
	CHECK(revoke_explained(tpath) == 0, "revoke: %s", strerror(errno));
	n = descendants(getpid(), pids, 4096);
	for (size_t i = 0; i < n; i++) {
		int fd = -1;
		CHECK(fds_referring(pids[i], &st, &fd) == 0,
		      "descendant %d still holds the target at fd %d after revoke returned 0",
		      (int)pids[i], fd);
		holders_checked++;
	}
	CHECK(holders_checked > 6, "only %zu descendants found", holders_checked);
	/* And once the forking is over. */
	m = recv_msg(&v);
	CHECK(m.v[1] == NFORKS, "forker stopped after %lld forks", (long long)m.v[1]);
	n = descendants(getpid(), pids, 4096);
	for (size_t i = 0; i < n; i++) {
		int fd = -1;
		CHECK(fds_referring(pids[i], &st, &fd) == 0,
		      "descendant %d holds the target at fd %d", (int)pids[i], fd);
	}
}

/* ---- threads dup()ing the target in a loop ---- */

#define NDUPPERS 4
#define RING	 32

static _Atomic int g_stop;
static int g_fd = -1;

static void *dupper(void *arg)
{
	int ring[RING];
	uint64_t deadline = now_ns() + 15000000000ull;
	long i;

	(void)arg;
	for (i = 0; i < RING; i++)
		ring[i] = -1;
	for (i = 0; i < 2000000 && !g_stop && now_ns() < deadline; i++) {
		int k = (int)(i % RING), n = dup(g_fd);

		if (ring[k] >= 0)
			close(ring[k]);
		ring[k] = n;
	}
	return NULL;
}

static void v_dupper(int sock)
{
	pthread_t t[NDUPPERS];
	char b;
	ssize_t r;

	g_fd = open(tpath, O_RDONLY | O_CLOEXEC);
	if (g_fd < 0)
		_exit(2);
	for (int i = 0; i < NDUPPERS; i++)
		if (pthread_create(&t[i], NULL, dupper, NULL) != 0)
			_exit(2);
	send_msg(sock, MSG(getpid(), g_fd));
	victim_recv(sock);
	g_stop = 1;
	for (int i = 0; i < NDUPPERS; i++)
		pthread_join(t[i], NULL);
	errno = 0;
	r = read(g_fd, &b, 1);
	send_msg(sock, MSG(r, r < 0 ? errno : 0));
	victim_recv(sock);
}

static void t_dup_loop_threads(void)
{
	struct victim v;
	struct stat st;
	struct msg m;
	int n, fd = -1;

	make_scratch();
	make_file(tpath, "hello", 0);
	CHECK(stat(tpath, &st) == 0, "stat: %s", strerror(errno));
	v = spawn(v_dupper);
	recv_msg(&v);
	/* Until the threads have dup()ed (milliseconds; longer under QEMU's TCG). */
	for (int i = 0; (n = fds_referring(v.pid, &st, &fd)) <= 1 && i < 200; i++)
		msleep(10);
	CHECK(n > 1, "the threads are not dup()ing (%d fds)", n);
	CHECK(revoke_explained(tpath) == 0, "revoke: %s", strerror(errno));
	n = fds_referring(v.pid, &st, &fd);
	CHECK(n == 0, "%d fds of the victim (fd %d first) still refer to the target", n, fd);
	send_msg(v.sock, MSG(CMD_GO));
	m = recv_msg(&v);
	CHECK(m.v[0] == -1 && m.v[1] == EBADF, "victim's own fd: read gave %lld (%s), not EBADF",
	      (long long)m.v[0], strerror((int)m.v[1]));
	n = fds_referring(v.pid, &st, &fd);
	CHECK(n == 0, "%d fds of the victim (fd %d first) refer to the target", n, fd);
}

/* ---- holders that exit while revoke runs ---- */

#define NEXITERS 16
#define NSTAYERS 3

static int g_delay_us;

static void v_exiter(int sock)
{
	int fd = open(tpath, O_RDONLY | O_CLOEXEC);
	struct timespec ts;

	if (fd < 0)
		_exit(2);
	send_msg(sock, MSG(getpid()));
	victim_recv(sock);
	ts = (struct timespec){.tv_sec = 0, .tv_nsec = g_delay_us * 1000L};
	if (g_delay_us)
		nanosleep(&ts, NULL);
	_exit(0);
}

static void t_holders_exit_during(void)
{
	struct victim ex[NEXITERS], stay[NSTAYERS];

	make_scratch();
	make_file(tpath, "hello", 0);
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < NSTAYERS; i++) {
			stay[i] = spawn(holder_main);
			recv_msg(&stay[i]);
		}
		for (int i = 0; i < NEXITERS; i++) {
			g_delay_us = i * (round + 1) * 500; /* staggered over 0..30 ms */
			ex[i] = spawn(v_exiter);
			recv_msg(&ex[i]);
		}
		for (int i = 0; i < NEXITERS; i++)
			send_msg(ex[i].sock, MSG(CMD_GO));
		/* The exiters stay unreaped zombies until the case ends. */
		CHECK(revoke_explained(tpath) == 0, "round %d: revoke: %s", round, strerror(errno));
		for (int i = 0; i < NSTAYERS; i++) {
			CHECK_CUT(&stay[i]);
			CHECK(proc_status_field(stay[i].pid, "TracerPid") == 0,
			      "holder left traced");
		}
		for (int i = 0; i < NEXITERS; i++)
			close(ex[i].sock);
	}
}

/* ---- a holder that exits while stopped: killed by a thread of the test ---- */

static pid_t g_kill_pid;
static atomic_bool g_revoke_done, g_killed_traced;

/* Kills the holder as soon as it is seen traced (or once the revoke is
 * over, if the stop was too short to be seen). */
static void *killer(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100000 && !atomic_load(&g_revoke_done); i++) {
		if (engine_native() || proc_status_field(g_kill_pid, "TracerPid") > 0) {
			atomic_store(&g_killed_traced, !engine_native());
			break;
		}
		usleep(50);
	}
	kill(g_kill_pid, SIGKILL);
	return NULL;
}

#define NOTHERS 24

static void t_holder_killed_during(void)
{
	struct victim a, b[NOTHERS];
	int landed = 0;
	pthread_t t;
	int r;

	make_scratch();
	make_file(tpath, "hello", 0);
	for (int round = 0; round < 8; round++) {
		a = spawn(holder_main);
		recv_msg(&a);
		/* Others, so that the call lasts long enough for the kill to land
		 * while the holder is stopped. */
		for (int i = 0; i < NOTHERS; i++) {
			b[i] = spawn(holder_main);
			recv_msg(&b[i]);
		}
		g_kill_pid = a.pid;
		atomic_store(&g_revoke_done, false);
		atomic_store(&g_killed_traced, false);
		CHECK(pthread_create(&t, NULL, killer, NULL) == 0, "pthread_create");
		r = revoke_explained(tpath);
		atomic_store(&g_revoke_done, true);
		pthread_join(t, NULL);
		CHECK(r == 0, "round %d: revoke: %s", round, strerror(errno));
		landed += atomic_load(&g_killed_traced);
		for (int i = 0; i < NOTHERS; i++) {
			CHECK_CUT(&b[i]);
			CHECK(proc_status_field(b[i].pid, "TracerPid") == 0, "holder left traced");
			send_msg(b[i].sock, MSG(CMD_QUIT));
			close(b[i].sock);
		}
		close(a.sock);
	}
	if (!engine_native())
		CHECK(landed > 0, "the kill never landed while the holder was stopped (8 rounds)");
}

/* ---- two callers revoking the same file at once ---- */

/* Revokes tpath; answers its result, errno, how many holders its report
 * has and how many of them it cut. */
static void v_caller(int sock)
{
	struct revoke_opts o = {.sz = sizeof(o), .keep_fd = -1};
	struct revoke_report *rep = NULL;
	const char *path = tpath;
	size_t cut = 0;
	int r, e;

	victim_recv(sock);
	r = revoke_ex(&path, 1, &o, &rep);
	e = errno;
	for (size_t i = 0; rep && i < rep->nholders; i++)
		cut += rep->holders[i].state == REVOKE_STATE_CUT;
	send_msg(sock, MSG(r, r < 0 ? e : 0, rep ? (int64_t)rep->nholders : -1, (int64_t)cut));
	revoke_report_free(rep);
	victim_recv(sock);
}

/* Two, three, then ten callers revoking the same file at once: every one
 * succeeds (they take turns; those after the first find nothing left to
 * cut), every holder is cut, none is left stopped or traced, and the
 * reports name the holders only: the callers' own descriptors of the file
 * (their O_PATH lookups) are no holders to cut or count (issue 13, item 3). */
#define NCALLERS 10
#define NHOLD	 8

static void t_concurrent_revokes(void)
{
	static const int ncallers[] = {2, 3, NCALLERS};
	struct victim h[NHOLD], c[NCALLERS];
	struct msg m;

	make_scratch();
	make_file(tpath, "hello", 0);
	for (int round = 0; round < 3; round++) {
		int n = ncallers[round];
		int64_t listed = 0, cut = 0;

		for (int i = 0; i < NHOLD; i++) {
			h[i] = spawn(holder_main);
			recv_msg(&h[i]);
		}
		for (int i = 0; i < n; i++)
			c[i] = spawn(v_caller);
		for (int i = 0; i < n; i++)
			send_msg(c[i].sock, MSG(CMD_GO));
		for (int i = 0; i < n; i++) {
			m = recv_msg(&c[i]);
			CHECK(m.v[0] == 0, "round %d caller %d of %d: revoke returned %lld (%s)",
			      round, i, n, (long long)m.v[0], strerror((int)m.v[1]));
			listed += m.v[2];
			cut += m.v[3];
		}
		CHECK(listed == NHOLD && cut == NHOLD,
		      "round %d (%d callers): the reports list %lld holders and cut %lld, "
		      "expected the %d holders once (callers counted as holders?)",
		      round, n, (long long)listed, (long long)cut, NHOLD);
		for (int i = 0; i < NHOLD; i++) {
			char st = proc_state(h[i].pid);

			CHECK(st == 'S' || st == 'R', "round %d: holder %d in state %c afterwards",
			      round, (int)h[i].pid, st);
			CHECK(proc_status_field(h[i].pid, "TracerPid") == 0,
			      "round %d: holder %d left traced", round, (int)h[i].pid);
			CHECK_CUT(&h[i]);
			send_msg(h[i].sock, MSG(CMD_QUIT));
			close(h[i].sock);
		}
		for (int i = 0; i < n; i++)
			close(c[i].sock);
		/* A fresh file for the next round: the old one is revoked. */
		unlink(tpath);
		make_file(tpath, "hello", 0);
	}
}

/* Ten callers, each revoking another file, all of them held by the same
 * holders: every one succeeds. */
static char g_files[NCALLERS][160];
static int g_which;

static void v_caller_of(int sock)
{
	int r, e;

	victim_recv(sock);
	r = revoke_explained(g_files[g_which]);
	e = errno;
	send_msg(sock, MSG(r, r < 0 ? e : 0));
	victim_recv(sock);
}

/* Holds every file of g_files; on CMD_READ reports how many still read. */
static void v_multi_holder(int sock)
{
	int fds[NCALLERS];

	for (int i = 0; i < NCALLERS; i++) {
		fds[i] = open(g_files[i], O_RDONLY | O_CLOEXEC);
		if (fds[i] < 0)
			_exit(2);
	}
	send_msg(sock, MSG(getpid()));
	for (;;) {
		struct msg m = victim_recv(sock);
		int readable = 0;
		char b;

		if (m.v[0] != CMD_READ)
			_exit(0);
		for (int i = 0; i < NCALLERS; i++)
			readable += pread(fds[i], &b, 1, 0) == 1;
		send_msg(sock, MSG(readable));
	}
}

static void t_concurrent_shared_holders(void)
{
	struct victim h[NHOLD], c[NCALLERS];
	struct msg m;

	make_scratch();
	for (int i = 0; i < NCALLERS; i++) {
		snprintf(g_files[i], sizeof(g_files[i]), "%s/f%d", tdir, i);
		make_file(g_files[i], "hello", 0);
	}
	for (int i = 0; i < NHOLD; i++) {
		h[i] = spawn(v_multi_holder);
		recv_msg(&h[i]);
	}
	for (int i = 0; i < NCALLERS; i++) {
		g_which = i;
		c[i] = spawn(v_caller_of);
	}
	for (int i = 0; i < NCALLERS; i++)
		send_msg(c[i].sock, MSG(CMD_GO));
	for (int i = 0; i < NCALLERS; i++) {
		m = recv_msg(&c[i]);
		CHECK(m.v[0] == 0, "caller %d of %d: revoke returned %lld (%s)", i, NCALLERS,
		      (long long)m.v[0], strerror((int)m.v[1]));
	}
	for (int i = 0; i < NHOLD; i++) {
		CHECK(proc_status_field(h[i].pid, "TracerPid") == 0, "holder %d left traced",
		      (int)h[i].pid);
		send_msg(h[i].sock, MSG(CMD_READ));
		m = recv_msg(&h[i]);
		CHECK(m.v[0] == 0, "holder %d still reads %lld of the %d files", (int)h[i].pid,
		      (long long)m.v[0], NCALLERS);
	}
}

/* ---- a holder that keeps starting threads, each reading the target FIFO ---- */

#define NSPAWNED 120

static int g_sock;

static void *spawned_reader(void *arg)
{
	char b;
	ssize_t r;

	errno = 0;
	r = read(g_fd, &b, 1);
	send_msg(g_sock, MSG((intptr_t)arg, r, r < 0 ? errno : 0));
	return NULL;
}

static void v_thread_spawner(int sock)
{
	pthread_attr_t attr;
	int i;

	g_sock = sock;
	g_fd = open(tpath, O_RDWR | O_CLOEXEC);
	if (g_fd < 0)
		_exit(2);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (i = 0; i < NSPAWNED; i++) {
		pthread_t t;

		if (pthread_create(&t, &attr, spawned_reader, (void *)(intptr_t)i) != 0)
			break;
		if (i == 5)
			send_msg(sock, MSG(-2, getpid()));
		msleep(3);
	}
	send_msg(sock, MSG(-1, i));
	victim_recv(sock);
}

static void t_threads_spawning_during(void)
{
	struct victim v;
	struct msg m;
	int nthreads = -1, nreports = 0;

	make_scratch();
	CHECK(mkfifo(tpath, 0600) == 0, "mkfifo: %s", strerror(errno));
	v = spawn(v_thread_spawner);
	m = recv_msg(&v);
	CHECK(m.v[0] == -2, "victim did not start");
	CHECK(revoke_explained(tpath) == 0, "revoke: %s", strerror(errno));
	for (int i = 0; i < NSPAWNED + 1 && (nthreads < 0 || nreports < nthreads); i++) {
		m = recv_msg(&v);
		if (m.v[0] == -1) {
			nthreads = (int)m.v[1];
			continue;
		}
		nreports++;
		CHECK(m.v[1] == -1 && m.v[2] == EBADF,
		      "thread %lld: read returned %lld (%s), not EBADF", (long long)m.v[0],
		      (long long)m.v[1], strerror((int)m.v[2]));
	}
	CHECK(nthreads == NSPAWNED, "victim started %d threads", nthreads);
	CHECK(nreports == nthreads, "%d of %d threads reported", nreports, nthreads);
}

/* ---- a holder that execs while revoke runs (its fd survives exec) ---- */

static void v_execer(int sock)
{
	int fd = open(tpath, O_RDONLY); /* no O_CLOEXEC: the new program inherits it */

	if (fd < 0)
		_exit(2);
	send_msg(sock, MSG(getpid(), fd));
	victim_recv(sock);
	execl("/bin/sleep", "sleep", "30", (char *)NULL);
	_exit(127);
}

static void t_holder_execs_during(void)
{
	struct stat st;

	make_scratch();
	make_file(tpath, "hello", 0);
	CHECK(stat(tpath, &st) == 0, "stat: %s", strerror(errno));
	for (int round = 0; round < 6; round++) {
		struct victim v = spawn(v_execer);
		int fd = (int)recv_msg(&v).v[1], n, first = -1;
		char s;

		send_msg(v.sock, MSG(CMD_GO));
		if (round & 1)
			msleep(round);
		CHECK(revoke_explained(tpath) == 0, "round %d: revoke: %s", round, strerror(errno));
		n = fds_referring(v.pid, &st, &first);
		CHECK(n == 0, "round %d: fd %d of the exec'ing holder still refers to the target",
		      round, first);
		msleep(20);
		s = proc_state(v.pid);
		CHECK(s == 'S' || s == 'R', "round %d: holder state %c after exec and revoke",
		      round, s);
		CHECK(!proc_fd_is(v.pid, fd, &st), "round %d: fd %d refers to the target", round,
		      fd);
		close(v.sock);
	}
}

/* ---- ptrace revokes by one user take turns (lib/lock.c) ---- */

static void t_one_ptrace_revoke_per_user(void)
{
	struct revoke_opts o = {
	    .sz = sizeof(o), .flags = REVOKE_ENGINE_USERSPACE, .timeout_ms = 400, .keep_fd = -1};
	const char *paths[1] = {tpath};
	char lock[64];
	struct victim v;
	int fd;

	make_scratch();
	make_file(tpath, "hello", 0);
	v = spawn(holder_main);
	recv_msg(&v);
	if (geteuid() == 0)
		snprintf(lock, sizeof(lock), "/run/librevoke.lock");
	else
		snprintf(lock, sizeof(lock), "/run/user/%u/librevoke.lock", (unsigned)geteuid());
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		SKIP("%s: %s (the library goes on without the lock there)", lock, strerror(errno));
	/* Another revoke by this user in progress: this one waits, up to half
	 * its timeout, and then gives up having changed nothing. */
	CHECK(flock(fd, LOCK_EX) == 0, "flock: %s", strerror(errno));
	errno = 0;
	CHECK(revoke_ex(paths, 1, &o, NULL) == -1 && errno == ETIMEDOUT,
	      "revoke_ex while another holds the lock: %s, expected ETIMEDOUT", strerror(errno));
	CHECK_READS(&v);
	CHECK(proc_status_field(v.pid, "TracerPid") == 0, "holder left traced");
	CHECK(flock(fd, LOCK_UN) == 0, "unlock: %s", strerror(errno));
	/* Once free, a bound that a loaded machine does not run out of: 400 ms
	 * was only for the wait above. */
	o.timeout_ms = 20000;
	CHECK(revoke_ex(paths, 1, &o, NULL) == 0, "revoke_ex once it is free: %s", strerror(errno));
	CHECK_CUT(&v);
	close(fd);
	send_msg(v.sock, MSG(CMD_QUIT));
}

TEST_MAIN("revoke-race", {"forking_holder", t_forking_holder, 60},
	  {"dup_loop_threads", t_dup_loop_threads, 30},
	  {"holders_exit_during", t_holders_exit_during, 60},
	  {"holder_killed_during", t_holder_killed_during, 30},
	  {"concurrent_shared_holders", t_concurrent_shared_holders, 120},
	  {"concurrent_revokes", t_concurrent_revokes, 60},
	  {"one_ptrace_revoke_per_user", t_one_ptrace_revoke_per_user, 30},
	  {"threads_spawning_during", t_threads_spawning_during, 30},
	  {"holder_execs_during", t_holder_execs_during, 60}, )
