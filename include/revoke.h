/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * <revoke.h> - revoke(2) and frevoke(2) for Linux.
 *
 * revoke(path) shuts down every open file descriptor that refers to the
 * file PATH names, in every process, and takes down every mapping of it.
 * frevoke(fd) does the same for the file FD refers to, but keeps every
 * descriptor that shares the caller's open file description.
 *
 * The caller must own the file (fsuid == st_uid) or hold CAP_FOWNER.
 * A revoked descriptor stays allocated until its holder closes it; every
 * operation on it but close() fails with EBADF. A revoked mapping keeps its
 * address range and raises SIGBUS on the next access.
 *
 * This header may be included together with <unistd.h>, whose glibc
 * declaration of revoke() is compatible with the one below. Linking with
 * -lrevoke binds revoke() to this library instead of glibc's ENOSYS stub.
 */
#ifndef REVOKE_H
#define REVOKE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LIBREVOKE_VERSION_MAJOR 1
#define LIBREVOKE_VERSION_MINOR 6

/*
 * revoke - revoke every reference to the file PATH names (symlinks followed).
 * Processes of other users are reached through the helper revoked(8) when
 * the caller cannot reach them itself and the helper runs (REVOKE_HELPER).
 * Returns 0 when every holder was cut (or there were none), else -1 and errno:
 *   EFAULT, ENOENT, ENOTDIR, EACCES, ELOOP, ENAMETOOLONG  path lookup failed
 *   EPERM   the caller neither owns the file nor holds CAP_FOWNER
 *   EBADF   PATH names a descriptor an earlier revoke left (a dead one)
 *   EBUSY   a holder could not be stopped, a reference cannot be reached, or
 *           a process that may hold the file could not be inspected (another
 *           user's, without privileges) and the helper could not do it;
 *           nothing was changed
 *   EAGAIN  the helper refused: too many requests from this user
 *   ETIMEDOUT the default timeout (5 s) ran out; nothing was changed
 *   ENOMEM, EMFILE  resources ran out; nothing was changed
 */
int revoke(const char *path);

/*
 * frevoke - like revoke() for the file FD refers to, but every descriptor
 * that shares FD's open file description (in any process) is kept.
 * EBADF if FD is not an open descriptor; otherwise errors as revoke().
 */
int frevoke(int fd);

