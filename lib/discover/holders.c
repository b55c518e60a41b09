/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The holder and reference lists the scanners fill. Pointers returned by
 * rv_holders_add() and rv_holder_add_ref() stay valid only until the next
 * addition to the same list (the arrays grow with realloc).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int grow(void **v, size_t *cap, size_t n, size_t elem)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 8;
	if (ncap < *cap || ncap > SIZE_MAX / elem)
		return -ENOMEM;
	p = realloc(*v, ncap * elem);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = ncap;
	return 0;
}

struct revoke_ref *rv_holder_add_ref(struct rv_holder *h)
{
	struct revoke_ref *ref;
	void *v = h->pub.refs;

	if (grow(&v, &h->refs_cap, h->pub.nrefs, sizeof(*ref)) < 0)
		return NULL;
	h->pub.refs = v;
	ref = &h->pub.refs[h->pub.nrefs++];
	*ref = (struct revoke_ref){.fd = -1};
	return ref;
}

struct rv_holder *rv_holders_add(struct rv_holders *hs, pid_t pid)
{
	struct rv_holder *h;
	void *v = hs->v;

	if (grow(&v, &hs->cap, hs->n, sizeof(*h)) < 0)
		return NULL;
	hs->v = v;
	h = &hs->v[hs->n++];
	*h = (struct rv_holder){.pidfd = -1};
	h->pub.pid = pid;
	return h;
}

struct rv_holder *rv_holders_find(struct rv_holders *hs, pid_t pid)
{
	for (size_t i = 0; i < hs->n; i++)
		if (hs->v[i].pub.pid == pid)
			return &hs->v[i];
	return NULL;
}

/*
 * Releases what the holder owns (its refs and its pidfd) and leaves it with
 * no refs and pidfd -1; pid, comm and the other fields stay, so that a
 * report can still name a process that went away. The engine's tracee is
 * not ours to free.
 */
void rv_holder_clear(struct rv_holder *h)
{
	free(h->pub.refs);
	h->pub.refs = NULL;
	h->pub.nrefs = 0;
	h->refs_cap = 0;
	h->pidfd = safe_close(h->pidfd);
}

void rv_holders_free(struct rv_holders *hs)
{
	for (size_t i = 0; i < hs->n; i++)
		rv_holder_clear(&hs->v[i]);
	free(hs->v);
	*hs = (struct rv_holders){0};
}

static int cmp_ref(const void *a, const void *b)
{
	const struct revoke_ref *x = a, *y = b;

	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	if (x->fd != y->fd)
		return x->fd < y->fd ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->target < y->target ? -1 : x->target > y->target;
}

int rv_holder_cmp_pid(const void *a, const void *b)
{
	const struct rv_holder *x = a, *y = b;

	return x->pub.pid < y->pub.pid ? -1 : x->pub.pid > y->pub.pid;
}

void rv_holder_sort_refs(struct rv_holder *h)
{
	/* refs is NULL when there are none: qsort must not see it. */
	if (h->pub.nrefs > 1)
		qsort(h->pub.refs, h->pub.nrefs, sizeof(*h->pub.refs), cmp_ref);
}

void rv_holders_sort(struct rv_holders *hs)
{
	if (hs->n > 1)
		qsort(hs->v, hs->n, sizeof(*hs->v), rv_holder_cmp_pid);
}

/* ---- moving holders and their references: the one place that does ------- */

void rv_holder_take_refs(struct rv_holder *dst, struct rv_holder *src)
{
	free(dst->pub.refs);
	dst->pub.refs = TAKE_PTR(src->pub.refs);
	dst->pub.nrefs = src->pub.nrefs;
	dst->refs_cap = src->refs_cap;
	dst->zombie_leader = src->zombie_leader;
	dst->alias = src->alias;
	if (src->vdso)
		dst->vdso = src->vdso;
	src->pub.nrefs = 0;
	src->refs_cap = 0;
}

struct rv_holder *rv_holders_move_in(struct rv_holders *hs, struct rv_holder *src)
{
	struct rv_holder *h = rv_holders_add(hs, src->pub.pid);

	if (!h)
		return NULL;
	*h = *src;
	h->tracee = NULL;
	h->wake = NULL;
	/* SRC owns nothing any more: its refs and pidfd went with it. */
	src->pub.refs = NULL;
	src->pub.nrefs = 0;
	src->refs_cap = 0;
	src->pidfd = -1;
	return h;
}

int rv_holders_merge(struct rv_holders *dst, struct rv_holders *src)
{
	if (src->n == 0)
		return 0;
	if (dst->n + src->n > dst->cap) {
		struct rv_holder *v = realloc(dst->v, (dst->n + src->n) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		dst->v = v;
		dst->cap = dst->n + src->n;
	}
	memcpy(dst->v + dst->n, src->v, src->n * sizeof(*src->v));
	dst->n += src->n;
	free(src->v);
	*src = (struct rv_holders){0};
	return 0;
}
