/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The tests' /proc readers: see proc.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "proc.h"

ssize_t read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	close(fd);
	buf[n] = 0;
	return n;
}

int read_proc(const char *path, char *buf, size_t size)
{
	ssize_t n = read_text(path, buf, size);

	return n < 0 ? (int)n : 0;
}

const char *proc_field(const char *text, const char *key)
{
	size_t klen = strlen(key);

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (strncmp(l, key, klen) == 0 && l[klen] == ':') {
			l += klen + 1;
			while (*l == ' ' || *l == '\t')
				l++;
			return l;
		}
	return NULL;
}

/* The letter after the last ')' of a stat line (comm may hold anything, ')' too). */
static char stat_state(const char *path)
{
	char buf[1024], *p;

	if (read_proc(path, buf, sizeof(buf)) < 0)
		return 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

char proc_state(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	return stat_state(path);
}

char task_state(pid_t pid, pid_t tid)
{
	char path[80], c;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	c = stat_state(path);
	return c ? c : '?';
}

unsigned long long proc_status_value(pid_t pid, const char *key, int base, unsigned long long fail)
{
	char path[64], buf[4096];
	const char *v;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_proc(path, buf, sizeof(buf)) < 0)
		return fail;
	v = proc_field(buf, key);
	return v ? strtoull(v, NULL, base) : fail;
}

long proc_status_field(pid_t pid, const char *key)
{
	return (long)proc_status_value(pid, key, 10, (unsigned long long)-1);
}

unsigned long long proc_status_hex(pid_t pid, const char *key)
{
	return proc_status_value(pid, key, 16, ~0ull);
}

int proc_task_status(pid_t pid, pid_t tid, struct proc_task *ret)
{
	char path[64], buf[4096];
	const char *v;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	if (read_proc(path, buf, sizeof(buf)) < 0)
		return -1;
	memset(ret, 0, sizeof(*ret));
	if ((v = proc_field(buf, "State")))
		ret->state = *v;
	if ((v = proc_field(buf, "TracerPid")))
		ret->tracer = (pid_t)strtol(v, NULL, 10);
	if ((v = proc_field(buf, "SigBlk")))
		ret->sigblk = strtoull(v, NULL, 16);
	if ((v = proc_field(buf, "SigPnd")))
		ret->sigpnd = strtoull(v, NULL, 16);
	return ret->state ? 0 : -1;
}

pid_t proc_status_fd_tracer(int fd)
{
	char buf[4096];
	const char *v;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	v = proc_field(buf, "TracerPid");
	return v ? (pid_t)strtol(v, NULL, 10) : 0;
}

long proc_syscall(pid_t pid, pid_t tid)
{
	char path[80], buf[256];
	int r;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/syscall", (int)tid);
	r = read_proc(path, buf, sizeof(buf));
	if (r < 0)
		return r;
	/* "running" while in user space */
	if (buf[0] < '0' || buf[0] > '9')
		return -EAGAIN;
	return strtol(buf, NULL, 10);
}

int proc_wait_syscall(pid_t pid, pid_t tid, long nr, long alt, const char *states, int tries,
		      unsigned int interval_us)
{
	for (int i = 0; i < tries; i++) {
		long cur = proc_syscall(pid, tid);

		if (cur == -ENOENT || cur == -ESRCH)
			return (int)cur;
		if (cur >= 0 && (cur == nr || cur == alt || nr == -1) &&
		    (!states || strchr(states, task_state(pid ? pid : tid, tid))))
			return 0;
		usleep(interval_us);
	}
	return -ETIMEDOUT;
}

int proc_tasks(pid_t pid, pid_t *tids, int max)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir)) && n < max) {
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		tids[n++] = (pid_t)strtol(d->d_name, NULL, 10);
	}
	closedir(dir);
	for (int i = 1; i < n; i++) /* a few entries: insertion sort */
		for (int j = i; j > 0 && tids[j - 1] > tids[j]; j--) {
			pid_t t = tids[j];
			tids[j] = tids[j - 1];
			tids[j - 1] = t;
		}
	return n;
}

int proc_fds(pid_t pid, struct proc_fd *fds, int max)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir)) && n < max) {
		struct stat st;

		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		fds[n].fd = (int)strtol(d->d_name, NULL, 10);
		if (fstatat(dirfd(dir), d->d_name, &st, 0) < 0) {
			/* allocated but leading nowhere stat can follow */
			memset(&st, 0, sizeof(st));
		}
		fds[n].dev = st.st_dev;
		fds[n].ino = st.st_ino;
		fds[n].mode = st.st_mode;
		n++;
	}
	closedir(dir);
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && fds[j - 1].fd > fds[j].fd; j--) {
			struct proc_fd t = fds[j];
			fds[j] = fds[j - 1];
			fds[j - 1] = t;
		}
	return n;
}

ssize_t proc_fd_link(pid_t pid, int fd, char *buf, size_t size)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
	n = readlink(path, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return n;
}

bool proc_fd_is(pid_t pid, int fd, const struct stat *st)
{
	char path[64];
	struct stat s;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
	if (stat(path, &s) < 0)
		return false;
	return s.st_dev == st->st_dev && s.st_ino == st->st_ino;
}

pid_t proc_child_of(pid_t ppid)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t found = 0;

	if (!d)
		return 0;
	while (!found && (de = readdir(d))) {
		char path[300], buf[1024], *p;
		int ppid_of;
		long c;

		c = strtol(de->d_name, NULL, 10);
		if (c <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", c);
		if (read_proc(path, buf, sizeof(buf)) < 0)
			continue;
		if ((p = strrchr(buf, ')')) && sscanf(p + 1, " %*c %d", &ppid_of) == 1 &&
		    ppid_of == ppid)
			found = (pid_t)c;
	}
	closedir(d);
	return found;
}

long long proc_limit_nofile_hard(pid_t pid)
{
	struct rlimit rl;

	return prlimit(pid, RLIMIT_NOFILE, NULL, &rl) == 0 ? (long long)rl.rlim_max : -1;
}

int proc_mount_id(const char *path)
{
	char line[4096];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int id = -1;

	if (!f)
		return -2;
	while (fgets(line, sizeof(line), f)) {
		char mp[4096];
		int i;

		if (sscanf(line, "%d %*d %*s %*s %4095s", &i, mp) == 2 && strcmp(mp, path) == 0)
			id = i;
	}
	fclose(f);
	return id;
}

int proc_mount_source(const char *path, char *buf, size_t size)
{
	char line[4096];
	FILE *f = fopen("/proc/self/mountinfo", "re");

	buf[0] = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char mp[4096], src[256];
		const char *sep = strstr(line, " - ");

		if (sscanf(line, "%*d %*d %*s %*s %4095s", mp) == 1 && strcmp(mp, path) == 0 &&
		    sep && sscanf(sep + 3, "%*s %255s", src) == 1)
			snprintf(buf, size, "%s", src);
	}
	fclose(f);
	return 0;
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void sleep_ns(uint64_t ns)
{
	struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ull),
			      .tv_nsec = (long)(ns % 1000000000ull)};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void msleep(unsigned int ms)
{
	sleep_ns((uint64_t)ms * 1000000ull);
}
