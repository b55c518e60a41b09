/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Calling the library from a test: revoke(), frevoke(), revoke_ex() retried
 * when a loaded machine made them run out of time, a revoke() that explains a
 * failure, report look-ups, which engine runs, and waiting until the engine
 * has seized a victim. Inline: each program links the librevoke it tests
 * (shared, or the internals).
 */
#ifndef REVOKE_TEST_LIB_CALL_H
#define REVOKE_TEST_LIB_CALL_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"
#include "revoke.h"

/* ---- calling the library ---- */

/*
 * CALL (revoke(), frevoke(), revoke_ex()) run again, at most twice more, when
 * it fails with ETIMEDOUT: that promises nothing was changed, and a machine
 * busy with other work (a parallel build, benchmarks with thousands of
 * processes) can make one scan of every process outlast the 5 s default. A
 * call that hangs for real still fails, three times over. Each retry leaves
 * a note in the case's output.
 */
#define TEST_RETRY_TIMEDOUT(call)                                                                  \
	({                                                                                         \
		int _r;                                                                            \
		for (int _i = 0;; _i++) {                                                          \
			_r = (call);                                                               \
			if (!(_r == -1 && errno == ETIMEDOUT && _i < 2))                           \
				break;                                                             \
			fprintf(stderr, "  note: %s: ETIMEDOUT (nothing changed), again\n",        \
				#call);                                                            \
		}                                                                                  \
		_r;                                                                                \
	})

static inline int test_revoke(const char *path)
{
	return TEST_RETRY_TIMEDOUT(revoke(path));
}

static inline int test_frevoke(int fd)
{
	return TEST_RETRY_TIMEDOUT(frevoke(fd));
}

static inline int test_revoke_ex(const char *const *paths, size_t n, const struct revoke_opts *opts,
				 struct revoke_report **ret_report)
{
	for (int i = 0;; i++) {
		int r = revoke_ex(paths, n, opts, ret_report);
		if (!(r == -1 && errno == ETIMEDOUT && i < 2))
			return r;
		fprintf(stderr, "  note: revoke_ex: ETIMEDOUT (nothing changed), again\n");
		if (ret_report) {
			revoke_report_free(*ret_report);
			*ret_report = NULL;
		}
	}
}

static inline const struct revoke_holder *find_holder(const struct revoke_report *rep, pid_t pid)
{
	for (size_t i = 0; rep && i < rep->nholders; i++)
		if (rep->holders[i].pid == pid)
			return &rep->holders[i];
	return NULL;
}

static inline const struct revoke_ref *find_ref(const struct revoke_holder *h, int type)
{
	for (size_t i = 0; h && i < h->nrefs; i++)
		if (h->refs[i].type == type)
			return &h->refs[i];
	return NULL;
}

/* Whether revoke here goes to the native syscalls (kernel/), as lib/native/native.c
 * decides: the marker of the patched kernel, unless REVOKE_ENGINE=ptrace. */
static inline bool engine_native(void)
{
	const char *e = getenv("REVOKE_ENGINE");

	return access("/sys/kernel/revoke/syscalls", F_OK) == 0 && !(e && strcmp(e, "ptrace") == 0);
}

/* From a thread of the test: wait (up to 2 s) until the revoke running in the
 * main thread has seized PID, so that what follows lands while it is stopped.
 * The native engine stops nobody: there, "during" is as close as the thread
 * gets to the system call, i.e. at once. */
static inline bool wait_traced(pid_t pid)
{
	if (engine_native())
		return true;
	for (int i = 0; i < 10000; i++) {
		long t = proc_status_field(pid, "TracerPid");

		if (t != 0)
			return t > 0;
		usleep(200);
	}
	return false;
}

/* revoke(PATH) through revoke_ex, so that a failure says which holder refused and why. */
static inline int revoke_explained(const char *path)
{
	struct revoke_report *rep = NULL;
	int r, e;

	r = revoke_ex(&path, 1, NULL, &rep);
	e = errno;
	if (r < 0 && rep)
		fprintf(stderr, "  failed %s (%s), while %s pid %d %s after %.3f s\n",
			strerror(rep->error), strerror(e), revoke_phase_name(rep->failed_phase),
			(int)rep->failed_pid, rep->failed_detail, rep->elapsed_ns / 1e9);
	for (size_t i = 0; r < 0 && rep && i < rep->nholders; i++) {
		const struct revoke_holder *h = &rep->holders[i];

		fprintf(stderr, "  holder %d (%s): %s, error %d %s\n", (int)h->pid, h->comm,
			revoke_state_name(h->state), h->error, h->reason);
		for (size_t j = 0; j < h->nrefs; j++)
			fprintf(stderr, "    %s %d: %s, error %d\n",
				revoke_ref_type_name(h->refs[j].type), h->refs[j].fd,
				revoke_state_name(h->refs[j].state), h->refs[j].error);
	}
	revoke_report_free(rep);
	errno = e;
	return r;
}

#endif
