/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * aarch64 for the freestanding stub (lib/stub/stub.c): svc #0 and the way
 * home. Numbers come from the kernel's own (generic) table.
 */
#ifndef REVOKE_AARCH64_STUB_H
#define REVOKE_AARCH64_STUB_H

#include <asm/unistd.h>

#define RV_STUB_NR_dup3		  __NR_dup3
#define RV_STUB_NR_close	  __NR_close
#define RV_STUB_NR_fcntl	  __NR_fcntl
#define RV_STUB_NR_mmap		  __NR_mmap
#define RV_STUB_NR_tgkill	  __NR_tgkill
#define RV_STUB_NR_getpid	  __NR_getpid
#define RV_STUB_NR_gettid	  __NR_gettid
#define RV_STUB_NR_prlimit64	  __NR_prlimit64
#define RV_STUB_NR_rt_sigaction	  __NR_rt_sigaction
#define RV_STUB_NR_rt_sigprocmask __NR_rt_sigprocmask
#define RV_STUB_NR_nanosleep	  __NR_nanosleep

/* The kernel preserves every register but x0 across svc. */
static inline __attribute__((always_inline)) long
rv_stub_syscall(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a0;
	register long x1 __asm__("x1") = a1;
	register long x2 __asm__("x2") = a2;
	register long x3 __asm__("x3") = a3;
	register long x4 __asm__("x4") = a4;
	register long x5 __asm__("x5") = a5;

	__asm__ volatile("svc #0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	return x0;
}

/* Where rt_sigreturn's frame keeps x0 and pc (struct rt_sigframe:
 * siginfo, then ucontext with uc_mcontext at 176; regs[] at 8 in it, then
 * sp, pc). aarch64.c checks them against its layout. */
#define RV_A64_FRAME_X0 312
#define RV_A64_FRAME_PC 568

/*
 * rt_sigreturn reads its frame at sp (16-byte aligned, else SIGSEGV): SP is
 * the frame's address. Entered with the frame's x0-x7, the arguments of the
 * call the thread was in: the tracer may turn this svc into that call at
 * its syscall-entry stop (rv_arch_reenter_syscall), where the kernel keeps
 * x0 for a restart (orig_x0) and puts x7 back after the stop. If the tracer
 * went away after it switched the call and before it moved the thread
 * home, the call returns here: its result becomes the frame's x0, the
 * frame's pc moves past the thread's svc, and an rt_sigreturn goes home.
 * A restart of the switched call comes back to the svc: with x8 still
 * rt_sigreturn's number (-ERESTARTSYS and the like) it goes home and the
 * thread issues its call again; with restart_syscall's (a nanosleep's
 * restart block, set up by the kernel) that runs here and returns here, so
 * x8 is set again. The tracer's going away is such a case: it leaves
 * TIF_SIGPENDING set, and a sleeping call returns at once to be restarted.
 * Never returns; brk if it did.
 */
_Static_assert(RV_A64_FRAME_X0 == 312 && RV_A64_FRAME_PC == 568, "the offsets in the asm below");

static inline __attribute__((always_inline, noreturn)) void rv_stub_sigreturn(uint64_t sp)
{
	register long x8 __asm__("x8") = __NR_rt_sigreturn;
	register uint64_t x9 __asm__("x9") = sp;

	__asm__ volatile("mov sp, x9\n\t"
			 "ldp x0, x1, [sp, #312]\n\t"
			 "ldp x2, x3, [sp, #328]\n\t"
			 "ldp x4, x5, [sp, #344]\n\t"
			 "ldp x6, x7, [sp, #360]\n\t"
			 "svc #0\n\t"
			 "str x0, [sp, #312]\n\t"
			 "ldr x9, [sp, #568]\n\t"
			 "add x9, x9, #4\n\t"
			 "str x9, [sp, #568]\n\t"
			 "mov x8, %[nr]\n\t"
			 "svc #0\n\t"
			 "brk #0x3e8"
			 : "+r"(x9), "+r"(x8)
			 : [nr] "i"(__NR_rt_sigreturn)
			 : "memory", "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7");
	__builtin_unreachable();
}

#endif
