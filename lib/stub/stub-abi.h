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
	/* After the program: > 0, tgkill(getpid(), gettid(), stop_sig), a
	 * signal the holder neither catches nor blocks, whose delivery stops
	 * the thread for the tracer (and is discarded when nobody traces it
	 * any more); < 0, the same with signal 0, as a marker the tracer
	 * catches at its syscall entry (PTRACE_SYSCALL); 0, nothing. The ids
	 * are asked for, not given: the holder may be in another pid
	 * namespace, where our pids name other processes. */
	int32_t stop_sig;
	uint64_t sigreturn_sp; /* the stack pointer rt_sigreturn expects */
	struct rv_op ops[];
};

#endif
