/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * aarch64: registers, svc #0 and the rt_sigreturn frame.
 *
 * What differs from x86_64, from arch/arm64/kernel/{signal,ptrace}.c of 6.1:
 * - The general registers come through PTRACE_GETREGSET NT_PRSTATUS, the
 *   syscall number (pt_regs->syscallno) through NT_ARM_SYSTEM_CALL. orig_x0,
 *   the first argument the kernel keeps for a restart, is in no regset.
 * - do_signal() prepares a restart *before* get_signal(), where every stop
 *   we use happens (PTRACE_INTERRUPT's event stop, a group stop, a signal
 *   delivery stop): a thread interrupted in a syscall with -ERESTART* is
 *   seen with pc already back on its svc, x0 = orig_x0 and syscallno = -1
 *   (forget_syscall). Its saved registers, put back as they are (by us or by
 *   rt_sigreturn), issue the call again. One that ended otherwise (EINTR,
 *   a result) is seen just after its svc with the result in x0; its first
 *   argument is lost. So "in a syscall" is read off the instruction around
 *   pc (an svc at pc: it is about to issue it again; just before pc: it has
 *   returned) with the number from x8, which the kernel never changes.
 *   A thread about to issue an svc it never began looks the same as one
 *   going to issue it again, and is the same: the call runs when it goes on.
 * - No red zone (AAPCS64); sp must stay 16-byte aligned (SCTLR_EL1.SA0).
 * - rt_sigreturn takes struct rt_sigframe (siginfo, then ucontext) at sp;
 *   the FP/SIMD state is a record in uc_mcontext.__reserved.
 */
#include <asm/ptrace.h>
#include <asm/sigcontext.h>
#include <elf.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "arch.h"
#include "aarch64-stub.h"
#include "tracee/tracee.h"
#include "internal.h"
#include "util.h"

/* The registers as data: where each one lives in rv_regs.raw[]. 0-30 are
 * x0-x30, then sp, pc, pstate (struct user_pt_regs, NT_PRSTATUS); then what
 * this file adds: the syscall number (NT_ARM_SYSTEM_CALL) and what the
 * instructions around pc say. */
enum {
	A64_X0 = 0,
	A64_X8 = 8,
	A64_LR = 30,
	A64_SP = 31,
	A64_PC = 32,
	A64_PSTATE = 33,
	A64_NGREGS = 34,
	A64_SYSCALLNO = 40, /* pt_regs->syscallno, sign-extended: -1 outside a syscall */
	A64_SVC = 41,	    /* A64_AT_SVC, A64_AFTER_SVC */
};
enum {
	A64_AT_SVC = 1u << 0,	 /* the instruction at pc is svc #0 */
	A64_AFTER_SVC = 1u << 1, /* the one before pc is */
};
/* The system call convention: number in x8, arguments in x0-x5, result in x0. */
static const unsigned int a64_syscall_args[6] = {0, 1, 2, 3, 4, 5};

_Static_assert(sizeof(struct user_pt_regs) == A64_NGREGS * 8, "user_pt_regs layout");
_Static_assert(A64_SVC < sizeof(((struct rv_regs *)0)->raw) / 8, "rv_regs too small");

#define A64_SVC0   0xd4000001u	 /* svc #0 */
#define A64_PSR_SS 0x00200000ull /* PSR_SS_BIT: a pending software step */

/* Restart codes (include/linux/errno.h, not exported to user space). */
#define ERESTARTSYS	      512
#define ERESTARTNOINTR	      513
#define ERESTARTNOHAND	      514
#define ERESTART_RESTARTBLOCK 516

const uint8_t rv_arch_syscall_insn[] = {0x01, 0x00, 0x00, 0xd4};
const size_t rv_arch_syscall_insn_len = sizeof(rv_arch_syscall_insn);
const size_t rv_arch_red_zone = 0;
const bool rv_arch_arg0_lost = true;

static bool is_restart(int64_t ret)
{
	return ret == -ERESTARTSYS || ret == -ERESTARTNOINTR || ret == -ERESTARTNOHAND ||
	       ret == -ERESTART_RESTARTBLOCK;
}

static bool is_svc_at(pid_t tid, uint64_t addr)
{
	long word;

	/* PEEKTEXT reads through FOLL_FORCE: execute-only text too. */
	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, tid, (void *)(addr & ~7ull), NULL);
	if (errno)
		return false;
	return (uint32_t)((uint64_t)word >> ((addr & 4) ? 32 : 0)) == A64_SVC0;
}

