/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Holders who may no longer hold the file (recheck.c). */
#ifndef REVOKE_RECHECK_H
#define REVOKE_RECHECK_H

#include "internal.h"

struct rv_recheck_entry;

struct rv_recheck {
	int *fds; /* per target, a descriptor of it to ask the kernel about */
	size_t ntargets;
	struct rv_recheck_entry *v; /* the answers, per holder (pid) */
	size_t n;
};

/* FDS[0..N) (not taken): each target's descriptor. -ENOMEM. */
int rv_recheck_init(struct rv_recheck *rc, const int *fds, size_t n);
void rv_recheck_done(struct rv_recheck *rc);
/*
 * Leaves in H only the references its credentials would no longer let it
 * make (the kernel's answer, asked as H by a child of ours, bounded by
 * DEADLINE): one still allowed goes; one whose mode discovery does not show
 * (an io_uring slot, a descriptor in flight) is REVOKE_STATE_UNKNOWN. 0;
 * -ESRCH when H is gone; -errno, with WHY, when its credentials cannot be
 * read or taken. Answers are kept per holder: a rescan asks nothing again.
 * For rv_narrow_refs() (classify.c).
 */
int rv_recheck_narrow(struct rv_recheck *rc, struct rv_holder *h, uint64_t deadline, char *why,
		      size_t size);

#endif
