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
 * Leaves in HS[FROM..] only the references their holders' credentials would
 * no longer let them make (the kernel's answer, asked as each holder by a
 * child of ours, bounded by DEADLINE): one still allowed goes; one whose
 * mode discovery does not show (an io_uring slot, a descriptor in flight) is
 * REVOKE_STATE_UNKNOWN; a holder whose credentials cannot be read or taken
 * becomes uninspected. Answers are kept per holder: a rescan asks nothing
 * again. Returns how many holders were left with nothing to cut.
 */
size_t rv_recheck_filter(struct rv_recheck *rc, struct rv_holders *hs, size_t from,
			 uint64_t deadline);

#endif
