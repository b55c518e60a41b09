/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fault injection points (tracee.h). */
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "tracee.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *wanted;

static void read_env(void)
{
	wanted = getenv("REVOKE_FAULT");
	if (wanted && !*wanted)
		wanted = NULL;
}

void rv_fault(const char *point)
{
	pthread_once(&once, read_env);
	if (wanted && strcmp(wanted, point) == 0)
		kill(getpid(), SIGKILL);
}
