/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the library hands the cut's stub (stub.c) inside a holder, and what the
 * stub writes back: a small program of syscalls. Shared by the freestanding
 * stub and the library, so it uses fixed-size types only.
 *
 * The program runs in one thread of the holder, on memory the library placed
 * below the thread's red zone, and ends with rt_sigreturn over a signal frame
 * that holds the thread's own registers, FPU state and signal mask: whatever
 * happens to the library meanwhile, the thread finishes the program and goes
 * home by itself.
 */
#ifndef REVOKE_STUB_ABI_H
#define REVOKE_STUB_ABI_H

#include <stdint.h>

#define RV_STUB_MAGIC 0x627574736b7672ull /* "rvkstub" */

enum {
	/* res = syscall(nr, args...) */
	RV_OP_SYSCALL = 0,
	/* Writes the decimal digits of args[1] and a NUL at (char *)args[0];
	 * res = the number of digits. */
	RV_OP_ITOA,
	/* Puts the dead descriptor args[0] over descriptor args[1]:
	 * dup3(args[0], args[1], args[2]); if that is refused (a seccomp
	 * filter returning an errno), close(args[1]) and
	 * fcntl(args[0], args[3], args[1]) (F_DUPFD or F_DUPFD_CLOEXEC), which
	 * takes the number just freed: every thread sharing the table is
	 * stopped. res = args[1], or -errno. */
	RV_OP_DUP_OVER,
	/* mmap(args[1], args[2], args[3], args[4], args[0], 0) must return
	 * args[1] (MAP_FIXED over a revoked range); res = 0 or -errno. */
	RV_OP_MAP_OVER,
	/* Raises the soft RLIMIT_NOFILE by args[0] (never past the hard
	 * limit), saving the old limits (16 bytes) at (void *)args[1]: room
	 * for the program's own two descriptors in a full table. res = 0, or
	 * -EMFILE when the hard limit leaves no room. */
	RV_OP_RAISE_NOFILE,
	/* Puts back the limits saved at (void *)args[1]. */
	RV_OP_RESTORE_NOFILE,
};

enum {
	/* A failure (res < 0) ends the program: the ops after it are skipped,
	 * except RV_OPF_CLEANUP ones. */
	RV_OPF_REQUIRED = 1u << 0,
	/* Runs also after a failure ended the program. */
	RV_OPF_CLEANUP = 1u << 1,
	/* Runs only when ops[ref] ran and succeeded (res >= 0). */
	RV_OPF_IF_REF_OK = 1u << 2,
	/* Its failure is no failure of the program (for the library's
	 * accounting; the stub ignores it). */
	RV_OPF_OPTIONAL = 1u << 3,
};

enum { RV_OP_NOT_RUN = 0, RV_OP_RAN, RV_OP_SKIPPED };

struct rv_op {
	int32_t kind; /* RV_OP_* */
	int32_t nr;   /* RV_OP_SYSCALL: the syscall number */
	uint16_t flags;
	int16_t ref;   /* an earlier op: its result is substituted or tested; -1 none */
	int16_t subst; /* 0-5: args[subst] += ops[ref].res before running; -1 none */
	int16_t state; /* out: RV_OP_NOT_RUN, RV_OP_RAN, RV_OP_SKIPPED */
	int64_t args[6];
	int64_t res; /* out */
};

struct rv_stub_ctl {
	uint64_t magic;
	uint32_t nops;
	int32_t failed; /* out: the op that ended the program early, or -1 */
	uint32_t ran;	/* out: ops run or skipped so far */
	uint32_t done;	/* out: 1 once the program is over */
	/*
	 * After the program the stub stops for the tracer. It picks the first
	 * of stop_sigs[] that the thread's own mask (orig_mask) does not block
	 * and whose handler is SIG_IGN, or SIG_DFL where default_ignored has
	 * its bit (1 << (sig - 1)): a copy the kernel delivers once nobody
	 * traces the thread is then discarded. It writes its choice to
	 * stop_sig, unblocks it and sends it to itself with tgkill(getpid(),
	 * gettid(), sig) (ids asked for, not given: the holder may be in
	 * another pid namespace); its delivery is the stop. With none to pick
	 * (stop_sig 0), it sleeps in steps of 10 ms, up to a second, for the
	 * tracer to see `done` and interrupt it. stop_mode 0 skips all that.
	 * The tracer sets stop_sig to -1 first: `done` is written before the
	 * choice, and a tracer that took done with stop_sig still 0 for "none"
	 * interrupted the stub in the middle of its rt_sigaction calls (on
	 * aarch64 that lost the thread's way back into its call, run.c).
	 */
	int32_t stop_mode;
	int32_t stop_sig;   /* in: -1; out: the choice, 0 for none */
	uint64_t orig_mask; /* out: the thread's own mask, read from mask_addr */
	uint64_t default_ignored;
	int32_t stop_sigs[24];
	int32_t nstop_sigs;
	int32_t pad;
	uint64_t sigreturn_sp; /* the stack pointer rt_sigreturn expects */
	/*
	 * The frame's mask word (stop_mode 1), where the program's first op
	 * (an rt_sigprocmask that blocks every signal) saved the thread's own
	 * mask: the tracer does not read it with ptrace. With
	 * RV_STUB_ARG_RESTORE in the stub's argument, the stub sets that mask
	 * again itself once the program is over, before it stops: the tracer
	 * then only puts the registers back.
	 */
	uint64_t mask_addr;
	struct rv_op ops[];
};

/* The stub's one argument is the control block's address (64-byte aligned),
 * with flags in its low bits: decided as the program starts, after the block
 * was written. */
#define RV_STUB_ARG_RESTORE 1u
#define RV_STUB_ARG_FLAGS   63u

#endif
