/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-timeit: run a command once and print
 *   <wall time in ns> <peak RSS in KiB> <exit status>
 * The wall time is CLOCK_MONOTONIC from just before fork to wait4's return;
 * the peak RSS is the child's ru_maxrss from wait4. The command's stdout goes
 * to -o FILE (default /dev/null), its stderr to -e FILE (default /dev/null).
 *   bench-timeit [-o FILE] [-e FILE] -- command [args...]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	const char *out = "/dev/null", *err = "/dev/null";
	struct rusage ru;
	uint64_t t0, t1;
	int c, status;
	pid_t pid;

	while ((c = getopt(argc, argv, "+o:e:")) != -1) {
		if (c == 'o')
			out = optarg;
		else if (c == 'e')
			err = optarg;
		else
			return 2;
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: bench-timeit [-o FILE] [-e FILE] -- command [args...]\n");
		return 2;
	}
	t0 = now_ns();
	pid = fork();
	if (pid < 0) {
		perror("bench-timeit: fork");
		return 1;
	}
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(127);
		execvp(argv[optind], argv + optind);
		_exit(127);
	}
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR) {
			perror("bench-timeit: wait4");
			return 1;
		}
	t1 = now_ns();
	printf("%llu %ld %d\n", (unsigned long long)(t1 - t0), ru.ru_maxrss,
	       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return 0;
}
