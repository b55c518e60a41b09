/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One open file description as the target (description.c). */
#ifndef REVOKE_DESCRIPTION_H
#define REVOKE_DESCRIPTION_H

#include "internal.h"

/*
 * Leaves in H only the references to the open file description DESC_FD (a
 * descriptor of the caller's): a descriptor that shares it stays (to cut),
 * one of another open of the file goes; a mapping or an io_uring slot, which
 * discovery cannot tie to a description, is marked REVOKE_STATE_UNKNOWN
 * (never cut, never guessed). 0; -ESRCH when H is gone; -EPERM, with WHY,
 * when it cannot be compared (no ptrace access: kcmp refuses). For
 * rv_narrow_refs() (classify.c).
 */
int rv_description_narrow(int desc_fd, struct rv_holder *h, char *why, size_t size);

#endif
