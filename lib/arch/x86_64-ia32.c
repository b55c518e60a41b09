/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * x86_64's 32-bit (ia32) holders: their syscall numbers, the ia32
 * rt_sigframe that the compat rt_sigreturn (ia32 173) turns back into the
 * thread's registers, FPU state and mask, and the stub built with -m32.
 *
 * Layouts from Linux 6.1: arch/x86/include/asm/sigframe.h (rt_sigframe_ia32),
 * arch/x86/include/asm/ia32.h (ucontext_ia32), uapi/asm/sigcontext.h
 * (sigcontext_32, _fpstate_32), kernel/signal.c and ia32/ia32_signal.c
 * (ia32_setup_rt_frame, ia32_restore_sigcontext), kernel/fpu/signal.c and
 * regset.c (fpu__alloc_mathframe, save_fsave_header, __fpu_restore_sig,
 * convert_from_fxsr).
 */
#include <asm/unistd_32.h>
#include <errno.h>
#include <string.h>

#include "x86_64-ia32.h"

#ifdef RV_HAVE_IA32_STUB
#include "stub-blob-ia32.h"
#endif

#define IA32_NR(native, ia32, callable)	      __NR_##ia32,
#define IA32_CALLABLE(native, ia32, callable) callable,
const long rv_ia32_nrs[] = {RV_IA32_CALLS(IA32_NR)};
const bool rv_ia32_callable[] = {RV_IA32_CALLS(IA32_CALLABLE)};
const size_t rv_ia32_ncalls = sizeof(rv_ia32_nrs) / sizeof(rv_ia32_nrs[0]);

/* Above every native number (x86_64 has fewer than 1024). */
#define FOREIGN_NR 0x100000l

long rv_ia32_native_nr(long nr)
{
	for (size_t i = 0; i < rv_ia32_ncalls; i++)
		if (rv_ia32_nrs[i] == nr)
			return rv_ia32_native_nrs[i];
	return FOREIGN_NR + nr;
}

long rv_arch_compat_nr(long nr)
{
	for (size_t i = 0; i < rv_ia32_ncalls; i++)
		if (rv_ia32_callable[i] && rv_ia32_native_nrs[i] == nr)
			return rv_ia32_nrs[i];
	return -ENOSYS;
}

const uint8_t *rv_arch_compat_stub(size_t *ret_len)
{
#ifdef RV_HAVE_IA32_STUB
	*ret_len = sizeof(rv_stub_blob_ia32);
	return rv_stub_blob_ia32;
#else
	*ret_len = 0;
	return NULL;
#endif
}

/* ---- the ia32 signal frame ------------------------------------------------ */

struct ia32_sigcontext {
	uint16_t gs, gsh, fs, fsh, es, esh, ds, dsh;
	uint32_t di, si, bp, sp, bx, dx, cx, ax;
	uint32_t trapno, err, ip;
	uint16_t cs, csh;
	uint32_t flags, sp_at_signal;
	uint16_t ss, ssh;
	uint32_t fpstate, oldmask, cr2;
};
struct ia32_ucontext {
	uint32_t uc_flags, uc_link;
	uint32_t ss_sp;
	int32_t ss_flags;
	uint32_t ss_size;
	struct ia32_sigcontext uc_mcontext;
	uint32_t uc_sigmask[2]; /* compat_sigset_t: 4-byte aligned */
};
struct ia32_rt_sigframe {
	uint32_t pretcode;
	int32_t sig;
	uint32_t pinfo, puc;
	uint8_t info[128]; /* compat_siginfo_t */
	struct ia32_ucontext uc;
	uint8_t retcode[8];
};
_Static_assert(sizeof(struct ia32_sigcontext) == 88, "sigcontext_32 layout");
_Static_assert(offsetof(struct ia32_ucontext, uc_mcontext) == 20, "ucontext_ia32 layout");
_Static_assert(offsetof(struct ia32_ucontext, uc_sigmask) == 108, "ucontext_ia32 layout");
_Static_assert(sizeof(struct ia32_ucontext) == 116, "ucontext_ia32 layout");
_Static_assert(offsetof(struct ia32_rt_sigframe, uc) == 144, "rt_sigframe_ia32 layout");
_Static_assert(sizeof(struct ia32_rt_sigframe) == 268, "rt_sigframe_ia32 layout");

