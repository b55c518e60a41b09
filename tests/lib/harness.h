/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A minimal test harness. Each case runs in its own forked child under an
 * alarm, so a crash or a hang fails that case only. Every case prints one line:
 *   PASS <suite>.<case>
 *   FAIL <suite>.<case>: <why>
 *   SKIP <suite>.<case>: <why>
 * tests/run-tests counts those lines; a skip is never counted as a pass.
 *
 * Inside a case: CHECK(cond, fmt, ...) fails the case with a message;
 * SKIP(fmt, ...) skips it (only for a missing kernel feature, never to hide a
 * failure). A case passes when it returns.
 */
#ifndef REVOKE_TEST_HARNESS_H
#define REVOKE_TEST_HARNESS_H

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define TEST_EXIT_SKIP 77

struct test_case {
	const char *name;
	void (*fn)(void);
	unsigned int timeout_s;
};

static const char *test_suite_name = "test";

static inline void __attribute__((format(printf, 1, 2), noreturn)) test_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "  reason: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	fflush(NULL);
	_exit(1);
}

static inline void __attribute__((format(printf, 1, 2), noreturn)) test_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "  skip: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	fflush(NULL);
	_exit(TEST_EXIT_SKIP);
}

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
			test_fail(__VA_ARGS__);                                                    \
		}                                                                                  \
	} while (0)

#define SKIP(...) test_skip(__VA_ARGS__)

/* Run each case in a child; returns the exit status for main(). */
static inline int test_run_all(const char *suite, const struct test_case *cases, size_t n, int argc,
			       char **argv)
{
	int failed = 0;

	test_suite_name = suite;
	for (size_t i = 0; i < n; i++) {
		const struct test_case *c = &cases[i];
		int status;
		pid_t pid;

		if (argc > 1) { /* run only the named cases */
			int wanted = 0;
			for (int a = 1; a < argc; a++)
				wanted |= strcmp(argv[a], c->name) == 0;
			if (!wanted)
				continue;
		}
		fflush(NULL);
		pid = fork();
		if (pid < 0) {
			printf("FAIL %s.%s: fork: %s\n", suite, c->name, strerror(errno));
			failed++;
			continue;
		}
		if (pid == 0) {
			setpgid(0, 0);
			alarm(c->timeout_s ? c->timeout_s : 30);
			c->fn();
			fflush(NULL);
			_exit(0);
		}
		/* Whatever the case started and left behind dies with it; the
		 * child stays unreaped until then so its group id is not reused. */
		{
			siginfo_t si;
			while (waitid(P_PID, pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
				;
		}
		kill(-pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			printf("PASS %s.%s\n", suite, c->name);
		else if (WIFEXITED(status) && WEXITSTATUS(status) == TEST_EXIT_SKIP)
			printf("SKIP %s.%s\n", suite, c->name);
		else {
			failed++;
			if (WIFSIGNALED(status))
				printf("FAIL %s.%s: killed by signal %d%s\n", suite, c->name,
				       WTERMSIG(status),
				       WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
			else
				printf("FAIL %s.%s: exit %d\n", suite, c->name,
				       WEXITSTATUS(status));
		}
		fflush(stdout);
	}
	return failed ? 1 : 0;
}

#define TEST_MAIN(suite, ...)                                                                      \
	int main(int argc, char **argv)                                                            \
	{                                                                                          \
		static const struct test_case cases[] = {__VA_ARGS__};                             \
		setvbuf(stdout, NULL, _IOLBF, 0);                                                  \
		return test_run_all(suite, cases, sizeof(cases) / sizeof(cases[0]), argc, argv);   \
	}

#endif
