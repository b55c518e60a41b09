/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One ptrace revoke at a time per user. Each caller holds its targets
 * through an O_PATH descriptor, so two revokes of the same file see each
 * other as holders: if each seizes the other between the other's seize and
 * interrupt, both end up stopped, each waiting for a process that will never
 * run again (no timeout can fire in a stopped process). Callers that can
 * trace each other share a uid (or are root), so a lock per uid serializes
 * exactly those. The wait is bounded by the call's deadline.
 *
 * The lock file sits where only its user can create files: /run for root,
 * $XDG_RUNTIME_DIR-style /run/user/UID otherwise. Where neither exists or the
 * file is not a regular file of ours, the call goes on without the lock (the
 * race is narrow; it is never worse than before).
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* Who holds the flock on the file FD: its pid from /proc/locks, or 0. */
static pid_t lock_owner(int fd)
{
	char line[256];
	struct stat st;
	pid_t pid = 0;
	FILE *f;

	if (fstat(fd, &st) < 0)
		return 0;
	f = fopen("/proc/locks", "re");
	if (!f)
		return 0;
	while (!pid && fgets(line, sizeof(line), f)) {
		struct rv_lock_entry e;

		if (rv_parse_locks_line(line, &e) == 0 && e.ino == (uint64_t)st.st_ino &&
		    e.dev_major == major(st.st_dev) && e.dev_minor == minor(st.st_dev))
			pid = e.pid;
	}
	fclose(f);
	return pid;
}

int rv_engine_lock(uint64_t deadline_ns, pid_t *ret_owner)
{
	uid_t uid = geteuid();
	char path[64];
	struct stat st;
	int fd;

	if (uid == 0)
		snprintf(path, sizeof(path), "/run/librevoke.lock");
	else
		snprintf(path, sizeof(path), "/run/user/%u/librevoke.lock", (unsigned)uid);
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != uid) {
		safe_close(fd);
		return -1;
	}
	for (;;) {
		struct timespec ts = {.tv_nsec = 1000000};

		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return fd;
		if (errno != EWOULDBLOCK && errno != EINTR) {
			safe_close(fd);
			return -1;
		}
		if (rv_now_ns() >= deadline_ns) {
			*ret_owner = lock_owner(fd);
			safe_close(fd);
			return -ETIMEDOUT;
		}
		nanosleep(&ts, NULL);
	}
}
