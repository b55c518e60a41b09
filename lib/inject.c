/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Running syscalls in a stopped tracee and putting its injecting thread back
 * exactly as it was (registers, signal mask, scratch memory, text).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "tracee.h"

/* Extra time release gives a thread it must put back. */
#define RELEASE_GRACE_NS 2000000000ull
#define MAX_VDSO	 (64u * 1024u)

/* ---- tracee memory ------------------------------------------------------ */

static int mem_read(struct rv_tracee *t, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {buf, len}, remote = {(void *)addr, len};
	uint8_t *b = buf;

	if (process_vm_readv(t->pid, &local, 1, &remote, 1, 0) == (ssize_t)len)
		return 0;
	/* process_vm_readv can be refused where ptrace is not (LSMs). */
	for (size_t off = 0; off < len;) {
		long w;
		size_t k = len - off < sizeof(w) ? len - off : sizeof(w);

		errno = 0;
		w = ptrace(PTRACE_PEEKDATA, t->inj->tid, (void *)(addr + off), NULL);
		if (errno)
			return negative_errno();
		memcpy(b + off, &w, k);
		off += k;
	}
	return 0;
}

static int mem_write(struct rv_tracee *t, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = {(void *)buf, len}, remote = {(void *)addr, len};
	const uint8_t *b = buf;

	if (process_vm_writev(t->pid, &local, 1, &remote, 1, 0) == (ssize_t)len)
		return 0;
	for (size_t off = 0; off < len;) {
		long w = 0;
		size_t k = len - off < sizeof(w) ? len - off : sizeof(w);

		if (k < sizeof(w)) {
			errno = 0;
			w = ptrace(PTRACE_PEEKDATA, t->inj->tid, (void *)(addr + off), NULL);
			if (errno)
				return negative_errno();
		}
		memcpy(&w, b + off, k);
		if (ptrace(PTRACE_POKEDATA, t->inj->tid, (void *)(addr + off), (void *)w) < 0)
			return negative_errno();
		off += k;
	}
	return 0;
}

int rv_tracee_poke(struct rv_tracee *t, uint64_t addr, const void *data, size_t len)
{
	if (!t || !t->inj)
		return -EINVAL;
	return mem_write(t, addr, data, len);
}

int rv_tracee_scratch(struct rv_tracee *t, const void *data, size_t len, uint64_t *ret_addr)
{
	struct scratch *v;
	uint64_t low, addr;
	uint8_t *saved;
	int r;

	if (!t || !t->inj || len == 0)
		return -EINVAL;
	low = t->scratch_low ? t->scratch_low : rv_arch_sp(&t->saved) - rv_arch_red_zone;
	addr = (low - len) & ~(uint64_t)15;
	if (addr >= low)
		return -EFAULT;
	saved = malloc(len);
	if (!saved)
		return -ENOMEM;
	r = mem_read(t, addr, saved, len);
	if (r < 0)
		goto fail;
	v = realloc(t->scratch, (t->nscratch + 1) * sizeof(*v));
	if (!v) {
		r = -ENOMEM;
		goto fail;
	}
	t->scratch = v;
	r = mem_write(t, addr, data, len);
	if (r < 0) {
		/* A partial ptrace write may have happened: put it back. */
		mem_write(t, addr, saved, len);
		goto fail;
	}
	v[t->nscratch++] = (struct scratch){addr, len, saved};
	t->scratch_low = addr;
	*ret_addr = addr;
	return 0;
fail:
	free(saved);
	return r;
}

/* ---- syscall injection -------------------------------------------------- */

