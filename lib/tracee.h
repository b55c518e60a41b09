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

	/* Batch stop (ptrace.c): where this process is in rv_tracees_stop. */
	int rounds;			 /* task-list rounds that found new threads */
	bool seize_again;		 /* re-list the tasks once the seized ones stopped */
	bool found_new;			 /* this round seized new threads */
	uint64_t wait_deadline;		 /* for the stops of the current round */
	struct rv_proc_status leader_st; /* read by the checks, for the first seize */
	bool have_leader_st;

	/* An injected syscall in flight (inject.c). */
	bool sc_entered;
	int sc_sig;
	uint64_t sc_deadline;

	/* Restore in progress (inject.c). */
	uint64_t rs_grace;
	bool rs_cleared, rs_want_signal;
	bool rs_busy;  /* rv_tracees_release: waiting for a stop */
	int rs_result; /* what the restore returned */
};

static inline bool rv_is_stop_sig(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

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
/*
 * The same in steps, for many tracees at once: start, then feed each status
 * of the injecting thread while they return 1 (a stop is awaited; waitpid it
 * until t->rs_grace). 0 or -errno: done, as rv_tracee_restore returns.
 */
int rv_tracee_restore_start(struct rv_tracee *t);
int rv_tracee_restore_feed(struct rv_tracee *t, int status);
/* Feed one waitpid status of the injecting thread to an injected syscall
 * in flight; returns as rv_tracee_syscall_poll. */
int rv_tracee_syscall_feed(struct rv_tracee *t, int status, long *ret_result);

#endif
