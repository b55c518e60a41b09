/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * seat-agent: the systemd guest's stand-in for a user at the keyboard and the
 * programs of their session (scripts/run-systemd-guest, tests/seat/).
 *
 *   seat-agent session        the login shell of alice and bob on their VTs:
 *                             listens on /run/revoke-guest/agents/USER-TTY.sock;
 *                             each connection is served by a child of the
 *                             session (so in its cgroup, with its uid)
 *   seat-agent client SOCKET  bridges standard input and output to an agent
 *                             (the scenarios are bash, which has no unix sockets)
 *   seat-agent hold PATH...   a holder on standard input and output (root's)
 *   seat-agent kill-when-traced PID TRACER VICTIM SECONDS
 *                             SIGKILL to VICTIM as soon as TRACER traces PID
 *   seat-agent run-when-traced PID TRACER SECONDS CMD...
 *                             runs CMD as soon as TRACER traces PID
 *
 * On a connection (or a holder's standard input), one line at a time:
 *   hold PATH...  open each PATH (read-write, else read-only); answer
 *                 "held PID FD..." (FD is -ERRNAME when the open failed); the
 *                 serving process is then the holder and leaves the terminal's
 *                 session (setsid), as a background program does
 *   check         "check S..." for each held descriptor: "ok", or the errno's
 *                 name of a harmless call on it (the device's version ioctl
 *                 for sound and video, FIOCLEX otherwise; EBADF when revoked)
 *   reopen        "reopen S...": opening each PATH again now (logind's ACL)
 *   seccomp       the serving process puts itself under a seccomp filter
 *   whoami        "uid UID tty TTY pid PID"
 *   logout        the session's agent exits: login closes the session
 *   exit          the serving process exits
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/videodev2.h>
#include <sound/asound.h>

#define AGENT_DIR "/run/revoke-guest/agents"
#define MAX_HELD  16

enum probe { PROBE_FD, PROBE_SND_CTL, PROBE_SND_PCM, PROBE_VIDEO };

struct held {
	char path[PATH_MAX];
	int fd;
	enum probe probe;
};

static struct held held[MAX_HELD];
static size_t nheld;
static pid_t agent_pid;
static char tty_name[32] = "none";

static const char *errname(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "EUNKNOWN";
}

static enum probe probe_of(const char *path)
{
	if (strncmp(path, "/dev/snd/control", 16) == 0)
		return PROBE_SND_CTL;
	if (strncmp(path, "/dev/snd/pcm", 12) == 0)
		return PROBE_SND_PCM;
	if (strncmp(path, "/dev/video", 10) == 0)
		return PROBE_VIDEO;
	return PROBE_FD;
}

/* 0 when the descriptor still works, else the errno of the call. */
static int probe(const struct held *h)
{
	struct v4l2_capability cap;
	int version, r;

	switch (h->probe) {
	case PROBE_SND_CTL:
		r = ioctl(h->fd, SNDRV_CTL_IOCTL_PVERSION, &version);
		break;
	case PROBE_SND_PCM:
		r = ioctl(h->fd, SNDRV_PCM_IOCTL_PVERSION, &version);
		break;
	case PROBE_VIDEO:
		r = ioctl(h->fd, VIDIOC_QUERYCAP, &cap);
		break;
	default:
		/* Any open file takes it (a dead, O_PATH one does not). */
		r = ioctl(h->fd, FIOCLEX);
		break;
	}
	return r < 0 ? errno : 0;
}

static int open_one(const char *path)
{
	int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	if (fd < 0 && (errno == EACCES || errno == EISDIR || errno == EROFS))
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	return fd < 0 ? -errno : fd;
}

static void reply(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reply(FILE *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fflush(out);
}

/* Serves one connection (or standard input) until EOF or "exit". */
static int serve(FILE *in, FILE *out)
{
	char line[4096];

	while (fgets(line, sizeof(line), in)) {
		char *save = NULL, *cmd;

		line[strcspn(line, "\r\n")] = 0;
		cmd = strtok_r(line, " ", &save);
		if (!cmd)
			continue;
		if (strcmp(cmd, "hold") == 0) {
			char *p;

			/* A background program of the session: the terminal's
			 * hangup at logout is not for it. */
			if (getpid() != agent_pid)
				(void)setsid();
			reply(out, "held %d", (int)getpid());
			while ((p = strtok_r(NULL, " ", &save)) && nheld < MAX_HELD) {
				struct held *h = &held[nheld];
				int fd = open_one(p);

				snprintf(h->path, sizeof(h->path), "%s", p);
				h->probe = probe_of(p);
				h->fd = fd;
				if (fd >= 0)
					reply(out, " %d", fd);
				else
					reply(out, " -%s", errname(-fd));
				nheld++;
			}
			reply(out, "\n");
		} else if (strcmp(cmd, "check") == 0) {
			reply(out, "check");
			for (size_t i = 0; i < nheld; i++) {
				int e = held[i].fd < 0 ? 0 : probe(&held[i]);

				/* "-": never opened. */
				reply(out, " %s", held[i].fd < 0 ? "-" : e ? errname(e) : "ok");
			}
			reply(out, "\n");
		} else if (strcmp(cmd, "reopen") == 0) {
			reply(out, "reopen");
			for (size_t i = 0; i < nheld; i++) {
				int fd = open_one(held[i].path);

				reply(out, " %s", fd >= 0 ? "ok" : errname(-fd));
				if (fd >= 0)
					close(fd);
			}
			reply(out, "\n");
		} else if (strcmp(cmd, "seccomp") == 0) {
			/* A sandbox as browsers have: a seccomp filter (this
			 * one allows everything), which a revoker may only
			 * get past with CAP_SYS_ADMIN. */
			struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
			struct sock_fprog prog = {.len = 1, .filter = &allow};

			if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
			    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
				reply(out, "seccomp %s\n", errname(errno));
			else
				reply(out, "seccomp ok\n");
		} else if (strcmp(cmd, "whoami") == 0) {
			reply(out, "uid %u tty %s pid %d\n", (unsigned)getuid(), tty_name,
			      (int)getpid());
		} else if (strcmp(cmd, "logout") == 0) {
			reply(out, "bye\n");
			if (agent_pid && agent_pid != getpid())
				kill(agent_pid, SIGTERM);
		} else if (strcmp(cmd, "exit") == 0) {
			return 0;
		} else {
			reply(out, "error unknown command %s\n", cmd);
		}
	}
	return 0;
}

static int session(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	const char *tty = ttyname(0), *user = getenv("USER");
	struct sigaction sig = {.sa_handler = SIG_IGN, .sa_flags = SA_NOCLDWAIT};
	int fd;

	if (tty && strrchr(tty, '/'))
		snprintf(tty_name, sizeof(tty_name), "%s", strrchr(tty, '/') + 1);
	agent_pid = getpid();
	snprintf(sa.sun_path, sizeof(sa.sun_path), AGENT_DIR "/%s-%s.sock", user ? user : "nobody",
		 tty_name);
	sigaction(SIGCHLD, &sig, NULL);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	(void)unlink(sa.sun_path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 16) < 0) {
		fprintf(stderr, "seat-agent: %s: %m\n", sa.sun_path);
		return 1;
	}
	printf("seat-agent: %s (uid %u) on %s, pid %d, listening on %s\n", user ? user : "?",
	       (unsigned)getuid(), tty_name, (int)getpid(), sa.sun_path);
	fflush(stdout);
	for (;;) {
		int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
		pid_t pid;

		if (c < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "seat-agent: accept: %m\n");
			return 1;
		}
		pid = fork();
		if (pid == 0) {
			FILE *in = fdopen(c, "r"), *out = fdopen(dup(c), "w");

			close(fd);
			signal(SIGCHLD, SIG_DFL);
			if (!in || !out)
				_exit(1);
			_exit(serve(in, out));
		}
		close(c);
	}
}

static int client(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct pollfd p[2];
	char buf[4096];
	bool in_open = true;
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "seat-agent: %s: %m\n", path);
		return 1;
	}
	for (;;) {
		ssize_t n;

		p[0] = (struct pollfd){.fd = in_open ? 0 : -1, .events = POLLIN};
		p[1] = (struct pollfd){.fd = fd, .events = POLLIN};
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		if (p[0].revents) {
			n = read(0, buf, sizeof(buf));
			if (n <= 0) {
				in_open = false;
				shutdown(fd, SHUT_WR);
			} else if (write(fd, buf, (size_t)n) != n) {
				return 1;
			}
		}
		if (p[1].revents) {
			n = read(fd, buf, sizeof(buf));
			if (n <= 0)
				return 0;
			if (write(1, buf, (size_t)n) != n)
				return 1;
		}
	}
}