static int find_site(struct rv_tracee *t)
{
	char path[64], buf[512];
	uint8_t insn[16];
	const size_t il = rv_arch_syscall_insn_len;
	FILE *f;
	int r;

	if (t->have_site)
		return 0;
	/* Stopped inside a syscall: the instruction that entered it. */
	if (t->in_syscall) {
		uint64_t site = rv_arch_syscall_site(&t->saved);

		if (mem_read(t, site, insn, il) == 0 &&
		    memcmp(insn, rv_arch_syscall_insn, il) == 0) {
			t->site = site;
			return t->have_site = true, 0;
		}
	}
	/* Otherwise one in the vDSO (its fallback paths make syscalls). */
	snprintf(path, sizeof(path), "/proc/%d/maps", t->pid);
	f = fopen(path, "re");
	if (f) {
		struct rv_maps_entry m;

		while (fgets(buf, sizeof(buf), f)) {
			buf[strcspn(buf, "\n")] = '\0';
			if (rv_parse_maps_line(buf, &m) < 0 || !m.path ||
			    strcmp(m.path, "[vdso]") != 0)
				continue;
			size_t len = m.end - m.start < MAX_VDSO ? m.end - m.start : MAX_VDSO;
			_cleanup_free_ uint8_t *text = malloc(len);
			uint8_t *hit;

			if (text && mem_read(t, m.start, text, len) == 0 &&
			    (hit = memmem(text, len, rv_arch_syscall_insn, il))) {
				t->site = m.start + (uint64_t)(hit - text);
				t->have_site = true;
			}
			break;
		}
		fclose(f);
		if (t->have_site)
			return 0;
	}
	/* Last resort: write the instruction over the current one (restored on
	 * release). Never int3: a forced SIGTRAP resets a blocked handler. */
	errno = 0;
	t->poke_addr = rv_arch_ip(&t->saved);
	t->poke_word = ptrace(PTRACE_PEEKTEXT, t->inj->tid, (void *)t->poke_addr, NULL);
	if (errno)
		return negative_errno();
	long w = t->poke_word;
	memcpy(&w, rv_arch_syscall_insn, il);
	if (ptrace(PTRACE_POKETEXT, t->inj->tid, (void *)t->poke_addr, (void *)w) < 0) {
		r = negative_errno();
		return r;
	}
	t->poked = true;
	t->site = t->poke_addr;
	t->have_site = true;
	return 0;
}

/* Note where the saved ip sits in an rseq critical section: the kernel
 * aborts one on preemption, but our syscalls move ip out of it first, so it
 * would not see the need; restore to abort_ip instead, as CRIU does. */
static void check_rseq(struct rv_tracee *t)
{
	struct __ptrace_rseq_configuration conf = {};
	struct {
		uint32_t version, flags;
		uint64_t start_ip, post_commit_offset, abort_ip;
	} cs;
	uint64_t cs_ptr, ip = rv_arch_ip(&t->saved);

	if (t->in_syscall ||
	    ptrace(PTRACE_GET_RSEQ_CONFIGURATION, t->inj->tid, (void *)sizeof(conf), &conf) <= 0 ||
	    !conf.rseq_abi_pointer)
		return;
	/* struct rseq: u32 cpu_id_start, u32 cpu_id, u64 rseq_cs */
	if (mem_read(t, conf.rseq_abi_pointer + 8, &cs_ptr, sizeof(cs_ptr)) < 0 || !cs_ptr)
		return;
	if (mem_read(t, cs_ptr, &cs, sizeof(cs)) < 0)
		return;
	if (ip >= cs.start_ip && ip - cs.start_ip < cs.post_commit_offset) {
		t->rseq_abort = true;
		t->rseq_abort_ip = cs.abort_ip;
	}
}

static int prepare(struct rv_tracee *t)
{
	uint64_t all = ~0ull;
	int r;

	if (t->mask_saved)
		return 0;
	r = find_site(t);
	if (r < 0)
		return r;
	check_rseq(t);
	if (ptrace(PTRACE_GETSIGMASK, t->inj->tid, (void *)sizeof(t->sigmask), &t->sigmask) < 0)
		return negative_errno();
	/* No handler may run on our registers between the injected calls. */
	if (ptrace(PTRACE_SETSIGMASK, t->inj->tid, (void *)sizeof(all), &all) < 0)
		return negative_errno();
	t->mask_saved = true;
	return 0;
}

