/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading a process's /proc files by name: the small readers the engine
 * uses outside the scanners (which read /proc their own way, relative to
 * a directory they hold), and the one place that spells a /proc path
 * (HACKING.md, "The shape of lib/").
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

const char rv_proc_root[] = "/proc";

static int vpath(char *buf, size_t size, pid_t pid, pid_t tid, const char *fmt, va_list ap)
{
	int n, m;

	if (pid == RV_PROC_TOP)
		n = snprintf(buf, size, "/proc/");
	else if (pid == RV_PROC_THREAD_SELF)
		n = snprintf(buf, size, "/proc/thread-self/");
	else if (pid == RV_PROC_SELF)
		n = tid > 0 ? snprintf(buf, size, "/proc/self/task/%d/", (int)tid)
			    : snprintf(buf, size, "/proc/self/");
	else
		n = tid > 0 ? snprintf(buf, size, "/proc/%d/task/%d/", (int)pid, (int)tid)
			    : snprintf(buf, size, "/proc/%d/", (int)pid);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	m = vsnprintf(buf + n, size - (size_t)n, fmt, ap);
	if (m < 0 || (size_t)m >= size - (size_t)n)
		return -ENAMETOOLONG;
	return n + m;
}

int rv_proc_path(char *buf, size_t size, pid_t pid, pid_t tid, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vpath(buf, size, pid, tid, fmt, ap);
	va_end(ap);
	return r;
}

#define WITH_PATH(path, pid, tid, fmt, fail)                                                       \
	char path[PATH_MAX];                                                                       \
	do {                                                                                       \
		va_list ap;                                                                        \
		int r_;                                                                            \
                                                                                                   \
		va_start(ap, fmt);                                                                 \
		r_ = vpath(path, sizeof(path), pid, tid, fmt, ap);                                 \
		va_end(ap);                                                                        \
		if (r_ < 0) {                                                                      \
			errno = -r_;                                                               \
			return fail;                                                               \
		}                                                                                  \
	} while (0)

int rv_proc_open(pid_t pid, pid_t tid, int flags, const char *fmt, ...)
{
	WITH_PATH(path, pid, tid, fmt, -1);
	return open(path, flags | O_CLOEXEC);
}

FILE *rv_proc_fopen(pid_t pid, pid_t tid, const char *fmt, ...)
{
	WITH_PATH(path, pid, tid, fmt, NULL);
	return fopen(path, "re");
}

DIR *rv_proc_opendir(pid_t pid, pid_t tid, const char *fmt, ...)
{
	WITH_PATH(path, pid, tid, fmt, NULL);
	return opendir(path);
}

ssize_t rv_proc_readlink(pid_t pid, pid_t tid, char *buf, size_t size, const char *fmt, ...)
{
	ssize_t n;

	WITH_PATH(path, pid, tid, fmt, -1);
	if (size == 0) {
		errno = EINVAL;
		return -1;
	}
	n = readlink(path, buf, size - 1);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

int rv_proc_statx(pid_t pid, pid_t tid, int flags, unsigned int mask, struct statx *stx,
		  const char *fmt, ...)
{
	WITH_PATH(path, pid, tid, fmt, -1);
	return statx(AT_FDCWD, path, flags, mask, stx);
}

int rv_proc_read_task_text(pid_t pid, pid_t tid, const char *name, char *buf, size_t size)
{
	char path[64];
	ssize_t n;

	if (rv_proc_path(path, sizeof(path), pid, tid, "%s", name) < 0)
		return -ENAMETOOLONG;
	/* A process or thread that is gone is -ESRCH, however it shows (no
	 * such file, or ESRCH from a read of one that was there). */
	n = read_text_at(AT_FDCWD, path, buf, size);
	if (n < 0)
		return n == -ENOENT ? -ESRCH : (int)n;
	return (int)n;
}

int rv_proc_read_text(pid_t pid, const char *name, char *buf, size_t size)
{
	return rv_proc_read_task_text(pid, 0, name, buf, size);
}

int rv_proc_status_of(pid_t pid, struct rv_proc_status *ret)
{
	char buf[4096];
	int n = rv_proc_read_text(pid, "status", buf, sizeof(buf));

	if (n <= 0)
		return n < 0 ? n : -EIO;
	return rv_parse_status(buf, ret);
}

int rv_proc_creds_of(pid_t pid, struct rv_proc_creds *ret)
{
	char buf[8192];
	int n = rv_proc_read_text(pid, "status", buf, sizeof(buf));

	if (n <= 0)
		return n < 0 ? n : -EIO;
	return rv_parse_creds(buf, ret);
}