/* TracerPid of PID, or -1 when it is gone. */
static long tracer_of(pid_t pid)
{
	char path[64], buf[4096], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strstr(buf, "\nTracerPid:");
	return p ? strtol(p + 11, NULL, 10) : -1;
}

/* Whether thread TID belongs to process PID. */
static bool thread_of(pid_t tid, pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)pid, (int)tid);
	return access(path, F_OK) == 0;
}

/* kill-when-traced PID TRACER VICTIM SECONDS: SIGKILL to VICTIM the moment
 * a thread of TRACER (the library's engine runs in a thread of its own)
 * traces PID (it is in the middle of a revocation of PID), polling without
 * sleeping; says after how long, or that it never did within SECONDS. */
static int kill_when_traced(pid_t pid, pid_t tracer_proc, pid_t victim, long seconds)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		long tracer = tracer_of(pid), ms;

		clock_gettime(CLOCK_MONOTONIC, &t);
		ms = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (tracer > 0 &&
		    (tracer == tracer_proc || thread_of((pid_t)tracer, tracer_proc))) {
			if (kill(victim, SIGKILL) < 0) {
				printf("kill %d: %s\n", (int)victim, strerror(errno));
				return 1;
			}
			printf("killed %d after %ld ms, while thread %ld of %d traced %d\n",
			       (int)victim, ms, tracer, (int)tracer_proc, (int)pid);
			return 0;
		}
		if (tracer < 0) {
			printf("pid %d is gone\n", (int)pid);
			return 1;
		}
		if (ms > seconds * 1000) {
			printf("pid %d was not traced by %d within %ld s\n", (int)pid,
			       (int)tracer_proc, seconds);
			return 1;
		}
	}
}