int rv_arch_get_regs(pid_t tid, struct rv_regs *r)
{
	struct rv_regs tmp = {};
	struct iovec iov = {tmp.raw, A64_NGREGS * 8};
	int32_t nr = -1;
	struct iovec niov = {&nr, sizeof(nr)};
	uint64_t pc;

	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &iov) < 0)
		return negative_errno();
	if (iov.iov_len != A64_NGREGS * 8)
		return -EOPNOTSUPP; /* a compat (AArch32) task: a shorter set */
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_ARM_SYSTEM_CALL, &niov) < 0)
		return negative_errno();
	tmp.raw[A64_SYSCALLNO] = (uint64_t)(int64_t)nr;
	pc = tmp.raw[A64_PC];
	if (nr < 0 && !(pc & 3)) {
		if (is_svc_at(tid, pc))
			tmp.raw[A64_SVC] |= A64_AT_SVC;
		else if (pc >= 4 && is_svc_at(tid, pc - 4))
			tmp.raw[A64_SVC] |= A64_AFTER_SVC;
	}
	*r = tmp;
	return 0;
}

int rv_arch_set_regs(pid_t tid, const struct rv_regs *r)
{
	struct iovec iov = {(void *)r->raw, A64_NGREGS * 8};
	int32_t nr = (int32_t)r->raw[A64_SYSCALLNO];
	struct iovec niov = {&nr, sizeof(nr)};

	if (ptrace(PTRACE_SETREGSET, tid, (void *)NT_PRSTATUS, &iov) < 0)
		return negative_errno();
	if (ptrace(PTRACE_SETREGSET, tid, (void *)NT_ARM_SYSTEM_CALL, &niov) < 0)
		return negative_errno();
	return 0;
}

long rv_arch_syscall_nr(const struct rv_regs *r)
{
	int64_t nr = (int64_t)r->raw[A64_SYSCALLNO];

	if (nr >= 0)
		return (long)nr; /* a syscall stop */
	if (r->raw[A64_SVC])
		return (long)r->raw[A64_X8];
	return -1;
}

bool rv_arch_syscall_restarts(const struct rv_regs *r)
{
	if ((int64_t)r->raw[A64_SYSCALLNO] >= 0)
		return is_restart((int64_t)r->raw[A64_X0]);
	return r->raw[A64_SVC] & A64_AT_SVC;
}

long rv_arch_syscall_arg(const struct rv_regs *r, unsigned int i)
{
	if (i >= 6)
		return 0;
	/* Returned: x0 holds the result, the argument is gone (orig_x0). */
	if (i == 0 && (r->raw[A64_SVC] & A64_AFTER_SVC))
		return -1;
	return (long)r->raw[a64_syscall_args[i]];
}

uint64_t rv_arch_ip(const struct rv_regs *r)
{
	return r->raw[A64_PC];
}
uint64_t rv_arch_sp(const struct rv_regs *r)
{
	return r->raw[A64_SP];
}
void rv_arch_set_ip(struct rv_regs *r, uint64_t ip)
{
	r->raw[A64_PC] = ip;
	r->raw[A64_SVC] = 0;
}

bool rv_arch_is_native(const struct rv_regs *r)
{
	return !(r->raw[A64_PSTATE] & PSR_MODE32_BIT);
}

void rv_arch_prepare_syscall(struct rv_regs *r, uint64_t ip, long nr, const long args[6])
{
	r->raw[A64_PC] = ip;
	r->raw[A64_X8] = (uint64_t)nr;
	for (unsigned int i = 0; i < 6; i++)
		r->raw[a64_syscall_args[i]] = (uint64_t)args[i];
	r->raw[A64_SYSCALLNO] = (uint64_t)-1;
	r->raw[A64_SVC] = A64_AT_SVC;
}

void rv_arch_clear_syscall(struct rv_regs *r)
{
	r->raw[A64_SYSCALLNO] = (uint64_t)-1;
}

long rv_arch_syscall_result(const struct rv_regs *r)
{
	if (r->raw[A64_SVC] & A64_AT_SVC)
		return -ERESTARTSYS; /* to be issued again: no result yet */
	return (long)r->raw[A64_X0];
}

