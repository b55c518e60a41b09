/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Conformance: what revoke() and frevoke() fail with, and that a failure
 * touches nothing. Lookup errors come straight from the kernel and come
 * before the permission check (NetBSD's t_revoke.c asks the same).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
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

#define CHECK_ERRNO(call, e)                                                                       \
	do {                                                                                       \
		errno = 0;                                                                         \
		int _r = (call);                                                                   \
		int _e = errno;                                                                    \
		CHECK(_r == -1 && _e == (e), "%s returned %d errno %d (%s), expected -1 %s",       \
		      #call, _r, _e, strerror(_e), #e);                                            \
	} while (0)

static void bad_pointer_efault(void)
{
	/* Through a volatile: glibc declares revoke() __nonnull and the
	 * compiler would reason about the constant. */
	const char *volatile bad = (const char *)1;

	CHECK_ERRNO(revoke(bad), EFAULT);
}

static void missing_enoent(void)
{
	test_scratch();
	CHECK_ERRNO(revoke("/tmp/does-not-exist"), ENOENT);
}

static void file_as_dir_enotdir(void)
{
	test_scratch();
	test_write_file("/tmp/file", "x");
	CHECK_ERRNO(revoke("/tmp/file/x"), ENOTDIR);
}

static void long_component_enametoolong(void)
{
	char path[1100];

	test_scratch();
	strcpy(path, "/tmp/");
	memset(path + 5, 'a', 1025);
	path[5 + 1025] = 0;
	CHECK_ERRNO(revoke(path), ENAMETOOLONG);
}

static void long_path_enametoolong(void)
{
	static char path[PATH_MAX + 64];
	size_t n = 0;

	test_scratch();
	test_write_file("/tmp/f", "x");
	/* Every component is short and exists; only the whole is too long. */
	n += (size_t)sprintf(path, "/tmp");
	while (n < PATH_MAX + 8)
		n += (size_t)sprintf(path + n, "/.");
	sprintf(path + n, "/f");
	CHECK(strlen(path) > PATH_MAX, "path is %zu long", strlen(path));
	CHECK_ERRNO(revoke(path), ENAMETOOLONG);
}

static void symlink_loop_eloop(void)
{
	test_scratch();
	CHECK(symlink("/tmp/b", "/tmp/a") == 0, "symlink: %m");
	CHECK(symlink("/tmp/a", "/tmp/b") == 0, "symlink: %m");
	CHECK_ERRNO(revoke("/tmp/a"), ELOOP);
}

static void nobody_revoke_eacces(void *arg)
{
	(void)arg;
	CHECK_ERRNO(revoke("/tmp/private/file"), EACCES);
}

static void lookup_eacces_before_eperm(void)
{
	test_scratch();
	CHECK(mkdir("/tmp/private", 0700) == 0, "mkdir: %m");
	test_write_file("/tmp/private/file", "x"); /* root's: EPERM too, were it reached */
	test_as_nobody(nobody_revoke_eacces, NULL);
}

static void nobody_revoke_eperm(void *arg)
{
	(void)arg;
	CHECK_ERRNO(revoke("/tmp/root-file"), EPERM);
}

static void not_owner_eperm_nothing_touched(void)
{
	struct victim v;
	struct victim_res r;
	int fd;

	test_scratch();
	test_write_file("/tmp/root-file", "still here");
	victim_start(&v);
	fd = victim_open(&v, "/tmp/root-file", O_RDONLY);
	test_as_nobody(nobody_revoke_eperm, NULL);
	r = victim_read(&v, fd, 64);
	CHECK(r.ret == 10 && memcmp(r.data, "still here", 10) == 0,
	      "the holder's fd after a refused revoke: ret %ld errno %s", r.ret, strerror(r.err));
}

static void unheld_file_returns_0(void)
{
	test_scratch();
	test_write_file("/tmp/file", "x");
	CHECK(test_revoke("/tmp/file") == 0, "revoke of a file nobody holds: %m");
}

static void frevoke_minus_one_ebadf(void)
{
	CHECK_ERRNO(frevoke(-1), EBADF);
}

static void frevoke_closed_fd_ebadf(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	CHECK(fd >= 0, "open: %m");
	CHECK(close(fd) == 0, "close: %m");
	CHECK_ERRNO(frevoke(fd), EBADF);
}

/* Our own node for /dev/null (c 1 3): refused by its device number, so the
 * victim that holds it keeps it. Were it not refused, only this node's
 * holders would be cut, which the checks below would see. */
static void shared_device_einval(void)
{
	struct victim v;
	struct victim_res r;
	int fd, vfd;

	test_scratch();
	CHECK(mknod("/tmp/null", S_IFCHR | 0666, makedev(1, 3)) == 0, "mknod: %m");
	victim_start(&v);
	vfd = victim_open(&v, "/tmp/null", O_RDWR);
	fd = open("/tmp/null", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "open /tmp/null: %m");
	CHECK_ERRNO(revoke("/tmp/null"), EINVAL);
	CHECK_ERRNO(frevoke(fd), EINVAL);
	r = victim_write(&v, vfd, "abc");
	CHECK(r.ret == 3, "the holder's /tmp/null after a refused revoke: ret %ld errno %s", r.ret,
	      strerror(r.err));
	r = victim_call(&v, VICTIM_REQ(.op = VOP_FSTAT, .fd = vfd));
	CHECK(r.ret == 0 && ((struct stat *)r.data)->st_rdev == makedev(1, 3),
	      "the holder's descriptor no longer is /tmp/null");
	close(fd);
}

/* A victim holding the symlink itself (O_PATH|O_NOFOLLOW) and one holding
 * the file it points to. */
static void symlink_setup(struct victim *v, int *ret_file_fd, int *ret_link_fd)
{
	struct victim_req q = {.op = VOP_FSTAT};
	struct victim_res r;

	test_scratch();
	test_write_file("/tmp/file", "target");
	CHECK(symlink("/tmp/file", "/tmp/link") == 0, "symlink: %m");
	victim_start(v);
	*ret_file_fd = victim_open(v, "/tmp/file", O_RDONLY);
	*ret_link_fd = victim_open(v, "/tmp/link", O_PATH | O_NOFOLLOW);
	q.fd = *ret_link_fd;
	r = victim_call(v, &q);
	CHECK(r.ret == 0 && S_ISLNK(((struct stat *)r.data)->st_mode), "the victim holds no link");
}

static void nofollow_targets_the_link(void)
{
	const char *paths[] = {"/tmp/link"};
	struct revoke_opts o = {.sz = sizeof(o), .flags = REVOKE_NOFOLLOW, .keep_fd = -1};
	struct victim v;
	struct victim_res r;
	int file_fd, link_fd;

	symlink_setup(&v, &file_fd, &link_fd);
	CHECK(test_revoke_ex(paths, 1, &o, NULL) == 0, "revoke_ex(NOFOLLOW): %m");
	r = victim_read(&v, file_fd, 64);
	CHECK(r.ret == 6 && memcmp(r.data, "target", 6) == 0,
	      "the pointed-to file's holder was touched: ret %ld errno %s", r.ret, strerror(r.err));
	/* Revoked, fstat() may fail (EBADF) or see another file; not the link. */
	r = victim_call(&v, VICTIM_REQ(.op = VOP_FSTAT, .fd = link_fd));
	CHECK((r.ret == -1 && r.err == EBADF) ||
		  (r.ret == 0 && !S_ISLNK(((struct stat *)r.data)->st_mode)),
	      "the link's holder still holds the link (ret %ld errno %s)", r.ret, strerror(r.err));
}

static void symlink_followed(void)
{
	struct victim v;
	struct victim_res r;
	int file_fd, link_fd;

	symlink_setup(&v, &file_fd, &link_fd);
	CHECK(test_revoke("/tmp/link") == 0, "revoke through a symlink: %m");
	r = victim_read(&v, file_fd, 64);
	CHECK(r.ret == -1 && r.err == EBADF, "the pointed-to file's holder: ret %ld errno %s",
	      r.ret, strerror(r.err));
	r = victim_call(&v, VICTIM_REQ(.op = VOP_FSTAT, .fd = link_fd));
	CHECK(r.ret == 0 && S_ISLNK(((struct stat *)r.data)->st_mode),
	      "the link itself was revoked though it was followed");
}

/* clang-format off */
TEST_MAIN("revoke-errors",
	  {"bad_pointer_efault", bad_pointer_efault, 0},
	  {"missing_enoent", missing_enoent, 0},
	  {"file_as_dir_enotdir", file_as_dir_enotdir, 0},
	  {"long_component_enametoolong", long_component_enametoolong, 0},
	  {"long_path_enametoolong", long_path_enametoolong, 0},
	  {"symlink_loop_eloop", symlink_loop_eloop, 0},
	  {"lookup_eacces_before_eperm", lookup_eacces_before_eperm, 0},
	  {"not_owner_eperm_nothing_touched", not_owner_eperm_nothing_touched, 0},
	  {"unheld_file_returns_0", unheld_file_returns_0, 0},
	  {"frevoke_minus_one_ebadf", frevoke_minus_one_ebadf, 0},
	  {"frevoke_closed_fd_ebadf", frevoke_closed_fd_ebadf, 0},
	  {"shared_device_einval", shared_device_einval, 0},
	  {"nofollow_targets_the_link", nofollow_targets_the_link, 0},
	  {"symlink_followed", symlink_followed, 0},
)
/* clang-format on */
