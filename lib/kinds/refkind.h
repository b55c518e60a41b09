/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kinds of reference a holder can have to a target, in one table:
 * how each is found, whether and how the userspace engine cuts it, and its
 * name in reports. Adding a kind is one entry here and its code.
 */
#ifndef REVOKE_REFKIND_H
#define REVOKE_REFKIND_H

#include "internal.h"

/* How the /proc scanner finds a kind (the BPF scanner mirrors it). */
enum rv_found_in {
	RV_FOUND_FD_TABLE, /* /proc/PID/fd/N */
	RV_FOUND_MAPS,	   /* /proc/PID/maps + map_files */
	RV_FOUND_LINK,	   /* /proc/PID/<link> (cwd, root, exe) */
	RV_FOUND_FDINFO,   /* behind another descriptor (a ring's files, a socket's queue) */
	RV_FOUND_SYSTEM,   /* /proc/swaps, loop devices, other namespaces (mount.c) */
};

struct rv_cut;	/* one holder's program being built (cut.c) */
struct rv_prog; /* a program (tracee/prog.c) */

/* A reference that is a process's directory rather than an open file. */
enum rv_dir {
	RV_DIR_NONE,
	RV_DIR_CWD,  /* its current directory */
	RV_DIR_ROOT, /* its root directory (chroot) */
};

struct rv_refkind {
	int type;	  /* REVOKE_REF_* */
	const char *name; /* revoke_ref_type_name() */
	enum rv_found_in found_in;
	const char *link; /* RV_FOUND_LINK: the /proc/PID entry */
	/* Adds the ops that cut REF to the holder's program; *RET_OP is the op
	 * whose success means "cut". NULL: the userspace engine cannot cut this
	 * kind, and UNREACHABLE says why (the reason shown with state
	 * "unreachable"). */
	int (*add_cut)(struct rv_cut *c, const struct revoke_ref *ref, int *ret_op);
	const char *unreachable;
	/* With add_cut: whether this one can be cut (the holder stopped or
	 * not); 0, or an errno with WHY set for the holder's reason. */
	int (*check)(const struct rv_holder *h, const struct revoke_ref *ref, char *why,
		     size_t size);
	/* A descriptor of the holder's table, which ref->fd names (the one
	 * kind a caller can dup, pidfd_getfd or wait on in epoll). */
	bool in_table;
	/* A directory the process is in: no open file, so the kernel's revoke
	 * does not reach it; the userspace engine moves it to the dead
	 * directory. */
	enum rv_dir dir;
	/* Asked of the holder before the point of no return (whether the cut
	 * can work there at all); the cut's outcome read from its op. */
	int (*add_probe)(struct rv_cut *c, const struct revoke_ref *ref);
	long (*outcome)(const struct rv_prog *p, int op, long res);
	/* Whether /proc shows REF of PID cut now (a cut whose program
	 * outlived its wait); NULL: nothing in /proc tells. */
	bool (*shows_cut)(pid_t pid, const struct revoke_ref *ref);
};

/* The entry of TYPE, or NULL. */
const struct rv_refkind *rv_refkind(int type);
/* The entry of REF's kind; an empty one (no property, no cut) for a kind
 * this library does not know. */
const struct rv_refkind *rv_refkind_of(const struct revoke_ref *ref);
/* The error the kernel's revoke leaves REF with, when it cannot take it
 * away (the running executable, an executable mapping), or 0. */
int rv_ref_native_refusal(const struct revoke_ref *ref);
/* Whether REF could be a revoke call's own lookup of a target: an O_PATH
 * descriptor, or one in flight to the helper (lock.c registers them). */
bool rv_ref_maybe_lookup(const struct revoke_ref *ref);
/* Iterate: for (k = rv_refkinds(&n); ...) */
const struct rv_refkind *rv_refkinds(size_t *ret_n);

/* cut.c: the cut steps of the kinds it knows. */
int rv_cut_add_fd(struct rv_cut *c, const struct revoke_ref *ref, int *ret_op);
int rv_cut_add_map(struct rv_cut *c, const struct revoke_ref *ref, int *ret_op);
int rv_cut_add_cwd(struct rv_cut *c, const struct revoke_ref *ref, int *ret_op);
int rv_cut_add_root(struct rv_cut *c, const struct revoke_ref *ref, int *ret_op);
int rv_cut_add_uring(struct rv_cut *c, const struct revoke_ref *ref, int *ret_op);
int rv_uring_check(const struct rv_holder *h, const struct revoke_ref *ref, char *why, size_t size);
/* The ops that ask, with no change, whether REF's ring takes updates from
 * the thread the program runs in. */
int rv_cut_add_ring_probe(struct rv_cut *c, const struct revoke_ref *ref);
/* What cutting a URING ref (op OP of P) gave, from the update's RES. */
long rv_cut_uring_outcome(const struct rv_prog *p, int op, long res);
/* verify.c */
bool rv_fd_shows_cut(pid_t pid, const struct revoke_ref *ref);
bool rv_map_shows_cut(pid_t pid, const struct revoke_ref *ref);

#endif
