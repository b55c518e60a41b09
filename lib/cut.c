/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cut: a dead descriptor over every revoked fd, a SIGBUS mapping over
 * every revoked range; in a stopped tracee through injected syscalls, or in
 * the calling process directly.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#if defined(__SANITIZE_ADDRESS__)
#define RV_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RV_ASAN 1
#endif
#endif
#ifdef RV_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

/*
 * Many holders are cut at once by running each holder's plan (the plain
 * sequential code below) as a coroutine on its own stack, in this thread
 * (ptrace wants the tracer thread): an injected syscall starts, the
 * coroutine yields, and the scheduler collects the stops of every holder
 * in sweeps before resuming those whose syscall finished. A holder's
 * stops arrive while the others' are started, so nobody waits alone.
 */
#define CUT_STACK_SIZE	(256u * 1024u)
#define CUT_MAX_RUNNING 256 /* coroutine stacks alive at once */

struct cut_sched;

struct cutter {
	struct rv_holder *h;
	struct rv_tracee *t; /* NULL: the caller itself */
	int broken;	     /* the injection failed: nothing more can be done */
	long page;	     /* holder's anonymous page for strings, or 0 */
	size_t page_used;
	bool use_page; /* the stack below sp proved unusable */

	/* Batch only. */
	struct cut_sched *s; /* NULL: run each syscall to its end right away */
	void *sp;	     /* saved while switched away */
	void *stack;
	bool waiting, finished;
	long res;   /* the finished syscall's result */
	int sc_r;   /* its rv_tracee_syscall_poll outcome */
	int result; /* what the plan returned */
	void *fake_stack;
};

struct cut_sched {
	void *sp; /* the scheduler's, while a coroutine runs */
	struct cutter *cur;
	const void *stack_bottom; /* the scheduler's stack, for ASan */
	size_t stack_size;
};

static int cut_plan(struct cutter *c);

/* Switch from the scheduler into C, until it yields or finishes. */
static void cut_resume(struct cut_sched *s, struct cutter *c)
{
#ifdef RV_ASAN
	void *fake = NULL;
#endif

	s->cur = c;
#ifdef RV_ASAN
	__sanitizer_start_switch_fiber(&fake, c->stack, CUT_STACK_SIZE);
#endif
	rv_arch_switch(&s->sp, c->sp);
#ifdef RV_ASAN
	__sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
	s->cur = NULL;
}

/* From inside C back to the scheduler. */
static void cut_yield(struct cutter *c)
{
#ifdef RV_ASAN
	__sanitizer_start_switch_fiber(c->finished ? NULL : &c->fake_stack, c->s->stack_bottom,
				       c->s->stack_size);
#endif
	rv_arch_switch(&c->sp, c->s->sp);
#ifdef RV_ASAN
	__sanitizer_finish_switch_fiber(c->fake_stack, &c->s->stack_bottom, &c->s->stack_size);
#endif
}

static __thread struct cut_sched *entry_sched;

static void cut_entry(void)
{
	struct cutter *c = entry_sched->cur;

#ifdef RV_ASAN
	__sanitizer_finish_switch_fiber(NULL, &c->s->stack_bottom, &c->s->stack_size);
#endif
	c->result = cut_plan(c);
	c->finished = true;
	cut_yield(c); /* never comes back */
}

/* One injected syscall from inside a coroutine: start it, let the others
 * run, come back with its outcome. */
static int batch_syscall(struct cutter *c, long nr, long *res, const long args[6])
{
	int r = rv_tracee_syscall_start(c->t, nr, args);

	if (r < 0)
		return r;
	c->waiting = true;
	cut_yield(c);
	if (c->sc_r < 0)
		return c->sc_r;
	*res = c->res;
	return 0;
}

/* One syscall in the holder. The int says whether it could be run; *res is
 * the holder's result (-errno on its failure). */
static int sys(struct cutter *c, long nr, long *res, long a0, long a1, long a2, long a3, long a4,
	       long a5)
{
	long v;
	int r;

	*res = -EIO;
	if (c->broken)
		return c->broken;
	if (c->t) {
		const long args[6] = {a0, a1, a2, a3, a4, a5};

		r = c->s ? batch_syscall(c, nr, &v, args)
			 : rv_tracee_syscall(c->t, nr, &v, a0, a1, a2, a3, a4, a5);
		if (r < 0)
			return c->broken = r;
	} else {
		v = syscall(nr, a0, a1, a2, a3, a4, a5);
		if (v < 0)
			v = negative_errno();
	}
	*res = v;
	return 0;
}

