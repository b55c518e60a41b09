/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared fixture of the part-2 conformance programs (test-revoke-race,
 * -transparent, -report, -unreachable, -allornothing): victims forked with
 * PR_SET_PDEATHSIG that talk to the test over a SOCK_SEQPACKET pair, a scratch
 * directory that outlives a killed case only until its last process is gone,
 * small /proc readers, a plain holder and its CHECK_READS/CHECK_CUT checks,
 * report look-ups and a revoke() that explains a failure.
 *
 * Everything is static (inline), so each program gets its own copy of the
 * state (tdir, tpath) and unused helpers cost nothing. It includes what it
 * needs (harness.h and revoke.h among them), so it can come first or last.
 * tests/victim.h is a different fixture for other programs; do not mix them.
 */
#ifndef REVOKE_TEST_CONFORM_H
#define REVOKE_TEST_CONFORM_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "harness.h"
#include "revoke.h"

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
static inline unsigned long long proc_status_hex(pid_t pid, const char *key);

static inline struct msg recv_msg(const struct victim *v)
{
	struct msg m;
	int r = recv_msg_timeout(v->sock, &m, 15000);

	/* The signal words tell a signal left blocked (a mask not put back)
	 * from a call that went on waiting. */
	CHECK(r == 0,
	      "no message from victim %d (state %c, TracerPid %ld, SigPnd %llx ShdPnd %llx SigBlk "
	      "%llx): %s",
	      (int)v->pid, proc_state(v->pid), proc_status_field(v->pid, "TracerPid"),
	      proc_status_hex(v->pid, "SigPnd"), proc_status_hex(v->pid, "ShdPnd"),
	      proc_status_hex(v->pid, "SigBlk"), strerror(-r));
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
/* The value of KEY in /proc/PID/status, parsed in BASE; FAIL if absent. */
static inline unsigned long long proc_status_value(pid_t pid, const char *key, int base,
						   unsigned long long fail)
{
	char path[64], buf[4096], *p;
	size_t klen = strlen(key);

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_proc(path, buf, sizeof(buf)) < 0)
		return fail;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, key, klen) == 0 && p[klen] == ':')
			return strtoull(p + klen + 1, NULL, base);
	return fail;
}

static inline long proc_status_field(pid_t pid, const char *key)
{
	return (long)proc_status_value(pid, key, 10, (unsigned long long)-1);
}

static inline unsigned long long proc_status_hex(pid_t pid, const char *key)
{
	return proc_status_value(pid, key, 16, ~0ull);
}

/* PID's hard RLIMIT_NOFILE, or -1. */
static inline long long proc_limit_nofile_hard(pid_t pid)
{
	struct rlimit rl;

	return prlimit(pid, RLIMIT_NOFILE, NULL, &rl) == 0 ? (long long)rl.rlim_max : -1;
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
	char path[80], buf[256] = "", st = '?';
	int e = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	for (int i = 0; i < 500; i++) {
		e = read_proc(path, buf, sizeof(buf));
		if (e == 0 && buf[0] >= '0' && buf[0] <= '9') {
			long n = strtol(buf, NULL, 10);
			st = task_state(pid, tid);
			if ((n == nr || n == alt) && (st == 'S' || st == 'D'))
				return true;
		}
		msleep(10);
	}
	buf[strcspn(buf, "\n")] = 0;
	fprintf(stderr, "  %s: \"%.60s\" (%s), state %c\n", path, e ? "" : buf, strerror(-e), st);
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

/* Whether revoke here goes to the native syscalls (kernel/), as lib/native.c
 * decides: the marker of the patched kernel, unless REVOKE_ENGINE=ptrace. */
static inline bool engine_native(void)
{
	const char *e = getenv("REVOKE_ENGINE");

	return access("/sys/kernel/revoke/syscalls", F_OK) == 0 && !(e && strcmp(e, "ptrace") == 0);
}

/* From a thread of the test: wait (up to 2 s) until the revoke running in the
 * main thread has seized PID, so that what follows lands while it is stopped.
 * The native engine stops nobody: there, "during" is as close as the thread
 * gets to the system call, i.e. at once. */
static inline bool wait_traced(pid_t pid)
{
	if (engine_native())
		return true;
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
	if (r < 0 && rep)
		fprintf(stderr, "  failed %s (%s), while %s pid %d %s after %.3f s\n",
			strerror(rep->error), strerror(e), revoke_phase_name(rep->failed_phase),
			(int)rep->failed_pid, rep->failed_detail, rep->elapsed_ns / 1e9);
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

#endif /* REVOKE_TEST_CONFORM_H */
