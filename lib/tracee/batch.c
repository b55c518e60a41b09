/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one loop that drives many tracees through a phase (stop, run,
 * release) at once: start every tracee, then collect the wait statuses of
 * the threads each one awaits, in sweeps, feeding each to its tracee, until
 * every tracee is done or past its deadline. Statuses are collected per
 * thread (waitpid(tid, WNOHANG)), never waitpid(-1): the caller's own
 * children are not ours to reap.
 */
#include <sched.h>
#include <sys/wait.h>
#include <time.h>

#include "tracee.h"

/* Polls without a busy core: a few yields (a tracee usually stops within
 * microseconds), then sleeps doubling up to 1 ms, never past DEADLINE.
 * Returns false when the deadline has passed. */
bool rv_ptrace_backoff(unsigned int *n, uint64_t deadline)
{
	uint64_t now = rv_now_ns(), ns;

	if (now >= deadline)
		return false;
	if ((*n)++ < 16) {
		sched_yield();
		return true;
	}
	ns = 10000ull << (*n - 16 < 7 ? *n - 16 : 7);
	if (ns > deadline - now)
		ns = deadline - now;
	nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = (long)ns}, NULL);
	return true;
}

static uint64_t deadline_of(const struct rv_phase *phase, const struct rv_tracee *t)
{
	return phase->deadline ? phase->deadline(t) : t->deadline_ns;
}

static void drive(struct rv_tracee **ts, size_t n, const struct rv_phase *phase, int *ret,
		  bool *busy)
{
	size_t active = 0;
	unsigned int nb = 0;

	for (size_t i = 0; i < n; i++) {
		int r;

		busy[i] = false;
		if (!rv_tracee_mine(ts[i]))
			continue;
		r = phase->start(ts[i]);
		if (r == 1) {
			busy[i] = true;
			active++;
		} else if (ret)
			ret[i] = r;
	}
	while (active > 0) {
		bool progress = false;
		uint64_t next_deadline = UINT64_MAX;

		for (size_t i = 0; i < n; i++) {
			struct rv_tracee *t = ts[i];
			int r = 1;

			if (!busy[i])
				continue;
			if (phase->poll)
				r = phase->poll(t, &progress);
			for (size_t k = 0; k < t->n && r == 1; k++) {
				struct rv_thread *th = &t->threads[k];
				int status;
				pid_t p;

				if (!th->awaited || th->gone)
					continue;
				p = waitpid(th->tid, &status, __WALL | WNOHANG);
				if (p == 0 || (p < 0 && errno == EINTR))
					continue;
				progress = true;
				if (p < 0) {
					/* ECHILD: not our tracee any more. */
					th->gone = true;
					th->awaited = false;
					status = -1;
				}
				r = phase->feed(t, th, status);
			}
			if (r == 1 && rv_now_ns() >= deadline_of(phase, t)) {
				r = phase->timeout(t);
				progress = true;
			}
			if (r != 1) {
				busy[i] = false;
				active--;
				for (size_t k = 0; k < t->n; k++)
					t->threads[k].awaited = false;
				if (ret)
					ret[i] = r;
			} else if (deadline_of(phase, t) < next_deadline)
				next_deadline = deadline_of(phase, t);
		}
		if (progress)
			nb = 0;
		else if (active > 0)
			rv_ptrace_backoff(&nb, next_deadline);
	}
}

struct drive_args {
	const struct rv_phase *phase;
	int *ret;
};

static void drive_mine(struct rv_tracee **ts, size_t n, void *arg)
{
	const struct drive_args *a = arg;
	bool *busy = calloc(n ? n : 1, sizeof(*busy));

	if (busy) {
		drive(ts, n, a->phase, a->ret, busy);
		free(busy);
		return;
	}
	/* No memory to track them together: one after the other. */
	for (size_t i = 0; i < n; i++) {
		bool one;

		drive(&ts[i], 1, a->phase, a->ret ? &a->ret[i] : NULL, &one);
	}
}

void rv_batch_drive(struct rv_tracee **ts, size_t n, const struct rv_phase *phase, int *ret)
{
	struct drive_args a = {.phase = phase, .ret = ret};

	rv_pool_dispatch(ts, n, drive_mine, &a);
}
