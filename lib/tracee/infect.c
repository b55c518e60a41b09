/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Infect: the stub's code goes where the holder's own code never runs
 * (place.c); below the injecting thread's red zone go a signal frame with
 * the thread's own registers and FPU state, the program, its data and a
 * small stack for the stub. The program's first call blocks every signal
 * and saves the thread's own mask into the frame (no ptrace call reads or
 * sets it). Siblings blocked in a call on a descriptor the program replaces
 * get frames of their own (siblings.c), and the program ends by releasing
 * them. Then the registers that enter the stub; the thread goes on. From
 * that moment the thread carries its own way home: if this process dies at
 * any instant, the kernel detaches it, it finishes the program and
 * rt_sigreturn restores everything from the frame. Cure: the original mask
 * first (unless the stub put it back itself), then the original registers,
 * then the code and the stack bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "stub-blob.h"
#include "tracee.h"

static const uint8_t *stub_code(const struct rv_tracee *t, size_t *ret_len)
{
#ifdef RV_ARCH_COMPAT
	if (t->compat)
		return rv_arch_compat_stub(ret_len);
#else
	(void)t;
#endif
	*ret_len = sizeof(rv_stub_blob);
	return rv_stub_blob;
}

/* ---- infect -------------------------------------------------------------- */

size_t rv_run_bound(const struct rv_tracee *t, const struct rv_prog *p)
{
	size_t code_len;

	stub_code(t, &code_len);
	/* layout_frame()'s layout at its largest, every alignment included. */
	return rv_arch_frame_size(RV_ARCH_FPU_MAX) + 16 + 8 + 16 + p->data_len +
	       sizeof(struct rv_stub_ctl) + (2 + p->nops + t->n) * sizeof(struct rv_op) + 64 +
	       RV_STUB_STACK + 16 + code_len + 16;
}

/* Undo what rv_run_infect() wrote so far: nothing of ours stays in the holder. */
void rv_run_uninfect(struct rv_tracee *t)
{
	struct rv_run_state *rs = &t->run;

	/* A sibling we could not put back goes home through the stub's code
	 * once we let it go: the code stays (unused bytes, as the abandoned
	 * injecting thread leaves them). */
	if (rs->code_written && rs->saved_code && !rv_sib_any_entered(t))
		rv_mem_poke_text(t, rs->code_addr, rs->saved_code, rs->code_len);
	if (rs->data_written && rs->saved_data)
		rv_mem_write(t, rs->data_low, rs->saved_data, rs->data_len);
	rs->code_written = rs->data_written = false;
	rv_run_free_saved(rs);
	rv_sib_uninfect(t);
}

/* Where a program goes, below the injecting thread's red zone: [low, top)
 * holds the stub's stack, the control block and ops, the data and the mask
 * word, and the frame with the FPU state on top. */
struct layout {
	uint64_t top, frame_low, sr_sp, altstack, frame_mask, mask_addr, data_addr, ctl_addr,
	    stack_top, low;
	size_t len, nops;
};

/* The frame of T's own registers, FPU state and mask, the siblings' frames,
 * and the layout of the rest: *RET_BUF is the block to write at L->low, the
 * frame in place. -errno with nothing changed in the holder. */
static int layout_frame(struct rv_tracee *t, const uint8_t *fpu, size_t fpu_len, struct layout *l,
			uint8_t **ret_buf)
{
	struct rv_run_state *rs = &t->run;
	_cleanup_free_ uint8_t *frame = NULL;
	size_t frame_len;
	uint8_t *buf;
	int r;

	l->top = (rv_arch_sp(&t->saved) - rv_arch_red_zone) & ~15ull;
	frame_len = rv_arch_frame_size(fpu_len);
	frame = malloc(frame_len);
	if (!frame)
		return -ENOMEM;
	/* The mask word: no thread's mask blocks SIGKILL, so this one says
	 * "not saved yet" until the program's first call overwrites it. */
	r = rv_arch_build_frame(&t->saved, t->rseq_abort ? t->rseq_abort_ip : 0, ~0ull, fpu,
				fpu_len, l->top, frame, &l->frame_low, &l->sr_sp, &l->altstack);
	if (r < 0)
		return r;
	l->frame_mask = rv_arch_frame_mask(&t->saved, l->altstack);
	/* The siblings' frames first: the program's last ops release them. */
	r = rv_sib_infect(t);
	if (r < 0)
		return r;
	l->nops = 2 + rs->prog->nops + rs->nsibs; /* the prologue's two ops */
	l->mask_addr = (l->frame_low - 8) & ~7ull;
	l->data_addr = (l->mask_addr - rs->prog->data_len) & ~15ull;
	l->ctl_addr =
	    (l->data_addr - sizeof(struct rv_stub_ctl) - l->nops * sizeof(struct rv_op)) & ~63ull;
	l->stack_top = l->ctl_addr & ~15ull;
	l->low = (l->stack_top - RV_STUB_STACK) & ~15ull;
	l->len = (size_t)(l->top - l->low);
	buf = calloc(1, l->len);
	if (!buf) {
		rv_run_uninfect(t);
		return -ENOMEM;
	}
	memcpy(buf + (l->frame_low - l->low), frame, (size_t)(l->top - l->frame_low));
	*ret_buf = buf;
	return 0;
}