/* struct fregs_state / the head of _fpstate_32: the legacy FSAVE image that
 * comes before the FXSAVE/XSAVE image in an ia32 frame. The kernel takes the
 * x87 control words and registers from here, not from the FXSAVE image
 * ("histerical raisins", __fpu_restore_sig): it must say what that image
 * says. */
struct ia32_fsave {
	uint32_t cwd, swd, twd, fip, fcs, foo, fos;
	uint8_t st[8][10];
	uint16_t status, magic;
};
_Static_assert(sizeof(struct ia32_fsave) == 112, "fregs_state layout");
#define X86_FXSR_MAGIC 0x0000

/* The FXSAVE image (struct fxregs_state, 64-bit format). */
struct fxsave {
	uint16_t cwd, swd, twd, fop;
	uint64_t rip, rdp;
	uint32_t mxcsr, mxcsr_mask;
	uint8_t st[8][16];
};

#define UC_FP_XSTATE	 0x1
#define FP_XSTATE_MAGIC1 0x46505853u
#define FP_XSTATE_MAGIC2 0x46505845u
#define FXSAVE_SIZE	 512u
#define SW_BYTES_OFFSET	 464u

size_t rv_ia32_frame_overhead(void)
{
	/* MAGIC2, the FXSAVE image's 64-byte alignment, the FSAVE head, the
	 * frame, its 16-byte alignment. */
	return 4 + 64 + sizeof(struct ia32_fsave) + sizeof(struct ia32_rt_sigframe) + 16;
}

/* twd_fxsr_to_i387(): the full tag word from FXSAVE's abridged one. Only
 * empty/not empty comes back (twd_i387_to_fxsr), the rest as the kernel
 * writes it. */
static uint32_t i387_tag_word(const struct fxsave *fx)
{
	unsigned int tos = (fx->swd >> 11) & 7;
	uint32_t ret = 0xffff0000u;

	for (unsigned int i = 0; i < 8; i++) {
		const uint8_t *st = fx->st[(i - tos) & 7];
		uint16_t sig[4], exp;
		uint32_t tag;

		memcpy(sig, st, sizeof(sig));
		memcpy(&exp, st + 8, sizeof(exp));
		if (!(fx->twd & (1u << i)))
			tag = 3; /* empty */
		else if ((exp & 0x7fff) == 0x7fff)
			tag = 2; /* special */
		else if ((exp & 0x7fff) == 0)
			tag = !sig[0] && !sig[1] && !sig[2] && !sig[3] ? 1 /* zero */ : 2;
		else
			tag = sig[3] & 0x8000 ? 0 /* valid */ : 2;
		ret |= tag << (2 * i);
	}
	return ret;
}

