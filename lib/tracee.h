/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Private to ptrace.c (stopping, releasing) and inject.c (running syscalls). */
#ifndef REVOKE_TRACEE_H
#define REVOKE_TRACEE_H

#include <signal.h>

#include "arch/arch.h"
#include "internal.h"

struct rv_thread {
	pid_t tid;
	bool stopped; /* its stop was reported to us */
	bool gone;
	int detach_sig; /* a stop signal to hand back on detach */
};

/* Where the injecting thread is: at a stop inside get_signal() (interrupt,
 * group-stop, signal delivery), at a syscall entry/exit stop, or running. */
enum { AT_SIGNAL_STOP, AT_SYSCALL_STOP, RUNNING };

struct scratch {
	uint64_t addr;
	size_t len;
	uint8_t *saved;
};

struct rv_tracee {
	pid_t pid;
	int pidfd;
	uint64_t deadline_ns, stop_start_ns;
	struct rv_thread *threads;
	size_t n, cap;
	struct rv_thread *inj; /* the thread that runs our syscalls */
	struct rv_regs saved;  /* its registers when it stopped */
	bool in_syscall;
	int where;
	bool mask_saved;
	uint64_t sigmask;
	bool have_site;
	uint64_t site;
	bool poked;
	uint64_t poke_addr;
	long poke_word;
	struct scratch *scratch;
	size_t nscratch;
	uint64_t scratch_low;
	bool rseq_abort;
	uint64_t rseq_abort_ip;
	int broken;	    /* sticky injection failure */
	bool group_stopped; /* in a group-stop (SIGSTOP) as far as we saw */
};

static inline bool rv_is_stop_sig(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* Sleep a little more each call (N counts calls); false once DEADLINE passed. */
bool rv_ptrace_backoff(unsigned int *n, uint64_t deadline);
/*
 * A ptrace stop normally follows in microseconds: a wait for one gets at
 * least this long, even past the deadline, so that one holder that used up
 * the time (a D-state thread waited for until the deadline) does not fail
 * every stop and cut after it. Still bounded.
 */
#define RV_STOP_WAIT_MIN_NS (100 * 1000000ull)
static inline uint64_t rv_stop_deadline(uint64_t deadline)
{
	uint64_t floor = rv_now_ns() + RV_STOP_WAIT_MIN_NS;

	return deadline > floor ? deadline : floor;
}

/* 1 with *ret_status when TID changed state, 0 at the deadline, -errno. */
int rv_ptrace_wait(pid_t tid, uint64_t deadline, int *ret_status);
/* Put the injecting thread back: registers, signal mask, memory (inject.c). */
int rv_tracee_restore(struct rv_tracee *t);

#endif