/* The control block, the ops (the prologue, the program's, the siblings'
 * release), the data and the mask word, into BUF. */
static int fill_program(struct rv_tracee *t, const struct layout *l, uint8_t *buf,
			uint64_t run_mask)
{
	struct rv_run_state *rs = &t->run;
	struct rv_prog *p = rs->prog;
	const size_t P = 2; /* prologue ops */
	struct rv_stub_ctl *ctl = (struct rv_stub_ctl *)(void *)(buf + (l->ctl_addr - l->low));
	int r;

	*ctl = (struct rv_stub_ctl){
	    .magic = RV_STUB_MAGIC,
	    .nops = (uint32_t)l->nops,
	    .failed = -1,
	    .stop_mode = 1,
	    .stop_sig = -1,
	    .sigreturn_sp = l->sr_sp,
	    .mask_addr = l->frame_mask,
	};
	rs->sigreturn_sp = l->sr_sp;
	rs->frame_mask = l->frame_mask;
	rv_place_stop_signals(ctl);
	/* The prologue: first every signal blocked, the thread's own mask
	 * saved into the frame as it goes (a signal that comes before it stops
	 * the thread for us: run.c, requeue), then the thread's sigaltstack
	 * settings into the frame (rt_sigreturn sets both again). */
	ctl->ops[0] =
	    (struct rv_op){.kind = RV_OP_SYSCALL,
			   .nr = SYS_rt_sigprocmask,
			   .ref = -1,
			   .subst = -1,
			   .args = {SIG_SETMASK, (int64_t)l->mask_addr, (int64_t)l->frame_mask, 8}};
	ctl->ops[1] = (struct rv_op){.kind = RV_OP_SYSCALL,
				     .nr = SYS_sigaltstack,
				     .ref = -1,
				     .subst = -1,
				     .args = {0, (int64_t)l->altstack}};
	for (size_t i = 0; i < p->nops; i++) {
		struct rv_op *op = &ctl->ops[P + i];

		*op = p->ops[i];
		if (op->ref >= 0)
			op->ref = (int16_t)(op->ref + (int)P);
		for (int a = 0; a < 6; a++)
			if (p->data_args[i] & (1u << a))
				op->args[a] += (int64_t)l->data_addr;
		op->state = RV_OP_NOT_RUN;
		op->res = 0;
	}
	rv_sib_wake_ops(t, &ctl->ops[P + p->nops]);
	r = rv_run_abi_ops(t, ctl->ops, l->nops);
	if (r < 0) {
		rv_run_uninfect(t);
		snprintf(rs->why, sizeof(rs->why),
			 "a 32-bit (compat) process: a call of the cut has no 32-bit equivalent");
		return r;
	}
	if (p->data_len) {
		memcpy(buf + (l->data_addr - l->low), p->data, p->data_len);
		rv_prog_relocate(p, buf + (l->data_addr - l->low), l->data_addr);
	}
	memcpy(buf + (l->mask_addr - l->low), &run_mask, sizeof(run_mask));
	return 0;
}

/* What the holder had there is saved (to put back), then BUF and the code
 * are written. -errno with nothing of ours left in the holder. */
