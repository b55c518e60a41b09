/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* x86_64: registers and the syscall instruction. */
#include <sys/ptrace.h>
#include <sys/user.h>

#include "arch.h"
#include "internal.h"
#include "util.h"

_Static_assert(sizeof(struct user_regs_struct) <= sizeof(struct rv_regs), "rv_regs too small");

/* The kernel's __USER_CS: a 64-bit code segment. A compat task (or a 64-bit
 * one that far-jumped into 32-bit code) runs with __USER32_CS (0x23) and
 * would read our syscall numbers from the ia32 table. */
#define X86_64_USER_CS 0x33

const uint8_t rv_arch_syscall_insn[] = {0x0f, 0x05};
const size_t rv_arch_syscall_insn_len = sizeof(rv_arch_syscall_insn);
const size_t rv_arch_red_zone = 128;

static struct user_regs_struct *U(struct rv_regs *r)
{
	return (struct user_regs_struct *)r->raw;
}
static const struct user_regs_struct *CU(const struct rv_regs *r)
{
	return (const struct user_regs_struct *)r->raw;
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

	return nr < 0 ? -1 : nr;
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

uint64_t rv_arch_syscall_site(const struct rv_regs *r)
{
	return CU(r)->rip - rv_arch_syscall_insn_len;
}

/* Coroutine stacks (cut.c): the System V callee-saved registers go on the
 * stack being left, its sp into *SAVE_SP; TO_SP's registers come off its
 * own stack and ret continues there. No signal mask to switch (swapcontext
 * makes two syscalls per switch for it, and ASan warns about it). */
__asm__(".text\n"
	".globl rv_arch_switch\n"
	".hidden rv_arch_switch\n"
	".type rv_arch_switch, @function\n"
	"rv_arch_switch:\n"
	"\tpushq %rbp\n"
	"\tpushq %rbx\n"
	"\tpushq %r12\n"
	"\tpushq %r13\n"
	"\tpushq %r14\n"
	"\tpushq %r15\n"
	"\tmovq %rsp, (%rdi)\n"
	"\tmovq %rsi, %rsp\n"
	"\tpopq %r15\n"
	"\tpopq %r14\n"
	"\tpopq %r13\n"
	"\tpopq %r12\n"
	"\tpopq %rbx\n"
	"\tpopq %rbp\n"
	"\tret\n"
	".size rv_arch_switch, .-rv_arch_switch\n");

void *rv_arch_stack_init(void *top, void (*entry)(void))
{
	uint64_t *sp = (uint64_t *)((uintptr_t)top & ~(uintptr_t)15);

	/* ENTRY starts as if called: rsp = 8 mod 16, a (never used) return
	 * address above it; below, its address for the ret and six zeroed
	 * registers for the pops. */
	*--sp = 0;
	*--sp = (uint64_t)(uintptr_t)entry;
	for (int i = 0; i < 6; i++)
		*--sp = 0;
	return sp;
}