/* Flags for struct revoke_opts.flags. */
enum {
	/* Cut what can be cut; report the rest instead of changing nothing. */
	REVOKE_BEST_EFFORT = 1u << 0,
	/* Do not follow a symbolic link in the last path component. */
	REVOKE_NOFOLLOW = 1u << 1,
	/* Only find the holders; change nothing (revoke --list). */
	REVOKE_LIST_ONLY = 1u << 2,
	/* Do not hang up terminals (TIOCVHANGUP) after cutting them. */
	REVOKE_NO_HANGUP = 1u << 3,
	/* Engine choice: default is the native syscalls when the running
	 * kernel has them, else the userspace (ptrace) engine. Since 1.3, a
	 * directory that is some process's current or root directory goes to
	 * the userspace engine by default: only it moves them (to a dead
	 * directory); REVOKE_ENGINE_NATIVE reports them unreachable. */
	REVOKE_ENGINE_USERSPACE = 1u << 4,
	REVOKE_ENGINE_NATIVE = 1u << 5, /* fail with ENOSYS if absent */
	/* Discovery choice: default is BPF iterators when allowed, else /proc. */
	REVOKE_DISCOVERY_PROC = 1u << 6,
	REVOKE_DISCOVERY_BPF = 1u << 7, /* fail if BPF cannot be used */
	/* Since 1.2. Each path names a mount point (else EINVAL); the targets
	 * are that mount and every mount beneath it, one report target per
	 * mount. A reference is whatever was reached through one of these
	 * mounts (by mount, not device: a bind mount of the same filesystem
	 * elsewhere is not a target). Descriptors and mappings are cut as
	 * revoke() cuts them; a current or root directory on it is moved to a
	 * dead directory (empty and deleted: every lookup fails with ENOENT);
	 * the executable and executable mappings from it are unreachable.
	 * Cutting (not listing) needs CAP_SYS_ADMIN; the mount the caller's
	 * own root directory is on is refused (EBUSY, no report). */
	REVOKE_MOUNT = 1u << 8,
	/* Since 1.2. REVOKE_MOUNT, with syncfs() first and the mounts unmounted
	 * (deepest first, through libmount) once every reference is cut. With
	 * REVOKE_LIST_ONLY, a dry run: 0 when the unmount would be tried. */
	REVOKE_UMOUNT = 1u << 9,
	/* Since 1.2. With REVOKE_MOUNT: the mount alone, not the mounts
	 * beneath it (an unmount of a mount that has some then fails). */
	REVOKE_NO_SUBMOUNTS = 1u << 10,
	/* Since 1.3. Go through the privileged helper revoked(8), which
	 * applies the owner rule (the caller owns every file, or is root) and
	 * reaches every user's processes: fail (ECONNREFUSED, ENOENT...) if it
	 * cannot be reached. By default an unprivileged caller goes through it
	 * only when some process could not be inspected directly and its socket
	 * (/run/revoke/revoked.sock, or $REVOKE_HELPER_SOCKET) exists. Not with
	 * REVOKE_MOUNT (EINVAL). */
	REVOKE_HELPER = 1u << 11,
	/* Since 1.3. Never go through the helper. */
	REVOKE_NO_HELPER = 1u << 12,
	/* Since 1.5, frevoke_ex() only (else EINVAL). FD's open file
	 * description, nothing else: every descriptor that shares it, in every
	 * process (the caller's FD and its other copies included: dup, fork,
	 * SCM_RIGHTS, pidfd_getfd), as EVIOCREVOKE does for an input device;
	 * other opens of the same file are untouched. Matched with
	 * kcmp(KCMP_FILE): a process the caller may not ptrace cannot be
	 * compared and is uninspected. A mapping or an io_uring slot of the
	 * file cannot be tied to a description by discovery: it is left
	 * untouched and reported with state REVOKE_STATE_UNKNOWN. Not with
	 * REVOKE_MOUNT or REVOKE_RECHECK (EINVAL); combines with a selection. */
	REVOKE_DESCRIPTION = 1u << 13,
	/* Since 1.5. Only the holders whose credentials would no longer let
	 * them open the file in the mode they hold it (a descriptor's read or
	 * write access, a mapping's: read, and write when it is shared and
	 * writable; a cwd or root: search), after a chmod, chown or ACL
	 * change. The kernel decides: a short-lived child of the caller takes
	 * each holder's uids, gids, groups and effective capabilities (those
	 * a permission check consults) and asks faccessat2(AT_EACCESS).
	 * Holders still allowed are never stopped; one whose credentials
	 * cannot be taken (without CAP_SETUID, CAP_SETGID) is uninspected.
	 * It cannot see LSM labels' say at open, user namespaces, nor O_PATH
	 * descriptors (which need no permission). Not with REVOKE_MOUNT
	 * (EINVAL); combines with a selection. */
	REVOKE_RECHECK = 1u << 14,
};

