/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The report's one owner: a new one, sized for its targets and holders, and
 * freeing one (whoever made it: the engine, or the helper's wire format).
 */
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/kcmp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <termios.h>

#include "internal.h"

_Static_assert(REVOKE_STEP_COUNT <= ARRAY_SIZE(((struct revoke_report *)0)->step_ns),
	       "revoke_report.step_ns has a slot for every step");

struct revoke_report *rv_report_new(size_t ntargets, size_t nholders)
{
	struct revoke_report *rep = calloc(1, sizeof(*rep));

	if (!rep)
		return NULL;
	rep->targets = calloc(ntargets ? ntargets : 1, sizeof(*rep->targets));
	rep->holders = calloc(nholders ? nholders : 1, sizeof(*rep->holders));
	rep->holder_nspids = calloc(nholders ? nholders : 1, sizeof(*rep->holder_nspids));
	if (!rep->targets || !rep->holders || !rep->holder_nspids) {
		free(rep->targets);
		free(rep->holders);
		free(rep->holder_nspids);
		free(rep);
		return NULL;
	}
	rep->sz = sizeof(*rep);
	rep->holder_size = sizeof(struct revoke_holder);
	rep->ref_size = sizeof(struct revoke_ref);
	return rep;
}

void rv_report_destroy(struct revoke_report *report)
{
	if (!report)
		return;
	for (size_t i = 0; i < report->nholders; i++)
		free(report->holders[i].refs);
	free(report->holders);
	free(report->holder_nspids);
	for (size_t i = 0; i < report->ntargets; i++)
		free(report->targets[i].path);
	free(report->targets);
	free(report);
}

const char *rv_engine_name(int engine)
{
	static const char *const names[] = {
	    [REVOKE_ENGINE_NONE] = "none",
	    [REVOKE_ENGINE_PTRACE] = "ptrace",
	    [REVOKE_ENGINE_SYSCALL] = "syscall",
	};

	if (engine < 0 || (size_t)engine >= ARRAY_SIZE(names) || !names[engine])
		return NULL;
	return names[engine];
}
