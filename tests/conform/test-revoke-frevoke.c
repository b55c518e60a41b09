/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Conformance: frevoke(fd) revokes the file FD refers to but keeps every
 * descriptor that shares FD's open file description, wherever it is: FD
 * itself, its dups in the caller, and copies a child inherited across fork.
 * A descriptor of the same file opened separately, even the caller's own,
 * is cut.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "revoke.h"
#include "call.h"
#include "fork.h"
#include "proc.h"
#include "scratch.h"
#include "victim.h"

#define FILE_PATH "/tmp/file"
#define FILE_DATA "0123456789"

struct setup {
	int fd;		   /* the caller's, given to frevoke() */
	int dup;	   /* dup(fd) in the caller */
	int separate;	   /* the caller's own separate open */
	struct victim kid; /* inherited fd across fork */
	struct victim other;
	int other_fd; /* the other victim's separate open */
};

static void setup_and_frevoke(struct setup *s)
{
	test_scratch();
	test_write_file(FILE_PATH, FILE_DATA);
	s->fd = open(FILE_PATH, O_RDWR | O_CLOEXEC);
	CHECK(s->fd >= 0, "open: %m");
	s->dup = dup(s->fd);
	CHECK(s->dup >= 0, "dup: %m");
	s->separate = open(FILE_PATH, O_RDONLY | O_CLOEXEC);
	CHECK(s->separate >= 0, "open: %m");
	victim_start(&s->kid); /* a fork: it holds s->fd's description at the same number */
	victim_start(&s->other);
	s->other_fd = victim_open(&s->other, FILE_PATH, O_RDONLY);
	CHECK(test_frevoke(s->fd) == 0, "frevoke: %m");
}

static void check_reads(int fd, const char *who)
{
	char buf[16] = "";

	errno = 0;
	CHECK(pread(fd, buf, 10, 0) == 10 && memcmp(buf, FILE_DATA, 10) == 0,
	      "%s (fd %d) does not read the file after frevoke: %s", who, fd, strerror(errno));
}

/* The caller's copies of the description it gave frevoke() read on. */
static const struct kept_row {
	struct test_row t;
	bool dup; /* s.dup, else s.fd */
	const char *who;
} kept[] = {
    {{"caller_fd_kept", 0}, false, "the fd given to frevoke"},
    {{"callers_dup_kept", 0}, true, "a dup of the fd given to frevoke"},
};

static void kept_case(const void *row)
{
	const struct kept_row *k = row;
	struct setup s;

	setup_and_frevoke(&s);
	check_reads(k->dup ? s.dup : s.fd, k->who);
}

static void inherited_in_child_kept(void)
{
	struct setup s;
	struct victim_res r;

	setup_and_frevoke(&s);
	r = victim_call(&s.kid, VICTIM_REQ(.op = VOP_PREAD, .fd = s.fd, .len = 10, .arg = 0));
	CHECK(r.ret == 10 && memcmp(r.data, FILE_DATA, 10) == 0,
	      "a child's inherited copy of the kept description: ret %ld errno %s", r.ret,
	      strerror(r.err));
}

static void separate_open_in_victim_cut(void)
{
	struct setup s;
	struct victim_res r;

	setup_and_frevoke(&s);
	r = victim_read(&s.other, s.other_fd, 10);
	CHECK(r.ret == -1 && r.err == EBADF,
	      "a separately opened fd in another process: ret %ld errno %d (%s), expected EBADF",
	      r.ret, r.err, strerror(r.err));
}

static void callers_separate_open_cut(void)
{
	struct setup s;
	char c;

	setup_and_frevoke(&s);
	errno = 0;
	CHECK(read(s.separate, &c, 1) == -1 && errno == EBADF,
	      "the caller's own separately opened fd: errno %d (%s), expected EBADF", errno,
	      strerror(errno));
	CHECK(close(s.separate) == 0, "close of the caller's revoked fd: %m");
}

/* clang-format off */
TEST_MAIN("revoke-frevoke",
	  TEST_TABLE(kept, kept_case),
	  {"inherited_in_child_kept", inherited_in_child_kept, 0},
	  {"separate_open_in_victim_cut", separate_open_in_victim_cut, 0},
	  {"callers_separate_open_cut", callers_separate_open_cut, 0},
)
/* clang-format on */