/* Extensible options: set sz = sizeof(struct revoke_opts). */
struct revoke_opts {
	size_t sz;
	unsigned int flags;
	/* Bound on the whole operation in milliseconds; 0 means 5000. */
	int timeout_ms;
	/* Keep every descriptor sharing this fd's open file description
	 * (what frevoke does); -1 keeps nothing. */
	int keep_fd;
	/*
	 * Since 1.3. Look the paths up as process NS_PID (in the caller's pid
	 * namespace) sees them: from its root directory, in its mount
	 * namespace, relative paths from its current directory; then revoke
	 * that file everywhere, as ever. 0: as the caller sees them. The
	 * caller must be allowed to read that process's /proc/PID/root
	 * (ptrace read access), else EPERM; ESRCH when there is no such
	 * process. Without CAP_SYS_CHROOT, an absolute path is resolved with
	 * openat2(RESOLVE_IN_ROOT) at its root (magic links such as
	 * /proc/N/fd/M fail with ELOOP) and a relative one must stay beneath
	 * its current directory (else EXDEV). Not with REVOKE_MOUNT or
	 * frevoke_ex() (EINVAL).
	 */
	pid_t ns_pid;
	/*
	 * Since 1.4. Only some processes: those given here (in the caller's
	 * pid namespace), those whose real or effective uid is one of UIDS,
	 * those in the cgroup v2 subtree CGROUP (a directory of a cgroup2
	 * file system, or a path below the cgroup root as /proc/PID/cgroup
	 * prints it, "/user.slice/user-1000.slice"). All the criteria given
	 * must hold (an empty one holds for everyone). All or nothing within
	 * the selection; a process outside it is never stopped, and is not
	 * counted as uninspected once it is known to be outside it. A selection
	 * that matches no holder changes nothing and succeeds. At most 64 pids
	 * and 64 uids (E2BIG). Not with REVOKE_MOUNT (EINVAL). The native
	 * system calls cannot select: a selection uses the userspace engine.
	 */
	const pid_t *pids; /* only these processes */
	size_t npids;
	const uid_t *uids; /* only processes whose real or effective uid is one of these */
	size_t nuids;
	const char *cgroup; /* only processes in this cgroup v2 subtree */
};

/* What a reference is. */
enum revoke_ref_type {
	REVOKE_REF_FD = 1,   /* a file descriptor */
	REVOKE_REF_MAP,	     /* a memory mapping */
	REVOKE_REF_CWD,	     /* current directory */
	REVOKE_REF_ROOT,     /* root directory */
	REVOKE_REF_EXE,	     /* the executable */
	REVOKE_REF_URING,    /* an io_uring registered (fixed) file; fd = the ring */
	REVOKE_REF_INFLIGHT, /* in flight in an SCM_RIGHTS message; fd = the socket */
	/* Since 1.2, with REVOKE_MOUNT; never cut (state UNREACHABLE). */
	REVOKE_REF_SWAP,  /* an active swap file on the mount; holder pid 0, comm "swap" */
	REVOKE_REF_LOOP,  /* a loop device backed by a file on it; pid 0, comm "loopN" */
	REVOKE_REF_MOUNT, /* the filesystem is also mounted in another mount
			   * namespace; the holder is one process of it */
};

/* What happened to a reference (or a holder, summarised). */
enum revoke_state {
	REVOKE_STATE_FOUND = 0,	  /* listed only (REVOKE_LIST_ONLY) */
	REVOKE_STATE_CUT,	  /* revoked */
	REVOKE_STATE_KEPT,	  /* kept: shares the frevoke caller's description */
	REVOKE_STATE_SKIPPED,	  /* left untouched because the call failed */
	REVOKE_STATE_FAILED,	  /* tried and failed; error says why */
	REVOKE_STATE_UNREACHABLE, /* this engine cannot cut it; error says why */
	/* A process that may hold a target but could not be looked at (another
	 * user's, a non-dumpable one); it has no refs. Since 1.1. */
	REVOKE_STATE_UNINSPECTED,
	/* Since 1.5, with REVOKE_DESCRIPTION or REVOKE_RECHECK: a reference
	 * discovery cannot decide about (which description made a mapping or
	 * fills an io_uring slot; the mode of a slot, whose a descriptor in
	 * flight will be): left untouched, never guessed. Does not fail the
	 * call. */
	REVOKE_STATE_UNKNOWN,
};

