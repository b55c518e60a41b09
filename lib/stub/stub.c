/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cut's stub: freestanding code the library writes into a holder where
 * the holder's own code never runs (lib/tracee/place.c), and runs in one of
 * its threads. It interprets a program of syscalls (stub-abi.h), stops once
 * for the tracer, and returns home with rt_sigreturn.
 *
 * Built without libc, relocations or data (lib/stub/meson.build checks): one
 * function at offset 0, position independent, integer registers only (the
 * frame restores the FPU state it never touches). On x86_64 it is built a
 * second time for 32-bit (ia32) holders (-m32): long and pointers are then
 * 32 bits wide while the control block keeps its 64-bit fields.
 */
#include "stub-abi.h"
#include STUB_ARCH_H /* lib/arch/<arch>-stub.h, chosen by the build */

#ifndef RV_STUB_ENTRY_ATTR
#define RV_STUB_ENTRY_ATTR
#endif

/* The library writes the control block with the 64-bit layout; a 32-bit
 * build (4-byte alignment of 64-bit fields) must read the same offsets. */
_Static_assert(sizeof(struct rv_op) == 72 && __builtin_offsetof(struct rv_op, args) == 16,
	       "rv_op layout");
_Static_assert(__builtin_offsetof(struct rv_stub_ctl, orig_mask) == 32 &&
		   __builtin_offsetof(struct rv_stub_ctl, sigreturn_sp) == 152 &&
		   __builtin_offsetof(struct rv_stub_ctl, mask_addr) == 160 &&
		   __builtin_offsetof(struct rv_stub_ctl, ops) == 168,
	       "rv_stub_ctl layout");

