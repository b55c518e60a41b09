/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One time budget per call: every phase's share of the timeout in one
 * table, every wait derived from it. A phase must end by its share of the
 * timeout (per mille of it, from the start); the release may run a little
 * past the end, never more than RV_OVERRUN_PERMILLE.
 */
#ifndef REVOKE_BUDGET_H
#define REVOKE_BUDGET_H

#include "internal.h"

enum rv_phase_id {
	RV_PH_RESOLVE = REVOKE_PHASE_RESOLVE, /* looking the paths up */
	RV_PH_LOCK = REVOKE_PHASE_LOCK,	      /* waiting for another revoke of this user */
	RV_PH_SCAN = REVOKE_PHASE_SCAN,	      /* finding the holders */
	RV_PH_STOP = REVOKE_PHASE_STOP,	      /* stopping them, looking again */
	RV_PH_CUT = REVOKE_PHASE_CUT,	      /* the programs in the holders */
	RV_PH_RELEASE = REVOKE_PHASE_RELEASE, /* letting them go */
	RV_PH_SYNC = REVOKE_PHASE_SYNC,	      /* syncing the filesystems (unmount) */
	RV_PH_UMOUNT = REVOKE_PHASE_UMOUNT,   /* unmounting, after the cut */
	/* Not a phase of the report: the latest moment the call may pass its
	 * point of no return (engine.c commit()), so that what is left of the
	 * budget is the finishing share. */
	RV_PH_COMMIT,
};

/*
 * From the point of no return on, the call finishes everything it planned
 * whatever the time: each wait is still bounded, by the later of its
 * phase's end and this long after the commit (a program that takes a few
 * microseconds of CPU waits this long for a core on a starved machine).
 */
#define RV_FINISH_NS (2000 * 1000000ull)
/* Then how long the report waits to see a program that outlived its wait
 * end by itself (engine.c verify_unfinished). */
#define RV_VERIFY_NS (500 * 1000000ull)

/* What a timeout at the end of the call may overrun it by, at most. */
#define RV_OVERRUN_PERMILLE 50

struct rv_budget {
	uint64_t start_ns, timeout_ns;
};

/* The end of phase P (CLOCK_MONOTONIC ns). */
uint64_t rv_budget_deadline(const struct rv_budget *b, int p);
/* The end of the whole call: timeout plus the allowed overrun. */
uint64_t rv_budget_hard_end(const struct rv_budget *b);

#endif
