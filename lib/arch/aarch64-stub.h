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

/* rt_sigreturn reads its frame at sp (16-byte aligned, else SIGSEGV): SP is
 * the frame's address. Never returns; brk if it did. */
static inline __attribute__((always_inline, noreturn)) void rv_stub_sigreturn(uint64_t sp)
{
	register long x8 __asm__("x8") = __NR_rt_sigreturn;

	__asm__ volatile("mov sp, %0\n\t"
			 "svc #0\n\t"
			 "brk #0x3e8"
			 :
			 : "r"(sp), "r"(x8)
			 : "memory");
	__builtin_unreachable();
}

#endif
