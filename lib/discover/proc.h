/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private to discover/: proc_one.c (reading one process from /proc),
 * hidden.c (what is behind its descriptors), context.c (the scan's context
 * and workers), pidref.c (pidfds), proc_all.c (the whole-system scan spread
 * over worker threads) and scan.c; bpf.c uses rv_holder_pidfd and
 * rv_scan_proc_pid.
 */
#ifndef REVOKE_DISCOVER_PROC_H
#define REVOKE_DISCOVER_PROC_H

#include <pthread.h>
#include <stdatomic.h>

#include "internal.h"

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

struct target_names {
	char *real;	  /* readlink of the O_PATH descriptor, or NULL */
	const char *base; /* last component of real (or of the given path) */
};

struct scan_ctx {
	const struct rv_target *targets;
	size_t ntargets;
	const struct rv_scan_opts *opts;
	int proc_fd;
	bool procfs; /* proc_fd is a procfs (not a saved tree) */
	pid_t self;
	dev_t anon_dev; /* anon_inodefs, where io_uring rings live */
	bool have_anon_dev;
	struct target_names *names;
	/* Every target's inode number is what maps shows for a mapping of it
	 * (see maps_by_ino): map_files is looked at only on lines with one. */
	bool maps_by_ino;
	bool by_mount; /* some target is a mount (REVOKE_MOUNT) */
	/* Every target is a mount whose maps lines show its device: only lines
	 * with one of those devices need map_files looked at. */
	bool maps_by_dev;
	/* map_files is refused without CAP_SYS_ADMIN/CAP_CHECKPOINT_RESTORE
	 * (EPERM is global): stop asking once refused. */
	atomic_int map_files_denied;
	pid_t *pids;
	size_t npids;
	atomic_size_t next;
	atomic_int error; /* first fatal error, 0 if none */
	long pidfd_max;	  /* for rv_holder_pidfd, read before the workers start */
};

struct map_key {
	unsigned int major, minor;
	uint64_t text_ino;
	dev_t dev; /* the identity it resolved to */
	uint64_t ino;
	uint64_t mnt_id;    /* and the mount it was reached through, or 0 */
	uint32_t path_hash; /* mount targets: the same file through another
			     * mount is another key (its maps path differs) */
};

struct scan_worker {
	struct scan_ctx *ctx;
	struct rv_holders hs;
	struct rv_holder tmp; /* the process being scanned */
	bool hidden;	      /* some of its entries were not ours to read */
	/* io_uring rings: its descriptors of them (the first few) and the
	 * rings it maps (SQ ring mappings); more rings mapped than held is a
	 * ring whose files no fdinfo lists */
	int ring_fds[16];
	unsigned int nring_fds, ring_maps;
	char *buf;
	size_t bufsize;
	struct map_key *keys;
	size_t nkeys, keys_cap;
	char *peek; /* data buffer for MSG_PEEK, allocated when first needed */
	pthread_t thread;
	char dents[16384] __attribute__((aligned(8)));
};

int rv_proc_ctx_init(struct scan_ctx *ctx, const struct rv_target *targets, size_t ntargets,
		     const struct rv_scan_opts *opts);
void rv_proc_ctx_done(struct scan_ctx *ctx);
int rv_proc_worker_init(struct scan_worker *w, struct scan_ctx *ctx);
void rv_proc_worker_done(struct scan_worker *w);

/* Reads a whole /proc file into w->buf (NUL-terminated); returns its length. */
ssize_t rv_proc_read_at(struct scan_worker *w, int dir, const char *name);
/* The same for a file of one seq_file record (stat, status, fdinfo/N): one
 * read instead of two when it fits w->buf. */
ssize_t rv_proc_read_record_at(struct scan_worker *w, int dir, const char *name);

/*
 * Collects the refs of PID into w->tmp (emptied first). Returns 0 (with
 * *ret_st filled), -ESRCH when the process is gone or holds nothing that can
 * be looked at (kernel thread, zombie), or -errno. *PIDFD is used, or opened
 * when needed (in-flight fds), for the caller to keep or close.
 */
int rv_proc_scan_one(struct scan_worker *w, pid_t pid, int *pidfd, struct rv_proc_stat *ret_st);

/* Whether the first cheaply checkable ref of w->tmp still holds (pid reuse). */
bool rv_proc_recheck(struct scan_worker *w, pid_t pid);

/* Sorts w->tmp's refs and moves them into H (replacing H's). */
void rv_proc_take_refs(struct scan_worker *w, struct rv_holder *h);

int rv_pidfd_open(pid_t pid);
/*
 * The pidfd a holder keeps: *PIDFD when already open, else a new one. Sets
 * *PIDFD to -1 (closing it) when none can be kept: no pidfd_open (ENOSYS),
 * out of descriptors (EMFILE/ENFILE), or too close to RLIMIT_NOFILE to keep
 * one per holder; a holder without one is still a holder (the ptrace layer
 * takes -1). Other errors of pidfd_open are returned (-ESRCH: gone). *MAX
 * caches the limit for one scan: start it at 0.
 */
int rv_holder_pidfd(pid_t pid, int *pidfd, long *max);
/* The highest descriptor rv_holder_pidfd lets a holder keep (< 0: none). */
long rv_pidfd_max(void);
int rv_pidfd_alive(int pidfd); /* 0, or -ESRCH once the process is gone */
/* pidfd_getfd(PIDFD, FD): the caller's copy of the process's FD, or -1. */
int rv_pidfd_getfd(int pidfd, int fd);

/* The decimal digits of V at P (a /proc name, built without snprintf). */
void rv_fmt_uint(char *p, unsigned int v);

/* What proc_one.c keeps in w->tmp (hidden.c adds to it). */
struct revoke_ref *rv_scan_add_ref(struct scan_worker *w, int type, size_t target, int fd);
bool rv_scan_ref_exists(struct scan_worker *w, int type, size_t target, int fd);
int rv_scan_fdinfo_of(struct scan_worker *w, int dir, int *fdinfo_dir, int fd,
		      struct rv_fdinfo *ret);

/* hidden.c: the references behind descriptor FD (FDD for a ring, named
 * FDNAME) of PID: a ring's registered files, a socket's descriptors in
 * flight; and the rings PID maps without a descriptor. */
int rv_scan_check_uring(struct scan_worker *w, int dir, int *fdinfo_dir, int fdd,
			const char *fdname, int fd);
int rv_scan_check_inflight(struct scan_worker *w, int dir, int *fdinfo_dir, pid_t pid, int fd,
			   int *pidfd);
int rv_scan_check_fdless_rings(struct scan_worker *w, pid_t pid);

/* Errors of a /proc entry that mean "this process or entry is gone". */
static inline bool rv_gone_errno(int e)
{
	return e == ENOENT || e == ESRCH;
}

/* Errors that mean "not visible to this caller" (another user's process). */
static inline bool rv_hidden_errno(int e)
{
	return e == EACCES || e == EPERM;
}

#endif
