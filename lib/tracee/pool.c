/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A pool of tracer threads for one call. ptrace binds a tracee to the thread
 * that seized it: every later request on it (interrupt, registers, the
 * program, the release) fails with ESRCH from any other thread, and a
 * thread's wait may consume a sibling's tracee's status. So each tracee has
 * one owner, from its seize to its release, and every phase is handed to the
 * owners of the tracees it drives, all at once, the engine's own thread
 * taking the first shard itself.
 *
 * A tracer thread lives until rv_tracers_end(), after the last release:
 * the kernel detaches a thread's tracees when it exits, which is right when
 * the whole revoker dies (the holders go home by themselves) and wrong in the
 * middle of a call.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#include "tracee.h"

/* Automatic size: at most this many threads, each with at least MIN_SHARD
 * holders (a thread costs more than it saves for fewer). REVOKE_TRACERS may
 * ask for up to RV_TRACERS_MAX. */
#define AUTO_MAX  8
#define MIN_SHARD 16

struct rv_tracer {
	struct rv_pool *pool;
	pthread_t thread;
	size_t assigned; /* tracees given to it so far (the engine's count) */
	/* Its job, under pool->mu. */
	bool has_job;
	void (*fn)(struct rv_tracee **ts, size_t n, void *arg);
	struct rv_tracee **ts;
	size_t n;
	void *arg;
};

struct rv_pool {
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	bool quit;
	size_t n; /* tracers, the engine's own thread the first */
	struct rv_tracer tracers[RV_TRACERS_MAX];
};

/* The tracer this thread is (NULL without a pool), and the pool this thread
 * began (the engine's thread only). */
static __thread struct rv_tracer *self;
static __thread struct rv_pool *current;
static __thread bool dispatching;

bool rv_tracee_mine(const struct rv_tracee *t)
{
	return t && t->owner == self;
}

void rv_tracer_assign(struct rv_tracee *t)
{
	struct rv_tracer *best;

	t->owner = self;
	if (!current)
		return;
	best = &current->tracers[0];
	for (size_t k = 1; k < current->n; k++)
		if (current->tracers[k].assigned < best->assigned)
			best = &current->tracers[k];
	best->assigned++;
	t->owner = best;
}

static void *tracer_main(void *arg)
{
	struct rv_tracer *tr = arg;
	struct rv_pool *p = tr->pool;

	self = tr;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!tr->has_job && !p->quit)
			pthread_cond_wait(&p->work, &p->mu);
		if (!tr->has_job)
			break;
		pthread_mutex_unlock(&p->mu);
		tr->fn(tr->ts, tr->n, tr->arg);
		pthread_mutex_lock(&p->mu);
		tr->has_job = false;
		pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	/* What is left traced (a holder finishing a program alone, an orphan
	 * the release could not detach yet) is detached by the kernel as this
	 * thread exits. */
	return NULL;
}

/* The number of tracer threads for NHOLDERS holders: REVOKE_TRACERS when set
 * (1: the engine's thread alone), else the CPUs we may run on, capped. */
static size_t pool_size(size_t nholders)
{
	const char *env = secure_getenv("REVOKE_TRACERS");
	size_t n;
	int v;

	if (env && *env && rv_parse_int(env, &v) == 0 && v > 0)
		n = (size_t)v < RV_TRACERS_MAX ? (size_t)v : RV_TRACERS_MAX;
	else {
		n = rv_cpus();
		if (n > AUTO_MAX)
			n = AUTO_MAX;
		if (n > nholders / MIN_SHARD)
			n = nholders / MIN_SHARD;
	}
	if (n > nholders)
		n = nholders;
	return n ? n : 1;
}

size_t rv_tracers_begin(size_t nholders)
{
	size_t want = pool_size(nholders);
	struct rv_pool *p;
	pthread_attr_t pa;
	sigset_t all, old;

	if (current || self || want < 2)
		return 1;
	p = calloc(1, sizeof(*p));
	if (!p)
		return 1; /* the engine's thread alone, as without a pool */
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	p->tracers[0].pool = p;
	p->n = 1;
	/* Signals are the caller's business, delivered to its threads, not to
	 * ours (which inherit this mask). */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_attr_init(&pa);
	pthread_attr_setstacksize(&pa, 1u << 20);
	while (p->n < want) {
		struct rv_tracer *tr = &p->tracers[p->n];

		tr->pool = p;
		if (pthread_create(&tr->thread, &pa, tracer_main, tr) != 0)
			break; /* fewer threads, each with a larger shard */
		p->n++;
	}
	pthread_attr_destroy(&pa);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	current = p;
	self = &p->tracers[0];
	return p->n;
}

void rv_tracers_end(void)
{
	struct rv_pool *p = current;

	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->quit = true;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	for (size_t k = 1; k < p->n; k++)
		pthread_join(p->tracers[k].thread, NULL);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->done);
	pthread_mutex_destroy(&p->mu);
	current = NULL;
	self = NULL;
	free(p);
}

void rv_pool_dispatch(struct rv_tracee **ts, size_t n,
		      void (*fn)(struct rv_tracee **ts, size_t n, void *arg), void *arg)
{
	struct rv_pool *p = current;
	bool want[RV_TRACERS_MAX] = {}, busy = true;

	/* Without a pool, inside a tracer thread, or from a job of the
	 * engine's own thread: the calling thread's share only. */
	if (!p || dispatching) {
		fn(ts, n, arg);
		return;
	}
	dispatching = true;
	for (size_t i = 0; i < n; i++)
		if (ts[i] && ts[i]->owner && ts[i]->owner->pool == p)
			want[ts[i]->owner - p->tracers] = true;
	pthread_mutex_lock(&p->mu);
	for (size_t k = 1; k < p->n; k++) {
		struct rv_tracer *tr = &p->tracers[k];

		if (!want[k])
			continue;
		tr->fn = fn;
		tr->ts = ts;
		tr->n = n;
		tr->arg = arg;
		tr->has_job = true;
	}
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	if (want[0])
		fn(ts, n, arg);
	/* Each job is bounded by its tracees' deadlines, so this wait is. */
	pthread_mutex_lock(&p->mu);
	while (busy) {
		busy = false;
		for (size_t k = 1; k < p->n; k++)
			busy |= p->tracers[k].has_job;
		if (busy)
			pthread_cond_wait(&p->done, &p->mu);
	}
	pthread_mutex_unlock(&p->mu);
	dispatching = false;
}

struct each {
	void (*fn)(size_t i, void *arg);
	void *arg;
};

static void each_mine(struct rv_tracee **ts, size_t n, void *arg)
{
	const struct each *e = arg;

	for (size_t i = 0; i < n; i++)
		if (rv_tracee_mine(ts[i]))
			e->fn(i, e->arg);
}

void rv_tracees_each(struct rv_tracee **ts, size_t n, void (*fn)(size_t i, void *arg), void *arg)
{
	struct each e = {.fn = fn, .arg = arg};

	rv_pool_dispatch(ts, n, each_mine, &e);
}