/* What the call was doing (revoke_report.failed_phase). Since 1.1. */
enum revoke_phase {
	REVOKE_PHASE_NONE = 0,
	REVOKE_PHASE_RESOLVE, /* looking the paths up */
	REVOKE_PHASE_LOCK,    /* waiting for another revoke by the same user */
	REVOKE_PHASE_SCAN,    /* finding the holders */
	REVOKE_PHASE_STOP,    /* stopping the holders */
	REVOKE_PHASE_CUT,     /* cutting */
	REVOKE_PHASE_RELEASE, /* letting the holders go */
	REVOKE_PHASE_SYNC,    /* syncing the filesystems (REVOKE_UMOUNT). Since 1.2 */
	REVOKE_PHASE_UMOUNT,  /* unmounting, after the cut (REVOKE_UMOUNT). Since 1.2 */
};

/* Where a call's time went (revoke_report.step_ns), finer than the phases.
 * Since 1.6; new steps are added at the end, before REVOKE_STEP_COUNT. */
enum revoke_step {
	REVOKE_STEP_START = 0, /* the call's own setup, before the first path */
	REVOKE_STEP_RESOLVE,   /* looking the paths up */
	REVOKE_STEP_LOCK,      /* waiting for another revoke by the same user */
	REVOKE_STEP_SCAN,      /* the first scan (loading BPF programs included) */
	REVOKE_STEP_STOP,      /* stopping the holders (ptrace) */
	REVOKE_STEP_RESCAN,    /* looking at the stopped holders again */
	REVOKE_STEP_PLACE,     /* what can fail, before the point of no return */
	REVOKE_STEP_CUT,       /* from the point of no return to the last cut */
	REVOKE_STEP_RELEASE,   /* letting the holders go */
	REVOKE_STEP_SYNC,      /* syncing the filesystems (REVOKE_UMOUNT) */
	REVOKE_STEP_UMOUNT,    /* unmounting */
	REVOKE_STEP_REPORT,    /* making this report */
	REVOKE_STEP_COUNT,
};

struct revoke_ref {
	int type;	     /* enum revoke_ref_type */
	int state;	     /* enum revoke_state */
	int error;	     /* errno for FAILED/UNREACHABLE/SKIPPED, else 0 */
	unsigned int target; /* index into revoke_report.targets */
	int fd;		     /* FD, URING, INFLIGHT: the descriptor; else -1 */
	int fd_flags;	     /* FD: FD_CLOEXEC or 0 */
	int open_flags;	     /* FD: the file status flags (O_ACCMODE, O_APPEND...) */
	int prot;	     /* MAP: PROT_READ|PROT_WRITE|PROT_EXEC */
	int map_flags;	     /* MAP: MAP_SHARED or MAP_PRIVATE */
	uint64_t start;	     /* MAP: address range [start, end) */
	uint64_t end;
	uint64_t offset; /* MAP: file offset; FD: file position; URING: the slot */
};

struct revoke_holder {
	pid_t pid;	     /* in the caller's pid namespace */
	uid_t uid;	     /* real uid */
	char comm[64];	     /* command name (/proc/PID/comm) */
	int state;	     /* enum revoke_state, summarising the refs */
	int error;	     /* why the process could not be stopped, or 0 */
	char reason[128];    /* human-readable detail for error, or "" */
	uint64_t stopped_ns; /* how long it was stopped (ptrace engine), else 0 */
	size_t nrefs;
	struct revoke_ref *refs;
};

struct revoke_target {
	char *path;
	dev_t dev;
	ino_t ino;
	mode_t mode;
	uid_t uid;
};

enum revoke_engine { REVOKE_ENGINE_NONE = 0, REVOKE_ENGINE_PTRACE, REVOKE_ENGINE_SYSCALL };
enum revoke_discovery { REVOKE_DISC_NONE = 0, REVOKE_DISC_PROC, REVOKE_DISC_BPF };

struct revoke_report {
	size_t ntargets;
	struct revoke_target *targets;
	size_t nholders;
	struct revoke_holder *holders;
	int engine;		 /* enum revoke_engine: what cut (NONE when listing) */
	int discovery;		 /* enum revoke_discovery: what found the holders */
	int error;		 /* the errno the call failed with, or 0 */
	uint64_t elapsed_ns;	 /* wall time of the whole call */
	uint64_t max_stopped_ns; /* longest time any holder was stopped */