int rv_tracee_syscall_start(struct rv_tracee *t, long nr, const long args[6])
{
	struct rv_regs regs;
	pid_t tid;
	int r;

	if (!t || !t->inj)
		return -EINVAL;
	if (t->broken)
		return t->broken;
	tid = t->inj->tid;
	r = prepare(t);
	if (r < 0)
		return r;
	regs = t->saved;
	rv_arch_prepare_syscall(&regs, t->site, nr, args);
	r = rv_arch_set_regs(tid, &regs);
	if (r < 0)
		return r;
	t->sc_entered = false;
	t->sc_sig = 0;
	if (ptrace(PTRACE_SYSCALL, tid, NULL, NULL) < 0)
		return t->broken = negative_errno();
	t->where = RUNNING;
	t->sc_deadline = rv_stop_deadline(t->deadline_ns);
	return 0;
}

/* One stop of the injecting thread during an injected syscall: 1 resumed
 * again (waiting for the next), 0 finished, -errno. */
static int syscall_feed(struct rv_tracee *t, int status, long *ret_result)
{
	pid_t tid = t->inj->tid;
	struct rv_regs regs;
	int r;

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		t->inj->gone = true;
		return -ESRCH;
	}
	t->where = AT_SIGNAL_STOP;
	if (WSTOPSIG(status) == (SIGTRAP | 0x80)) {
		t->where = AT_SYSCALL_STOP;
		if (!t->sc_entered) {
			t->sc_entered = true;
			goto resume;
		}
		r = rv_arch_get_regs(tid, &regs);
		if (r < 0)
			return r;
		*ret_result = rv_arch_syscall_result(&regs);
		return 0;
	}
	if (status >> 16 == PTRACE_EVENT_STOP) {
		/* A group-stop or interrupt on the way: go on. */
		if (rv_is_stop_sig(WSTOPSIG(status)))
			t->group_stopped = true;
		goto resume;
	}
	if (status >> 16 == 0 && rv_is_stop_sig(WSTOPSIG(status))) {
		/* Cannot be blocked: let it group-stop (recorded by the
		 * kernel, reinstated on detach), then go on. */
		t->sc_sig = WSTOPSIG(status);
		goto resume;
	}
	if (status >> 16 == 0) {
		/* Every other signal is blocked: this one was forced by
		 * our own instruction. Suppressed on release. */
		return -EFAULT;
	}
resume:
	if (ptrace(PTRACE_SYSCALL, tid, NULL, (void *)(long)t->sc_sig) < 0)
		return negative_errno();
	t->sc_sig = 0;
	t->where = RUNNING;
	t->sc_deadline = rv_stop_deadline(t->deadline_ns);
	return 1;
}

int rv_tracee_syscall_feed(struct rv_tracee *t, int status, long *ret_result)
{
	int r;

	if (t->broken)
		return t->broken;
	r = syscall_feed(t, status, ret_result);
	if (r < 0)
		t->broken = r;
	return r;
}

int rv_tracee_syscall_poll(struct rv_tracee *t, long *ret_result)
{
	int status;
	pid_t p;

	if (!t || !t->inj)
		return -EINVAL;
	if (t->broken)
		return t->broken;
	p = waitpid(t->inj->tid, &status, __WALL | WNOHANG);
	if (p == t->inj->tid)
		return rv_tracee_syscall_feed(t, status, ret_result);
	if (p < 0 && errno != EINTR)
		return t->broken = negative_errno();
	if (rv_now_ns() >= t->sc_deadline)
		return t->broken = -ETIMEDOUT;
	return 1;
}

int rv_tracee_syscall(struct rv_tracee *t, long nr, long *ret_result, long a0, long a1, long a2,
		      long a3, long a4, long a5)
{
	const long args[6] = {a0, a1, a2, a3, a4, a5};
	int r;

	r = rv_tracee_syscall_start(t, nr, args);
	if (r < 0)
		return r;
	do {
		int status;

		r = rv_ptrace_wait(t->inj->tid, t->sc_deadline, &status);
		if (r == 0)
			r = -ETIMEDOUT;
		if (r < 0)
			return t->broken = r;
		r = rv_tracee_syscall_feed(t, status, ret_result);
	} while (r == 1);
	return r;
}

/* ---- release ------------------------------------------------------------- */

