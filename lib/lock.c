/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Revoke calls and each other.
 *
 * One ptrace revoke at a time per user. Each caller holds its targets
 * through an O_PATH descriptor, so two revokes of the same file see each
 * other as holders: if each seizes the other between the other's seize and
 * interrupt, both end up stopped, each waiting for a process that will never
 * run again (no timeout can fire in a stopped process). Callers that can
 * trace each other share a uid (or are root), so a lock per uid serializes
 * exactly those. The helper's workers (root, for a client) take a lock per
 * client uid instead of root's: one user's requests never make the
 * administrator wait. The wait is bounded by the call's deadline.
 *
 * Every call also registers itself for its whole length with a shared
 * flock on its user's "calls" file, which /proc/locks shows with its pid:
 * what such a process holds of a target only for the call (its O_PATH
 * lookups, descriptors in flight to the helper) is no holder's, so that
 * concurrent revokes of one file neither cut nor count each other. Only the
 * requester's own registrations and root's are believed: anyone else's
 * could only shield their own descriptors.
 *
 * The files sit where only their user can create files: /run for root,
 * $XDG_RUNTIME_DIR-style /run/user/UID for a user with a login session, and
 * a sticky directory of root's for the others (user_file()). Where none
 * exists or the file is not a regular file of ours, the call goes on without
 * them: then ten revokes of one file at once by such a user could cut each
 * other's lookups.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
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
	f = rv_proc_fopen(RV_PROC_TOP, 0, "locks");
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

/* Where users without a runtime directory keep theirs: created by root's
 * first call (the helper's too), sticky and open to all like /tmp, so that
 * only a file's owner can remove it; a file another user made in their name
 * is refused (open_own) and the call goes on without it. */
#define SHARED_DIR "/run/librevoke"

/* The path of uid UID's file NAME ("lock", "calls"): /run for root; the
 * user's runtime directory /run/user/UID (a login session's), else
 * SHARED_DIR/UID.NAME (a cron job, a service with a User=). */
static void user_file(uid_t uid, const char *name, char *buf, size_t size)
{
	char dir[32];
	struct stat st;

	snprintf(dir, sizeof(dir), "/run/user/%u", (unsigned)uid);
	if (uid == 0)
		snprintf(buf, size, "/run/librevoke.%s", name);
	else if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == uid)
		snprintf(buf, size, "%s/librevoke.%s", dir, name);
	else
		snprintf(buf, size, SHARED_DIR "/%u.%s", (unsigned)uid, name);
}

/* Root makes SHARED_DIR for the users that have no runtime directory. */
static void make_shared_dir(void)
{
	struct stat st;

	if (geteuid() != 0 || (lstat(SHARED_DIR, &st) == 0 && S_ISDIR(st.st_mode)))
		return;
	if (mkdir(SHARED_DIR, 0755) == 0)
		(void)chmod(SHARED_DIR, 01777); /* past the umask */
}

/* Opens (creating it) a lock file of ours: a regular file we own, else -1. */
static int open_own(const char *path)
{
	struct stat st;
	int fd;

	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		safe_close(fd);
		return -1;
	}
	return fd;
}

int rv_engine_lock(uid_t for_uid, uint64_t deadline_ns, pid_t *ret_owner, uint64_t *ret_waited)
{
	uint64_t start = rv_now_ns();
	uid_t uid = geteuid();
	char path[64];
	int fd;

	if (uid == 0 && for_uid != 0)
		snprintf(path, sizeof(path), "/run/librevoke-%u.lock", (unsigned)for_uid);
	else
		user_file(uid, "lock", path, sizeof(path));
	fd = open_own(path);
	if (fd < 0)
		return -1;
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
			*ret_waited = rv_now_ns() - start;
			safe_close(fd);
			return -ETIMEDOUT;
		}
		nanosleep(&ts, NULL);
	}
}

int rv_calls_register(void)
{
	char path[64];
	int fd;

	make_shared_dir();
	user_file(geteuid(), "calls", path, sizeof(path));
	fd = open_own(path);
	if (fd < 0)
		return -1;
	/* Shared locks never wait for each other; nobody takes another kind. */
	if (flock(fd, LOCK_SH | LOCK_NB) < 0)
		return safe_close(fd);
	return fd;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int rv_calls_of(uid_t uid, struct rv_calls *ret)
{
	struct stat st[2];
	size_t nfiles = 0, n = 0, cap = 0;
	pid_t *pids = NULL;
	char line[256], path[64];
	FILE *f;

	/* The requester's registrations, and root's (the helper, its
	 * workers, root's own calls). */
	for (int i = 0; i < 2; i++) {
		if (i == 1 && uid == 0)
			break;
		user_file(i == 0 ? uid : 0, "calls", path, sizeof(path));
		if (stat(path, &st[nfiles]) == 0 && S_ISREG(st[nfiles].st_mode) &&
		    st[nfiles].st_uid == (i == 0 ? uid : 0))
			nfiles++;
	}
	if (nfiles) {
		f = rv_proc_fopen(RV_PROC_TOP, 0, "locks");
		if (!f)
			return negative_errno();
		while (fgets(line, sizeof(line), f)) {
			struct rv_lock_entry e;

			if (rv_parse_locks_line(line, &e) < 0 || !e.flock || e.pid <= 0)
				continue;
			for (size_t k = 0; k < nfiles; k++) {
				if (e.ino != (uint64_t)st[k].st_ino ||
				    e.dev_major != major(st[k].st_dev) ||
				    e.dev_minor != minor(st[k].st_dev))
					continue;
				if (n == cap) {
					pid_t *np =
					    realloc(pids, (cap = cap ? 2 * cap : 16) * sizeof(*np));

					if (!np) {
						fclose(f);
						free(pids);
						return -ENOMEM;
					}
					pids = np;
				}
				pids[n++] = e.pid;
			}
		}
		fclose(f);
		if (n > 1)
			qsort(pids, n, sizeof(*pids), cmp_pid);
	}
	free(ret->pids);
	ret->pids = pids;
	ret->n = n;
	return 0;
}

bool rv_calls_has(const struct rv_calls *c, pid_t pid)
{
	return c && c->n && bsearch(&pid, c->pids, c->n, sizeof(pid), cmp_pid);
}
