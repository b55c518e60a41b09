/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <sched.h>

#include "internal.h"

size_t rv_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) < 0 || CPU_COUNT(&set) < 1)
		return 1;
	return (size_t)CPU_COUNT(&set);
}
