/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lib/native/native.c against the running kernel: on the patched kernel the probe must
 * find revokeat(2) (the marker's "revokeat NR" line + revokeat(-1, "",
 * AT_EMPTY_PATH) == EBADF) and it must work through the library's functions;
 * REVOKE_ENGINE=ptrace must turn it off. On any other kernel (no marker) the
 * probe must say no and never make the call.
 * Built by kernel/run-tests with lib/native/native.c; one PASS/FAIL line per case.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

/* lib/native/native.c: not in internal.h yet. */
int rv_native_revoke_file(int fd);

static int failed;
#define CHECK(name, cond)                                                                          \
	do {                                                                                       \
		if (cond)                                                                          \
			printf("PASS native-%s\n", name);                                          \
		else {                                                                             \
			printf("FAIL native-%s: %s (errno %d)\n", name, #cond, errno);             \
			failed = 1;                                                                \
		}                                                                                  \
	} while (0)

int main(void)
{
	bool patched = access("/sys/kernel/revoke/syscalls", R_OK) == 0;
	setvbuf(stdout, NULL, _IOLBF, 0);

	pid_t pid = fork();
	if (pid == 0) {
		setenv("REVOKE_ENGINE", "ptrace", 1);
		_exit(rv_native_available() || rv_native_umount_available() ? 1 : 0);
	}
	int st;
	waitpid(pid, &st, 0);
	CHECK("env-ptrace-forces-userspace", WIFEXITED(st) && WEXITSTATUS(st) == 0);

	CHECK("probe-matches-marker", rv_native_available() == patched);
	CHECK("umount-probe-matches-marker",
	      rv_native_umount_available() == (access("/sys/kernel/revoke/umount", R_OK) == 0));
	if (!patched) {
		CHECK("enosys-without-kernel", rv_native_revoke("/") == -ENOSYS &&
						   rv_native_frevoke(0) == -ENOSYS &&
						   rv_native_revoke_file(0) == -ENOSYS);
		return failed;
	}
	char marker[64] = "";
	int m = open("/sys/kernel/revoke/syscalls", O_RDONLY);
	CHECK("marker-names-revokeat", m >= 0 && read(m, marker, sizeof(marker) - 1) > 0 &&
					   strncmp(marker, "revokeat ", 9) == 0 &&
					   strchr(marker, '\n') == marker + strlen(marker) - 1);
	if (m >= 0)
		close(m);
	if (rv_native_umount_available()) {
		/* The forced unmount of a tmpfs with a descriptor open in it. */
		int h = -1;
		char c;
		mkdir("/tmp/native-mnt", 0755);
		if (mount("tmpfs", "/tmp/native-mnt", "tmpfs", 0, "size=64k") == 0)
			h = open("/tmp/native-mnt/f", O_RDWR | O_CREAT, 0644);
		CHECK("umount", h >= 0 && rv_native_umount("/tmp/native-mnt") == 0 &&
				    read(h, &c, 1) < 0 && errno == EBADF &&
				    access("/tmp/native-mnt/f", F_OK) < 0 && errno == ENOENT);
		CHECK("umount-errors-as-negative-errno",
		      rv_native_umount("/tmp/nonexistent") == -ENOENT &&
			  rv_native_umount("/tmp/native-mnt") == -EINVAL);
		if (h >= 0)
			close(h);
	}
	int fd = open("/tmp/native", O_RDWR | O_CREAT | O_TRUNC, 0644);
	int a = open("/tmp/native", O_RDONLY), b = open("/tmp/native", O_RDONLY);
	char c;
	CHECK("frevoke", fd >= 0 && rv_native_frevoke(fd) == 0 && read(a, &c, 1) < 0 &&
			     errno == EBADF && read(fd, &c, 1) == 0);
	CHECK("revoke",
	      rv_native_revoke("/tmp/native") == 0 && read(fd, &c, 1) < 0 && errno == EBADF);
	CHECK("errors-as-negative-errno",
	      rv_native_revoke("/tmp/nonexistent") == -ENOENT && rv_native_frevoke(-1) == -EBADF &&
		  rv_native_frevoke(b) == -EBADF && rv_native_revoke_file(-1) == -EBADF);
	/* One open file description, everywhere it is shared, and no other. */
	int c1 = open("/tmp/native", O_RDONLY), c2 = dup(c1), d = open("/tmp/native", O_RDONLY);
	CHECK("revoke-file-only", c1 >= 0 && d >= 0 && rv_native_revoke_file(c1) == 0 &&
				      read(c1, &c, 1) < 0 && errno == EBADF &&
				      read(c2, &c, 1) < 0 && errno == EBADF && read(d, &c, 1) == 0);
	return failed;
}
