/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * x86_64 for the freestanding stub (lib/stub/stub.c): the syscall instruction
 * and the way home. Numbers come from the kernel's own header.
 */
#ifndef REVOKE_X86_64_STUB_H
#define REVOKE_X86_64_STUB_H

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

static inline __attribute__((always_inline)) long
rv_stub_syscall(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	register long r10 __asm__("r10") = a3;
	register long r8 __asm__("r8") = a4;
	register long r9 __asm__("r9") = a5;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a0), "S"(a1), "d"(a2), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

/* rt_sigreturn reads its frame at rsp - 8 (where a handler's ret popped the
 * restorer's address): SP is that rsp. Never returns; ud2 if it did. */
static inline __attribute__((always_inline, noreturn)) void rv_stub_sigreturn(uint64_t sp)
{
	__asm__ volatile("mov %0, %%rsp\n\t"
			 "mov %1, %%eax\n\t"
			 "syscall\n\t"
			 "ud2"
			 :
			 : "r"(sp), "i"(__NR_rt_sigreturn)
			 : "memory");
	__builtin_unreachable();
}

#endif
