/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The thread that runs a holder's programs, and its ABI: picked when the
 * holder is stopped (stop.c), its registers, signal mask and rseq critical
 * section saved; the syscall numbers of a program in that thread's ABI.
 */
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>

#include "stub-blob.h"
#include "tracee.h"

/* ---- the holder's ABI ------------------------------------------------------ */

/* A thread not of the native ABI can be injected into where the build has
 * a stub for it (x86_64's 32-bit holders). */
static bool abi_supported(const struct rv_regs *r)
{
#ifdef RV_ARCH_COMPAT
	size_t len;

	return rv_arch_is_compat(r) && rv_arch_compat_stub(&len);
#else
	(void)r;
	return false;
#endif
}

int rv_run_abi_ops(const struct rv_tracee *t, struct rv_op *ops, size_t n)
{
	if (!t->compat)
		return 0;
#ifdef RV_ARCH_COMPAT
	for (size_t i = 0; i < n; i++) {
		long nr;

		if (ops[i].kind != RV_OP_SYSCALL)
			continue;
		nr = rv_arch_compat_nr(ops[i].nr);
		if (nr < 0)
			return -EOPNOTSUPP;
		ops[i].nr = (int32_t)nr;
	}
	return 0;
#else
	(void)ops;
	(void)n;
	return -EOPNOTSUPP;
#endif
}

/* ---- picking the injecting thread ---------------------------------------- */

/* Where the saved ip sits in an rseq critical section, the thread goes
 * back to the section's abort_ip instead (CRIU does the same): the kernel
 * would have aborted it on the preemption that our stop was. */
void rv_run_check_rseq(struct rv_tracee *t)
{
	struct __ptrace_rseq_configuration conf = {};
	struct {
		uint32_t version, flags;
		uint64_t start_ip, post_commit_offset, abort_ip;
	} cs;
	uint64_t cs_ptr, ip = rv_arch_ip(&t->saved);

	t->rseq_abort = false;
	if (t->in_syscall ||
	    ptrace(PTRACE_GET_RSEQ_CONFIGURATION, t->inj->tid, (void *)sizeof(conf), &conf) <= 0 ||
	    !conf.rseq_abi_pointer)
		return;
	/* struct rseq: u32 cpu_id_start, u32 cpu_id, u64 rseq_cs */
	if (rv_mem_read(t, conf.rseq_abi_pointer + 8, &cs_ptr, sizeof(cs_ptr)) < 0 || !cs_ptr)
		return;
	if (rv_mem_read(t, cs_ptr, &cs, sizeof(cs)) < 0)
		return;
	if (ip >= cs.start_ip && ip - cs.start_ip < cs.post_commit_offset) {
		t->rseq_abort = true;
		t->rseq_abort_ip = cs.abort_ip;
	}
}

int rv_run_pick(struct rv_tracee *t, struct rv_thread *th)
{
	struct rv_regs regs;
	int r;

	r = rv_arch_get_regs(th->tid, &regs);
	if (r < 0) {
		snprintf(t->run.why, sizeof(t->run.why), "cannot read registers of thread %d",
			 th->tid);
		return r;
	}
	if (!rv_arch_is_native(&regs) && !abi_supported(&regs)) {
		snprintf(t->run.why, sizeof(t->run.why),
			 "a 32-bit (compat) process (this build has no 32-bit stub)");
		return -EOPNOTSUPP;
	}
	/* A 64-bit process that far-jumped into a 32-bit code segment: its
	 * stack (and the frame we would put there) is out of 32-bit reach. */
	if (!rv_arch_is_native(&regs) && rv_arch_sp(&regs) > UINT32_MAX) {
		snprintf(t->run.why, sizeof(t->run.why),
			 "32-bit code with its stack above 4 GiB (a 64-bit process)");
		return -EOPNOTSUPP;
	}
	t->inj = th;
	t->saved = regs;
	/* Its mask is saved by the stub's first call, into the frame
	 * (infect.c): one ptrace call less per holder. */
	t->sigmask = 0;
	t->mask_saved = false;
	t->in_syscall = rv_arch_syscall_nr(&regs) >= 0;
	t->compat = !rv_arch_is_native(&regs);
	t->where = AT_SIGNAL_STOP;
	rv_run_check_rseq(t);
	return 0;
}
