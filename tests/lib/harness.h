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

/*
 * A case is a function, or a row of a table: a family of near-identical
 * cases is one function and a table whose rows each begin with a struct
 * test_row (the case's name and timeout), listed with TEST_TABLE(rows, fn):
 *
 *	static const struct kind_row {
 *		struct test_row t;
 *		int kind;
 *	} kinds[] = {{{"socket", 30}, K_SOCKET}, {{"fifo", 30}, K_FIFO}};
 *	static void kind_case(const void *row) { check(((const struct kind_row *)row)->kind); }
 *	TEST_MAIN("suite", {"other", other_case, 30}, TEST_TABLE(kinds, kind_case))
 *
 * Each row runs as a case of its own, where the table stands in the list.
 */
struct test_row {
	const char *name;
	unsigned int timeout_s;
};

/* NROWS rows of ROW_SIZE bytes, each run as ROW_FN(row). */
struct test_table {
	const void *rows;
	size_t nrows, row_size;
	void (*row_fn)(const void *row);
};

/* {"name", fn, timeout_s}, or TEST_TABLE(rows, fn): a table where NAME
 * points to its struct test_table and TIMEOUT_S is TEST_TABLE_CASE (a case
 * keeps its three fields, so that {"name", fn, timeout_s} needs no more). */
struct test_case {
	const char *name;
	void (*fn)(void);
	unsigned int timeout_s;
};

#define TEST_TABLE_CASE 0xffffffffu
#define TEST_TABLE(rows_, fn_)                                                                     \
	{                                                                                          \
		.name = (const char *)(const void *)&(                                             \
		    const struct test_table){.rows = (rows_),                                      \
					     .nrows = sizeof(rows_) / sizeof((rows_)[0]),          \
					     .row_size = sizeof((rows_)[0]),                       \
					     .row_fn = (fn_)},                                     \
		.fn = NULL, .timeout_s = TEST_TABLE_CASE                                           \
	}

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

/* Whether NAME was asked for (no names: all are). */
static inline int test_wanted(const char *name, int argc, char **argv)
{
	int wanted = argc <= 1;

	for (int a = 1; a < argc; a++)
		wanted |= strcmp(argv[a], name) == 0;
	return wanted;
}

/* Run one case (FN(), or ROW_FN(ROW)) in a child; 1 when it failed. */
static inline int test_run_one(const char *suite, const char *name, unsigned int timeout_s,
			       void (*fn)(void), void (*row_fn)(const void *), const void *row)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		printf("FAIL %s.%s: fork: %s\n", suite, name, strerror(errno));
		return 1;
	}
	if (pid == 0) {
		setpgid(0, 0);
		alarm(timeout_s ? timeout_s : 30);
		if (fn)
			fn();
		else
			row_fn(row);
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
		printf("PASS %s.%s\n", suite, name);
	else if (WIFEXITED(status) && WEXITSTATUS(status) == TEST_EXIT_SKIP)
		printf("SKIP %s.%s\n", suite, name);
	else {
		if (WIFSIGNALED(status))
			printf("FAIL %s.%s: killed by signal %d%s\n", suite, name, WTERMSIG(status),
			       WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
		else
			printf("FAIL %s.%s: exit %d\n", suite, name, WEXITSTATUS(status));
		fflush(stdout);
		return 1;
	}
	fflush(stdout);
	return 0;
}

/* Run each case (each row of each table) in a child; returns the exit status for main(). */
static inline int test_run_all(const char *suite, const struct test_case *cases, size_t n, int argc,
			       char **argv)
{
	int failed = 0;

	test_suite_name = suite;
	for (size_t i = 0; i < n; i++) {
		const struct test_case *c = &cases[i];
		const struct test_table *t = (const void *)c->name;

		if (c->timeout_s != TEST_TABLE_CASE) {
			if (test_wanted(c->name, argc, argv))
				failed +=
				    test_run_one(suite, c->name, c->timeout_s, c->fn, NULL, NULL);
			continue;
		}
		for (size_t r = 0; r < t->nrows; r++) {
			const void *row = (const char *)t->rows + r * t->row_size;
			const struct test_row *head = row;

			if (test_wanted(head->name, argc, argv))
				failed += test_run_one(suite, head->name, head->timeout_s, NULL,
						       t->row_fn, row);
		}
	}
	return failed ? 1 : 0;
}

/* The cases: an automatic array, so that a table's descriptor can be a
 * compound literal (TEST_TABLE). */
#define TEST_MAIN(suite, ...)                                                                      \
	int main(int argc, char **argv)                                                            \
	{                                                                                          \
		const struct test_case cases[] = {__VA_ARGS__};                                    \
		setvbuf(stdout, NULL, _IOLBF, 0);                                                  \
		return test_run_all(suite, cases, sizeof(cases) / sizeof(cases[0]), argc, argv);   \
	}

#endif