void rv_arch_set_syscall_result(struct rv_regs *r, long result)
{
	/* A call the kernel put back on its svc: step over it. */
	if (r->raw[A64_SVC] & A64_AT_SVC)
		r->raw[A64_PC] += 4;
	r->raw[A64_X0] = (uint64_t)result;
	r->raw[A64_SYSCALLNO] = (uint64_t)-1;
	r->raw[A64_SVC] = A64_AFTER_SVC;
}

uint64_t rv_arch_syscall_site(const struct rv_regs *r)
{
	if (r->raw[A64_SVC] & A64_AT_SVC)
		return r->raw[A64_PC];
	return r->raw[A64_PC] - rv_arch_syscall_insn_len;
}

const bool rv_arch_restart_prepared = true;

/*
 * At the syscall-entry stop of the stub's rt_sigreturn, entered with the
 * frame's x0-x7 (orig_x0, and the x7 that the kernel puts back after the
 * stop, are the thread's own): first the syscall number, then the
 * registers. The kernel then runs the thread's call with its arguments and
 * returns after the thread's own svc; a restart goes back to that svc with
 * x0 = orig_x0, as the first time. In between, if we die, the thread runs
 * its call with the stub's pc and sp and the stub's code after its svc takes
 * it home with the result (aarch64-stub.h); before the first, the
 * rt_sigreturn goes on as if we had not stopped it. The other order would
 * leave an rt_sigreturn to run on the thread's own stack (SIGSEGV).
 */
int rv_arch_reenter_syscall(pid_t tid, const struct rv_regs *saved)
{
	struct rv_regs regs = *saved;
	int32_t nr = (int32_t)saved->raw[A64_X8];
	struct iovec niov = {&nr, sizeof(nr)};
	struct iovec iov = {regs.raw, A64_NGREGS * 8};

	if (!(saved->raw[A64_SVC] & A64_AT_SVC) || (int64_t)saved->raw[A64_SYSCALLNO] >= 0)
		return -EINVAL;
	regs.raw[A64_PC] += 4;
	if (ptrace(PTRACE_SETREGSET, tid, (void *)NT_ARM_SYSTEM_CALL, &niov) < 0)
		return negative_errno();
	rv_fault("reenter-switched");
	if (ptrace(PTRACE_SETREGSET, tid, (void *)NT_PRSTATUS, &iov) < 0)
		return negative_errno();
	return 0;
}

void rv_arch_enter_stub(struct rv_regs *r, uint64_t entry, uint64_t sp, uint64_t arg)
{
	r->raw[A64_PC] = entry;
	/* The callers leave room for a return address as on x86_64; the stack
	 * pointer must be 16-byte aligned here. */
	r->raw[A64_SP] = sp & ~15ull;
	r->raw[A64_X0] = arg;
	r->raw[A64_LR] = 0;
	/* BTYPE 0: the stub's first instruction is no branch target, so a
	 * BTI-guarded page (the vDSO of a kernel with CONFIG_ARM64_BTI_KERNEL
	 * on a CPU with BTI) needs no landing pad there; and no software step
	 * pending from a debugger's PSTATE.SS. */
	r->raw[A64_PSTATE] &= ~((uint64_t)PSR_BTYPE_MASK | A64_PSR_SS);
	r->raw[A64_SYSCALLNO] = (uint64_t)-1;
	r->raw[A64_SVC] = 0;
}

/* ---- the signal frame ------------------------------------------------- */

/* The kernel's layouts (arch/arm64/include/uapi/asm/ucontext.h, sigcontext.h
 * and struct rt_sigframe of arch/arm64/kernel/signal.c), written out:
 * glibc's ucontext_t has a 128-byte sigset_t where the kernel's has 8 bytes
 * and padding. */
