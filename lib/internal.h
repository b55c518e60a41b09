/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internal interfaces of librevoke. Conventions (see README "Hacking"):
 * functions return 0 (or a count) on success and -errno on failure, never
 * print, never exit; out-parameters (ret_*) are left untouched on failure.
 * Cleanup uses the _cleanup_ attributes from util.h.
 */
#ifndef REVOKE_INTERNAL_H
#define REVOKE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "revoke.h"
#include "util.h"

#define RV_DEFAULT_TIMEOUT_MS 5000

/* ---- targets ---------------------------------------------------------- */

struct rv_target {
	dev_t dev;
	ino_t ino;
	mode_t mode;
	uid_t uid;
	dev_t rdev;
	int path_fd; /* O_PATH descriptor the caller resolved, owned */
	char *path;  /* as given (for messages), owned */
};

/* ---- discovery (scan.c, bpf.c) ------------------------------------------ */
/*
 * The scanners fill refs with state FOUND and every field they know (fd,
 * fd_flags from the O_CLOEXEC bit of fdinfo "flags:", open_flags without it,
 * offset = file position; maps: start/end/offset/prot/map_flags; target =
 * index into the targets array). CWD/ROOT/EXE refs have fd -1. URING refs
 * carry the ring's fd, INFLIGHT refs the socket's fd. The engine (engine.c)
 * decides the states afterwards: KEPT, UNREACHABLE, CUT, FAILED, SKIPPED.
 * Holders are sorted by pid; refs by type, then fd, then start.
 */

/* One process that holds at least one target. */
struct rv_holder {
	struct revoke_holder pub; /* pub.refs grows with refs_cap */
	size_t refs_cap;
	int pidfd; /* from scan time on, guards against pid reuse; -1 if none */
	bool self; /* the calling process */
	bool zombie_leader;
	int seccomp;		  /* Seccomp: from status */
	pid_t tracer;		  /* TracerPid: from status */
	char state;		  /* State: letter from status ('T' stopped, 'D'...) */
	struct rv_tracee *tracee; /* engine only: set while stopped; never freed by holders.c */
};

struct rv_holders {
	struct rv_holder *v;
	size_t n, cap;
};

/*
 * rv_scan_opts.flags bit (beside REVOKE_DISCOVERY_*): the /proc scanner
 * leaves fd_flags, open_flags and offset of FD refs at 0 instead of reading
 * /proc/PID/fdinfo/N for each matching fd (which costs three syscalls per
 * fd, more than the scan itself when every fd matches). For callers that
 * scan again before using those fields (the engine, once the holders are
 * stopped); rv_scan_pid ignores it.
 */
#define RV_SCAN_NO_FDINFO (1u << 31)

struct rv_bpf;

struct rv_scan_opts {
	const char *proc_root; /* "/proc" unless testing against a saved tree */
	uint64_t deadline_ns;  /* CLOCK_MONOTONIC; 0 = none */
	unsigned int flags;    /* REVOKE_DISCOVERY_*, RV_SCAN_NO_FDINFO */
	const int *ignore_fds; /* the caller's own fds to leave out (library internals) */
	size_t nignore_fds;
	/* Where the BPF scanner keeps its loaded programs between scans of the
	 * same targets (freed with rv_bpf_free); NULL: loaded for one scan. */
	struct rv_bpf **bpf;
};

void rv_bpf_free(struct rv_bpf *b); /* NULL is fine */

/*
 * Find every holder of TARGETS. Appends to *ret (which the caller owns and
 * frees with rv_holders_free even on failure). Processes and fds that vanish
 * mid-scan are normal and skipped. Returns the discovery used
 * (REVOKE_DISC_PROC or REVOKE_DISC_BPF) or -errno.
 */
int rv_scan(const struct rv_target *targets, size_t ntargets, const struct rv_scan_opts *opts,
	    struct rv_holders *ret);

/* Rescan one process (after it is stopped): replaces h->pub.refs. -ESRCH if gone. */
int rv_scan_pid(const struct rv_target *targets, size_t ntargets, const struct rv_scan_opts *opts,
		struct rv_holder *h);

/* The /proc scanner and the BPF scanner, behind rv_scan. */
int rv_scan_proc(const struct rv_target *targets, size_t ntargets, const struct rv_scan_opts *opts,
		 struct rv_holders *ret);
/* rv_scan_pid through /proc (scan.c); what rv_scan_pid does, whatever discovery is used. */
int rv_scan_proc_pid(const struct rv_target *targets, size_t ntargets,
		     const struct rv_scan_opts *opts, struct rv_holder *h);
/* -EOPNOTSUPP/-EPERM/-ENOSYS when BPF cannot be used here. */
int rv_scan_bpf(const struct rv_target *targets, size_t ntargets, const struct rv_scan_opts *opts,
		struct rv_holders *ret);

