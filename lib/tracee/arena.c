/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The batch's arena for what each holder keeps while its program is in
 * place (tracee.h). Calls nothing of the engine's: stop.c frees with it.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "tracee.h"

struct rv_arena {
	size_t refs, size, used; /* atomic: tracees of a batch may be freed in any thread */
	uint8_t mem[] __attribute__((aligned(16)));
};

struct rv_arena *rv_arena_new(size_t size)
{
	size_t total = sizeof(struct rv_arena) + size;
	/* Reserved, not committed: blocks are bounded by the largest FPU
	 * state, while the state of this machine's holders is usually a
	 * fraction of it; only the pages written to count. */
	struct rv_arena *a = mmap(NULL, total, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (a == MAP_FAILED)
		return NULL;
	a->refs = 1;
	a->size = size;
	a->used = 0;
	return a;
}

void rv_arena_put(struct rv_arena *a)
{
	if (a && __atomic_sub_fetch(&a->refs, 1, __ATOMIC_ACQ_REL) == 0)
		munmap(a, sizeof(*a) + a->size);
}

void *rv_arena_alloc(struct rv_arena *a, size_t len)
{
	size_t off;

	len = (len + 15) & ~(size_t)15;
	off = __atomic_fetch_add(&a->used, len, __ATOMIC_RELAXED);
	return off + len <= a->size ? a->mem + off : NULL;
}

void rv_run_use_arena(struct rv_tracee *t, struct rv_arena *a)
{
	if (t->run.arena == a)
		return;
	if (a)
		__atomic_add_fetch(&a->refs, 1, __ATOMIC_ACQ_REL);
	rv_arena_put(t->run.arena);
	t->run.arena = a;
}

void rv_run_free_saved(struct rv_run_state *rs)
{
	if (!rs->saved_in_arena)
		free(rs->saved_data); /* saved_code too */
	rs->saved_in_arena = false;
	rs->saved_code = rs->saved_data = NULL;
}

void rv_run_forget(struct rv_tracee *t)
{
	rv_run_free_saved(&t->run);
	rv_arena_put(t->run.arena);
	t->run.arena = NULL;
}