static int write_program(struct rv_tracee *t, const struct layout *l, const uint8_t *buf,
			 const uint8_t *code)
{
	struct rv_run_state *rs = &t->run;
	int r;

	rs->data_low = l->low;
	rs->data_len = l->len;
	rs->ctl_addr = l->ctl_addr;
	/* One block for both (freed as saved_data), from the batch's arena
	 * when it has room. */
	rs->saved_data = rs->arena ? rv_arena_alloc(rs->arena, l->len + rs->code_len) : NULL;
	rs->saved_in_arena = rs->saved_data != NULL;
	if (!rs->saved_data)
		rs->saved_data = malloc(l->len + rs->code_len);
	if (!rs->saved_data) {
		rv_run_uninfect(t);
		return -ENOMEM;
	}
	rs->saved_code = rs->saved_data + l->len;
	/* The stack below the thread's red zone is free for anyone (a signal
	 * frame lands there too), but it is put back as it was, and so is the
	 * code's place. Both in one call; one by one if that fails. */
	struct iovec local[] = {{rs->saved_code, rs->code_len}, {rs->saved_data, l->len}};
	struct iovec remote[] = {{(void *)(uintptr_t)rs->code_addr, rs->code_len},
				 {(void *)(uintptr_t)l->low, l->len}};

	if (rv_mem_read_at_once(t, local, remote, 2))
		r = 0;
	else {
		r = rv_mem_read(t, rs->code_addr, rs->saved_code, rs->code_len);
		if (r < 0) {
			rv_run_uninfect(t);
			return r;
		}
		r = rv_mem_read(t, l->low, rs->saved_data, l->len);
	}
	if (r == 0) {
		r = rv_mem_write(t, l->low, buf, l->len);
		rs->data_written = r == 0;
	}
	if (r < 0) {
		rv_run_uninfect(t);
		snprintf(rs->why, sizeof(rs->why),
			 "no room for the cut on the stack of thread %d (%zu bytes)", t->inj->tid,
			 l->len);
		return r == -EFAULT ? -ENOSPC : r;
	}
	rs->code_written = true;
	r = rv_mem_poke_text(t, rs->code_addr, code, rs->code_len);
	if (r < 0) {
		rv_run_uninfect(t);
		snprintf(rs->why, sizeof(rs->why), "cannot write the cut's code: %s", strerror(-r));
		return r;
	}
	return 0;
}

/* Everything the program needs in the holder's memory (nothing runs it
 * yet). -errno with nothing changed in the holder. */
int rv_run_infect(struct rv_tracee *t)
{
	struct rv_run_state *rs = &t->run;
	size_t fpu_len = RV_ARCH_FPU_MAX;
	_cleanup_free_ uint8_t *buf = NULL;
	/* On the stack: a 16 KiB malloc and free per holder made the heap
	 * grow and shrink (an mprotect each time) for 1000 holders in a row. */
	uint8_t fpu[RV_ARCH_FPU_MAX] __attribute__((aligned(64)));
	/* Every signal blocked while the program runs: no handler runs on the
	 * stub's registers; at its end the stub puts the thread's mask back
	 * (or unblocks only its stop signal). */
	const uint64_t run_mask = ~0ull;
	const uint8_t *code;
	struct layout l;
	pid_t tid = t->inj->tid;
	int r;

	r = rv_arch_get_fpu(tid, fpu, &fpu_len);
	if (r == -ESRCH)
		return r; /* it died */
	if (r < 0) {
		snprintf(rs->why, sizeof(rs->why), "cannot read the FPU state of thread %d", tid);
		return r;
	}
	code = stub_code(t, &rs->code_len);
	r = rv_place_code(t, rs->code_len, &rs->code_addr);
	if (r < 0) {
		snprintf(rs->why, sizeof(rs->why),
			 "no place for the cut's code (no vDSO, no executable segment tail)");
		return r == -ESRCH ? r : -ENOSPC;
	}
	r = layout_frame(t, fpu, fpu_len, &l, &buf);
	if (r >= 0)
		r = fill_program(t, &l, buf, run_mask);
	if (r >= 0)
		r = write_program(t, &l, buf, code);
	if (r < 0)
		return r;
	rs->entry_sp = l.stack_top - 8;
	rs->run_mask = run_mask;
	rs->prepared = true;
	rv_fault("prepared");
	return 0;
}

/* The registers that enter the stub. From then on, the thread can go home
 * by itself. No PTRACE_SETSIGMASK: the stub's first call blocks every
 * signal, and one that comes before it is queued again (run.c). */
