/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private to lib/tracee/: one stopped process and the phases it goes
 * through. See ../shared/notes/injection.md.
 *
 *   stop.c    seize and interrupt every thread, wait for the stops (many at once)
 *   run.c     run a program (prog.c) through the stub in one thread, take it home
 *   siblings.c  the other threads stopped inside a call on a replaced descriptor:
 *             their own way home, should we die while the program runs
 *   place.c   where the stub's code and the program's memory go in the holder
 *   mem.c     reading and writing the holder's memory
 *   batch.c   the one loop that drives many tracees through a phase at once
 *   arena.c   one block for what every holder of a batch keeps meanwhile
 *
 * A tracee moves STOPPING -> STOPPED -> RUNNING -> STOPPED ... -> released.
 * Every phase is a small state machine (start, feed one wait status, timeout)
 * that batch.c drives for all tracees together; nothing ever waits for one
 * tracee alone while others could make progress.
 */
#ifndef REVOKE_TRACEE_H
#define REVOKE_TRACEE_H

#include <signal.h>
#include <sys/uio.h>

#include "arch/arch.h"
#include "internal.h"
#include "stub/stub-abi.h"

struct rv_thread {
	pid_t tid;
	bool stopped; /* its stop was reported to us */
	bool gone;
	bool awaited;	/* batch.c: the phase waits for an event of this thread */
	int detach_sig; /* a stop signal to hand back on detach */
	/* Its syscall as /proc showed it just before our interrupt, where
	 * the registers lose the first argument (rv_arch_arg0_lost). */
	bool have_pre;
	struct rv_proc_syscall pre;
};

/* Where the injecting thread is. */
enum {
	AT_SIGNAL_STOP,	 /* inside get_signal(): interrupt, group-stop, signal delivery */
	AT_SYSCALL_STOP, /* a syscall entry or exit stop (PTRACE_SYSCALL) */
	RUNNING,
};

/* The stub's own stack below a program: its frames are small. */
#define RV_STUB_STACK 2048

/* A sibling of the injecting thread stopped inside a syscall on a descriptor
 * the program replaces, with its own way home (siblings.c). */
struct rv_sibling {
	pid_t tid;
	struct rv_regs saved; /* its registers when it stopped */
	uint64_t mask;	      /* its signal mask when it stopped */
	uint64_t low;	      /* [low, low + len): ours below its red zone */
	size_t len;
	uint8_t *saved_data; /* what was there before */
	uint64_t ctl_addr, entry_sp;
	uint64_t go_addr; /* the word it waits on, set by the injecting thread */
	bool entered;	  /* its registers point into the stub */
};

/* The program running in the tracee (run.c). */
struct rv_run_state {
	struct rv_prog *prog;
	uint64_t ctl_addr;   /* the rv_stub_ctl in the holder */
	uint64_t data_low;   /* the lowest byte of ours below its stack pointer */
	size_t data_len;     /* [data_low, data_low + data_len) */
	uint8_t *saved_data; /* what was there before */
	uint64_t code_addr;
	size_t code_len;
	uint8_t *saved_code;	/* in saved_data's block, after its data_len bytes */
	struct rv_arena *arena; /* where saved_data comes from, if it fits (a reference) */
	bool saved_in_arena;
	bool code_written, data_written;
	bool prepared; /* everything is in the holder's memory, nothing runs it yet */
	bool entered;  /* registers point into the stub */
	uint64_t entry_sp;
	uint64_t run_mask;     /* the mask while the stub runs */
	bool ending;	       /* no stop signal: interrupted once its program was over */
	bool reentering;       /* on its way to its own call (rv_arch_reenter_syscall) */
	uint64_t sigreturn_sp; /* the frame's address */
	uint64_t frame_mask;   /* the frame's mask word (rv_arch_frame_mask) */
	bool restore;	       /* the stub puts the mask back itself (RV_STUB_ARG_RESTORE) */
	bool mask_back;	       /* ... and it did: the cure sets only the registers */
	bool end_seen;	       /* the stub chose its stop signal: no more polling */
	uint64_t started_ns;
	uint64_t run_deadline;
	char why[128];		 /* why the program could not run or finish */
	struct rv_sibling *sibs; /* written into the holder's memory (siblings.c) */
	size_t nsibs;
};