	/*
	 * Since 1.1. A report only grows at its end: a field exists when
	 * offsetof(field) + its size <= sz. holders[] and refs[] are arrays of
	 * holder_size and ref_size bytes per element, the sizes of the structs
	 * in the <revoke.h> the caller was built with (revoke_opts.sz tells
	 * the library which): index them through revoke_report_holder() and
	 * revoke_report_ref() to stay right when they grow.
	 */
	size_t sz;
	size_t holder_size;
	size_t ref_size;
	uint64_t timeout_ns;	 /* the bound the call had */
	int failed_phase;	 /* enum revoke_phase where it failed, or 0 */
	pid_t failed_pid;	 /* the process it was busy with then, or 0 */
	char failed_detail[128]; /* e.g. "state D", or "" */
	size_t nuninspected;	 /* holders with state REVOKE_STATE_UNINSPECTED */
	/* Since 1.2: how many of the targets (mounts) REVOKE_UMOUNT unmounted. */
	size_t nunmounted;
	/* Since 1.3: the pid of the revoked(8) process that made the call for
	 * the caller, or 0 when the library made it itself. engine says which
	 * engine the helper used. */
	pid_t helper_pid;
	/* Since 1.3: nholders pids, holder I's pid as its own pid namespace
	 * sees it (the last field of NSpid: in /proc/PID/status; the same as
	 * its pid when it is in the caller's), or 0 when it could not be read
	 * (it exited, or pid 0 for a kernel user). */
	pid_t *holder_nspids;
	/* Since 1.6: CLOCK_MONOTONIC nanoseconds spent in each step (enum
	 * revoke_step; 0 for a step the call did not take), summing to about
	 * elapsed_ns. All 0 when revoked(8) made the call (helper_pid) or the
	 * caller stopped waiting before the end. For measuring, not deciding. */
	uint64_t step_ns[16];
};

/*
 * revoke_ex - revoke (or, with REVOKE_LIST_ONLY, list) the holders of
 * NPATHS files in one pass. OPTS may be NULL for defaults.
 * Returns 0 when everything was cut (or listed), -1 with errno otherwise
 * (as revoke(); with REVOKE_BEST_EFFORT, EBUSY means some references were
 * not cut while the others were). When RET_REPORT is not NULL it receives
 * a report to free with revoke_report_free() whenever the targets could be
 * resolved, on failure too, and when looking them up timed out (the targets
 * then have their paths and a zero mode); it is set to NULL otherwise.
 */
int revoke_ex(const char *const *paths, size_t npaths, const struct revoke_opts *opts,
	      struct revoke_report **ret_report);

/* frevoke_ex - frevoke() with options and a report (opts->keep_fd is ignored). */
int frevoke_ex(int fd, const struct revoke_opts *opts, struct revoke_report **ret_report);

void revoke_report_free(struct revoke_report *report);

/* Holder I of REPORT, reference J of holder H; NULL when out of range.
 * Since 1.1. */
const struct revoke_holder *revoke_report_holder(const struct revoke_report *report, size_t i);
const struct revoke_ref *revoke_report_ref(const struct revoke_report *report,
					   const struct revoke_holder *h, size_t j);

/* Stable lower-case names for the enums ("fd", "map", "cut", ...); NULL if unknown. */
const char *revoke_ref_type_name(int type);
const char *revoke_state_name(int state);
const char *revoke_engine_name(int engine);
const char *revoke_discovery_name(int discovery);
const char *revoke_phase_name(int phase); /* "stopping", ... Since 1.1. */
const char *revoke_step_name(int step);	  /* "rescan", ... Since 1.6. */

/* "1.0.0" */
const char *revoke_version(void);

#ifdef __cplusplus
}
#endif

#endif
