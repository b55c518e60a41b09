/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Scratch directories and files: see scratch.h. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fork.h"
#include "harness.h"
#include "scratch.h"

const char *test_scratch(void)
{
	CHECK(unshare(CLONE_NEWNS) == 0, "unshare(CLONE_NEWNS): %m");
	CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0, "make / private: %m");
	CHECK(mount("revoke-test", "/tmp", "tmpfs", 0, "mode=1777") == 0, "mount tmpfs: %m");
	return "/tmp";
}

static int rm_one(const char *p, const struct stat *st, int type, struct FTW *ftw)
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
 * The reaper leaves the case's process group (the harness kills that) and
 * waits for EOF on a pipe whose write end every process of the case holds
 * (close-on-exec: inherited by every fork, dropped by every exec).
 */
void test_scratch_dir(char *dir, size_t size, const char *template)
{
	int p[2];
	pid_t pid;

	snprintf(dir, size, "%s", template);
	CHECK(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	CHECK(pipe2(p, O_CLOEXEC) == 0, "pipe2: %s", strerror(errno));
	/* No death signal: it outlives the case, which is its whole point. */
	pid = test_fork_sig(0);
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
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
		_exit(0);
	}
	setpgid(pid, pid); /* also here: the case may end before the reaper runs */
	close(p[0]);
	/* p[1] stays open (close-on-exec) until the case exits. */
}

void test_write_file(const char *path, const char *data)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	size_t len = strlen(data);

	CHECK(fd >= 0, "create %s: %m", path);
	CHECK(write(fd, data, len) == (ssize_t)len, "write %s: %m", path);
	CHECK(close(fd) == 0, "close %s: %m", path);
}

void test_make_file(const char *path, const char *content, size_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	CHECK(fd >= 0, "create %s: %s", path, strerror(errno));
	CHECK(write(fd, content, strlen(content)) == (ssize_t)strlen(content), "write: %s",
	      strerror(errno));
	if (size)
		CHECK(ftruncate(fd, size) == 0, "ftruncate: %s", strerror(errno));
	close(fd);
}

void test_copy_file(const char *from, const char *to, mode_t mode)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	ssize_t n;

	CHECK(in >= 0 && out >= 0, "copy %s to %s: %m", from, to);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		CHECK(write(out, buf, (size_t)n) == n, "write %s: %m", to);
	CHECK(n == 0, "read %s: %m", from);
	close(in);
	CHECK(close(out) == 0, "close %s: %m", to);
}

int test_remove_tree(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return access(dir, F_OK) == 0 ? -1 : 0;
}
