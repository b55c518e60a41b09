/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The guest's minimal revoke command (static): revoke PATH... calls
 * revokeat(AT_FDCWD, PATH, 0) on each; revoke -f FD calls revokeat(FD, "",
 * AT_EMPTY_PATH | AT_REVOKE_KEEP_FILE). Exit status 0 when every call worked.
 * The number comes from the series' uapi headers (kernel/run-tests builds
 * this with -I BUILD/usr/include).
 * The project's full command (tools/revoke.c) can replace it: kernel/run-tests
 * --copy build/tools/revoke.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <asm/unistd.h>

/* <linux/fcntl.h>'s, which conflicts with <fcntl.h> */
#ifndef AT_REVOKE_KEEP_FILE
#define AT_REVOKE_KEEP_FILE 0x0001
#endif

int main(int argc, char **argv)
{
	int ret = 0;
	if (argc < 2) {
		fprintf(stderr, "usage: revoke PATH... | revoke -f FD\n");
		return 2;
	}
	if (strcmp(argv[1], "-f") == 0 && argc == 3) {
		if (syscall(__NR_revokeat, atoi(argv[2]), "", AT_EMPTY_PATH | AT_REVOKE_KEEP_FILE) <
		    0) {
			fprintf(stderr, "revoke: frevoke %s: %s\n", argv[2], strerror(errno));
			return 1;
		}
		return 0;
	}
	for (int i = 1; i < argc; i++)
		if (syscall(__NR_revokeat, AT_FDCWD, argv[i], 0) < 0) {
			fprintf(stderr, "revoke: %s: %s\n", argv[i], strerror(errno));
			ret = 1;
		}
	return ret;
}
