/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading a process's /proc files by name: the small readers the engine
 * uses outside the scanners (which read /proc their own way, relative to
 * a directory they hold).
 */
#include <fcntl.h>
#include <stdio.h>

#include "internal.h"

int rv_proc_read_text(pid_t pid, const char *name, char *buf, size_t size)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	n = read_text_at(AT_FDCWD, path, buf, size);
	if (n < 0)
		return n == -ENOENT ? -ESRCH : (int)n;
	return (int)n;
}

int rv_proc_status_of(pid_t pid, struct rv_proc_status *ret)
{
	char buf[4096];
	int n = rv_proc_read_text(pid, "status", buf, sizeof(buf));

	if (n <= 0)
		return n < 0 ? n : -EIO;
	return rv_parse_status(buf, ret);
}