/* Put back what the injected calls changed, once the injecting thread is
 * at a stop inside get_signal() (or at a syscall stop of ours). */
static int restore_finish(struct rv_tracee *t)
{
	pid_t tid = t->inj->tid;
	struct rv_regs regs;
	int r = 0, q;

	regs = t->saved;
	if (t->rseq_abort)
		rv_arch_set_ip(&regs, t->rseq_abort_ip);
	q = rv_arch_set_regs(tid, &regs);
	if (q < 0 && r == 0)
		r = q;
	if (t->mask_saved &&
	    ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof(t->sigmask), &t->sigmask) < 0 && r == 0)
		r = negative_errno();
	for (size_t i = t->nscratch; i > 0; i--) {
		struct scratch *s = &t->scratch[i - 1];

		q = mem_write(t, s->addr, s->saved, s->len);
		if (q < 0 && r == 0)
			r = q;
	}
	if (t->poked &&
	    ptrace(PTRACE_POKETEXT, tid, (void *)t->poke_addr, (void *)t->poke_word) < 0 && r == 0)
		r = negative_errno();
	return r;
}

/* As far as it goes without waiting: 1 when a stop must be waited for. */
static int restore_advance(struct rv_tracee *t)
{
	pid_t tid = t->inj->tid;
	struct rv_regs regs;
	int q;

	if (t->where == RUNNING)
		return 1;
	if (t->where == AT_SYSCALL_STOP && !t->rs_cleared) {
		/* Clearing the number skips a call at its entry stop and keeps
		 * the restart logic off its result at the exit stop. */
		q = rv_arch_get_regs(tid, &regs);
		if (q < 0)
			return q;
		rv_arch_clear_syscall(&regs);
		q = rv_arch_set_regs(tid, &regs);
		if (q < 0)
			return q;
		t->rs_cleared = true;
		if (t->in_syscall) {
			/* Restoring an interrupted syscall at a syscall stop leaks
			 * -ERESTARTSYS (512) to the program; from a stop inside
			 * get_signal() the kernel restarts it itself, and picks
			 * EINTR when a handler is due. */
			if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0 ||
			    ptrace(PTRACE_CONT, tid, NULL, NULL) < 0)
				return negative_errno();
			t->where = RUNNING;
			t->rs_want_signal = true;
			return 1;
		}
	}
	return restore_finish(t);
}

int rv_tracee_restore_start(struct rv_tracee *t)
{
	uint64_t now = rv_now_ns();

	t->rs_grace = (t->deadline_ns > now ? t->deadline_ns : now) + RELEASE_GRACE_NS;
	t->rs_cleared = false;
	t->rs_want_signal = false;
	return restore_advance(t);
}

int rv_tracee_restore_feed(struct rv_tracee *t, int status)
{
	pid_t tid = t->inj->tid;

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		t->inj->gone = true;
		return -ESRCH;
	}
	if (WSTOPSIG(status) == (SIGTRAP | 0x80)) {
		t->where = AT_SYSCALL_STOP;
		if (t->rs_want_signal) {
			if (ptrace(PTRACE_CONT, tid, NULL, NULL) < 0)
				return negative_errno();
			t->where = RUNNING;
			return 1;
		}
		return restore_advance(t);
	}
	t->where = AT_SIGNAL_STOP;
	if (status >> 16 == PTRACE_EVENT_STOP && rv_is_stop_sig(WSTOPSIG(status)))
		t->group_stopped = true;
	/* A stop signal arriving here is handed back on detach. */
	if (status >> 16 == 0 && rv_is_stop_sig(WSTOPSIG(status)))
		t->inj->detach_sig = WSTOPSIG(status);
	return restore_advance(t);
}

int rv_tracee_restore(struct rv_tracee *t)
{
	int r = rv_tracee_restore_start(t);

	while (r == 1) {
		int status, q = rv_ptrace_wait(t->inj->tid, t->rs_grace, &status);

		if (q <= 0)
			return q == 0 ? -ETIMEDOUT : q; /* left for the orphan list */
		r = rv_tracee_restore_feed(t, status);
	}
	return r;
}
