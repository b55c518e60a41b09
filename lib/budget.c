/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The time budget's table (budget.h). */
#include "budget.h"

/*
 * Shares of the timeout at which each phase must be over. Waiting for
 * another revoke may take half; stopping (a holder in D state or a vfork
 * parent is waited for until the end of this share) leaves the last quarter
 * for looking again and cutting; the programs run until the end.
 */
static const unsigned int end_permille[] = {
    [RV_PH_RESOLVE] = 1000,
    [RV_PH_LOCK] = 500,
    [RV_PH_SCAN] = 1000,
    [RV_PH_STOP] = 750,
    [RV_PH_CUT] = 1000,
    [RV_PH_RELEASE] = 1000 + RV_OVERRUN_PERMILLE,
    /* An unmount syncs in the first half, and may unmount until the end
     * of the overrun (the holders are released by then). */
    [RV_PH_SYNC] = 500,
    [RV_PH_UMOUNT] = 1000 + RV_OVERRUN_PERMILLE,
    /* What is left after it is the finishing share: the programs, the
     * releases, a hangup, the unmount. */
    [RV_PH_COMMIT] = 900,
};

uint64_t rv_budget_deadline(const struct rv_budget *b, int p)
{
	unsigned int pm = p >= 0 && (size_t)p < ARRAY_SIZE(end_permille) && end_permille[p]
			      ? end_permille[p]
			      : 1000;

	return b->start_ns + b->timeout_ns / 1000 * pm;
}

uint64_t rv_budget_hard_end(const struct rv_budget *b)
{
	return rv_budget_deadline(b, RV_PH_RELEASE);
}
