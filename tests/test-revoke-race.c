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
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "harness.h"
#include "revoke.h"
/* ---- small local helpers (each conformance file carries its own copy) ---- */

/* One message between a victim and the test (SOCK_SEQPACKET keeps them whole). */
struct msg {
	int64_t v[8];
};
#define MSG(...) ((struct msg){{__VA_ARGS__}})

struct victim {
	pid_t pid;
	int sock; /* the test's end */
};

static char tdir[64];	/* the case's scratch directory */
static char tpath[128]; /* the target file */

static inline int rm_one(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP)
		rmdir(p);
	else
		unlink(p);
	return 0;
}

/*
 * Scratch directory removed by a detached helper once every process of the
 * case is gone: the harness SIGKILLs the case's process group, so a failing
 * case cannot clean up after itself. The helper leaves that group and waits
 * for EOF on a pipe whose write end every process of the case holds.
 */
static inline void make_scratch(void)
{
	int p[2];
	pid_t pid;

	snprintf(tdir, sizeof(tdir), "/tmp/revoke-conf2-XXXXXX");
	CHECK(mkdtemp(tdir), "mkdtemp: %s", strerror(errno));
	CHECK(pipe2(p, O_CLOEXEC) == 0, "pipe2: %s", strerror(errno));
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		char c;
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		setpgid(0, 0);
		alarm(900);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		dup2(p[0], 3);
		close_range(4, ~0U, 0);
		while (read(3, &c, 1) < 0 && errno == EINTR)
			;
		nftw(tdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
		_exit(0);
	}
	setpgid(pid, pid); /* also here: the case may end before the helper runs */
	close(p[0]);
	/* p[1] stays open (close-on-exec) until the case exits. */
	snprintf(tpath, sizeof(tpath), "%s/target", tdir);
}

static inline void make_file(const char *path, const char *content, size_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	CHECK(fd >= 0, "create %s: %s", path, strerror(errno));
	CHECK(write(fd, content, strlen(content)) == (ssize_t)strlen(content), "write: %s",
	      strerror(errno));
	if (size)
		CHECK(ftruncate(fd, size) == 0, "ftruncate: %s", strerror(errno));
	close(fd);
}

static inline void send_msg(int sock, struct msg m)
{
	while (send(sock, &m, sizeof(m), MSG_NOSIGNAL) < 0 && errno == EINTR)
		;
}

/* Receive one message within TIMEOUT_MS: 0, -ETIMEDOUT, -EPIPE (peer gone) or -errno. */
static inline int recv_msg_timeout(int sock, struct msg *m, int timeout_ms)
{
	struct pollfd pfd = {.fd = sock, .events = POLLIN};
	ssize_t n;
	int r;

	do
		r = poll(&pfd, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (r == 0)
		return -ETIMEDOUT;
	do
		n = recv(sock, m, sizeof(*m), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n != sizeof(*m))
		return -EPIPE;
	return 0;
}

static inline char proc_state(pid_t pid);
static inline long proc_status_field(pid_t pid, const char *key);

static inline struct msg recv_msg(const struct victim *v)
{
	struct msg m;
	int r = recv_msg_timeout(v->sock, &m, 15000);

	CHECK(r == 0, "no message from victim %d (state %c, TracerPid %ld): %s", (int)v->pid,
	      proc_state(v->pid), proc_status_field(v->pid, "TracerPid"), strerror(-r));
	return m;
}

/* Victim side: wait for the next command (or die with the test). */
static inline struct msg victim_recv(int sock)
{
	struct msg m;
	int r = recv_msg_timeout(sock, &m, -1);

	if (r < 0)
		_exit(3);
	return m;
}

/* Fork a victim running FN(sock); it dies with the test (PR_SET_PDEATHSIG). */
static inline struct victim spawn(void (*fn)(int sock))
{
	pid_t parent = getpid(), pid;
	int sv[2];

	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0, "socketpair: %s",
	      strerror(errno));
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		close(sv[0]);
		fn(sv[1]);
		_exit(0);
	}
	close(sv[1]);
	return (struct victim){.pid = pid, .sock = sv[0]};
}

/* Read a small /proc file into BUF; 0 or -errno. */
static inline int read_proc(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return 0;
}

/* The state letter of /proc/PID/stat (after the last ')'), or 0. */
static inline char proc_state(pid_t pid)
{
	char path[64], buf[1024], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_proc(path, buf, sizeof(buf)) < 0)
		return 0;
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return 0;
	return p[2];
}

