/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The siblings of the injecting thread that our stop interrupted inside a
 * syscall on a descriptor the program replaces (a read() of a FIFO).
 *
 * While we live they stay stopped until the program is over; as they go on,
 * the kernel restarts their call, which looks the descriptor up again and
 * finds the dead one. If we die first, the kernel lets them go at once, and
 * each restarts its call on the old file before the stub's dup3 in the other
 * thread has replaced it: a read then takes data that is no longer the
 * holder's to take (seen in the kill trials under load). So each of them
 * gets its own way home, as the injecting thread has: below its red zone a
 * signal frame with its registers, FPU state and signal mask, and a program
 * for the stub of its own that waits (futex, bounded) on a word next to it,
 * which the injecting thread's program sets and wakes after its last op;
 * then rt_sigreturn issues the call again, on the dead descriptor.
 *
 * We never resume them: on every path on which we live, a sibling's mask,
 * registers and memory are put back while it is still at its stop, so its
 * number of stops does not change. If the injecting thread's program never
 * runs (we die between the siblings' registers and its), they go home after
 * the bounded wait, untouched.
 */
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include "tracee.h"

/* A sibling waits at most NWAIT times WAIT_NS: a futex wait ends early once
 * the word is set, and a group-stop in the middle cuts short one wait only
 * (its timeout runs on while the thread is stopped). */
#define NWAIT	4
#define WAIT_NS 500000000l

/* The arguments of syscall NR that are descriptors it may block on: bit i
 * for argument i. */
static unsigned int fd_args(long nr)
{
	switch (nr) {
	case SYS_read:
	case SYS_write:
	case SYS_readv:
	case SYS_writev:
	case SYS_pread64:
	case SYS_pwrite64:
	case SYS_preadv:
	case SYS_pwritev:
	case SYS_preadv2:
	case SYS_pwritev2:
	case SYS_recvfrom:
	case SYS_recvmsg:
	case SYS_recvmmsg:
	case SYS_sendto:
	case SYS_sendmsg:
	case SYS_sendmmsg:
	case SYS_accept:
	case SYS_accept4:
	case SYS_connect:
	case SYS_ioctl:
	case SYS_flock:
	case SYS_fcntl:
	case SYS_vmsplice:
		return 1u << 0;
	case SYS_splice:
	case SYS_copy_file_range:
		return 1u << 0 | 1u << 2;
	case SYS_tee:
	case SYS_sendfile:
		return 1u << 0 | 1u << 1;
	}
	return 0;
}

/* Whether REGS show a call that restarts on a descriptor PROG replaces. */
static bool blocked_on_target(const struct rv_prog *p, const struct rv_regs *regs)
{
	unsigned int args;

	if (!rv_arch_syscall_restarts(regs))
		return false;
	args = fd_args(rv_arch_syscall_nr(regs));
	for (unsigned int a = 0; a < 6; a++) {
		if (!(args & (1u << a)))
			continue;
		for (size_t i = 0; i < p->nops; i++)
			if (p->ops[i].kind == RV_OP_DUP_OVER &&
			    p->ops[i].args[1] == (int)rv_arch_syscall_arg(regs, a))
				return true;
	}
	return false;
}

/* Writes S's frame and program below its red zone. -errno with nothing
 * written. */
static int infect_one(struct rv_tracee *t, struct rv_sibling *s)
{
	const size_t nops = 2 + NWAIT;
	size_t fpu_len = RV_ARCH_FPU_MAX, frame_len, len;
	uint64_t top, frame_low, sr_sp, altstack, mask_addr, go_addr, ts_addr, ctl_addr, stack_top;
	const uint64_t run_mask = ~0ull;
	const struct timespec ts = {0, WAIT_NS};
	_cleanup_free_ uint8_t *fpu = NULL, *frame = NULL, *buf = NULL;
	struct rv_stub_ctl *ctl;
	int r;

	fpu = malloc(RV_ARCH_FPU_MAX);
	if (!fpu)
		return -ENOMEM;
	r = rv_arch_get_fpu(s->tid, fpu, &fpu_len);
	if (r < 0)
		return r;
	top = (rv_arch_sp(&s->saved) - rv_arch_red_zone) & ~15ull;
	frame_len = rv_arch_frame_size(fpu_len);
	frame = malloc(frame_len);
	if (!frame)
		return -ENOMEM;
	r = rv_arch_build_frame(&s->saved, 0, s->mask, fpu, fpu_len, top, frame, &frame_low, &sr_sp,
				&altstack);
	if (r < 0)
		return r;
	mask_addr = (frame_low - 8) & ~7ull;
	go_addr = mask_addr - 8;
	ts_addr = (go_addr - sizeof(ts)) & ~15ull;
	ctl_addr = (ts_addr - sizeof(*ctl) - nops * sizeof(struct rv_op)) & ~63ull;
	stack_top = ctl_addr & ~15ull;
	s->low = (stack_top - RV_STUB_STACK) & ~15ull;
	len = (size_t)(top - s->low);
	buf = calloc(1, len);
	if (!buf)
		return -ENOMEM;
	memcpy(buf + (frame_low - s->low), frame, (size_t)(top - frame_low));
	memcpy(buf + (mask_addr - s->low), &run_mask, sizeof(run_mask));
	memcpy(buf + (ts_addr - s->low), &ts, sizeof(ts));
	ctl = (struct rv_stub_ctl *)(void *)(buf + (ctl_addr - s->low));
	/* stop_mode 0: it does not stop for us; only the injecting thread's
	 * program is ours to see. */
	*ctl = (struct rv_stub_ctl){
	    .magic = RV_STUB_MAGIC,
	    .nops = (uint32_t)nops,
	    .failed = -1,
	    .orig_mask = s->mask,
	    .sigreturn_sp = sr_sp,
	};
	/* As the injecting thread's prologue: its sigaltstack settings into
	 * the frame (rt_sigreturn sets them again), every signal blocked (no
	 * handler runs on the stub's registers). */
	ctl->ops[0] = (struct rv_op){.kind = RV_OP_SYSCALL,
				     .nr = SYS_sigaltstack,
				     .ref = -1,
				     .subst = -1,
				     .args = {0, (int64_t)altstack}};
	ctl->ops[1] = (struct rv_op){.kind = RV_OP_SYSCALL,
				     .nr = SYS_rt_sigprocmask,
				     .ref = -1,
				     .subst = -1,
				     .args = {SIG_SETMASK, (int64_t)mask_addr, 0, 8}};
	for (size_t i = 2; i < nops; i++)
		ctl->ops[i] = (struct rv_op){
		    .kind = RV_OP_SYSCALL,
		    .nr = SYS_futex,
		    .ref = -1,
		    .subst = -1,
		    .args = {(int64_t)go_addr, FUTEX_WAIT_PRIVATE, 0, (int64_t)ts_addr}};
	r = rv_run_abi_ops(t, ctl->ops, nops);
	if (r < 0)
		return r;

	s->saved_data = malloc(len);
	if (!s->saved_data)
		return -ENOMEM;
	r = rv_mem_read(t, s->low, s->saved_data, len);
	if (r == 0)
		r = rv_mem_write(t, s->low, buf, len);
	if (r < 0) {
		free(s->saved_data);
		s->saved_data = NULL;
		return r;
	}
	s->len = len;
	s->ctl_addr = ctl_addr;
	s->entry_sp = stack_top - 8;
	s->go_addr = go_addr;
	return 0;
}

int rv_sib_infect(struct rv_tracee *t)
{
	struct rv_run_state *rs = &t->run;

	rv_sib_uninfect(t);
	if (!rs->prog)
		return 0;
	for (size_t i = 0; i < t->n; i++) {
		struct rv_thread *th = &t->threads[i];
		struct rv_sibling s = {.tid = th->tid};
		int r;

		if (th == t->inj || th->gone || !th->stopped)
			continue;
		/* The stub in place is for the injecting thread's ABI. */
		if (rv_arch_get_regs(th->tid, &s.saved) < 0 ||
		    !rv_arch_is_native(&s.saved) != t->compat ||
		    !blocked_on_target(rs->prog, &s.saved))
			continue;
		if (ptrace(PTRACE_GETSIGMASK, th->tid, (void *)sizeof(s.mask), &s.mask) < 0)
			continue;
		if (!rs->sibs) {
			/* At most one per thread. */
			rs->sibs = calloc(t->n, sizeof(*rs->sibs));
			if (!rs->sibs)
				return -ENOMEM;
		}
		r = infect_one(t, &s);
		if (r == -ENOMEM) {
			rv_sib_uninfect(t);
			return r;
		}
		/* No room on its stack (or it died): it restarts its call as it
		 * did before; only a death of ours in the middle shows it. */
		if (r < 0)
			continue;
		rs->sibs[rs->nsibs++] = s;
	}
	return 0;
}

size_t rv_sib_wake_ops(const struct rv_tracee *t, struct rv_op *ops)
{
	const struct rv_run_state *rs = &t->run;

	/* One call sets the word and wakes the sibling (FUTEX_WAKE_OP with
	 * both addresses on it), so the stub needs no op of its own. A
	 * cleanup op: a program that failed (nothing replaced) lets them go
	 * home all the same. */
	for (size_t i = 0; i < rs->nsibs; i++)
		ops[i] =
		    (struct rv_op){.kind = RV_OP_SYSCALL,
				   .nr = SYS_futex,
				   .flags = RV_OPF_CLEANUP | RV_OPF_OPTIONAL,
				   .ref = -1,
				   .subst = -1,
				   .args = {(int64_t)rs->sibs[i].go_addr, FUTEX_WAKE_OP_PRIVATE,
					    INT_MAX, 0, (int64_t)rs->sibs[i].go_addr,
					    FUTEX_OP(FUTEX_OP_SET, 1, FUTEX_OP_CMP_EQ, 0)}};
	return rs->nsibs;
}

void rv_sib_enter(struct rv_tracee *t)
{
	struct rv_run_state *rs = &t->run;
	const uint64_t run_mask = ~0ull;

	for (size_t i = 0; i < rs->nsibs; i++) {
		struct rv_sibling *s = &rs->sibs[i];
		struct rv_regs regs = s->saved;

		rv_arch_enter_stub(&regs, rs->code_addr, s->entry_sp, s->ctl_addr);
		if (rv_arch_set_regs(s->tid, &regs) < 0)
			continue;
		s->entered = true;
		/* Also set by its program's prologue, for one left to run after
		 * we are gone. */
		ptrace(PTRACE_SETSIGMASK, s->tid, (void *)sizeof(run_mask), &run_mask);
	}
}

void rv_sib_cure(struct rv_tracee *t)
{
	struct rv_run_state *rs = &t->run;

	for (size_t i = 0; i < rs->nsibs; i++) {
		struct rv_sibling *s = &rs->sibs[i];
		struct rv_thread *th = rv_tracee_thread(t, s->tid);

		if (!th || th->gone)
			s->entered = false; /* nothing runs on its bytes any more */
		if (!s->entered)
			continue;
		/* The mask first: if we die before the registers, it waits in
		 * the stub, which takes it home with the frame. */
		ptrace(PTRACE_SETSIGMASK, s->tid, (void *)sizeof(s->mask), &s->mask);
		rv_fault("sibling-cure-mask");
		if (rv_arch_set_regs(s->tid, &s->saved) == 0)
			s->entered = false;
	}
}

bool rv_sib_any_entered(const struct rv_tracee *t)
{
	for (size_t i = 0; i < t->run.nsibs; i++)
		if (t->run.sibs[i].entered)
			return true;
	return false;
}

void rv_sib_uninfect(struct rv_tracee *t)
{
	struct rv_run_state *rs = &t->run;

	for (size_t i = 0; i < rs->nsibs; i++) {
		struct rv_sibling *s = &rs->sibs[i];

		/* An entered one runs on these bytes once we let it go. */
		if (!s->entered && s->saved_data)
			rv_mem_write(t, s->low, s->saved_data, s->len);
		free(s->saved_data);
	}
	free(rs->sibs);
	rs->sibs = NULL;
	rs->nsibs = 0;
}