static inline __attribute__((always_inline)) long run_op(struct rv_op *op)
{
	const long a[6] = {(long)op->args[0], (long)op->args[1], (long)op->args[2],
			   (long)op->args[3], (long)op->args[4], (long)op->args[5]};
	long r;

	switch (op->kind) {
	case RV_OP_SYSCALL:
		return rv_stub_syscall(op->nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	case RV_OP_ITOA: {
		char *p = (char *)a[0], tmp[24];
		unsigned long v = (unsigned long)a[1];
		int n = 0, len;

		do {
			tmp[n++] = (char)('0' + v % 10);
			v /= 10;
		} while (v && n < 24);
		len = n;
		while (n > 0)
			*p++ = tmp[--n];
		*p = 0;
		return len;
	}
	case RV_OP_DUP_OVER:
		r = rv_stub_syscall(RV_STUB_NR_dup3, a[0], a[1], a[2], 0, 0, 0);
		if (r == a[1] || r == -9 /* EBADF */ || r == -22 /* EINVAL */)
			return r;
		r = rv_stub_syscall(RV_STUB_NR_close, a[1], 0, 0, 0, 0, 0);
		if (r < 0 && r != -4 /* EINTR: closed all the same */)
			return r;
		r = rv_stub_syscall(RV_STUB_NR_fcntl, a[0], a[3], a[1], 0, 0, 0);
		if (r >= 0 && r != a[1]) {
			/* Only the caller itself can race for the number. */
			rv_stub_syscall(RV_STUB_NR_close, r, 0, 0, 0, 0, 0);
			return -16; /* EBUSY */
		}
		return r;
	case RV_OP_RAISE_NOFILE: {
		uint64_t *old = (uint64_t *)a[1], lim[2];

		r = rv_stub_syscall(RV_STUB_NR_prlimit64, 0, 7 /* RLIMIT_NOFILE */, 0, (long)old, 0,
				    0);
		if (r < 0)
			return r;
		if (old[0] >= old[1] || old[1] - old[0] < (uint64_t)a[0])
			return -24; /* EMFILE */
		lim[0] = old[0] + (uint64_t)a[0];
		lim[1] = old[1];
		return rv_stub_syscall(RV_STUB_NR_prlimit64, 0, 7, (long)lim, 0, 0, 0);
	}
	case RV_OP_RESTORE_NOFILE:
		return rv_stub_syscall(RV_STUB_NR_prlimit64, 0, 7, a[1], 0, 0, 0);
	case RV_OP_MAP_OVER:
		r = rv_stub_syscall(RV_STUB_NR_mmap, a[1], a[2], a[3], a[4], a[0], 0);
		if (r < 0 && r > -4096)
			return r;
		/* Unsigned: a 32-bit holder's addresses above 2 GiB. */
		return (unsigned long)r == (unsigned long)a[1] ? 0 : -14; /* EFAULT: elsewhere */
	}
	return -38; /* ENOSYS */
}

__attribute__((noreturn, used, section(".text"))) RV_STUB_ENTRY_ATTR void
rv_stub_entry(unsigned long arg)
{
	struct rv_stub_ctl *c = (struct rv_stub_ctl *)(arg & ~(unsigned long)RV_STUB_ARG_FLAGS);
	int restore = arg & RV_STUB_ARG_RESTORE;
	int failed = -1;

	for (uint32_t i = 0; i < c->nops; i++) {
		struct rv_op *op = &c->ops[i];
		struct rv_op *ref = op->ref >= 0 && (uint32_t)op->ref < i ? &c->ops[op->ref] : 0;

		if ((failed >= 0 && !(op->flags & RV_OPF_CLEANUP)) ||
		    ((op->flags & RV_OPF_IF_REF_OK) &&
		     (!ref || ref->state != RV_OP_RAN || ref->res < 0))) {
			op->state = RV_OP_SKIPPED;
		} else {
			if (ref && op->subst >= 0 && op->subst < 6)
				op->args[op->subst] += ref->res;
			op->res = run_op(op);
			op->state = RV_OP_RAN;
			if (op->res < 0 && (op->flags & RV_OPF_REQUIRED) && failed < 0)
				failed = (int)i;
		}
		c->ran = i + 1;
	}
	c->failed = failed;
	c->done = 1;
	if (c->stop_mode) {
		int sig = 0;
		/* Where the program's first call saved it. */
		uint64_t orig = *(volatile uint64_t *)(unsigned long)c->mask_addr;

		c->orig_mask = orig;
		/* nstop_sigs <= 24: the library's own (place.c asserts it). */
		for (int i = 0; i < c->nstop_sigs && !sig; i++) {
			int s = c->stop_sigs[i];
			uint64_t bit = 1ull << (s - 1);
			/* 32 bytes for struct sigaction, 20 for a 32-bit one */
			long act[8];

			if ((orig & bit) ||
			    rv_stub_syscall(RV_STUB_NR_rt_sigaction, s, 0, (long)act, 8, 0, 0) < 0)
				continue;
			if (act[0] == 1 /* SIG_IGN */ ||
			    (act[0] == 0 && (c->default_ignored & bit)))
				sig = s;
		}
		/* The thread's own mask, which does not block the stop signal
		 * (a signal of its own held back meanwhile then stops it
		 * first; the tracer hands it on at that stop), or only the
		 * stop signal unblocked. Before stop_sig is written: a tracer
		 * that reads it knows the mask is set. */
		if (restore || sig) {
			uint64_t set = restore ? orig : ~(1ull << (sig - 1));

			rv_stub_syscall(RV_STUB_NR_rt_sigprocmask, 2 /* SIG_SETMASK */, (long)&set,
					0, 8, 0, 0);
		}
		/* Seen by the tracer while we run (rv_stub_ctl): once, after
		 * the choice. */
		*(volatile int32_t *)&c->stop_sig = sig;
		if (sig) {
			long pid = rv_stub_syscall(RV_STUB_NR_getpid, 0, 0, 0, 0, 0, 0);
			long tid = rv_stub_syscall(RV_STUB_NR_gettid, 0, 0, 0, 0, 0, 0);

			rv_stub_syscall(RV_STUB_NR_tgkill, pid, tid, sig, 0, 0, 0);
		} else {
			/* No signal to stop with: the tracer interrupts this sleep
			 * once it sees `done`; alone, it goes home after a second. */
			long ns = 10000000, ts[2];

			/* Built at run time: clang would load {0, ns} from a
			 * constant in .rodata, which the stub cannot have. */
			__asm__("" : "+r"(ns));
			ts[0] = 0;
			ts[1] = ns;

			for (int i = 0; i < 100; i++)
				rv_stub_syscall(RV_STUB_NR_nanosleep, (long)ts, 0, 0, 0, 0, 0);
		}
	}
	rv_stub_sigreturn(c->sigreturn_sp);
}