/* A "Key:" field of /proc/PID/status as a number, or -1. */
static inline long proc_status_field(pid_t pid, const char *key)
{
	char path[64], buf[4096], *p;
	size_t klen = strlen(key);

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_proc(path, buf, sizeof(buf)) < 0)
		return -1;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, key, klen) == 0 && p[klen] == ':')
			return strtol(p + klen + 1, NULL, 10);
	return -1;
}

/* Whether fd FD of PID refers to the file ST describes. */
static inline bool proc_fd_is(pid_t pid, int fd, const struct stat *st)
{
	char path[64];
	struct stat s;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
	if (stat(path, &s) < 0)
		return false;
	return s.st_dev == st->st_dev && s.st_ino == st->st_ino;
}

static inline void msleep(unsigned int ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The state letter of thread TID of PID. */
static inline char task_state(pid_t pid, pid_t tid)
{
	char path[80], buf[1024], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	if (read_proc(path, buf, sizeof(buf)) < 0)
		return 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/* Wait (up to 5 s) until thread TID of PID sleeps in syscall NR or ALT (-1: none). */
static inline bool wait_in_syscall(pid_t pid, pid_t tid, long nr, long alt)
{
	char path[80], buf[256];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	for (int i = 0; i < 500; i++) {
		if (read_proc(path, buf, sizeof(buf)) == 0 && buf[0] >= '0' && buf[0] <= '9') {
			long n = strtol(buf, NULL, 10);
			char st = task_state(pid, tid);
			if ((n == nr || n == alt) && (st == 'S' || st == 'D'))
				return true;
		}
		msleep(10);
	}
	return false;
}

/* ---- a plain holder: opens the target and answers commands ---- */
enum { CMD_READ = 1, CMD_QUIT, CMD_GO };

static inline void holder_loop(int sock, int fd)
{
	for (int i = 0; i < 10000; i++) {
		struct msg m = victim_recv(sock);
		char b[8] = {0};
		ssize_t r;

		if (m.v[0] == CMD_QUIT)
			_exit(0);
		if (m.v[0] != CMD_READ)
			continue;
		errno = 0;
		r = pread(fd, b, 5, 0);
		send_msg(sock, MSG(r, r < 0 ? errno : 0, b[0]));
	}
	_exit(4);
}

static inline void holder_main(int sock)
{
	int fd = open(tpath, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		_exit(2);
	send_msg(sock, MSG(getpid(), fd));
	holder_loop(sock, fd);
}

/* Ask a holder to pread its descriptor: v[0] result, v[1] errno, v[2] first byte. */
static inline struct msg ask_read(const struct victim *v)
{
	send_msg(v->sock, MSG(CMD_READ));
	return recv_msg(v);
}

/* Check that holder V still reads the target's first bytes ("hello"). */
#define CHECK_READS(vic)                                                                           \
	do {                                                                                       \
		struct msg m_ = ask_read(vic);                                                     \
		CHECK(m_.v[0] == 5 && m_.v[2] == 'h',                                              \
		      "holder %d: read gave %lld (%s), not 5 bytes", (int)(vic)->pid,              \
		      (long long)m_.v[0], strerror((int)m_.v[1]));                                 \
	} while (0)

/* Check that holder V's descriptor was cut: pread fails with EBADF. */
#define CHECK_CUT(vic)                                                                             \
	do {                                                                                       \
		struct msg m_ = ask_read(vic);                                                     \
		CHECK(m_.v[0] == -1 && m_.v[1] == EBADF,                                           \
		      "holder %d: read gave %lld (%s), expected EBADF", (int)(vic)->pid,           \
		      (long long)m_.v[0], strerror((int)m_.v[1]));                                 \
	} while (0)

static inline const struct revoke_holder *find_holder(const struct revoke_report *rep, pid_t pid)
{
	for (size_t i = 0; rep && i < rep->nholders; i++)
		if (rep->holders[i].pid == pid)
			return &rep->holders[i];
	return NULL;
}

static inline const struct revoke_ref *find_ref(const struct revoke_holder *h, int type)
{
	for (size_t i = 0; h && i < h->nrefs; i++)
		if (h->refs[i].type == type)
			return &h->refs[i];
	return NULL;
}

/* From a thread of the test: wait (up to 2 s) until the revoke running in the
 * main thread has seized PID, so that what follows lands while it is stopped. */
static inline bool wait_traced(pid_t pid)
{
	for (int i = 0; i < 10000; i++) {
		long t = proc_status_field(pid, "TracerPid");

		if (t != 0)
			return t > 0;
		usleep(200);
	}
	return false;
}

/* revoke(PATH) through revoke_ex, so that a failure says which holder refused and why. */
static inline int revoke_explained(const char *path)
{
	struct revoke_report *rep = NULL;
	int r, e;

	r = revoke_ex(&path, 1, NULL, &rep);
	e = errno;
	for (size_t i = 0; r < 0 && rep && i < rep->nholders; i++) {
		const struct revoke_holder *h = &rep->holders[i];

		fprintf(stderr, "  holder %d (%s): %s, error %d %s\n", (int)h->pid, h->comm,
			revoke_state_name(h->state), h->error, h->reason);
		for (size_t j = 0; j < h->nrefs; j++)
			fprintf(stderr, "    %s %d: %s, error %d\n",
				revoke_ref_type_name(h->refs[j].type), h->refs[j].fd,
				revoke_state_name(h->refs[j].state), h->refs[j].error);
	}
	revoke_report_free(rep);
	errno = e;
	return r;
}

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
	msleep(20);
	n = fds_referring(v.pid, &st, &fd);
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

static void *killer(void *arg)
{
	(void)arg;
	wait_traced(g_kill_pid);
	kill(g_kill_pid, SIGKILL);
	return NULL;
}

static void t_holder_killed_during(void)
{
	struct victim a, b;
	pthread_t t;
	int r;

	make_scratch();
	make_file(tpath, "hello", 0);
	for (int round = 0; round < 5; round++) {
		a = spawn(holder_main);
		recv_msg(&a);
		b = spawn(holder_main);
		recv_msg(&b);
		g_kill_pid = a.pid;
		CHECK(pthread_create(&t, NULL, killer, NULL) == 0, "pthread_create");
		r = revoke_explained(tpath);
		pthread_join(t, NULL);
		CHECK(r == 0, "round %d: revoke: %s", round, strerror(errno));
		CHECK_CUT(&b);
		close(a.sock);
		send_msg(b.sock, MSG(CMD_QUIT));
		close(b.sock);
	}
}

/* ---- two callers revoking the same file at once ---- */

static void v_caller(int sock)
{
	int r, e;

	victim_recv(sock);
	r = revoke_explained(tpath);
	e = errno;
	send_msg(sock, MSG(r, r < 0 ? e : 0));
	victim_recv(sock);
}

static void t_concurrent_revokes(void)
{
	struct victim h[5], c[2];
	struct msg m[2];
	bool any_ok = false;

	make_scratch();
	make_file(tpath, "hello", 0);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 5; i++) {
			h[i] = spawn(holder_main);
			recv_msg(&h[i]);
		}
		for (int i = 0; i < 2; i++)
			c[i] = spawn(v_caller);
		for (int i = 0; i < 2; i++)
			send_msg(c[i].sock, MSG(CMD_GO));
		for (int i = 0; i < 2; i++) {
			m[i] = recv_msg(&c[i]);
			/* The loser finds holders traced by the winner: EBUSY (or, on a
			 * loaded machine, ETIMEDOUT), and nothing done by it. */
			CHECK(m[i].v[0] == 0 || (m[i].v[0] == -1 &&
						 (m[i].v[1] == EBUSY || m[i].v[1] == ETIMEDOUT)),
			      "round %d caller %d: revoke returned %lld (%s)", round, i,
			      (long long)m[i].v[0], strerror((int)m[i].v[1]));
		}
		any_ok = m[0].v[0] == 0 || m[1].v[0] == 0;
		for (int i = 0; i < 5; i++) {
			char s = proc_state(h[i].pid);

			CHECK(s == 'S' || s == 'R', "round %d: holder %d in state %c afterwards",
			      round, (int)h[i].pid, s);
			CHECK(proc_status_field(h[i].pid, "TracerPid") == 0,
			      "round %d: holder %d left traced", round, (int)h[i].pid);
			if (any_ok)
				CHECK_CUT(&h[i]);
			else
				CHECK_READS(&h[i]);
		}
		for (int i = 0; i < 5; i++) {
			send_msg(h[i].sock, MSG(CMD_QUIT));
			close(h[i].sock);
		}
		for (int i = 0; i < 2; i++)
			close(c[i].sock);
		/* A fresh file for the next round: the old one is revoked. */
		unlink(tpath);
		make_file(tpath, "hello", 0);
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

TEST_MAIN("revoke-race", {"forking_holder", t_forking_holder, 60},
	  {"dup_loop_threads", t_dup_loop_threads, 30},
	  {"holders_exit_during", t_holders_exit_during, 60},
	  {"holder_killed_during", t_holder_killed_during, 30},
	  {"concurrent_revokes", t_concurrent_revokes, 60},
	  {"threads_spawning_during", t_threads_spawning_during, 30},
	  {"holder_execs_during", t_holder_execs_during, 60}, )