int rv_ia32_build_frame(const struct user_regs_struct *u, uint64_t ip, uint64_t mask,
			const void *fpu, size_t fpu_len, uint64_t top, void *buf, uint64_t *ret_low,
			uint64_t *ret_sp, uint64_t *ret_altstack)
{
	struct ia32_rt_sigframe f = {0};
	struct ia32_sigcontext *sc = &f.uc.uc_mcontext;
	struct ia32_fsave env = {0};
	struct fxsave fx;
	uint32_t magic1, xstate_size, magic2 = FP_XSTATE_MAGIC2;
	uint64_t fx_addr, fp_addr, frame_addr, ax, low;
	bool xstate;

	if (fpu_len < FXSAVE_SIZE || fpu_len > RV_ARCH_FPU_MAX || top > UINT32_MAX)
		return -EINVAL;
	/* As fpu__alloc_mathframe() and get_sigframe(): the FXSAVE/XSAVE
	 * image 64-byte aligned with MAGIC2 after it, the FSAVE head below
	 * it, the frame below that with esp + 4 16-byte aligned (the frame
	 * starts where a handler's return address would be). */
	fx_addr = (top - fpu_len - 4) & ~63ull;
	fp_addr = fx_addr - sizeof(env);
	frame_addr = ((fp_addr - sizeof(f) + 4) & ~15ull) - 4;
	low = frame_addr;
	if (top - low > fpu_len + rv_ia32_frame_overhead())
		return -EINVAL;

	memcpy(&magic1, (const uint8_t *)fpu + SW_BYTES_OFFSET, sizeof(magic1));
	/* struct _fpx_sw_bytes: magic1, extended_size, xfeatures (u64), xstate_size */
	memcpy(&xstate_size, (const uint8_t *)fpu + SW_BYTES_OFFSET + 16, sizeof(xstate_size));
	xstate = magic1 == FP_XSTATE_MAGIC1 && xstate_size <= fpu_len && xstate_size > FXSAVE_SIZE;

	/* convert_from_fxsr(), with one difference: fcs carries the opcode
	 * (fop) in its upper half, which convert_to_fxsr() puts back; the
	 * kernel's own frames give the code segment alone and lose it. */
	memcpy(&fx, fpu, sizeof(fx));
	env.cwd = fx.cwd | 0xffff0000u;
	env.swd = fx.swd | 0xffff0000u;
	env.twd = i387_tag_word(&fx);
	env.fip = (uint32_t)fx.rip;
	env.foo = (uint32_t)fx.rdp;
	env.fcs = (uint32_t)(u->cs & 0xffff) | (uint32_t)fx.fop << 16;
	env.fos = (uint32_t)u->ds | 0xffff0000u;
	for (unsigned int i = 0; i < 8; i++)
		memcpy(env.st[i], fx.st[i], 10);
	env.status = fx.swd;
	env.magic = X86_FXSR_MAGIC;

	f.pinfo = (uint32_t)(frame_addr + offsetof(struct ia32_rt_sigframe, info));
	f.puc = (uint32_t)(frame_addr + offsetof(struct ia32_rt_sigframe, uc));
	f.uc.uc_flags = xstate ? UC_FP_XSTATE : 0;
	f.uc.uc_sigmask[0] = (uint32_t)mask;
	f.uc.uc_sigmask[1] = (uint32_t)(mask >> 32);
	sc->gs = (uint16_t)u->gs;
	sc->fs = (uint16_t)u->fs;
	sc->es = (uint16_t)u->es;
	sc->ds = (uint16_t)u->ds;
	sc->di = (uint32_t)u->rdi;
	sc->si = (uint32_t)u->rsi;
	sc->bp = (uint32_t)u->rbp;
	sc->sp = (uint32_t)u->rsp;
	sc->bx = (uint32_t)u->rbx;
	sc->dx = (uint32_t)u->rdx;
	sc->cx = (uint32_t)u->rcx;
	/* int $0x80 is two bytes, and the compat vDSO's sysenter/syscall
	 * return to an int $0x80 for the restart: the native rule holds. */
	sc->ip = (uint32_t)rv_x86_restart_ip_ax(u, &ax);
	if (ip)
		sc->ip = (uint32_t)ip;
	sc->ax = (uint32_t)ax;
	sc->flags = (uint32_t)u->eflags;
	sc->cs = (uint16_t)u->cs;
	sc->ss = (uint16_t)u->ss;
	sc->fpstate = (uint32_t)fp_addr;
	sc->oldmask = (uint32_t)mask;

	/* BUF mirrors [low, top). */
	memset(buf, 0, (size_t)(top - low));
	memcpy((uint8_t *)buf + (frame_addr - low), &f, sizeof(f));
	memcpy((uint8_t *)buf + (fp_addr - low), &env, sizeof(env));
	memcpy((uint8_t *)buf + (fx_addr - low), fpu, fpu_len);
	if (xstate)
		memcpy((uint8_t *)buf + (fx_addr - low) + xstate_size, &magic2, sizeof(magic2));

	*ret_low = low;
	/* sys32_rt_sigreturn reads the frame at esp - 4. */
	*ret_sp = frame_addr + 4;
	*ret_altstack = frame_addr + offsetof(struct ia32_rt_sigframe, uc.ss_sp);
	return (int)(top - low);
}

uint64_t rv_ia32_frame_mask(uint64_t altstack)
{
	return altstack + offsetof(struct ia32_ucontext, uc_sigmask) -
	       offsetof(struct ia32_ucontext, ss_sp);
}
