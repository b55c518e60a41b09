/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One open file description as the target (description.c). */
#ifndef REVOKE_DESCRIPTION_H
#define REVOKE_DESCRIPTION_H

#include "internal.h"

/*
 * Leaves in HS[FROM..] only the references to the open file description
 * DESC_FD (a descriptor of the caller's) holds: a descriptor that shares it
 * stays (to cut), one of another open of the file goes; a mapping or an
 * io_uring slot, which discovery cannot tie to a description, is marked
 * REVOKE_STATE_UNKNOWN (never cut, never guessed); a holder that cannot be
 * compared (no ptrace access: kcmp refuses) becomes uninspected. Returns how
 * many holders were left with nothing to cut.
 */
size_t rv_description_filter(int desc_fd, struct rv_holders *hs, size_t from);

#endif
