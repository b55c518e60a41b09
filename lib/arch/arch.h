/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The architecture interface: the only knowledge of registers and of the
 * syscall instruction. One lib/arch/<arch>.c implements it; the build picks it.
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
uint64_t rv_arch_ip(const struct rv_regs *r);
uint64_t rv_arch_sp(const struct rv_regs *r);
void rv_arch_set_ip(struct rv_regs *r, uint64_t ip);

/* Whether the thread runs the native ABI (false for x86_64's 32-bit tasks). */
bool rv_arch_is_native(const struct rv_regs *r);

/* Set up R to run syscall NR with ARGS at the instruction at IP, with the
 * kernel's restart logic off for it. */
void rv_arch_prepare_syscall(struct rv_regs *r, uint64_t ip, long nr, const long args[6]);
long rv_arch_syscall_result(const struct rv_regs *r);
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

#endif
