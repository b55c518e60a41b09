/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* x86_64: registers, the syscall instruction and the rt_sigreturn frame. */
#include <asm/unistd_64.h>
#include <cpuid.h>
#include <elf.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>

#include "arch.h"
#include "internal.h"
#include "util.h"
#include "x86_64-ia32.h"

#define NATIVE_NR(native, ia32, callable) __NR_##native,
const long rv_ia32_native_nrs[] = {RV_IA32_CALLS(NATIVE_NR)};

_Static_assert(sizeof(struct user_regs_struct) <= sizeof(struct rv_regs), "rv_regs too small");

/* The kernel's __USER_CS: a 64-bit code segment. A compat task (or a 64-bit
 * one that far-jumped into 32-bit code) runs with __USER32_CS (0x23) and
 * would read our syscall numbers from the ia32 table. */
#define X86_64_USER_CS 0x33

/* Restart codes a syscall leaves in rax when a stop interrupted it
 * (include/linux/errno.h, not exported to user space). */
#define ERESTARTSYS	      512
#define ERESTARTNOINTR	      513
#define ERESTARTNOHAND	      514
#define ERESTART_RESTARTBLOCK 516

const uint8_t rv_arch_syscall_insn[] = {0x0f, 0x05};
const size_t rv_arch_syscall_insn_len = sizeof(rv_arch_syscall_insn);
const size_t rv_arch_red_zone = 128;
const bool rv_arch_arg0_lost = false; /* orig_rax and rdi survive */
/* x86 decides a restart after get_signal(), from orig_rax and rax, which
 * the registers we put back carry: nothing to re-enter. */
const bool rv_arch_restart_prepared = false;

static struct user_regs_struct *U(struct rv_regs *r)
{
	return (struct user_regs_struct *)r->raw;
}
static const struct user_regs_struct *CU(const struct rv_regs *r)
{
	return (const struct user_regs_struct *)r->raw;
}

/* The register functions take the ABI from the registers: a compat
 * thread's syscall arguments are in ebx, ecx, edx, esi, edi, ebp, its
 * number in the ia32 table. */
bool rv_arch_is_compat(const struct rv_regs *r)
{
	return CU(r)->cs == X86_64_USER32_CS;
}

int rv_arch_get_regs(pid_t tid, struct rv_regs *r)
{
	struct rv_regs tmp = {};

	/* PTRACE_GETREGS always gives the 64-bit view, also of compat tasks,
	 * so rv_arch_is_native() can look at cs. */
	if (ptrace(PTRACE_GETREGS, tid, NULL, U(&tmp)) < 0)
		return negative_errno();
	*r = tmp;
	return 0;
}

int rv_arch_set_regs(pid_t tid, const struct rv_regs *r)
{
	if (ptrace(PTRACE_SETREGS, tid, NULL, CU(r)) < 0)
		return negative_errno();
	return 0;
}

long rv_arch_syscall_nr(const struct rv_regs *r)
{
	/* orig_rax is -1 outside a syscall; the kernel's restart logic keys off it. */
	long nr = (long)CU(r)->orig_rax;

	if (nr < 0)
		return -1;
	/* Callers compare with <sys/syscall.h> numbers. */
	return rv_arch_is_compat(r) ? rv_ia32_native_nr(nr) : nr;
}

bool rv_arch_syscall_restarts(const struct rv_regs *r)
{
	long ret = (long)CU(r)->rax;

	if ((long)CU(r)->orig_rax < 0)
		return false;
	return ret == -ERESTARTSYS || ret == -ERESTARTNOINTR || ret == -ERESTARTNOHAND ||
	       ret == -ERESTART_RESTARTBLOCK;
}

long rv_arch_syscall_arg(const struct rv_regs *r, unsigned int i)
{
	const struct user_regs_struct *u = CU(r);
	const unsigned long long v[6] = {u->rdi, u->rsi, u->rdx, u->r10, u->r8, u->r9};
	const unsigned long long c[6] = {u->rbx, u->rcx, u->rdx, u->rsi, u->rdi, u->rbp};

	if (i >= 6)
		return 0;
	/* Zero-extended: the compat entry uses the low halves (a descriptor
	 * is compared as an int, a pointer is an unsigned 32-bit one). */
	return rv_arch_is_compat(r) ? (long)(uint32_t)c[i] : (long)v[i];
}

uint64_t rv_arch_ip(const struct rv_regs *r)
{
	return CU(r)->rip;
}
uint64_t rv_arch_sp(const struct rv_regs *r)
{
	return CU(r)->rsp;
}
void rv_arch_set_ip(struct rv_regs *r, uint64_t ip)
{
	U(r)->rip = ip;
}

