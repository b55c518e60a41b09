/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The architecture interface: the only knowledge of registers, of the
 * syscall instruction and of the signal frame. One lib/arch/<arch>.c
 * implements it (and <arch>-stub.h for the stub); the build picks it.
 */
#ifndef REVOKE_ARCH_H
#define REVOKE_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Large enough for any architecture's general registers (x86_64: 216 bytes). */
struct rv_regs {
	uint64_t raw[64];
};

/* Read/write the general registers of a ptrace-stopped thread. -errno. */
int rv_arch_get_regs(pid_t tid, struct rv_regs *r);
int rv_arch_set_regs(pid_t tid, const struct rv_regs *r);

/* The syscall number the thread is stopped in, or -1 when not in a syscall. */
long rv_arch_syscall_nr(const struct rv_regs *r);
/* Whether the thread was interrupted inside a syscall that the kernel would
 * issue again when it leaves its stop (a restart code in the result). */
bool rv_arch_syscall_restarts(const struct rv_regs *r);
/* Argument I (0-5) of the syscall the thread is in; -1 for one the
 * registers no longer hold (rv_arch_arg0_lost). */
long rv_arch_syscall_arg(const struct rv_regs *r, unsigned int i);
/* Whether a call that returned has lost its first argument (aarch64: x0 is
 * the result, orig_x0 is in no regset): the engine then reads a blocked
 * thread's /proc/.../syscall before it interrupts it. */
extern const bool rv_arch_arg0_lost;
uint64_t rv_arch_ip(const struct rv_regs *r);
uint64_t rv_arch_sp(const struct rv_regs *r);
void rv_arch_set_ip(struct rv_regs *r, uint64_t ip);

/* Whether the thread runs the native ABI (false for x86_64's 32-bit tasks). */
bool rv_arch_is_native(const struct rv_regs *r);

/* Set up R to run syscall NR with ARGS at the instruction at IP, with the
 * kernel's restart logic off for it. */
void rv_arch_prepare_syscall(struct rv_regs *r, uint64_t ip, long nr, const long args[6]);
long rv_arch_syscall_result(const struct rv_regs *r);
/* Make the thread's syscall return RESULT instead of restarting (an
 * interrupted epoll_wait that the engine completes). */
void rv_arch_set_syscall_result(struct rv_regs *r, long result);
/* Mark R as not inside a syscall, so that the kernel's restart logic leaves
 * it alone when the thread goes on from a stop. */
void rv_arch_clear_syscall(struct rv_regs *r);

/* The syscall instruction, and where it is relative to the ip of a thread
 * stopped inside a syscall (x86_64: 0f 05 at ip - 2). */
extern const uint8_t rv_arch_syscall_insn[];
extern const size_t rv_arch_syscall_insn_len;
uint64_t rv_arch_syscall_site(const struct rv_regs *r);

/* Bytes below the stack pointer the ABI reserves (x86_64 red zone: 128). */
extern const size_t rv_arch_red_zone;

/* ---- the stub's way home (lib/tracee/infect.c) -------------------------- */

/* The thread's FPU/vector state as the signal frame wants it; *LEN in: the
 * buffer's size, out: the state's size. -errno. */
int rv_arch_get_fpu(pid_t tid, void *buf, size_t *len);
/* The largest state rv_arch_get_fpu may return. */
#define RV_ARCH_FPU_MAX 16384

/*
 * A signal frame that rt_sigreturn turns back into SAVED (registers, FPU
 * state FPU, signal mask MASK), built in BUF for the stack below TOP (the
 * holder's stack pointer minus its red zone): returns the frame's size
 * (BUF must hold rv_arch_frame_size()), *RET_LOW the lowest address it uses,
 * *RET_SP the stack pointer at the rt_sigreturn, *RET_ALTSTACK where the
 * sigaltstack settings go (rt_sigreturn restores them too: the stub reads
 * them into place first). A thread stopped inside a syscall is put back to
 * issue it again, as the kernel restarts one; IP, if not 0, replaces the
 * saved ip (an rseq abort). -errno.
 */
size_t rv_arch_frame_size(size_t fpu_len);
int rv_arch_build_frame(const struct rv_regs *saved, uint64_t ip, uint64_t mask, const void *fpu,
			size_t fpu_len, uint64_t top, void *buf, uint64_t *ret_low,
			uint64_t *ret_sp, uint64_t *ret_altstack);

/* Where the frame rv_arch_build_frame() made for SAVED keeps the signal mask
 * (8 bytes, as rt_sigprocmask writes a mask), given ALTSTACK, where it keeps
 * the sigaltstack settings: the stub's first call saves the thread's own
 * mask there. */
uint64_t rv_arch_frame_mask(const struct rv_regs *saved, uint64_t altstack);

/* Registers that enter the stub at ENTRY with stack SP and argument ARG,
 * the restart logic off. */
void rv_arch_enter_stub(struct rv_regs *r, uint64_t entry, uint64_t sp, uint64_t arg);

/*
 * Where the kernel prepares a restart before the stops we use (aarch64), a
 * signal with a handler that arrives while the thread runs the stub finds
 * the call already turned into a restart: without more, the handler runs
 * and the call starts again where the kernel would have failed it with
 * EINTR. There the stub enters its rt_sigreturn with the frame's x0-x7 (the
 * call's arguments) and the tracer, at that syscall-entry stop, puts the
 * original mask back and turns the rt_sigreturn into the thread's own call
 * (rv_arch_reenter_syscall): the call starts afresh with the signal pending
 * and the kernel decides EINTR or restart as it would have. After a
 * syscall-entry stop at the stub's rt_sigreturn, with the thread's own mask
 * already back: SAVED is the thread's registers when it stopped (a call
 * about to be issued again). -errno; see the file for what the thread does
 * when this fails half way.
 */
extern const bool rv_arch_restart_prepared;
int rv_arch_reenter_syscall(pid_t tid, const struct rv_regs *saved);

/* ---- a second ABI (x86_64's 32-bit tasks) -------------------------------- */

#ifdef RV_ARCH_COMPAT
/*
 * The build defines RV_ARCH_COMPAT where threads of a second ABI can be
 * injected too. The register functions above then take the ABI from the
 * registers (the argument registers, the frame, the stub's entry); a compat
 * thread's rv_arch_syscall_nr is the native number of its call, so callers
 * compare with <sys/syscall.h> numbers alone.
 */
bool rv_arch_is_compat(const struct rv_regs *r);
/* The compat number of native syscall NR when the compat call takes the same
 * arguments, else -ENOSYS. */
long rv_arch_compat_nr(long nr);
/* The stub built for the compat ABI, or NULL (the build had no compiler
 * for it). */
const uint8_t *rv_arch_compat_stub(size_t *ret_len);
#endif

#endif