struct k_sigcontext {
	uint64_t fault_address;
	uint64_t regs[31];
	uint64_t sp, pc, pstate;
	uint8_t reserved[4096] __attribute__((aligned(16)));
};
struct k_ucontext {
	unsigned long uc_flags;
	unsigned long uc_link;
	stack_t uc_stack;
	uint64_t uc_sigmask;
	uint8_t unused[1024 / 8 - 8];
	struct k_sigcontext uc_mcontext;
};
struct k_rt_sigframe {
	siginfo_t info;
	struct k_ucontext uc;
};
_Static_assert(offsetof(struct k_sigcontext, reserved) == 288, "sigcontext layout");
_Static_assert(offsetof(struct k_ucontext, uc_mcontext) == 176, "ucontext layout");
_Static_assert(sizeof(struct k_rt_sigframe) == 4688, "rt_sigframe layout");
_Static_assert(sizeof(struct fpsimd_context) == 528, "fpsimd_context layout");
_Static_assert(offsetof(struct k_rt_sigframe, uc.uc_mcontext.regs) == RV_A64_FRAME_X0 &&
		   offsetof(struct k_rt_sigframe, uc.uc_mcontext.pc) == RV_A64_FRAME_PC,
	       "the stub's rt_sigreturn (aarch64-stub.h) reads x0-x7 and pc there");
_Static_assert(sizeof(struct user_fpsimd_state) == 528, "user_fpsimd_state layout");

int rv_arch_get_fpu(pid_t tid, void *buf, size_t *len)
{
	struct iovec iov = {buf, sizeof(struct user_fpsimd_state)};

	/* The FP/SIMD view. A thread with live SVE state (Z registers wider
	 * than 128 bits) loses their upper bits as it would across a syscall:
	 * rt_sigreturn with an FPSIMD record only clears TIF_SVE. */
	if (*len < sizeof(struct user_fpsimd_state))
		return -ENOBUFS;
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRFPREG, &iov) < 0)
		return negative_errno();
	if (iov.iov_len != sizeof(struct user_fpsimd_state))
		return -EIO;
	*len = iov.iov_len;
	return 0;
}

size_t rv_arch_frame_size(size_t fpu_len)
{
	(void)fpu_len; /* inside the frame's __reserved */
	return sizeof(struct k_rt_sigframe) + 16;
}

int rv_arch_build_frame(const struct rv_regs *saved, uint64_t ip, uint64_t mask, const void *fpu,
			size_t fpu_len, uint64_t top, void *buf, uint64_t *ret_low,
			uint64_t *ret_sp, uint64_t *ret_altstack)
{
	_cleanup_free_ struct k_rt_sigframe *f = NULL;
	struct user_fpsimd_state st;
	struct fpsimd_context fc = {.head = {.magic = FPSIMD_MAGIC, .size = sizeof(fc)}};
	uint64_t frame_addr;

	if (fpu_len != sizeof(st))
		return -EINVAL;
	/* At a syscall exit stop a restart is still to be prepared, and
	 * orig_x0, which it needs, cannot be read: not at the stops we use. */
	if ((int64_t)saved->raw[A64_SYSCALLNO] >= 0 && is_restart((int64_t)saved->raw[A64_X0]))
		return -EOPNOTSUPP;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	frame_addr = (top - sizeof(*f)) & ~15ull;

	f->uc.uc_sigmask = mask;
	for (unsigned int i = 0; i < 31; i++)
		f->uc.uc_mcontext.regs[i] = saved->raw[i];
	f->uc.uc_mcontext.sp = saved->raw[A64_SP];
	f->uc.uc_mcontext.pc = ip ? ip : saved->raw[A64_PC];
	f->uc.uc_mcontext.pstate = saved->raw[A64_PSTATE];
	/* __reserved: the FP/SIMD record, then the terminator (zeros).
	 * parse_user_sigframe() requires the first; no ESR record (no fault),
	 * no SVE/ZA record (see rv_arch_get_fpu). */
	memcpy(&st, fpu, sizeof(st));
	fc.fpsr = st.fpsr;
	fc.fpcr = st.fpcr;
	memcpy(fc.vregs, st.vregs, sizeof(fc.vregs));
	memcpy(f->uc.uc_mcontext.reserved, &fc, sizeof(fc));

	memset(buf, 0, (size_t)(top - frame_addr));
	memcpy(buf, f, sizeof(*f));
	*ret_low = frame_addr;
	*ret_sp = frame_addr;
	*ret_altstack = frame_addr + offsetof(struct k_rt_sigframe, uc.uc_stack);
	return (int)(top - frame_addr);
}

uint64_t rv_arch_frame_mask(const struct rv_regs *saved, uint64_t altstack)
{
	(void)saved;
	return altstack + offsetof(struct k_ucontext, uc_sigmask) -
	       offsetof(struct k_ucontext, uc_stack);
}