bool rv_arch_is_native(const struct rv_regs *r)
{
	return CU(r)->cs == X86_64_USER_CS;
}

void rv_arch_prepare_syscall(struct rv_regs *r, uint64_t ip, long nr, const long args[6])
{
	struct user_regs_struct *u = U(r);

	u->rip = ip;
	u->rax = (unsigned long)nr;
	/* -1: when the thread leaves a stop inside get_signal(), the kernel
	 * must not treat the injected call as an interrupted one to restart. */
	u->orig_rax = (unsigned long)-1;
	if (rv_arch_is_compat(r)) {
		u->rbx = (uint32_t)args[0];
		u->rcx = (uint32_t)args[1];
		u->rdx = (uint32_t)args[2];
		u->rsi = (uint32_t)args[3];
		u->rdi = (uint32_t)args[4];
		u->rbp = (uint32_t)args[5];
		return;
	}
	u->rdi = (unsigned long)args[0];
	u->rsi = (unsigned long)args[1];
	u->rdx = (unsigned long)args[2];
	u->r10 = (unsigned long)args[3];
	u->r8 = (unsigned long)args[4];
	u->r9 = (unsigned long)args[5];
}

void rv_arch_clear_syscall(struct rv_regs *r)
{
	U(r)->orig_rax = (unsigned long)-1;
}

long rv_arch_syscall_result(const struct rv_regs *r)
{
	return (long)CU(r)->rax;
}

void rv_arch_set_syscall_result(struct rv_regs *r, long result)
{
	U(r)->rax = (unsigned long)result;
	U(r)->orig_rax = (unsigned long)-1;
}

uint64_t rv_arch_syscall_site(const struct rv_regs *r)
{
	return CU(r)->rip - rv_arch_syscall_insn_len;
}

void rv_arch_enter_stub(struct rv_regs *r, uint64_t entry, uint64_t sp, uint64_t arg)
{
	struct user_regs_struct *u = U(r);

	u->rip = entry;
	u->rsp = sp;
	/* The ia32 stub's entry is regparm(1): its argument in eax. */
	if (rv_arch_is_compat(r))
		u->rax = arg;
	else
		u->rdi = arg;
	/* Leaving the stop must not restart the syscall the thread was in:
	 * the frame puts it back. */
	u->orig_rax = (unsigned long)-1;
	/* The stub is plain System V code: direction flag clear. */
	u->eflags &= ~0x400ull;
}

int rv_arch_reenter_syscall(pid_t tid, const struct rv_regs *saved)
{
	(void)tid;
	(void)saved;
	return -EOPNOTSUPP;
}

/* ---- the signal frame ------------------------------------------------- */

/* The kernel's layouts (arch/x86/include/uapi/asm/sigcontext.h, ucontext.h,
 * arch/x86/include/asm/sigframe.h), written out: glibc's ucontext_t differs
 * (its sigset_t is 128 bytes) and its struct sigcontext hides ss. */
struct k_sigcontext {
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
	uint64_t di, si, bp, bx, dx, ax, cx, sp, ip, flags;
	uint16_t cs, gs, fs, ss;
	uint64_t err, trapno, oldmask, cr2;
	uint64_t fpstate;
	uint64_t reserved1[8];
};
struct k_ucontext {
	unsigned long uc_flags;
	unsigned long uc_link;
	stack_t uc_stack;
	struct k_sigcontext uc_mcontext;
	uint64_t uc_sigmask;
};
_Static_assert(sizeof(struct k_sigcontext) == 256, "sigcontext layout");
struct k_rt_sigframe {
	uint64_t pretcode;
	struct k_ucontext uc;
	siginfo_t info;
};
_Static_assert(offsetof(struct k_ucontext, uc_mcontext) == 40, "ucontext layout");
_Static_assert(offsetof(struct k_ucontext, uc_sigmask) == 296, "ucontext layout");
_Static_assert(sizeof(struct k_rt_sigframe) == 440, "rt_sigframe layout");

#define UC_FP_XSTATE	     0x1
#define UC_SIGCONTEXT_SS     0x2
#define UC_STRICT_RESTORE_SS 0x4
#undef FP_XSTATE_MAGIC1
#undef FP_XSTATE_MAGIC2
#define FP_XSTATE_MAGIC1 0x46505853u
#define FP_XSTATE_MAGIC2 0x46505845u
#define FXSAVE_SIZE	 512u
#define SW_BYTES_OFFSET	 464u /* struct _fpx_sw_bytes in the fxsave area */

