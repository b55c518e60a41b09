/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cut's own interfaces, between its files: ops.c builds the ops of each
 * kind of reference into one holder's program (struct rv_cut), room.c finds
 * the program's descriptors room in the holder's table, cut.c runs the
 * programs of every holder, verify.c looks at what a program did.
 */
#ifndef REVOKE_CUT_H
#define REVOKE_CUT_H

#include <sys/resource.h>

#include "internal.h"
#include "kinds/refkind.h"

struct rv_cut {
	struct rv_prog *p;
	int raise_op; /* RV_OP_RAISE_NOFILE, or -1 */
	int save_off; /* where it keeps the old limits */
	int orig_off; /* the limits to put back, when we raised the hard one */
	int restore_op;
	int memfd_op; /* memfd_create, or -1 */
	int dead_op;  /* the O_PATH open, or -1 */
	/* cwd and root (REVOKE_MOUNT): the dead directory, as the holder
	 * reaches it (rv_dead_dir_how), and its cwd kept across a chroot */
	const struct rv_dead_dir *dd;
	int dd_how;
	int pidfd_op; /* pidfd_open() of us, or -1 */
	int ddir_op;  /* its descriptor of the dead directory, or -1 */
	int cwd_op;   /* its cwd, opened before a chroot that must not move it */
	bool has_cwd; /* a cwd ref is cut in this program (then cwd moves anyway) */
};

/* Ends the program by closing what op REF opened, when it opened it. */
int rv_cut_add_close(struct rv_cut *c, int ref);
/* The ops that open the dead directory, and save the cwd before a chroot. */
int rv_cut_need_dead_dir(struct rv_cut *c);
int rv_cut_need_cwd_saved(struct rv_cut *c);

struct rv_room {
	int raise_op, restore_op, orig_off;
	unsigned int nfds; /* descriptors the program holds at once */
	bool raised;	   /* the hard limit was raised from outside */
	struct rlimit orig;
};

/* Room in H's table for P's own descriptors (room.c): -EMFILE with WHY set
 * when there is none and none can be made, nothing changed. */
int rv_cut_make_room(struct rv_holder *h, struct rv_prog *p, struct rv_room *room, char *why,
		     size_t size);
/* Puts back a hard limit rv_cut_make_room() raised, unless the program did. */
void rv_cut_unmake_room(const struct rv_holder *h, struct rv_room *room);

#endif
