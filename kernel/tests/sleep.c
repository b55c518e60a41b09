/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sleep SECONDS for a guest of another architecture (kernel/run-tests --arch
 * arm64 --suite): the conformance suite execs /bin/sleep as a holder, and
 * the host's coreutils are x86_64. Whole seconds, in one nanosleep.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	struct timespec ts = {argc > 1 ? strtol(argv[1], NULL, 10) : 0, 0};

	while (nanosleep(&ts, &ts) != 0)
		;
	return 0;
}