int rv_run_enter(struct rv_tracee *t, bool restore)
{
	struct rv_run_state *rs = &t->run;
	pid_t tid = t->inj->tid;
	struct rv_regs regs = t->saved;
	int r;

	rv_sib_enter(t);
	rv_fault("siblings-entered");
	rs->restore = restore;
	rs->mask_back = false;
	rv_arch_enter_stub(&regs, rs->code_addr, rs->entry_sp,
			   rs->ctl_addr | (restore ? RV_STUB_ARG_RESTORE : 0));
	r = rv_arch_set_regs(tid, &regs);
	if (r < 0) {
		rv_sib_cure(t);
		rv_run_uninfect(t);
		rs->prepared = false;
		return r;
	}
	rs->entered = true;
	rs->prepared = false;
	rv_fault("entered");
	return 0;
}

/* ---- cure ------------------------------------------------------------------ */

/* The thread's own mask back, unless the stub did it (mask_back): known
 * from the stub's control block, else from the frame, where the program's
 * first call saved it. */
static int cure_mask(struct rv_tracee *t)
{
	struct rv_run_state *rs = &t->run;
	uint64_t mask;
	int r;

	if (rs->mask_back)
		return 0;
	if (!t->mask_saved) {
		r = rv_mem_read(t, rs->frame_mask, &mask, sizeof(mask));
		if (r < 0)
			return r;
		/* Not saved yet: the program's first call never ran, the mask
		 * is the thread's own still. */
		if (mask & (1ull << (SIGKILL - 1)))
			return 0;
		t->sigmask = mask;
		t->mask_saved = true;
	}
	if (ptrace(PTRACE_SETSIGMASK, t->inj->tid, (void *)sizeof(t->sigmask), &t->sigmask) < 0)
		return negative_errno();
	return 0;
}

int rv_run_cure(struct rv_tracee *t)
{
	struct rv_run_state *rs = &t->run;
	pid_t tid = t->inj->tid;
	struct rv_regs regs;
	int r = 0, q;

	if (!rs->entered) {
		rv_run_uninfect(t);
		rs->prepared = false;
		return 0;
	}
	if (t->where != AT_SIGNAL_STOP)
		return -EBUSY;
	/* The mask first: if we die before the registers, the thread is still
	 * in the stub, which takes it home with the frame. */
	r = cure_mask(t);
	rv_fault("cure-mask");
	regs = t->saved;
	if (t->rseq_abort)
		rv_arch_set_ip(&regs, t->rseq_abort_ip);
	q = rv_arch_set_regs(tid, &regs);
	if (q < 0) {
		/* Still in the stub: it must finish by itself. */
		t->broken = q;
		return q;
	}
	rs->entered = false;
	rv_fault("cured");
	/* The siblings after it: the program is over or never ran, so one we
	 * leave behind by dying here finds its word set, or goes home after
	 * its bounded wait. */
	rv_sib_cure(t);
	rv_run_uninfect(t);
	return r;
}

/* Prepare (infect) T's program; with another thread of the holder when the
 * first has no room on its stack (they share descriptors and memory). */
int rv_run_prepare(struct rv_tracee *t)
{
	struct rv_run_state *rs = &t->run;
	int r;

	rs->why[0] = '\0';
	if (t->broken)
		return t->broken;
	if (!t->inj || t->inj->gone)
		return -ESRCH;
	rs->prog->done = false;
	rs->prog->failed = -1;
	r = rv_run_infect(t);
	for (size_t i = 0; r == -ENOSPC && i < t->n; i++) {
		struct rv_thread *th = &t->threads[i], *was = t->inj;
		struct rv_regs saved = t->saved;
		uint64_t mask = t->sigmask;
		bool mask_saved = t->mask_saved, compat = t->compat;

		if (th == was || th->gone || !th->stopped)
			continue;
		if (rv_run_pick(t, th) < 0 || (r = rv_run_infect(t)) == -ENOSPC) {
			/* back to the first choice for the message and the release */
			t->inj = was;
			t->saved = saved;
			t->sigmask = mask;
			t->mask_saved = mask_saved;
			t->compat = compat;
			t->in_syscall = rv_arch_syscall_nr(&saved) >= 0;
			rv_run_check_rseq(t);
			r = -ENOSPC;
		}
	}
	return r;
}