struct fpx_sw_bytes {
	uint32_t magic1;
	uint32_t extended_size;
	uint64_t xfeatures;
	uint32_t xstate_size;
	uint32_t padding[7];
};

/* The size of the XSAVE image of the features in XCR0 (AMX's left out by the
 * caller). CPUID exits to the hypervisor in a VM, each leaf a round trip, and
 * every holder of a call has the same XCR0 in practice: worked out once per
 * XCR0, kept in one word (xcr0 << 20 | size; x87 and SSE make a key nonzero)
 * that every tracer thread may read. */
static uint32_t xstate_size_of(uint64_t xcr0)
{
	static uint64_t cache;
	uint64_t c = __atomic_load_n(&cache, __ATOMIC_RELAXED);
	uint32_t size = 576; /* legacy area and XSAVE header */

	if (c && c >> 20 == xcr0)
		return (uint32_t)(c & 0xfffff);
	for (unsigned int i = 2; i < 63; i++) {
		unsigned int eax, ebx, ecx, edx;

		if (!(xcr0 & (1ull << i)))
			continue;
		__cpuid_count(0xd, i, eax, ebx, ecx, edx);
		if (ebx + eax > size)
			size = ebx + eax;
	}
	if (xcr0 < 1ull << 44 && size < 1u << 20)
		__atomic_store_n(&cache, xcr0 << 20 | size, __ATOMIC_RELAXED);
	return size;
}

int rv_arch_get_fpu(pid_t tid, void *buf, size_t *len)
{
	struct iovec iov = {buf, *len};

	/* The XSAVE image in the standard format. Its software bytes at 464
	 * are ptrace's (the XCR0 word gdb reads), not a signal frame's: they
	 * are rewritten below, else rt_sigreturn falls back to FXRSTOR and the
	 * upper halves of the vector registers come back as zeros. */
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &iov) == 0) {
		uint64_t xcr0;
		uint32_t size;
		struct fpx_sw_bytes sw = {0};

		if (iov.iov_len < 576)
			return -EIO;
		memcpy(&xcr0, (uint8_t *)buf + SW_BYTES_OFFSET, sizeof(xcr0));
		/* AMX tile data is enabled per process (arch_prctl permission);
		 * leave it out, as the kernel's default signal frame does. */
		xcr0 &= ~(1ull << 17 | 1ull << 18);
		size = xstate_size_of(xcr0);
		if (size > iov.iov_len)
			size = (uint32_t)iov.iov_len;
		sw.magic1 = FP_XSTATE_MAGIC1;
		sw.extended_size = size + 4;
		sw.xfeatures = xcr0;
		sw.xstate_size = size;
		memcpy((uint8_t *)buf + SW_BYTES_OFFSET, &sw, sizeof(sw));
		/* The frame needs no more: rt_sigreturn reads xstate_size bytes.
		 * The regset is as large as every feature (AMX tile data too:
		 * 11 KiB here against 2.7), and each byte of the frame is one
		 * to write, and to save and put back, below the holder's stack,
		 * whose untouched pages fault in as we do. */
		*len = size;
		return 0;
	}
	if (errno != ENODEV && errno != EINVAL)
		return negative_errno();
	/* No XSAVE: the legacy FXSAVE image; magic1 0 makes rt_sigreturn use
	 * FXRSTOR. */
	if (*len < FXSAVE_SIZE)
		return -ENOBUFS;
	iov.iov_len = FXSAVE_SIZE;
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRFPREG, &iov) < 0)
		return negative_errno();
	/* A compat thread's regsets are the 32-bit view: NT_PRFPREG is the
	 * 108-byte FSAVE image there, FXSAVE is NT_PRXFPREG. */
	if (iov.iov_len != FXSAVE_SIZE) {
		iov.iov_len = FXSAVE_SIZE;
		if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRXFPREG, &iov) < 0)
			return negative_errno();
		if (iov.iov_len != FXSAVE_SIZE)
			return -EIO;
	}
	memset((uint8_t *)buf + SW_BYTES_OFFSET, 0, sizeof(struct fpx_sw_bytes));
	*len = FXSAVE_SIZE;
	return 0;
}

size_t rv_arch_frame_size(size_t fpu_len)
{
	/* FPU state + MAGIC2, 64-byte alignment, the frame, 16-byte alignment;
	 * enough for an ia32 frame too. */
	size_t native = 4 + 64 + sizeof(struct k_rt_sigframe) + 32;

	return fpu_len + (native > rv_ia32_frame_overhead() ? native : rv_ia32_frame_overhead());
}

