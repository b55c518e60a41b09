/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The guest's minimal revoke command (static): revoke PATH... calls revoke(2)
 * on each; revoke -f FD calls frevoke(2). Exit status 0 when every call worked.
 * The numbers come from the series' uapi headers (kernel/run-tests builds this
 * with -I BUILD/usr/include).
 * The project's full command (tools/revoke.c) can replace it: kernel/run-tests
 * --copy build/tools/revoke.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <asm/unistd.h>

int main(int argc, char **argv)
{
	int ret = 0;
	if (argc < 2) {
		fprintf(stderr, "usage: revoke PATH... | revoke -f FD\n");
		return 2;
	}
	if (strcmp(argv[1], "-f") == 0 && argc == 3) {
		if (syscall(__NR_frevoke, atoi(argv[2])) < 0) {
			fprintf(stderr, "revoke: frevoke %s: %s\n", argv[2], strerror(errno));
			return 1;
		}
		return 0;
	}
	for (int i = 1; i < argc; i++)
		if (syscall(__NR_revoke, argv[i]) < 0) {
			fprintf(stderr, "revoke: %s: %s\n", argv[i], strerror(errno));
			ret = 1;
		}
	return ret;
}
