/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Programs for the stub: a list of ops (stub/stub-abi.h) and the data they
 * point at (strings, buffers), built before anything is written into the
 * holder. Arguments that point into the data are offsets until run.c knows
 * where the data lands, then addresses.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tracee.h"

struct rv_prog *rv_prog_new(void)
{
	return calloc(1, sizeof(struct rv_prog));
}

void rv_prog_free(struct rv_prog *p)
{
	if (!p)
		return;
	free(p->ops);
	free(p->data_args);
	free(p->data);
	free(p->data_ptrs);
	free(p);
}

static int grow(void **v, size_t *cap, size_t need)
{
	size_t ncap;
	void *n;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 256;
	while (ncap < need)
		ncap *= 2;
	n = realloc(*v, ncap);
	if (!n)
		return -ENOMEM;
	*v = n;
	*cap = ncap;
	return 0;
}

int rv_prog_add(struct rv_prog *p, int kind, long nr, const long args[6], unsigned int flags,
		int ref, int subst)
{
	if (p->nops >= RV_PROG_MAX_OPS || (ref >= 0 && (size_t)ref >= p->nops) || subst >= 6 ||
	    (subst >= 0 && ref < 0))
		return -EINVAL;
	if (p->nops == p->cap) {
		size_t ncap = p->cap ? p->cap * 2 : 16;
		struct rv_op *ops = realloc(p->ops, ncap * sizeof(*ops));
		uint8_t *da;

		if (!ops)
			return -ENOMEM;
		p->ops = ops;
		da = realloc(p->data_args, ncap);
		if (!da)
			return -ENOMEM; /* ops grew, cap did not: still consistent */
		p->data_args = da;
		p->cap = ncap;
	}
	p->ops[p->nops] = (struct rv_op){
	    .kind = kind,
	    .nr = (int32_t)nr,
	    .flags = (uint16_t)flags,
	    .ref = (int16_t)ref,
	    .subst = (int16_t)subst,
	};
	for (int i = 0; i < 6; i++)
		p->ops[p->nops].args[i] = args ? args[i] : 0;
	p->data_args[p->nops] = 0;
	return (int)p->nops++;
}

int rv_prog_data(struct rv_prog *p, const void *buf, size_t len)
{
	size_t off = (p->data_len + 7) & ~(size_t)7;
	void *d = p->data;
	int r;

	if (off + len > RV_PROG_MAX_DATA)
		return -E2BIG;
	r = grow(&d, &p->data_cap, off + len);
	if (r < 0)
		return r;
	p->data = d;
	memset(p->data + p->data_len, 0, off - p->data_len);
	if (buf)
		memcpy(p->data + off, buf, len);
	else
		memset(p->data + off, 0, len);
	p->data_len = off + len;
	return (int)off;
}

void rv_prog_arg_is_data(struct rv_prog *p, int op, int arg)
{
	if (op >= 0 && (size_t)op < p->nops && arg >= 0 && arg < 6)
		p->data_args[op] |= (uint8_t)(1u << arg);
}