struct revoke_ref *rv_holder_add_ref(struct rv_holder *h); /* zeroed, fd = -1; NULL on ENOMEM */
struct rv_holder *rv_holders_add(struct rv_holders *hs, pid_t pid); /* zeroed, pidfd -1 */
struct rv_holder *rv_holders_find(struct rv_holders *hs, pid_t pid);
void rv_holder_clear(struct rv_holder *h);
void rv_holders_free(struct rv_holders *hs);
/* The order every scanner returns: holders by pid; refs by type, fd, start. */
void rv_holder_sort_refs(struct rv_holder *h);
void rv_holders_sort(struct rv_holders *hs);
/* qsort/bsearch order of struct rv_holder by pid. */
int rv_holder_cmp_pid(const void *a, const void *b);

/* ---- /proc parsers (procfs.c): pure functions over text --------------- */

struct rv_proc_stat {
	pid_t pid;
	char comm[64];
	char state;
	pid_t ppid;
	unsigned int flags; /* field 9: PF_* (PF_KTHREAD 0x00200000) */
	int num_threads;    /* field 20 */
};
/* Parses /proc/PID/stat text; comm may contain ')' and spaces. */
int rv_parse_stat(const char *text, struct rv_proc_stat *ret);

struct rv_proc_status {
	uid_t ruid, euid;
	char state;
	pid_t tgid;
	pid_t tracer;
	int seccomp;
	pid_t nspid_inner; /* last NSpid: entry */
};
int rv_parse_status(const char *text, struct rv_proc_status *ret);

struct rv_fdinfo {
	uint64_t pos;
	int flags; /* octal "flags:" field (open flags incl. O_CLOEXEC bit 02000000) */
	int mnt_id;
	uint64_t ino;	/* 0 if absent */
	int scm_fds;	/* unix sockets: "scm_fds:", -1 if absent */
	int user_files; /* io_uring: "UserFiles:", -1 if absent */
};
int rv_parse_fdinfo(const char *text, struct rv_fdinfo *ret);
/*
 * Iterates the names listed under "UserFiles:" in an io_uring fdinfo (full
 * paths since Linux 6.x, bare dentry names before). *CURSOR starts NULL.
 * Returns 0 with NAME (unescaped) filled, 1 at the end, -ENAMETOOLONG.
 */
int rv_fdinfo_next_user_file(const char *text, const char **cursor, char *name, size_t size);

struct rv_maps_entry {
	uint64_t start, end, offset;
	int prot;      /* PROT_* */
	int map_flags; /* MAP_SHARED / MAP_PRIVATE */
	unsigned int dev_major, dev_minor;
	uint64_t ino;
	const char *path; /* points into the parsed line, or NULL */
};
/* Parses one line of /proc/PID/maps (without the newline). */
int rv_parse_maps_line(const char *line, struct rv_maps_entry *ret);

/* Checked decimal parser for /proc names: 0 ok, -EINVAL otherwise. */
int rv_parse_int(const char *s, int *ret);

/* ---- stopping processes (ptrace.c) --------------------------------------- */

struct rv_tracee; /* one process (thread group), all its threads stopped */

/*
 * Seize and interrupt every thread of PID, re-listing /proc/PID/task until no
 * new thread appears; wait for each stop until DEADLINE_NS. On failure every
 * thread seized so far is released and REASON (size 128) says why:
 * -EPERM (already traced, not permitted), -ETIMEDOUT (would not stop: D state,
 * vfork), -ESRCH (exited).
 */
int rv_tracee_stop(pid_t pid, int pidfd, uint64_t deadline_ns, struct rv_tracee **ret,
		   char reason[128]);

/* One process to stop, for rv_tracees_stop. */
struct rv_stop_req {
	pid_t pid;
	int pidfd; /* -1 if none */
	/* The process's status as a scan just read it (tgid, state, tracer,
	 * seccomp), saving a read of /proc/PID/status; else it is read. */
	bool have_status;
	struct rv_proc_status status;
	struct rv_tracee *tracee; /* out: stopped, or NULL */
	int error;		  /* out: 0, or a positive errno as rv_tracee_stop's */
	char reason[128];	  /* out: why not, as rv_tracee_stop's */
};

/*
 * rv_tracee_stop for N processes at once: every thread of every process is
 * seized and interrupted first, then the stops are collected together (each
 * thread waited for by its tid, never waitpid(-1)). A process that fails is
 * released untouched; the others stay stopped. Returns 0 (results in REQS)
 * or -ENOMEM before anything was stopped.
 */
int rv_tracees_stop(struct rv_stop_req *reqs, size_t n, uint64_t deadline_ns);

