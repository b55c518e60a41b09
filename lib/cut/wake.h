/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Event loops learn of a cut: a thread of a holder blocked in epoll_wait on a
 * set where a cut descriptor was registered would otherwise sleep on, its
 * registration gone with the file (Linux drops it at the file's last close,
 * silently). Its call is completed with an EPOLLHUP|EPOLLERR event for that
 * registration (its own data), as if the file had hung up; the loop then
 * reads the descriptor and gets EBADF. poll() and select() need nothing:
 * restarted after the stop, they see the dead descriptor (POLLNVAL, EBADF).
 */
#ifndef REVOKE_WAKE_H
#define REVOKE_WAKE_H

#include "internal.h"

struct rv_wake; /* one holder's waiters to complete */

/* Before the cut (H stopped, its refs final): which of its threads wait in
 * epoll_wait on a set that holds a registration of a descriptor about to be
 * cut. *RET is NULL when none. -ENOMEM. */
int rv_wake_collect(struct rv_holder *h, const struct rv_target *targets, size_t ntargets,
		    struct rv_wake **ret);
/* After H was cut: complete those calls. Frees W. */
void rv_wake_apply(struct rv_holder *h, struct rv_wake *w);
void rv_wake_free(struct rv_wake *w);

#endif