int rv_prog_data_ptr(struct rv_prog *p, int at, int to)
{
	uint64_t v = (uint64_t)to;
	size_t *n;

	if (at < 0 || to < 0 || (size_t)at + sizeof(v) > p->data_len || (size_t)to > p->data_len ||
	    at % 8)
		return -EINVAL;
	n = realloc(p->data_ptrs, (p->ndata_ptrs + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	p->data_ptrs = n;
	n[p->ndata_ptrs++] = (size_t)at;
	memcpy(p->data + at, &v, sizeof(v));
	return 0;
}

void rv_prog_relocate(const struct rv_prog *p, uint8_t *buf, uint64_t addr)
{
	for (size_t i = 0; i < p->ndata_ptrs; i++) {
		uint64_t v;

		memcpy(&v, buf + p->data_ptrs[i], sizeof(v));
		v += addr;
		memcpy(buf + p->data_ptrs[i], &v, sizeof(v));
	}
}

long rv_prog_result(const struct rv_prog *p, int op, bool *ret_ran)
{
	bool ran = op >= 0 && (size_t)op < p->nops && p->ops[op].state == RV_OP_RAN;

	if (ret_ran)
		*ret_ran = ran;
	return ran ? p->ops[op].res : -ENOEXEC;
}

/* The stub's semantics (stub/stub.c), in the caller itself: its own
 * descriptors are cut with the same program, run here. */
static long run_local(struct rv_op *op)
{
	long r, *a = (long *)op->args;

	switch (op->kind) {
	case RV_OP_SYSCALL:
		r = syscall(op->nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		return r < 0 ? negative_errno() : r;
	case RV_OP_ITOA:
		return snprintf((char *)a[0], 24, "%lu", (unsigned long)a[1]);
	case RV_OP_DUP_OVER:
		r = dup3((int)a[0], (int)a[1], (int)a[2]);
		if (r == a[1])
			return r;
		if (errno == EBADF || errno == EINVAL)
			return negative_errno();
		if (close((int)a[1]) < 0 && errno != EINTR)
			return negative_errno();
		r = fcntl((int)a[0], (int)a[3], (int)a[1]);
		if (r < 0)
			return negative_errno();
		if (r != a[1]) {
			/* Another thread of ours took the number in between. */
			close((int)r);
			return -EBUSY;
		}
		return r;
	case RV_OP_RAISE_NOFILE: {
		struct rlimit *old = (struct rlimit *)a[1], lim;

		if (getrlimit(RLIMIT_NOFILE, old) < 0)
			return negative_errno();
		if (old->rlim_cur >= old->rlim_max || old->rlim_max - old->rlim_cur < (rlim_t)a[0])
			return -EMFILE;
		lim = (struct rlimit){old->rlim_cur + (rlim_t)a[0], old->rlim_max};
		return setrlimit(RLIMIT_NOFILE, &lim) < 0 ? negative_errno() : 0;
	}
	case RV_OP_RESTORE_NOFILE:
		return setrlimit(RLIMIT_NOFILE, (struct rlimit *)a[1]) < 0 ? negative_errno() : 0;
	case RV_OP_MAP_OVER: {
		void *m = mmap((void *)a[1], (size_t)a[2], (int)a[3], (int)a[4], (int)a[0], 0);

		if (m == MAP_FAILED)
			return negative_errno();
		return m == (void *)a[1] ? 0 : -EFAULT;
	}
	}
	return -ENOSYS;
}

void rv_prog_run_local(struct rv_prog *p)
{
	int failed = -1;

	if (p->data)
		rv_prog_relocate(p, p->data, (uint64_t)(uintptr_t)p->data);
	for (size_t i = 0; i < p->nops; i++) {
		struct rv_op *op = &p->ops[i];
		struct rv_op *ref = op->ref >= 0 && (size_t)op->ref < i ? &p->ops[op->ref] : NULL;

		if (p->data_args[i])
			for (int a = 0; a < 6; a++)
				if (p->data_args[i] & (1u << a))
					op->args[a] += (int64_t)(uintptr_t)p->data;
		if ((failed >= 0 && !(op->flags & RV_OPF_CLEANUP)) ||
		    ((op->flags & RV_OPF_IF_REF_OK) &&
		     (!ref || ref->state != RV_OP_RAN || ref->res < 0))) {
			op->state = RV_OP_SKIPPED;
			continue;
		}
		if (ref && op->subst >= 0 && op->subst < 6)
			op->args[op->subst] += ref->res;
		op->res = run_local(op);
		op->state = RV_OP_RAN;
		if (op->res < 0 && (op->flags & RV_OPF_REQUIRED) && failed < 0)
			failed = (int)i;
	}
	p->failed = failed;
	p->done = true;
}

bool rv_prog_all_ok(const struct rv_prog *p)
{
	if (!p->done || p->failed >= 0)
		return false;
	for (size_t i = 0; i < p->nops; i++) {
		const struct rv_op *op = &p->ops[i];

		if (op->flags & (RV_OPF_CLEANUP | RV_OPF_OPTIONAL))
			continue;
		if (op->state != RV_OP_RAN || op->res < 0)
			return false;
	}
	return true;
}
