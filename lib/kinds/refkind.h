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

struct rv_cut; /* one holder's program being built (cut.c) */

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
};

/* The entry of TYPE, or NULL. */
const struct rv_refkind *rv_refkind(int type);
/* Iterate: for (k = rv_refkinds(&n); ...) */
const struct rv_refkind *rv_refkinds(size_t *ret_n);

/* cut.c: the cut steps of the kinds it knows. */
int rv_cut_add_fd(struct rv_cut *c, const struct revoke_ref *ref, int *ret_op);
int rv_cut_add_map(struct rv_cut *c, const struct revoke_ref *ref, int *ret_op);
int rv_cut_add_cwd(struct rv_cut *c, const struct revoke_ref *ref, int *ret_op);
int rv_cut_add_root(struct rv_cut *c, const struct revoke_ref *ref, int *ret_op);
int rv_cut_add_uring(struct rv_cut *c, const struct revoke_ref *ref, int *ret_op);
int rv_uring_check(const struct rv_holder *h, const struct revoke_ref *ref, char *why, size_t size);

#endif