struct rv_tracer;

struct rv_tracee {
	pid_t pid;
	struct rv_tracer *owner; /* the thread that seized it (pool.c), NULL without a pool */
	int pidfd;
	uint64_t deadline_ns, stop_start_ns;
	struct rv_thread *threads;
	size_t n, cap;
	struct rv_thread *inj; /* the thread that runs our programs */
	struct rv_regs saved;  /* its registers when it stopped */
	uint64_t sigmask;      /* its signal mask when it stopped, once known (mask_saved): */
	bool mask_saved;       /* the stub saves it (stub-abi.h, mask_addr), not ptrace */
	bool in_syscall;
	bool compat; /* the injecting thread runs the compat ABI (a 32-bit holder) */
	int where;
	bool rseq_abort;
	uint64_t rseq_abort_ip;
	int broken;	    /* sticky: the tracee cannot be used any more */
	bool group_stopped; /* in a group-stop (SIGSTOP) as far as we saw */
	bool abandoned;	    /* left to finish on its own */
	int mem_fd;	    /* /proc/PID/mem, opened when needed */

	/* Stop phase (stop.c). */
	int rounds;			 /* task-list rounds that found new threads */
	bool seize_again;		 /* list the tasks again once the seized stopped */
	pid_t unseized_tid;		 /* a thread left unseized in the D state, or 0 */
	bool found_new;			 /* this round seized new threads */
	uint64_t wait_deadline;		 /* for the stops of the current round */
	struct rv_proc_status leader_st; /* read by the checks, for the first seize */
	bool have_leader_st;
	unsigned int leader_pf; /* with have_leader_st: the leader's PF_* flags */
	uint64_t vdso_hint;	/* the vDSO's address from the scan, or 0 */
	char *reason;		/* where a failure is explained (128 bytes) */
	int stop_error;

	/* Run phase (run.c). */
	struct rv_run_state run;

	/* After a program ran to its end and the thread is back (run.c):
	 * called, then every thread detached when release_when_done. */
	void (*done_fn)(struct rv_tracee *t, void *arg);
	void *done_arg;
	bool release_when_done;
	bool last_program; /* no program runs after this one */
	uint64_t released_ns;