uint64_t rv_x86_restart_ip_ax(const struct user_regs_struct *u, uint64_t *ax)
{
	long ret = (long)u->rax;

	*ax = u->rax;
	if ((long)u->orig_rax < 0)
		return u->rip;
	switch (-ret) {
	case ERESTARTSYS:
	case ERESTARTNOINTR:
	case ERESTARTNOHAND:
	/* The restart block (nanosleep, poll, futex timeouts) does not survive
	 * rt_sigreturn, which resets it: issue the call again instead (it waits
	 * its full time again rather than failing with EINTR). */
	case ERESTART_RESTARTBLOCK:
		*ax = u->orig_rax;
		return u->rip - rv_arch_syscall_insn_len;
	}
	return u->rip;
}

int rv_arch_build_frame(const struct rv_regs *saved, uint64_t ip, uint64_t mask, const void *fpu,
			size_t fpu_len, uint64_t top, void *buf, uint64_t *ret_low,
			uint64_t *ret_sp, uint64_t *ret_altstack)
{
	const struct user_regs_struct *u = CU(saved);
	struct k_rt_sigframe f = {0};
	struct k_sigcontext *sc = &f.uc.uc_mcontext;
	struct fpx_sw_bytes sw;
	uint64_t fp_addr, frame_addr, ax, low;
	uint32_t magic2 = FP_XSTATE_MAGIC2;
	size_t size = rv_arch_frame_size(fpu_len);
	bool xstate;

	if (rv_arch_is_compat(saved))
		return rv_ia32_build_frame(u, ip, mask, fpu, fpu_len, top, buf, ret_low, ret_sp,
					   ret_altstack);
	if (fpu_len < FXSAVE_SIZE || fpu_len > RV_ARCH_FPU_MAX)
		return -EINVAL;
	/* As the kernel's get_sigframe(): the FPU state 64-byte aligned
	 * (XRSTOR faults otherwise), the frame below it so that the handler
	 * would start with rsp = frame, 16 - 8 aligned. */
	fp_addr = (top - fpu_len - 4) & ~63ull;
	frame_addr = ((fp_addr - sizeof(f)) & ~15ull) - 8;
	low = frame_addr;
	if (top - low > size)
		return -EINVAL;

	memcpy(&sw, (const uint8_t *)fpu + SW_BYTES_OFFSET, sizeof(sw));
	xstate = sw.magic1 == FP_XSTATE_MAGIC1 && sw.xstate_size <= fpu_len &&
		 sw.xstate_size > FXSAVE_SIZE;
	f.uc.uc_flags = UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS | (xstate ? UC_FP_XSTATE : 0);
	f.uc.uc_sigmask = mask;
	sc->r8 = u->r8;
	sc->r9 = u->r9;
	sc->r10 = u->r10;
	sc->r11 = u->r11;
	sc->r12 = u->r12;
	sc->r13 = u->r13;
	sc->r14 = u->r14;
	sc->r15 = u->r15;
	sc->di = u->rdi;
	sc->si = u->rsi;
	sc->bp = u->rbp;
	sc->bx = u->rbx;
	sc->dx = u->rdx;
	sc->cx = u->rcx;
	sc->sp = u->rsp;
	sc->ip = rv_x86_restart_ip_ax(u, &ax);
	if (ip)
		sc->ip = ip;
	sc->ax = ax;
	sc->flags = u->eflags;
	sc->cs = (uint16_t)u->cs;
	sc->ss = (uint16_t)u->ss;
	sc->oldmask = mask;
	sc->fpstate = fp_addr;

	/* BUF mirrors [low, top): the frame, then the FPU state and MAGIC2. */
	memset(buf, 0, (size_t)(top - low));
	memcpy((uint8_t *)buf + (frame_addr - low), &f, sizeof(f));
	memcpy((uint8_t *)buf + (fp_addr - low), fpu, fpu_len);
	if (xstate)
		memcpy((uint8_t *)buf + (fp_addr - low) + sw.xstate_size, &magic2, sizeof(magic2));

	*ret_low = low;
	*ret_sp = frame_addr + 8;
	*ret_altstack = frame_addr + offsetof(struct k_rt_sigframe, uc.uc_stack);
	return (int)(top - low);
}

uint64_t rv_arch_frame_mask(const struct rv_regs *saved, uint64_t altstack)
{
	if (rv_arch_is_compat(saved))
		return rv_ia32_frame_mask(altstack);
	return altstack + offsetof(struct k_ucontext, uc_sigmask) -
	       offsetof(struct k_ucontext, uc_stack);
}
