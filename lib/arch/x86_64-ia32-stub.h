/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * x86_64's 32-bit (ia32, compat) holders, for the stub built with -m32: the
 * int $0x80 convention and the compat rt_sigreturn. Numbers come from the
 * kernel's own ia32 table.
 */
#ifndef REVOKE_X86_64_IA32_STUB_H
#define REVOKE_X86_64_IA32_STUB_H

#include <asm/unistd_32.h>

#define RV_STUB_NR_dup3	 __NR_dup3
#define RV_STUB_NR_close __NR_close
#define RV_STUB_NR_fcntl __NR_fcntl64
/* __NR_mmap is old_mmap (one pointer to its arguments); mmap2 takes them in
 * registers, the offset in pages (the stub's is always 0). */
#define RV_STUB_NR_mmap		  __NR_mmap2
#define RV_STUB_NR_tgkill	  __NR_tgkill
#define RV_STUB_NR_getpid	  __NR_getpid
#define RV_STUB_NR_gettid	  __NR_gettid
#define RV_STUB_NR_prlimit64	  __NR_prlimit64
#define RV_STUB_NR_rt_sigaction	  __NR_rt_sigaction
#define RV_STUB_NR_rt_sigprocmask __NR_rt_sigprocmask
/* Two longs: the 32-bit timespec this call takes. */
#define RV_STUB_NR_nanosleep __NR_nanosleep

/* The library sets eax to the control block (lib/arch/x86_64-ia32.c): no
 * stack argument to write before the stub runs. */
#define RV_STUB_ENTRY_ATTR __attribute__((regparm(1)))

/* ebp carries the sixth argument; it may be the frame pointer or hold an
 * input, so it is saved on the stack and loaded from a pushed copy (as
 * musl does). */
static inline __attribute__((always_inline)) long
rv_stub_syscall(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	long ret;

	__asm__ volatile("pushl %7\n\t"
			 "push %%ebp\n\t"
			 "mov 4(%%esp), %%ebp\n\t"
			 "int $0x80\n\t"
			 "pop %%ebp\n\t"
			 "add $4, %%esp"
			 : "=a"(ret)
			 : "a"(nr), "b"(a0), "c"(a1), "d"(a2), "S"(a3), "D"(a4), "g"(a5)
			 : "memory");
	return ret;
}

/* The compat rt_sigreturn reads its frame at esp - 4 (where a handler's ret
 * popped the restorer's address): SP is that esp. */
static inline __attribute__((always_inline, noreturn)) void rv_stub_sigreturn(uint64_t sp)
{
	__asm__ volatile("mov %0, %%esp\n\t"
			 "mov %1, %%eax\n\t"
			 "int $0x80\n\t"
			 "ud2"
			 :
			 : "r"((uint32_t)sp), "i"(__NR_rt_sigreturn)
			 : "memory");
	__builtin_unreachable();
}

#endif