	/* Release phase. */
	uint64_t rs_grace;
	bool rs_cleared, rs_want_signal;
	int rs_result;
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

/* ---- batch.c ---------------------------------------------------------- */

/*
 * One phase for many tracees. start() begins it for one tracee; feed()
 * gets each wait status of a thread of that tracee whose `awaited` flag is
 * set (-1: the thread is gone, no status); timeout() is called once its deadline passed. Each
 * returns 1 while the phase goes on for that tracee (waiting for awaited threads), 0 when it is
 * over, -errno when it failed (over too).
 */
struct rv_phase {
	int (*start)(struct rv_tracee *t);
	int (*feed)(struct rv_tracee *t, struct rv_thread *th, int status);
	int (*timeout)(struct rv_tracee *t);
	/* Optional: called every sweep, for work that no wait status announces
	 * (a thread in D state to seize once it leaves it); sets *progress when
	 * it did something. Returns as the others. */
	int (*poll)(struct rv_tracee *t, bool *progress);
	/* When the phase gives up on a tracee (its deadline): defaults to the
	 * tracee's own deadline_ns. */
	uint64_t (*deadline)(const struct rv_tracee *t);
};

/* Drives TS[0..N) (NULL entries skipped) through PHASE; RET[i] gets each
 * one's outcome (0 or -errno). */
void rv_batch_drive(struct rv_tracee **ts, size_t n, const struct rv_phase *phase, int *ret);

/* ---- pool.c ------------------------------------------------------------ */

/* The most tracer threads REVOKE_TRACERS may ask for. */
#define RV_TRACERS_MAX 64

/* Whether the calling thread owns T (seized it): only it may issue ptrace
 * requests on T or wait for its threads. */
bool rv_tracee_mine(const struct rv_tracee *t);
/* Gives a new tracee, before its seize, to the tracer with the fewest so
 * far (the calling thread's own without a pool). */
void rv_tracer_assign(struct rv_tracee *t);
/* Calls FN(TS, N, ARG) in the thread of every tracer that owns one of
 * TS[0..N) (NULL entries skipped), all at once, and returns when each has
 * returned. FN handles the tracees rv_tracee_mine() gives it, and only
 * those (called in a tracer thread, or without a pool: FN here, at once). */
void rv_pool_dispatch(struct rv_tracee **ts, size_t n,
		      void (*fn)(struct rv_tracee **ts, size_t n, void *arg), void *arg);

/* ---- stop.c ------------------------------------------------------------ */

void rv_tracee_free(struct rv_tracee *t);
struct rv_thread *rv_tracee_thread(struct rv_tracee *t, pid_t tid);
/* Detach every thread (the stop signal each must get back, if any). */
void rv_tracee_detach_all(struct rv_tracee *t);
/* A thread we seized but cannot detach now (running in our program past the
 * deadline): detached once it stops, by a later call in this thread, or by
 * the kernel when this thread exits. */
void rv_tracee_orphan(pid_t tid);
void rv_tracee_reap_orphans(void);
int rv_read_status(pid_t pid, pid_t tid, struct rv_proc_status *ret);

/* ---- mem.c -------------------------------------------------------------- */

int rv_mem_read(struct rv_tracee *t, uint64_t addr, void *buf, size_t len);
/* Several ranges in one process_vm_readv: true when all of them were read
 * (else the caller reads them one by one, to learn which failed). */
bool rv_mem_read_at_once(struct rv_tracee *t, const struct iovec *local, const struct iovec *remote,
			 size_t n);
/* Writes what the holder itself could write (process_vm_writev, else
 * PTRACE_POKEDATA): never into memory it could not write itself. */
int rv_mem_write(struct rv_tracee *t, uint64_t addr, const void *buf, size_t len);
/* Writes into text as a debugger does (/proc/PID/mem, FOLL_FORCE: a
 * private copy-on-write page of the holder's). */
int rv_mem_poke_text(struct rv_tracee *t, uint64_t addr, const void *buf, size_t len);

/* ---- place.c ----------------------------------------------------------- */

/* Where LEN bytes of code can go in T: bytes its own code never runs (the
 * padding after the vDSO image), all zero or already our stub. -ENOSPC. */
int rv_place_code(struct rv_tracee *t, size_t len, uint64_t *ret_addr);
/* The syscall numbers of OPS (native ones) in T's ABI: -EOPNOTSUPP for a
 * call the compat ABI has not with the same arguments (pick.c). */
int rv_run_abi_ops(const struct rv_tracee *t, struct rv_op *ops, size_t n);
/* The signals the stub may stop with, in order, and which of them the
 * kernel ignores by default (stub-abi.h). */
void rv_place_stop_signals(struct rv_stub_ctl *ctl);

/* ---- siblings.c ------------------------------------------------------- */

/* Gives every sibling of the injecting thread that is stopped inside a
 * syscall on a descriptor T's program replaces its frame and its waiting
 * program (nothing runs them yet). A sibling without room stays as it is.
 * 0, or -ENOMEM with nothing of the siblings' left in the holder. */
int rv_sib_infect(struct rv_tracee *t);
/* The ops that release the siblings, for the end of the injecting
 * thread's program: up to T->run.nsibs written to OPS; their number. */
size_t rv_sib_wake_ops(const struct rv_tracee *t, struct rv_op *ops);
/* Points the siblings' registers into the stub (before the injecting
 * thread's: a sibling waiting for a program that never runs goes home after
 * a bounded wait, while one left behind by a program that runs would restart
 * its call on the old file). */
void rv_sib_enter(struct rv_tracee *t);
/* Puts every entered sibling back (mask, then registers), at its stop. */
void rv_sib_cure(struct rv_tracee *t);
/* Whether a sibling still runs, or will run, in the stub. */
bool rv_sib_any_entered(const struct rv_tracee *t);
/* Puts the memory of the siblings that are not entered back, and forgets
 * them all (an entered one was left to go home by itself). */
void rv_sib_uninfect(struct rv_tracee *t);

/* ---- fault.c ----------------------------------------------------------- */

/*
 * Fault injection for the tests that prove a holder survives our death at
 * every step (tests/unit/test-unit-death.c), as CRIU's CRIU_FAULT: when the
 * environment's REVOKE_FAULT names POINT, the whole calling process is
 * SIGKILLed there. Read once; costs a string compare when set, nothing else.
 */
void rv_fault(const char *point);

/* ---- run.c ---------------------------------------------------------------- */

extern const struct rv_phase rv_phase_run;
extern const struct rv_phase rv_phase_release;
/* ---- arena.c, infect.c ------------------------------------------------- */

/*
 * What each holder of a batch keeps while its program is in place (the bytes
 * the program covers, to put back) comes from one mapping sized from the
 * programs before the first is placed: no allocation per holder (malloc grew
 * the engine thread's heap an mprotect at a time). A block that does not
 * fit is malloc'ed. Freed with the last reference (the creator's, and one per
 * tracee given it).
 */
struct rv_arena;
/* An arena of SIZE bytes, or NULL (then every block is malloc'ed). */
struct rv_arena *rv_arena_new(size_t size);
void rv_arena_put(struct rv_arena *a);
/* LEN bytes of A, or NULL when it is full. */
void *rv_arena_alloc(struct rv_arena *a, size_t len);
/* The most rv_run_infect() of P in T takes from an arena. */
size_t rv_run_bound(const struct rv_tracee *t, const struct rv_prog *p);
/* T takes its blocks from A (a reference of its own; NULL: malloc). */
void rv_run_use_arena(struct rv_tracee *t, struct rv_arena *a);
/* Frees the saved bytes (saved_data, saved_code), wherever they are. */
void rv_run_free_saved(struct rv_run_state *rs);
/* ... and drops the arena (rv_tracee_free). */
void rv_run_forget(struct rv_tracee *t);

/* Everything T's program needs in the holder's memory, nothing runs it yet:
 * 0, or -errno with nothing changed in the holder (rs->why says why). */
int rv_run_infect(struct rv_tracee *t);
/* Undo what rv_run_infect() wrote so far. */
void rv_run_uninfect(struct rv_tracee *t);
/* rv_run_infect() of T's program; with another thread of the holder when
 * the first has no room on its stack. */
int rv_run_prepare(struct rv_tracee *t);
/* The registers that enter the stub (the stub blocks every signal itself):
 * from then on, the thread can go home by itself. RESTORE: the stub puts the
 * thread's mask back once the program is over (rv_run_state.restore). */
int rv_run_enter(struct rv_tracee *t, bool restore);
/* Restore the injecting thread at once (registers, mask, memory) when it is
 * at a stop: used on every path that gives up on a program. */
int rv_run_cure(struct rv_tracee *t);

/* ---- pick.c ------------------------------------------------------------- */

/* Make TH the thread that runs programs: its registers, signal mask, rseq. */
int rv_run_pick(struct rv_tracee *t, struct rv_thread *th);
/* Whether the saved ip is inside an rseq critical section (then the thread
 * goes back to its abort_ip). */
void rv_run_check_rseq(struct rv_tracee *t);

#endif