/* run-when-traced PID TRACER SECONDS CMD...: runs CMD (and waits for it)
 * the moment a thread of TRACER traces PID. */
static int run_when_traced(pid_t pid, pid_t tracer_proc, long seconds, char **cmd)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		long tracer = tracer_of(pid), ms;

		clock_gettime(CLOCK_MONOTONIC, &t);
		ms = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (tracer > 0 &&
		    (tracer == tracer_proc || thread_of((pid_t)tracer, tracer_proc))) {
			int status;
			pid_t c = fork();

			if (c == 0) {
				execvp(cmd[0], cmd);
				_exit(127);
			}
			if (c < 0 || waitpid(c, &status, 0) != c) {
				printf("%s: %s\n", cmd[0], strerror(errno));
				return 1;
			}
			printf("ran %s after %ld ms, while thread %ld of %d traced %d\n", cmd[0],
			       ms, tracer, (int)tracer_proc, (int)pid);
			return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
		}
		if (tracer < 0 || ms > seconds * 1000) {
			printf("pid %d was not traced by %d within %ld s\n", (int)pid,
			       (int)tracer_proc, seconds);
			return 1;
		}
	}
}

int main(int argc, char **argv)
{
	if (argc >= 6 && strcmp(argv[1], "run-when-traced") == 0)
		return run_when_traced((pid_t)strtol(argv[2], NULL, 10),
				       (pid_t)strtol(argv[3], NULL, 10), strtol(argv[4], NULL, 10),
				       argv + 5);
	if (argc == 6 && strcmp(argv[1], "kill-when-traced") == 0)
		return kill_when_traced(
		    (pid_t)strtol(argv[2], NULL, 10), (pid_t)strtol(argv[3], NULL, 10),
		    (pid_t)strtol(argv[4], NULL, 10), strtol(argv[5], NULL, 10));
	if (argc == 2 && strcmp(argv[1], "session") == 0)
		return session();
	if (argc == 3 && strcmp(argv[1], "client") == 0)
		return client(argv[2]);
	if (argc >= 3 && strcmp(argv[1], "hold") == 0) {
		char line[4096] = "hold";

		for (int i = 2; i < argc; i++) {
			strncat(line, " ", sizeof(line) - strlen(line) - 1);
			strncat(line, argv[i], sizeof(line) - strlen(line) - 1);
		}
		strncat(line, "\n", sizeof(line) - strlen(line) - 1);
		/* The "hold" line first, then the commands on standard input. */
		FILE *first = fmemopen(line, strlen(line), "r");

		if (!first)
			return 1;
		serve(first, stdout);
		fclose(first);
		return serve(stdin, stdout);
	}
	fprintf(stderr, "usage: seat-agent session | client SOCKET | hold PATH... | "
			"kill-when-traced PID TRACER VICTIM SECONDS | "
			"run-when-traced PID TRACER SECONDS CMD...\n");
	return 2;
}