/* rv_tracee_release for N tracees (NULL entries skipped), the waits of their
 * restores overlapped. Frees them all. */
void rv_tracees_release(struct rv_tracee **ts, size_t n);

/* Sleep a little more each call (N counts calls): a few yields, then sleeps
 * doubling to ~1 ms; false once DEADLINE passed. */
bool rv_ptrace_backoff(unsigned int *n, uint64_t deadline);

/* Run one syscall in the tracee. The int says whether injection worked;
 * *ret_result is the tracee's raw result (-errno on its failure). */
int rv_tracee_syscall(struct rv_tracee *t, long nr, long *ret_result, long a0, long a1, long a2,
		      long a3, long a4, long a5);

/*
 * rv_tracee_syscall in steps, for many tracees at once: start sets the
 * registers and resumes the injecting thread; poll looks once (no waiting)
 * whether it finished: 1 not yet, 0 done (*ret_result set), -errno as
 * rv_tracee_syscall (-ETIMEDOUT once its stop is overdue, -ESRCH it died).
 */
int rv_tracee_syscall_start(struct rv_tracee *t, long nr, const long args[6]);
int rv_tracee_syscall_poll(struct rv_tracee *t, long *ret_result);

/* Write LEN bytes at ADDR in the tracee (memory the caller made there). */
int rv_tracee_poke(struct rv_tracee *t, uint64_t addr, const void *data, size_t len);

/* Copy LEN bytes into scratch memory of the tracee (saved and restored on
 * release); *ret_addr is the tracee address. */
int rv_tracee_scratch(struct rv_tracee *t, const void *data, size_t len, uint64_t *ret_addr);

/* Restore registers, signal masks and scratch memory, detach every thread.
 * A process that was in group-stop (SIGSTOP) is left stopped. Frees T. */
int rv_tracee_release(struct rv_tracee *t);

/* Time this tracee has been stopped so far. */
uint64_t rv_tracee_stopped_ns(const struct rv_tracee *t);

/* The thread that runs the injected syscalls: /proc/PID/task/TID/fd shows
 * the descriptor table also when the leader is a zombie (/proc/PID/fd not). */
pid_t rv_tracee_tid(const struct rv_tracee *t);

/* ---- cutting (cut.c) -------------------------------------------------- */

/*
 * Cut every ref of H whose state is FOUND (KEPT/UNREACHABLE are left):
 * FD refs get a dead descriptor dup3'd over them, MAP refs a SIGBUS mapping.
 * T is H's stopped tracee, or NULL for the caller itself (cut directly).
 * Sets each ref's state/error. Returns 0 when all were cut, else -errno of
 * the first failure.
 */
int rv_cut_holder(struct rv_holder *h, struct rv_tracee *t);

/*
 * rv_cut_holder for N holders at once (each with hs[i]->tracee, or the
 * caller itself when hs[i]->self), the injected syscalls of all of them in
 * flight together. ret[i] (may be NULL) gets what rv_cut_holder would
 * return for hs[i] (-ESRCH: it died meanwhile). Returns 0, or -ENOMEM
 * before anything was cut.
 */
int rv_cut_holders(struct rv_holder **hs, size_t n, int *ret);

/* Coroutines for rv_cut_holders (arch/): switch to the stack whose sp was
 * saved in TO_SP, saving ours in *SAVE_SP; a fresh stack (TOP = one past
 * its end) is prepared so that switching to it calls ENTRY, which must
 * never return. */
void rv_arch_switch(void **save_sp, void *to_sp);
void *rv_arch_stack_init(void *top, void (*entry)(void));

/* ---- one userspace revoke at a time per uid (lock.c) ------------------ */

/* The lock's fd (close it to unlock), -1 when no lock can be had here (go
 * on without), or -ETIMEDOUT. */
int rv_engine_lock(uint64_t deadline_ns);

/* ---- native syscalls (native.c) --------------------------------------- */

/* Whether the running kernel has revoke(2)/frevoke(2) (probed once). */
bool rv_native_available(void);
int rv_native_revoke(const char *path);
int rv_native_frevoke(int fd);

/* ---- the engine (engine.c) ------------------------------------------------ */

struct rv_request {
	const char *const *paths; /* npaths paths, or NULL for frevoke */
	size_t npaths;
	int fd;		    /* frevoke: the descriptor; else -1 */
	unsigned int flags; /* REVOKE_* */
	int timeout_ms;	    /* > 0 */
	int keep_fd;	    /* -1, or keep descriptors sharing this description */
};

/* Runs one request. Returns 0 or -errno; *ret_report is set whenever the
 * targets were resolved (on failure too), else left untouched. */
int rv_engine_run(const struct rv_request *req, struct revoke_report **ret_report);

/* ---- time ------------------------------------------------------------- */

uint64_t rv_now_ns(void);

#endif