/* A thread with no stack left below its stack pointer (a coroutine, a
 * tiny signal stack) has nowhere to keep our strings: map a page of its own
 * for them, unmapped again at the end of the cut. */
static int put_string_page(struct cutter *c, const char *s, long *ret_addr)
{
	size_t len = strlen(s) + 1;
	long res;
	int r;

	if (!c->page) {
		r = sys(c, SYS_mmap, &res, 0, 4096, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (r < 0)
			return r;
		if (res < 0 && res > -4096)
			return c->broken = (int)res;
		c->page = res;
		c->page_used = 0;
	}
	if (c->page_used + len > 4096)
		return c->broken = -ENOSPC;
	r = rv_tracee_poke(c->t, (uint64_t)c->page + c->page_used, s, len);
	if (r < 0)
		return c->broken = r;
	*ret_addr = c->page + (long)c->page_used;
	c->page_used += len;
	return 0;
}

/* Put a string where the holder can read it. */
static int put_string(struct cutter *c, const char *s, long *ret_addr)
{
	uint64_t addr;
	int r;

	if (!c->t) {
		*ret_addr = (long)s;
		return 0;
	}
	if (c->use_page)
		return put_string_page(c, s, ret_addr);
	r = rv_tracee_scratch(c->t, s, strlen(s) + 1, &addr);
	if (r == -EFAULT)
		return put_string_page(c, s, ret_addr);
	if (r < 0)
		return c->broken = r;
	*ret_addr = (long)addr;
	return 0;
}

static int close_in_holder(struct cutter *c, long fd)
{
	long res;

	return sys(c, SYS_close, &res, fd, 0, 0, 0, 0, 0);
}

/* Whether the holder's descriptor FD is a directory (an O_PATH directory
 * would still serve as an openat() dirfd: a new way in, not a dead end). */
static int is_dir(struct cutter *c, long fd)
{
	char path[64];
	struct statx stx;

	if (c->t)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/fd/%ld", c->h->pub.pid,
			 rv_tracee_tid(c->t), fd);
	else
		snprintf(path, sizeof(path), "/proc/self/fd/%ld", fd);
	/* The type is all we need: DONT_SYNC keeps a network or FUSE file
	 * system (maybe hung) out of it. */
	if (statx(AT_FDCWD, path, AT_STATX_DONT_SYNC, STATX_TYPE, &stx) < 0)
		return negative_errno();
	return S_ISDIR(stx.stx_mode);
}

/* An O_PATH descriptor of a non-directory: every operation but close() on it
 * fails with EBADF. /dev/null normally; the executable if the holder's mount
 * namespace lacks a usable /dev/null. */
static int open_dead(struct cutter *c, long *ret_fd)
{
	static const char *const paths[] = {"/dev/null", "/proc/self/exe"};
	long res = -ENOENT;
	int r;

	for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
		long addr;

		r = put_string(c, paths[i], &addr);
		if (r < 0)
			return r;
		r = sys(c, SYS_openat, &res, AT_FDCWD, addr, O_PATH | O_CLOEXEC, 0, 0, 0);
		if (r < 0)
			return r;
		/* ptrace writes through a PROT_NONE guard page (FOLL_FORCE) that
		 * the holder's own syscall then cannot read: use a page of ours. */
		if (res == -EFAULT && c->t && !c->use_page) {
			c->use_page = true;
			i--;
			continue;
		}
		if (res < 0)
			continue;
		r = is_dir(c, res);
		if (r == 0) {
			*ret_fd = res;
			return 0;
		}
		close_in_holder(c, res);
		if (c->broken)
			return c->broken;
		res = r < 0 ? r : -EISDIR;
	}
	return (int)res;
}

