/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Busy holders' building blocks (x86_64 only), for the kill trials and the
 * soak:
 *
 *  - busy_regs_spin(): fills the general-purpose registers, xmm0-15 (ymm0-15
 *    when the CPU has AVX), the eight x87 registers, MXCSR and the x87 control
 *    word with given values, spins N iterations, and stores what the registers
 *    hold afterwards. A ptrace stop that lands in the loop and does not put
 *    every register back shows up in busy_regs_compare().
 *  - a SIGBUS probe of one byte of a mapping (siglongjmp out of the handler).
 *
 * Their /proc readers (a thread's SigBlk, State and TracerPid; a descriptor
 * table) are proc.h's.
 */
#ifndef REVOKE_TEST_LIB_BUSY_H
#define REVOKE_TEST_LIB_BUSY_H

#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef __x86_64__
#error "tests/lib/busy.h: the register workload is written for x86_64"
#endif

/* ---- registers ---------------------------------------------------------- */

/* The layout the assembler below uses: keep the offsets in step. */
struct busy_regs {
	uint64_t gpr[14];    /* 0: rax rbx rdx rsi rdi rbp r8 r9 r10 r11 r12 r13 r14 r15 */
	uint64_t pad0[2];    /* 112 */
	uint8_t vec[16][32]; /* 128: xmm0-15 (16 bytes) or ymm0-15 (32 bytes) */
	uint64_t x87[8];     /* 640: st0..st7 as doubles */
	uint32_t mxcsr;	     /* 704 */
	uint16_t fcw;	     /* 708 */
	uint16_t pad1[5];    /* 710 */
} __attribute__((aligned(16)));
_Static_assert(offsetof(struct busy_regs, vec) == 128, "vec");
_Static_assert(offsetof(struct busy_regs, x87) == 640, "x87");
_Static_assert(offsetof(struct busy_regs, mxcsr) == 704, "mxcsr");
_Static_assert(offsetof(struct busy_regs, fcw) == 708, "fcw");

/* busy_regs_spin_{sse,avx}(in, out, iterations): rcx counts the loop, rsp is
 * checked by the return itself. */
void busy_regs_spin_sse(const struct busy_regs *in, struct busy_regs *out, uint64_t n);
void busy_regs_spin_avx(const struct busy_regs *in, struct busy_regs *out, uint64_t n);
/* The same around one system call: rax (number, then result), rdi, rsi, rdx,
 * r10, r8, r9 as the kernel's calling convention; the kernel clobbers rcx and
 * r11, and must leave every other register as it was. */
void busy_regs_syscall_sse(const struct busy_regs *in, struct busy_regs *out, uint64_t unused);
void busy_regs_syscall_avx(const struct busy_regs *in, struct busy_regs *out, uint64_t unused);

uint64_t busy_mix(uint64_t *state);
bool busy_have_avx(void);
/* Values no ABI default has (rounding toward zero, flush-to-zero and
 * denormals-are-zero in MXCSR; truncation and 64-bit precision in the x87
 * control word), the rest from STATE. */
void busy_regs_fill(struct busy_regs *r, uint64_t *state);
/* Compares what came out of the registers with what went in (rax and r11
 * not, after a system call). 0, or -1 with WHAT describing the first register
 * that did not hold its value. */
int busy_regs_compare(const struct busy_regs *in, const struct busy_regs *out, bool avx,
		      bool syscall, char *what, size_t size);
/* Spin ITERATIONS with IN in the registers and compare. */
int busy_regs_check(const struct busy_regs *in, uint64_t iterations, bool avx, char *what,
		    size_t size);
/* nanosleep(NS) from inside the register workload: every register but rax,
 * rcx, r11 must come back as it went in, the call must return 0 and not
 * before NS passed. */
int busy_regs_nanosleep(struct busy_regs *in, uint64_t ns, bool avx, char *what, size_t size);

/* ---- SIGBUS probe --------------------------------------------------------- */

/* SIGBUS raised outside a probe (a holder must survive it: counted here). */
extern volatile sig_atomic_t busy_stray_sigbus;
/* Installs the handler (SIGBUS stays unblocked). */
int busy_sigbus_install(void);
/* Reads *P: 0 with the byte in *RET, or 1 when the access raised SIGBUS. */
int busy_probe(const volatile uint8_t *p, uint8_t *ret);

#endif
