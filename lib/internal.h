/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internal interfaces of librevoke. Conventions (see README "Hacking"):
 * functions return 0 (or a count) on success and -errno on failure, never
 * print, never exit; out-parameters (ret_*) are left untouched on failure.
 * Cleanup uses the _cleanup_ attributes from util.h.
 */
#ifndef REVOKE_INTERNAL_H
#define REVOKE_INTERNAL_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "revoke.h"
#include "stub/stub-abi.h"
#include "util.h"

#define RV_DEFAULT_TIMEOUT_MS 5000

/* ---- targets ---------------------------------------------------------- */

struct rv_target {
	dev_t dev;
	ino_t ino;
	mode_t mode;
	uid_t uid;
	dev_t rdev;
	int path_fd; /* O_PATH descriptor the caller resolved, owned; -1 for a submount */
	char *path;  /* as given (for messages), owned */
	/* REVOKE_MOUNT: the target is everything reached through mount
	 * MNT_ID (dev is its filesystem's, ino its root's). */
	bool mount;
	uint64_t mnt_id;
	unsigned int depth; /* mount: 0 for the one named, 1 for its submounts... */
	/* mount: a copy in another mount namespace that our unmount takes
	 * along (a peer or slave of ours); not unmounted or synced itself. */
	bool foreign;
	/* mount: a mapping's maps line shows this filesystem's device (not a
	 * stacked one's, as overlayfs shows its lower file's), so a line with
	 * another device cannot be a mapping through it. */
	bool maps_dev_exact;
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
	/* It holds a device target through another node of it (an alias:
	 * same device number, another inode), which revoke(2) does not reach. */
	bool alias;
	/* Its descriptors or mappings could not be looked at (another user's
	 * process, a non-dumpable one): it may hold a target. No refs. */
	bool uninspected;
	/* Not a process to stop: a kernel user (swap, loop) or the filesystem
	 * mounted in another namespace (mount.c). One unreachable ref. */
	bool other_user;
	int seccomp;	       /* Seccomp: from status */
	pid_t tracer;	       /* TracerPid: from status */
	char state;	       /* State: letter from status ('T' stopped, 'D'...) */
	pid_t nspid;	       /* its pid in its own pid namespace (NSpid:'s last), 0 if unknown */
	uint64_t vdso;	       /* its vDSO's address as the scan saw it, or 0 */
	unsigned int pf_flags; /* the leader's PF_* flags, when have_pf_flags */
	bool have_pf_flags;
	struct rv_tracee *tracee; /* engine only: set while stopped; never freed by holders.c */
	struct rv_wake *wake;	  /* engine only: its epoll waiters to complete (wake.c) */
	int dead_dir_how; /* engine only: how it reaches the dead directory (RV_DEAD_DIR_*) */
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
/*
 * rv_scan_opts.flags bit: the BPF scanner may leave a holder's pidfd at -1
 * instead of opening one (the /proc scanner opens it first, to tie what it
 * reads to the process, and keeps it). For the engine's rescan of stopped
 * holders, which keeps the pidfds it has and opens one for a new holder.
 */
#define RV_SCAN_NO_PIDFD (1u << 30)

struct rv_bpf;

struct rv_scan_opts {
	const char *proc_root; /* "/proc" unless testing against a saved tree */
	uint64_t deadline_ns;  /* CLOCK_MONOTONIC; 0 = none */
	unsigned int flags;    /* REVOKE_DISCOVERY_*, RV_SCAN_NO_FDINFO, RV_SCAN_NO_PIDFD */
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
/* Moving holders and references, the one way: DST takes SRC's refs
 * (replacing its own); a new slot of HS takes SRC whole (refs and pidfd:
 * SRC is left owning nothing); DST takes every holder of SRC (emptied). */
void rv_holder_take_refs(struct rv_holder *dst, struct rv_holder *src);
struct rv_holder *rv_holders_move_in(struct rv_holders *hs, struct rv_holder *src);
int rv_holders_merge(struct rv_holders *dst, struct rv_holders *src);
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

/* vfork.c: whether thread TID of PID waits in vfork() (state D) for a
 * child that shares its memory: 1 with *RET_CHILD, 0 not (*RET_STATE: its
 * state), -errno. *RET_CHILD is 0 or the child an earlier call found
 * (then asked about first: a search reads every process's stat without
 * CONFIG_PROC_CHILDREN). */
int rv_vfork_parent(pid_t pid, pid_t tid, char *ret_state, pid_t *ret_child);

struct rv_proc_status {
	uid_t ruid, euid;
	char state;
	pid_t tgid;
	pid_t tracer;
	int seccomp;
	pid_t nspid_inner; /* last NSpid: entry */
	pid_t ppid;
	/* SigPnd, ShdPnd, SigBlk, SigIgn, SigCgt (bit N-1 = signal N) */
	bool have_sigsets;
	uint64_t sig_pnd, shd_pnd, sig_blk, sig_ign, sig_cgt;
	bool have_cap_eff;
	uint64_t cap_eff; /* CapEff: bit N = capability N */
};
int rv_parse_status(const char *text, struct rv_proc_status *ret);

/* A process's credentials as /proc/PID/status shows them (REVOKE_RECHECK):
 * Uid:, Gid: (real, effective, saved, filesystem), Groups:, CapEff:. */
#define RV_CREDS_MAX_GROUPS 256
struct rv_proc_creds {
	uid_t uid[4];
	gid_t gid[4];
	size_t ngroups;
	gid_t groups[RV_CREDS_MAX_GROUPS];
	uint64_t cap_eff;
};
/* -EINVAL when a field is missing or malformed, -E2BIG past
 * RV_CREDS_MAX_GROUPS groups; RET untouched on failure. */
int rv_parse_creds(const char *text, struct rv_proc_creds *ret);

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
/* The same, with the entry's slot in the ring's table (*RET_SLOT, set only
 * with 0): the index an IORING_REGISTER_FILES_UPDATE names. */
int rv_fdinfo_next_user_slot(const char *text, const char **cursor, char *name, size_t size,
			     uint32_t *ret_slot);

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

/* The registrations listed in an epoll descriptor's fdinfo, one per call:
 * "tfd: N events: E data: D  pos:P ino:I sdev:S". *CURSOR starts NULL.
 * Returns 0 with RET filled, 1 at the end, -EINVAL for a malformed line. */
struct rv_epoll_item {
	int tfd;
	uint32_t events;
	uint64_t data;
	uint64_t ino;
	unsigned int sdev; /* the kernel's s_dev: major << 20 | minor */
};
int rv_fdinfo_next_epoll_item(const char *text, const char **cursor, struct rv_epoll_item *ret);

/* One line of /proc/locks ("1: FLOCK  ADVISORY  WRITE 123 fe:00:4567 0 EOF";
 * blocked waiters have "->" after the number). */
struct rv_lock_entry {
	pid_t pid;
	unsigned int dev_major, dev_minor;
	uint64_t ino;
	bool flock; /* FLOCK, else POSIX, OFDLCK, LEASE... */
};
int rv_parse_locks_line(const char *line, struct rv_lock_entry *ret);

/* Checked decimal parser for /proc names: 0 ok, -EINVAL otherwise. */
int rv_parse_int(const char *s, int *ret);

/* /proc/PID/task/TID/syscall of a thread blocked in a syscall: "NR 0xARG0 ...
 * 0xARG5 0xSP 0xPC". -ENOENT for "running" or "-1 ..." (in no syscall). */
struct rv_proc_syscall {
	long nr;
	uint64_t args[6];
};
int rv_parse_syscall(const char *text, struct rv_proc_syscall *ret);

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
	unsigned int pf_flags;	  /* the leader's PF_* flags from the scan, if have_status */
	uint64_t vdso;		  /* its vDSO's address from the scan, or 0 */
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

/*
 * Tracer threads (tracee/pool.c) for the calling thread's next stops: each
 * tracee stopped from now on is owned by one of them until its release,
 * and every phase runs in the owners at once. Sized for NHOLDERS: the CPUs
 * we may run on, capped at 8, at least 16 holders each; REVOKE_TRACERS=N
 * forces N (1: the calling thread alone). Returns the number of threads,
 * the caller's included (1 when none could be started). rv_tracers_end()
 * after the last release, in the same thread: an exiting tracer's tracees
 * are detached by the kernel.
 */
size_t rv_tracers_begin(size_t nholders);
void rv_tracers_end(void);
/* Calls FN(i, ARG) for every non-NULL TS[i], in the thread that owns it,
 * the owners at once: for what issues ptrace requests on many tracees. */
void rv_tracees_each(struct rv_tracee **ts, size_t n, void (*fn)(size_t i, void *arg), void *arg);

/* rv_tracee_release for N tracees (NULL entries skipped), the waits of their
 * restores overlapped. Frees them all. */
void rv_tracees_release(struct rv_tracee **ts, size_t n);

/* Sleep a little more each call (N counts calls): a few yields, then sleeps
 * doubling to ~1 ms; false once DEADLINE passed. */
bool rv_ptrace_backoff(unsigned int *n, uint64_t deadline);

/* ---- programs for the stub (tracee/prog.c) -------------------------------- */

/*
 * What the engine asks a holder to do, as a list of syscalls the stub runs
 * in one go (stub/stub-abi.h): ops, and data they point at. rv_prog_add
 * returns the op's index (for ref/subst of later ops) or -errno;
 * rv_prog_data copies LEN bytes (BUF NULL: zeros) and returns their offset;
 * rv_prog_arg_is_data turns arg ARG of op OP from that offset into the
 * data's address in the holder.
 */
#define RV_PROG_MAX_OPS	 512
#define RV_PROG_MAX_DATA 16384

struct rv_prog {
	struct rv_op *ops;
	uint8_t *data_args; /* per op: bit a set when args[a] is a data offset */
	size_t nops, cap;
	uint8_t *data;
	size_t data_len, data_cap;
	/* Offsets of 8-byte words of data that hold data offsets: pointers
	 * inside a structure the ops pass, set once the data's address is known */
	size_t *data_ptrs, ndata_ptrs;
	/* After a run: */
	bool done;  /* the stub reached the program's end */
	int failed; /* the op that ended it early (RV_OPF_REQUIRED), or -1 */
};

struct rv_prog *rv_prog_new(void);
void rv_prog_free(struct rv_prog *p);
int rv_prog_add(struct rv_prog *p, int kind, long nr, const long args[6], unsigned int flags,
		int ref, int subst);
int rv_prog_data(struct rv_prog *p, const void *buf, size_t len);
void rv_prog_arg_is_data(struct rv_prog *p, int op, int arg);
/* The 8-byte word at data offset AT becomes the address of data offset TO. */
int rv_prog_data_ptr(struct rv_prog *p, int at, int to);
/* Those words, for data placed at ADDR (BUF: the data's copy, written there). */
void rv_prog_relocate(const struct rv_prog *p, uint8_t *buf, uint64_t addr);
/* Whether every op of P that ran succeeded and none was skipped by a
 * failure (cleanup ops aside). */
bool rv_prog_all_ok(const struct rv_prog *p);
/* The program T runs now (in a done callback), or NULL. */
const struct rv_prog *rv_tracee_prog(const struct rv_tracee *t);
/* Run P in the calling process itself, with the stub's semantics. */
void rv_prog_run_local(struct rv_prog *p);
/* An op's result after a run (*RET_RAN: it ran), -ENOEXEC if it did not. */
long rv_prog_result(const struct rv_prog *p, int op, bool *ret_ran);

/*
 * Run PROGS[i] in the stopped TS[i] (NULL entries skipped), all at once, one
 * stop each. RET[i]: 0, the program ran (its results are in it; the tracee
 * is stopped again, exactly as before but for what the program did); or
 * -errno: -ENOSPC, -EOPNOTSUPP... it did not start and nothing changed;
 * -ETIMEDOUT, it did not end by the tracee's deadline (it ends and goes
 * home by itself); -ESRCH, the holder died; -EFAULT, the program faulted
 * and was stopped there. rv_tracee_why() says why in words.
 */
int rv_tracees_run(struct rv_tracee **ts, struct rv_prog **progs, size_t n, int *ret);
/*
 * The first half of rv_tracees_run on its own: every program placed in its
 * holder's memory, nothing run. RET[i] as rv_tracees_run's for what can go
 * wrong before anything runs. Then rv_tracees_run (PROGS NULL: the
 * prepared ones) or rv_tracees_unprepare (every byte put back): all or
 * nothing across holders for everything but the programs' own syscalls.
 */
int rv_tracees_prepare(struct rv_tracee **ts, struct rv_prog **progs, size_t n, int *ret);
void rv_tracees_unprepare(struct rv_tracee **ts, size_t n);
int rv_tracee_run(struct rv_tracee *t, struct rv_prog *p);
const char *rv_tracee_why(const struct rv_tracee *t);

/* One syscall in the tracee, as a program of one op. The int says whether
 * the program ran; *ret_result is the tracee's raw result (-errno). */
int rv_tracee_syscall(struct rv_tracee *t, long nr, long *ret_result, long a0, long a1, long a2,
		      long a3, long a4, long a5);

/* What happens the moment T's next program is over and T is put back: FN
 * (may be NULL) is called with ARG while every thread is still stopped,
 * then, with RELEASE, every thread is detached (the holder goes on at once,
 * before the other tracees' programs are over; rv_tracees_release then only
 * frees it). LAST: no program runs in T after this one (RELEASE implies
 * it); on aarch64 the injecting thread may then wait for its release at the
 * entry of its own call instead (run.c, "back into the thread's own call"). */
void rv_tracee_when_done(struct rv_tracee *t, void (*fn)(struct rv_tracee *t, void *arg), void *arg,
			 bool release, bool last);

/* Put every thread back and detach it. A process that was in group-stop
 * (SIGSTOP) is left stopped. Frees the tracees. */
void rv_tracees_release(struct rv_tracee **ts, size_t n);
int rv_tracee_release(struct rv_tracee *t);

struct rv_regs;
/* Bound T's waits by DEADLINE_NS at the earliest from now on (the point
 * of no return: what was planned is finished). */
void rv_tracee_extend_deadline(struct rv_tracee *t, uint64_t deadline_ns);

/* Time this tracee has been stopped so far. */
uint64_t rv_tracee_stopped_ns(const struct rv_tracee *t);

/* Threads of a stopped tracee, for what is done to them directly: I from 0
 * while it returns 0; -ESRCH for a thread that is gone (skip it), -ENOENT
 * past the last. This and rv_tracee_complete_syscall() only in the thread
 * that owns T (rv_tracees_each(), or a done callback of its program). */
int rv_tracee_thread_regs(const struct rv_tracee *t, size_t i, pid_t *ret_tid,
			  struct rv_regs *ret_regs);
/* The first argument of the call thread TID (registers REGS) returned from,
 * where the registers lost it (rv_arch_arg0_lost): what /proc showed while
 * it blocked, if the rest of the call matches; -1 if unknown. */
long rv_tracee_lost_arg0(const struct rv_tracee *t, pid_t tid, const struct rv_regs *regs);
/* Make the syscall thread TID is stopped in return RESULT (it is not
 * restarted), and write LEN bytes at ADDR first (the holder's own memory,
 * as it could write it). */
int rv_tracee_complete_syscall(struct rv_tracee *t, pid_t tid, long result, uint64_t addr,
			       const void *buf, size_t len);

/* The thread that runs the programs: /proc/PID/task/TID/fd shows the
 * descriptor table also when the leader is a zombie (/proc/PID/fd not). */
pid_t rv_tracee_tid(const struct rv_tracee *t);

/* ---- cutting (cut.c) -------------------------------------------------- */

/*
 * Cut every ref of H whose state is FOUND (KEPT/UNREACHABLE are left):
 * FD refs get a dead descriptor over them, MAP refs a SIGBUS mapping.
 * T is H's stopped tracee, or NULL for the caller itself (cut directly).
 * Sets each ref's state/error. Returns 0 when all were cut, else -errno of
 * the first failure.
 */
int rv_cut_holder(struct rv_holder *h, struct rv_tracee *t);

/*
 * rv_cut_holder for N holders at once (each with hs[i]->tracee, or the
 * caller itself when hs[i]->self), one program per holder, all running
 * together. ret[i] (may be NULL) gets what rv_cut_holder would return for
 * hs[i] (-ESRCH: it died meanwhile). Returns 0, -ENOMEM before anything was
 * cut, or with RV_CUT_ALL_OR_NOTHING -EBUSY when some holder's program could
 * not be placed: then nothing ran anywhere (that holder's refs FAILED with
 * its reason, the others' still FOUND), or the error of hooks->commit
 * (nothing ran, every ref still FOUND).
 */
#define RV_CUT_ALL_OR_NOTHING 1u
struct rv_cut_hooks {
	/* Called as each holder's program is over (ALL_CUT: every ref cut),
	 * while its threads are still stopped. */
	void (*done)(struct rv_holder *h, bool all_cut, void *arg);
	void *arg;
	/* Then each holder is released at once. */
	bool release;
	/* Where cwd and root refs are moved (REVOKE_MOUNT); NULL if none. */
	const struct rv_dead_dir *dead_dir;
	/* The point of no return: called once every program is placed and
	 * every check passed, before the first one runs. -errno refuses the
	 * cut with nothing changed (the programs taken out again); 0 commits:
	 * every planned program then runs, each wait bounded by at least
	 * *DEADLINE_NS (set by commit) however late it is. */
	int (*commit)(void *arg, uint64_t *deadline_ns);
};
int rv_cut_holders(struct rv_holder **hs, size_t n, unsigned int flags,
		   const struct rv_cut_hooks *hooks, int *ret);

/* A holder whose program outlived its wait (refs FAILED with ETIMEDOUT)
 * finishes it by itself: look, until DEADLINE, at what /proc shows of those
 * refs, and mark the ones found cut CUT. Returns how many are still not
 * seen cut (a ref /proc cannot tell about stays as it was). */
size_t rv_cut_verify(struct rv_holder *h, uint64_t deadline);

/* The dead descriptor: an O_PATH descriptor of a memfd of this name, made
 * in each holder for its own use; its mappings are replaced by mappings of
 * the same (empty) memfd. */
#define RV_DEAD_NAME "revoked"
/* Whether FD (of the caller) is such a dead descriptor. */
bool rv_is_dead_fd(int fd);

/* ---- mounts as targets (mount.c) ----------------------------------------- */

/* Resolve REQ's paths as mount points: each the mount it names and (unless
 * REVOKE_NO_SUBMOUNTS) every mount beneath it, as targets in that order.
 * -EINVAL when a path is not a mount point. As rv_targets_resolve. */
struct rv_guard;
struct rv_request;
int rv_mounts_resolve(const struct rv_request *req, const struct rv_guard *guard,
		      struct rv_target **ret, size_t *ret_n);

/* The users no process table shows, appended to HS as holders whose refs are
 * unreachable: swap files (pid 0, "swap"), loop devices' backing files (pid
 * 0, "loopN"), the filesystem mounted in another mount namespace (a process
 * of it). Returns how many were added, or -errno. */
int rv_mounts_other_users(const struct rv_target *t, size_t n, struct rv_holders *hs);

/* syncfs() of every target's filesystem, each once. */
int rv_mounts_sync(const struct rv_target *t, size_t n, uint64_t deadline);

/* Unmount the targets, deepest first, with libmount, or NATIVE with the
 * kernel's forced unmount (which cuts their users too). *RET_DONE counts
 * those unmounted (or already gone); on failure DETAIL names the mount. */
int rv_mounts_umount(const struct rv_target *t, size_t n, bool native, size_t *ret_done,
		     char detail[128]);

/* The dead directory cwd and root refs are moved to: an empty directory,
 * made here (off every target), removed once every holder is in it. */
struct rv_dead_dir {
	char path[96];
	int fd; /* O_RDONLY: holders that cannot see PATH take it by pidfd_getfd() */
	pid_t pid;
};
int rv_dead_dir_make(const struct rv_target *t, size_t n, struct rv_dead_dir *ret);
void rv_dead_dir_remove(struct rv_dead_dir *d);

/* How holder PID can reach the dead directory: by its path (same mount
 * namespace and root as ours), by pidfd_getfd() from us (it may), or not
 * (-EOPNOTSUPP; WHY says why). NEED_CHROOT: it must also chroot(). */
enum { RV_DEAD_DIR_NONE = 0, RV_DEAD_DIR_PATH, RV_DEAD_DIR_PIDFD };
int rv_dead_dir_how(pid_t pid, bool need_chroot, const char **why);

/* ---- /proc by name (proc/proc.c): the one place that spells a /proc path.
 * PID is a process, or RV_PROC_SELF ("self"), RV_PROC_THREAD_SELF
 * ("thread-self"), RV_PROC_TOP (/proc itself: locks, swaps); TID > 0 adds
 * "task/TID". FMT (printf) names the file under it ("." the directory). The
 * openers behave as the libc call they are named after (-1 or NULL with
 * errno), and open close-on-exec. */
#define RV_PROC_SELF	    0
#define RV_PROC_TOP	    (-1)
#define RV_PROC_THREAD_SELF (-2)
extern const char rv_proc_root[]; /* "/proc", the scanners' default root */
int rv_proc_path(char *buf, size_t size, pid_t pid, pid_t tid, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
int rv_proc_open(pid_t pid, pid_t tid, int flags, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
FILE *rv_proc_fopen(pid_t pid, pid_t tid, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
DIR *rv_proc_opendir(pid_t pid, pid_t tid, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
ssize_t rv_proc_readlink(pid_t pid, pid_t tid, char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Declared here too: <sys/stat.h> has it only under _GNU_SOURCE, which a
 * file built outside meson (kernel/run-tests' native-test) may not define. */
struct statx;
int rv_proc_statx(pid_t pid, pid_t tid, int flags, unsigned int mask, struct statx *stx,
		  const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* /proc/PID/NAME read whole into BUF, NUL-terminated: its length, or
 * -ESRCH (gone), -errno (proc/proc.c). */
int rv_proc_read_text(pid_t pid, const char *name, char *buf, size_t size);
/* The same of thread TID's (0: the process's) /proc/PID/task/TID/NAME. */
int rv_proc_read_task_text(pid_t pid, pid_t tid, const char *name, char *buf, size_t size);
/* /proc/PID/status, parsed. */
int rv_proc_status_of(pid_t pid, struct rv_proc_status *ret);
/* /proc/PID/status's credentials (proc/proc.c). */
int rv_proc_creds_of(pid_t pid, struct rv_proc_creds *ret);

/* ---- revoke calls and each other (lock.c) ---------------------------- */

/* One userspace revoke at a time per uid: FOR_UID's (the caller's own, or
 * the helper's client's). The lock's fd (close it to unlock), -1 when no
 * lock can be had here (go on without), or -ETIMEDOUT (*RET_OWNER: a process
 * holding it, or 0; *RET_WAITED: how long this waited). */
int rv_engine_lock(uid_t for_uid, uint64_t deadline_ns, pid_t *ret_owner, uint64_t *ret_waited);

/* Registers the calling process as inside a revoke call until the returned
 * fd is closed (-1: no registration can be had here). */
int rv_calls_register(void);

/* The processes inside a revoke call that UID's call believes (UID's own
 * registrations and root's), sorted. */
struct rv_calls {
	pid_t *pids;
	size_t n;
};
int rv_calls_of(uid_t uid, struct rv_calls *ret);
bool rv_calls_has(const struct rv_calls *c, pid_t pid);

/* ---- native syscalls (native.c) --------------------------------------- */

/* Whether the running kernel has revoke(2)/frevoke(2) (probed once). */
bool rv_native_available(void);
int rv_native_revoke(const char *path);
int rv_native_frevoke(int fd);
/* FD's open file description only, in every process that shares it. */
int rv_native_revoke_file(int fd);
/* The forced unmount, umount2(MOUNTPOINT, UMOUNT_REVOKE), when the running
 * kernel has it (probed once; REVOKE_ENGINE=ptrace turns it off): synced,
 * detached with its propagated copies, every file opened through them
 * revoked, cwd/root on them moved to a dead directory, synced again.
 * 0, or -errno: -EBUSY before anything changed (submounts, a program
 * running from it, a swap file, a loop backing file), -EINVAL (not a mount
 * point, the caller's root), -EPERM, -ENOSYS (not available); an error of
 * the revoke itself (-EINTR, the drain's -EBUSY) comes after the detach.
 * The super block (and the device) goes only once the holders have closed
 * their revoked descriptors and unmapped their mappings. */
bool rv_native_umount_available(void);
int rv_native_umount(const char *mountpoint);

/* ---- the engine (engine.c) ------------------------------------------------ */

struct rv_request {
	const char *const *paths; /* npaths paths, or NULL for frevoke */
	size_t npaths;
	int fd;		    /* frevoke: the descriptor; else -1 */
	unsigned int flags; /* REVOKE_* */
	int timeout_ms;	    /* > 0 */
	int keep_fd;	    /* -1, or keep descriptors sharing this description */
	pid_t ns_pid;	    /* look the paths up as this process sees them; 0: as we do */
	/* engine.c: ns_pid's root and current directory (O_PATH), else -1 */
	int ns_root_fd, ns_cwd_fd;
	uint64_t deadline_ns; /* engine.c: when the paths must be looked up by */
	/* The helper (revoked): the targets are these descriptors, which a
	 * client resolved with its own permissions and sent; the call owns
	 * them (closes them). paths is NULL and fd -1. */
	const int *fds;
	size_t nfds;
	/* The helper: the permission check is for this client's uid (it owns
	 * every target or is 0), not for the calling process. */
	bool for_client;
	uid_t client_uid;
	/* The selection of holders (revoke_opts.pids, uids, cgroup), as the
	 * caller gave it; kinds/select.c resolves and applies it. */
	const pid_t *pids;
	size_t npids;
	const uid_t *uids;
	size_t nuids;
	const char *cgroup;
};

/* At most this many pids and uids in a selection. */
#define RV_SELECT_MAX 64

/* Whether REQ selects some holders only. */
static inline bool rv_request_selects(const struct rv_request *req)
{
	return req->npids || req->nuids || (req->cgroup && *req->cgroup);
}

/* Runs one request, bounded by its timeout whatever the kernel does (a path
 * lookup stuck on a hung FUSE server included): the work runs in a thread
 * of its own, which the caller stops waiting for at the end of the budget.
 * Returns 0 or -errno; *ret_report is set whenever the targets were
 * resolved or the call timed out (on failure too), else left untouched. */
int rv_engine_run(const struct rv_request *req, struct revoke_report **ret_report);

/* ---- the helper's client (helper.c) ------------------------------------ */

/* REQ through revoked(8): the files looked up here (O_PATH) or frevoke's
 * descriptor, sent with the options; the helper's result and report
 * (helper_pid set). -ECONNREFUSED/-ENOENT... when it cannot be reached,
 * -EAGAIN when it kept refusing (too many requests) until the deadline. */
int rv_helper_run(const struct rv_request *req, struct revoke_report **ret_report);
/* Whether the helper's socket exists; whether R says that nobody answered
 * on it (as opposed to an answer from it). */
bool rv_helper_present(void);
bool rv_helper_unanswered(int r);
/* What the public calls run (call.c): the engine, or the helper when
 * REVOKE_HELPER says so, or when the engine could not inspect every process
 * that may hold a target and the helper's socket exists (unless
 * REVOKE_NO_HELPER). */
int rv_helper_or_engine(const struct rv_request *req, struct revoke_report **ret_report);

/* ---- the report (report.c) ---------------------------------------------- */

/* A report for NTARGETS targets and NHOLDERS holders, zeroed; NULL on ENOMEM. */
struct revoke_report *rv_report_new(size_t ntargets, size_t nholders);
/* Frees a report, whoever made it (NULL is fine). */
void rv_report_destroy(struct revoke_report *report);
/* REVOKE_ENGINE_*'s name, or NULL (report.c; revoke_engine_name()). */
const char *rv_engine_name(int engine);

/* ---- time, CPUs (time.c, cpus.c) ------------------------------------- */

uint64_t rv_now_ns(void);
/* The CPUs the calling thread may run on (its affinity; at least 1): what the
 * tracer threads and the BPF passes size themselves by. */
size_t rv_cpus(void);

#endif