static int cut_fd(struct cutter *c, long dead, const struct revoke_ref *ref)
{
	long res;
	int r;

	r = sys(c, SYS_dup3, &res, dead, ref->fd, (ref->fd_flags & FD_CLOEXEC) ? O_CLOEXEC : 0, 0,
		0, 0);
	if (r < 0)
		return r;
	if (res == ref->fd)
		return 0;
	if (res == -EBADF || res == -EINVAL)
		return (int)res;
	/* dup3 refused (a seccomp filter returning an errno, say): close and
	 * let F_DUPFD take the lowest free number, which is the one just
	 * freed while every thread of the holder is stopped. */
	r = sys(c, SYS_close, &res, ref->fd, 0, 0, 0, 0, 0);
	if (r < 0)
		return r;
	if (res < 0 && res != -EINTR)
		return (int)res;
	r = sys(c, SYS_fcntl, &res, dead, (ref->fd_flags & FD_CLOEXEC) ? F_DUPFD_CLOEXEC : F_DUPFD,
		ref->fd, 0, 0, 0);
	if (r < 0)
		return r;
	if (res < 0)
		return (int)res;
	if (res != ref->fd) {
		/* Someone took the number in between (only possible when
		 * cutting ourselves): the fd is closed but not held. */
		close_in_holder(c, res);
		return c->broken ? c->broken : -EBUSY;
	}
	return 0;
}

static int open_sigbus_file(struct cutter *c, long *ret_fd)
{
	long addr, res;
	int r;

	r = put_string(c, "revoked", &addr);
	if (r < 0)
		return r;
	r = sys(c, SYS_memfd_create, &res, addr, MFD_CLOEXEC, 0, 0, 0, 0);
	if (r < 0)
		return r;
	if (res == -EFAULT && c->t && !c->use_page) { /* as in open_dead */
		c->use_page = true;
		return open_sigbus_file(c, ret_fd);
	}
	if (res < 0)
		return (int)res;
	*ret_fd = res;
	return 0;
}

static int cut_map(struct cutter *c, long memfd, const struct revoke_ref *ref)
{
	long res;
	int r;

	if (ref->end <= ref->start)
		return -EINVAL;
	/* A zero-sized file behind the range: the addresses stay taken and
	 * every access raises SIGBUS. */
	r = sys(c, SYS_mmap, &res, (long)ref->start, (long)(ref->end - ref->start), ref->prot,
		MAP_SHARED | MAP_FIXED, memfd, 0);
	if (r < 0)
		return r;
	if (res < 0 && res > -4096)
		return (int)res;
	if ((uint64_t)res != ref->start)
		return -EFAULT;
	return 0;
}

static void set_outcome(struct revoke_ref *ref, int r, int *first)
{
	ref->state = r < 0 ? REVOKE_STATE_FAILED : REVOKE_STATE_CUT;
	ref->error = r < 0 ? -r : 0;
	if (r < 0 && *first == 0)
		*first = r;
}

static int cut_plan(struct cutter *c)
{
	struct rv_holder *h = c->h;
	long dead = -1, memfd = -1;
	int dead_r = 0, memfd_r = 0, first = 0, r;

	for (size_t i = 0; i < h->pub.nrefs; i++) {
		struct revoke_ref *ref = &h->pub.refs[i];

		if (ref->state != REVOKE_STATE_FOUND)
			continue;
		if (c->broken) {
			set_outcome(ref, c->broken, &first);
			continue;
		}
		switch (ref->type) {
		case REVOKE_REF_FD:
			if (dead < 0 && dead_r == 0)
				dead_r = open_dead(c, &dead);
			r = dead_r < 0 ? dead_r : cut_fd(c, dead, ref);
			break;
		case REVOKE_REF_MAP:
			if (memfd < 0 && memfd_r == 0)
				memfd_r = open_sigbus_file(c, &memfd);
			r = memfd_r < 0 ? memfd_r : cut_map(c, memfd, ref);
			break;
		default:
			r = -EOPNOTSUPP; /* the engine marks these before a cut */
			break;
		}
		set_outcome(ref, c->broken ? c->broken : r, &first);
	}
	if (dead >= 0)
		close_in_holder(c, dead);
	if (memfd >= 0)
		close_in_holder(c, memfd);
	if (c->page) {
		long res;

		sys(c, SYS_munmap, &res, c->page, 4096, 0, 0, 0, 0);
	}
	return first;
}

