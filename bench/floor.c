/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-floor: the least any ptrace-based revoke must do to the holders in
 * PIDFILE (single-threaded processes): PTRACE_SEIZE and PTRACE_INTERRUPT
 * each, wait for each stop, then PTRACE_DETACH each, in the same shape as
 * the engine (stop all, then release all). Prints
 *   <total ns> <longest pause ns> <holders>
 * where a holder's pause runs from its PTRACE_INTERRUPT to its PTRACE_DETACH.
 * With --one-by-one, each holder is stopped and released before the next.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int seize(pid_t pid)
{
	if (ptrace(PTRACE_SEIZE, pid, 0, 0) < 0 || ptrace(PTRACE_INTERRUPT, pid, 0, 0) < 0) {
		fprintf(stderr, "bench-floor: seize %d: %s\n", pid, strerror(errno));
		return -1;
	}
	return 0;
}

static int wait_stop(pid_t pid)
{
	int status;

	for (;;) {
		if (waitpid(pid, &status, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "bench-floor: wait %d: %s\n", pid, strerror(errno));
			return -1;
		}
		if (WIFSTOPPED(status) && (status >> 16) == PTRACE_EVENT_STOP)
			return 0;
		if (WIFSTOPPED(status)) { /* a signal came first: give it back */
			ptrace(PTRACE_CONT, pid, 0, WSTOPSIG(status));
			continue;
		}
		return -1;
	}
}

int main(int argc, char **argv)
{
	uint64_t t0, total, max_pause = 0, *start;
	int one_by_one = argc > 2 && strcmp(argv[2], "--one-by-one") == 0;
	size_t n = 0, cap = 1024;
	pid_t *pids;
	FILE *f;
	int pid;

	if (argc < 2) {
		fprintf(stderr, "usage: bench-floor PIDFILE [--one-by-one]\n");
		return 2;
	}
	f = fopen(argv[1], "re");
	pids = malloc(cap * sizeof(*pids));
	if (!f || !pids) {
		perror("bench-floor");
		return 1;
	}
	while (fscanf(f, "%d", &pid) == 1) {
		if (n == cap) {
			cap *= 2;
			pids = realloc(pids, cap * sizeof(*pids));
			if (!pids)
				return 1;
		}
		pids[n++] = pid;
	}
	fclose(f);
	start = calloc(n ? n : 1, sizeof(*start));
	if (!start)
		return 1;

	t0 = now_ns();
	if (one_by_one) {
		for (size_t i = 0; i < n; i++) {
			start[i] = now_ns();
			if (seize(pids[i]) < 0 || wait_stop(pids[i]) < 0)
				return 1;
			ptrace(PTRACE_DETACH, pids[i], 0, 0);
			if (now_ns() - start[i] > max_pause)
				max_pause = now_ns() - start[i];
		}
	} else {
		for (size_t i = 0; i < n; i++) {
			start[i] = now_ns();
			if (seize(pids[i]) < 0)
				return 1;
		}
		for (size_t i = 0; i < n; i++)
			if (wait_stop(pids[i]) < 0)
				return 1;
		for (size_t i = 0; i < n; i++) {
			uint64_t p;

			ptrace(PTRACE_DETACH, pids[i], 0, 0);
			p = now_ns() - start[i];
			if (p > max_pause)
				max_pause = p;
		}
	}
	total = now_ns() - t0;
	printf("%llu %llu %zu\n", (unsigned long long)total, (unsigned long long)max_pause, n);
	return 0;
}