/* A coroutine stack with a guard page below it: an overflow faults
 * instead of writing over our memory. */
static void *stack_new(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *p = mmap(NULL, CUT_STACK_SIZE + page, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (mprotect(p, page, PROT_NONE) < 0) {
		munmap(p, CUT_STACK_SIZE + page);
		return NULL;
	}
	return p + page;
}

static void stack_free(void *stack)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	munmap((uint8_t *)stack - page, CUT_STACK_SIZE + page);
}

static void cut_start(struct cut_sched *s, struct cutter *c, void *stack)
{
	c->stack = stack;
	c->s = s;
#ifdef RV_ASAN
	/* A recycled stack still carries the poison of the frames the
	 * previous coroutine never returned from. */
	__asan_unpoison_memory_region(stack, CUT_STACK_SIZE);
#endif
	c->sp = rv_arch_stack_init((uint8_t *)stack + CUT_STACK_SIZE, cut_entry);
	entry_sched = s;
	cut_resume(s, c);
}

/* The tracee holders of CS (n of them) cut together. */
static void cut_batch(struct cutter *cs, size_t n)
{
	struct cut_sched s = {};
	void *stacks[CUT_MAX_RUNNING];
	size_t nstacks = 0, next = 0, left = n;
	unsigned int nb = 0;

	while (left > 0) {
		bool progress = false;

		/* Start new coroutines while stacks are free. */
		while (next < n) {
			size_t running = next - (n - left);
			void *stack = NULL;

			if (nstacks > 0)
				stack = stacks[--nstacks];
			else if (running < CUT_MAX_RUNNING)
				stack = stack_new();
			if (!stack && running > 0)
				break; /* one will be free when a running one finishes */
			if (!stack) {
				/* No stack to spare: this one on our own, to its end. */
				cs[next].s = NULL;
				cs[next].result = cut_plan(&cs[next]);
				cs[next].finished = true;
				left--;
				next++;
				progress = true;
				continue;
			}
			cut_start(&s, &cs[next], stack);
			progress = true;
			if (cs[next].finished) {
				stacks[nstacks++] = cs[next].stack;
				left--;
			}
			next++;
		}

		/* Collect the stops of every syscall in flight, in holder order. */
		for (size_t i = 0; i < next; i++) {
			struct cutter *c = &cs[i];
			int r;

			if (!c->waiting)
				continue;
			r = rv_tracee_syscall_poll(c->t, &c->res);
			if (r == 1)
				continue;
			progress = true;
			c->waiting = false;
			c->sc_r = r;
			cut_resume(&s, c);
			if (c->finished) {
				stacks[nstacks++] = c->stack;
				left--;
			}
		}
		if (progress)
			nb = 0;
		else if (left > 0)
			rv_ptrace_backoff(&nb, UINT64_MAX);
	}
	while (nstacks > 0)
		stack_free(stacks[--nstacks]);
}

static int cut_many(struct rv_holder **hs, struct rv_tracee **ts, size_t n, int *ret)
{
	struct cutter *cs;
	size_t m = 0;

	cs = calloc(n ? n : 1, sizeof(*cs));
	if (!cs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (ts[i])
			cs[m++] = (struct cutter){.h = hs[i], .t = ts[i]};
	cut_batch(cs, m);
	m = 0;
	for (size_t i = 0; i < n; i++) {
		int q;

		if (ts[i])
			q = cs[m++].result;
		else if (hs[i]->self) {
			struct cutter c = {.h = hs[i]};

			q = cut_plan(&c);
		} else
			q = -EINVAL;
		if (ret)
			ret[i] = q;
	}
	free(cs);
	return 0;
}

int rv_cut_holders(struct rv_holder **hs, size_t n, int *ret)
{
	_cleanup_free_ struct rv_tracee **ts = calloc(n ? n : 1, sizeof(*ts));

	if (!ts)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		ts[i] = hs[i]->self ? NULL : hs[i]->tracee;
	return cut_many(hs, ts, n, ret);
}

int rv_cut_holder(struct rv_holder *h, struct rv_tracee *t)
{
	struct cutter c = {.h = h, .t = t};

	if (!h)
		return -EINVAL;
	/* One holder: nothing to overlap with, no coroutine needed. */
	return cut_plan(&c);
}
